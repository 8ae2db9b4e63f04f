import ReelModel
import Testing

/// `MusicTrack.path(root:relativePath:)`, made in one string of its size, is byte for byte the
/// concatenation it stands for (`root`, a `/` unless it ends with one, `relativePath`).
@Suite struct MusicPathJoinTests {
    static func concatenated(_ root: String, _ relativePath: String) -> String {
        root.hasSuffix("/") ? root + relativePath : root + "/" + relativePath
    }

    @Test func joinsRootsWithAndWithoutTheirSlash() {
        #expect(MusicTrack.path(root: "/music", relativePath: "a/b.flac") == "/music/a/b.flac")
        #expect(MusicTrack.path(root: "/music/", relativePath: "a/b.flac") == "/music/a/b.flac")
        #expect(MusicTrack.path(root: "/", relativePath: "b.flac") == "/b.flac")
        #expect(MusicTrack.path(root: "/m", relativePath: "") == "/m/")
        #expect(MusicTrack.path(root: "", relativePath: "x") == "/x")
    }

    @Test func isTheConcatenationForShortLongAndNonASCIIPaths() {
        let roots = ["/", "/m", "/m/", "/srv/Musik/Sammlung", "/srv/Musik/Sammlung/", "/home/zoë/♫", "/データ/"]
        let pieces = ["", "a", "é", "e\u{301}", "🎵", "Björk/Homogenic/01 Hunter.flac", "\u{301}starts with a mark", "x/"]
        var checked = 0
        for root in roots {
            for first in pieces {
                for second in pieces {
                    for repeats in [1, 3, 20] {
                        let relativePath = String(repeating: first + "/" + second, count: repeats)
                        let joined = MusicTrack.path(root: root, relativePath: relativePath)
                        let expected = Self.concatenated(root, relativePath)
                        #expect(Array(joined.utf8) == Array(expected.utf8), "\(root) + \(relativePath)")
                        #expect(joined == expected)
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == roots.count * pieces.count * pieces.count * 3)
    }

    @Test func aTracksPathIsTheJoin() {
        let track = MusicTrack(
            id: 1, root: "/music", relativePath: "Artist/Album/01.flac", size: 1, modified: 0,
            audio: ScannedAudio(tags: TrackTags(), codec: "flac", sampleRate: 44100, channels: 2, duration: 1, hasEmbeddedCover: false))
        #expect(track.path == "/music/Artist/Album/01.flac")
    }
}
