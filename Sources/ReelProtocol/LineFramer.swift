// Splitting a byte stream into protocol lines.
//
// The CLI's blocking client feeds what it reads from the socket into a `LineFramer` and takes
// out replies and events. The daemon frames with its own NIO decoder but follows the same
// rules, written down here: a line ends at `\n`; a `\r` right before it is dropped; empty lines
// are returned (the receiver decides to skip them); a line longer than `maxLineLength` bytes
// (not counting the `\n`) is an error after which the stream cannot be resynchronised.

/// Splits bytes into `\n`-terminated lines, with a bound on the length of a line.
public struct LineFramer: Sendable {
    /// What `next()` and `finish()` return.
    public enum Frame: Sendable, Equatable {
        /// One line, without its `\n` and without a `\r` before it.
        case line([UInt8])
        /// More than `maxLineLength` bytes came without a newline. Reported once; after it the
        /// framer discards everything (`isFailed`).
        case tooLong
    }

    /// The longest line accepted, in bytes, not counting the `\n`.
    public let maxLineLength: Int
    /// Set after `.tooLong` was returned; the framer then ignores all input.
    public private(set) var isFailed = false

    private var buffer: [UInt8] = []
    /// Start of the first unreturned line in `buffer`.
    private var start = 0
    /// Bytes of `buffer` before this index (and after `start`) are known not to be `\n`.
    private var scanned = 0

    /// A framer accepting lines of at most `maxLineLength` bytes (1 MiB by default).
    public init(maxLineLength: Int = 1 << 20) {
        precondition(maxLineLength >= 0, "maxLineLength must not be negative")
        self.maxLineLength = maxLineLength
    }

    /// Bytes received and not yet returned as lines.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard !isFailed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: [UInt8]) {
        guard !isFailed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: ArraySlice<UInt8>) {
        guard !isFailed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        guard !isFailed else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// The next complete line, `.tooLong` once if the limit was exceeded, or nil when more
    /// bytes are needed (or after the error).
    public mutating func next() -> Frame? {
        guard !isFailed else { return nil }
        let newline: Int? = buffer.withUnsafeBufferPointer { bytes in
            var k = scanned
            while k < bytes.count {
                if bytes[k] == 0x0A { return k }
                k += 1
            }
            return nil
        }
        guard let newline else {
            scanned = buffer.count
            if buffer.count - start > maxLineLength { return fail() }
            return nil
        }
        guard newline - start <= maxLineLength else { return fail() }
        let line = takeLine(upTo: newline)
        start = newline + 1
        scanned = start
        return .line(line)
    }

    /// At end of input: the last line if it had no `\n` (`.tooLong` if it is too long), else nil.
    /// Call after `next()` has returned nil. Clears the buffer.
    public mutating func finish() -> Frame? {
        guard !isFailed, start < buffer.count else {
            clear()
            return nil
        }
        guard buffer.count - start <= maxLineLength else { return fail() }
        let line = takeLine(upTo: buffer.count)
        clear()
        return .line(line)
    }

    private func takeLine(upTo end: Int) -> [UInt8] {
        var end = end
        if end > start && buffer[end - 1] == 0x0D { end -= 1 }
        return Array(buffer[start..<end])
    }

    private mutating func fail() -> Frame {
        isFailed = true
        clear()
        return .tooLong
    }

    private mutating func clear() {
        buffer = []
        start = 0
        scanned = 0
    }

    /// Drops returned lines from the front of the buffer once they are worth moving.
    private mutating func compact() {
        guard start > 0 else { return }
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
        } else if start >= 4096 && start * 2 >= buffer.count {
            buffer.removeSubrange(0..<start)
        } else {
            return
        }
        scanned -= start
        start = 0
    }
}
