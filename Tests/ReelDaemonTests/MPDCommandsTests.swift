// MPD commands on the real command table and a real core (no music, an empty queue), over
// embedded channels that share one loop: client-to-client messages between two connections,
// crossfade, and the argument rules of prio, prioid, playlistfind and playlistsearch. Only
// commands that answer at once are sent (no reply comes from a core thread onto the loop).
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import ReelAudio
import ReelCore
import ReelModel
import Testing

@testable import ReelDaemon

@Suite struct MPDCommandsTests {
    final class Fixture {
        let directory = NSTemporaryDirectory() + "reel-mpd-commands-\(UUID().uuidString)"
        let loop = EmbeddedEventLoop()
        let core: ReelCore
        let hub: MPDEventHub
        let table: MPDCommandTable

        init() throws {
            core = try ReelCore(
                dataDirectory: directory, output: ALSAOutput(name: "null"), timing: PCMTiming(),
                input: ALSAInput(name: "null"), captureTiming: PCMTiming(), recording: RecordingDefaults(),
                mediaRoots: [], logger: Logger(label: "test"))
            hub = MPDEventHub(loop: loop, core: core)
            table = MPDCommandTable.reeld(
                MPDContext(
                    core: core, hub: hub, view: MPDLibraryView(recordingsDirectory: "Recordings"), password: nil,
                    startedAt: .now(), listCache: MPDListCache(core: core)))
        }

        deinit {
            core.shutdown()
            try? FileManager.default.removeItem(atPath: directory)
        }

