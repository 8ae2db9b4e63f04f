import Foundation
import Glibc
import ReelProtocol
import Testing

/// Shared libraries reeld maps only when it uses them: libsoxr (and libgomp, which it links)
/// once a pipe output resamples, never in a daemon that does not (its resident memory).
@Suite(.serialized) struct LibraryLoadingTests {
    /// The shared objects mapped into process `pid` (file names, e.g. "libsoxr.so.0.1.2").
    func mappedLibraries(_ pid: Int32) throws -> Set<String> {
        // Read to the end: procfs reports a size of 0, and one read gives only a page of it.
        let descriptor = open("/proc/\(pid)/maps", O_RDONLY)
        guard descriptor >= 0 else { throw TestFailure("cannot read /proc/\(pid)/maps") }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        let maps = String(decoding: bytes, as: UTF8.self)
        var names = Set<String>()
        for line in maps.split(separator: "\n") {
            guard let path = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(5).first,
                path.hasPrefix("/")
            else { continue }
            names.insert(String(path.split(separator: "/").last ?? ""))
        }
        return names
    }

    /// Plays `file` to its end (the null device is not paced: at once).
    func plays(_ daemon: DaemonProcess, _ file: String) throws {
        let played = try daemon.client().result("player.play", ["file": .string(file)])
        #expect(played["source"]?["path"] == .string(file))
        var status = try daemon.client().result("player.status")
        for _ in 0..<250 where status["state"] != .string("stopped") {
            usleep(20_000)
            status = try daemon.client().result("player.status")
        }
        #expect(status["state"] == .string("stopped"))
    }

    @Test func noResamplerIsLoadedWithoutAPipeOutput() throws {
        let daemon = try DaemonProcess()
        let pid = daemon.process.processIdentifier
        let idle = try mappedLibraries(pid)
        #expect(idle.contains { $0.hasPrefix("libmpg123.so") })  // the reading works: linked ones show
        #expect(!idle.contains { $0.hasPrefix("libsoxr.so") })
        #expect(!idle.contains { $0.hasPrefix("libgomp.so") })
        try plays(daemon, try daemon.tone("tone.wav", seconds: 3))
        let playing = try mappedLibraries(pid)
        #expect(!playing.contains { $0.hasPrefix("libsoxr.so") })
        #expect(!playing.contains { $0.hasPrefix("libgomp.so") })
    }

    @Test func aPipeOutputThatResamplesLoadsLibsoxrAndPlays() throws {
        let scratch = try DaemonProcess()
        let config = scratch.directory.appendingPathComponent("reeld.toml").path
        let fifo = scratch.directory.appendingPathComponent("snapfifo").path
        try """
        [[outputs]]
        type = "alsa"

        [[outputs]]
        type = "snapcast"
        path = "\(fifo)"
        format = "48000:16:2"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config])
        let pid = daemon.process.processIdentifier
        #expect(!(try mappedLibraries(pid)).contains { $0.hasPrefix("libsoxr.so") })
        // 44.1 kHz into a 48 kHz pipe: resampled.
        try plays(daemon, try scratch.tone("tone.wav", seconds: 3))
        #expect(try mappedLibraries(pid).contains { $0.hasPrefix("libsoxr.so") })
        #expect(!daemon.log().contains("cannot resample"))
    }
}
