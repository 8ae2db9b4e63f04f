// libFuzzer entry for the ICY de-interleaver and metadata parser (scripts/fuzz-stream-formats).
// Input: byte 0 picks icy-metaint (1…256), byte 1 a chunk size (1…256), the rest is the body.
// Properties checked besides "no crash": the audio handed back is the same in one piece and in
// chunks, and never more than was fed; a metadata block also parses on its own.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzICY(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 2 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let interval = Int(input[0]) + 1
    let chunkSize = Int(input[1]) + 1
    let body = Array(input[2...])

    guard var whole = try? ICYDemuxer(metaInterval: interval) else { fatalError("interval \(interval) refused") }
    var wholeAudio: [UInt8] = []
    var wholeTitles: [String?] = []
    for chunk in whole.feed(body) {
        switch chunk {
        case .audio(let bytes): wholeAudio += bytes
        case .metadata(let metadata): wholeTitles.append(metadata.streamTitle)
        }
    }

    guard var chunked = try? ICYDemuxer(metaInterval: interval) else { fatalError() }
    var chunkedAudio: [UInt8] = []
    var chunkedTitles: [String?] = []
    var index = 0
    while index < body.count {
        let end = min(index + chunkSize, body.count)
        body[index..<end].withUnsafeBytes { raw in
            chunked.feed(raw) { (piece: ICYPiece) in
                switch piece {
                case .audio(let bytes): chunkedAudio += bytes
                case .metadata(let metadata): chunkedTitles.append(metadata.streamTitle)
                }
            }
        }
        index = end
    }
    precondition(wholeAudio == chunkedAudio, "chunking changed the audio")
    precondition(wholeTitles == chunkedTitles, "chunking changed the titles")
    precondition(wholeAudio.count <= body.count && Int64(wholeAudio.count) == whole.audioBytes)

    _ = ICYMetadata(block: body)
    var headers = ICYHeaders()
    for line in body.split(separator: 0x0A, maxSplits: 64) { headers.take(headerLine: line) }
    _ = decodeStationText(body)
    return 0
}
