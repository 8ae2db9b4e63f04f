// GET /cover?album=NAME[&artist=ARTIST]: an album's art from the music folders.

import NIOCore
import NIOHTTP1
import ReelCore
import ReelModel

extension HTTPConnection {
    /// Asks the core for the album's art (read on its music read queue: the picture embedded in
    /// a track, else a `cover.jpg`-like image beside one) and sends it: 200 with its type, 304
    /// when the browser's copy is current, 404 when the album has none or does not exist, 400
    /// without `album`. The file comes from the index, never from the request.
    func sendCover(request: Request) {
        guard let loop = context?.eventLoop else { return }
        guard let album = request.target.query["album"], !album.isEmpty else {
            respond(HTTPFailure(.badRequest, reason: "bad_request", "give the album: /cover?album=NAME"), head: request.head)
            return
        }
        // `artist=` (empty) names the album without an artist; no `artist` at all, the only album
        // of that name.
        let artist = request.target.query["artist"]
        let found = loop.makePromise(of: MusicCover.self)
        services.core.music.cover(album: album, albumArtist: artist) { result in
            found.completeWith(result.mapError { $0 as Error })
        }
        found.futureResult.assumeIsolated().whenComplete { [self] result in
            switch result {
            case .success(let cover): sendCoverBytes(cover, request: request)
            case .failure(let error as ReelError): respond(HTTPFailure(error), head: request.head)
            case .failure(let error): respond(HTTPUploadSink.failure(error), head: request.head)
            }
        }
    }

    private func sendCoverBytes(_ cover: MusicCover, request: Request) {
        guard let context, context.channel.isActive else { return }
        let head = request.head
        let etag = cover.etag
        var headers = HTTPHeaders()
        headers.add(name: "etag", value: etag)
        headers.add(name: "cache-control", value: "no-cache")
        if head.headers.first(name: "if-none-match") == etag {
            sendHead(.notModified, headers: headers, request: head)
            finishResponse(keepAlive: head.isKeepAlive)
            return
        }
        headers.add(name: "content-type", value: cover.mimeType)
        headers.add(name: "content-length", value: String(cover.bytes.count))
        headers.add(name: "x-content-type-options", value: "nosniff")
        sendHead(.ok, headers: headers, request: head)
        if head.method != .HEAD {
            context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: cover.bytes)))), promise: nil)
        }
        finishResponse(keepAlive: head.isKeepAlive)
    }
}
