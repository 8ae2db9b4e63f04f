// Running the command-line tools the tests make fixtures and ask servers with (ffmpeg, curl,
// python3), and waiting for a condition with a generous deadline.

import Foundation
import Glibc

/// A tool or test server that did not do what a test needed, with what it said.
public struct TestSupportError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// What a tool did: its exit status and what it wrote.
public struct ToolResult: Sendable {
    public let status: Int32
    public let standardOutput: Data
    public let standardError: String

    /// The standard output as text.
    public var text: String { String(decoding: standardOutput, as: UTF8.self) }

    /// Both streams as text, the standard output first (sox and ffmpeg report on stderr).
    public var allOutput: String { text + standardError }
}

/// The one way tests run a command-line tool. A name without a `/` is looked up on `PATH`
/// (through `/usr/bin/env`); both of the tool's output streams are kept, so a failure says what
/// the tool said.
public enum TestTool {
    /// Runs `tool` with `arguments` to its end, with `environment` added to this process's own.
    public static func result(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> ToolResult {
        let process = Process()
        if tool.contains("/") {
            process.executableURL = URL(fileURLWithPath: tool)
            process.arguments = arguments
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [tool] + arguments
        }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, added in added }
        }
        // The standard error goes to a file, so that neither pipe can fill while the other is read.
        let errors = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tool-\(UUID().uuidString).err")
        guard FileManager.default.createFile(atPath: errors.path, contents: nil) else {
            throw TestSupportError("cannot create \(errors.path) for \(tool)'s errors")
        }
        defer { try? FileManager.default.removeItem(at: errors) }
        let errorHandle = try FileHandle(forWritingTo: errors)
        defer { try? errorHandle.close() }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = errorHandle
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let errorText = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        return ToolResult(status: process.terminationStatus, standardOutput: data, standardError: errorText)
    }

    /// Runs `tool` to its end and returns its standard output as text; throws with what it said
    /// unless it exits 0.
    @discardableResult
    public static func run(_ tool: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let outcome = try result(tool, arguments, environment: environment)
        guard outcome.status == 0 else {
            let said = outcome.allOutput.trimmingCharacters(in: .whitespacesAndNewlines)
            throw TestSupportError("\(tool) \(arguments.joined(separator: " ")) exited \(outcome.status): \(said.suffix(2000))")
        }
        return outcome.text
    }

    /// Runs `tool` and returns what it wrote to its standard output, whatever its exit status.
    public static func output(_ tool: String, _ arguments: [String]) throws -> Data {
        try result(tool, arguments).standardOutput
    }

    /// Runs `tool` and returns its exit status (its output is not shown).
    public static func status(_ tool: String, _ arguments: [String]) throws -> Int32 {
        try result(tool, arguments).status
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
