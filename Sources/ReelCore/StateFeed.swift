// Latest-value state that producers publish and front ends take: how a change leaves the core.

import ReelRuntime

/// One piece of state (the player's, the recorder's), published by whichever thread changes it
/// and taken by the front ends, each on its own thread.
///
/// Why this shape: a producer (the audio thread, the recorder's queue) must never wait on a
/// client, nor do work per subscriber. `publish` stores the value and wakes each *consumer* (one
/// per front end, not per subscriber) that is not already due to take one — O(front ends), no
/// allocation, and a burst of changes costs one wake-up. The consumer then `take`s the newest
/// value on its own thread (coalescing: values in between are skipped, as a state stream may),
/// encodes it once and writes it to all of its subscribers.
///
/// Threads: every method may be called from any thread. `wake` closures are called on the
/// publishing thread, outside the lock, and must only schedule work (e.g. `EventLoop.execute`).
public final class StateFeed<Value: Sendable>: Sendable {
    /// A registered consumer; give it back to `take` and `removeConsumer`.
    public struct Consumer: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct Registration {
        let wake: @Sendable () -> Void
        /// A wake-up was sent and the consumer has not taken the value since.
        var due = false
    }

    private struct Storage {
        var value: Value
        var version: UInt64 = 0
        var consumers: [Int: Registration] = [:]
        var nextID = 1
    }

    private let storage: Locked<Storage>

    public init(_ initial: Value) {
        storage = Locked(Storage(value: initial))
    }

    /// Stores `value` as the latest and wakes the consumers that are not already due.
    public func publish(_ value: Value) {
        // Up to a few front ends: a small fixed array, no allocation on the audio thread.
        var toWake: (@Sendable () -> Void)? = nil
        var more: [@Sendable () -> Void] = []
        storage.withLock { storage in
            storage.value = value
            storage.version &+= 1
            for (id, registration) in storage.consumers where !registration.due {
                storage.consumers[id]!.due = true
                if toWake == nil { toWake = registration.wake } else { more.append(registration.wake) }
            }
        }
        toWake?()
        for wake in more { wake() }
    }

    /// The latest value and its version (which grows by one per publish). Any thread.
    public var latest: (value: Value, version: UInt64) {
        storage.withLock { ($0.value, $0.version) }
    }

    /// The latest value, for `consumer`, which will be woken again by the next publish.
    public func take(for consumer: Consumer) -> (value: Value, version: UInt64) {
        storage.withLock { storage in
            storage.consumers[consumer.id]?.due = false
            return (storage.value, storage.version)
        }
    }

    /// Registers a consumer; `wake` is called (on the publishing thread) after a publish, at most
    /// once until the consumer takes the value.
    public func addConsumer(wake: @escaping @Sendable () -> Void) -> Consumer {
        storage.withLock { storage in
            let id = storage.nextID
            storage.nextID += 1
            storage.consumers[id] = Registration(wake: wake)
            return Consumer(id: id)
        }
    }

    public func removeConsumer(_ consumer: Consumer) {
        _ = storage.withLock { $0.consumers.removeValue(forKey: consumer.id) }
    }
}

/// A log of events (the library's changes), published in order by one producer and read in
/// order by each consumer. Unlike a `StateFeed` nothing is skipped: an event stream must deliver
/// every event. It is bounded: it keeps the newest `capacity` events, and a consumer that falls
/// further behind learns how many it lost (and its front end ends the streams that needed them).
///
/// Threads: as `StateFeed`; `wake` is called on the publishing thread, outside the lock.
public final class EventFeed<Event: Sendable>: Sendable {
    public struct Consumer: Hashable, Sendable {
        fileprivate let id: Int
    }

    /// What a consumer takes: the events after its last take, and how many it missed before them.
    public struct Batch: Sendable {
        public var events: [Event]
        /// The sequence number of `events[0]` (events are numbered from 0 in publishing order).
        public var firstSequence: UInt64
        public var lost: Int
    }

    private struct Registration {
        let wake: @Sendable () -> Void
        /// Sequence number of the next event this consumer has not taken.
        var next: UInt64
        var due = false
    }

    private struct Storage {
        /// Events with sequence numbers `first ..< first + events.count`.
        var events: [Event] = []
        var first: UInt64 = 0
        var consumers: [Int: Registration] = [:]
        var nextID = 1
    }

    public let capacity: Int
    private let storage = Locked(Storage())

    public init(capacity: Int = 4096) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Appends `event` and wakes the consumers that are not already due.
    public func publish(_ event: Event) {
        var toWake: [@Sendable () -> Void] = []
        storage.withLock { storage in
            storage.events.append(event)
            // Drop what every consumer has taken, and beyond the capacity in any case.
            let end = storage.first + UInt64(storage.events.count)
            let slowest = storage.consumers.values.map(\.next).min() ?? end
            let keepFrom = max(slowest, end - UInt64(min(storage.events.count, capacity)))
            if keepFrom > storage.first {
                storage.events.removeFirst(Int(keepFrom - storage.first))
                storage.first = keepFrom
            }
            for (id, registration) in storage.consumers where !registration.due {
                storage.consumers[id]!.due = true
                toWake.append(registration.wake)
            }
        }
        for wake in toWake { wake() }
    }

    /// The events `consumer` has not taken yet, oldest first.
    public func take(for consumer: Consumer) -> Batch {
        storage.withLock { storage in
            guard var registration = storage.consumers[consumer.id] else {
                return Batch(events: [], firstSequence: 0, lost: 0)
            }
            let end = storage.first + UInt64(storage.events.count)
            let lost = storage.first > registration.next ? Int(storage.first - registration.next) : 0
            let from = max(registration.next, storage.first)
            let events = Array(storage.events[Int(from - storage.first)...])
            registration.next = end
            registration.due = false
            storage.consumers[consumer.id] = registration
            return Batch(events: events, firstSequence: from, lost: lost)
        }
    }

    /// How many events have been published: the sequence number the next one gets.
    public var published: UInt64 {
        storage.withLock { $0.first + UInt64($0.events.count) }
    }

    /// Registers a consumer that starts with the next event published.
    public func addConsumer(wake: @escaping @Sendable () -> Void) -> Consumer {
        storage.withLock { storage in
            let id = storage.nextID
            storage.nextID += 1
            storage.consumers[id] = Registration(wake: wake, next: storage.first + UInt64(storage.events.count))
            return Consumer(id: id)
        }
    }

    public func removeConsumer(_ consumer: Consumer) {
        _ = storage.withLock { $0.consumers.removeValue(forKey: consumer.id) }
    }
}
