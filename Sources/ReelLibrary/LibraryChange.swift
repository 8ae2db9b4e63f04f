// What observers of the library are told after each committed transaction.
import ReelModel

/// Identifies an observer registered with `LibraryStore.observe(_:)`.
public struct ObservationToken: Hashable, Sendable {
    let id: UInt64
}
