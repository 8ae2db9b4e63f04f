// URL sources against the project's stream server on loopback: playing, failing with a reason,
// redirects, drops and stalls.

import Foundation
import ReelModel
import Testing

@testable import ReelAudio
import ReelTestSupport

@Suite(.serialized) struct StreamSourceTests {
    static let configuration: StreamConfiguration = {
        var configuration = StreamConfiguration()
        configuration.connectTimeout = 5
        configuration.lowSpeedSeconds = 3
        configuration.bufferBytes = 256 << 10
        return configuration
    }()

    static func open(_ url: String) throws(ReelError) -> (reader: AudioFileReader, stream: HTTPStream) {
        try URLSource.open(url: url, configuration: configuration)
    }

    static func failure(_ url: String) -> ReelError? {
        do throws(ReelError) {
            _ = try open(url)
            return nil
        } catch {
            return error
        }
    }

    /// Reads frames until `audible` non-silent frames came or the stream ended (waiting while
    /// nothing has come); returns the audible frames read.
    static func readAudible(_ reader: AudioFileReader, frames audible: Int, seconds: Double = 60) throws -> [Int16] {
        var samples: [Int16] = []
        var chunk = [Int16](repeating: 0, count: 4096 * reader.pcmFormat.channels)
        let deadline = Date().addingTimeInterval(seconds)
        while samples.count / reader.pcmFormat.channels < audible && Date() < deadline {
            let frames = try chunk.withUnsafeMutableBytes { try reader.read(into: $0.baseAddress!, frames: 4096) }
            if frames == 0 && reader.isWaitingForData {
                usleep(5000)
                continue
            }
            if frames == 0 { break }
            let got = chunk[0..<(frames * reader.pcmFormat.channels)]
            if got.allSatisfy({ $0 == 0 }) {
                usleep(5000)
                continue
            }
            samples.append(contentsOf: got)
        }
        return samples
    }

    @Test func aLiveMP3StreamPlays() throws {
        let server = try StreamServer()
        let (reader, stream) = try Self.open(server.url("/live.mp3"))
        #expect(reader.format == AudioFormat(codec: "mp3", sampleRate: 44100, channels: 2))
        #expect(!reader.canSeek && reader.frameCount == nil)
        #expect(try Self.readAudible(reader, frames: 44100).count >= 44100 * 2)
        let status = stream.current
        #expect(status.name == "Reel Test Radio" && status.bitrate == 128)
        #expect(status.head?.resourceLength == nil)
        #expect(status.state == .playing)
    }

    @Test func icyTitlesAreTakenOutOfTheAudioAndFollowed() throws {
        // Paced (a first burst of 64 KiB, then 128 kbit/s): a title every 4 blocks of 16,000 bytes.
        let server = try StreamServer()
        let (reader, stream) = try Self.open(server.url("/live.mp3"))
        var seen: [String] = []
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && !seen.contains("Second title") {
            _ = try Self.readAudible(reader, frames: 4410)
            // The title of the frames decoded so far (the player shows the audible frame's).
            if let title = stream.title(atFrame: Int64.max).title, seen.last != title { seen.append(title) }
        }
        #expect(seen.starts(with: ["First title", "Second title"]), "\(seen)")
        #expect(stream.current.name == "Reel Test Radio")
    }

    @Test func aMissingStreamAWebPageAndTextAreUnreachable() throws {
        let server = try StreamServer()
        let missing = try #require(Self.failure(server.url("/status/404")))
        #expect(missing.reason == .unreachable && missing.message.contains("404") && missing.message.contains(server.url("/status/404")))
        let page = try #require(Self.failure(server.url("/html")))
        #expect(page.reason == .unreachable && page.message.contains("web page"))
        let text = try #require(Self.failure(server.url("/text")))
        #expect(text.message.contains(server.url("/text")))
    }

