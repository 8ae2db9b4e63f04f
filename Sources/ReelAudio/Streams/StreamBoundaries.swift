// Where a stream's bytes start over (an HLS discontinuity): the decoder opens a new demuxer there.

import ReelRuntime

/// Byte offsets of a stream (counted as `StreamBuffer` counts them, from the stream's first byte)
/// at which what follows does not continue what came before: a new container starts (an HLS
/// segment after `EXT-X-DISCONTINUITY`, a restarted encoder, an fMP4 init section). The
/// network side adds them before it writes the bytes; the decoder reads up to the next one, ends
/// its demuxer there and opens a new one. Any thread.
final class StreamBoundaries: @unchecked Sendable {
    private let offsets = Locked<[Int64]>([])

    /// The most boundaries kept waiting (a stream that breaks at every segment, read slowly):
    /// older ones beyond it are forgotten, the decoder then resynchronises as it can.
    static let maximumWaiting = 1024

    /// A new container starts at byte `offset` (not before the last one added).
    func add(at offset: Int64) {
        offsets.withLock { offsets in
            if let last = offsets.last, offset <= last { return }
            offsets.append(offset)
            if offsets.count > Self.maximumWaiting { offsets.removeFirst(offsets.count - Self.maximumWaiting) }
        }
    }

    /// The first boundary at or after byte `offset` (the next byte to read), nil when none.
    func next(from offset: Int64) -> Int64? {
        offsets.withLock { $0.first { $0 >= offset } }
    }

    /// Forgets the boundaries before byte `offset`, the oldest byte the stream's buffer keeps
    /// (a seek back decodes again from bytes kept, across the boundaries among them).
    func forget(before offset: Int64) {
        offsets.withLock { $0.removeAll { $0 < offset } }
    }
}
