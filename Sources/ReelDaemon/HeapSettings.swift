// glibc malloc's thresholds for a daemon that runs for months.

import CDynamicLibrary

/// malloc's settings for reeld: set once, at start (`apply`). Any thread.
///
/// Why: glibc raises its mmap threshold to the size of each large block freed (up to 32 MB) and
/// its trim threshold to twice that. A stream's pause buffer is first made for 300 s at 320
/// kbit/s (12 MB) and made again once the bitrate is known; from then on every large block (the
/// pause buffer itself, decoders' buffers) came from the threads' heaps, which were never
/// trimmed: some MB more resident after each stream, and freed memory kept. Fixed
/// thresholds (glibc's own starting values) keep a large block in a mapping of its own,
/// returned to the kernel when it is freed, and a heap's free top is given back.
///
/// And glibc gives threads up to 8 heaps per core, each with its own free pages: reeld's dozen
/// threads had 14 of them, 2.1 MB resident while a stream played, 0.6 MB in two. reeld's threads
/// allocate little and seldom at once (the audio thread's device buffer holds 2 s), and a thread's
/// small blocks come from its own cache first.
enum HeapSettings {
    /// A block from this size on is a mapping of its own (`M_MMAP_THRESHOLD`).
    static let mmapThreshold: Int32 = 128 << 10
    /// A heap's free top beyond this is given back (`M_TRIM_THRESHOLD`).
    static let trimThreshold: Int32 = 128 << 10
    /// Heaps the threads share at most (`M_ARENA_MAX`): the main one and one more.
    static let arenas: Int32 = 2

    /// True when malloc took all three settings.
    @discardableResult
    static func apply() -> Bool {
        reel_heap_settings_set(mmapThreshold, trimThreshold, arenas) != 0
    }
}
