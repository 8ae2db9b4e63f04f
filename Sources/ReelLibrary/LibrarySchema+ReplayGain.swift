// ReplayGain in the library (schema v4): each music file's tags, each recording's measured gain.

import GRDB
import ReelModel

extension LibrarySchema {
    /// v4. `music_files` keeps the ReplayGain tags the scan read (`rg_known = 1` once a scan
    /// wrote the row since v4: a row from before it says nothing, and the player reads the file's
    /// tags instead); `items` keeps a recording's gain measured at the end of its take (EBU R128
    /// loudness to −18 LUFS) and its sample peak.
    static let replayGainSQL = """
        ALTER TABLE music_files ADD COLUMN rg_known INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE music_files ADD COLUMN rg_track_gain REAL;
        ALTER TABLE music_files ADD COLUMN rg_track_peak REAL;
        ALTER TABLE music_files ADD COLUMN rg_album_gain REAL;
        ALTER TABLE music_files ADD COLUMN rg_album_peak REAL;
        ALTER TABLE items ADD COLUMN rg_gain REAL;
        ALTER TABLE items ADD COLUMN rg_peak REAL;
        """

    /// The ReplayGain columns a scan writes (after `MusicIndex.writtenColumns`' others).
    static let replayGainColumns = "rg_known, rg_track_gain, rg_track_peak, rg_album_gain, rg_album_peak"

    /// The arguments of `replayGainColumns` for a file's tags.
    static func replayGainValues(_ info: ReplayGainInfo) -> StatementArguments {
        [true, info.track?.gain, info.track?.peak, info.album?.gain, info.album?.peak]
    }
}

extension MusicIndex {
    /// The ReplayGain tags the index holds for a file (no tag read); nil when the file is not
    /// indexed, or was indexed before the index kept them.
    public func replayGain(root: String, relativePath: String) throws(ReelError) -> ReplayGainInfo? {
        try store.reading("read the ReplayGain of \(relativePath) of \(root)") { db in
            let row = try Row.fetchOne(
                db.cachedStatement(
                    sql: "SELECT \(LibrarySchema.replayGainColumns) FROM music_files WHERE root = ? AND path = ?"),
                arguments: [root, relativePath])
            guard let row, row[0] as Bool else { return nil }
            func value(_ gain: Double?, _ peak: Double?) -> ReplayGainValue? {
                gain.map { ReplayGainValue(gain: $0, peak: peak) }
            }
            return ReplayGainInfo(track: value(row[1], row[2]), album: value(row[3], row[4]))
        }
    }
}

extension LibraryStore {
    /// A recording's measured ReplayGain (as its track gain), nil when it has none (recorded
    /// before Reel measured takes, or too short or silent to measure).
    public func replayGain(ofRecording id: String) throws(ReelError) -> ReplayGainInfo? {
        try reading("read the ReplayGain of recording \(id)") { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT rg_gain, rg_peak FROM items WHERE id = ?", arguments: [id]),
                let gain = row[0] as Double?
            else { return nil }
            return ReplayGainInfo(track: ReplayGainValue(gain: gain, peak: row[1]))
        }
    }

    /// Keeps a recording's measured gain (dB to −18 LUFS) and sample peak (0…1).
    public func setReplayGain(ofRecording id: String, gain: Double, peak: Double?) throws(ReelError) {
        try writing("keep the loudness of recording \(id)") { db in
            try db.execute(sql: "UPDATE items SET rg_gain = ?, rg_peak = ? WHERE id = ? AND kind = 'recording'", arguments: [gain, peak, id])
        }
    }
}
