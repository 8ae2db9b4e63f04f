import ReelModel
import Testing
@testable import ReelProtocol

@Suite("Model JSON")
struct ModelJSONTests {
    static let states: [PlayerState] = [
        .stopped,
        PlayerState(state: .playing, position: 12.5, duration: 300, source: .file(path: "/abs/file.flac"),
                    format: AudioFormat(codec: "flac", sampleRate: 44100, channels: 2), timestamp: 1234.5678, underruns: 2),
        PlayerState(state: .paused, position: 0.25, duration: 61.0,
                    source: .item(id: "0b9f7f0e-1111-4c1e-9a55-2b8e4b0c1f3a", path: "/Meetings/Standup", name: "Standup"),
                    format: AudioFormat(codec: "opus", sampleRate: 48000, channels: 1), timestamp: 3,
                    error: ReelError(.deviceUnavailable, "the device hw:1,0 disappeared")),
        PlayerState(state: .playing, position: 1, duration: 3598.4, source: .file(path: "/abs/long.mp3"), entry: 7,
                    format: AudioFormat(codec: "mp3", sampleRate: 44100, channels: 2), timestamp: 9, durationEstimated: true),
        PlayerState(state: .playing, position: 2, duration: 60, source: .file(path: "/abs/hires.m4a"), entry: 8,
                    format: AudioFormat(codec: "alac", sampleRate: 96000, channels: 2), timestamp: 10,
                    output: OutputFormat(sampleRate: 96000, bits: 32, channels: 2), gain: -7.25),
        {
            var sleeping = PlayerState(state: .playing, position: 3, source: .file(path: "/abs/night.flac"), timestamp: 11)
            sleeping.sleepAt = 1_796_083_200  // a sleep timer: ISO-8601 on the wire, the same instant back
            return sleeping
        }(),
        Self.station,
    ]

    /// A URL source playing: live, with its connection's state.
    static let station: PlayerState = {
        var state = PlayerState(
            state: .playing, position: 12, source: .url("http://radio.example/live.mp3", name: "Radio \"One\"", title: nil),
            entry: 9, format: AudioFormat(codec: "mp3", sampleRate: 44100, channels: 2), timestamp: 11)
        state.live = true
        state.stream = StreamStatus(state: .reconnecting, bitrate: 128, buffered: 2.5, reconnects: 3)
        return state
    }()

    @Test(arguments: states)
    func playerStateRoundTrips(state: PlayerState) throws {
        let line = state.json.jsonBytes
        #expect(try PlayerState(json: try JSONValue.parse(line)) == state)
    }

    /// `player.status` writes its text directly; it must be byte for byte what the tree gives,
    /// with escapes, an entry, non-finite numbers and every optional member set and unset.
    @Test(arguments: states + [
        PlayerState(state: .playing, position: .nan, duration: .infinity, source: .file(path: "/a \"b\"\\c\n.wav"),
                    entry: 42, format: AudioFormat(codec: "mp3", sampleRate: 22050, channels: 2),
                    timestamp: 1e16, underruns: -1, error: ReelError(.corruptFile, "bad \u{1} byte: \"x\"")),
        PlayerState(state: .stopped, position: 0.1, duration: nil, source: .item(id: "i\"d", path: "/Ä/ö", name: "名前"),
                    entry: 0, timestamp: 2.5e-07),
    ])
    func playerStateTextIsTheTreesText(state: PlayerState) {
        #expect(state.jsonText.bytes == state.json.jsonBytes)
        #expect(state.jsonText == JSONText(state.json))
    }

    @Test func playerStateHasTheProtocolShape() {
        #expect(PlayerState.stopped.json.jsonString
            == #"{"state":"stopped","position":0.0,"duration":null,"durationEstimated":false,"source":null,"entry":null,"format":null,"output":null,"gain":null,"timestamp":0.0,"underruns":0,"error":null,"live":false,"stream":null,"sleepAt":null}"#)
        let item = Self.states[2].json
        #expect(item["source"] == ["item": "0b9f7f0e-1111-4c1e-9a55-2b8e4b0c1f3a", "path": "/Meetings/Standup", "name": "Standup"])
        #expect(item["format"] == ["codec": "opus", "sampleRate": 48000, "channels": 1])
        #expect(item["error"] == ["reason": "device_unavailable", "message": "the device hw:1,0 disappeared"])
        #expect(Self.states[1].json["source"] == ["path": "/abs/file.flac"])
        #expect(item.objectValue?.keys == ["state", "position", "duration", "durationEstimated", "source", "entry", "format", "output", "gain", "timestamp", "underruns", "error", "live", "stream", "sleepAt"])
        let station = Self.station.json
        #expect(station["source"] == ["url": "http://radio.example/live.mp3", "name": "Radio \"One\"", "title": .null])
        #expect(station["live"] == true)
        #expect(station["stream"] == ["state": "reconnecting", "bitrate": 128, "buffered": 2.5, "reconnects": 3])
        #expect(Self.states[3].json["durationEstimated"] == true)
        #expect(Self.states[4].json["output"] == ["sampleRate": 96000, "bits": 32, "channels": 2])
        #expect(Self.states[4].json["gain"] == .double(-7.25))
        #expect(Self.states[5].json["sleepAt"]?.stringValue.flatMap(CivilTime.instant(iso8601:)) == 1_796_083_200)
    }

