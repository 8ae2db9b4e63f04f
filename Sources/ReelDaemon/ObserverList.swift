// Callbacks registered by number: how controllers tell connections about changes.

import ReelAudio

/// Observers of one kind of value, added and removed from any thread. `notify` calls each with
/// the value, computing it only when someone listens.
final class ObserverList<Value>: Sendable {
    typealias Observer = @Sendable (Value) -> Void
    private let state = Locked<(next: Int, all: [Int: Observer])>((1, [:]))

    /// Registers `observer`; returns the number to remove it with.
    func add(_ observer: @escaping Observer) -> Int {
        state.withLock { state in
            let id = state.next
            state.next += 1
            state.all[id] = observer
            return id
        }
    }

    func remove(_ id: Int) {
        _ = state.withLock { $0.all.removeValue(forKey: id) }
    }

    func notify(_ value: () -> Value) {
        let observers = state.withLock { Array($0.all.values) }
        guard !observers.isEmpty else { return }
        let current = value()
        for observer in observers { observer(current) }
    }
}