    @Test func nothingListeningIsUnreachableNamingTheConnect() throws {
        // A port nobody listens on: bind one, note it, close it.
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(socket, $0, &length) } }
        close(socket)
        let url = "http://127.0.0.1:\(UInt16(bigEndian: address.sin_port))/live.mp3"
        let error = try #require(Self.failure(url))
        #expect(error.reason == .unreachable && error.message.contains("cannot connect") && error.message.contains(url))
    }

    @Test func redirectsAreFollowedBoundedAndOnlyToHTTP() throws {
        let server = try StreamServer()
        let (reader, _) = try Self.open(server.url("/redirect/2/live.mp3"))
        #expect(try Self.readAudible(reader, frames: 4410).count > 0)
        let tooMany = try #require(Self.failure(server.url("/redirect/9/live.mp3")))
        #expect(tooMany.reason == .unreachable && tooMany.message.contains("redirect"))
        let toFile = try #require(Self.failure(server.url("/redirect-to?url=file:///etc/passwd")))
        #expect(toFile.reason == .unreachable)
    }

    @Test func aDroppedLiveStreamReconnectsAndPlaysOn() throws {
        let server = try StreamServer()
        // Every connection ends after 20,000 bytes (about 1.2 s of audio) and starts the
        // programme again: after two that only repeated what was received, a reconnect's bytes
        // are played as they come (the programme again) rather than never playing on.
        let (reader, stream) = try Self.open(server.url("/drop/20000/live.mp3"))
        #expect(try Self.readAudible(reader, frames: 4 * 44100).count >= 4 * 44100 * 2)
        #expect(stream.current.reconnects >= 2)
    }

    /// A broadcast's server sends each new listener the last 192 KiB it sent (12 s at 128
    /// kbit/s). After a drop, the new connection's burst repeats what was received: it is
    /// skipped, and the bytes received are the broadcast's, each once, in order.
    @Test func aReconnectsBurstThatRepeatsWhatWasReceivedIsSkipped() throws {
        let server = try StreamServer(
            seconds: 40, extra: ["--shared-clock", "--burst", "\(192 << 10)"],
            source: "anoisesrc=d=%SECONDS%:c=pink:r=44100:a=0.3")
        let broadcast = [UInt8](try Data(contentsOf: URL(fileURLWithPath: server.mp3Path)))
        var configuration = Self.configuration
        configuration.bufferBytes = 1 << 20
        let stream = HTTPStream(url: server.url("/live.mp3"), configuration: configuration)
        stream.start()
        defer { stream.stop() }
        // The first burst, and a little more.
        #expect(waitUntil(seconds: 30) { stream.buffer.written >= 200 << 10 })
        try server.control("/control/drop")
        let before = stream.buffer.written
        #expect(waitUntil(seconds: 30) { stream.current.reconnects == 1 && stream.buffer.written >= before + (16 << 10) })
        #expect(stream.current.repeatedBytesSkipped > 64 << 10, "\(stream.current)")
        // Every byte received continues the broadcast (looped) from the first one.
        let received = stream.buffer.lastBytes(upTo: 1 << 20)
        let probe = received.prefix(1024)
        let start = try #require(
            (0...(broadcast.count - probe.count)).first { broadcast[$0..<($0 + probe.count)].elementsEqual(probe) })
        let mismatch = received.indices.first { received[$0] != broadcast[(start + $0) % broadcast.count] }
        #expect(mismatch == nil, "byte \(mismatch ?? 0) of \(received.count) does not continue the broadcast")
        #expect(stream.boundaries.next(from: 0) == nil, "a splice is no new start")
    }

    @Test func aStalledServerIsDroppedAndReconnected() throws {
        let server = try StreamServer()
        // Every connection stalls after 30,000 bytes; the low-speed limit (3 s) drops it.
        let (reader, stream) = try Self.open(server.url("/stall/30000/live.mp3"))
        #expect(try Self.readAudible(reader, frames: 3 * 44100).count >= 3 * 44100 * 2)
        #expect(stream.current.reconnects >= 1)
    }

    @Test func aFiniteFileResumesByRangeWithEverySampleInPlace() throws {
        let server = try StreamServer(seconds: 4)
        // The same decoder on the same file, fetched in one piece, is the reference.
        let (whole, _) = try Self.open(server.url("/file.mp3"))
        let expected = try Self.readAudible(whole, frames: Int.max, seconds: 120)
        #expect(expected.count >= 4 * 44100 * 2)
        // Each connection is dropped after 12,000 bytes: it resumes from where it stopped.
        let (reader, stream) = try Self.open(server.url("/drop/12000/file.mp3"))
        let all = try Self.readAudible(reader, frames: Int.max, seconds: 120)
        #expect(all.count == expected.count, "every frame of the file, no more, none lost")
        #expect(all == expected)
        #expect(stream.current.reconnects >= 3)
    }

    @Test func aFiniteFileWithoutRangesStopsWithAnErrorAfterADrop() throws {
        let server = try StreamServer()
        let (reader, _) = try Self.open(server.url("/drop/12000/norange.mp3"))
        #expect(throws: ReelError.self) { _ = try Self.readAudible(reader, frames: Int.max, seconds: 60) }
    }

    @Test func aTricklingServerIsUnreachableNotAHang() throws {
        let server = try StreamServer()
        // One byte a second, below the low-speed limit (1000 bytes/s for 3 s here).
        let error = try #require(Self.failure(server.url("/trickle/live.mp3")))
        #expect(error.reason == .unreachable && error.message.contains(server.url("/trickle/live.mp3")), "\(error)")
    }

    @Test func httpsIsVerifiedAgainstTheSystemsCAsAndTheExtraCAFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let base = directory.path
        try TestAudio.run(
            "/usr/bin/python3",
            ["-c", "import sys; sys.path.insert(0, sys.argv[1]); import stream_server; stream_server.make_test_ca(sys.argv[2])",
             URL(fileURLWithPath: StreamServer.script).deletingLastPathComponent().path, base])
        let server = try StreamServer(extra: ["--tls-cert", base + "/server.pem", "--tls-key", base + "/server.key"])
        let url = "https://127.0.0.1:\(server.port)/live.mp3"
        // Not signed by a CA the system trusts: refused, naming TLS.
        let untrusted = try #require(Self.failure(url))
        #expect(untrusted.reason == .unreachable && untrusted.message.contains("TLS"), "\(untrusted)")
        // With the test CA as the extra CA file: it plays.
        var configuration = Self.configuration
        configuration.extraCAFile = base + "/ca.pem"
        let (reader, _) = try URLSource.open(url: url, configuration: configuration)
        #expect(try Self.readAudible(reader, frames: 4410).count > 0)
    }

    @Test func libcurlIsLoadedOnlyByTheFirstURL() throws {
        // Loaded by now or not, reel_curl_loaded never loads it; after a URL played, it is.
        let server = try StreamServer()
        _ = try Self.open(server.url("/live.mp3"))
        #expect(HTTPStream.libraryLoaded)
    }
}
