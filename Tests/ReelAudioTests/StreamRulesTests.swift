// The URL source's pure parts: response headers, the reconnect rules, the byte buffer, the URL
// check. No network.

import Foundation
import ReelModel
import ReelRuntime
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite struct StreamRulesTests {
    static func head(_ lines: [String]) -> HTTPResponseHead {
        var head = HTTPResponseHead()
        for line in lines { head.take(line: line) }
        return head
    }

    @Test func aLiveStreamsHeaders() {
        let head = Self.head([
            "HTTP/1.1 200 OK", "Content-Type: audio/mpeg", "icy-name: Radio One", "icy-br: 128,128",
            "icy-metaint:16000", "",
        ])
        #expect(head.status == 200 && head.complete)
        #expect(head.isMPEGAudio && !head.isHTML)
        #expect(head.contentLength == nil && head.resourceLength == nil)
        #expect(head.icyName == "Radio One" && head.icyBitrate == 128 && head.icyMetaInterval == 16000)
        #expect(head.refusal(url: "http://x/") == nil)
    }

    @Test func aShoutcastStatusLineIsOK() {
        #expect(Self.head(["ICY 200 OK", "content-type: audio/aacp", ""]).status == 200)
    }

    @Test func aRedirectsHeadersAreReplacedByTheNextResponses() {
        let head = Self.head([
            "HTTP/1.1 302 Found", "Location: /b", "Content-Length: 0", "", "HTTP/1.1 200 OK", "Content-Type: audio/mpeg", "",
        ])
        #expect(head.status == 200 && head.contentLength == nil && head.isMPEGAudio)
    }

    @Test func aFiniteFileWithRanges() {
        let whole = Self.head(["HTTP/1.1 200 OK", "Content-Length: 48483", "Accept-Ranges: bytes", ""])
        #expect(whole.resourceLength == 48483 && whole.acceptsRanges)
        let rest = Self.head(["HTTP/1.1 206 Partial Content", "Content-Range: bytes 100-48482/48483", "Content-Length: 48383", ""])
        #expect(rest.rangeStart == 100 && rest.resourceLength == 48483)
    }

    @Test func statusesAndWebPagesAreRefusedNamingTheURL() throws {
        let missing = try #require(Self.head(["HTTP/1.1 404 Not Found", ""]).refusal(url: "http://h/s"))
        #expect(missing.reason == .unreachable && missing.message.contains("http://h/s") && missing.message.contains("404"))
        let page = try #require(Self.head(["HTTP/1.1 200 OK", "Content-Type: text/html; charset=utf-8", ""]).refusal(url: "http://h/"))
        #expect(page.reason == .unreachable && page.message.contains("web page"))
    }

    @Test func garbageHeadersAreIgnored() {
        let head = Self.head(["HTTP/1.1 200 OK", "no colon here", "Content-Length: -5", "icy-metaint: 99999999999", ":", ""])
        #expect(head.status == 200 && head.contentLength == nil && head.icyMetaInterval == nil)
    }

    @Test func reconnectRules() {
        let url = "http://h/s"
        let refused = ReelError(.unreachable, "refused")
        // A first connection that gave nothing: the error at once.
        #expect(StreamReconnect.decide(url: url, everPlayed: false, received: 0, length: nil, rangesWork: false, failure: refused, attempt: 1) == .fail(refused))
        // A live stream that dropped: again, afresh, with backoff.
        #expect(StreamReconnect.decide(url: url, everPlayed: true, received: 5000, length: nil, rangesWork: false, failure: refused, attempt: 1) == .retry(milliseconds: 250, from: nil))
        #expect(StreamReconnect.decide(url: url, everPlayed: true, received: 5000, length: nil, rangesWork: false, failure: nil, attempt: 3) == .retry(milliseconds: 250, from: nil))
        // A finite file with ranges: from the byte where it stopped.
        #expect(StreamReconnect.decide(url: url, everPlayed: true, received: 5000, length: 9000, rangesWork: true, failure: refused, attempt: 1) == .retry(milliseconds: 250, from: 5000))
        // All of it came: finished.
        #expect(StreamReconnect.decide(url: url, everPlayed: true, received: 9000, length: 9000, rangesWork: false, failure: nil, attempt: 1) == .finished)
        // Finite without ranges cannot resume.
        guard case .fail(let error) = StreamReconnect.decide(url: url, everPlayed: true, received: 5000, length: 9000, rangesWork: false, failure: nil, attempt: 1) else {
            Issue.record("a finite file without ranges resumed")
            return
        }
        #expect(error.reason == .unreachable && error.message.contains("Range"))
        // Too many failures in a row: gone.
        guard case .fail = StreamReconnect.decide(url: url, everPlayed: true, received: 1, length: nil, rangesWork: false, failure: refused, attempt: StreamReconnect.maxAttempts + 1) else {
            Issue.record("reconnected forever")
            return
        }
        // Every quarter of a second for the first 20 s (a server back is connected to within
        // 250 ms), then 5 s.
        #expect(StreamReconnect.backoff(attempt: 1) == 250 && StreamReconnect.backoff(attempt: 2) == 250)
        #expect(StreamReconnect.backoff(attempt: StreamReconnect.quickAttempts) == 250)
        let quick = (1...StreamReconnect.quickAttempts).map(StreamReconnect.backoff(attempt:)).reduce(0, +)
        #expect(quick == 20_000, "quick attempts for 20 s: \(quick) ms")
        #expect(StreamReconnect.backoff(attempt: StreamReconnect.quickAttempts + 1) == 5000)
        #expect(StreamReconnect.backoff(attempt: 100) == 5000)
        let total = (1...StreamReconnect.maxAttempts).map(StreamReconnect.backoff(attempt:)).reduce(0, +)
        #expect(total > 60_000 && total < 120_000, "gives up after about a minute and a half: \(total) ms")
    }

    @Test func theBufferWrapsKeepsOrderAndEnds() {
        let buffer = StreamBuffer(capacity: 10)
        var out = [UInt8](repeating: 0, count: 16)
        let first: [UInt8] = Array(0..<7)
        #expect(first.withUnsafeBytes { buffer.write($0.baseAddress!, count: $0.count) })
        #expect(out.withUnsafeMutableBytes { buffer.read(into: $0.baseAddress!, count: 5) } == .bytes(5))
        #expect(Array(out.prefix(5)) == [0, 1, 2, 3, 4])
        // Wraps the ring's end; the bytes read make room.
        let second: [UInt8] = Array(7..<15)
        #expect(second.withUnsafeBytes { buffer.write($0.baseAddress!, count: $0.count) })
        #expect(buffer.available == 10)
        #expect(out.withUnsafeMutableBytes { buffer.peek(into: $0.baseAddress!, count: 3) } == 3)
        #expect(Array(out.prefix(3)) == [5, 6, 7])
        #expect(out.withUnsafeMutableBytes { buffer.read(into: $0.baseAddress!, count: 16) } == .bytes(10))
        #expect(Array(out.prefix(10)) == Array(5..<15))
        #expect(out.withUnsafeMutableBytes { buffer.read(into: $0.baseAddress!, count: 16) } == .empty)
        buffer.finish(error: ReelError(.unreachable, "gone"))
        #expect(out.withUnsafeMutableBytes { buffer.read(into: $0.baseAddress!, count: 16) } == .ended(ReelError(.unreachable, "gone")))
    }

    @Test func aFullBuffersWriterStopsWhenStopped() {
        let buffer = StreamBuffer(capacity: 4)
        let bytes: [UInt8] = [1, 2, 3, 4, 5, 6]
        // Nothing reads: the writer waits for room until the buffer is stopped. It blocks, so it
        // runs on a thread of its own (as the network source's does), never on the concurrency
        // pool, which a blocked task can starve on a loaded two-core machine.
        let result = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            result.withLock { $0 = bytes.withUnsafeBytes { buffer.write($0.baseAddress!, count: $0.count) } }
            done.signal()
        }
        writer.start()
        #expect(waitUntil { buffer.available == 4 })
        buffer.stop()
        #expect(done.wait(timeout: .now() + 60) == .success)
        #expect(result.withLock { $0 } == false)
    }

    @Test func onlyHTTPAndHTTPSURLsWithAHost() throws {
        #expect(try URLSource.check("http://127.0.0.1:8000/live.mp3") == "http://127.0.0.1:8000/live.mp3")
        #expect(try URLSource.check("HTTPS://example.org/a") == "HTTPS://example.org/a")
        for (url, reason) in [
            ("file:///etc/passwd", ErrorReason.unsupportedFormat), ("ftp://h/x", .unsupportedFormat),
            ("http:///nohost", .invalidName), ("http://h/a b", .invalidName), ("/music/a.mp3", .invalidName),
        ] {
            #expect(throws: ReelError.self) { try URLSource.check(url) }
            do { _ = try URLSource.check(url) } catch { #expect(error.reason == reason, "\(url)") }
        }
        #expect(URLSource.looksLikeURL("http://h/") && URLSource.looksLikeURL("file:///x") && !URLSource.looksLikeURL("/a/b:c"))
    }

    @Test func sniffing() {
        #expect(URLSource.looksLikeHTML(Array("\n <!DOCTYPE html>".utf8)) && URLSource.looksLikeHTML(Array("<HTML>".utf8)))
        #expect(URLSource.looksLikeMP3([0x49, 0x44, 0x33, 4]) && URLSource.looksLikeMP3([0xFF, 0xFB, 0x90]))
        #expect(!URLSource.looksLikeMP3([0x4F, 0x67, 0x67]))
    }
}
