// Recording another source than the capture device: what the player plays, or a station by URL.

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

/// A title change of the source, at a frame of the take it happened in.
public struct TitleMark: Sendable, Equatable {
    /// Frames from the take's first frame.
    public var frame: Int64
    public var title: String?
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
    /// frame (from the take's start) it was seen at. On the recorder's queue. Until marks have a
    /// core entry (`recorder.mark`'s, adding a mark at an explicit frame), the change is logged
    /// and kept in `titleMarks` by the take's item id.
    func streamTitleChanged(_ change: SourceTitles.Change) {
        guard let take = shared.current.take else {
            logger.info("source title while no take is open", metadata: ["title": "\(change.title ?? "")"])
            return
        }
        let mark = TitleMark(frame: max(0, change.frame - take.start), title: change.title)
        titleMarks.withLock { $0[take.item.id, default: []].append(mark) }
        logger.info(
            "source title", metadata: ["path": "\(take.item.path)", "frame": "\(mark.frame)", "title": "\(change.title ?? "")"])
    }

    /// The title changes seen during the take `itemID` (oldest first).
    public func titleMarks(of itemID: String) -> [TitleMark] {
        titleMarks.current[itemID] ?? []
    }
}
