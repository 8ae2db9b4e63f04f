import ReelStreamFormats
import Testing

private func parse(_ text: String, url: String = "https://cdn.example/radio/x.m3u8") throws(StreamFormatError) -> HLSPlaylist {
    try parseHLSPlaylist(Array(text.utf8), url: url)
}

private func media(_ text: String) throws -> HLSMediaPlaylist {
    guard case .media(let playlist) = try parse(text) else { throw StreamFormatError(.malformed, "not media") }
    return playlist
}

/// A live sliding-window playlist: `count` segments of `duration` s from `first`.
private func live(first: Int64, count: Int, duration: Double = 6, target: Int = 6, endList: Bool = false) -> HLSMediaPlaylist {
    HLSMediaPlaylist(
        targetDuration: target, mediaSequence: first,
        segments: (0..<count).map { HLSSegment(sequence: first + Int64($0), url: "https://h/s\(first + Int64($0)).ts", duration: duration) },
        endList: endList)
}

@Suite struct HLSParserTests {
    @Test func bbcStyleMasterPicksTheBestAudioVariant() throws {
        let text = """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:PROGRAM-ID=1,BANDWIDTH=101760,CODECS="mp4a.40.5"
            low/index.m3u8
            #EXT-X-STREAM-INF:PROGRAM-ID=1,BANDWIDTH=366208,AVERAGE-BANDWIDTH=330000,CODECS="mp4a.40.2"
            https://other.example/high/index.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,CODECS="avc1.64001f,mp4a.40.2",RESOLUTION=1280x720
            video/index.m3u8
            """
        guard case .master(let master) = try parse(text) else {
            Issue.record("not a master")
            return
        }
        #expect(master.variants.count == 3)
        #expect(master.variants[0] == HLSVariant(url: "https://cdn.example/radio/low/index.m3u8", bandwidth: 101_760, codecs: ["mp4a.40.5"]))
        #expect(master.variants[1].averageBandwidth == 330_000)
        #expect(master.variants[2].codecs == ["avc1.64001f", "mp4a.40.2"])
        #expect(!master.variants[2].isAudioOnly)
        #expect(master.chooseAudio() == "https://other.example/high/index.m3u8")
        #expect(master.chooseAudio(maximumBandwidth: 200_000) == "https://cdn.example/radio/low/index.m3u8")
        #expect(master.chooseAudio(maximumBandwidth: 1000) == "https://cdn.example/radio/low/index.m3u8")
    }

    @Test func videoMasterWithAnAudioGroupPicksTheRendition() throws {
        let text = """
            #EXTM3U
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="English",DEFAULT=YES,URI="audio/en.m3u8"
            #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aac",NAME="Deutsch",DEFAULT=NO,URI="audio/de.m3u8"
            #EXT-X-STREAM-INF:BANDWIDTH=800000,CODECS="avc1.4d401e,mp4a.40.2",RESOLUTION=640x360,AUDIO="aac"
            v360.m3u8
            """
        guard case .master(let master) = try parse(text) else {
            Issue.record("not a master")
            return
        }
        #expect(master.audioRenditions.map(\.name) == ["English", "Deutsch"])
        #expect(master.chooseAudio() == "https://cdn.example/radio/audio/en.m3u8")
    }

    @Test func muxedOnlyMasterPicksTheLowestBandwidth() throws {
        let master = HLSMasterPlaylist(variants: [
            HLSVariant(url: "a", bandwidth: 900, codecs: ["avc1.1", "mp4a.40.2"]),
            HLSVariant(url: "b", bandwidth: 300, codecs: ["avc1.1", "mp4a.40.2"], resolution: "320x180"),
        ])
        #expect(master.chooseAudio() == "b")
    }

    @Test func mediaPlaylistWithEverything() throws {
        let playlist = try media("""
            #EXTM3U
            #EXT-X-VERSION:7
            #EXT-X-TARGETDURATION:4
            #EXT-X-MEDIA-SEQUENCE:1000
            #EXT-X-DISCONTINUITY-SEQUENCE:3
            #EXT-X-KEY:METHOD=NONE
            #EXT-X-MAP:URI="init.mp4"
            #EXT-X-PROGRAM-DATE-TIME:2026-11-27T17:00:00Z
            #EXTINF:3.84,Artist - Title
            seg1000.m4s
            #EXTINF:3.84,
            seg1001.m4s
            #EXT-X-DISCONTINUITY
            #EXT-X-MAP:URI="init2.mp4",BYTERANGE="720@0"
            #EXTINF:4.0
            #EXT-X-BYTERANGE:1000@720
            all.mp4
            #EXTINF:4.0
            #EXT-X-BYTERANGE:500
            all.mp4
            #EXT-X-ENDLIST
            """)
        #expect(playlist.targetDuration == 4)
        #expect(playlist.mediaSequence == 1000)
        #expect(playlist.discontinuitySequence == 3)
        #expect(playlist.endList)
        #expect(!playlist.isLive)
        #expect(playlist.segments.map(\.sequence) == [1000, 1001, 1002, 1003])
        #expect(playlist.segments[0].title == "Artist - Title")
        #expect(playlist.segments[0].url == "https://cdn.example/radio/seg1000.m4s")
        #expect(playlist.segments[0].initSection == HLSInitSection(url: "https://cdn.example/radio/init.mp4"))
        #expect(playlist.segments[1].title == nil)
        #expect(playlist.segments.map(\.discontinuity) == [false, false, true, false])
        #expect(playlist.segments[2].initSection == HLSInitSection(url: "https://cdn.example/radio/init2.mp4", byteRange: HLSByteRange(length: 720, offset: 0)))
        #expect(playlist.segments[2].byteRange == HLSByteRange(length: 1000, offset: 720))
        #expect(playlist.segments[3].byteRange == HLSByteRange(length: 500, offset: 1720))
        #expect(abs(playlist.totalDuration - 15.68) < 1e-9)
    }

