// The HTTP front end of a running reeld, over real TCP sockets: the page, the WebSocket, the
// Host/Origin rule and password, recordings' audio with ranges, and uploads.

import Foundation
import Glibc
import ReelProtocol
import ReelTestSupport
import Testing

@Suite(.serialized) struct HTTPFrontEndTests {
    /// A daemon serving HTTP on a free port of 127.0.0.1.
    static func daemon(password: String? = nil, environment: [String: String] = [:]) throws -> (DaemonProcess, Int) {
        let port = try HTTPTestClient.freePort()
        var arguments = ["--http-listen", "127.0.0.1:\(port)"]
        if let password { arguments += ["--http-password", password] }
        let daemon = try DaemonProcess(arguments: arguments, environment: environment)
        // The control socket answers first; the HTTP listener follows at once.
        let deadline = Date().addingTimeInterval(10)
        while (try? HTTPTestClient(port: port)) == nil {
            guard Date() < deadline else { throw TestFailure("reeld does not listen on \(port); log:\n\(daemon.log())") }
            usleep(10_000)
        }
        return (daemon, port)
    }

    static func pageFile(_ name: String) throws -> [UInt8] {
        let path = #filePath.replacingOccurrences(
            of: "Tests/EndToEndTests/HTTPFrontEndTests.swift", with: "Sources/ReelDaemon/HTTP/Page/\(name)")
        return Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// What is in the data directory's audio folder (recordings, and any upload's leftovers).
    static func audioFiles(_ daemon: DaemonProcess) -> [String] {
        let path = daemon.directory.appendingPathComponent("data/audio").path
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// Waits until the audio folder holds nothing but `expected` (an upload's leftovers are
    /// removed on the file threads, just after the connection ends).
    static func waitForAudioFiles(_ daemon: DaemonProcess, count expected: Int) -> [String] {
        let deadline = Date().addingTimeInterval(5)
        var files = audioFiles(daemon)
        while files.count != expected, Date() < deadline {
            usleep(20_000)
            files = audioFiles(daemon)
        }
        return files
    }

    static func basic(_ credentials: String) -> (String, String) {
        ("Authorization", "Basic " + Data(credentials.utf8).base64EncodedString())
    }

    static func multipart(file: [UInt8], filename: String, boundary: String = "----ReelTestBoundary8s7d6f") -> (
        contentType: String, body: [UInt8]
    ) {
        let head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(filename)\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        return ("multipart/form-data; boundary=\(boundary)", Array(head.utf8) + file + Array("\r\n--\(boundary)--\r\n".utf8))
    }

    // MARK: The page

    @Test func thePageAndItsAssetsAreTheEmbeddedFiles() throws {
        let (daemon, port) = try Self.daemon()
        for (path, file, type) in [
            ("/", "index.html", "text/html"), ("/app.js", "app.js", "text/javascript"), ("/style.css", "style.css", "text/css"),
        ] {
            let response = try HTTPTestClient.exchange("GET", path, port: port)
            #expect(response.status == 200, "\(path)")
            #expect(response.body == (try Self.pageFile(file)), "\(path)")
            #expect(response.header("content-type")?.hasPrefix(type) == true, "\(path)")
            #expect(response.header("cache-control") == "no-cache")
            let etag = try #require(response.header("etag"))
            let again = try HTTPTestClient.exchange("GET", path, port: port, headers: [("If-None-Match", etag)])
            #expect(again.status == 304, "\(path)")
        }
        let head = try HTTPTestClient.exchange("HEAD", "/", port: port)
        #expect(head.status == 200)
        #expect(head.header("content-length") == String(try Self.pageFile("index.html").count))
        #expect(try HTTPTestClient.exchange("GET", "/nothing", port: port).status == 404)
        #expect(try HTTPTestClient.exchange("POST", "/", port: port, body: [1]).status == 405)
        _ = daemon
    }

    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let (daemon, port) = try Self.daemon()
        let client = try HTTPTestClient(port: port)
        for path in ["/", "/app.js", "/nothing", "/style.css"] {
            try client.request("GET", path, port: port)
            let response = try client.readResponse()
            #expect(response.status == (path == "/nothing" ? 404 : 200))
        }
        _ = daemon
    }

    // MARK: The WebSocket

