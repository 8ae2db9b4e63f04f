// Starting the real reeld binary on a private socket and data directory.

import Foundation
import Glibc
import ReelProtocol

/// A reeld process for one test: private temp dir, socket and data dir, stderr kept in a file.
final class DaemonProcess: @unchecked Sendable {
    let directory: URL
    let socketPath: String
    let process = Process()
    let logURL: URL

    static func executable(_ name: String) -> String {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // Walk up from the test binary (it may sit inside an .xctest bundle) to the build folder.
        for _ in 0..<5 {
            directory.deleteLastPathComponent()
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        fatalError("cannot find the \(name) executable near \(CommandLine.arguments[0]); run `swift build` first")
    }

    /// Starts reeld with `--device device` and extra arguments; waits until its socket answers.
    /// `dataDirectory` (else one of its own) lets a second reeld start on a first one's data.
    /// `wrapper` runs it under another command (`["/usr/bin/prlimit", "--nofile=64:64"]`).
    init(
        device: String = "null", arguments: [String] = [], environment: [String: String] = [:],
        socketPath: String? = nil, wrapper: [String] = [], dataDirectory: String? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-e2e-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        self.socketPath = socketPath ?? directory.appendingPathComponent("reel.sock").path
        logURL = directory.appendingPathComponent("reeld.log")
        FileManager.default.createFile(atPath: logURL.path, contents: nil)
        let reeldArguments =
            ["--socket", self.socketPath, "--data-dir", dataDirectory ?? directory.appendingPathComponent("data").path, "--device", device,
             "--log-level", "debug"] + arguments
        if let launcher = wrapper.first {
            process.executableURL = URL(fileURLWithPath: launcher)
            process.arguments = Array(wrapper.dropFirst()) + [Self.executable("reeld")] + reeldArguments
        } else {
            process.executableURL = URL(fileURLWithPath: Self.executable("reeld"))
            process.arguments = reeldArguments
        }
        var env = ProcessInfo.processInfo.environment
        env["REEL_CONFIG"] = "/dev/null"
        // Tests run daemons side by side: none takes MPD's or HTTP's port unless a test gives it one.
        env["REEL_MPD_LISTEN"] = "none"
        env["REEL_HTTP_LISTEN"] = "none"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let log = try FileHandle(forWritingTo: logURL)
        process.standardError = log
        process.standardOutput = log
        try process.run()
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            if (try? RPCTestClient(path: self.socketPath)) != nil { return }
            if !process.isRunning { break }
            usleep(20_000)
        }
        throw TestFailure("reeld did not start listening on \(socketPath); log:\n\(self.log())")
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: directory)
    }

    func log() -> String {
        (try? String(contentsOf: logURL, encoding: .utf8)) ?? ""
    }

    func client() throws -> RPCTestClient {
        try RPCTestClient(path: socketPath)
    }

    /// SIGTERM and wait; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    var pid: Int32 { process.processIdentifier }

    /// Open descriptors of the daemon now (/proc/PID/fd).
    var openDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
    }

    /// Resident memory in KiB (VmRSS).
    var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
        return line.flatMap { Int($0.split(separator: " ", omittingEmptySubsequences: true)[1]) } ?? -1
    }

    /// CPU time used so far (utime + stime), in seconds.
    var cpuSeconds: Double {
        let stat = (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)) ?? ""
        guard let end = stat.lastIndex(of: ")") else { return -1 }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return -1 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// True when the tests run under a sanitizer (scripts/test-sanitizers): memory figures and
/// throughput there say nothing about the daemon (AddressSanitizer keeps freed memory in
/// quarantine; both slow everything down several times).
let runningUnderSanitizer = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
    || ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
