// Running the real `reel` binary from tests: arguments in; exit status, stdout and stderr out.

import Foundation
import Glibc

/// What one run of `reel` produced.
struct CLIResult: CustomStringConvertible {
    var status: Int32
    var stdout: String
    var stderr: String

    var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }
}

enum CLI {
    static var path: String { DaemonProcess.executable("reel") }

    /// The environment for `reel`: REEL_SOCKET and XDG_RUNTIME_DIR removed (so that no real
    /// user daemon is found by accident), then `environment` applied.
    static func environment(_ environment: [String: String]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["REEL_SOCKET"] = nil
        env["XDG_RUNTIME_DIR"] = FileManager.default.temporaryDirectory
            .appendingPathComponent("reel-cli-noruntime-\(UUID().uuidString)").path
        for (key, value) in environment { env[key] = value }
        return env
    }

    /// Runs `reel arguments...` to completion (killed after `timeout` seconds).
    static func run(
        _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil, timeout: Double = 30
    ) throws -> CLIResult {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("reel-cli-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = Self.environment(environment)
        if let directory { process.currentDirectoryURL = directory }
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestFailure("reel \(arguments.joined(separator: " ")) did not finish within \(timeout) s")
        }
        process.waitUntilExit()
        try out.close()
        try err.close()
        return CLIResult(
            status: process.terminationStatus,
            stdout: (try? String(contentsOf: outURL, encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOf: errURL, encoding: .utf8)) ?? "")
    }
}

/// A `reel` process left running (for `watch`), its stdout read line by line.
final class CLIBackgroundProcess {
    let process = Process()
    private let outPipe = Pipe()
    private let errURL: URL
    private var buffer: [UInt8] = []
    /// What the process reads as stdin, when started with `stdin: true`.
    let input: Pipe?

    /// Runs `reel` with `arguments`, or, with `executable`, that program (`script`, to give reel
    /// a terminal).
    init(_ arguments: [String], environment: [String: String] = [:], stdin: Bool = false, executable: String = CLI.path) throws {
        input = stdin ? Pipe() : nil
        errURL = FileManager.default.temporaryDirectory.appendingPathComponent("reel-cli-err-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = CLI.environment(environment)
        process.standardOutput = outPipe
        process.standardError = try FileHandle(forWritingTo: errURL)
        if let input {
            process.standardInput = input
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        try process.run()
    }

    /// Writes `text` to the process's stdin (started with `stdin: true`).
    func type(_ text: String) {
        input?.fileHandleForWriting.write(Data(text.utf8))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: errURL)
    }

    var stderr: String { (try? String(contentsOf: errURL, encoding: .utf8)) ?? "" }

    /// The next line of stdout (without its newline); nil at EOF; throws after `timeout` s.
    func readLine(timeout: Double = 10) throws -> String? {
        let fd = outPipe.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("no line from reel within \(timeout) s; stderr: \(stderr)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads stdout, newlines or not (a line redrawn in place), until all of it read so far
    /// satisfies `predicate`; returns it. Throws after `timeout` s or at EOF.
    func readOutput(timeout: Double = 10, until predicate: (String) -> Bool) throws -> String {
        let fd = outPipe.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let text = String(decoding: buffer, as: UTF8.self)
            if predicate(text) { return text }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { throw TestFailure("not the expected output within \(timeout) s: \(text.debugDescription)") }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(remaining * 1000) + 1) > 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count <= 0 { throw TestFailure("the output ended before what was expected: \(text.debugDescription)") }
            buffer.append(contentsOf: chunk[0..<count])
        }
    }

    /// Reads lines until one satisfies `predicate`; returns it.
    func readLine(timeout: Double = 10, where predicate: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            guard let line = try readLine(timeout: max(deadline.timeIntervalSinceNow, 0.01)) else {
                throw TestFailure("reel's stdout ended before the expected line; stderr: \(stderr)")
            }
            if predicate(line) { return line }
        }
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the exit (at most `timeout` s); returns the status, or nil if it was killed by a
    /// signal or did not exit in time.
    func waitForExit(timeout: Double = 10) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        guard !process.isRunning else { return nil }
        process.waitUntilExit()
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}

/// A folder for one test's audio, removed afterwards.
final class CLIScratch {
    let directory: URL

    init() throws {
        // Resolve symlinks so that paths compare equal to what getcwd(3) reports.
        let base = URL(fileURLWithPath: FileManager.default.temporaryDirectory.path).resolvingSymlinksInPath()
        directory = base.appendingPathComponent("reel-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    /// A sine tone made by sox: `seconds` long, 44100 Hz stereo, in `name`.
    func tone(_ name: String, seconds: Int = 5) throws -> URL {
        let url = directory.appendingPathComponent(name)
        let sox = Process()
        sox.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sox.arguments = ["sox", "-n", "-r", "44100", "-c", "2", url.path, "synth", "\(seconds)", "sine", "440"]
        try sox.run()
        sox.waitUntilExit()
        guard sox.terminationStatus == 0 else { throw TestFailure("sox failed with status \(sox.terminationStatus)") }
        return url
    }
}
