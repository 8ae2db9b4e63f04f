// Recording another source than the capture device: what the player plays, or a station by URL.

import Foundation
import Logging
import ReelAudio
import ReelModel

/// Where `recorder.start {source: "player"}` and `{source: {url}}` take their audio.
public struct RecordingSources: Sendable {
    /// The player's tap; nil refuses `source: "player"` (no player).
    public var playerTap: PlayerTap?
    /// The format and the title of what the player holds now (nil: nothing loaded / no title).
    public var playing: @Sendable () -> (format: AudioFormat?, title: String?)
    /// How stations are connected to (`stream_ca_file`, timeouts).
    public var streams: StreamConfiguration

    public init(
        playerTap: PlayerTap? = nil, playing: @escaping @Sendable () -> (format: AudioFormat?, title: String?) = { (nil, nil) },
        streams: StreamConfiguration = StreamConfiguration()
    ) {
        self.playerTap = playerTap
        self.playing = playing
        self.streams = streams
    }
}

/// A session's source other than the capture device, opened for `begin`.
struct SourceInput: CustomStringConvertible {
    let input: PCMInput
    /// The format it plays in (the take's unless the request names one), when known.
    let format: (sampleRate: Int, channels: Int)?
    let description: String
}

extension RecorderController {
    /// The input of `request.source`, or nil for the capture device. A station is connected here
    /// (on the recorder's queue, up to the connect timeout plus the low-speed window): `unreachable`
    /// names its URL.
    func sourceInput(_ request: RecordingRequest) throws(ReelError) -> SourceInput? {
        let titles = SourceTitles(onChange: { [weak self] change in
            guard let self else { return }
            queue.async { self.streamTitleChanged(change) }
        })
        switch request.source {
        case .capture:
            return nil
        case .player:
            guard let tap = sources.playerTap else {
                throw ReelError(.unsupportedFormat, "source \"player\": this daemon has no player to record from")
            }
            let playing = sources.playing
            let format = playing().format.map { (sampleRate: $0.sampleRate, channels: $0.channels) }
            let input = PlayerTapInput(tap: tap, logger: logger, titles: titles, title: { playing().title })
            return SourceInput(input: input, format: format, description: "player")
        case .url(let url):
            let input = try StreamCaptureInput.connect(url: url, configuration: sources.streams, logger: logger, titles: titles)
            let format = input.sourceFormat
            return SourceInput(input: input, format: (format.sampleRate, format.channels), description: url)
        }
    }

    /// A capture engine over a source's input, for one session (closed at its end).
    func makeSourceEngine(_ source: SourceInput) -> CaptureEngine {
        CaptureEngine(device: source.input, timing: timing, ringSeconds: ringSeconds, logger: logger)
    }

    /// **The place where a source's title change becomes a mark** of the take being made, at the
    /// frame it was seen at (a session frame, as `recorder.mark`'s); the title is the label, cut to
    /// what a label may hold. A title cleared (nil or empty) makes no mark. On the recorder's queue.
    func streamTitleChanged(_ change: SourceTitles.Change) {
        guard let title = Self.markLabel(forTitle: change.title) else { return }
        guard shared.current.take != nil else {
            logger.info("source title while no take is open", metadata: ["title": "\(title)"])
            return
        }
        do throws(ReelError) {
            _ = try addMark(label: title, sessionFrame: change.frame)
        } catch {
            logger.warning("cannot keep a title as a mark", metadata: ["title": "\(title)", "error": "\(error.message)"])
        }
    }

    /// A station's title as a mark's label: control characters become spaces and the label is
    /// cut (at a character) to `Mark.maximumLabelBytes`; nil when nothing is left.
    static func markLabel(forTitle title: String?) -> String? {
        guard let title else { return nil }
        var label = String(String.UnicodeScalarView(title.unicodeScalars.map {
            $0.value < 0x20 || $0.value == 0x7f ? " " : $0
        })).trimmingCharacters(in: .whitespaces)
        while label.utf8.count > Mark.maximumLabelBytes { label.removeLast() }
        return label.isEmpty ? nil : label
    }
}
