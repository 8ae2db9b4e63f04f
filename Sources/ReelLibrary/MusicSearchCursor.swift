// The cursor of a music search page: where the page ended in the search's order.
import Foundation
import GRDB
import ReelModel

/// The opaque cursor of `MusicIndex.search`: base64url of `m1:<query fingerprint>:` followed by
/// the JSON array of the last track's nine values of `MusicIndex.searchOrder`. Holding the
/// values (not only an id) keeps the place when that track is deleted or retagged meanwhile.
enum MusicSearchCursor {
    /// The values of `MusicIndex.searchOrder` for one file, in its order.
    struct Key: Equatable, Codable {
        var untagged: Int64
        var artistFold: String
        var artist: String
        var albumFold: String
        var album: String
        var disc: Int64
        var track: Int64
        var path: String
        var id: Int64

        /// Before every file (`untagged` is 0 or 1 for a file).
        static let start = Key(untagged: -1, artistFold: "", artist: "", albumFold: "", album: "", disc: 0, track: 0, path: "", id: 0)

        /// The nine values that follow the first `from` columns of a search row.
        init(_ row: Row, from first: Int) {
            self.init(
                untagged: row[first], artistFold: row[first + 1], artist: row[first + 2], albumFold: row[first + 3],
                album: row[first + 4], disc: row[first + 5], track: row[first + 6], path: row[first + 7],
                id: row[first + 8])
        }

        init(
            untagged: Int64, artistFold: String, artist: String, albumFold: String, album: String, disc: Int64,
            track: Int64, path: String, id: Int64
        ) {
            self.untagged = untagged
            self.artistFold = artistFold
            self.artist = artist
            self.albumFold = albumFold
            self.album = album
            self.disc = disc
            self.track = track
            self.path = path
            self.id = id
        }

        // As a JSON array of the nine values, in order.
        init(from decoder: any Decoder) throws {
            var c = try decoder.unkeyedContainer()
            self.init(
                untagged: try c.decode(Int64.self), artistFold: try c.decode(String.self), artist: try c.decode(String.self),
                albumFold: try c.decode(String.self), album: try c.decode(String.self), disc: try c.decode(Int64.self),
                track: try c.decode(Int64.self), path: try c.decode(String.self), id: try c.decode(Int64.self))
            guard c.isAtEnd else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "more than nine values") }
        }

        func encode(to encoder: any Encoder) throws {
            var c = encoder.unkeyedContainer()
            try c.encode(untagged)
            try c.encode(artistFold)
            try c.encode(artist)
            try c.encode(albumFold)
            try c.encode(album)
            try c.encode(disc)
            try c.encode(track)
            try c.encode(path)
            try c.encode(id)
        }

        /// The values as the search statements bind them, after the needle.
        var arguments: StatementArguments {
            [untagged, artistFold, artist, albumFold, album, disc, track, path, id]
        }

    }

    private static let version = "m1"

    static func encode(after key: Key, query: String) -> String {
        // Encoding strings and integers cannot fail.
        let values = (try? JSONEncoder().encode(key)) ?? Data()
        var data = Data("\(version):\(SearchCursor.fingerprint(query)):".utf8)
        data.append(values)
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    static func decode(_ cursor: String, query: String) throws(ReelError) -> Key {
        var base64 = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else {
            throw invalid(cursor)
        }
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == version,
              let key = try? JSONDecoder().decode(Key.self, from: Data(parts[2].utf8))
        else { throw invalid(cursor) }
        guard parts[1] == SearchCursor.fingerprint(query) else {
            throw ReelError(
                .outOfRange,
                "the cursor \"\(cursor.prefix(40))\" belongs to a different search; repeat the same text, or search again without a cursor")
        }
        return key
    }

    private static func invalid(_ cursor: String) -> ReelError {
        ReelError(
            .outOfRange,
            "\"\(cursor.prefix(40))\" is not a music search cursor; pass the cursor of the previous page, or none to start over")
    }
}
