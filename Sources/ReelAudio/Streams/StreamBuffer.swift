// The compressed bytes of a stream between its network thread and its decoder.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A bounded ring of a stream's bytes. The network thread writes (`write`, blocking while it is
/// full), the decoder reads without ever blocking (`read`: what is there now), and whoever
/// opens the stream may wait for bytes (`waitForBytes`). Offsets count the bytes of the stream
/// since it was opened; bytes already read stay until the writer needs their room.
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

    let capacity: Int
    private let storage: UnsafeMutableRawPointer
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// The first byte still kept, the byte after the last written, the next byte to read.
    private var start: Int64 = 0
    private var end: Int64 = 0
    private var next: Int64 = 0
    private var ending: ReelError??
    private var stopped = false

    init(capacity: Int) {
        self.capacity = max(capacity, 1)
        storage = .allocate(byteCount: self.capacity, alignment: 16)
        pthread_mutex_init(mutex, nil)
        initializeMonotonicCondition(&condition.pointee)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
        storage.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }

    /// Bytes written and not read yet.
    var available: Int { locked { Int(end - next) } }
    /// Bytes written since the stream opened.
    var written: Int64 { locked { end } }
    var isStopped: Bool { locked { stopped } }
    /// Every byte was read and none will come.
    var hasEnded: Bool { locked { end == next && (ending != nil || stopped) } }

    // MARK: Writer (the network thread)

    /// Copies `count` bytes in, waiting while there is no room (the reader frees it by reading).
    /// False once `stop` was called: the transfer should end.
    func write(_ bytes: UnsafeRawPointer, count: Int) -> Bool {
        var done = 0
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while done < count {
            if stopped { return false }
            // Room: what is free, plus what was read (dropped now, oldest first).
            if end - start == Int64(capacity) && next > start { start = next }
            let free = capacity - Int(end - start)
            if free == 0 {
                waitLocked(milliseconds: 100)
                continue
            }
            let slot = Int(end % Int64(capacity))
            let run = min(count - done, free, capacity - slot)
            (storage + slot).copyMemory(from: bytes + done, byteCount: run)
            end += Int64(run)
            start = max(start, end - Int64(capacity))
            done += run
            pthread_cond_broadcast(condition)
        }
        return true
    }

    /// No more bytes will come: the end of the stream (nil), or why it failed.
    func finish(error: ReelError?) {
        locked {
            if ending == nil { ending = .some(error) }
            pthread_cond_broadcast(condition)
        }
    }

    /// Sleeps up to `milliseconds`, or until `stop`. False once stopped. For the network
    /// thread's pause before it connects again.
    func sleep(milliseconds: Int) -> Bool {
        let deadline = monotonicNanoseconds() + UInt64(milliseconds) * 1_000_000
        return locked {
            while !stopped {
                let now = monotonicNanoseconds()
                if now >= deadline { break }
                waitLocked(milliseconds: Int((deadline - now) / 1_000_000) + 1)
            }
            return !stopped
        }
    }

    // MARK: Reader (the decoder)

    /// Copies up to `count` bytes out, never waiting.
    func read(into destination: UnsafeMutableRawPointer, count: Int) -> ReadResult {
        locked {
            let ready = Int(end - next)
            if ready == 0 {
                if let ending { return .ended(ending) }
                return stopped ? .ended(nil) : .empty
            }
            var done = 0
            let wanted = min(count, ready)
            while done < wanted {
                let slot = Int(next % Int64(capacity))
                let run = min(wanted - done, capacity - slot)
                (destination + done).copyMemory(from: storage + slot, byteCount: run)
                next += Int64(run)
                done += run
            }
            pthread_cond_broadcast(condition)
            return .bytes(done)
        }
    }

    /// Copies up to `count` of the bytes not read yet without taking them.
    func peek(into destination: UnsafeMutableRawPointer, count: Int) -> Int {
        locked {
            let wanted = min(count, Int(end - next))
            for index in 0..<wanted {
                destination.storeBytes(
                    of: storage.load(fromByteOffset: Int((next + Int64(index)) % Int64(capacity)), as: UInt8.self),
                    toByteOffset: index, as: UInt8.self)
            }
            return wanted
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
            return Int(end - next) >= min(count, capacity)
        }
    }

    /// Wakes everyone; writes fail and the reader sees the end once it read what is there.
    func stop() {
        locked {
            stopped = true
            pthread_cond_broadcast(condition)
        }
    }

    /// The mutex is held.
    private func waitLocked(milliseconds: Int) {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let total = Int(now.tv_nsec) + (milliseconds % 1000) * 1_000_000
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + milliseconds / 1000 + total / 1_000_000_000
        deadline.tv_nsec = total % 1_000_000_000
        pthread_cond_timedwait(condition, mutex, &deadline)
    }
}
