// GET /audio/<recording id>: a recording's file, whole or a byte range, read off the event loop.

import NIOCore
import NIOHTTP1
import ReelCore
import ReelModel

extension HTTPConnection {
    /// Bytes read from disk per step; the next step starts when the previous one is written to
    /// the socket, so a slow client holds one chunk, not the file.
    static let audioChunkBytes = 128 * 1024

    /// Looks the recording up in the library (its read queue), opens its file (the file
    /// threads) and sends it: 200, 206 for a `Range`, 416 for a range past the end, 304 when
    /// the browser's copy is current. Only a recording of the library, by id, is served: the
    /// file's path comes from the library, never from the request.
    func sendAudio(id: String, request: Request) {
        guard let loop = context?.eventLoop else { return }
        let found = loop.makePromise(of: (item: Item, path: String).self)
        services.core.library.audioFile(id: id) { result in
            found.completeWith(result.mapError { $0 as Error })
        }
        found.futureResult.flatMap { [fileIO = services.fileIO] found in
            fileIO.openForReading(found.path, on: loop).map { (found.item, found.path, $0) }
        }.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let (item, path, file)):
                guard let context, context.channel.isActive else {
                    _ = services.fileIO.close(file.descriptor, on: loop)
                    return
                }
                openFile = file.descriptor
                sendAudioHead(item: item, path: path, file: file, request: request)
            case .failure(let error as ReelError):
                var failure = HTTPFailure(error)
                if error.reason == .notARecording { failure.status = .notFound }
                respond(failure, head: request.head)
            case .failure(let error):
                respond(HTTPUploadSink.failure(error), head: request.head)
            }
        }
    }

    private func sendAudioHead(item: Item, path: String, file: HTTPFileIO.OpenedFile, request: Request) {
        let head = request.head
        let etag = "\"\(String(file.size, radix: 16))-\(String(file.modified, radix: 16))\""
        let ext = path.split(separator: ".").last.map(String.init) ?? "audio"
        var headers = HTTPHeaders()
        headers.add(name: "accept-ranges", value: "bytes")
        headers.add(name: "etag", value: etag)
        headers.add(name: "cache-control", value: "no-cache")
        if head.headers.first(name: "if-none-match") == etag {
            closeOpenFile()
            sendHead(.notModified, headers: headers, request: head)
            finishResponse(keepAlive: head.isKeepAlive)
            return
        }
        headers.add(name: "content-type", value: Self.mimeType(fileExtension: ext))
        headers.add(
            name: "content-disposition",
            value: HTTPContentDisposition.value(
                attachment: request.target.query["download"].map { $0 != "0" && $0 != "false" } ?? false,
                filename: "\(item.name).\(ext)"))
        // If-Range: the range holds only for the copy the browser has; otherwise the whole file.
        let ifRange = head.headers.first(name: "if-range")
        let range = ifRange == nil || ifRange == etag
            ? HTTPByteRange(header: head.headers.first(name: "range"), size: file.size) : .whole
        let first: Int64
        let count: Int64
        switch range {
        case .whole:
            first = 0
            count = file.size
            headers.add(name: "content-length", value: String(count))
            sendHead(.ok, headers: headers, request: head)
        case .partial(let from, let last):
            first = from
            count = last - from + 1
            headers.add(name: "content-range", value: "bytes \(from)-\(last)/\(file.size)")
            headers.add(name: "content-length", value: String(count))
            sendHead(.partialContent, headers: headers, request: head)
        case .unsatisfiable:
            closeOpenFile()
            var refusal = HTTPHeaders()
            refusal.add(name: "accept-ranges", value: "bytes")
            refusal.add(name: "content-range", value: "bytes */\(file.size)")
            respond(
                HTTPFailure(.rangeNotSatisfiable, reason: "out_of_range", "the range is past the end of \(item.path) (\(file.size) bytes)"),
                head: head, headers: refusal)
            return
        }
        if head.method == .HEAD || count == 0 {
            closeOpenFile()
            finishResponse(keepAlive: head.isKeepAlive)
            return
        }
        context?.flush()
        sendAudioChunk(from: first, remaining: count, keepAlive: head.isKeepAlive)
    }

    /// Reads the next chunk on the file threads and writes it; goes on when it is written.
    private func sendAudioChunk(from offset: Int64, remaining: Int64, keepAlive: Bool) {
        guard let loop = context?.eventLoop, let allocator = context?.channel.allocator, let fd = openFile else { return }
        guard remaining > 0 else {
            closeOpenFile()
            finishResponse(keepAlive: keepAlive)
            return
        }
        let count = Int(min(Int64(Self.audioChunkBytes), remaining))
        services.fileIO.read(fd, offset: offset, count: count, allocator: allocator, on: loop)
            .assumeIsolated().whenComplete { [self] result in
                guard let context, openFile == fd else { return }
                guard case .success(let chunk) = result, chunk.readableBytes > 0 else {
                    // A read error, or the file got shorter: the status is sent, so end the
                    // connection (the client sees the body cut short).
                    closeOpenFile()
                    context.close(promise: nil)
                    return
                }
                let sent = Int64(chunk.readableBytes)
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(chunk)))).assumeIsolated().whenComplete { [self] written in
                    guard case .success = written else {
                        closeOpenFile()
                        return
                    }
                    sendAudioChunk(from: offset + sent, remaining: remaining - sent, keepAlive: keepAlive)
                }
            }
    }

    private func closeOpenFile() {
        guard let fd = openFile, let loop = context?.eventLoop else { return }
        openFile = nil
        _ = services.fileIO.close(fd, on: loop)
    }

    /// The Content-Type of a recording's file, by the extension the library gave it (the
    /// codec registry's MIME type for that suffix).
    static func mimeType(fileExtension ext: String) -> String {
        Codecs.mimeType(forSuffix: ext)
    }
}
