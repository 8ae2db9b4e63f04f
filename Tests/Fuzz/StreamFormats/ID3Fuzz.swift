// libFuzzer entry for the ID3 timed-metadata parser (scripts/fuzz-stream-formats --target id3).
// Input: the bytes of a tag or of an MPEG-TS timed-metadata payload.
// Properties checked besides "no crash": a tag's length is within the bytes; what parses has no
// empty title or artist, and an artist only with a title; a payload that already is a tag is
// read as that tag.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzID3(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let length = ID3OnAir.tagLength(input)
    precondition(length >= 0 && length <= input.count, "tag length \(length) of \(input.count) bytes")
    let asTag = try? ID3OnAir(tag: input)
    if let onAir = asTag {
        precondition(onAir.title.map { !$0.isEmpty } ?? true && onAir.artist.map { !$0.isEmpty } ?? true, "an empty text")
        precondition(onAir.artist == nil || onAir.title != nil, "an artist without a title")
    }
    let timed = try? ID3OnAir(timedMetadata: input)
    if ID3OnAir.startsTag(input) { precondition(timed == asTag, "a tag read differently as a payload") }
    _ = ID3OnAir.tag(inTimedMetadata: input)
    return 0
}
