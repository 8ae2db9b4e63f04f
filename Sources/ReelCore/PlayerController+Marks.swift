// Marks while playing a recording (`player.mark`) and seeking to one (`player.seek {mark}`).

import ReelAudio
internal import ReelLibrary
import ReelModel

extension PlayerController {
    /// `player.mark {label?}`: a mark at the audible position of the recording playing or
    /// paused, kept with its item (committed before the reply), and written into the file's
    /// chapters (FLAC, Ogg Vorbis, Opus; WAV keeps marks in the library only) before the reply
    /// (`writeChapters`: through a synced copy renamed over the file, not while the recorder
    /// writes it; a take being recorded gets them when it closes). A file that cannot be
    /// rewritten keeps the mark in the library (logged). `not_playing` when stopped;
    /// `not_a_recording` for a file or a URL.
    public func mark(label: String?, reply: @escaping @Sendable (Result<Mark, ReelError>) -> Void) {
        let state = self.state
        work.async { [self] in
            let result = Result { () throws(ReelError) -> (Mark, Item) in
                let label = try Mark.validate(label: label)
                let item = try playingRecording(state)
                let rate = Double(item.format?.sampleRate ?? 0)
                let stored = try store.addMark(recording: item.id, frame: frameIndex(seconds: state.position, rate: rate), label: label)
                logger.info("mark", metadata: ["path": "\(item.path)", "frame": "\(stored.mark.frame)", "label": "\(label ?? "")"])
                return (stored.mark, item)
            }
            guard case .success(let (mark, item)) = result, let writeChapters else {
                reply(result.map(\.0))
                return
            }
            writeChapters(item.id) { reply(.success(mark)) }
        }
    }

    /// Seeks to mark `index` (0 for the first, by frame) of the recording playing or paused: to
    /// its frame. `out_of_range` names how many marks there are.
    public func seek(toMark index: Int, reply: @escaping Reply) {
        let state = self.state
        work.async { [self] in
            do throws(ReelError) {
                let item = try playingRecording(state)
                let marks = try store.marks(ofRecording: item.id)
                guard index >= 0, index < marks.count else {
                    throw ReelError(
                        .outOfRange,
                        marks.isEmpty ? "\(item.path) has no marks"
                            : "\(item.path) has \(marks.count) mark\(marks.count == 1 ? "" : "s") (0 to \(marks.count - 1)), not \(index)")
                }
                seek(.absolute(marks[index].mark.seconds), reply: reply)
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// The recording `state` is playing or paused.
    private func playingRecording(_ state: PlayerState) throws(ReelError) -> Item {
        guard state.state != .stopped, let source = state.source else {
            throw ReelError(.notPlaying, "nothing is playing; a mark is made in a recording while it plays")
        }
        guard case .item(let id, _, _) = source else {
            throw ReelError(.notARecording, "\(source.displayName) is not a recording of the library; marks are kept with recordings")
        }
        return try store.item(id: id)
    }
}
