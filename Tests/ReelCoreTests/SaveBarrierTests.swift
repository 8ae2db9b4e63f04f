@testable import ReelCore
import ReelAudio
import ReelRuntime
import Testing

/// The barrier between a command and its reply, alone.
@Suite struct SaveBarrierTests {
    @Test func aReplyWaitsForTheSaveAndGoesOutAtOnceWhenNothingIsConnected() {
        let barrier = SaveBarrier()
        let log = Locked<[String]>([])
        barrier.after { (value: Int) in log.withLock { $0.append("reply \(value)") } }(1)
        barrier.connect { then in
            log.withLock { $0.append("saved") }
            then()
        }
        barrier.after { (value: Int) in log.withLock { $0.append("reply \(value)") } }(2)
        barrier.disconnect()
        barrier.after { (value: Int) in log.withLock { $0.append("reply \(value)") } }(3)
        #expect(log.current == ["reply 1", "saved", "reply 2", "reply 3"])
    }

    /// A regression: the connected closure, kept as the lock's value itself, was wrapped in two
    /// more conversion thunks at every reply, so each reply cost more than the one before (1.4 ms
    /// after 16,000 commands) and freeing the chain at shutdown recursed once per thunk. Here
    /// 50,000 replies go through and the barrier is released; before the fix this took minutes.
    @Test func manyRepliesCostNoMoreThanTheFirstAndReleaseCleanly() {
        let barrier = SaveBarrier()
        let saves = Locked(0)
        barrier.connect { then in
            saves.withLock { $0 += 1 }
            then()
        }
        let replies = Locked(0)
        for index in 0..<50_000 {
            barrier.after { (_: Int) in replies.withLock { $0 += 1 } }(index)
        }
        barrier.disconnect()
        #expect(saves.current == 50_000)
        #expect(replies.current == 50_000)
    }
}
