import Glibc
import Logging
import ReelAudio
import ReelModel
import Testing

@testable import ReelDaemon
import ReelCore

@Suite struct DaemonConfigurationTests {
    let environment = ["HOME": "/home/pi", "XDG_RUNTIME_DIR": "/run/user/1000"]

    @Test func defaultsNeedNoConfigFile() {
        let settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.socket == "/run/user/1000/reel/reel.sock")
        #expect(settings.dataDir == "/home/pi/.local/share/reel")
        #expect(settings.device == "default")
        #expect(settings.logLevel == .info)
    }

    @Test func systemdDirectoriesWin() {
        let settings = DaemonConfiguration.defaults(
            environment: ["RUNTIME_DIRECTORY": "/run/reel", "STATE_DIRECTORY": "/var/lib/reel"], uid: 64000)
        #expect(settings.socket == "/run/reel/reel.sock")
        #expect(settings.dataDir == "/var/lib/reel")
    }

    @Test func fileThenEnvironmentThenFlagsOverride() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.apply(
            toml: """
                device = "hw:1"
                capture_device = "hw:2"
                log_level = "debug"
                period_ms = 20
                buffer_ms = 100
                """, source: "reeld.toml")
        #expect(settings.device == "hw:1")
        #expect(settings.periodMilliseconds == 20)
        try settings.apply(environment: ["REEL_DEVICE": "plughw:CARD=Headphones", "REEL_LOG_LEVEL": "warning"])
        #expect(settings.device == "plughw:CARD=Headphones")
        #expect(settings.logLevel == .warning)
        #expect(settings.captureDevice == "hw:2")
        try settings.set("device", "null", source: "--device")
        #expect(settings.device == "null")
        try settings.validate()
    }

    @Test func playlistDirIsAnAbsolutePathFromTheFileOrTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.playlistDirectory == nil)
        try settings.apply(toml: "playlist_dir = \"/var/lib/mpd/playlists\"", source: "a.toml")
        #expect(settings.playlistDirectory == "/var/lib/mpd/playlists")
        try settings.apply(environment: ["REEL_PLAYLIST_DIR": "/srv/playlists"])
        #expect(settings.playlistDirectory == "/srv/playlists")
        do {
            try settings.apply(toml: "playlist_dir = \"playlists\"", source: "a.toml")
            Issue.record("a relative playlist_dir was accepted")
        } catch {
            #expect(error.description.contains("\"playlists\" is not an absolute path"))
        }
        #expect(settings.playlistDirectory == "/srv/playlists")
    }

    @Test func unknownKeyIsNamedWithTheKnownOnes() {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(throws: ConfigurationError.self) { try settings.apply(toml: "devcie = \"hw:1\"", source: "a.toml") }
        do {
            try settings.apply(toml: "devcie = \"hw:1\"", source: "a.toml")
        } catch {
            #expect(error.description.contains("a.toml:1: unknown key \"devcie\""))
            #expect(error.description.contains("device"))
        }
    }

    @Test func syntaxErrorNamesTheFileAndLine() {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        do {
            try settings.apply(toml: "device = \"hw:1\"\nperiod_ms = = 3\n", source: "b.toml")
            Issue.record("a broken file was accepted")
        } catch {
            #expect(error.description.hasPrefix("b.toml:2:"))
        }
    }

    @Test(arguments: [
        ("log_level", "loud", "is not a log level"),
        ("period_ms", "0", "is not a number of milliseconds"),
        ("period_ms", "abc", "is not a number of milliseconds"),
        ("socket", "relative.sock", "must be absolute"),
        ("data_dir", "data", "must be absolute"),
    ])
    func badValuesAreRefusedWithTheirSource(key: String, value: String, message: String) {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        do {
            try settings.set(key, value, source: "REEL_TEST")
            Issue.record("\(key)=\(value) was accepted")
        } catch {
            #expect(error.description.hasPrefix("REEL_TEST: "))
            #expect(error.description.contains(message))
        }
    }

    @Test func musicFoldersComeFromAnArrayOrTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.musicDirectories.isEmpty)
        try settings.apply(toml: "music_dirs = [\"/home/pi/Music\", '/media/usb']", source: "c.toml")
        #expect(settings.musicDirectories == ["/home/pi/Music", "/media/usb"])
        try settings.apply(environment: ["REEL_MUSIC_DIRS": "/srv/a:/srv/b"])
        #expect(settings.musicDirectories == ["/srv/a", "/srv/b"])
        #expect(throws: ConfigurationError.self) { try settings.apply(toml: "music_dirs = [\"Music\"]", source: "c.toml") }
        #expect(throws: ConfigurationError.self) { try settings.apply(toml: "music_dirs = [true]", source: "c.toml") }
    }

    @Test func mediaRootsComeFromAnArrayOrTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.apply(toml: "media_roots = [\"/srv/music\", '/home/pi/Music']", source: "c.toml")
        #expect(settings.mediaRoots == ["/srv/music", "/home/pi/Music"])
        try settings.apply(environment: ["REEL_MEDIA_ROOTS": "/mnt/a:/mnt/b"])
        #expect(settings.mediaRoots == ["/mnt/a", "/mnt/b"])
        #expect(throws: ConfigurationError.self) { try settings.apply(toml: "media_roots = [1]", source: "c.toml") }
        #expect(throws: ConfigurationError.self) { try settings.apply(toml: "media_roots = [\"music\"]", source: "c.toml") }
        try settings.set("resume_on_start", "playing", source: "test")
        #expect(settings.resumeOnStart == .playing)
        #expect(throws: ConfigurationError.self) { try settings.set("resume_on_start", "maybe", source: "test") }
    }

    @Test func outputsAreAnArrayOfTables() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.apply(
            toml: """
                device = "hw:1"
                [[outputs]]
                type = "alsa"
                enabled = false

                [[outputs]]
                type = "snapcast"
                name = "Snapcast"
                path = "/run/reel/snapfifo"
                format = "44100:24:2"

                [[outputs]]
                type = "snapcast"
                path = "/run/reel/second"
                """, source: "o.toml")
        #expect(settings.device == "hw:1")
        #expect(
            settings.resolvedOutputs == [
                OutputConfiguration(name: "ALSA (hw:1)", kind: .alsa(device: "hw:1"), enabled: false),
                OutputConfiguration(
                    name: "Snapcast",
                    kind: .pipe(path: "/run/reel/snapfifo", format: OutputFormat(sampleRate: 44100, bits: 24, channels: 2))),
                OutputConfiguration(name: "Snapcast 2", kind: .pipe(path: "/run/reel/second", format: .snapcastDefault)),
            ])
    }

    @Test(arguments: [
        ("[[outputs]]\npath = \"/x\"", "o.toml:1: [[outputs]]: needs type"),
        ("[[outputs]]\ntype = \"snapcast\"", "o.toml:1: [[outputs]]: a snapcast output needs path"),
        ("[[outputs]]\ntype = \"snapcast\"\npath = \"relative\"", "a snapcast output needs path = \"/absolute"),
        ("[[outputs]]\ntype = \"snapcast\"\npath = \"/x\"\nformat = \"48000:20:2\"", "o.toml:4: format \"48000:20:2\": bits must be 16, 24 or 32"),
        ("[[outputs]]\ntype = \"snapcast\"\npath = \"/x\"\nformat = \"48000:16:6\"", "channels must be 1, 2, 4 or 8"),
        ("[[outputs]]\ntype = \"snapcast\"\npath = \"/x\"\nformat = \"fast\"", "is not RATE:BITS:CHANNELS"),
        ("[[outputs]]\ntype = \"snapcast\"\npath = \"/x\"\ndevice = \"hw:1\"", "o.toml:4: unknown key \"device\" for a snapcast output"),
        ("[[outputs]]\ntype = \"alsa\"\n[[outputs]]\ntype = \"alsa\"", "o.toml:3: [[outputs]]: there is one ALSA output"),
        ("[[outputs]]\ntype = \"httpd\"", "type \"httpd\" is not \"alsa\" or \"snapcast\""),
        ("[[outputs]]\ntype = \"alsa\"\nenabled = \"yes\"", "o.toml:3: enabled must be true or false"),
        ("[[players]]\ntype = \"alsa\"", "o.toml:1: [[players]]: unknown table"),
    ])
    func badOutputsSayWhatIsWrong(text: String, message: String) {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        do {
            try settings.apply(toml: text, source: "o.toml")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.description.contains(message), "\(error)")
        }
    }

    @Test func bufferMustHoldTwoPeriods() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.set("period_ms", "100", source: "test")
        try settings.set("buffer_ms", "150", source: "test")
        #expect(throws: ConfigurationError.self) { try settings.validate() }
    }

    @Test func documentedConfigFileParsesToTheDefaults() throws {
        let path = #filePath.replacingOccurrences(of: "Tests/ReelDaemonTests/DaemonConfigurationTests.swift", with: "config/reeld.toml")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let defaults = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        var settings = defaults
        try settings.apply(toml: text, source: path)
        #expect(settings == defaults)
    }

    @Test func documentedOutputsExampleParses() throws {
        let path = #filePath.replacingOccurrences(of: "Tests/ReelDaemonTests/DaemonConfigurationTests.swift", with: "config/reeld.toml")
        let text = try String(contentsOfFile: path, encoding: .utf8)
        // The commented example at the end: from its first "# [[outputs]]" line, uncommented.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0 == "# [[outputs]]" })
        let example = lines[start...].map { $0.hasPrefix("# ") ? String($0.dropFirst(2)) : String($0.dropFirst()) }
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.apply(toml: example.joined(separator: "\n"), source: path)
        #expect(settings.resolvedOutputs.map(\.name) == ["Living room", "Snapcast"])
        #expect(settings.resolvedOutputs[1].kind == .pipe(path: "/run/reel/snapfifo", format: .snapcastDefault))
        #expect(settings.resolvedOutputs[1].group == "audio")
    }

    @Test func recordingDefaultsComeFromTheFileAndTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.recording == RecordingDefaults(codec: "flac", sampleRate: 48000, channels: 1))
        try settings.apply(toml: "record_format = \"wav\"\nrecord_sample_rate = 44100\nrecord_channels = 2", source: "a.toml")
        #expect(settings.recording == RecordingDefaults(codec: "wav", sampleRate: 44100, channels: 2))
        try settings.apply(environment: ["REEL_RECORD_FORMAT": "opus", "REEL_RECORD_SAMPLE_RATE": "16000"])
        #expect(settings.recording == RecordingDefaults(codec: "opus", sampleRate: 16000, channels: 2))
        try settings.validate()
    }

    @Test func theFLACCompressionLevelComesFromTheFileAndTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.recordFLACLevel == 1)
        try settings.apply(toml: "record_flac_level = 5", source: "a.toml")
        #expect(settings.recordFLACLevel == 5)
        try settings.apply(environment: ["REEL_RECORD_FLAC_LEVEL": "0"])
        #expect(settings.recordFLACLevel == 0)
        #expect(throws: ConfigurationError("x.toml: \"9\" is not a FLAC compression level from 0 to 8")) {
            try settings.set("record_flac_level", "9", source: "x.toml")
        }
        #expect(settings.recordFLACLevel == 0, "a bad value changes nothing")
    }

    @Test func badRecordingSettingsAreNamed() {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(throws: ConfigurationError.self) { try settings.set("record_format", "mp3", source: "REEL_RECORD_FORMAT") }
        #expect(throws: ConfigurationError.self) { try settings.set("record_sample_rate", "7", source: "x") }
        #expect(throws: ConfigurationError.self) { try settings.set("record_channels", "0", source: "x") }
        // Opus at 44.1 kHz is refused when the settings are checked together, not at the first recording.
        settings.recording = RecordingDefaults(codec: "opus", sampleRate: 44100, channels: 1)
        do {
            try settings.validate()
            Issue.record("opus at 44100 Hz was accepted")
        } catch {
            #expect(error.description.contains("44100"))
        }
    }

    @Test func captureTimingIsAtLeastAQuarterOfASecond() {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.captureTiming == PCMTiming.capture)
        #expect(settings.captureTiming.periodMicroseconds == 250_000)
        #expect(settings.captureTiming.bufferMicroseconds == 1_000_000)
        // A configured period shorter than capture's own is raised to it, with four periods buffered.
        settings.periodMilliseconds = 200
        settings.bufferMilliseconds = 400
        #expect(settings.captureTiming.periodMicroseconds == 250_000)
        #expect(settings.captureTiming.bufferMicroseconds == 1_000_000)
        // A longer one is kept, and its buffer holds at least four of them.
        settings.periodMilliseconds = 400
        settings.bufferMilliseconds = 800
        #expect(settings.captureTiming.periodMicroseconds == 400_000)
        #expect(settings.captureTiming.bufferMicroseconds == 1_600_000)
        settings.periodMilliseconds = 50
        settings.bufferMilliseconds = 250
        #expect(settings.captureTiming.periodMicroseconds == 250_000)
    }

    @Test func theDefaultRecordingNameIsTheLocalTime() {
        var parts = tm()
        parts.tm_year = 2026 - 1900
        parts.tm_mon = 10
        parts.tm_mday = 22
        parts.tm_hour = 14
        parts.tm_min = 3
        parts.tm_sec = 5
        parts.tm_isdst = -1
        let seconds = mktime(&parts)
        #expect(RecorderController.defaultName(at: seconds) == "Recording 2026-11-22 14.03.05")
    }
}

