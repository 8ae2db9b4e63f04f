// An upload's body on its way to a file in the data directory, never held whole in memory.

import NIOCore
import NIOHTTP1
import ReelModel

/// Writes one `POST /import` body to `path` (a fresh name from `LibraryController.newUploadPath`)
/// as it arrives: the raw body, or the file part of a `multipart/form-data` body. Writes go
/// through `HTTPFileIO`'s pool one at a time, in order; while more than `highWater` bytes wait,
/// `wantsInput` is false and the connection stops reading from the client (TCP flow control
/// slows the browser down), and `resume` is called when they drop below `lowWater`.
/// A body past `limit` bytes fails with 413. `abort` removes the file; `finish` closes it for
/// the import. Lives on the connection's event loop.
final class HTTPUploadSink {
    static let highWater = 1 << 20
    static let lowWater = 256 << 10

    let path: String
    private let limit: Int64
    private let fileIO: HTTPFileIO
    private let loop: EventLoop
    private var extractor: MultipartFileExtractor?
    private var descriptor: Int32?
    private var opening: Bool = true
    private var queue: [[UInt8]] = []
    private var queuedBytes = 0
    private var writing = false
    private var failure: HTTPFailure?
    private var aborted = false
    private var received: Int64 = 0
    private var finishing: EventLoopPromise<Void>?
    /// Called when reading may go on after `wantsInput` was false.
    var resume: (() -> Void)?

    /// The file's name as the browser gave it (multipart), if any.
    var filename: String? { extractor?.filename }

    init(path: String, limit: Int64, multipart: MultipartFileExtractor?, fileIO: HTTPFileIO, loop: EventLoop) {
        self.path = path
        self.limit = limit
        extractor = multipart
        self.fileIO = fileIO
        self.loop = loop
        fileIO.create(path, on: loop).assumeIsolated().whenComplete { [self] result in
            opening = false
            switch result {
            case .success(let fd):
                descriptor = fd
                if aborted {
                    discard()
                } else {
                    writeNext()
                }
            case .failure(let error):
                fail(Self.failure(error))
            }
        }
    }

    /// False while enough is waiting to be written: stop reading from the client.
    var wantsInput: Bool { queuedBytes < Self.highWater }

    /// Takes the next piece of the body. Throws 413 past the limit, 400 for a malformed form,
    /// or the error a write already met.
    func receive(_ buffer: ByteBuffer) throws(HTTPFailure) {
        if let failure { throw failure }
        received += Int64(buffer.readableBytes)
        guard received <= limit else {
            throw HTTPFailure(.payloadTooLarge, reason: "too_large", Self.tooLargeMessage(limit))
        }
        var bytes: [UInt8]
        if extractor != nil {
            do throws(MultipartFileExtractor.Failure) {
                bytes = try extractor!.feed(buffer.readableBytesView)
            } catch {
                throw Self.failure(error)
            }
        } else {
            bytes = Array(buffer.readableBytesView)
        }
        guard !bytes.isEmpty else { return }
        queuedBytes += bytes.count
        queue.append(bytes)
        writeNext()
    }

    /// At the end of the body: completes when every byte is on disk and the file closed, or
    /// fails (with an `HTTPFailure`) if the form was incomplete or a write failed.
    func finish() -> EventLoopFuture<Void> {
        if let failure { return loop.makeFailedFuture(failure) }
        if let extractor {
            do throws(MultipartFileExtractor.Failure) {
                try extractor.finish()
            } catch {
                let failure = Self.failure(error)
                fail(failure)
                return loop.makeFailedFuture(failure)
            }
        }
        let promise = loop.makePromise(of: Void.self)
        finishing = promise
        closeIfDone()
        return promise.futureResult
    }

    /// Removes the file (now, or when it has been opened): the upload failed or was cut off.
    func abort() {
        guard !aborted else { return }
        aborted = true
        queue.removeAll()
        queuedBytes = 0
        if !opening && !writing { discard() }
    }

    // MARK: Writing

    private func writeNext() {
        guard !writing, !aborted, failure == nil, let fd = descriptor else { return }
        guard !queue.isEmpty else {
            closeIfDone()
            return
        }
        let bytes = queue.removeFirst()
        writing = true
        fileIO.write(fd, bytes, path: path, on: loop).assumeIsolated().whenComplete { [self] result in
            writing = false
            queuedBytes -= bytes.count
            if aborted {
                discard()
                return
            }
            if case .failure(let error) = result {
                fail(Self.failure(error))
                return
            }
            if queuedBytes < Self.lowWater, let resume { resume() }
            writeNext()
        }
    }

    private func closeIfDone() {
        guard let promise = finishing, !writing, queue.isEmpty, let fd = descriptor else { return }
        finishing = nil
        descriptor = nil
        fileIO.close(fd, on: loop).whenComplete { _ in promise.succeed(()) }
    }

    private func fail(_ error: HTTPFailure) {
        guard failure == nil else { return }
        failure = error
        finishing?.fail(error)
        finishing = nil
        abort()
        resume?()
    }

    private func discard() {
        let fd = descriptor
        descriptor = nil
        _ = fileIO.discard(fd, path: path, on: loop)
    }

    static func tooLargeMessage(_ limit: Int64) -> String {
        "the file is larger than the upload limit of \(limit) bytes (http_upload_limit)"
    }

    static func failure(_ error: Error) -> HTTPFailure {
        switch error {
        case let failure as HTTPFailure: failure
        case let error as ReelError: HTTPFailure(error)
        case let error as MultipartFileExtractor.Failure:
            switch error {
            case .notMultipart: HTTPFailure(.badRequest, reason: "bad_request", "the form is not multipart/form-data")
            case .malformed(let message): HTTPFailure(.badRequest, reason: "bad_request", message)
            }
        default: HTTPFailure(ReelError(.ioError, "cannot write the upload: \(error)"))
        }
    }
}