        func connect() throws -> Client {
            let channel = EmbeddedChannel(loop: loop)
            try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineLength: 8191)))
            try channel.pipeline.syncOperations.addHandler(
                MPDConnection.channelHandler(
                    eventLoop: channel.eventLoop, table: table, hub: hub, client: MPDClient(permission: .all, isLocal: false),
                    logger: Logger(label: "test")))
            try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
            loop.run()
            let client = Client(channel: channel, loop: loop)
            #expect(try client.output() == "OK MPD 0.23.0\n")
            return client
        }
    }

    struct Client {
        let channel: EmbeddedChannel
        let loop: EmbeddedEventLoop

        /// Sends the lines and returns everything written back.
        @discardableResult
        func send(_ lines: String...) throws -> String {
            var buffer = channel.allocator.buffer(capacity: 64)
            buffer.writeString(lines.map { $0 + "\n" }.joined())
            try channel.writeInbound(buffer)
            loop.run()
            return try output()
        }

        func output() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }

        func close() throws {
            try channel.close().wait()
            loop.run()
        }

        /// The client ends its input (a half close), as `mpc waitmessage` does when it exits.
        func endInput() {
            channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
            loop.run()
        }
    }

    // MARK: Messages

    @Test func aMessageReachesEverySubscriberAndWakesAnIdleOne() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        let b = try fixture.connect()
        #expect(try a.send("subscribe chat") == "OK\n")
        #expect(try b.send("channels") == "channel: chat\nOK\n")
        // Subscribing is a `subscription` event for every client.
        #expect(try b.send("idle subscription") == "changed: subscription\nOK\n")
        #expect(try a.send("idle") == "changed: subscription\nOK\n")

        #expect(try a.send("idle message") == "")
        #expect(try b.send("sendmessage chat \"hello there\"") == "OK\n")
        #expect(try a.output() == "changed: message\nOK\n")
        // Nobody else is subscribed: b gets nothing.
        #expect(try b.send("readmessages") == "OK\n")
        #expect(try a.send("readmessages") == "channel: chat\nmessage: hello there\nOK\n")
        #expect(try a.send("readmessages") == "OK\n")
    }

    @Test func aMessageWaitingMeansNoNewEventAndUnsubscribingKeepsWhatCame() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        let b = try fixture.connect()
        try a.send("subscribe chat")
        try a.send("idle")
        try b.send("sendmessage chat one")
        #expect(try a.send("idle message") == "changed: message\nOK\n")
        try b.send("sendmessage chat two")
        #expect(try a.send("idle message") == "", "a message was waiting already: no new event")
        #expect(try a.send("noidle") == "OK\n")
        #expect(try a.send("unsubscribe chat") == "OK\n")
        #expect(try a.send("readmessages") == "channel: chat\nmessage: one\nchannel: chat\nmessage: two\nOK\n")
        #expect(try b.send("sendmessage chat three") == "ACK [50@0] {sendmessage} nobody is subscribed to this channel\n")
    }

    @Test func aClientThatLeavesTakesItsChannelsWithIt() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        let b = try fixture.connect()
        try a.send("subscribe gone", "subscribe both")
        try b.send("subscribe both")
        #expect(try b.send("channels") == "channel: both\nchannel: gone\nOK\n")
        try a.close()
        #expect(try b.send("channels") == "channel: both\nOK\n")
        #expect(try b.send("sendmessage gone x") == "ACK [50@0] {sendmessage} nobody is subscribed to this channel\n")
        // One that only ends its input (and waits, idling, for a message) is gone too.
        let c = try fixture.connect()
        try c.send("subscribe half")
        #expect(try c.send("idle message") == "")
        c.endInput()
        #expect(!c.channel.isActive)
        #expect(try b.send("channels") == "channel: both\nOK\n")
    }

    @Test func messageErrorsAreMPDs() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        #expect(try a.send("subscribe a/b") == "ACK [2@0] {subscribe} invalid channel name\n")
        #expect(try a.send("subscribe \"\"") == "ACK [2@0] {subscribe} invalid channel name\n")
        #expect(try a.send("subscribe x", "subscribe x") == "OK\nACK [56@0] {subscribe} already subscribed to this channel\n")
        #expect(try a.send("unsubscribe y") == "ACK [50@0] {unsubscribe} not subscribed to this channel\n")
        #expect(try a.send("sendmessage a/b x") == "ACK [2@0] {sendmessage} invalid channel name\n")
        #expect(try a.send("sendmessage x") == "ACK [2@0] {sendmessage} wrong number of arguments for \"sendmessage\"\n")
    }

    // MARK: crossfade

    @Test func crossfadeTakesZeroAndRefusesWhatReelCannotDo() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        let b = try fixture.connect()
        #expect(try b.send("idle options") == "")
        #expect(try a.send("crossfade 0") == "OK\n")
        #expect(try b.output() == "changed: options\nOK\n", "as MPD, setting it is an options event")
        #expect(
            try a.send("crossfade 5")
                == "ACK [2@0] {crossfade} crossfading is not supported: only 0 (no crossfade) is accepted\n")
        #expect(try a.send("crossfade x") == "ACK [2@0] {crossfade} Integer expected: x\n")
        #expect(try !a.send("status").contains("xfade"))
    }

    // MARK: prio, prioid, playlistfind, playlistsearch

    @Test func priorityAndFilterArgumentsAreCheckedAsMPDChecksThem() throws {
        let fixture = try Fixture()
        let a = try fixture.connect()
        #expect(try a.send("prio 1 0") == "OK\n", "an empty range (clipped to the empty queue) changes nothing")
        #expect(try a.send("prio 256 0") == "ACK [2@0] {prio} Number too large: 256\n")
        #expect(try a.send("prio x 0") == "ACK [2@0] {prio} Integer expected: x\n")
        #expect(try a.send("prio 1") == "ACK [2@0] {prio} too few arguments for \"prio\"\n")
        #expect(try a.send("prio 1 3") == "ACK [2@0] {prio} Bad song index\n")
        #expect(try a.send("prio 1 2:1") == "ACK [2@0] {prio} Malformed range: 2:1\n")
        #expect(try a.send("prioid 1 9") == "ACK [50@0] {prioid} No such song\n")
        #expect(try a.send("prioid 1 x") == "ACK [2@0] {prioid} Integer expected: x\n")
        #expect(try a.send("playlistfind title x") == "OK\n")
        #expect(try a.send("playlistsearch") == "ACK [2@0] {playlistsearch} too few arguments for \"playlistsearch\"\n")
        #expect(try a.send("playlistfind title") == "ACK [2@0] {playlistfind} Incorrect number of filter arguments\n")
        #expect(try a.send("playlistfind title x sort title") == "ACK [2@0] {playlistfind} Unknown filter type\n")
        #expect(try a.send("playlistsearch bogus x") == "ACK [2@0] {playlistsearch} Unknown filter type\n")
    }

    @Test func aQueueEntryPrintsItsPriorityAfterItsIdWhenItHasOne() {
        var response = MPDResponse()
        var song = MPDSong(uri: "a.flac", duration: 1)
        song.position = 0
        song.id = 7
        song.write(into: &response, tags: .all)
        song.priority = 42
        song.write(into: &response, tags: .all)
        #expect(
            response.text
                == "file: a.flac\nTime: 1\nduration: 1.000\nPos: 0\nId: 7\nfile: a.flac\nTime: 1\nduration: 1.000\nPos: 0\nId: 7\nPrio: 42\n")
    }
}
