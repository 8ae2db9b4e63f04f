import Foundation
import Glibc
import NIOCore
@testable import ReelDaemon
import ReelAudio
import ReelRuntime
import Testing

/// The control socket's own event loop and connections, on a real socket pair: tasks and timers,
/// line framing, output flow control, half-close and close. No daemon.
@Suite struct PollTransportTests {
    /// Records what a connection hands its protocol, read from the test's thread.
    final class Recorder: PollConnectionDelegate, @unchecked Sendable {
        let events = Locked<[String]>([])
        func received(line: UnsafeRawBufferPointer) {
            let text = String(decoding: line, as: UTF8.self)
            events.withLock { $0.append("line:\(text)") }
        }
        func receivedLineTooLong() { events.withLock { $0.append("too long") } }
        func inputClosed() { events.withLock { $0.append("input closed") } }
        func writableAgain() { events.withLock { $0.append("writable") } }
        func connectionClosed() { events.withLock { $0.append("closed") } }
        var current: [String] { events.current }
    }

    /// A loop, a connection on one end of a socket pair, and the other end for the test.
    final class Pair: @unchecked Sendable {
        let loop: PollLoop
        let connection: PollConnection
        let recorder = Recorder()
        let peer: Int32
        private let peerOpen = Locked(true)

        init() throws {
            loop = try PollLoop(name: "reel.test")
            loop.start()
            var fds: [Int32] = [0, 0]
            let made = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &fds)
            precondition(made == 0)
            peer = fds[1]
            let flags = fcntl(peer, F_GETFL)
            _ = fcntl(peer, F_SETFL, flags & ~O_NONBLOCK)
            connection = PollConnection(descriptor: fds[0], loop: loop)
            connection.delegate = recorder
            let connection = self.connection
            try loop.submit { try connection.start() }.wait()
        }

        deinit {
            hangUp()
            loop.stop()
        }

        /// Closes the test's end (once).
        func hangUp() {
            if peerOpen.withLock({ open in defer { open = false }; return open }) { close(peer) }
        }

        func send(_ text: String) {
            let bytes = Array(text.utf8)
            _ = bytes.withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        }

