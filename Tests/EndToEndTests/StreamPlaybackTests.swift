// URL sources through reeld's socket: a station plays with its name, the state says live and
// how the connection is; a URL that gives no audio is an error naming it; libcurl is mapped
// only once a URL plays.

import Foundation
import ReelProtocol
import Testing
import ReelTestSupport

@Suite(.serialized) struct StreamPlaybackTests {
    static func mapsCurl(_ pid: Int32) throws -> Bool {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        guard maps.contains("libsndfile") else { throw TestFailure("cannot read reeld's memory maps") }
        return maps.contains("libcurl")
    }

    static func waitFor(_ client: RPCTestClient, _ done: (JSONValue) -> Bool) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(60)
        var status = try client.result("player.status")
        while !done(status) && Date() < deadline {
            usleep(20_000)
            status = try client.result("player.status")
        }
        return status
    }

    @Test func aStationPlaysWithItsNameAndTheStreamsState() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let url = server.url("/live.mp3")
        let info = try client.result("daemon.info")
        #expect(info["urlSchemes"] == .array([.string("http"), .string("https")]))
        // Idle, and with a file queued: no libcurl.
        #expect(try !Self.mapsCurl(daemon.process.processIdentifier))
        let added = try client.result("queue.add", ["url": .string(url)])
        #expect(added["entries"]?.arrayValue?.first?["source"] == .object(["url": .string(url), "name": .null, "title": .null]))
        #expect(try !Self.mapsCurl(daemon.process.processIdentifier), "adding a URL fetches nothing")
        let playing = try client.result("player.play", ["url": .string(url)])
        #expect(playing["state"] == .string("playing"))
        #expect(playing["source"]?["url"] == .string(url))
        let status = try Self.waitFor(client) { $0["source"]?["name"] == .string("Reel Test Radio") }
        #expect(status["source"]?["name"] == .string("Reel Test Radio"), "\(status)")
        #expect(status["live"] == .bool(true))
        #expect(status["duration"] == .null)
        #expect(status["stream"]?["bitrate"] == .int(128))
        #expect(status["stream"]?["reconnects"] == .int(0))
        #expect(status["format"]?["codec"] == .string("mp3"))
        let titled = try Self.waitFor(client) { $0["source"]?["title"] == .string("First title") }
        #expect(titled["source"]?["title"] == .string("First title"), "\(titled)")
        #expect(try Self.mapsCurl(daemon.process.processIdentifier))
        // The queue's entry keeps the station's name.
        let listed = try client.result("queue.list")
        #expect(listed["entries"]?.arrayValue?.first?["source"]?["name"] == .string("Reel Test Radio"))
        _ = try client.result("player.stop")
    }

    @Test func playingAStationKeepsFewOfThePagesThatLoadingLibcurlTouches() throws {
        let server = try StreamServer(seconds: 10)
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let before = try FFmpegPlaybackTests.mappedFiles(daemon.pid)
        _ = try client.result("player.play", ["url": .string(server.url("/live.mp3"))])
        let status = try Self.waitFor(client) { ($0["position"]?.doubleValue ?? 0) >= 2 }
        #expect((status["position"]?.doubleValue ?? 0) >= 2, "\(status)")
        let (files, megabytes) = try FFmpegPlaybackTests.residentFilePages(daemon.pid, notIn: before)
        // libcurl brings in some 40 libraries (TLS, SSH, LDAP, Kerberos, RTMP, HTTP/2, IDN); the
        // loader and connecting leave about 8.6 MB of their pages resident when they are not
        // handed back, and about 3.2 MB stay when they are.
        #expect(files > 20, "only \(files) files were mapped by playing a station: is libcurl loaded?")
        #expect(megabytes < 5, "\(String(format: "%.1f", megabytes)) MB of the pages of the \(files) files libcurl brought in are resident")
        print("after 2 s of a station: \(files) files mapped since idle, \(String(format: "%.2f", megabytes)) MB of their pages resident")
        _ = try client.result("player.stop")
    }

    /// Resident pages (smaps's `Rss` less its `Anonymous`) of the mappings of files whose name
    /// has one of `names` in it, in MB.
    static func residentPages(_ pid: Int32, ofFilesNamed names: [String]) throws -> Double {
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        var counted = false
        var kilobytes = 0
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard let key = fields.first else { continue }
            if !key.hasSuffix(":") {
                let file = line.firstIndex(of: "/").map { line[$0...].split(separator: "/").last.map(String.init) ?? "" } ?? ""
                counted = names.contains { file.contains($0) }
            } else if counted, key == "Rss:" || key == "Anonymous:", fields.count > 1, let value = Int(fields[1]) {
                kilobytes += key == "Rss:" ? value : -value
            }
        }
        return Double(kilobytes) / 1024
    }

    @Test func aStationPlayedAfterAnFFmpegStationKeepsFewOfFFmpegsPages() throws {
        let server = try StreamServer(seconds: 10, fixtures: [(name: "radio.aac", kind: "aac", seconds: 10)])
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let ffmpeg = ["libavcodec", "libavformat", "libavutil", "libswresample"]
        _ = try client.result("player.play", ["url": .string(server.url("/live/radio.aac"))])
        let aac = try Self.waitFor(client) { $0["format"]?["codec"] == .string("aac") && ($0["position"]?.doubleValue ?? 0) >= 2 }
        #expect(aac["format"]?["codec"] == .string("aac"), "\(aac)")
        let decoding = try Self.residentPages(daemon.pid, ofFilesNamed: ffmpeg)
        _ = try client.result("player.stop")
        _ = try client.result("player.play", ["url": .string(server.url("/live.mp3"))])
        let mp3 = try Self.waitFor(client) { $0["format"]?["codec"] == .string("mp3") && ($0["position"]?.doubleValue ?? 0) >= 2 }
        #expect(mp3["format"]?["codec"] == .string("mp3"), "\(mp3)")
        // Once the MP3 station has played 2 s, what decoding AAC touched in FFmpeg's libraries
        // (about 2.2 MB) has gone back: the MP3 station does not use them. Kept, they stayed
        // resident for as long as reeld ran. About 0.2 MB stay: pages of their writable data
        // that were read, not written (never handed back: see `reel_loaded_pages_release`).
        var resident = decoding
        let released = waitUntil(seconds: 30) {
            resident = (try? Self.residentPages(daemon.pid, ofFilesNamed: ffmpeg)) ?? resident
            return resident < 0.75
        }
        #expect(released, "\(String(format: "%.2f", resident)) MB of FFmpeg's pages are resident while an MP3 station plays (\(String(format: "%.2f", decoding)) MB while AAC played)")
        print("FFmpeg's pages resident: \(String(format: "%.2f", decoding)) MB while AAC played, \(String(format: "%.2f", resident)) MB while MP3 plays after it")
        _ = try client.result("player.stop")
    }

    @Test func anHLSStationPlaysLiveThroughFFmpeg() throws {
        let server = try HLSServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let url = server.url("ts/live.m3u8")
        let playing = try client.result("player.play", ["url": .string(url)])
        #expect(playing["state"] == .string("playing"))
        // Decoded audio came (the test daemon's device is not paced: it plays faster than the
        // segments come, so the state goes between playing and buffering).
        let status = try Self.waitFor(client) { $0["format"]?["codec"] == .string("aac") && ($0["position"]?.doubleValue ?? 0) > 1 }
        #expect([.string("playing"), .string("buffering")].contains(status["stream"]?["state"]), "\(status)")
        #expect((status["position"]?.doubleValue ?? 0) > 1, "\(status)")
        #expect(status["source"]?["url"] == .string(url))
        #expect(status["live"] == .bool(true))
        #expect(status["duration"] == .null)
        #expect(status["format"]?["codec"] == .string("aac"))
        #expect(status["format"]?["sampleRate"] == .int(44100))
        _ = try client.result("player.stop")
    }

    @Test func urlsThatGiveNoAudioAreErrorsNamingThem() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let missing = server.url("/status/404")
        guard case .failure(let error) = try client.call("player.play", ["url": .string(missing)], timeout: 60) else {
            Issue.record("a 404 played")
            return
        }
        #expect(error.data?["reason"] == .string("unreachable"))
        #expect(error.message.contains(missing) && error.message.contains("404"))
        for url in ["file:///etc/passwd", "ftp://127.0.0.1/a.mp3"] {
            guard case .failure(let refused) = try client.call("queue.add", ["url": .string(url)]) else {
                Issue.record("\(url) was queued")
                continue
            }
            #expect(refused.data?["reason"] == .string("unsupported_format"), "\(refused)")
        }
        guard case .failure = try client.call("queue.add", ["url": .string(missing), "file": .string("/a.mp3")]) else {
            Issue.record("url and file together were taken")
            return
        }
    }

    @Test func theQueueMovesOnAfterAnUnreachableEntry() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.result("queue.add", ["url": .string(server.url("/html"))])
        _ = try client.result("queue.add", ["url": .string(server.url("/live.mp3"))])
        _ = try client.call("player.play", [:], timeout: 60)
        let status = try Self.waitFor(client) { $0["source"]?["url"] == .string(server.url("/live.mp3")) && $0["state"] == .string("playing") }
        #expect(status["source"]?["url"] == .string(server.url("/live.mp3")), "\(status)")
        #expect(status["error"]?["reason"] == .string("unreachable"))
        _ = try client.result("player.stop")
    }

    @Test func theCLIAddsAndPlaysAURLAndShowsTheStationAndTitle() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let url = server.url("/live.mp3")
        let added = try CLI.run(["add", url, "--socket", daemon.socketPath])
        #expect(added.status == 0 && added.stdout.contains("added \(url)"), "\(added)")
        let played = try CLI.run(["play", url, "--socket", daemon.socketPath])
        #expect(played.status == 0 && played.stdout.contains(url), "\(played)")
        let client = try daemon.client()
        _ = try Self.waitFor(client) { $0["source"]?["title"] == .string("First title") }
        let status = try CLI.run(["status", "--socket", daemon.socketPath])
        #expect(status.status == 0 && status.stdout.contains("Reel Test Radio — First title"), "\(status)")
        let refused = try CLI.run(["add", "ftp://127.0.0.1/a.mp3", "--socket", daemon.socketPath])
        #expect(refused.status != 0 && refused.stderr.contains("only http:// and https://"), "\(refused)")
        _ = try client.result("player.stop")
    }
    @Test func queueAddOfAStationPlaylistAddsItsStreamsAndAFailedPlayLeavesTheQueue() throws {
        let server = try StreamServer()
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        let added = try client.result("queue.add", ["url": .string(server.url("/list.pls"))])
        let sources = added["entries"]?.arrayValue?.map { $0["source"] ?? .null } ?? []
        #expect(sources == [
            .object(["url": .string(server.url("/live.mp3")), "name": .null, "title": .string("Live")]),
            .object(["url": .string(server.url("/file.mp3")), "name": .null, "title": .string("File")]),
        ], "\(added)")
        let before = try client.result("queue.list")
        let missing = server.url("/status/404")
        guard case .failure(let error) = try client.call("player.play", ["url": .string(missing)], timeout: 60) else {
            Issue.record("a 404 played")
            return
        }
        #expect(error.message.contains(missing))
        let after = try client.result("queue.list")
        #expect(after == before, "a failed play {url} changed the queue")
        guard case .failure(let refused) = try client.call("queue.add", ["url": .string(server.url("/missing.m3u"))]) else {
            Issue.record("a missing playlist was added")
            return
        }
        #expect(refused.message.contains("/missing.m3u"), "\(refused)")
        #expect(try client.result("queue.list") == before)
    }
}
