// reeld's settings: defaults, then the TOML file, then REEL_* variables, then flags.

import Logging
import ReelAudio
import ReelCore
import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Everything reeld can be told. Every key is documented, with its default, in `config/reeld.toml`.
public struct DaemonConfiguration: Equatable, Sendable {
    /// Unix socket path.
    public var socket: String
    /// Where the library, its audio files and the player's saved state live.
    public var dataDir: String
    /// ALSA playback PCM.
    public var device: String
    /// ALSA capture PCM.
    public var captureDevice: String
    public var logLevel: Logger.Level
    /// ALSA period and buffer of the playback device, in milliseconds. Long periods are cheap:
    /// the audio thread and PulseAudio's client thread wake once a period, and commands do not
    /// wait for a period's end (they wake the audio thread).
    public var periodMilliseconds: Int
    public var bufferMilliseconds: Int
    /// What to do at start with the player's saved source and position.
    public var resumeOnStart: ResumeOnStart = .paused
    /// Directories whose files clients may play or import; empty means any readable file.
    public var mediaRoots: [String] = []
    /// `music_dirs`: folders whose audio files reeld indexes where they lie, read-only, and
    /// always plays (in addition to `mediaRoots`).
    public var musicDirectories: [String] = []
    /// Format, rate and channels of a recording when `recorder.start` does not say.
    public var recording = RecordingDefaults()
    /// `record_flac_level`: libFLAC's compression level for FLAC takes (0–8).
    public var recordFLACLevel = SndFileWriter.defaultFLACLevel
    /// `mixer`, `mixer_device`, `mixer_control`, `volume_on_start`; `replaygain`,
    /// `replaygain_preamp`, `replaygain_missing_preamp`, `replaygain_limit`.
    public var mixer = MixerSettings()
    /// `mpd_listen`: where the MPD protocol is spoken; empty turns it off.
    public var mpdListen: [ListenAddress] = [.tcp(host: "127.0.0.1", port: 6600)]
    /// `mpd_password`: when set, MPD clients may run only what needs no permission until they
    /// send it.
    public var mpdPassword: String?
    /// `mpd_recordings_dir`: the top-level MPD directory that holds the recordings tree.
    public var mpdRecordingsDirectory = "Recordings"
    /// `playlist_dir`: where the stored playlists are (`NAME.m3u`, MPD's `playlist_directory`
    /// format); nil: `playlists` in the data directory.
    public var playlistDirectory: String?
    /// `http_listen`: where the web page, its WebSocket and the audio and upload routes are
    /// served (TCP `HOST:PORT` only); empty turns HTTP off.
    public var httpListen: [ListenAddress] = [.tcp(host: "127.0.0.1", port: 8480)]
    /// `http_password`: when set, every HTTP request (the page, `/rpc`, `/audio`, `/import`)
    /// needs it (Basic authentication).
    public var httpPassword: String?
    /// `http_upload_limit`: the largest file `POST /import` takes, in bytes (default 512 MiB).
    public var httpUploadLimit: Int64 = 512 << 20
    /// `stream_ca_file`: a PEM file of CAs that https streams may be signed by, besides the
    /// system's (a station with its own CA; the tests' CA).
    public var streamCAFile: String?
    /// `stream_buffer_seconds`: seconds of a stream kept (compressed) for pausing and seeking
    /// back, 0 to 3600 (default 300).
    public var streamBufferSeconds = 300
    /// `[[outputs]]`: the outputs in order (ids from 0). Empty: the ALSA device alone.
    public var outputs: [OutputConfiguration] = []

    /// `resume_on_start`: restore the last source paused (the default), playing, or not at all.
    public enum ResumeOnStart: String, Sendable, CaseIterable {
        case paused, playing, no
    }

