// MPD's `albumart` (a cover file beside the song) and `readpicture` (the picture in the file).

import ReelCore
import ReelModel

/// `albumart URI OFFSET` and `readpicture URI OFFSET` for the music folders' files, as MPD 0.23
/// answers them (`src/command/FileCommands.cxx`): `size` (the whole picture's), `type` (the
/// embedded picture's MIME type, `readpicture` only), then `binary` with at most the client's
/// `binarylimit` bytes from OFFSET.
/// - `albumart` reads the first of `cover.png`, `cover.jpg`, `cover.webp` in the song's
///   directory; none: `ACK [50@0] No file exists`; an offset past the end: `ACK [2@0] Offset
///   too large`.
/// - `readpicture` answers nothing (just OK) for a file without a picture; an offset past the
///   end: `ACK [2@0] Bad file offset`.
/// - A recording has no cover and no picture; a URI that names no song: `No file exists`
///   (`albumart`), `No such song` (`readpicture`), as MPD.
/// Files are read on the core's read queue, never on the event loop.
enum MPDArtCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        [
            MPDCommand("albumart", .read, 2, 2) { request, reply throws(MPDAck) in
                let limit = request.client.binaryLimit
                let offset = try request.unsigned(1)
                let location = try musicFile(context, request[0], unknown: "No file exists")
                guard let location else { return reply(.failure(MPDAck(.noExist, "No file exists"))) }
                let folder = location.path.split(separator: "/").dropLast().joined(separator: "/")
                context.core.music.folderFile(
                    root: location.root, folder: folder, names: MusicCovers.folderImageNames, offset: offset, limit: limit
                ) { result in
                    switch result {
                    case .success(let piece?):
                        guard offset <= piece.size else { return reply(.failure(MPDAck(.argument, "Offset too large"))) }
                        var response = MPDResponse()
                        response.field("size", piece.size)
                        response.binary(piece.bytes)
                        reply(.success(response))
                    case .success(nil):
                        reply(.failure(MPDAck(.noExist, "No file exists")))
                    case .failure(let error):
                        reply(.failure(MPDAck(error)))
                    }
                }
            },
            MPDCommand("readpicture", .read, 2, 2) { request, reply throws(MPDAck) in
                let limit = request.client.binaryLimit
                let offset = try request.unsigned(1)
                let location = try musicFile(context, request[0], unknown: "No such song")
                guard let location else { return reply(.success(MPDResponse())) }
                context.core.music.embeddedPicture(root: location.root, relativePath: location.path) { result in
                    switch result {
                    case .success(let picture?):
                        guard offset <= picture.bytes.count else {
                            return reply(.failure(MPDAck(.argument, "Bad file offset")))
                        }
                        var response = MPDResponse()
                        response.field("size", picture.bytes.count)
                        response.field("type", picture.mimeType)
                        response.binary(Array(picture.bytes[offset..<min(picture.bytes.count, offset + limit)]))
                        reply(.success(response))
                    case .success(nil):
                        reply(.success(MPDResponse()))
                    case .failure(let error):
                        // As MPD: a file it cannot read (not indexed, broken) is no song.
                        reply(.failure(error.reason == .notFound ? MPDAck(.noExist, "No such song") : MPDAck(error)))
                    }
                }
            },
        ]
    }

    /// The music file a URI names (its folder and relative path, checked against the index
    /// when read); nil for a recording (which has no art). Anything else: `unknown`, MPD's
    /// message for the command.
    private static func musicFile(
        _ context: MPDContext, _ uri: String, unknown: String
    ) throws(MPDAck) -> (root: String, path: String)? {
        switch context.view.target(of: uri) {
        case .music(let root, let path) where !path.isEmpty:
            return (root, path)
        case .treeItem:
            return nil
        default:
            throw MPDAck(.noExist, unknown)
        }
    }
}
