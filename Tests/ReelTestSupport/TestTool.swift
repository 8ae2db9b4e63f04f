// Running the command-line tools the tests make fixtures and ask servers with (ffmpeg, curl,
// python3), and waiting for a condition with a generous deadline.

import Foundation
import Glibc

/// A tool or test server that did not do what a test needed, with what it said.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

public enum TestTool {
    /// Runs `executable` with `arguments` to its end; throws unless it exits 0.
    public static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSupportError("\(executable) exited \(process.terminationStatus)")
        }
    }

    /// Runs `executable` and returns what it wrote to its standard output.
    public static func output(_ executable: String, _ arguments: [String]) throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }

    /// The repository's `Tests/` directory (this file is in `Tests/ReelTestSupport/`).
    public static var testsDirectory: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    }
}

/// A test server started as a child process (`python3 SCRIPT …`) that prints `PORT <n>` as its
/// first line once it listens on loopback. Killed when released.
public final class ChildServer: @unchecked Sendable {
    public let port: Int
    private let process: Process

    /// `name` says which server in the error when it does not start.
    public init(name: String, script: String, arguments: [String]) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [script] + arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let byte = output.fileHandleForReading.readData(ofLength: 1)
            if byte.isEmpty { break }
            line.append(byte)
        }
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard text.hasPrefix("PORT "), let port = Int(text.dropFirst(5)) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestSupportError("the \(name) did not start (said \"\(text)\")")
        }
        self.port = port
    }

    /// Kills the server and waits for it to end; again is a no-op.
    public func stop() {
        guard process.isRunning else { return }
        // SIGKILL: the test runner's threads block SIGTERM, and the child inherits that mask.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// Waits (up to a generous deadline, so a loaded machine does not fail the test) until `done`
/// holds; returns whether it does.
public func waitUntil(seconds: Double = 60, _ done: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !done() && Date() < deadline { usleep(1000) }
    return done()
}
