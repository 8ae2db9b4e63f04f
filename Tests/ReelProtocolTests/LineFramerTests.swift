import Testing
@testable import ReelProtocol

@Suite("Line framing")
struct LineFramerTests {
    private func drain(_ framer: inout LineFramer) -> [LineFramer.Frame] {
        var frames: [LineFramer.Frame] = []
        while let frame = framer.next() { frames.append(frame) }
        return frames
    }

    @Test func splitsLinesAtNewlines() {
        var framer = LineFramer()
        framer.append(bytes("one\ntwo\nthr"))
        #expect(drain(&framer) == [.line(bytes("one")), .line(bytes("two"))])
        framer.append(bytes("ee\n"))
        #expect(drain(&framer) == [.line(bytes("three"))])
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func assemblesLinesFedOneByteAtATime() {
        var framer = LineFramer()
        var lines: [String] = []
        for byte in bytes("{\"a\":1}\r\n\n{\"b\":\"é\"}\n") {
            framer.append([byte])
            while case .line(let line)? = framer.next() { lines.append(text(line)) }
        }
        #expect(lines == ["{\"a\":1}", "", "{\"b\":\"é\"}"])
    }

    @Test func dropsTheCarriageReturnOfCRLF() {
        var framer = LineFramer()
        framer.append(bytes("a\r\nb\r\r\n\r\n"))
        #expect(drain(&framer) == [.line(bytes("a")), .line(bytes("b\r")), .line([])])
    }

    @Test func keepsACarriageReturnInsideALine() {
        var framer = LineFramer()
        framer.append(bytes("a\rb\n"))
        #expect(drain(&framer) == [.line(bytes("a\rb"))])
    }

    @Test func returnsEmptyLines() {
        var framer = LineFramer()
        framer.append(bytes("\n\nx\n"))
        #expect(drain(&framer) == [.line([]), .line([]), .line(bytes("x"))])
    }

    @Test func acceptsALineOfExactlyTheLimit() {
        var framer = LineFramer()
        framer.append([UInt8](repeating: 0x61, count: 1 << 20))
        #expect(framer.next() == nil)
        framer.append([0x0A])
        #expect(framer.next() == .line([UInt8](repeating: 0x61, count: 1 << 20)))
    }

    @Test func reportsALineOverTheLimitWithoutWaitingForItsNewline() {
        var framer = LineFramer()
        framer.append([UInt8](repeating: 0x61, count: (1 << 20) + 1))
        #expect(framer.next() == .tooLong)
        #expect(framer.isFailed)
    }

    @Test func staysFailedAfterTooLong() {
        var framer = LineFramer(maxLineLength: 4)
        framer.append(bytes("12345"))
        #expect(framer.next() == .tooLong)
        framer.append(bytes("\nok\n"))
        #expect(framer.next() == nil)
        #expect(framer.finish() == nil)
        #expect(framer.bufferedByteCount == 0)
    }

    @Test func deliversEarlierLinesBeforeTooLong() {
        var framer = LineFramer(maxLineLength: 4)
        framer.append(bytes("ok\ntoolong\nlater\n"))
        #expect(drain(&framer) == [.line(bytes("ok")), .tooLong])
    }

    @Test func countsTheCarriageReturnTowardsTheLimit() {
        var framer = LineFramer(maxLineLength: 3)
        framer.append(bytes("abc\r\n"))
        #expect(framer.next() == .tooLong)
    }

    @Test func returnsAnUnterminatedLastLineAtEndOfInput() {
        var framer = LineFramer()
        framer.append(bytes("a\nlast\r"))
        #expect(framer.next() == .line(bytes("a")))
        #expect(framer.next() == nil)
        #expect(framer.finish() == .line(bytes("last")))
        #expect(framer.finish() == nil)
    }

    @Test func finishReturnsNothingWhenTheInputEndedWithANewline() {
        var framer = LineFramer()
        framer.append(bytes("a\n"))
        _ = framer.next()
        #expect(framer.finish() == nil)
    }

    @Test func finishReportsAnUnterminatedLineOverTheLimit() {
        var framer = LineFramer(maxLineLength: 2)
        framer.append(bytes("abc"))
        #expect(framer.finish() == .tooLong)
    }

    @Test func acceptsRawBuffersAndSequences() {
        var framer = LineFramer()
        bytes("a\n").withUnsafeBytes { framer.append($0) }
        framer.append(bytes("xb\n")[1...])
        framer.append("c\n".utf8)
        #expect(drain(&framer) == [.line(bytes("a")), .line(bytes("b")), .line(bytes("c"))])
    }

    @Test func handlesManyLinesAcrossManyChunks() {
        var framer = LineFramer()
        var expected: [String] = []
        var stream: [UInt8] = []
        for k in 0..<20_000 {
            let line = "{\"id\":\(k),\"method\":\"player.status\"}"
            expected.append(line)
            stream += bytes(line + (k % 3 == 0 ? "\r\n" : "\n"))
        }
        var received: [String] = []
        var offset = 0
        var chunk = 1
        while offset < stream.count {
            let end = min(offset + chunk, stream.count)
            framer.append(stream[offset..<end])
            while case .line(let line)? = framer.next() { received.append(text(line)) }
            offset = end
            chunk = chunk * 7 % 5003 + 1
        }
        #expect(received == expected)
        #expect(framer.bufferedByteCount == 0)
    }
}
