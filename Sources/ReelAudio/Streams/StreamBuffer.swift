// The compressed bytes of a stream between its network thread and its decoder.

import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// A bounded ring of a stream's bytes. The network thread writes (`write`), the decoder reads
/// without ever blocking (`read`: what is there now, from a read position it can move back
/// with `seekRead`), and whoever opens the stream may wait for bytes (`waitForBytes`). Offsets
/// count the bytes of the stream since it was opened (or since `reset`); bytes already read
/// stay until the writer needs their room, so the decoder can go back to any byte still kept.
///
/// When the ring is full of bytes not read yet, the writer waits for the reader while the
/// reader reads (the server is held back by TCP: one that sends faster than it plays, or
/// without end, costs neither memory nor CPU), and also when nobody reads a finite resource
/// (it can be fetched again: `overwrites` false). A live stream that nobody has read for
/// `idleReaderSeconds` (paused past what the ring holds; `overwrites` true) drops the
/// oldest of them instead, so that it keeps being received: then the read position moves to
/// the oldest byte kept and `takeOverrun` says so once.
///
/// Any thread; one writer and one reader.
final class StreamBuffer: @unchecked Sendable {
    enum ReadResult: Equatable {
        /// That many bytes were copied.
        case bytes(Int)
        /// Nothing is there now; more may come.
        case empty
        /// Every byte was read and no more will come: the end (nil) or why it failed.
        case ended(ReelError?)
    }

    private var storage: UnsafeMutableRawPointer
    private var size: Int
    private let lock = ConditionLock()
    /// The first byte still kept, the byte after the last written, the next byte to read.
    private var start: Int64 = 0
    private var end: Int64 = 0
    private var next: Int64 = 0
    private var ending: ReelError??
    private var stopped = false
    private var dropsOldest = false
    private var overrun = false
    /// Counts `reset`s: a writer that started before one writes nothing more.
    private var resets = 0
    /// When the reader last asked for bytes (`read`, `look`, `seekRead`).
    private var lastRead = monotonicNanoseconds()
    /// A reader that has not read for this long is not reading (paused).
    private let idleReaderNanoseconds: UInt64

    /// `idleReaderSeconds`: how long a reader that has not read is taken as not reading (a
    /// second: the audio thread reads every period while it plays; tests choose).
    init(capacity: Int, overwrites: Bool = false, idleReaderSeconds: Double = 1) {
        idleReaderNanoseconds = UInt64(max(idleReaderSeconds, 0) * 1e9)
        size = max(capacity, 1)
        storage = .allocate(byteCount: size, alignment: 16)
        dropsOldest = overwrites
    }