    @Test func theWebSocketSpeaksJSONRPCWithSubscriptions() throws {
        let (daemon, port) = try Self.daemon()
        let client = try HTTPTestClient(port: port)
        let handshake = try client.openWebSocket(port: port, origin: "http://127.0.0.1:\(port)")
        #expect(handshake.status == 101)
        #expect(handshake.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")

        try client.sendText(#"{"jsonrpc":"2.0","id":1,"method":"daemon.info"}"#)
        let info = try client.readMessage()
        #expect(info["id"]?.intValue == 1)
        let listeners = info["result"]?["listeners"]?.arrayValue ?? []
        #expect(listeners.contains { $0["protocol"]?.stringValue == "http" && $0["address"]?.stringValue == "127.0.0.1:\(port)" })

        try client.sendText(#"{"jsonrpc":"2.0","id":2,"method":"subscribe","params":{"stream":"player"}}"#)
        let subscribed = try client.readMessage()
        let subscription = try #require(subscribed["result"]?["subscription"]?.intValue)
        let first = try client.readMessage()
        #expect(first["method"]?.stringValue == "player.state")
        #expect(first["params"]?["subscription"]?.intValue == subscription)
        #expect(first["params"]?["state"]?.stringValue == "stopped")

        // A change made on the Unix socket is pushed to the page.
        let tone = try daemon.tone("tone.wav", seconds: 30)
        _ = try daemon.client().result("player.play", ["file": .string(tone)])
        // (The null device plays faster than real time, and the stream coalesces: the tone may
        // already have ended by the push; its source is there either way.)
        let push = try client.readMessage()
        #expect(push["method"]?.stringValue == "player.state")
        #expect(push["params"]?["source"]?["path"]?.stringValue == tone)

        // An error is a reply, and the connection and subscription go on.
        try client.sendText(#"{"jsonrpc":"2.0","id":3,"method":"no.such"}"#)
        var reply = try client.readMessage()
        while reply["id"] == nil { reply = try client.readMessage() }
        #expect(reply["error"]?["code"]?.intValue == -32601)

        // A message split in frames is one message.
        try client.sendFrame(opcode: 1, Array(#"{"jsonrpc":"2.0","id":4,"#.utf8), fin: false)
        try client.sendFrame(opcode: 0, Array(#""method":"player.status"}"#.utf8))
        reply = try client.readMessage()
        while reply["id"] == nil { reply = try client.readMessage() }
        #expect(reply["id"]?.intValue == 4)
        #expect(reply["result"]?["state"]?.stringValue != nil)

        // Ping, then a close that is answered.
        try client.sendFrame(opcode: 9, [1, 2, 3])
        var frame = try client.readFrame()
        while frame.opcode == 1 { frame = try client.readFrame() }
        #expect(frame.opcode == 10)
        #expect(frame.payload == [1, 2, 3])
        try client.sendFrame(opcode: 8, [0x03, 0xe8])
        frame = try client.readFrame()
        while frame.opcode == 1 { frame = try client.readFrame() }
        #expect(frame.opcode == 8)
        #expect(frame.payload == [0x03, 0xe8])
        #expect(client.closedByPeer())
    }

    @Test func aForeignOriginOrHostIsRefused() throws {
        let (daemon, port) = try Self.daemon()
        for (origin, host) in [
            ("http://evil.example", nil),  // another page in the same browser
            (nil, nil),  // no Origin at all
            ("https://127.0.0.1:\(port)", nil),
            ("http://evil.example:\(port)", "evil.example:\(port)"),  // DNS rebinding
        ] as [(String?, String?)] {
            let client = try HTTPTestClient(port: port)
            let response = try client.openWebSocket(port: port, origin: origin, host: host)
            #expect(response.status == 403, "\(origin ?? "no origin") \(host ?? "")")
        }
        // The page itself is not served under a foreign name either.
        let page = try HTTPTestClient.exchange("GET", "/", port: port, headers: [("Host", "evil.example:\(port)")])
        #expect(page.status == 403)
        #expect(page.reason == "unknown_host")
        // A form posted from another page is refused before its body is read.
        let wav = try Array(Data(contentsOf: URL(fileURLWithPath: daemon.tone("t.wav", seconds: 0.1))))
        let upload = try HTTPTestClient.exchange(
            "POST", "/import?name=X", port: port, headers: [("Origin", "http://evil.example")], body: wav)
        #expect(upload.status == 403)
        #expect(upload.reason == "foreign_origin")
        #expect(Self.audioFiles(daemon).isEmpty)
    }

    @Test func thePasswordIsNeededEverywhere() throws {
        let (daemon, port) = try Self.daemon(password: "sécret")
        let right = Self.basic("reel:sécret")
        let wrong = Self.basic("reel:secret")

        let missing = try HTTPTestClient.exchange("GET", "/", port: port)
        #expect(missing.status == 401)
        #expect(missing.header("www-authenticate")?.hasPrefix("Basic realm=") == true)
        #expect(try HTTPTestClient.exchange("GET", "/", port: port, headers: [wrong]).status == 401)
        #expect(try HTTPTestClient.exchange("GET", "/", port: port, headers: [right]).status == 200)
        #expect(try HTTPTestClient.exchange("GET", "/app.js", port: port).status == 401)
        #expect(try HTTPTestClient.exchange("GET", "/audio/x", port: port).status == 401)

        let origin = "http://127.0.0.1:\(port)"
        #expect(try HTTPTestClient(port: port).openWebSocket(port: port, origin: origin).status == 401)
        #expect(try HTTPTestClient(port: port).openWebSocket(port: port, origin: origin, extra: [wrong]).status == 401)
        let client = try HTTPTestClient(port: port)
        #expect(try client.openWebSocket(port: port, origin: origin, extra: [right]).status == 101)
        try client.sendText(#"{"jsonrpc":"2.0","id":1,"method":"player.status"}"#)
        #expect(try client.readMessage()["result"]?["state"]?.stringValue == "stopped")

        let wav = try Array(Data(contentsOf: URL(fileURLWithPath: daemon.tone("t.wav", seconds: 0.1))))
        #expect(try HTTPTestClient.exchange("POST", "/import?name=X", port: port, body: wav).status == 401)
        #expect(Self.audioFiles(daemon).isEmpty)
        #expect(try HTTPTestClient.exchange("POST", "/import?name=X", port: port, headers: [right], body: wav).status == 200)
    }

    // MARK: Audio

    @Test func aRecordingIsServedWholeOrInRanges() throws {
        let (daemon, port) = try Self.daemon()
        let tone = try daemon.tone("Été.wav", seconds: 1)
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: tone)))
        let item = try daemon.client().result("library.import", ["file": .string(tone)])
        let id = try #require(item["id"]?.stringValue)

        let whole = try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port)
        #expect(whole.status == 200)
        #expect(whole.body == bytes)
        #expect(whole.header("content-type") == "audio/wav")
        #expect(whole.header("accept-ranges") == "bytes")
        #expect(whole.header("content-disposition") == #"inline; filename="_t_.wav"; filename*=UTF-8''%C3%89t%C3%A9.wav"#)

        let start = try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port, headers: [("Range", "bytes=0-99")])
        #expect(start.status == 206)
        #expect(start.body == Array(bytes[0..<100]))
        #expect(start.header("content-range") == "bytes 0-99/\(bytes.count)")

        let open = try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port, headers: [("Range", "bytes=1000-")])
        #expect(open.status == 206)
        #expect(open.body == Array(bytes[1000...]))

        let suffix = try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port, headers: [("Range", "bytes=-10")])
        #expect(suffix.status == 206)
        #expect(suffix.body == Array(bytes.suffix(10)))
        #expect(suffix.header("content-range") == "bytes \(bytes.count - 10)-\(bytes.count - 1)/\(bytes.count)")

        let past = try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port, headers: [("Range", "bytes=\(bytes.count)-")])
        #expect(past.status == 416)
        #expect(past.header("content-range") == "bytes */\(bytes.count)")

        let download = try HTTPTestClient.exchange("HEAD", "/audio/\(id)?download=1", port: port)
        #expect(download.status == 200)
        #expect(download.header("content-length") == String(bytes.count))
        #expect(download.header("content-disposition")?.hasPrefix("attachment; ") == true)

        let etag = try #require(whole.header("etag"))
        #expect(try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port, headers: [("If-None-Match", etag)]).status == 304)

        // Only recordings of the library, by id.
        let unknown = try HTTPTestClient.exchange("GET", "/audio/01234567-89ab-7def-8123-456789abcdef", port: port)
        #expect(unknown.status == 404)
        #expect(unknown.reason == "not_found")
        #expect(try HTTPTestClient.exchange("GET", "/audio/..%2F..%2Freel.log", port: port).status == 404)
        #expect(try HTTPTestClient.exchange("GET", "/audio/00000000-0000-0000-0000-000000000000", port: port).status == 404)
    }

