// A schedule's action carried out on the player, the mixer and the recorder.

import Dispatch
import ReelAudio
internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// `SchedulePerformer` on the core's controllers: play as `player.play` (the queue becomes it;
/// an alarm replaces what plays), record as `recorder.start` (a manual recording keeps the
/// recorder: `busy`), stop as `player.stop`.
///
/// What this build cannot do yet is a failure that says so: URLs (played and recorded) and
/// stored playlists come with their own work (they go through `PlayRequest` once it has them);
/// albums likewise. Fades are `FadeRamp`s after the volume (`PlayerController.fade`), so the
/// user's volume is never changed by them.
struct ScheduleActions: SchedulePerformer {
    let player: PlayerController
    let mixer: MixerController
    let recorder: RecorderController
    /// Timers of `stopAfter`.
    let queue = DispatchQueue(label: "reel.schedules.actions")

    func perform(
        _ action: ScheduleAction, scheduleID: Int, remaining: Double?, reply: @escaping @Sendable (Result<String, ReelError>) -> Void
    ) {
        switch action {
        case .play(let play): self.play(play, reply: reply)
        case .record(let record): self.record(record, duration: remaining ?? record.duration, reply: reply)
        case .stop(let fadeOut):
            player.fadeOutAndStop(seconds: fadeOut ?? 0) { result in
                reply(result.map { _ in "stopped" + ((fadeOut ?? 0) > 0 ? " after a fade-out of \(ScheduleBook.spoken(fadeOut ?? 0))" : "") })
            }
        }
    }

    private func play(_ play: SchedulePlay, reply: @escaping @Sendable (Result<String, ReelError>) -> Void) {
        let request: PlayRequest
        let what: String
        switch play.target {
        case .file(let path):
            request = .file(path)
            what = path
        case .item(let id):
            request = .recording(.id(id))
            what = "item \(id)"
        case .url(let url):
            reply(.failure(ReelError(.unsupportedFormat, "cannot play \(url): this reeld does not play URLs yet")))
            return
        case .playlist(let name):
            reply(.failure(ReelError(.notFound, "cannot play the playlist \"\(name)\": this reeld has no stored playlists yet")))
            return
        case .album(let album):
            reply(.failure(ReelError(.notFound, "cannot play the album \"\(album)\": player.play does not take albums yet")))
            return
        }
        let player = self.player
        let queue = self.queue
        let start: @Sendable () -> Void = {
            // The fade starts with the first frame of what is asked for (what played before is cut).
            if let fadeIn = play.fadeIn, fadeIn > 0 { player.fade(from: 0, to: 1, seconds: fadeIn) }
            player.play(request) { result in
                switch result {
                case .failure(let error):
                    if play.fadeIn != nil { player.fade(from: 1, to: 1, seconds: 0) }
                    reply(.failure(error))
                case .success(let state):
                    var message = "played \(what)"
                    if let volume = play.volume { message += " at volume \(volume)" }
                    if let fadeIn = play.fadeIn, fadeIn > 0 { message += ", fading in over \(ScheduleBook.spoken(fadeIn))" }
                    if let stopAfter = play.stopAfter, let entry = state.entry {
                        message += "; stops after \(ScheduleBook.spoken(stopAfter))"
                        queue.asyncAfter(deadline: .now() + stopAfter) {
                            // Only what this schedule started: a user who chose something else keeps it.
                            guard player.state.entry == entry, player.state.state == .playing else { return }
                            player.stop { _ in }
                        }
                    }
                    reply(.success(message))
                }
            }
        }
        guard let volume = play.volume else {
            start()
            return
        }
        mixer.setVolume(volume) { result in
            if case .failure(let error) = result {
                reply(.failure(error))
                return
            }
            start()
        }
    }

    private func record(_ record: ScheduleRecord, duration: Double, reply: @escaping @Sendable (Result<String, ReelError>) -> Void) {
        if case .url(let url) = record.source {
            reply(.failure(ReelError(.unsupportedFormat, "cannot record \(url): this reeld records only from its capture device yet")))
            return
        }
        let base = record.name.map { Self.fillTimeFields($0, at: time(nil)) }
        startRecording(record, base: base, number: 1, duration: duration, reply: reply)
    }

    /// Starts the take named `base` (then `base (2)`, … while the name is taken).
    private func startRecording(
        _ record: ScheduleRecord, base: String?, number: Int, duration: Double, reply: @escaping @Sendable (Result<String, ReelError>) -> Void
    ) {
        let name = base.map { number == 1 ? $0 : "\($0) (\(number))" }
        let request = RecordingRequest(
            folder: record.folderPath.map(ItemReference.path) ?? .root, name: name, codec: record.format, maxDuration: duration)
        recorder.start(request) { [self] result in
            switch result {
            case .success(let state):
                reply(.success("recording \(state.item?.path ?? name ?? "") for \(ScheduleBook.spoken(duration))"))
            case .failure(let error) where error.reason == .nameTaken && number < 1000:
                startRecording(record, base: base, number: number + 1, duration: duration, reply: reply)
            case .failure(let error):
                reply(.failure(error))
            }
        }
    }

    /// `name` with its strftime fields (`%Y-%m-%d`, `%H.%M`, `%a`) filled in at `time`, local.
    static func fillTimeFields(_ name: String, at time: time_t) -> String {
        guard name.contains("%") else { return name }
        var clock = time
        var parts = tm()
        localtime_r(&clock, &parts)
        var buffer = [CChar](repeating: 0, count: 512)
        let count = strftime(&buffer, buffer.count, name, &parts)
        guard count > 0 else { return name }
        let filled = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // A field that makes a "/" (none of the usual ones do) would name a folder: not taken.
        return filled.replacingSlashes()
    }
}

private extension String {
    func replacingSlashes() -> String { String(map { $0 == "/" ? "-" : $0 }) }
}