    deinit {
        storage.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T { lock.withLock(body) }

    /// Bytes the ring holds at most.
    var capacity: Int { locked { size } }
    /// Bytes written and not read yet.
    var available: Int { locked { Int(end - next) } }
    /// Bytes written since the stream opened.
    var written: Int64 { locked { end } }
    /// The offsets of the bytes kept: read ones still there, then those not read yet.
    var kept: Range<Int64> { locked { start..<end } }
    /// The offset of the next byte `read` gives.
    var readOffset: Int64 { locked { next } }
    var isStopped: Bool { locked { stopped } }
    /// Every byte was read and none will come.
    var hasEnded: Bool { locked { end == next && (ending != nil || stopped) } }
    /// The current `reset` count, for a writer to hand to `write`.
    var generation: Int { locked { resets } }

    /// Whether a full ring drops its oldest bytes (a live stream) rather than making the
    /// writer wait.
    var overwrites: Bool {
        get { locked { dropsOldest } }
        set { locked { dropsOldest = newValue; lock.broadcast() } }
    }

    /// Makes the ring hold `capacity` bytes, keeping the newest bytes that fit (every byte not
    /// read yet when they fit; else the read position moves as an overrun would, in a ring
    /// that `overwrites`: one that does not keeps them all, holding more). For when the
    /// stream's bitrate becomes known, early: the kept bytes are copied.
    func resize(to capacity: Int) {
        locked {
            // A ring that does not drop its oldest bytes never loses unread ones.
            let capacity = max(capacity, 1, dropsOldest ? 1 : Int(end - next))
            guard capacity != size else { return }
            let newStart = max(start, end - Int64(capacity))
            let fresh = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
            var offset = newStart
            while offset < end {
                let from = Int(offset % Int64(size))
                let to = Int(offset % Int64(capacity))
                let run = min(Int(end - offset), size - from, capacity - to)
                (fresh + to).copyMemory(from: storage + from, byteCount: run)
                offset += Int64(run)
            }
            storage.deallocate()
            storage = fresh
            size = capacity
            start = newStart
            if next < start {
                next = start
                overrun = true
            }
            lock.broadcast()
        }
    }

    // MARK: Writer (the network thread)

    /// Copies `count` bytes in; when the ring is full of bytes not read, drops the oldest
    /// (`overwrites`) or waits for the reader. False once `stop` was called, or when the
    /// buffer was `reset` since `generation` was read: the transfer should end.
    func write(_ bytes: UnsafeRawPointer, count: Int, generation: Int? = nil) -> Bool {
        var done = 0
        lock.lock()
        defer { lock.unlock() }
        while done < count {
            if stopped { return false }
            if let generation, generation != resets { return false }
            // Room: what is free, plus what was read (as much as needed dropped now, oldest
            // first: the rest stays for going back).
            var free = size - Int(end - start)
            if free < count - done && next > start {
                start = min(next, start + Int64(count - done - free))
                free = size - Int(end - start)
            }
            if free == 0 {
                guard dropsOldest, monotonicNanoseconds() &- lastRead >= idleReaderNanoseconds else {
                    waitLocked(milliseconds: 100)
                    continue
                }
                // Nobody reads (paused past what the ring holds): the oldest unread bytes go.
                let dropped = min(count - done, size)
                start += Int64(dropped)
                next = start
                overrun = true
                free = dropped
            }
            let slot = Int(end % Int64(size))
            let run = min(count - done, free, size - slot)
            (storage + slot).copyMemory(from: bytes + done, byteCount: run)
            end += Int64(run)
            start = max(start, end - Int64(size))
            done += run
            lock.broadcast()
        }
        return true
    }

    /// No more bytes will come: the end of the stream (nil), or why it failed.
    func finish(error: ReelError?) {
        locked {
            if ending == nil { ending = .some(error) }
            lock.broadcast()
        }
    }

    /// Sleeps up to `milliseconds`, or until `stop` (false then) or a `reset`. For the network
    /// thread's pause before it connects again.
    func sleep(milliseconds: Int) -> Bool {
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        return locked {
            let generation = resets
            while !stopped && generation == resets {
                let now = monotonicNanoseconds()
                if now >= deadline { break }
                waitLocked(milliseconds: Int((deadline - now) / 1_000_000) + 1)
            }
            return !stopped
        }
    }

    /// The last bytes written, at most `limit` of them (those still kept). For the writer, which
    /// compares a new connection's first bytes with them (`ReconnectOverlap`); not a read.
    func lastBytes(upTo limit: Int) -> [UInt8] {
        locked {
            let from = max(start, end - Int64(max(limit, 0)))
            var bytes = [UInt8](repeating: 0, count: Int(end - from))
            bytes.withUnsafeMutableBytes { destination in
                var done = 0
                while done < destination.count {
                    let slot = Int((from + Int64(done)) % Int64(size))
                    let run = min(destination.count - done, size - slot)
                    (destination.baseAddress! + done).copyMemory(from: storage + slot, byteCount: run)
                    done += run
                }
            }
            return bytes
        }
    }

    // MARK: Reader (the decoder)

    /// Copies up to `count` bytes out from the read position, never waiting.
    func read(into destination: UnsafeMutableRawPointer, count: Int) -> ReadResult {
        locked {
            lastRead = monotonicNanoseconds()
            let ready = Int(end - next)
            if ready == 0 {
                if let ending { return .ended(ending) }
                return stopped ? .ended(nil) : .empty
            }
            var done = 0
            let wanted = min(count, ready)
            while done < wanted {
                let slot = Int(next % Int64(size))
                let run = min(wanted - done, size - slot)
                (destination + done).copyMemory(from: storage + slot, byteCount: run)
                next += Int64(run)
                done += run
            }
            lock.broadcast()
            return .bytes(done)
        }
    }

    /// Copies up to `count` bytes from `offset` (a byte kept) without moving the read position:
    /// what `read` would give from there. The bytes not read yet stay, so a reader that looks
    /// ahead this way loses none of them to the writer.
    func look(at offset: Int64, into destination: UnsafeMutableRawPointer, count: Int) -> ReadResult {
        locked {
            lastRead = monotonicNanoseconds()
            guard offset >= start else { return .ended(ReelError(.ioError, "byte \(offset) is no longer kept")) }
            let ready = Int(max(end - offset, 0))
            if ready == 0 {
                if let ending { return .ended(ending) }
                return stopped ? .ended(nil) : .empty
            }
            var done = 0
            let wanted = min(count, ready)
            while done < wanted {
                let slot = Int((offset + Int64(done)) % Int64(size))
                let run = min(wanted - done, size - slot)
                (destination + done).copyMemory(from: storage + slot, byteCount: run)
                done += run
            }
            return .bytes(done)
        }
    }

    /// Copies up to `count` of the bytes not read yet without taking them.
    func peek(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        locked {
            let wanted = min(count, Int(end - next))
            for index in 0..<wanted {
                destination.storeBytes(
                    of: storage.load(fromByteOffset: Int((next + Int64(index)) % Int64(size)), as: UInt8.self),
                    toByteOffset: index, as: UInt8.self)
            }
            return wanted
        }
    }

    /// Copies the kept bytes from `offset` on into `destination` (as many as it holds), without
    /// moving the read position. False, copying nothing, when they are not all kept.
    func copy(from offset: Int64, into destination: inout [UInt8]) -> Bool {
        locked {
            guard offset >= start, offset + Int64(destination.count) <= end else { return false }
            for index in destination.indices {
                destination[index] = storage.load(fromByteOffset: Int((offset + Int64(index)) % Int64(size)), as: UInt8.self)
            }
            return true
        }
    }

    /// Moves the read position to `offset`, a byte still kept (or the end). False, moving
    /// nothing, when it is not kept.
    @discardableResult
    func seekRead(to offset: Int64) -> Bool {
        locked {
            lastRead = monotonicNanoseconds()
            guard offset >= start && offset <= end else { return false }
            next = offset
            overrun = false
            lock.broadcast()
            return true
        }
    }

    /// True once after the writer dropped bytes the reader had not read (the read position
    /// moved to the oldest byte kept).
    func takeOverrun() -> Bool {
        locked {
            defer { overrun = false }
            return overrun
        }
    }

    /// Forgets every byte: the next one written is byte `offset` of the stream (a new request
    /// from there), read next. A writer of the old bytes writes nothing more. The end of the
    /// stream, if it was reached, is forgotten too.
    func reset(at offset: Int64) {
        locked {
            resets += 1
            start = offset
            end = offset
            next = offset
            ending = nil
            overrun = false
            lock.broadcast()
        }
    }

    /// Waits until at least `count` bytes can be read, the stream ended, or `milliseconds`
    /// passed. True when the bytes are there. For the thread that opens the stream.
    func waitForBytes(_ count: Int, milliseconds: Int) -> Bool {
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        return locked {
            while Int(end - next) < count && ending == nil && !stopped {
                let now = monotonicNanoseconds()
                if now >= deadline { break }
                waitLocked(milliseconds: Int((deadline - now) / 1_000_000) + 1)
            }
            return Int(end - next) >= min(count, size)
        }
    }

    /// Wakes everyone; writes fail and the reader sees the end once it read what is there.
    func stop() {
        locked {
            stopped = true
            lock.broadcast()
        }
    }

    /// The lock is held.
    private func waitLocked(milliseconds: Int) {
        lock.wait(until: ConditionLock.deadline(inMilliseconds: milliseconds))
    }
}
