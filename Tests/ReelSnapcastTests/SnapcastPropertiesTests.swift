import ReelModel
import ReelProtocol
import Testing
@testable import ReelSnapcast

/// A playing state of a file, its position true at monotonic second 100.
func playing(_ path: String = "/music/A tone.flac", entry: Int? = 3, position: Double = 10, duration: Double? = 60) -> PlayerState {
    PlayerState(state: .playing, position: position, duration: duration, source: .file(path: path), entry: entry, timestamp: 100)
}

func queue(length: Int = 2, current: Int? = 3, version: Int = 7, options: QueueOptions = QueueOptions()) -> QueueSummary {
    QueueSummary(version: version, entriesVersion: version, length: length, current: current, next: nil, options: options)
}

@Suite("reeld's state as Snapcast properties")
struct SnapcastPropertiesTests {
    @Test func disconnectedIsStoppedAndUncontrollable() {
        let properties = SnapcastProperties.properties(of: nil, at: 5)
        #expect(properties["playbackStatus"] == "stopped")
        #expect(properties["canControl"] == false)
        for flag in ["canGoNext", "canGoPrevious", "canPlay", "canPause", "canSeek"] { #expect(properties[flag] == false) }
        #expect(properties["volume"] == nil)
        #expect(SnapcastProperties.metadata(of: nil) == [:])
    }

    @Test func playingFile() {
        let view = ReeldView(player: playing(), queue: queue(options: QueueOptions(repeats: true, random: true)),
                             mixer: MixerState(volume: 85, muted: false, kind: .software))
        let properties = SnapcastProperties.properties(of: view, at: 102.5)
        #expect(properties == [
            "playbackStatus": "playing", "loopStatus": "playlist", "shuffle": true, "volume": 85, "mute": false,
            "position": 12.5, "canGoNext": true, "canGoPrevious": true, "canPlay": true, "canPause": true,
            "canSeek": true, "canControl": true,
        ])
        #expect(SnapcastProperties.metadata(of: view) == [
            "trackId": "3", "title": "A tone.flac", "duration": 60.0,
            "url": "file:///music/A%20tone.flac",
        ])
    }

    @Test func positionStaysWhenPausedAndStopsAtTheEnd() {
        var player = playing(position: 59)
        #expect(SnapcastProperties.position(of: player, at: 110) == 60)
        player.state = .paused
        #expect(SnapcastProperties.position(of: player, at: 110) == 59)
    }

    @Test func stoppedWithAQueue() {
        let stopped = PlayerState(state: .stopped, duration: 60, source: .file(path: "/a.wav"), entry: 3)
        let view = ReeldView(player: stopped, queue: queue(), mixer: MixerState(volume: nil, muted: false, kind: .none))
        let properties = SnapcastProperties.properties(of: view, at: 1)
        #expect(properties["playbackStatus"] == "stopped")
        #expect(properties["canPlay"] == true && properties["canPause"] == true)
        #expect(properties["canGoNext"] == false && properties["canSeek"] == false)
        #expect(properties["volume"] == nil, "no mixer: no volume")
        #expect(SnapcastProperties.metadata(of: view)["title"] == "a.wav")
    }

    @Test func emptyQueueCannotPlay() {
        let view = ReeldView(player: .stopped, queue: queue(length: 0, current: nil), mixer: nil)
        let properties = SnapcastProperties.properties(of: view, at: 1)
        #expect(properties["canPlay"] == false && properties["canPause"] == false && properties["canControl"] == true)
        #expect(SnapcastProperties.metadata(of: view) == [:])
    }

    @Test func loopStatusFromRepeatAndSingle() {
        #expect(SnapcastProperties.loopStatus(QueueOptions()) == .none)
        #expect(SnapcastProperties.loopStatus(QueueOptions(single: .on)) == .none)
        #expect(SnapcastProperties.loopStatus(QueueOptions(repeats: true)) == .playlist)
        #expect(SnapcastProperties.loopStatus(QueueOptions(repeats: true, single: .on)) == .track)
        #expect(SnapcastProperties.loopStatus(QueueOptions(repeats: true, single: .oneshot)) == .track)
    }

    @Test func recordingMetadata() {
        let player = PlayerState(state: .paused, position: 1, duration: 150,
                                 source: .item(id: "01a2", path: "/Meetings/Standup", name: "Standup"), entry: 9, timestamp: 1)
        #expect(SnapcastProperties.metadata(of: ReeldView(player: player, queue: queue(current: 9))) == [
            "trackId": "9", "title": "Standup", "duration": 150.0, "album": "Meetings",
        ])
        let atRoot = PlayerState(state: .paused, source: .item(id: "01a3", path: "/Idea", name: "Idea"), entry: 2)
        #expect(SnapcastProperties.metadata(of: ReeldView(player: atRoot, queue: queue(current: 2)))["album"] == nil)
    }

    @Test func currentEntryFromTheQueueWhenThePlayerHasNone() {
        var view = ReeldView(player: .stopped, queue: queue(current: 5))
        #expect(view.entryToLookUp == 5)
        #expect(SnapcastProperties.metadata(of: view) == [:])
        view.currentEntry = QueueEntry(id: 5, position: 1, source: .file(path: "/m/b.ogg"), duration: 3)
        #expect(view.entryToLookUp == nil)
        #expect(SnapcastProperties.metadata(of: view)["title"] == "b.ogg")
        #expect(SnapcastProperties.metadata(of: view)["trackId"] == "5")
    }

    @Test func fileURLsAreEscaped() {
        #expect(SnapcastProperties.fileURL("/a b/ü%#?.flac") == "file:///a%20b/%C3%BC%25%23%3F.flac")
    }
}

