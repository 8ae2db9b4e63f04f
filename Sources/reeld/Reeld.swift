// reeld: flags and config → live dependencies → services.

import ArgumentParser
import Logging
import ReelDaemon

#if canImport(Glibc)
import Glibc
#endif

@main
struct Reeld: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reeld",
        abstract: "The Reel audio player and recording daemon.",
        discussion: """
            Settings come from defaults, then the config file, then REEL_* environment variables,
            then these flags. Every config key is documented in config/reeld.toml.
            """,
        version: Daemon.version)

    @Option(help: "Config file (TOML). Default: ~/.config/reel/reeld.toml, or /etc/reel/reeld.toml for root, if it exists.")
    var config: String?
    @Option(help: "Unix socket to listen on.")
    var socket: String?
    @Option(help: "Directory for the library and saved state.")
    var dataDir: String?
    @Option(help: "ALSA playback device, e.g. default or plughw:CARD=Headphones.")
    var device: String?
    @Option(help: "ALSA capture device.")
    var captureDevice: String?
    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?
    @Option(help: "Speak the MPD protocol on HOST:PORT, [IPv6]:PORT or a Unix socket path (repeatable); none turns it off.")
    var mpdListen: [String] = []
    @Option(help: "Password MPD clients must send before commands that need permission.")
    var mpdPassword: String?
    @Option(help: "Serve the web page and its WebSocket on HOST:PORT or [IPv6]:PORT (repeatable); none turns it off.")
    var httpListen: [String] = []
    @Option(help: "Password every HTTP request needs (Basic authentication, user name ignored).")
    var httpPassword: String?

    func run() async throws {
        let environment = Environment.current
        var settings = DaemonConfiguration.defaults(environment: environment, uid: getuid())
        do {
            let file = config ?? environment["REEL_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
                ?? DaemonConfiguration.defaultFile(environment: environment, uid: getuid())
            if let file {
                guard let text = readTextFile(file) else {
                    throw ConfigurationError("cannot read the config file \(file): \(String(cString: strerror(errno)))")
                }
                try settings.apply(toml: text, source: file)
            }
            try settings.apply(environment: environment)
            let flags: [(String, String?)] = [
                ("socket", socket), ("data_dir", dataDir), ("device", device),
                ("capture_device", captureDevice), ("log_level", logLevel),
                ("mpd_listen", mpdListen.isEmpty ? nil : mpdListen.joined(separator: ",")),
                ("mpd_password", mpdPassword),
                ("http_listen", httpListen.isEmpty ? nil : httpListen.joined(separator: ",")),
                ("http_password", httpPassword),
            ]
            for case (let key, let value?) in flags {
                try settings.set(key, value, source: "--" + String(key.map { $0 == "_" ? "-" : $0 }))
            }
            try settings.validate()
        } catch let error as ConfigurationError {
            printError("reeld: \(error.description)")
            throw ExitCode(2)
        }

        let level = settings.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "reel")
        let daemon: Daemon
        do {
            daemon = try Daemon(configuration: settings, environment: environment, logger: logger)
        } catch {
            printError("reeld: cannot open the library in \(settings.dataDir): \(error)")
            throw ExitCode(1)
        }
        do {
            try await daemon.run()
        } catch let error as SocketSetupError {
            printError("reeld: \(error.description)")
            throw ExitCode(1)
        } catch {
            printError("reeld: \(error)")
            throw ExitCode(1)
        }
    }
}

enum Environment {
    static var current: [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}

func readTextFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&chunk, 1, chunk.count, file)
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[0..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

func printError(_ message: String) {
    let line = Array((message + "\n").utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

