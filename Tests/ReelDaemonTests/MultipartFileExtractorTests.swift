import Testing

@testable import ReelDaemon

@Suite struct MultipartFileExtractorTests {
    let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// A body as Chromium sends it for a FormData with one text field and one file.
    func body(file: [UInt8], filename: String = "Talk.flac", field: Bool = true) -> [UInt8] {
        var text = ""
        if field {
            text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
        }
        text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n"
        text += "Content-Type: audio/flac\r\n\r\n"
        return Array(text.utf8) + file + Array("\r\n--\(boundary)--\r\n".utf8)
    }

    /// Bytes that look like the start of a delimiter, to test the search across pieces.
    let file: [UInt8] = Array("fLaC\r\n--\r\n----WebKit\r\n-".utf8) + (0..<3000).map { UInt8($0 % 251) } + [13, 10, 45, 45]

    func extract(_ body: [UInt8], pieceSize: Int) throws -> (file: [UInt8], name: String?) {
        var extractor = try MultipartFileExtractor(contentType: contentType)
        var out: [UInt8] = []
        var index = 0
        while index < body.count {
            out += try extractor.feed(body[index..<min(index + pieceSize, body.count)])
            index += pieceSize
        }
        try extractor.finish()
        return (out, extractor.filename)
    }

    @Test(arguments: [1, 2, 7, 41, 64, 1000, 100_000])
    func theFileComesOutWholeWhateverThePieces(pieceSize: Int) throws {
        let (out, name) = try extract(body(file: file), pieceSize: pieceSize)
        #expect(out == file)
        #expect(name == "Talk.flac")
    }

    @Test func anEmptyFileIsAFile() throws {
        let (out, name) = try extract(body(file: [], field: false), pieceSize: 5)
        #expect(out.isEmpty)
        #expect(name == "Talk.flac")
    }

    @Test func theNameKeepsItsUTF8AndEscapes() throws {
        #expect(try extract(body(file: [1], filename: "Été \\\"x\\\".wav"), pieceSize: 9).name == "Été \"x\".wav")
        #expect(
            MultipartFileExtractor.filename(
                inHeaders: ArraySlice("Content-Disposition: form-data; name=\"f\"; filename*=UTF-8''%C3%A9t%C3%A9.wav".utf8))
                == "été.wav")
        #expect(MultipartFileExtractor.filename(inHeaders: ArraySlice("Content-Disposition: form-data; name=\"f\"".utf8)) == nil)
    }

    @Test func aBodyCutShortIsRefused() throws {
        let whole = body(file: file)
        var extractor = try MultipartFileExtractor(contentType: contentType)
        _ = try extractor.feed(whole[..<(whole.count - 10)])
        #expect(throws: MultipartFileExtractor.Failure.self) { try extractor.finish() }
    }

    @Test func aFormWithoutAFileIsRefused() throws {
        var extractor = try MultipartFileExtractor(contentType: contentType)
        _ = try extractor.feed(Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx\r\n--\(boundary)--\r\n".utf8))
        #expect(throws: MultipartFileExtractor.Failure.malformed("the form has no file")) { try extractor.finish() }
    }

    @Test func twoFilesAreRefused() throws {
        var extractor = try MultipartFileExtractor(contentType: contentType)
        func part(_ name: String) -> String {
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"f\"; filename=\"\(name)\"\r\n\r\nxyz\r\n"
        }
        let body = part("a.wav") + part("b.wav") + "--\(boundary)--\r\n"
        #expect(throws: MultipartFileExtractor.Failure.malformed("send one file per upload")) {
            _ = try extractor.feed(Array(body.utf8))
        }
    }

    @Test func endlessPartHeadersAreRefused() throws {
        var extractor = try MultipartFileExtractor(contentType: contentType)
        let head = Array("--\(boundary)\r\nX: ".utf8) + [UInt8](repeating: 0x61, count: MultipartFileExtractor.maxHeaderBytes + 1)
        #expect(throws: MultipartFileExtractor.Failure.self) { _ = try extractor.feed(head) }
    }

    @Test func theBoundaryComesFromTheContentType() {
        #expect(throws: MultipartFileExtractor.Failure.notMultipart) { try MultipartFileExtractor(contentType: "audio/flac") }
        #expect(throws: MultipartFileExtractor.Failure.notMultipart) { try MultipartFileExtractor(contentType: "multipart/form-data") }
        #expect((try? MultipartFileExtractor(contentType: "multipart/form-data; boundary=\"a b\"")) != nil)
    }
}
