// The recorder's series: takes named NAME plus a number, their retention, and the disk's free space.

import ReelAudio
internal import ReelLibrary
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The capture engine's takes of one session, handed to the controller (writer thread).
final class SessionTakes: CaptureTakes, @unchecked Sendable {
    private weak var controller: RecorderController?
    private let request: RecordingRequest

    init(controller: RecorderController, request: RecordingRequest) {
        self.controller = controller
        self.request = request
    }

    func openTake(_ take: CaptureTake) throws(ReelError) -> RecordingWriter {
        guard let controller else { throw ReelError(.notRecording, "the recorder is gone") }
        return try controller.openTake(take, request: request)
    }

    func closedTake(_ take: CaptureTake, frames: Int64, keep: Bool, failure: ReelError?) {
        controller?.closedTake(take, frames: frames, keep: keep, failure: failure)
    }

    func progress(_ snapshot: CaptureSnapshot) { controller?.progress(snapshot) }
    func ended(_ ending: CaptureEnding) { controller?.sessionEnded(ending) }
}

/// A recording of a series: `NAME 007` is number 7.
struct SeriesTake {
    var item: Item
    var number: Int
}

extension RecorderController {
    /// The number of a series take named `base` plus a space and digits; nil for any other name.
    static func seriesNumber(of name: String, base: String) -> Int? {
        let prefix = base + " "
        guard name.hasPrefix(prefix) else { return nil }
        let digits = name.dropFirst(prefix.count)
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(digits)
    }

    /// The folder's recordings of the session's series (also earlier series of the same name),
    /// oldest (lowest number) first.
    func seriesTakes(in session: Session) throws(ReelError) -> [SeriesTake] {
        guard let base = session.seriesName else { return [] }
        let listing = try store.list(folder: session.folder)
        return listing.items.compactMap { item -> SeriesTake? in
            guard item.kind == .recording, let number = Self.seriesNumber(of: item.name, base: base) else { return nil }
            return SeriesTake(item: item, number: number)
        }.sorted { $0.number < $1.number }
    }

    /// Which finished takes `keep` deletes, oldest first: beyond `count` (the take being made
    /// counts), older than `days`. Pure.
    static func retentionVictims(
        _ takes: [SeriesTake], current: String?, keep: RetentionRule, now: Double
    ) -> [SeriesTake] {
        let finished = takes.filter { $0.item.id != current }
        var victims: [SeriesTake] = []
        if let count = keep.count {
            let total = finished.count + (current != nil ? 1 : 0)
            victims += finished.prefix(max(0, total - count))
        }
        if let days = keep.days {
            let limit = now - days * 86400
            for take in finished where !victims.contains(where: { $0.item.id == take.item.id }) {
                if let created = parseISO8601(take.item.created), created < limit { victims.append(take) }
            }
        }
        return victims.sorted { $0.number < $1.number }
    }

    /// Deletes what `keep` says should go, then checks the free space. On the queue.
    func applyRetention() {
        guard let session = shared.current.session, let keep = session.keep else {
            checkDisk()
            return
        }
        let takes: [SeriesTake]
        do {
            takes = try seriesTakes(in: session)
        } catch {
            logger.error("cannot list the series for retention", metadata: ["error": "\(error.message)"])
            return
        }
        let current = shared.current.take?.item.id
        for victim in Self.retentionVictims(takes, current: current, keep: keep, now: wallClock()) {
            delete(victim, why: keep.count != nil ? "keep.count \(keep.count!)" : "keep.days")
        }
        checkDisk()
    }

    private func delete(_ take: SeriesTake, why: String) {
        do throws(ReelError) {
            try store.delete(.id(take.item.id))
            logger.notice("deleted an old take", metadata: ["path": "\(take.item.path)", "rule": "\(why)"])
        } catch {
            logger.error("cannot delete an old take", metadata: ["path": "\(take.item.path)", "error": "\(error.message)"])
        }
    }

    /// Updates `disk`; below `keep.minFreeBytes` deletes the oldest finished takes of the series,
    /// and when none is left to delete, stops with `disk_full` (everything written is kept). On
    /// the queue.
    func checkDisk() {
        guard let session = shared.current.session else { return }
        let path = shared.current.take?.path ?? (try? store.audioPath(for: session.lastTake ?? Item(
            id: "x", kind: .recording, name: "x", parent: nil, path: "/x", created: "")))
        guard let path, var free = Self.freeBytes(near: path) else { return }
        let floor = session.keep?.minFreeBytes ?? 0
        if floor > 0 && free < floor {
            var victims = ((try? seriesTakes(in: session)) ?? []).filter { $0.item.id != shared.current.take?.item.id }
            while free < floor, !victims.isEmpty {
                delete(victims.removeFirst(), why: "keep.minFreeBytes \(floor)")
                free = Self.freeBytes(near: path) ?? free
            }
            if free < floor {
                let error = ReelError(
                    .diskFull, "free space fell below keep.minFreeBytes (\(free) < \(floor) bytes) and no older take is left to delete; "
                        + "recording stopped, everything written is kept")
                logger.error("recording stopped", metadata: ["reason": "disk_full", "error": "\(error.message)"])
                _ = endSessionForDisk(error)
                return
            }
        }
        let rate = session.byteRate
        let left = rate.flatMap { $0 > 0 ? Double(max(0, free - floor)) / $0 : nil }
        shared.withLock { $0.disk = RecorderDisk(freeBytes: free, secondsLeft: left) }
    }

    /// Free bytes (for an unprivileged writer) on the file system holding `path`'s directory.
    static func freeBytes(near path: String) -> Int64? {
        var directory = path
        if let slash = directory.lastIndex(of: "/") { directory = String(directory[..<slash]) }
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// `2026-11-22T14:03:05Z` → seconds since the epoch.
    static func parseISO8601(_ text: String) -> Double? {
        let parts = text.split(whereSeparator: { "-T:Z".contains($0) }).compactMap { Int32($0) }
        guard parts.count == 6 else { return nil }
        var fields = tm()
        fields.tm_year = parts[0] - 1900
        fields.tm_mon = parts[1] - 1
        fields.tm_mday = parts[2]
        fields.tm_hour = parts[3]
        fields.tm_min = parts[4]
        fields.tm_sec = parts[5]
        return Double(timegm(&fields))
    }
}