    // MARK: Uploads

    @Test func anUploadedWAVIsImportedIntoTheTree() throws {
        let (daemon, port) = try Self.daemon()
        let rpc = try daemon.client()
        _ = try rpc.result("library.createFolder", ["parentPath": "/", "name": "Talks"])
        let wav = try Array(Data(contentsOf: URL(fileURLWithPath: daemon.tone("t.wav", seconds: 0.5))))

        // A FormData, as a browser sends it: the name comes from the file's.
        let form = Self.multipart(file: wav, filename: "Réunion.wav")
        let posted = try HTTPTestClient.exchange(
            "POST", "/import?folderPath=%2FTalks", port: port,
            headers: [("Content-Type", form.contentType), ("Origin", "http://127.0.0.1:\(port)")], body: form.body)
        #expect(posted.status == 200)
        #expect(posted.json?["result"]?["path"]?.stringValue == "/Talks/Réunion")
        #expect(posted.json?["result"]?["format"]?["codec"]?.stringValue == "wav")

        // A raw body (fetch with a File) with its name in the query.
        let raw = try HTTPTestClient.exchange(
            "POST", "/import?folderPath=/Talks&name=Raw%20one", port: port, headers: [("Content-Type", "audio/wav")], body: wav)
        #expect(raw.status == 200)
        #expect(raw.json?["result"]?["path"]?.stringValue == "/Talks/Raw one")

        let listing = try rpc.result("library.list", ["path": "/Talks"])
        #expect(listing["items"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["Raw one", "Réunion"])
        let files = Self.audioFiles(daemon)
        #expect(files.count == 2)
        #expect(files.allSatisfy { $0.hasSuffix(".wav") && !$0.hasPrefix(".") })
        // The uploaded bytes are what is served back.
        let id = try #require(raw.json?["result"]?["id"]?.stringValue)
        #expect(try HTTPTestClient.exchange("GET", "/audio/\(id)", port: port).body == wav)

        // The same errors as library.import.
        let taken = try HTTPTestClient.exchange("POST", "/import?folderPath=/Talks&name=Raw%20one", port: port, body: wav)
        #expect(taken.status == 409)
        #expect(taken.reason == "name_taken")
        let nowhere = try HTTPTestClient.exchange("POST", "/import?folderPath=/Nowhere&name=X", port: port, body: wav)
        #expect(nowhere.status == 404)
        #expect(nowhere.reason == "not_found")
        #expect(nowhere.json?["error"]?["code"]?.intValue == -32000)
        #expect(Self.waitForAudioFiles(daemon, count: 2).count == 2)
    }