    @Test(arguments: ["AES-128", "SAMPLE-AES", "SAMPLE-AES-CTR"])
    func encryptionIsAClearError(method: String) {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-KEY:METHOD=\(method),URI=\"key.bin\",IV=0x1234\n#EXTINF:6,\na.ts\n"
        do {
            _ = try parse(text)
            Issue.record("accepted")
        } catch {
            #expect(error.kind == .unsupported)
            #expect(error.message.contains("encrypted HLS is not supported"))
            #expect(error.message.contains(method))
        }
    }

    @Test(arguments: [
        ("", "empty"), ("http://a/x.mp3\n", "does not start with #EXTM3U"),
        ("#EXTM3U\n#EXTINF:6,\na.ts\n", "no EXT-X-TARGETDURATION"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:0\n", "EXT-X-TARGETDURATION"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:nan,\na.ts\n", "#EXTINF duration"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:-1,\na.ts\n", "#EXTINF duration"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\nb.ts\n", "without #EXTINF"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:9223372036854775807\n", "EXT-X-MEDIA-SEQUENCE"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\n#EXT-X-BYTERANGE:100\na.ts\n", "without an offset"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", "has no URI"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MAP:BYTERANGE=\"1@0\"\n", "EXT-X-MAP without a URI"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:6,\nfile:///etc/passwd\n", "not an http or https URL: file:///etc/passwd"),
        ("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nsmb://nas/x.m3u8\n", "not an http or https URL"),
        ("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXT-X-MAP:URI=\"data:,x\"\n", "not an http or https URL"),
    ])
    func malformedPlaylistsNameTheProblem(text: String, message: String) {
        do {
            _ = try parse(text)
            Issue.record("accepted: \(text)")
        } catch {
            #expect(error.message.contains(message), "\(error.message)")
        }
    }

    @Test func entryBound() {
        let limits = PlaylistLimits(maximumBytes: 1 << 20, maximumEntries: 5, maximumLineLength: 100)
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n" + String(repeating: "#EXTINF:1,\na.ts\n", count: 6)
        #expect(throws: StreamFormatError(.tooLarge, "the HLS playlist lists more than 5 entries")) {
            try parseHLSPlaylist(Array(text.utf8), url: "http://h/", limits: limits)
        }
    }
}

@Suite struct HLSSegmentPlannerTests {
    func drain(_ planner: inout HLSSegmentPlanner) -> [HLSSegmentPlanner.Fetch] {
        var fetches: [HLSSegmentPlanner.Fetch] = []
        while let fetch = planner.nextFetch() { fetches.append(fetch) }
        return fetches
    }

    @Test func liveIsJoinedThreeTargetDurationsFromTheEdge() {
        var planner = HLSSegmentPlanner()
        let events = planner.playlistLoaded(live(first: 100, count: 10), loadStartedAt: 0)
        #expect(events == [.joined(sequence: 107, secondsBehindLiveEdge: 18)])
        #expect(drain(&planner).map(\.segment.sequence) == [107, 108, 109])
        #expect(planner.nextReloadAt == 6)
        #expect(!planner.isFinished)
    }

