// Writing to stdout/stderr (unbuffered write(2), so every line is out at once) and the human
// forms of the daemon's values.

import ReelModel
import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum Output {
    /// Writes `text` to `descriptor`, all of it (retrying short writes); errors are ignored.
    static func write(_ text: String, to descriptor: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { buffer in
                #if canImport(Glibc)
                Glibc.write(descriptor, buffer.baseAddress, buffer.count)
                #else
                Darwin.write(descriptor, buffer.baseAddress, buffer.count)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                return
            }
            offset += written
        }
    }

    /// `line` and a newline on stdout.
    static func line(_ line: String) { write(line + "\n", to: 1) }

    /// `message` on stderr, with a newline unless it has one.
    static func error(_ message: String) {
        write(message.hasSuffix("\n") ? message : message + "\n", to: 2)
    }

    // MARK: Player

    /// `0:42 / 3:10`, `0:42 / ~3:10` while the duration is an estimate, or `0:42` when the
    /// duration is unknown.
    static func times(_ state: PlayerState) -> String {
        let position = formatSeconds(state.position)
        guard let duration = state.duration else { return position }
        return "\(position) / \(length(duration, estimated: state.durationEstimated))"
    }

    /// `3:10`, or `~3:10` for an estimate.
    static func length(_ seconds: Double, estimated: Bool) -> String {
        (estimated ? "~" : "") + formatSeconds(seconds)
    }

    /// The path of what is loaded.
    static func sourcePath(_ source: PlayerSource) -> String {
        switch source {
        case .file(let path): path
        case .item(_, let path, _): path
        case .url(let url, _, _): url
        }
    }

    /// A stream's station and what is on air, `Station — Title` (either alone when the other
    /// is not known); nil for a file, or a stream that has said neither.
    static func onAir(_ source: PlayerSource) -> String? {
        guard case .url(_, let name, let title) = source else { return nil }
        let parts = [name, title].compactMap { $0 }.filter { !$0.isEmpty }
        return parts.isEmpty ? nil : parts.joined(separator: " — ")
    }

    /// `(flac 44100 Hz 2 ch)`.
    static func formatText(_ format: AudioFormat) -> String {
        "(\(format.codec) \(format.sampleRate) Hz \(format.channels) ch)"
    }

    /// `playing  0:42 / 3:10  /path/file.flac  (flac 44100 Hz 2 ch)`; just `stopped` when
    /// nothing is loaded. Positions are whole seconds, so the text changes once a second.
    static func statusLine(_ state: PlayerState) -> String {
        var parts = [state.state.rawValue]
        if state.source != nil || state.duration != nil || state.position > 0 { parts.append(times(state)) }
        if let source = state.source { parts.append(sourcePath(source)) }
        if let source = state.source, let onAir = onAir(source) { parts.append(onAir) }
        if let stream = state.stream, stream.state != .playing { parts.append("[\(stream.state.rawValue)]") }
        if let format = state.format { parts.append(formatText(format)) }
        return parts.joined(separator: "  ")
    }

    /// What a command did, in a short line: `paused at 0:42 / 3:10`, `stopped`.
    static func summary(_ state: PlayerState, naming source: Bool = false) -> String {
        var text: String
        switch state.state {
        case .stopped:
            text = "stopped"
        case .playing, .paused:
            text = state.state.rawValue
            if source, let loaded = state.source { text += " \(sourcePath(loaded))" }
            text += " at \(times(state))"
        }
        if let error = state.error { text += " (\(error.message))" }
        return text
    }

    // MARK: Progress line

    /// `playing  [######------]  0:42 / 3:10`, at most `width - 1` columns (so the terminal
    /// never wraps it). The bar is left out when there is no room for it.
    static func progressLine(_ state: PlayerState, width: Int) -> String {
        let word = state.state.rawValue.padding(to: 7)
        let clock = times(state)
        let fixed = word.count + 2 + 2 + 2 + clock.count  // word, gap, brackets, gap, clock
        let barWidth = min(width - 1 - fixed, 200)
        guard barWidth >= 5 else { return String("\(word)  \(clock)".prefix(max(width - 1, 1))) }
        var filled = 0
        if let duration = state.duration, duration > 0 {
            filled = Int((max(0, min(state.position / duration, 1)) * Double(barWidth)).rounded(.down))
        }
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        return "\(word)  [\(bar)]  \(clock)"
    }

    /// `reel watch`'s line on a terminal: the progress line, the `extras` (the place in the
    /// queue, the recording), then what is playing (`name`), in at most `width - 1` columns (the
    /// terminal never wraps it). The name comes before the bar: the bar gets what the name
    /// leaves (at least 10 columns, else none), and a name too long even so is cut, ending in `…`.
    static func terminalLine(_ state: PlayerState, name: String?, extras: [String], width: Int) -> String {
        let suffix = extras.map { "  " + $0 }.joined()
        let columns = max(width - 1, 1)
        guard let name, !name.isEmpty else {
            return String((progressLine(state, width: max(width - suffix.count, 10)) + suffix).prefix(columns))
        }
        let fixed = 7 + 2 + 2 + 2 + times(state).count + suffix.count + 2  // word, bar's gaps and brackets, clock, extras, gap
        let bar = min(max(columns - fixed - name.count, 10), 200)
        var text = progressLine(state, width: fixed - suffix.count - 2 + bar + 1) + suffix
        let room = columns - text.count - 2
        if room >= 4 {
            text += "  " + (name.count <= room ? name : String(name.prefix(room - 1)) + "…")
        }
        return String(text.prefix(columns))
    }

    /// The terminal's width in columns (TIOCGWINSZ on stdout), 80 when unknown.
    static func terminalWidth() -> Int {
        var size = winsize()
        if ioctl(1, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 { return Int(size.ws_col) }
        return 80
    }

    // MARK: Recorder

    /// `REC  0:12  /Notes/idea  peak -12 dB  overruns 0`; `idle` when not recording.
    static func recorderLine(_ state: RecorderState) -> String {
        guard state.state == .recording else {
            if let error = state.error { return "idle  (\(error.message))" }
            return "idle"
        }
        var parts = ["REC", formatSeconds(state.elapsed), state.item?.path ?? "?"]
        if let peak = state.peak { parts.append("peak \(Int(peak.rounded())) dB") }
        if state.overruns > 0 { parts.append("overruns \(state.overruns)") }
        return parts.joined(separator: "  ")
    }

    /// `REC  0:12  [#########-------]  -12 dB`: the bar spans -60 to 0 dBFS of the peak.
    static func meterLine(_ state: RecorderState, width: Int) -> String {
        let clock = "REC  \(formatSeconds(state.elapsed))"
        let level = state.peak.map { "\(Int($0.rounded())) dB".padding(to: 7) } ?? "".padding(to: 7)
        let fixed = clock.count + 2 + 2 + 2 + level.count
        let barWidth = min(width - 1 - fixed, 60)
        guard barWidth >= 5 else { return String("\(clock)  \(level)".prefix(max(width - 1, 1))) }
        let fraction = max(0, min(((state.peak ?? -60) + 60) / 60, 1))
        let filled = Int((fraction * Double(barWidth)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
        var text = "\(clock)  [\(bar)]  \(level)"
        if state.overruns > 0 { text += "  overruns \(state.overruns)" }
        return text
    }

    // MARK: Daemon

    /// Several `label: value` lines for `reel info`.
    static func info(_ info: DaemonInfo, socket: String) -> String {
        var lines = ["reeld \(info.version) (protocol \(info.protocolVersion)), up \(formatSeconds(info.uptime))"]
        var rows: [(String, String)] = [
            ("device", info.device), ("capture device", info.captureDevice), ("data dir", info.dataDir),
        ]
        if !info.formats.isEmpty { rows.append(("formats", info.formats.joined(separator: ", "))) }
        if info.listeners.isEmpty {
            rows.append(("socket", socket))
        } else {
            for listener in info.listeners { rows.append((listener.protocolName, listener.address)) }
        }
        let labelWidth = rows.map(\.0.count).max() ?? 0
        for (label, value) in rows { lines.append("\((label + ":").padding(to: labelWidth + 2))\(value)") }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// The string padded with spaces to `width` characters (unchanged if already as long).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