    @Test func aNonAudioUploadIsRefusedAndLeavesNothing() throws {
        let (daemon, port) = try Self.daemon()
        let text = Array("just some text, not audio\n".utf8) + [UInt8](repeating: 0x41, count: 10_000)
        let form = Self.multipart(file: text, filename: "notes.txt")
        let response = try HTTPTestClient.exchange(
            "POST", "/import", port: port, headers: [("Content-Type", form.contentType)], body: form.body)
        #expect(response.status == 415)
        #expect(response.reason == "unsupported_format")
        let message = response.json?["error"]?["message"]?.stringValue ?? ""
        #expect(message.contains("notes.txt"))
        #expect(!message.contains(".part"))
        #expect(Self.waitForAudioFiles(daemon, count: 0).isEmpty)
        let root = try daemon.client().result("library.list", [:])
        #expect(root["items"]?.arrayValue?.isEmpty == true)
    }

    @Test func anOversizedUploadIs413AndLeavesNothing() throws {
        let (daemon, port) = try Self.daemon(environment: ["REEL_HTTP_UPLOAD_LIMIT": "64K"])
        let big = [UInt8](repeating: 7, count: 200_000)

        // Announced by its length: refused before the body is read.
        let announced = try HTTPTestClient.exchange("POST", "/import?name=Big", port: port, body: big)
        #expect(announced.status == 413)
        #expect(announced.reason == "too_large")

        // Sent in chunks with no length: refused when it passes the limit.
        let client = try HTTPTestClient(port: port)
        var chunked: [UInt8] = []
        for start in stride(from: 0, to: big.count, by: 16_384) {
            let piece = big[start..<min(start + 16_384, big.count)]
            chunked += Array("\(String(piece.count, radix: 16))\r\n".utf8) + piece + [13, 10]
        }
        chunked += Array("0\r\n\r\n".utf8)
        try client.request("POST", "/import?name=Big", port: port, headers: [("Transfer-Encoding", "chunked")], body: chunked)
        let streamed = try client.readResponse()
        #expect(streamed.status == 413)
        #expect(streamed.header("connection") == "close")
        #expect(Self.waitForAudioFiles(daemon, count: 0).isEmpty)
    }