    @Test func shortSegmentsJoinFurtherBackInSegmentsButTheSameInTime() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 0, count: 20, duration: 1.9, target: 2), loadStartedAt: 0)
        // 3 × 2 s = 6 s: four segments of 1.9 s (7.6 s) reach it.
        #expect(drain(&planner).map(\.segment.sequence) == [16, 17, 18, 19])
    }

    @Test func aShortPlaylistIsPlayedWhole() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 5, count: 2), loadStartedAt: 0)
        #expect(drain(&planner).map(\.segment.sequence) == [5, 6])
    }

    @Test func slidingWindowHandsOutEachNewSegmentOnce() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 0)
        #expect(drain(&planner).map(\.segment.sequence) == [102, 103, 104])
        #expect(planner.playlistLoaded(live(first: 101, count: 5), loadStartedAt: 6) == [])
        let fetches = drain(&planner)
        #expect(fetches.map(\.segment.sequence) == [105])
        #expect(fetches.allSatisfy { !$0.discontinuity })
        #expect(planner.playlistLoaded(live(first: 103, count: 5), loadStartedAt: 12) == [])
        #expect(drain(&planner).map(\.segment.sequence) == [106, 107])
        #expect(planner.nextReloadAt == 18)
    }

    @Test func anUnchangedPlaylistIsReloadedAfterHalfATargetDuration() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 0)
        _ = drain(&planner)
        #expect(planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 6) == [.unchanged(times: 1)])
        #expect(planner.nextReloadAt == 9)
        #expect(planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 9) == [.unchanged(times: 2)])
        #expect(planner.unchangedLoads == 2)
        #expect(planner.lastChangeAt == 0)
        _ = planner.playlistLoaded(live(first: 101, count: 5), loadStartedAt: 12)
        #expect(planner.nextReloadAt == 18)
        #expect(planner.unchangedLoads == 0)
    }

    @Test func expiredSegmentsAreSkippedAndTheLiveEdgeRejoined() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 0)
        _ = drain(&planner)  // up to 104
        let events = planner.playlistLoaded(live(first: 120, count: 5), loadStartedAt: 200)
        #expect(events == [.skipped(count: 15)])
        let fetches = drain(&planner)
        #expect(fetches.map(\.segment.sequence) == [122, 123, 124])
        #expect(fetches.map(\.discontinuity) == [true, false, false])
    }

    @Test func aRestartedEncoderIsRejoined() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 5000, count: 5), loadStartedAt: 0)
        _ = drain(&planner)
        let events = planner.playlistLoaded(live(first: 0, count: 4), loadStartedAt: 30)
        #expect(events == [.restarted(from: 5004, to: 0)])
        let fetches = drain(&planner)
        #expect(fetches.map(\.segment.sequence) == [1, 2, 3])
        #expect(fetches.first?.discontinuity == true)
    }

    @Test func aLaggingCopyOfThePlaylistIsNotARestart() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 100, count: 5), loadStartedAt: 0)
        _ = drain(&planner)
        #expect(planner.playlistLoaded(live(first: 98, count: 5), loadStartedAt: 6) == [.unchanged(times: 1)])
        #expect(planner.nextFetch() == nil)
    }

    @Test func endListFinishesTheStream() {
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(live(first: 0, count: 5), loadStartedAt: 0)
        _ = drain(&planner)
        #expect(planner.playlistLoaded(live(first: 1, count: 6, endList: true), loadStartedAt: 6) == [.ended])
        #expect(planner.nextReloadAt == nil)
        #expect(!planner.isFinished)
        #expect(drain(&planner).map(\.segment.sequence) == [5, 6])
        #expect(planner.isFinished)
        #expect(planner.playlistLoaded(live(first: 0, count: 9), loadStartedAt: 12) == [])
    }

    @Test func aFinitePlaylistStartsAtTheBeginning() {
        var planner = HLSSegmentPlanner()
        let events = planner.playlistLoaded(live(first: 0, count: 4, endList: true), loadStartedAt: 0)
        #expect(events == [.joined(sequence: 0, secondsBehindLiveEdge: 24), .ended])
        #expect(drain(&planner).map(\.segment.sequence) == [0, 1, 2, 3])
        #expect(planner.isFinished)
        #expect(planner.nextReloadAt == nil)
    }

    @Test func initSectionIsFetchedFirstAndWhenItChanges() {
        let first = HLSInitSection(url: "https://h/init1.mp4")
        let second = HLSInitSection(url: "https://h/init2.mp4")
        let playlist = HLSMediaPlaylist(targetDuration: 2, segments: [
            HLSSegment(sequence: 0, url: "https://h/0.m4s", duration: 2, initSection: first),
            HLSSegment(sequence: 1, url: "https://h/1.m4s", duration: 2, initSection: first),
            HLSSegment(sequence: 2, url: "https://h/2.m4s", duration: 2, discontinuity: true, initSection: second),
            HLSSegment(sequence: 3, url: "https://h/3.m4s", duration: 2, initSection: second),
        ], endList: true)
        var planner = HLSSegmentPlanner()
        _ = planner.playlistLoaded(playlist, loadStartedAt: 0)
        let fetches = drain(&planner)
        #expect(fetches.map(\.initSection) == [first, nil, second, nil])
        #expect(fetches.map(\.discontinuity) == [false, false, true, false])
    }

    @Test func anEmptyLivePlaylistIsJoinedOnceItHasSegments() {
        var planner = HLSSegmentPlanner()
        #expect(planner.playlistLoaded(live(first: 0, count: 0), loadStartedAt: 0) == [.unchanged(times: 1)])
        #expect(planner.nextReloadAt == 3)
        #expect(planner.playlistLoaded(live(first: 0, count: 1), loadStartedAt: 3) == [.joined(sequence: 0, secondsBehindLiveEdge: 6)])
    }

    @Test func parsedFixtureThroughThePlanner() throws {
        var planner = HLSSegmentPlanner()
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-MEDIA-SEQUENCE:7\n"
        for index in 7..<13 { text += "#EXTINF:10.0,\nhttps://h/\(index).aac\n" }
        _ = planner.playlistLoaded(try media(text), loadStartedAt: 100)
        #expect(drain(&planner).map(\.segment.url) == ["https://h/10.aac", "https://h/11.aac", "https://h/12.aac"])
        #expect(planner.nextReloadAt == 110)
    }
}