@Suite struct HTTPConfigurationTests {
    let defaults = DaemonConfiguration.defaults(environment: ["HOME": "/home/pi"], uid: 1000)

    @Test func httpListensOnLocalhost8480ByDefault() {
        #expect(defaults.httpListen == [.tcp(host: "127.0.0.1", port: 8480)])
        #expect(defaults.httpPassword == nil)
        #expect(defaults.httpUploadLimit == 512 * 1024 * 1024)
    }

    @Test func httpListenComesFromTheFileTheEnvironmentAndFlags() throws {
        var settings = defaults
        try settings.apply(toml: #"http_listen = ["0.0.0.0:8480", "[::]:8481"]"#, source: "reeld.toml")
        #expect(settings.httpListen == [.tcp(host: "0.0.0.0", port: 8480), .tcp(host: "::", port: 8481)])
        try settings.apply(environment: ["REEL_HTTP_LISTEN": "127.0.0.1:9000, localhost:9001"])
        #expect(settings.httpListen == [.tcp(host: "127.0.0.1", port: 9000), .tcp(host: "localhost", port: 9001)])
        try settings.set("http_listen", "none", source: "--http-listen")
        #expect(settings.httpListen.isEmpty)
        try settings.apply(toml: "http_listen = []", source: "reeld.toml")
        #expect(settings.httpListen.isEmpty)
    }

    @Test func httpListenRefusesSocketPathsAndBadAddresses() {
        var settings = defaults
        for bad in ["/run/reel/http.sock", "8480", "localhost:0", "localhost:65536", ":8480"] {
            #expect(throws: ConfigurationError.self, "\(bad)") { try settings.set("http_listen", bad, source: "test") }
        }
    }

    @Test func thePasswordAndUploadLimitAreRead() throws {
        var settings = defaults
        try settings.apply(environment: ["REEL_HTTP_PASSWORD": "sécret", "REEL_HTTP_UPLOAD_LIMIT": "64M"])
        #expect(settings.httpPassword == "sécret")
        #expect(settings.httpUploadLimit == 64 << 20)
        try settings.apply(toml: "http_upload_limit = 1000", source: "reeld.toml")
        #expect(settings.httpUploadLimit == 1000)
        #expect(throws: ConfigurationError.self) { try settings.set("http_password", "", source: "test") }
    }

    static let sizes: [(String, Int64)] = [
        ("1048576", 1_048_576), ("512K", 524_288), ("512k", 524_288), ("512KiB", 524_288),
        ("512M", 536_870_912), ("512MB", 536_870_912), ("2G", 2_147_483_648), ("2GiB", 2_147_483_648), ("7B", 7),
        (" 3M ", 3_145_728),
    ]

    @Test(arguments: sizes)
    func uploadLimitsTakeBinarySuffixes(text: String, bytes: Int64) {
        #expect(DaemonConfiguration.byteCount(text) == bytes)
    }

    @Test(arguments: ["", "M", "-1M", "1.5G", "12X", "1 0M", "99999999999G"])
    func badUploadLimitsAreRefused(text: String) {
        var settings = defaults
        #expect(throws: ConfigurationError.self) { try settings.set("http_upload_limit", text, source: "test") }
    }
}