    @Test func aTruncatedUploadLeavesNothing() throws {
        let (daemon, port) = try Self.daemon()
        let wav = try Array(Data(contentsOf: URL(fileURLWithPath: daemon.tone("t.wav", seconds: 2))))
        do {
            let client = try HTTPTestClient(port: port)
            try client.request(
                "POST", "/import?name=Cut", port: port, headers: [("Content-Length", String(wav.count))],
                body: Array(wav[0..<(wav.count / 2)]))
            // The first half reaches the disk before the client goes away.
            let deadline = Date().addingTimeInterval(5)
            while !Self.audioFiles(daemon).contains(where: { $0.hasPrefix(".import-") }), Date() < deadline { usleep(10_000) }
            #expect(Self.audioFiles(daemon).contains { $0.hasPrefix(".import-") })
        }
        #expect(Self.waitForAudioFiles(daemon, count: 0).isEmpty)
        let root = try daemon.client().result("library.list", [:])
        #expect(root["items"]?.arrayValue?.isEmpty == true)
    }

    @Test func aTakenPortStopsTheDaemonNamingIt() throws {
        let (first, port) = try Self.daemon()
        let second = Process()
        second.executableURL = URL(fileURLWithPath: DaemonProcess.executable("reeld"))
        second.arguments = [
            "--socket", first.directory.appendingPathComponent("second.sock").path, "--data-dir",
            first.directory.appendingPathComponent("second").path, "--device", "null", "--http-listen", "127.0.0.1:\(port)",
        ]
        second.environment = [
            "REEL_CONFIG": "/dev/null", "REEL_MPD_LISTEN": "none", "HOME": first.directory.path,
        ]
        let errors = Pipe()
        second.standardError = errors
        second.standardOutput = FileHandle.nullDevice
        try second.run()
        let output = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        #expect(second.terminationStatus != 0)
        #expect(output.contains("cannot listen on 127.0.0.1:\(port)"))
        #expect(output.contains("Address already in use"))
    }

    @Test func anMP4sCoverPictureIsTheAlbumsCoverOnThePage() throws {
        let music = FileManager.default.temporaryDirectory.appendingPathComponent("reel-mp4-cover-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: music, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: music) }
        let source = music.appendingPathComponent(".source.wav").path
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", source, "synth", "1", "sine", "440"])
        // A PNG made by ffmpeg itself (a 16×16 red square), put in the MP4 as its covr atom.
        let cover = music.appendingPathComponent(".cover.png").path
        try TestTool.run("ffmpeg", ["-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=red:s=16x16", "-frames:v", "1", cover])
        let track = music.appendingPathComponent("01 Covered.m4a").path
        try TestTool.run("ffmpeg", [
            "-hide_banner", "-loglevel", "error", "-i", source, "-i", cover, "-map", "0", "-map", "1", "-c:a", "aac",
            "-c:v", "copy", "-disposition:v", "attached_pic", "-metadata", "album=Covered Album", "-metadata", "artist=Painter", track,
        ])
        let (daemon, port) = try Self.daemon(environment: ["REEL_MUSIC_DIRS": music.path])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        _ = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        let albums = try client.result("music.albums")["albums"]?.arrayValue ?? []
        #expect(albums.first?["hasCover"] == true, "\(albums)")
        let http = try HTTPTestClient(port: port)
        try http.request("GET", "/cover?album=Covered%20Album&artist=Painter", port: port)
        let response = try http.readResponse()
        #expect(response.status == 200)
        #expect(response.header("content-type") == "image/png")
        #expect(response.body == Array(try Data(contentsOf: URL(fileURLWithPath: cover))))
    }

}
