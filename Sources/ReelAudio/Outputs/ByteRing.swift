// A fixed-size FIFO of bytes for the audio thread: no allocation after it is made.

/// Bytes appended at the back and taken from the front. When an append does not fit, the oldest
/// bytes are dropped to make room (audio that is late is worth less than audio that is now).
/// Counts are whole bytes; callers keep them whole frames. One thread only.
public struct ByteRing {
    private var storage: UnsafeMutableRawPointer
    public let capacity: Int
    private var head = 0
    public private(set) var count = 0
    /// Bytes dropped by appends that did not fit, since the ring was made.
    public private(set) var overflowed = 0

    public init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = UnsafeMutableRawPointer.allocate(byteCount: self.capacity, alignment: 16)
    }

    /// Frees the storage; the ring must not be used afterwards.
    public func deallocate() { storage.deallocate() }

    public mutating func removeAll() {
        head = 0
        count = 0
    }

    public mutating func append(_ bytes: UnsafeRawPointer, count appended: Int) {
        guard appended > 0 else { return }
        var bytes = bytes
        var appended = appended
        if appended > capacity {
            // Only the newest `capacity` bytes can stay.
            overflowed += appended - capacity
            bytes += appended - capacity
            appended = capacity
        }
        let excess = count + appended - capacity
        if excess > 0 { drop(excess) ; overflowed += excess }
        var tail = (head + count) % capacity
        var left = appended
        while left > 0 {
            let run = min(left, capacity - tail)
            (storage + tail).copyMemory(from: bytes, byteCount: run)
            bytes += run
            left -= run
            count += run
            tail = (tail + run) % capacity
        }
    }

    /// The front bytes that are contiguous in memory (at most `limit`), for one `write(2)`.
    public func front(limit: Int) -> UnsafeRawBufferPointer {
        let run = min(count, capacity - head, limit)
        return UnsafeRawBufferPointer(start: storage + head, count: max(run, 0))
    }

    /// Removes `bytes` from the front.
    public mutating func drop(_ bytes: Int) {
        let removed = min(max(bytes, 0), count)
        head = (head + removed) % capacity
        count -= removed
        if count == 0 { head = 0 }
    }
}
