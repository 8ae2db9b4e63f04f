import ReelCore
import Synchronization
import Testing

/// The core's feeds: a producer publishes and returns; each consumer is woken once per burst
/// and takes the newest value (state) or every event in order (events).
@Suite struct StateFeedTests {
    final class Counter: Sendable {
        let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func bump() { count.withLock { $0 += 1 } }
    }

    @Test func aBurstOfPublishesWakesEachConsumerOnceAndItTakesTheNewest() {
        let feed = StateFeed(0)
        let first = Counter()
        let second = Counter()
        let a = feed.addConsumer { first.bump() }
        let b = feed.addConsumer { second.bump() }
        for value in 1...100 { feed.publish(value) }
        #expect(first.value == 1)
        #expect(second.value == 1)
        #expect(feed.take(for: a).value == 100)
        #expect(feed.latest.version == 100)
        // Taken: the next publish wakes it again; the other consumer is still due.
        feed.publish(101)
        #expect(first.value == 2)
        #expect(second.value == 1)
        #expect(feed.take(for: b).value == 101)
        feed.removeConsumer(a)
        feed.publish(102)
        #expect(first.value == 2)
    }

    @Test func eventsArriveInOrderAndNoneIsSkipped() {
        let feed = EventFeed<Int>(capacity: 100)
        let woken = Counter()
        let consumer = feed.addConsumer { woken.bump() }
        for value in 0..<50 { feed.publish(value) }
        #expect(woken.value == 1)
        let batch = feed.take(for: consumer)
        #expect(batch.events == Array(0..<50))
        #expect(batch.firstSequence == 0)
        #expect(batch.lost == 0)
        feed.publish(50)
        let next = feed.take(for: consumer)
        #expect(next.events == [50])
        #expect(next.firstSequence == 50)
        #expect(feed.published == 51)
    }

    @Test func aConsumerThatFallsBehindTheCapacityLearnsHowManyItLost() {
        let feed = EventFeed<Int>(capacity: 10)
        let consumer = feed.addConsumer {}
        for value in 0..<25 { feed.publish(value) }
        let batch = feed.take(for: consumer)
        #expect(batch.lost == 15)
        #expect(batch.events == Array(15..<25))
        #expect(batch.firstSequence == 15)
    }

    @Test func aNewConsumerStartsWithTheNextEvent() {
        let feed = EventFeed<Int>()
        feed.publish(1)
        let consumer = feed.addConsumer {}
        feed.publish(2)
        #expect(feed.take(for: consumer).events == [2])
    }
}