    /// The defaults for a process with this environment and user id.
    public static func defaults(environment: [String: String], uid: UInt32) -> DaemonConfiguration {
        DaemonConfiguration(
            socket: SocketPath.defaultPath(environment: environment, uid: uid, forDaemon: true),
            dataDir: defaultDataDir(environment: environment, uid: uid),
            device: "default", captureDevice: "default", logLevel: .info,
            periodMilliseconds: defaultPeriodMilliseconds, bufferMilliseconds: defaultBufferMilliseconds)
    }

    static func defaultDataDir(environment: [String: String], uid: UInt32) -> String {
        if let state = environment["STATE_DIRECTORY"], !state.isEmpty {
            return String(state.split(separator: ":").first ?? Substring(state))
        }
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return data + "/reel" }
        if uid == 0 { return "/var/lib/reel" }
        if let home = environment["HOME"], !home.isEmpty { return home + "/.local/share/reel" }
        return "/tmp/reel-\(uid)/data"
    }

    /// The config file to read when none is named: `$XDG_CONFIG_HOME/reel/reeld.toml` (or
    /// `~/.config/reel/reeld.toml`), or `/etc/reel/reeld.toml` for root; nil if it does not exist.
    public static func defaultFile(environment: [String: String], uid: UInt32) -> String? {
        let candidate: String
        if uid == 0 {
            candidate = "/etc/reel/reeld.toml"
        } else if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            candidate = config + "/reel/reeld.toml"
        } else if let home = environment["HOME"], !home.isEmpty {
            candidate = home + "/.config/reel/reeld.toml"
        } else {
            return nil
        }
        return access(candidate, F_OK) == 0 ? candidate : nil
    }

    static let defaultPeriodMilliseconds = 500
    static let defaultBufferMilliseconds = 2000

    /// The playback device's period and buffer.
    public var timing: PCMTiming {
        PCMTiming(periodMicroseconds: periodMilliseconds * 1000, bufferMicroseconds: bufferMilliseconds * 1000)
    }

    /// The capture device's period and buffer: `PCMTiming.capture` while `period_ms` and
    /// `buffer_ms` are the defaults (long periods suit playback, whose commands wake its thread,
    /// not a recording that must stop promptly), else `timing.forCapture`.
    public var captureTiming: PCMTiming {
        periodMilliseconds == Self.defaultPeriodMilliseconds && bufferMilliseconds == Self.defaultBufferMilliseconds
            ? .capture : timing.forCapture
    }

    // MARK: Layers

    /// The keys a config file may hold, with the environment variable for each.
    static let keys: [(file: String, environment: String)] = [
        ("socket", "REEL_SOCKET"), ("data_dir", "REEL_DATA_DIR"), ("device", "REEL_DEVICE"),
        ("capture_device", "REEL_CAPTURE_DEVICE"), ("log_level", "REEL_LOG_LEVEL"),
        ("period_ms", "REEL_PERIOD_MS"), ("buffer_ms", "REEL_BUFFER_MS"),
        ("resume_on_start", "REEL_RESUME_ON_START"), ("media_roots", "REEL_MEDIA_ROOTS"), ("music_dirs", "REEL_MUSIC_DIRS"),
        ("record_format", "REEL_RECORD_FORMAT"), ("record_sample_rate", "REEL_RECORD_SAMPLE_RATE"),
        ("record_channels", "REEL_RECORD_CHANNELS"), ("capture_preroll", "REEL_CAPTURE_PREROLL"),
        ("record_flac_level", "REEL_RECORD_FLAC_LEVEL"), ("mixer", "REEL_MIXER"), ("mixer_device", "REEL_MIXER_DEVICE"),
        ("mixer_control", "REEL_MIXER_CONTROL"), ("volume_on_start", "REEL_VOLUME_ON_START"),
        ("replaygain", "REEL_REPLAYGAIN"), ("replaygain_preamp", "REEL_REPLAYGAIN_PREAMP"),
        ("replaygain_missing_preamp", "REEL_REPLAYGAIN_MISSING_PREAMP"), ("replaygain_limit", "REEL_REPLAYGAIN_LIMIT"),
        ("mpd_listen", "REEL_MPD_LISTEN"), ("mpd_password", "REEL_MPD_PASSWORD"),
        ("mpd_recordings_dir", "REEL_MPD_RECORDINGS_DIR"), ("playlist_dir", "REEL_PLAYLIST_DIR"),
        ("http_listen", "REEL_HTTP_LISTEN"),
        ("http_password", "REEL_HTTP_PASSWORD"), ("http_upload_limit", "REEL_HTTP_UPLOAD_LIMIT"),
        ("stream_ca_file", "REEL_STREAM_CA_FILE"), ("stream_buffer_seconds", "REEL_STREAM_BUFFER_SECONDS"),
    ]

    /// Applies a TOML config file's text. `source` names the file in errors.
    public mutating func apply(toml text: String, source: String) throws(ConfigurationError) {
        let document: ConfigDocument
        do {
            document = try ConfigFileParser.parse(text)
        } catch {
            throw ConfigurationError("\(source):\(error.description)")
        }
        if !document.tables.isEmpty {
            outputs = try Self.outputs(document.tables, source: source)
        }
        let known = Set(Self.keys.map(\.file))
        for entry in document.entries {
            let (key, value, line) = (entry.key, entry.value, entry.line)
            guard known.contains(key) else {
                throw ConfigurationError(
                    "\(source):\(line): unknown key \"\(key)\"; known keys: \(Self.keys.map(\.file).joined(separator: ", "))")
            }
            let text: String
            switch value {
            case .string(let string): text = string
            case .integer(let number): text = String(number)
            case .decimal(let number): text = number
            case .array(let elements) where key == "media_roots" || key == "music_dirs":
                var roots: [String] = []
                for element in elements {
                    guard case .string(let root) = element else {
                        throw ConfigurationError("\(source):\(line): \(key) must be an array of strings")
                    }
                    roots.append(root)
                }
                text = roots.joined(separator: ":")
            case .array(let elements) where key == "mpd_listen" || key == "http_listen":
                var addresses: [String] = []
                for element in elements {
                    guard case .string(let address) = element else {
                        throw ConfigurationError("\(source):\(line): \(key) must be an array of strings")
                    }
                    addresses.append(address)
                }
                text = addresses.isEmpty ? "none" : addresses.joined(separator: ",")
            case .boolean(let flag) where key == "replaygain_limit":
                text = flag ? "yes" : "no"
            default:
                throw ConfigurationError("\(source):\(line): \(key) must be a string or a number, not \(value.typeName)")
            }
            try set(key, text, source: "\(source):\(line): \(key)")
        }
    }

    /// The `[[outputs]]` tables: `type = "alsa"` (at most one: the `device`) or `type = "snapcast"` (a pipe)
    /// with `path` (absolute), `format` (`48000:16:2` by default) and `group` (the group the FIFO
    /// is given when reeld makes it); each with an optional `name` and `enabled` (true by
    /// default).
    static func outputs(_ tables: [ConfigTable], source: String) throws(ConfigurationError) -> [OutputConfiguration] {
        var outputs: [OutputConfiguration] = []
        for table in tables {
            let at = "\(source):\(table.line): [[\(table.name)]]"
            guard table.name == "outputs" else {
                throw ConfigurationError("\(at): unknown table; the only table reeld reads is [[outputs]]")
            }
            var values: [String: (value: ConfigValue, line: Int)] = [:]
            for entry in table.entries { values[entry.key] = (entry.value, entry.line) }
            func string(_ key: String) throws(ConfigurationError) -> String? {
                guard let found = values[key] else { return nil }
                guard case .string(let text) = found.value else {
                    throw ConfigurationError("\(source):\(found.line): \(key) must be a string, not \(found.value.typeName)")
                }
                return text
            }
            guard let type = try string("type") else {
                throw ConfigurationError("\(at): needs type = \"alsa\" or type = \"snapcast\"")
            }
            var enabled = true
            if let found = values["enabled"] {
                guard case .boolean(let flag) = found.value else {
                    throw ConfigurationError("\(source):\(found.line): enabled must be true or false")
                }
                enabled = flag
            }
            let allowed: Set<String>
            let kind: OutputKind
            switch type {
            case "alsa":
                allowed = ["type", "name", "enabled"]
                guard !outputs.contains(where: { $0.kind.name == "alsa" }) else {
                    throw ConfigurationError("\(at): there is one ALSA output (the device); it is already listed")
                }
                kind = .alsa(device: "")
            case "snapcast":
                allowed = ["type", "name", "enabled", "path", "format", "group"]
                guard let path = try string("path"), path.hasPrefix("/") else {
                    throw ConfigurationError("\(at): a snapcast output needs path = \"/absolute/path/of/the/fifo\"")
                }
                var format = OutputFormat.snapcastDefault
                if let text = try string("format") {
                    do throws(OutputFormatError) {
                        format = try OutputFormat(parsing: text)
                    } catch {
                        throw ConfigurationError("\(source):\(values["format"]!.line): \(error.message)")
                    }
                }
                kind = .pipe(path: path, format: format)
            default:
                throw ConfigurationError("\(at): type \"\(type)\" is not \"alsa\" or \"snapcast\"")
            }
            for entry in table.entries where !allowed.contains(entry.key) {
                throw ConfigurationError(
                    "\(source):\(entry.line): unknown key \"\(entry.key)\" for a \(type) output; known keys: \(allowed.sorted().joined(separator: ", "))")
            }
            let name = try string("name") ?? (type == "alsa" ? "" : "Snapcast \(outputs.count)")
            outputs.append(OutputConfiguration(name: name, kind: kind, enabled: enabled, group: try string("group")))
        }
        return outputs
    }

    /// The outputs with the ALSA one named after `device` (the config lists it without one).
    public var resolvedOutputs: [OutputConfiguration] {
        outputs.map { output in
            guard case .alsa = output.kind else { return output }
            var resolved = output
            resolved.kind = .alsa(device: device)
            if resolved.name.isEmpty { resolved.name = "ALSA (\(device))" }
            return resolved
        }
    }

    /// Applies `REEL_*` environment variables.
    public mutating func apply(environment: [String: String]) throws(ConfigurationError) {
        for (key, variable) in Self.keys {
            if let value = environment[variable], !value.isEmpty {
                try set(key, value, source: variable)
            }
        }
    }

    /// Sets one key from text; `source` says where the value came from, for errors.
    public mutating func set(_ key: String, _ value: String, source: String) throws(ConfigurationError) {
        func milliseconds() throws(ConfigurationError) -> Int {
            guard let number = Int(value), (1...10_000).contains(number) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a number of milliseconds from 1 to 10000")
            }
            return number
        }
        switch key {
        case "socket":
            guard value.hasPrefix("/") else { throw ConfigurationError("\(source): the socket path must be absolute, not \"\(value)\"") }
            socket = value
        case "data_dir":
            guard value.hasPrefix("/") else { throw ConfigurationError("\(source): the data directory must be absolute, not \"\(value)\"") }
            dataDir = value
        case "device": device = value
        case "capture_device": captureDevice = value
        case "log_level":
            guard let level = Logger.Level(rawValue: value.lowercased()) else {
                throw ConfigurationError(
                    "\(source): \"\(value)\" is not a log level; use trace, debug, info, notice, warning, error or critical")
            }
            logLevel = level
        case "media_roots":
            // A list separated by ":" (as in REEL_MEDIA_ROOTS); the file gives an array.
            let roots = value.split(separator: ":").map(String.init)
            for root in roots where !root.hasPrefix("/") {
                throw ConfigurationError("\(source): media root \"\(root)\" must be an absolute path")
            }
            mediaRoots = roots
        case "music_dirs":
            // A list separated by ":" (as in REEL_MUSIC_DIRS); the file gives an array.
            let directories = value.split(separator: ":").map(String.init)
            for directory in directories where !directory.hasPrefix("/") {
                throw ConfigurationError("\(source): music folder \"\(directory)\" must be an absolute path")
            }
            musicDirectories = directories
        case "resume_on_start":
            guard let choice = ResumeOnStart(rawValue: value) else {
                throw ConfigurationError("\(source): \"\(value)\" is not one of paused, playing, no")
            }
            resumeOnStart = choice
        case "record_format":
            guard Codecs.recordingFormats.contains(value) else {
                throw ConfigurationError(
                    "\(source): \"\(value)\" is not a recording format; use \(Codecs.recordingFormats.joined(separator: ", "))")
            }
            recording.codec = value
        case "record_sample_rate":
            guard let rate = Int(value), (8000...192_000).contains(rate) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a sample rate from 8000 to 192000 Hz")
            }
            recording.sampleRate = rate
        case "record_channels":
            guard let channels = Int(value), (1...8).contains(channels) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a channel count from 1 to 8")
            }
            recording.channels = channels
        case "capture_preroll":
            guard let seconds = Double(value), seconds.isFinite, (0...600).contains(seconds) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a number of seconds from 0 to 600")
            }
            recording.capturePreroll = seconds
        case "record_flac_level":
            guard let level = Int(value), (0...8).contains(level) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a FLAC compression level from 0 to 8")
            }
            recordFLACLevel = level
        case "mixer":
            guard let kind = MixerKind(rawValue: value) else {
                throw ConfigurationError("\(source): \"\(value)\" is not one of software, hardware, none")
            }
            mixer.kind = kind
        case "mixer_device":
            guard !value.isEmpty else { throw ConfigurationError("\(source): the mixer device cannot be empty") }
            mixer.device = value
        case "mixer_control":
            guard !value.isEmpty else { throw ConfigurationError("\(source): the mixer control cannot be empty") }
            mixer.control = value
        case "volume_on_start":
            if value == "last" {
                mixer.startVolume = .last
            } else if let level = Int(value), (0...100).contains(level) {
                mixer.startVolume = .level(level)
            } else {
                throw ConfigurationError("\(source): \"\(value)\" is not \"last\" or a volume from 0 to 100")
            }
        case "replaygain":
            guard let mode = ReplayGainMode(rawValue: value) else {
                throw ConfigurationError("\(source): \"\(value)\" is not one of off, track, album, auto")
            }
            mixer.replayGain.mode = mode
        case "replaygain_preamp", "replaygain_missing_preamp":
            // dB as a number (-3.5) or a string ("-3.5", as MPD writes it); MPD's range.
            guard let decibels = Double(value), decibels.isFinite, ReplayGainSettings.preampRange.contains(decibels) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a gain in dB from -15 to 15")
            }
            if key == "replaygain_preamp" {
                mixer.replayGain.preamp = decibels
            } else {
                mixer.replayGain.missingPreamp = decibels
            }
        case "replaygain_limit":
            switch value {
            case "yes", "true": mixer.replayGain.limit = true
            case "no", "false": mixer.replayGain.limit = false
            default: throw ConfigurationError("\(source): \"\(value)\" is not yes or no")
            }
        case "mpd_listen":
            // Comma-separated (as in REEL_MPD_LISTEN); `none` turns the MPD protocol off.
            mpdListen = try Self.addresses(value, source: source)
        case "mpd_password":
            guard !value.isEmpty, !value.contains(where: \.isNewline) else {
                throw ConfigurationError("\(source): the MPD password cannot be empty or contain a line break")
            }
            mpdPassword = value
        case "mpd_recordings_dir":
            guard !value.isEmpty, !value.contains("/"), value != ".", value != ".." else {
                throw ConfigurationError("\(source): \"\(value)\" is not a directory name (no \"/\", not empty)")
            }
            mpdRecordingsDirectory = value
        case "playlist_dir":
            guard value.hasPrefix("/") else {
                throw ConfigurationError("\(source): the playlist directory \"\(value)\" is not an absolute path")
            }
            playlistDirectory = value
        case "http_listen":
            // Comma-separated (as in REEL_HTTP_LISTEN); `none` turns HTTP off. TCP only: a
            // browser cannot reach a Unix socket.
            let addresses = try Self.addresses(value, source: source)
            for case .unix(let path) in addresses {
                throw ConfigurationError("\(source): \"\(path)\" is a socket path; HTTP listens on HOST:PORT only")
            }
            httpListen = addresses
        case "http_password":
            guard !value.isEmpty, !value.contains(where: \.isNewline) else {
                throw ConfigurationError("\(source): the HTTP password cannot be empty or contain a line break")
            }
            httpPassword = value
        case "http_upload_limit":
            guard let bytes = Self.byteCount(value), bytes > 0 else {
                throw ConfigurationError(
                    "\(source): \"\(value)\" is not a size; write bytes, or a number with K, M or G (e.g. 512M)")
            }
            httpUploadLimit = bytes
        case "stream_ca_file":
            guard value.hasPrefix("/") else {
                throw ConfigurationError("\(source): stream_ca_file must be an absolute path, not \"\(value)\"")
            }
            streamCAFile = value
        case "stream_buffer_seconds":
            guard let seconds = Int(value), (0...3600).contains(seconds) else {
                throw ConfigurationError("\(source): \"\(value)\" is not a whole number of seconds from 0 to 3600")
            }
            streamBufferSeconds = seconds
        case "period_ms": periodMilliseconds = try milliseconds()
        case "buffer_ms": bufferMilliseconds = try milliseconds()
        default:
            throw ConfigurationError("\(source): unknown setting \"\(key)\"")
        }
    }

    /// A comma-separated list of listen addresses; `none` is the empty list.
    static func addresses(_ value: String, source: String) throws(ConfigurationError) -> [ListenAddress] {
        if value == "none" { return [] }
        var addresses: [ListenAddress] = []
        for part in value.split(separator: ",") {
            do throws(ConfigurationError) {
                addresses.append(try ListenAddress(parsing: part.trimmingSpaces))
            } catch {
                throw ConfigurationError("\(source): \(error.description)")
            }
        }
        return addresses
    }

    /// `1048576`, `512K`, `512M`, `2G` (also `512MiB`, `512MB`: all powers of 1024); nil if not a size.
    static func byteCount(_ text: String) -> Int64? {
        var digits = Substring(Substring(text).trimmingSpaces)
        var unit = Substring("")
        if let first = digits.firstIndex(where: { !$0.isASCII || !$0.isNumber }) {
            unit = digits[first...]
            digits = digits[..<first]
        }
        guard let number = Int64(digits) else { return nil }
        let shift: Int64
        switch unit.uppercased() {
        case "", "B": shift = 0
        case "K", "KB", "KIB": shift = 10
        case "M", "MB", "MIB": shift = 20
        case "G", "GB", "GIB": shift = 30
        default: return nil
        }
        let (product, overflow) = number.multipliedReportingOverflow(by: 1 << shift)
        return overflow ? nil : product
    }

    /// Checks the settings against each other.
    public func validate() throws(ConfigurationError) {
        guard bufferMilliseconds >= 2 * periodMilliseconds else {
            throw ConfigurationError(
                "buffer_ms (\(bufferMilliseconds)) must be at least twice period_ms (\(periodMilliseconds))")
        }
        do throws(ReelError) {
            try SndFileWriter.check(
                codec: recording.codec,
                format: PCMFormat(sample: .s16, sampleRate: recording.sampleRate, channels: recording.channels))
        } catch {
            throw ConfigurationError("record_format, record_sample_rate and record_channels: \(error.message)")
        }
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        String(drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }
}

/// A setting that cannot be used, with where it came from.
public struct ConfigurationError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
