// Marks in the take being recorded: `recorder.mark`, the recorder's own marks, and chapters at close.

import ReelAudio
internal import ReelLibrary
import ReelModel
import ReelTags

#if canImport(Glibc)
import Glibc
#endif

/// A mark past the end of the take just closed, waiting for the next take of a segmented
/// session (it is still stored with the closed take until then).
struct CarriedMark {
    var id: Int64
    /// Counted from the session's first frame.
    var sessionFrame: Int64
    /// The take it was made in, and that take's length in frames.
    var take: RecorderController.Take
    var takeFrames: Int64
}

extension RecorderController {
    /// `recorder.mark {label?}`: a mark at the frame being captured now, in the take being made.
    /// Replies once the mark is committed to the library (it survives a crash from then on)
    /// with the mark, its frame counted from the take's first frame. `not_recording` when idle
    /// or armed with no take open; `out_of_range` for a label too long or with control characters.
    public func mark(label: String?, reply: @escaping Reply<Mark>) {
        queue.async { [self] in
            reply(Result { () throws(ReelError) -> Mark in
                let label = try Mark.validate(label: label)
                let snapshot = engine.snapshot
                return try addMark(label: label, sessionFrame: snapshot.capturedFrames - snapshot.sessionStartFrame)
            })
        }
    }

    /// A mark at `atFrame`, counted from the session's first frame (frame 0 is the first frame
    /// the session captured; a take's `CaptureTake.startFrame` counts the same way), in the take
    /// being made: for marks the recorder's sources make themselves (a stream's title change
    /// while recording what plays). A frame before the take's first goes to its first; one past
    /// its end, when the take closes, to the next segment (segments) or the take's last frame.
    /// Replies as `mark(label:reply:)`, on the recorder's queue; `reply` may be nil.
    public func addMark(label: String?, atFrame: Int64, reply: Reply<Mark>? = nil) {
        queue.async { [self] in
            let result = Result { () throws(ReelError) -> Mark in
                try addMark(label: try Mark.validate(label: label), sessionFrame: atFrame)
            }
            if case .failure(let error) = result {
                logger.warning("cannot keep a mark", metadata: ["label": "\(label ?? "")", "error": "\(error.message)"])
            }
            reply?(result)
        }
    }

    /// Stores the mark with the take being made; on the queue.
    func addMark(label: String?, sessionFrame: Int64) throws(ReelError) -> Mark {
        try markGate.withLock { _ throws(ReelError) -> Mark in
            let current = shared.current
            guard let take = current.take else {
                if current.session != nil {
                    throw ReelError(.notRecording, "no take is being recorded: the recorder is armed, waiting for sound")
                }
                throw ReelError(.notRecording, "nothing is being recorded; a mark is made during a take (reel record)")
            }
            let stored = try store.addMark(recording: take.item.id, frame: max(0, sessionFrame - take.start), label: label)
            logger.info("mark", metadata: ["path": "\(take.item.path)", "frame": "\(stored.mark.frame)", "label": "\(label ?? "")"])
            return stored.mark
        }
    }

    /// A take opened (writer thread): marks carried from the take before that fall in it move
    /// here; any before its start (none in a segmented session) go to the previous take's end.
    func takeOpenedForMarks(item: Item, start: Int64) {
        let carried = shared.withLock { shared -> [CarriedMark] in
            defer { shared.session?.carriedMarks = [] }
            return shared.session?.carriedMarks ?? []
        }
        guard !carried.isEmpty else { return }
        let moves = carried.filter { $0.sessionFrame >= start }.map { (id: $0.id, frame: $0.sessionFrame - start) }
        do throws(ReelError) {
            try store.moveMarks(moves, to: item.id)
        } catch {
            logger.warning("cannot move marks into the next take", metadata: ["path": "\(item.path)", "error": "\(error.message)"])
        }
    }

