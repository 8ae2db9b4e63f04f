// POST /import: an uploaded file streamed to the data directory, then imported like library.import.

import NIOCore
import NIOHTTP1
import ReelCore
import ReelModel
import ReelProtocol

extension HTTPConnection {
    /// Checks what can be checked before the body (the query, the announced size, the form's
    /// boundary), then opens the file and lets the body flow into it. Sends `100 Continue` to
    /// a client that waits for it.
    func beginUpload(_ request: Request) {
        guard let context else { return }
        let head = request.head
        let query = request.target.query
        if let unknown = query.keys.first(where: { !["folder", "folderPath", "name"].contains($0) }) {
            respond(HTTPFailure(.invalidParams("unknown parameter \"\(unknown)\"; /import takes folder or folderPath, and name")), head: head)
            return
        }
        if query["folder"] != nil, query["folderPath"] != nil {
            respond(HTTPFailure(.invalidParams("give \"folder\" or \"folderPath\", not both")), head: head)
            return
        }
        if let path = query["folderPath"], !path.hasPrefix("/") {
            respond(HTTPFailure(.invalidParams("\"folderPath\" must be a tree path starting with \"/\", not \"\(path)\"")), head: head)
            return
        }
        if let length = head.headers.first(name: "content-length").flatMap({ Int64($0) }), length > services.uploadLimit {
            respond(HTTPFailure(.payloadTooLarge, reason: "too_large", HTTPUploadSink.tooLargeMessage(services.uploadLimit)), head: head)
            return
        }
        var multipart: MultipartFileExtractor?
        if let type = head.headers.first(name: "content-type"), type.lowercased().hasPrefix("multipart/") {
            do throws(MultipartFileExtractor.Failure) {
                multipart = try MultipartFileExtractor(contentType: type)
            } catch {
                respond(HTTPUploadSink.failure(error), head: head)
                return
            }
        } else if query["name"] == nil {
            respond(HTTPFailure(.invalidParams("a raw upload needs its name: POST /import?name=NAME (or send a form with the file)")), head: head)
            return
        }
        let sink = HTTPUploadSink(
            path: services.core.library.newUploadPath(), limit: services.uploadLimit, multipart: multipart,
            fileIO: services.fileIO, loop: context.eventLoop)
        sink.resume = { [unowned self] in resumeReading() }
        state = .uploading(request, sink)
        if head.headers.first(name: "expect")?.lowercased() == "100-continue" {
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        }
    }

    /// The body has been read whole: once the file is closed, import it through the core.
    func finishUpload(_ request: Request, sink: HTTPUploadSink) {
        guard let loop = context?.eventLoop else { return }
        let query = request.target.query
        let library = services.core.library
        sink.finish().assumeIsolated().whenComplete { [self] result in
            if case .failure(let error) = result {
                respond(HTTPUploadSink.failure(error), head: request.head)
                return
            }
            guard let name = query["name"] ?? sink.filename.map(LibraryController.defaultName(ofFile:)), !name.isEmpty else {
                sink.abort()
                respond(HTTPFailure(.invalidParams("the upload has no name: give name=NAME")), head: request.head)
                return
            }
            let folder: ItemReference =
                if let id = query["folder"] { .id(id) } else if let path = query["folderPath"] { .path(path) } else { .root }
            let imported = loop.makePromise(of: Item.self)
            library.importUpload(path: sink.path, folder: folder, name: name, displayName: sink.filename ?? name) { result in
                imported.completeWith(result.mapError { $0 as Error })
            }
            imported.futureResult.assumeIsolated().whenComplete { [self] result in
                switch result {
                case .success(let item):
                    sendJSON(.object(["result": item.json]), request: request.head)
                case .failure(let error):
                    respond(HTTPUploadSink.failure(error), head: request.head)
                }
            }
        }
    }

    /// A 200 with a JSON body.
    private func sendJSON(_ value: JSONValue, request: HTTPRequestHead) {
        guard let context else { return }
        let body = value.jsonBytes
        var headers = HTTPHeaders()
        headers.add(name: "content-type", value: "application/json")
        headers.add(name: "content-length", value: String(body.count))
        headers.add(name: "cache-control", value: "no-store")
        sendHead(.ok, headers: headers, request: request)
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        finishResponse(keepAlive: request.isKeepAlive)
    }
}
