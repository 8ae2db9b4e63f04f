// MPD's `status`, `currentsong` and `stats`: the core's state in MPD's fields and order.

import NIOCore
import ReelCore
import ReelModel

enum MPDStatusCommands {
    static func commands(_ context: MPDContext) -> [MPDCommand] {
        let core = context.core
        let view = context.view
        return [
            .now("status", .read, 0, 0) { _ in status(core) },
            MPDCommand("currentsong", .read, 0, 0) { request, reply in
                let summary = core.player.queueSummary
                guard let id = summary.current, let entry = core.player.entry(id: id) else {
                    return reply(.success(MPDResponse()))
                }
                let tags = request.client.tags
                view.songs(of: [entry], music: core.music) { songs in
                    var response = MPDResponse()
                    var song = songs.first ?? view.song(of: entry, item: nil)
                    // MPD 0.23.12's `currentsong` prints no `Prio` (its queue listings do).
                    song.priority = 0
                    song.write(into: &response, tags: tags)
                    reply(.success(response))
                }
            },
            MPDCommand("stats", .read, 0, 0) { _, reply in
                let uptime = Int((NIODeadline.now() - context.startedAt).nanoseconds / 1_000_000_000)
                let playtime = Int(core.player.secondsPlayed.rounded())
                let hasMusic = !context.view.musicFolders.isEmpty
                let lastScan = core.music.lastScanEnded
                core.music.browse({ catalog throws(ReelError) in
                    (try catalog.recordingTotals(), hasMusic ? try catalog.tagStats() : nil)
                }) { result in
                    switch result {
                    case .success(let (totals, music)):
                        var response = MPDResponse()
                        response.field("uptime", uptime)
                        response.field("playtime", playtime)
                        // As MPD: distinct Artist tags and Album tags, over every song.
                        response.field("artists", music?.artists ?? 0)
                        response.field("albums", totals.albums.union(music?.albums ?? []).count)
                        response.field("songs", totals.songs + (music?.songs ?? 0))
                        response.field("db_playtime", totals.playtime + Int((music?.durationMilliseconds ?? 0) / 1000))
                        let lastRecording = epochSeconds(totals.lastCreated) ?? 0
                        response.field("db_update", max(lastRecording, Int(lastScan ?? 0)))
                        reply(.success(response))
                    case .failure(let error):
                        reply(.failure(MPDAck(error)))
                    }
                }
            },
        ]
    }

    /// MPD's `status` fields, in MPD 0.23's order.
    static func status(_ core: ReelCore) -> MPDResponse {
        let player = core.player.state
        let summary = core.player.queueSummary
        var response = MPDResponse()
        if let volume = MPDPlaybackCommands.mpdVolume(core.mixer.state) { response.field("volume", volume) }
        response.field("repeat", summary.options.repeats ? 1 : 0)
        response.field("random", summary.options.random ? 1 : 0)
        response.field("single", summary.options.single == .oneshot ? "oneshot" : summary.options.single == .on ? "1" : "0")
        response.field("consume", summary.options.consume ? 1 : 0)
        response.field("partition", "default")
        response.field("playlist", summary.entriesVersion + 1)
        response.field("playlistlength", summary.length)
        response.field("mixrampdb", 0)
        let state: String
        switch player.state {
        case .stopped: state = "stop"
        case .playing: state = "play"
        case .paused: state = "pause"
        }
        response.field("state", state)
        if let current = summary.current, let position = core.player.entry(id: current)?.position {
            response.field("song", position)
            response.field("songid", current)
        }
        if player.state != .stopped {
            let elapsed = player.position
            let total = player.duration
            response.field("time", "\(MPDResponse.wholeSeconds(elapsed)):\(MPDResponse.wholeSeconds(total ?? 0))")
            response.field("elapsed", seconds: elapsed)
            response.field("bitrate", 0)
            if let total { response.field("duration", seconds: total) }
            if let format = player.format { response.field("audio", MPDSong.formatText(format)) }
        }
        let scan = core.music.progress.latest.value
        if scan.running { response.field("updating_db", scan.scan) }
        if let error = player.error { response.field("error", error.message) }
        if let next = summary.next, let position = core.player.entry(id: next)?.position {
            response.field("nextsong", position)
            response.field("nextsongid", next)
        }
        return response
    }
}

#if canImport(Glibc)
import Glibc
#endif

/// Seconds since 1970 of an ISO 8601 UTC time as the library writes it (`2026-11-22T14:03:05Z`).
func epochSeconds(_ iso: String) -> Int? {
    let parts = iso.split(whereSeparator: { "-T:Z".contains($0) }).compactMap { Int32($0) }
    guard parts.count >= 6 else { return nil }
    var fields = tm()
    fields.tm_year = parts[0] - 1900
    fields.tm_mon = parts[1] - 1
    fields.tm_mday = parts[2]
    fields.tm_hour = parts[3]
    fields.tm_min = parts[4]
    fields.tm_sec = parts[5]
    return Int(timegm(&fields))
}

extension QueueEntry {
    /// The recording's id when this entry is one.
    var itemID: String? {
        if case .item(let id, _, _) = source { return id }
        return nil
    }
}
