// The library's control side: the store, its writes off the event loop, and its changes fanned out.

import Dispatch
import Logging
import ReelAudio
import ReelLibrary
import ReelModel

/// Owns the library store. Reads are quick and run where they are called (the event loop);
/// writes (which may delete many files or copy a large import) run one at a time on their own
/// queue and answer through a reply. Committed changes reach the player (which follows the
/// recording it plays), the recorder (which follows the one it makes) and every connection's
/// observer, in commit order.
public final class LibraryController: @unchecked Sendable {
    public typealias Observer = @Sendable ([LibraryChange]) -> Void

    let store: LibraryStore
    private let player: PlayerController
    private let logger: Logger
    private let writes = DispatchQueue(label: "reel.library.write")
    private let observers = ObserverList<[LibraryChange]>()
    private var token: ObservationToken?
    /// Set once at start; follows the item being recorded.
    private let recorderSlot = Locked<RecorderController?>(nil)

    public init(store: LibraryStore, player: PlayerController, logger: Logger) {
        self.store = store
        self.player = player
        self.logger = logger
        token = store.observe { [weak self] changes in self?.deliver(changes) }
    }

    /// Runs a write on the library's queue; `reply` is called there, after the write's changes
    /// have reached every observer, so a client that gets the reply and then subscribes does not
    /// see that change again, and pushes for a change come before the reply that made it.
    func write<Result: Sendable>(
        _ work: @escaping @Sendable () throws(ReelError) -> Result,
        reply: @escaping @Sendable (Swift.Result<Result, ReelError>) -> Void
    ) {
        writes.async { [store] in
            do throws(ReelError) {
                let result = try work()
                store.waitUntilChangesDelivered()
                reply(.success(result))
            } catch {
                reply(.failure(error))
            }
        }
    }

    /// The recorder, which follows the item it is recording (rename, delete).
    func attach(recorder: RecorderController) {
        recorderSlot.withLock { $0 = recorder }
    }

    @discardableResult
    func addObserver(_ observer: @escaping Observer) -> Int {
        observers.add(observer)
    }

    func removeObserver(_ id: Int) {
        observers.remove(id)
    }

    /// Called on the store's delivery queue, once per committed transaction.
    private func deliver(_ changes: [LibraryChange]) {
        player.libraryChanged(changes) { [store] id in try? store.item(id: id) }
        recorderSlot.current?.libraryChanged(changes)
        observers.notify { changes }
    }

    /// What the store learns of an imported file: it must open and its first frames must decode
    /// (as for playing it); its duration and format.
    static func probe(_ path: String) throws(ReelError) -> (duration: Double?, format: AudioFormat) {
        let reader = try AudioFileOpener.open(path: path)
        let frames = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: frames * reader.pcmFormat.bytesPerFrame, alignment: 16)
        defer { buffer.deallocate() }
        _ = try reader.read(into: buffer, frames: frames)
        return (reader.duration, reader.format)
    }
}
