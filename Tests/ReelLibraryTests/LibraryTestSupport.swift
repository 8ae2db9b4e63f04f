// Temporary libraries, a recording log handler, a change recorder and a hand-made WAV file.
import Foundation
import GRDB
import Logging
import ReelModel
import Synchronization
import Testing

@testable import ReelLibrary

/// A fresh directory under the system's temporary directory, removed when this goes away.
final class TemporaryDirectory {
    let path: String

    init() {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-library-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }
}

/// Log records kept in memory, so tests assert on what was logged.
final class LogRecords: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    func append(_ record: Record) { records.withLock { $0.append(record) } }

    func logger() -> Logger {
        Logger(label: "reel.library") { _ in RecordingLogHandler(records: self) }
    }
}

struct RecordingLogHandler: LogHandler {
    let records: LogRecords
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let extra = event.metadata { all.merge(extra) { $1 } }
        records.append(
            .init(level: event.level, message: "\(event.message)", metadata: all.mapValues { "\($0)" }))
    }
}

/// Every batch of changes an observer received, in order.
final class ChangeRecorder: Sendable {
    let store: LibraryStore
    let token: ObservationToken
    private let sink: BatchSink

    /// Starts recording `store`'s changes.
    init(_ store: LibraryStore) {
        let sink = BatchSink()
        self.sink = sink
        self.store = store
        self.token = store.observe { sink.append($0) }
    }

    /// The batches delivered so far, after waiting for everything committed to be delivered.
    var received: [[LibraryChange]] {
        store.waitUntilChangesDelivered()
        return sink.all
    }

    /// `received`, each change summarized by `describe`.
    var summary: [[String]] { received.map { $0.map(describe) } }

    /// Forgets what was received so far.
    func reset() {
        store.waitUntilChangesDelivered()
        sink.clear()
    }
}

final class BatchSink: Sendable {
    private let batches = Mutex<[[LibraryChange]]>([])
    var all: [[LibraryChange]] { batches.withLock { $0 } }
    func append(_ batch: [LibraryChange]) { batches.withLock { $0.append(batch) } }
    func clear() { batches.withLock { $0.removeAll() } }
}

/// A brief summary of a change for comparisons: `added /A`, `moved /B/x from /x`.
func describe(_ change: LibraryChange) -> String {
    switch change.kind {
    case .moved, .renamed: "\(change.kind) \(change.item.path) from \(change.oldPath ?? "?")"
    default: "\(change.kind) \(change.item.path)"
    }
}

enum TestFiles {
    /// A 16-bit PCM mono WAV file made by hand: the 44-byte header, then `frames` samples.
    static func writeWAV(to path: String, rate: Int = 8000, frames: Int = 8000) {
        var data = Data()
        func le32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { data.append(contentsOf: $0) } }
        func le16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { data.append(contentsOf: $0) } }
        let bytes = frames * 2
        data.append(contentsOf: Array("RIFF".utf8)); le32(36 + bytes)
        data.append(contentsOf: Array("WAVE".utf8))
        data.append(contentsOf: Array("fmt ".utf8)); le32(16); le16(1); le16(1); le32(rate); le32(rate * 2); le16(2); le16(16)
        data.append(contentsOf: Array("data".utf8)); le32(bytes)
        for i in 0..<frames { le16(Int(UInt16(bitPattern: Int16(sin(Double(i) / 8) * 10000)))) }
        _ = FileManager.default.createFile(atPath: path, contents: data)
    }

    /// An empty file, standing in for a recording's audio.
    static func touch(_ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data())
    }

    static func exists(_ path: String) -> Bool { FileManager.default.fileExists(atPath: path) }

    static func names(in directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }
}

/// A probe that only checks the file exists (decoding is the daemon's job) and reports a WAV.
func stubProbe(_ path: String) throws(ReelError) -> (duration: Double?, format: AudioFormat) {
    guard FileManager.default.fileExists(atPath: path) else { throw ReelError(.notFound, "no file at \(path)") }
    return (1.0, AudioFormat(codec: "wav", sampleRate: 8000, channels: 1))
}

let flac = AudioFormat(codec: "flac", sampleRate: 48000, channels: 1)

/// Expects `body` to throw a `ReelError` with `reason`; returns it for more checks.
@discardableResult
func expectReason<T>(
    _ reason: ErrorReason, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T
) -> ReelError? {
    do {
        _ = try body()
        Issue.record("expected \(reason.rawValue), got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as ReelError {
        #expect(error.reason == reason, "\(error.message)", sourceLocation: sourceLocation)
        return error
    } catch {
        Issue.record("expected a ReelError \(reason.rawValue), got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A second connection to the database, standing for another program; it may hold a
/// transaction open across calls (`BEGIN IMMEDIATE` … `ROLLBACK`) to lock the store out.
func lockingConnection(_ path: String) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.allowsUnsafeTransactions = true
    return try DatabaseQueue(path: path, configuration: configuration)
}