    /// The take's file is closed (writer thread): marks past its end are carried to the next
    /// segment, or set on its last frame; the rest are written into the file as chapters where
    /// the format has them (FLAC, Ogg Vorbis, Opus; WAV has none).
    func writeMarks(of take: Take, frames: Int64, codec: String) {
        let stored: [StoredMark]
        do throws(ReelError) {
            stored = try store.marks(ofRecording: take.item.id)
        } catch {
            logger.warning("cannot read the take's marks", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
            return
        }
        guard !stored.isEmpty else { return }
        let continues = shared.current.session.map { $0.contiguous } ?? false
        var inside: [Mark] = []
        var carried: [CarriedMark] = []
        var clamped: [(id: Int64, frame: Int64)] = []
        for mark in stored {
            if mark.mark.frame < frames {
                inside.append(mark.mark)
            } else if continues && engine.snapshot.inSession {
                carried.append(CarriedMark(id: mark.id, sessionFrame: take.start + mark.mark.frame, take: take, takeFrames: frames))
            } else {
                let last = max(0, frames - 1)
                clamped.append((id: mark.id, frame: last))
                inside.append(Mark(frame: last, label: mark.mark.label, sampleRate: mark.mark.sampleRate))
            }
        }
        if !carried.isEmpty { shared.withLock { $0.session?.carriedMarks = carried } }
        if !clamped.isEmpty {
            do throws(ReelError) {
                try store.setMarkFrames(clamped)
            } catch {
                logger.warning("cannot move marks to the take's end", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
            }
        }
        guard !inside.isEmpty, ChapterWriter.holdsChapters(codec: codec) else { return }
        // Rewriting the file copies it: on the recorder's queue, not the writer thread, whose
        // ring would fill meanwhile with a long take on a slow card.
        let chapters = inside.sorted { $0.frame < $1.frame }
        queue.async { [self] in writeChapters(chapters, of: take) }
    }

    /// The session ended with marks carried past its last take's end (no segment followed): on
    /// that take's last frame, and into its chapters. On the queue, after the engine stopped.
    func settleCarriedMarks(codec: String) {
        let carried = shared.withLock { shared -> [CarriedMark] in
            defer { shared.session?.carriedMarks = [] }
            return shared.session?.carriedMarks ?? []
        }
        guard let take = carried.first?.take, let frames = carried.first?.takeFrames else { return }
        do throws(ReelError) {
            try store.setMarkFrames(carried.map { (id: $0.id, frame: max(0, frames - 1)) })
            guard ChapterWriter.holdsChapters(codec: codec) else { return }
            writeChapters(try store.marks(ofRecording: take.item.id).map(\.mark), of: take)
        } catch {
            logger.warning("cannot keep marks at the take's end", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
        }
    }

    /// `player.mark` in a recording of the library: its marks written into its file as chapters
    /// where the format has them, its size brought up to date; then `done`, on the queue. Never
    /// while the recorder writes that file: the take being made gets its marks when it closes,
    /// and a take closing now (its row not yet finished) once it is (`closedTake`).
    public func writeChapters(ofRecording id: String, done: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if shared.current.take?.item.id == id {
                done()
                return
            }
            let closing = (try? store.inProgressRecordings())?.contains { $0.id == id } ?? false
            if closing {
                shared.withLock { $0.pendingChapters[id, default: []].append(done) }
                return
            }
            rewriteChapters(ofRecording: id)
            done()
        }
    }

    /// A take's row is finished, or the take discarded (on the queue): the chapter writes that
    /// waited for it are done now.
    func finishPendingChapters(ofRecording id: String) {
        let waiting = shared.withLock { $0.pendingChapters.removeValue(forKey: id) } ?? []
        guard !waiting.isEmpty else { return }
        rewriteChapters(ofRecording: id)
        for done in waiting { done() }
    }

    /// Writes every mark of a finished recording into its file as chapters (none for WAV, MP3 or
    /// a recording deleted meanwhile); on the queue.
    private func rewriteChapters(ofRecording id: String) {
        guard let item = try? store.item(id: id), let codec = item.format?.codec, ChapterWriter.holdsChapters(codec: codec) else {
            return
        }
        do throws(ReelError) {
            let path = try store.audioPath(for: item)
            // Within the file (a segment's mark not yet carried into the next take is past it).
            let frames = item.duration.map { frameIndex(seconds: $0, rate: Double(item.format?.sampleRate ?? 0)) }
            let chapters = try store.marks(ofRecording: id).map(\.mark).filter { frames == nil || $0.frame < frames! }
            guard !chapters.isEmpty else { return }
            writeChapters(chapters, of: Take(item: item, path: path))
        } catch {
            logger.warning(
                "cannot write the recording's marks into its file as chapters; they are kept in the library",
                metadata: ["path": "\(item.path)", "error": "\(error.message)"])
        }
    }

    /// Writes the chapters into the closed take's file (through a synced copy renamed over it)
    /// and brings its size up to date; on the queue (retention, which deletes takes, runs
    /// there too). A take deleted meanwhile is not brought back.
    private func writeChapters(_ chapters: [Mark], of take: Take) {
        guard (try? store.item(id: take.item.id)) != nil else { return }
        do throws(ReelError) {
            try ChapterWriter.write(chapters, into: take.path, copyPath: store.chaptersCopyPath(forRecording: take.item.id))
        } catch {
            logger.warning(
                "cannot write the take's marks into its file as chapters; they are kept in the library",
                metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
            return
        }
        do throws(ReelError) {
            try store.updateRecording(id: take.item.id, size: RecordingRepair.fileSize(take.path))
        } catch where error.reason == .notFound {
            // Deleted while its chapters were written: the file written back goes too.
            unlink(take.path)
        } catch {
            logger.warning("cannot record the take's size after its chapters", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
        }
    }
}
