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
/// A stored playlist plays as `PlaylistStore.play` (the queue becomes its entries); a recording
/// from a URL goes to the recorder as `recorder.start {source: {url}}`. Fades are `FadeRamp`s after the volume (`PlayerController.fade`), so the
/// user's volume is never changed by them.
struct ScheduleActions: SchedulePerformer {
    let player: PlayerController
    let mixer: MixerController
    let recorder: RecorderController
    let playlists: PlaylistStore

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
        let player = self.player
        let begin: @Sendable (@escaping PlayerController.Reply) -> Void
        let what: String
        switch play.target {
        case .file(let path):
            begin = { player.play(.file(path), reply: $0) }
            what = path
        case .item(let id):
            begin = { player.play(.recording(.id(id)), reply: $0) }
            what = "item \(id)"
        case .url(let url):
            begin = { player.play(.url(url), reply: $0) }
            what = url
        case .playlist(let name):
            let playlists = self.playlists
            begin = { playlists.play(name, reply: $0) }
            what = "the playlist \"\(name)\""
        case .album(let album):
            begin = { player.play(.album(name: album, albumArtist: nil), reply: $0) }
            what = "the album \"\(album)\""
        }
        let start: @Sendable () -> Void = {
            // The fade starts with the first frame of what is asked for (what played before is cut).
            if let fadeIn = play.fadeIn, fadeIn > 0 { player.fade(from: 0, to: 1, seconds: fadeIn) }
            begin { result in
                switch result {
                case .failure(let error):
                    if play.fadeIn != nil { player.fade(from: 1, to: 1, seconds: 0) }
                    reply(.failure(error))
                case .success(let state):
                    var message = "played \(what)"
                    if let volume = play.volume { message += " at volume \(volume)" }
                    if let fadeIn = play.fadeIn, fadeIn > 0 { message += ", fading in over \(ScheduleBook.spoken(fadeIn))" }
                    if let stopAfter = play.stopAfter, state.entry != nil {
                        message += "; stops after \(ScheduleBook.spoken(stopAfter))"
                        // Only what this schedule started (every entry of it: an album goes on to
                        // its next track): a user who chose something else keeps it. Saved with
                        // the player's state, so a restart keeps it.
                        player.stopPlaying(after: stopAfter)
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
        let base = record.name.map { Self.fillTimeFields($0, at: time(nil)) }
        startRecording(record, base: base, number: 1, duration: duration, reply: reply)
    }

    /// Starts the take named `base` (then `base (2)`, … while the name is taken).
    private func startRecording(
        _ record: ScheduleRecord, base: String?, number: Int, duration: Double, reply: @escaping @Sendable (Result<String, ReelError>) -> Void
    ) {
        let name = base.map { number == 1 ? $0 : "\($0) (\(number))" }
        var request = RecordingRequest(
            folder: record.folderPath.map(ItemReference.path) ?? .root, name: name, codec: record.format, maxDuration: duration)
        switch record.source {
        case .capture: request.source = .capture
        // A station recorded without playing it, as `recorder.start {source: {url}}`.
        case .url(let url): request.source = .url(url)
        }
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
