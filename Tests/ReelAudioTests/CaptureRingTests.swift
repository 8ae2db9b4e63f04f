// The ring between the capture thread and the writer: a put that completes a batch wakes the
// waiting writer, and so does `wake` (the writer's commands), long before the wait's timeout.

import Foundation
import ReelRuntime
import ReelTestSupport
import Testing

@testable import ReelAudio

@Suite struct CaptureRingTests {
    /// Far longer than any test waits: a take still waiting for it was never woken.
    static let neverMilliseconds = 600_000

    /// Starts a `take` on another thread; its result lands in the returned box.
    func takeInBackground(_ ring: CaptureRing, into frames: UnsafeMutableRawPointer, maxFrames: Int) -> Locked<Int?> {
        let result = Locked<Int?>(nil)
        let box = UnsafeSendable(frames)
        Thread.detachNewThread {
            let taken = ring.take(into: box.value, maxFrames: maxFrames, timeoutMilliseconds: Self.neverMilliseconds)
            result.withLock { $0 = taken }
        }
        return result
    }

    @Test func aPutWakesTheWriterWaitingOnTheEmptyRing() {
        let ring = CaptureRing(capacityFrames: 4800, bytesPerFrame: 2)
        let out = UnsafeMutableRawPointer.allocate(byteCount: 4800 * 2, alignment: 16)
        defer {
            ring.close()
            out.deallocate()
        }
        let result = takeInBackground(ring, into: out, maxFrames: 4800)
        usleep(50_000)  // most likely waiting by now; if not, the take finds the frames at once
        let samples: [Int16] = (0..<1200).map { Int16($0) }
        let accepted = samples.withUnsafeBytes { ring.put($0.baseAddress!, frames: 1200) }
        #expect(accepted == 1200)
        #expect(waitUntil(seconds: 60) { result.current != nil }, "the put did not wake the waiting take")
        #expect(result.current == 1200)
        let copied = Array(UnsafeBufferPointer(start: out.assumingMemoryBound(to: Int16.self), count: 1200))
        #expect(copied == samples)
    }

    @Test func aPutWakesTheWriterOnlyOnceTheRingHoldsABatch() {
        let ring = CaptureRing(capacityFrames: 48000, bytesPerFrame: 2, wakeFrames: 12000)
        let out = UnsafeMutableRawPointer.allocate(byteCount: 48000 * 2, alignment: 16)
        defer {
            ring.close()
            out.deallocate()
        }
        let result = takeInBackground(ring, into: out, maxFrames: 48000)
        let period = [Int16](repeating: 7, count: 6000)
        usleep(50_000)
        _ = period.withUnsafeBytes { ring.put($0.baseAddress!, frames: 6000) }
        usleep(200_000)
        #expect(result.current == nil, "half a batch woke the writer")
        _ = period.withUnsafeBytes { ring.put($0.baseAddress!, frames: 6000) }
        #expect(waitUntil(seconds: 60) { result.current != nil }, "a whole batch did not wake the writer")
        #expect(result.current == 12000)
    }

    @Test func wakeEndsTheWaitWithNothingTakenAndTheNextWaitWaitsAgain() {
        let ring = CaptureRing(capacityFrames: 4800, bytesPerFrame: 2)
        let out = UnsafeMutableRawPointer.allocate(byteCount: 4800 * 2, alignment: 16)
        defer {
            ring.close()
            out.deallocate()
        }
        let first = takeInBackground(ring, into: out, maxFrames: 4800)
        usleep(50_000)
        ring.wake()
        #expect(waitUntil(seconds: 60) { first.current != nil }, "wake did not end the waiting take")
        #expect(first.current == 0)
        // The wake was used up: the next take waits for frames (here, until the ring closes).
        let second = takeInBackground(ring, into: out, maxFrames: 4800)
        usleep(200_000)
        #expect(second.current == nil, "a second take returned without a put or a wake")
        ring.close()
        #expect(waitUntil(seconds: 60) { second.current != nil })
        #expect(second.current == 0)
        #expect(ring.isDrained)
    }
}

/// A pointer handed to the test's other thread, which is the only one using it meanwhile.
private struct UnsafeSendable: @unchecked Sendable {
    let value: UnsafeMutableRawPointer
    init(_ value: UnsafeMutableRawPointer) { self.value = value }
}