    /// A queue entry says `durationEstimated` only while its duration is an estimate.
    @Test func queueEntryCarriesDurationEstimatedOnlyWhenSet() throws {
        let estimated = QueueEntry(
            id: 3, position: 1, source: .file(path: "/m/long.mp3"), duration: 3598.4,
            format: AudioFormat(codec: "mp3", sampleRate: 44100, channels: 2), durationEstimated: true)
        #expect(estimated.json["durationEstimated"] == true)
        #expect(try QueueEntry(json: try JSONValue.parse(estimated.json.jsonBytes)) == estimated)
        var exact = estimated
        exact.durationEstimated = false
        #expect(exact.json.objectValue?.keys == ["id", "position", "source", "duration", "format"])
        #expect(try QueueEntry(json: try JSONValue.parse(exact.json.jsonBytes)) == exact)
    }

    @Test func decodesAPushedStateWithItsSubscriptionAndIntegers() throws {
        let text = #"{"subscription":3,"state":"playing","position":12,"duration":300,"source":{"path":"/a.wav"},"format":null,"timestamp":5}"#
        let state = try PlayerState(json: try parse(text))
        #expect(state == PlayerState(state: .playing, position: 12, duration: 300, source: .file(path: "/a.wav"), timestamp: 5))
    }

    @Test func rejectsMalformedPlayerStates() {
        let cases: [(String, String)] = [
            (#"[]"#, "PlayerState must be an object, not an array"),
            (#"{"state":"bogus","position":0,"duration":null,"source":null,"format":null,"timestamp":0}"#,
             #"PlayerState.state must be "stopped", "playing" or "paused", not "bogus""#),
            (#"{"state":"paused","position":"0","duration":null,"source":null,"format":null,"timestamp":0}"#,
             "PlayerState.position must be a number, not a string"),
            (#"{"state":"paused","duration":null,"source":null,"format":null,"timestamp":0}"#, "PlayerState.position is missing"),
            (#"{"state":"paused","position":0,"duration":"x","source":null,"format":null,"timestamp":0}"#,
             "PlayerState.duration must be a number or null, not a string"),
            (#"{"state":"paused","position":0,"duration":null,"source":{},"format":null,"timestamp":0}"#, "source.path is missing"),
            (#"{"state":"paused","position":0,"duration":null,"source":{"item":"u","path":"/p"},"format":null,"timestamp":0}"#,
             "source.name is missing"),
            (#"{"state":"paused","position":0,"duration":null,"source":null,"format":{"codec":"flac","sampleRate":44100.5,"channels":2},"timestamp":0}"#,
             "format.sampleRate must be an integer, not a number"),
            (#"{"state":"paused","position":0,"duration":null,"source":null,"format":null,"timestamp":0,"error":{"reason":"nope","message":"m"}}"#,
             #"error.reason "nope" is not a known reason"#),
            (#"{"state":"paused","position":0,"duration":null,"source":null,"format":null,"timestamp":0,"underruns":"3"}"#,
             "PlayerState.underruns must be an integer, not a string"),
            (#"{"state":"paused","position":0,"duration":9,"durationEstimated":1,"source":null,"format":null,"timestamp":0}"#,
             "PlayerState.durationEstimated must be a boolean, not a number"),
        ]
        for (text, expected) in cases {
            do {
                _ = try PlayerState(json: try parse(text))
                Issue.record("accepted \(text)")
            } catch let error as JSONDecodingError {
                #expect(error.message == expected)
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func reelErrorRoundTrips() throws {
        for reason in ErrorReason.allCases {
            let error = ReelError(reason, "why")
            #expect(try ReelError(json: error.json) == error)
        }
    }

    @Test func daemonInfoRoundTripsWithProtocolKey() throws {
        let info = DaemonInfo(version: "1.0.0", device: "default", captureDevice: "hw:1,0", dataDir: "/var/lib/reel",
                              uptime: 12.5, formats: ["flac", "wav"],
                              decoders: [CodecDescription(name: "flac", suffixes: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"]),
                                         CodecDescription(name: "wav", suffixes: ["wav", "wave"], mimeTypes: ["audio/wav"])],
                              listeners: [.init(protocolName: "json-rpc", address: "/run/reel/reel.sock"),
                                          .init(protocolName: "mpd", address: "127.0.0.1:6600")])
        let json = info.json
        #expect(json["protocol"] == .int(3))
        #expect(json.objectValue?.keys == ["version", "protocol", "device", "captureDevice", "dataDir", "uptime", "formats", "decoders", "listeners", "urlSchemes"])
        #expect(json["decoders"]?.arrayValue?.first?["suffixes"] == ["flac"])
        #expect(try DaemonInfo(json: try JSONValue.parse(json.jsonBytes)) == info)
    }

    @Test func daemonInfoRejectsMalformedDecoders() {
        let json: JSONValue = [
            "version": "1", "protocol": 1, "device": "d", "captureDevice": "c", "dataDir": "/", "uptime": 1,
            "decoders": [["name": "flac", "suffixes": ["flac", 2], "mimeTypes": []]],
        ]
        #expect(throws: JSONDecodingError("decoder.suffixes must be an array of strings, not an array")) { try DaemonInfo(json: json) }
    }

    @Test func daemonInfoRejectsMalformedFormats() {
        let json: JSONValue = ["version": "1", "protocol": 1, "device": "d", "captureDevice": "c", "dataDir": "/", "uptime": 1, "formats": [1]]
        #expect(throws: JSONDecodingError("daemon.info.formats must be an array of strings, not an array")) { try DaemonInfo(json: json) }
    }

    static let recorderStates: [RecorderState] = [
        .idle,
        RecorderState(
            state: .recording,
            item: Item(
                id: "01a20335-b4a4-7a7d-b186-cd16122f3a01", kind: .recording, name: "idea",
                parent: "01a20335-b495-710a-ae76-5b48cf27528b", path: "/Notes/idea", created: "2026-11-22T12:23:01Z",
                duration: 5, format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 1), size: 220),
            elapsed: 5.5, peak: -6.02, rms: -9.03, format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 1),
            overruns: 1),
        RecorderState(state: .idle, elapsed: 2.6, error: ReelError(.diskFull, "the disk holding /x.wav is full")),
        RecorderState(
            state: .armed, elapsed: 12, peak: -50, rms: -60, format: AudioFormat(codec: "opus", sampleRate: 48000, channels: 2),
            series: RecorderSeries(takes: 3, started: "2026-11-27T18:00:00Z"),
            disk: RecorderDisk(freeBytes: 1_000_000, secondsLeft: 62.5), threshold: -40),
    ]

    @Test(arguments: recorderStates)
    func recorderStateRoundTrips(state: RecorderState) throws {
        #expect(try RecorderState(json: try JSONValue.parse(state.json.jsonBytes)) == state)
    }

    @Test func recorderStateHasTheProtocolShape() {
        #expect(RecorderState.idle.json.jsonString
            == #"{"state":"idle","item":null,"elapsed":0.0,"peak":null,"rms":null,"format":null,"overruns":0,"error":null,"series":null,"disk":null,"threshold":null}"#)
        #expect(Self.recorderStates[3].json["series"] == ["takes": 3, "started": "2026-11-27T18:00:00Z"])
        #expect(Self.recorderStates[3].json["disk"] == ["freeBytes": 1_000_000, "secondsLeft": 62.5])
        #expect(Self.recorderStates[2].json["error"] == ["reason": "disk_full", "message": "the disk holding /x.wav is full"])
        #expect(throws: JSONDecodingError.self) { try RecorderState(json: ["state": "paused", "elapsed": 0]) }
    }

    @Test func aRecordingsMarksHaveTheProtocolShapeAndRoundTrip() throws {
        let item = Item(
            id: "r", kind: .recording, name: "idea", parent: "f", path: "/idea", created: "2026-11-22T12:23:01Z",
            duration: 30, format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 1), size: 10,
            marks: [Mark(frame: 600_000, label: "Chorus", sampleRate: 48000), Mark(frame: 24, label: nil, sampleRate: 48000)])
        #expect(item.json["marks"] == [["at": 12.5, "frame": 600_000, "label": "Chorus"], ["at": 0.0005, "frame": 24, "label": .null]])
        #expect(try Item(json: item.json) == item)
        var plain = item
        plain.marks = nil
        #expect(plain.json["marks"] == nil, "an item read in a listing has no marks member")
        var broken = item.jsonObject
        broken["marks"] = "x"
        #expect(throws: JSONDecodingError.self) { try Item(json: .object(broken)) }
    }
}
