// The music index keeps each file's ReplayGain tags (schema v4), so playing needs no tag read.
import Foundation
import GRDB
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicReplayGainTests {
    static let tagged = ReplayGainInfo(
        track: ReplayGainValue(gain: -6.5, peak: 0.9), album: ReplayGainValue(gain: -8, peak: nil))

    func file(_ path: String, _ info: ReplayGainInfo) -> ScannedMusicFile {
        var file = scannedFile(path, title: path)
        file.audio.replayGain = info
        return file
    }

    @Test func theIndexKeepsEachFilesGainsThroughUpdatesAndMoves() throws {
        let music = try MusicFixture()
        try music.index.write(files: [file("a.flac", Self.tagged), file("b.flac", .none)])
        #expect(try music.index.replayGain(root: "/music", relativePath: "a.flac") == Self.tagged)
        // Known to have none, not unknown.
        #expect(try music.index.replayGain(root: "/music", relativePath: "b.flac") == ReplayGainInfo.none)
        #expect(try music.index.replayGain(root: "/music", relativePath: "c.flac") == nil)
        // Re-tagged: the upsert replaces the values.
        let retagged = ReplayGainInfo(track: ReplayGainValue(gain: 1.25))
        try music.index.write(files: [file("a.flac", retagged)])
        #expect(try music.index.replayGain(root: "/music", relativePath: "a.flac") == retagged)
        // Moved (the index keeps the id): the gains go with it.
        var moved = file("sub/a.flac", retagged)
        moved.replacing = try #require(try music.index.track(root: "/music", relativePath: "a.flac")).id
        try music.index.write(files: [moved])
        #expect(try music.index.replayGain(root: "/music", relativePath: "sub/a.flac") == retagged)
    }

    @Test func aRowWrittenBeforeTheIndexKeptGainsSaysNothing() throws {
        let music = try MusicFixture()
        try music.index.write(files: [file("a.flac", Self.tagged)])
        try music.store.writing("forget") { db in try db.execute(sql: "UPDATE music_files SET rg_known = 0") }
        #expect(try music.index.replayGain(root: "/music", relativePath: "a.flac") == nil)
    }
}

@Suite struct RecordingReplayGainTests {
    @Test func aRecordingKeepsItsMeasuredGain() throws {
        let directory = TemporaryDirectory()
        let store = try LibraryStore(directory: directory.file("data"))
        let item = try store.addRecording(name: "take", format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 2))
        #expect(try store.replayGain(ofRecording: item.id) == nil)
        try store.setReplayGain(ofRecording: item.id, gain: 4.5, peak: 0.25)
        #expect(try store.replayGain(ofRecording: item.id) == ReplayGainInfo(track: ReplayGainValue(gain: 4.5, peak: 0.25)))
    }

    /// The recorder finishes a take's row and keeps its gain in one commit.
    @Test func aFinishedRecordingsRowUpdateKeepsItsGainWithItsLength() throws {
        let directory = TemporaryDirectory()
        let store = try LibraryStore(directory: directory.file("data"))
        let item = try store.addRecording(name: "take", format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 1))
        let updated = try store.updateRecording(
            id: item.id, duration: 5, size: 1000, finished: true, replayGain: ReplayGainValue(gain: -3.25, peak: 0.5))
        #expect(updated.duration == 5)
        #expect(try store.inProgressRecordings().isEmpty)
        #expect(try store.replayGain(ofRecording: item.id) == ReplayGainInfo(track: ReplayGainValue(gain: -3.25, peak: 0.5)))
        // Without a gain (a take too short or quiet to measure), none is kept.
        let other = try store.addRecording(name: "quiet", format: AudioFormat(codec: "flac", sampleRate: 48000, channels: 1))
        try store.updateRecording(id: other.id, duration: 0.2, size: 100, finished: true)
        #expect(try store.replayGain(ofRecording: other.id) == nil)
    }
}
