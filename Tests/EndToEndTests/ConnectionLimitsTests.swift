import Foundation
import Glibc
import ReelProtocol
import Testing

/// What clients can do to the daemon's descriptors and memory: many that come and go, half-close
/// or never read leak nothing; running out of descriptors refuses new clients without harming
/// the connected ones or spinning; a thousand subscribers all get their ticks.
@Suite(.serialized) struct ConnectionLimitsTests {
    static let pulse = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    /// A raw connection, for clients that misbehave.
    static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if connected != 0 {
            close(fd)
            return -1
        }
        return fd
    }

    static func send(_ fd: Int32, _ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Raises this process's open-file limit to its hard limit (a test holding 1,000 sockets).
    static func raiseOwnFileLimit() {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
    }

    /// Waits until the daemon's descriptor count is at most `count`; returns the last count.
    func settle(_ daemon: DaemonProcess, to count: Int, timeout: Double = 10) -> Int {
        let deadline = Date().addingTimeInterval(timeout)
        var now = daemon.openDescriptors
        while now > count && Date() < deadline {
            usleep(50_000)
            now = daemon.openDescriptors
        }
        return now
    }

    @Test func tenThousandClientsThatVanishHalfCloseOrNeverReadLeakNothing() throws {
        let daemon = try DaemonProcess()
        let path = daemon.socketPath
        func churn(_ count: Int) {
            for index in 0..<count {
                let fd = Self.connect(path)
                guard fd >= 0 else { continue }
                switch index % 4 {
                case 0:
                    break  // connects and vanishes
                case 1:
                    // Half a request, then its writing side closed: the daemon answers what it can.
                    Self.send(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"player.sta")
                    shutdown(fd, Int32(SHUT_WR))
                case 2:
                    // Subscribes and never reads.
                    Self.send(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{\"stream\":\"player\"}}\n")
                default:
                    // A request and gone before the answer.
                    Self.send(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"library.list\"}\n")
                }
                close(fd)
            }
        }
        churn(1000)  // warm-up: allocator arenas, NIO's pools
        let baseDescriptors = settle(daemon, to: 0, timeout: 1)
        let baseDescriptorsSettled = settle(daemon, to: baseDescriptors)
        let baseMemory = daemon.residentKiB
        churn(10_000)
        let afterDescriptors = settle(daemon, to: baseDescriptorsSettled)
        usleep(200_000)
        let afterMemory = daemon.residentKiB
        #expect(afterDescriptors <= baseDescriptorsSettled, "descriptors \(baseDescriptorsSettled) → \(afterDescriptors)")
        if !runningUnderSanitizer {
            #expect(afterMemory - baseMemory < 2048, "resident memory \(baseMemory) KiB → \(afterMemory) KiB after 10,000 clients")
        }
        #expect(try daemon.client().result("daemon.info")["version"] != nil)
        print("10,000 clients: descriptors \(baseDescriptorsSettled) → \(afterDescriptors), RSS \(baseMemory) → \(afterMemory) KiB")
    }

    @Test func outOfDescriptorsRefusesNewClientsAndKeepsServingTheConnectedOnes() throws {
        let daemon = try DaemonProcess(wrapper: ["/usr/bin/prlimit", "--nofile=48:48"])
        var answered: [RPCTestClient] = []
        var refused = 0
        for _ in 0..<60 {
            guard let client = try? daemon.client() else {
                refused += 1
                continue
            }
            // A refused client sees its connection closed (or reset) at once, not a hang.
            switch try? client.call("daemon.info", timeout: 3) {
            case .success?: answered.append(client)
            default: refused += 1
            }
        }
        #expect(answered.count >= 20, "only \(answered.count) clients were served")
        #expect(refused > 0, "the limit was never reached")
        // Out of descriptors, the daemon does not spin.
        let before = daemon.cpuSeconds
        sleep(1)
        #expect(daemon.cpuSeconds - before < 0.2, "the daemon used \(daemon.cpuSeconds - before) s of CPU in 1 s while full")
        // The connected ones go on.
        for client in answered {
            #expect((try? client.result("player.status")) != nil)
        }
        #expect(daemon.log().contains("out of file descriptors"))
        // Room again: a new client is served.
        answered.removeAll()
        usleep(300_000)
        #expect(try daemon.client().result("daemon.info")["version"] != nil)
    }

    @Test func twoThousandClientsConnectingInABurstAreAllAccepted() throws {
        Self.raiseOwnFileLimit()
        let daemon = try DaemonProcess()
        _ = try daemon.client().result("daemon.info")
        // Non-blocking connects, as a client with a timeout makes them: a full listen queue
        // refuses at once (EAGAIN) instead of waiting.
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        var refused: [String] = []
        for _ in 0..<2000 {
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            try #require(fd >= 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(daemon.socketPath.utf8)) }
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            if connected != 0 { refused.append(String(cString: strerror(errno))) }
            fds.append(fd)
        }
        #expect(refused.isEmpty, "\(refused.count) of 2,000 connections refused: \(Set(refused).sorted())")
        // Every one of them is served.
        let request = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"player.status\"}\n"
        for fd in fds { Self.send(fd, request) }
        var answered = Set<Int32>()
        var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(60)
        while answered.count < fds.count, Date() < deadline {
            guard poll(&pollers, nfds_t(pollers.count), 100) > 0 else { continue }
            for index in pollers.indices where pollers[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { recv(pollers[index].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0, chunk[0..<count].contains(0x0A) {
                    answered.insert(pollers[index].fd)
                    pollers[index].events = 0
                }
            }
        }
        #expect(answered.count == 2000, "\(answered.count) of 2,000 clients answered")
    }

    @Test func eachClientIsLoggedWithItsProcessAndUser() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.client().result("daemon.info")
        usleep(100_000)
        let line = daemon.log().split(separator: "\n").first { $0.contains("client connected") && $0.contains("pid=\(getpid())") }
        #expect(line != nil, "\(daemon.log().suffix(600))")
        #expect(line?.contains("uid=\(getuid())") == true)
    }

    @Test(
        .enabled(if: pulse != nil, "needs the PulseAudio null sink that scripts/test starts"),
        .enabled(if: !runningUnderSanitizer, "a throughput test: meaningless under a sanitizer"))
    func aThousandSubscribersAllGetTheirTicksAndPlaybackDoesNotGlitch() throws {
        Self.raiseOwnFileLimit()
        let sink = try PrivateSink()
        let daemon = try DaemonProcess(device: "pulse", environment: sink.environment)
        // Long enough for a slow machine (or a sanitizer build) to set up 1,000 connections.
        let file = try daemon.tone("load.wav", seconds: 40)
        var fds: [Int32] = []
        defer { for fd in fds { close(fd) } }
        for _ in 0..<1000 {
            let fd = Self.connect(daemon.socketPath)
            try #require(fd >= 0, "connection \(fds.count + 1) failed: \(String(cString: strerror(errno)))")
            Self.send(fd, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"subscribe\",\"params\":{\"stream\":\"player\",\"interval\":0.1}}\n")
            fds.append(fd)
        }
        let control = try daemon.client()
        _ = try control.result("player.play", ["file": .string(file)])
        // Wait for PulseAudio's start-up hold, then count ticks for 3 s.
        let started = Date()
        while Date().timeIntervalSince(started) < 5,
              (try control.result("player.status")["position"]?.doubleValue ?? 0) < 0.5 { usleep(50_000) }
        var ticks = [Int](repeating: 0, count: fds.count)
        var pollers = fds.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        var chunk = [UInt8](repeating: 0, count: 65536)
        func drain(counting: Bool) {
            guard poll(&pollers, nfds_t(pollers.count), 20) > 0 else { return }
            for index in pollers.indices where pollers[index].revents != 0 {
                let count = chunk.withUnsafeMutableBytes { recv(pollers[index].fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if counting && count > 0 {
                    ticks[index] += chunk[0..<count].filter { $0 == 0x0A }.count
                }
            }
        }
        let drainUntil = Date().addingTimeInterval(0.5)
        while Date() < drainUntil { drain(counting: false) }
        let cpuBefore = daemon.cpuSeconds
        let window = 3.0
        let end = Date().addingTimeInterval(window)
        while Date() < end { drain(counting: true) }
        let cpu = daemon.cpuSeconds - cpuBefore
        let status = try control.result("player.status")
        #expect(status["state"] == .string("playing"))
        #expect(status["underruns"] == .int(0), "\(status)")
        let fewest = ticks.min() ?? 0
        // 30 ticks in 3 s at 0.1 s; a loaded test machine may delay some.
        #expect(fewest >= 20, "a subscriber got only \(fewest) ticks in \(window) s (most: \(ticks.max() ?? 0))")
        print("1,000 subscribers at 0.1 s: ticks per client \(fewest)–\(ticks.max() ?? 0) in \(window) s, reeld CPU \(String(format: "%.0f", cpu / window * 100)) % of a core (debug build)")
        _ = try control.result("player.stop")
    }
}