        /// Reads from the peer until `count` bytes came (or 10 s passed).
        func receive(count: Int) -> [UInt8] {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65536)
            let deadline = Date().addingTimeInterval(10)
            while received.count < count, Date() < deadline {
                var poller = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 100) > 0 else { continue }
                let n = chunk.withUnsafeMutableBytes { recv(peer, $0.baseAddress, min($0.count, count - received.count), 0) }
                if n <= 0 { break }
                received.append(contentsOf: chunk[0..<n])
            }
            return received
        }

        func onLoop<T: Sendable>(_ work: @escaping @Sendable () -> T) throws -> T {
            try loop.submit(work).wait()
        }
    }

    /// Waits (10 s at most) until `condition` holds.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            usleep(2_000)
        }
        return condition()
    }

    // MARK: The loop

    @Test func tasksFromOtherThreadsRunOnTheLoopInTheOrderGiven() throws {
        let loop = try PollLoop(name: "reel.test")
        loop.start()
        defer { loop.stop() }
        let seen = Locked<[Int]>([])
        let onLoop = Locked(true)
        for number in 0..<1_000 {
            loop.execute {
                if !loop.inEventLoop { onLoop.withLock { $0 = false } }
                seen.withLock { $0.append(number) }
            }
        }
        #expect(Self.eventually { seen.current.count == 1_000 })
        #expect(seen.current == Array(0..<1_000))
        #expect(onLoop.current)
        #expect(!loop.inEventLoop)
    }

    @Test func timersFireInDeadlineOrderNotBeforeTheirTimeAndCancelledOnesNever() throws {
        let loop = try PollLoop(name: "reel.test")
        loop.start()
        defer { loop.stop() }
        let fired = Locked<[(Int, NIODeadline)]>([])
        let start = NIODeadline.now()
        let delays: [Int64] = [30, 5, 20, 1, 10]
        for (number, delay) in delays.enumerated() {
            loop.scheduleTask(in: .milliseconds(delay)) { fired.withLock { $0.append((number, .now())) } }
        }
        let cancelled = loop.scheduleTask(in: .milliseconds(15)) { fired.withLock { $0.append((99, .now())) } }
        cancelled.cancel()
        #expect(Self.eventually { fired.current.count == delays.count })
        usleep(50_000)
        let order = fired.current.map(\.0)
        #expect(order == [3, 1, 4, 2, 0])
        for (number, at) in fired.current {
            #expect(at - start >= .milliseconds(delays[number]), "timer \(number) fired early")
        }
    }

    @Test func aTimerSetFromTheLoopItselfWakesItInTime() throws {
        let loop = try PollLoop(name: "reel.test")
        loop.start()
        defer { loop.stop() }
        let fired = Locked(false)
        loop.execute {
            loop.scheduleTask(in: .milliseconds(2)) { fired.withLock { $0 = true } }
        }
        #expect(Self.eventually { fired.current })
    }

    // MARK: Framing

    @Test func linesAreFramedAcrossReadsWithCRLFAndTheUnterminatedLastLineAtHalfClose() throws {
        let pair = try Pair()
        pair.send("{\"a\":1}\r\n{\"b\"")
        #expect(Self.eventually { pair.recorder.current == ["line:{\"a\":1}"] })
        pair.send(":2}\n\nlast")
        #expect(Self.eventually { pair.recorder.current.count == 3 })
        shutdown(pair.peer, Int32(SHUT_WR))
        #expect(Self.eventually { pair.recorder.current.count == 5 })
        #expect(pair.recorder.current == ["line:{\"a\":1}", "line:{\"b\":2}", "line:", "line:last", "input closed"])
    }

    @Test func aLineOverTheLimitIsReportedOnceAndNothingMoreIsRead() throws {
        let pair = try Pair()
        let long = String(repeating: "x", count: PollConnection.maxLineLength + 10)
        pair.send(long)
        pair.send("\n{\"after\":1}\n")
        #expect(Self.eventually { pair.recorder.current.contains("too long") })
        usleep(50_000)
        #expect(pair.recorder.current == ["too long"])
    }

    // MARK: Output

    @Test func outputTheClientDoesNotReadMakesItUnwritableUntilItReadsAgain() throws {
        let pair = try Pair()
        let connection = pair.connection
        let chunk = ByteBuffer(bytes: [UInt8](repeating: 0x61, count: 16 * 1024))
        // Write until the socket's buffer and ours pass the high-water mark.
        var written = 0
        for _ in 0..<1_000 {
            let writable = try pair.onLoop { () -> Bool in
                connection.writeAndFlush(chunk)
                return connection.isWritable
            }
            written += chunk.readableBytes
            if !writable { break }
        }
        #expect(try pair.onLoop { !connection.isWritable && connection.bufferedBytes > PollConnection.highWaterMark })
        #expect(!pair.recorder.current.contains("writable"))
        // The client reads everything: the connection drains and says so once.
        let received = pair.receive(count: written)
        #expect(received.count == written)
        #expect(Self.eventually { pair.recorder.current.contains("writable") })
        #expect(try pair.onLoop { connection.isWritable && connection.bufferedBytes == 0 })
    }

    @Test func closeAfterFlushSendsEverythingQueuedThenCloses() throws {
        let pair = try Pair()
        let connection = pair.connection
        let total = 300 * 1024
        try pair.onLoop {
            let bytes = [UInt8](repeating: 0x62, count: total)
            bytes.withUnsafeBytes { connection.write($0) }
            connection.closeAfterFlush()
        }
        let received = pair.receive(count: total + 1)
        #expect(received.count == total)
        #expect(Self.eventually { pair.recorder.current.last == "closed" })
    }

    @Test func aClientThatHangsUpClosesTheConnectionOnce() throws {
        let pair = try Pair()
        pair.send("one\n")
        #expect(Self.eventually { pair.recorder.current == ["line:one"] })
        pair.hangUp()
        #expect(Self.eventually { pair.recorder.current.last == "closed" })
        usleep(20_000)
        #expect(pair.recorder.current.filter { $0 == "closed" }.count == 1)
        #expect(try pair.onLoop { pair.connection.isClosed })
    }
}
