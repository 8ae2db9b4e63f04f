// `queue.add`'s parameters decoded into the core's additions: one source, or `sources`.
import ReelCore
import ReelModel
import ReelProtocol
import Testing

@testable import ReelDaemon

@Suite struct QueueAddParamsTests {
    func params(_ object: JSONObject) -> Params { Params(object, method: "queue.add") }

    @Test func oneSourceIsAFileARecordingATrackOrAnAlbum() throws {
        #expect(try params(["file": "/m/a.flac"]).source() == .file("/m/a.flac"))
        #expect(try params(["path": "/Talks"]).source() == .recording(.path("/Talks")))
        #expect(try params(["item": "abc"]).source() == .recording(.id("abc")))
        #expect(try params(["track": 7]).source() == .musicTrack(7))
        #expect(try params(["album": "One"]).source() == .album(name: "One", albumArtist: nil))
        #expect(try params(["album": "One", "albumArtist": "A"]).source() == .album(name: "One", albumArtist: "A"))
    }

    @Test func aSourceNamingTwoThingsOrNoneIsRefusedWithWhy() {
        for (object, words) in [
            (["track": 7, "album": "One"], "not both"),
            (["albumArtist": "A"], "goes with"),
            (["track": 7, "file": "/m/a.flac"], "one of them"),
            ([:], "needs"),
            (["file": "a.flac"], "absolute"),
        ] as [(JSONObject, String)] {
            #expect(throws: RPCError.self) { try params(object).source() }
            do {
                _ = try params(object).source()
            } catch {
                #expect(error.message.contains(words), "\(object): \(error.message)")
            }
        }
    }

    @Test func sourcesAreReadInOrderWithTheSkippableOnes() throws {
        let list: JSONValue = [["file": "/m/a.flac", "skippable": true], ["path": "/Talks"], ["track": 3]]
        let (additions, skippable) = try params([:]).sources(list)
        #expect(additions == [.file("/m/a.flac"), .recording(.path("/Talks")), .musicTrack(3)])
        #expect(skippable == [0])
    }

    @Test func badSourcesNameTheirPlace() {
        func message(_ value: JSONValue) -> String? {
            do {
                _ = try params([:]).sources(value)
                return nil
            } catch {
                return error.message
            }
        }
        #expect(message([])?.contains("non-empty array") == true)
        #expect(message("x")?.contains("non-empty array") == true)
        #expect(message([["file": "/a.flac"], 3])?.contains("\"sources\"[1] must be an object") == true)
        #expect(message([["file": "/a.flac"], ["file": "/b.flac", "position": 2]])?.contains("\"sources\"[1]: unknown parameter") == true)
        #expect(message([["file": "/a.flac", "skippable": "yes"]])?.hasPrefix("\"sources\"[0]") == true)
    }
}
