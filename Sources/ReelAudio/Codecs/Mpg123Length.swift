// The length of an open MP3 and the scan that finds it off the audio thread.

import CMPG123
import ReelRuntime
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// What `Mpg123Reader` knows of its file's length, and the results of a scan of the whole file
/// on a background thread: the exact frame count (when the file's header does not give it) and a
/// seek index (so that a seek far ahead does not parse every frame before it on the audio thread).
///
/// Threads: `frames` and `isFinal` from any thread (lock-free, so the audio thread may poll
/// them); `startScan`, `cancel` and `takeIndex` from the reader's owner; the scan runs on a
/// thread of its own at idle priority and shares no lock with the others.
final class Mpg123Length: @unchecked Sendable {
    /// ≥ 0: the exact frame count; `pending` while a scan will still give it; `unknown` when none
    /// will come (the scan failed or was cancelled).
    private let value: Atomic<Int64>
    private static let pending: Int64 = -1
    private static let unknown: Int64 = -2

    private let indexReady = Atomic<Bool>(false)
    private let scanEnded = Atomic<Bool>(false)
    /// Written by the scan thread before `indexReady` is set, read by the owner after; never again.
    private var index: (offsets: [off_t], step: off_t)?
    private var indexTaken = false
    private var input: Mpg123Input?

    /// `frames` nil: the length is pending until `startScan` finds it.
    init(frames: Int64?) {
        value = Atomic(frames ?? Self.pending)
    }

    /// The exact frame count, or nil while it is not known.
    var frames: Int64? {
        let frames = value.load(ordering: .acquiring)
        return frames >= 0 ? frames : nil
    }

    /// True once `frames` will not change any more.
    var isFinal: Bool { value.load(ordering: .acquiring) != Self.pending }

    /// True once a scan started by `startScan` has ended, with or without results.
    var scanFinished: Bool { scanEnded.load(ordering: .acquiring) }

    /// True once `startScan` started a thread (for tests). Owner only.
    var scanStarted: Bool { input != nil }

    /// Bytes the scan reads at a time.
    static let scanReadAhead = 64 * 1024

    /// Scans the file on a new thread at idle priority: its length (if pending) and a seek index.
    /// Returns at once. Without the file, a pending length becomes unknown. `ignoringTag` as for
    /// the reader's own handle (`Mpg123Input.openHandle`).
    func startScan(path: String, ignoringTag: Bool) {
        guard let input = try? Mpg123Input(path: path, readAhead: Self.scanReadAhead) else {
            finish(frames: nil)
            scanEnded.store(true, ordering: .releasing)
            return
        }
        self.input = input
        let thread = OSThread.start(name: "reel-mp3-scan", realtime: false) { [self] in
            lowerPriority()
            scan(path: path, input: input, ignoringTag: ignoringTag)
            scanEnded.store(true, ordering: .releasing)
        }
        pthread_detach(thread)
    }

    /// The same scan on the calling thread, before returning (a small file: see
    /// `Mpg123Reader.scanAtOpenLimit`). Returns the bytes it read.
    func scanNow(path: String, ignoringTag: Bool) -> Int {
        defer { scanEnded.store(true, ordering: .releasing) }
        guard let input = try? Mpg123Input(path: path, readAhead: Self.scanReadAhead) else {
            finish(frames: nil)
            return 0
        }
        scan(path: path, input: input, ignoringTag: ignoringTag)
        return input.bytesRead
    }

    /// Stops a running scan at its next read (the reader is closing). Owner only.
    func cancel() {
        input?.stop()
    }

    /// The seek index the scan built, once, when it is ready; nil before and after. Owner only.
    func takeIndex() -> (offsets: [off_t], step: off_t)? {
        guard !indexTaken, indexReady.load(ordering: .acquiring) else { return nil }
        indexTaken = true
        return index
    }

    private func scan(path: String, input: Mpg123Input, ignoringTag: Bool) {
        guard let handle = try? input.openHandle(path: path, ignoringTag: ignoringTag) else {
            finish(frames: nil)
            return
        }
        defer { mpg123_delete(handle) }
        let scanned = mpg123_scan(handle) == MPG123_OK.rawValue && !input.isStopped
        let length = scanned ? Int64(mpg123_length(handle)) : -1
        if scanned {
            var offsets: UnsafeMutablePointer<off_t>?
            var step: off_t = 0
            var fill = 0
            if mpg123_index(handle, &offsets, &step, &fill) == MPG123_OK.rawValue, let offsets, fill > 0, step > 0 {
                index = (Array(UnsafeBufferPointer(start: offsets, count: fill)), step)
                indexReady.store(true, ordering: .releasing)
            }
        }
        finish(frames: length >= 0 ? length : nil)
    }

    /// Settles a pending length; a length already known stays.
    private func finish(frames: Int64?) {
        _ = value.compareExchange(
            expected: Self.pending, desired: frames ?? Self.unknown, ordering: .acquiringAndReleasing)
    }

    /// SCHED_IDLE: the scan takes only CPU time that nothing else in the process or on the
    /// machine wants, so it cannot hold up the audio thread even where that one is not real-time,
    /// nor a request under a CPU quota. (libdispatch's `.utility` is only nice 2 on Linux,
    /// `.background` nice 10.) On a machine busy to the full, the length comes late, never wrong.
    private func lowerPriority() {
        var parameters = sched_param()
        let schedIdle: Int32 = 5  // SCHED_IDLE in <sched.h>, hidden without _GNU_SOURCE
        if pthread_setschedparam(pthread_self(), schedIdle, &parameters) != 0 {
            _ = nice(19)
        }
    }
}
