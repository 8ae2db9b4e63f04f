@testable import ReelAudio
@testable import ReelCore
import ReelModel
import Testing

/// The rules of station playlists in the queue, without I/O: a playlist entry replaced in place
/// by its streams, what a fetch gives for each kind of addition, and tags a client sets.
@Suite struct StationExpansionTests {
    func queue(_ sources: [PlayerSource]) throws -> (PlayQueue, [QueueEntry]) {
        var queue = PlayQueue()
        let added = try queue.add(sources.map { NewQueueEntry(source: $0) }, at: nil, afterCurrent: false)
        return (queue, added)
    }

    @Test func aPlaylistEntryIsReplacedInPlaceByItsStreamsAndStaysCurrent() throws {
        let list = PlayerSource.url("http://h/list.pls", name: nil, title: nil)
        var (queue, added) = try queue([.file(path: "/a.flac"), list, .file(path: "/b.flac")])
        try queue.setCurrent(added[1].id)
        let streams = [ListedStream(url: "http://h/one", title: "One"), ListedStream(url: "http://h/two")]
        let expanded = try #require(PlayerController.expand(entry: added[1].id, into: PlayerController.entries(of: streams), in: &queue))
        #expect(queue.allEntries.map(\.source) == [
            .file(path: "/a.flac"), .url("http://h/one", name: nil, title: "One"), .url("http://h/two", name: nil, title: nil),
            .file(path: "/b.flac"),
        ])
        #expect(queue.current == expanded[0].id)
        #expect(queue.entry(id: added[1].id) == nil)
        // An entry gone meanwhile expands to nothing, and the queue is left alone.
        let before = queue.summary
        #expect(PlayerController.expand(entry: added[1].id, into: PlayerController.entries(of: streams), in: &queue) == nil)
        #expect(queue.summary == before)
    }

    @Test func whatAFetchGivesForEachAddition() throws {
        let streams = [ListedStream(url: "http://h/one", title: "One")]
        let url = "http://h/list.m3u"
        #expect(try PlayerController.entries(of: .urlOrPlaylist(url), fetched: .success(streams)).map(\.source)
            == [.url("http://h/one", name: nil, title: "One")])
        // A stream (its server sends audio): queued as given by queue.add, refused by load.
        #expect(try PlayerController.entries(of: .urlOrPlaylist(url), fetched: .success(nil)).map(\.source)
            == [.url(url, name: nil, title: nil)])
        #expect(throws: ReelError.self) { try PlayerController.entries(of: .stationPlaylist(url), fetched: .success(nil)) }
        let failure = ReelError(.unreachable, "\(url) answered HTTP 404")
        #expect(throws: failure) { try PlayerController.entries(of: .stationPlaylist(url), fetched: .failure(failure)) }
        #expect(PlayerController.namesStationPlaylist("http://h/a.PLS?x=1") && PlayerController.namesStationPlaylist("https://h/x.xspf"))
        #expect(!PlayerController.namesStationPlaylist("http://h/live.mp3") && !PlayerController.namesStationPlaylist("http://h/m3u"))
    }

    @Test func tagsOfAnEntryChangeItsVersionsOnlyWhenTheyChange() throws {
        var (queue, added) = try queue([.url("http://h/live", name: nil, title: nil)])
        let before = queue.summary
        queue.updateTags(DisplayTags(artist: "Someone"), for: added[0].id)
        #expect(queue.entry(id: added[0].id)?.tags == DisplayTags(artist: "Someone"))
        #expect(queue.summary.version == before.version + 1 && queue.summary.entriesVersion == before.entriesVersion + 1)
        let after = queue.summary
        queue.updateTags(DisplayTags(artist: "Someone"), for: added[0].id)
        queue.updateTags(nil, for: 999)
        #expect(queue.summary == after)
    }
}
