import Glibc
import ReelClient
import ReelProtocol
import Testing
@testable import ReelSnapcast

/// A listening Unix socket that accepts and never answers: a stuck reeld.
final class SilentServer {
    let path: String
    let fd: Int32

    init() throws {
        path = "/tmp/reel-snapcast-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).sock"
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(listen(fd, 4) == 0)
    }

    deinit {
        close(fd)
        unlink(path)
    }
}

@Suite("The link to reeld")
struct ReeldLinkTests {
    @Test func retriesWithGrowingDelaysAndNamesEveryPath() {
        let link = ReeldLink(candidates: ["/nonexistent/a.sock", "/nonexistent/b.sock"])
        let failures = link.connect(now: 100)
        #expect(failures.count == 2)
        #expect(failures.first?.description.contains("/nonexistent/a.sock") == true)
        #expect(link.nextAttempt == 100 + ReeldLink.firstRetryDelay)
        var delays: [Double] = []
        var now = 100.0
        for _ in 0..<8 {
            _ = link.connect(now: now)
            delays.append(link.nextAttempt - now)
            now = link.nextAttempt
        }
        #expect(abs(delays[0] - 2 * ReeldLink.firstRetryDelay) < 1e-9)
        #expect(abs(delays[delays.count - 1] - ReeldLink.maxRetryDelay) < 1e-9)
        #expect(zip(delays, delays.dropFirst()).allSatisfy { $0 <= $1 + 1e-9 })
        var answer: Result<JSONValue, RPCError>?
        link.request("player.status", [:]) { answer = $0 }
        guard case .failure(let error)? = answer else {
            Issue.record("a request without a connection was not refused")
            return
        }
        #expect(error.message.contains("not connected"))
    }

    @Test func aStuckReeldTimesOutAndItsRequestsFail() throws {
        let server = try SilentServer()
        let link = ReeldLink(candidates: [server.path], replyTimeout: 5)
        #expect(link.connect(now: 0).isEmpty)
        var answer: Result<JSONValue, RPCError>?
        link.request("player.pause", [:]) { answer = $0 }
        let deadline = try #require(link.nextReplyDeadline)
        #expect(link.expiredRequest(now: deadline - 1) == nil)
        let expired = try #require(link.expiredRequest(now: deadline))
        #expect(expired == .timedOut(path: server.path, method: "player.pause", seconds: 5))
        link.disconnect(expired, now: deadline)
        #expect(!link.isConnected)
        guard case .failure(let error)? = answer else {
            Issue.record("the waiting request was not failed")
            return
        }
        #expect(error.message.contains("did not answer player.pause"))
        #expect(link.nextReplyDeadline == nil)
    }
}