@Suite("Commands as reeld's methods")
struct ReeldCommandsTests {
    @Test func commands() {
        #expect(ReeldCommands.call(for: .play) == ReeldCall("player.play"))
        #expect(ReeldCommands.call(for: .playPause) == ReeldCall("player.toggle"))
        #expect(ReeldCommands.call(for: .seek(offset: -5)) == ReeldCall("player.seek", ["offset": -5.0]))
        #expect(ReeldCommands.call(for: .setPosition(30)) == ReeldCall("player.seek", ["position": 30.0]))
        #expect(ReeldCommands.call(for: .previous) == ReeldCall("player.previous"))
    }

    @Test func properties() {
        #expect(ReeldCommands.call(for: .volume(40)) == ReeldCall("mixer.setVolume", ["volume": 40]))
        #expect(ReeldCommands.call(for: .mute(true)) == ReeldCall("mixer.setMuted", ["muted": true]))
        #expect(ReeldCommands.call(for: .shuffle(true)) == ReeldCall("queue.setOptions", ["random": true]))
        #expect(ReeldCommands.call(for: .loopStatus(.track)) == ReeldCall("queue.setOptions", ["repeat": true, "single": true]))
        #expect(ReeldCommands.call(for: .loopStatus(.none)) == ReeldCall("queue.setOptions", ["repeat": false, "single": false]))
    }

    @Test func errorsCarryAStringData() {
        let refused = ReeldCommands.snapserverError(fromReeld: RPCError(ReelError(.notPlaying, "nothing is playing")))
        #expect(refused.code == RPCErrorCode.application)
        #expect(refused.data == "reeld: nothing is playing (not_playing)")
        #expect(ReeldCommands.snapserverError(.invalidParams("x")).data == "x")
    }
}

@Suite("When properties are pushed")
struct PropertiesTrackerTests {
    @Test func onlyChangesAndJumpsArePushed() {
        var tracker = PropertiesTracker()
        let first: JSONObject = ["playbackStatus": "playing", "position": 10.0]
        #expect(tracker.push(properties: first, metadata: ["title": "a"], at: 100) == ["playbackStatus": "playing", "position": 10.0, "metadata": ["title": "a"]])
        // Time passed while playing: the same state, no push.
        #expect(tracker.push(properties: ["playbackStatus": "playing", "position": 15.2], metadata: ["title": "a"], at: 105) == nil)
        // A seek.
        #expect(tracker.push(properties: ["playbackStatus": "playing", "position": 40.0], metadata: ["title": "a"], at: 106) != nil)
        // Paused: pushed, without the unchanged metadata.
        #expect(tracker.push(properties: ["playbackStatus": "paused", "position": 41.0], metadata: ["title": "a"], at: 107) == ["playbackStatus": "paused", "position": 41.0])
        #expect(tracker.push(properties: ["playbackStatus": "paused", "position": 41.0], metadata: ["title": "a"], at: 200) == nil)
        // A new track.
        #expect(tracker.push(properties: ["playbackStatus": "paused", "position": 41.0], metadata: ["title": "b"], at: 201)?["metadata"] == ["title": "b"])
    }

    @Test func whatGetPropertiesToldCounts() {
        var tracker = PropertiesTracker()
        tracker.told(properties: ["playbackStatus": "stopped"], metadata: [:], at: 1)
        #expect(tracker.push(properties: ["playbackStatus": "stopped"], metadata: [:], at: 2) == nil)
        #expect(tracker.push(properties: ["playbackStatus": "stopped", "volume": 3], metadata: [:], at: 2) != nil)
    }
}
