// MPD's commands for streams: `load` of a station playlist URL (`loadStations`, called by the
// stored playlists' `load`), and the tags a client sets on a stream (`addtagid`, `cleartagid`:
// upmpdcli names what a stream plays so).

import ReelCore
import ReelModel

/// `addtagid ID TAG VALUE` / `cleartagid ID [TAG]` on URL entries, with MPD 0.23's answers.
enum MPDStreamCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let player = context.core.player
        return [
            MPDCommand("addtagid", .add, 3, 3) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                let tag = try entryTag(request[1])
                try mpd(player.addTag(tag, value: request[2], entry: id, saved: MPDQueueCommands.saved(reply)))
            },
            MPDCommand("cleartagid", .add, 1, 2) { request, reply throws(MPDAck) in
                let id = try request.unsigned(0)
                let tag = request.count == 2 ? try entryTag(request[1]) : nil
                try mpd(player.clearTag(tag, entry: id, saved: MPDQueueCommands.saved(reply)))
            },
        ]
    }

    /// `load URL`: the streams of the station playlist at `url`, fetched and expanded by the core
    /// into the queue (one change); a range or a position is refused.
    static func loadStations(_ context: MPDContext, _ request: MPDRequest, reply: @escaping MPDReply) {
        guard request.count == 1 else {
            return reply(.failure(MPDAck(.argument, "a range or a position is not taken with a URL: load it whole")))
        }
        context.core.player.add(.stationPlaylist(request[0]), at: nil, afterCurrent: false) { result in
            // As MPD, a URL that gives no playlist is "no such playlist"; the message says why.
            reply(result.map { _ in MPDResponse() }.mapError { MPDAck(.noExist, $0.message) })
        }
    }

    /// A tag edit's error in MPD 0.23's words.
    static func mpd(_ body: @autoclosure () throws(ReelError) -> Void) throws(MPDAck) {
        do throws(ReelError) {
            try body()
        } catch {
            switch error.reason {
            case .notFound: throw MPDAck(.noExist, "No such song")
            case .forbidden: throw MPDAck(.permission, "Cannot edit tags of local file")
            default: throw MPDAck(error)
            }
        }
    }

    /// The tag MPD names `name`: `Unknown tag type: NAME` as MPD when it has none; a tag MPD
    /// knows but Reel does not keep on a stream is refused by name.
    static func entryTag(_ name: String) throws(MPDAck) -> EntryTag {
        guard let known = MPDTag.mpdName(name) else { throw MPDAck(.argument, "Unknown tag type: \(name)") }
        guard let tag = EntryTag(rawValue: known.lowercased()) else {
            throw MPDAck(.argument, "Reel keeps Title, Name, Artist and Album on a stream, not \(known)")
        }
        return tag
    }
}
