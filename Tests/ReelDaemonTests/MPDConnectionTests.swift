import Logging
import NIOCore
import NIOEmbedded
import ReelAudio
import ReelRuntime
import Testing

@testable import ReelDaemon

/// One MPD connection's state machine (command lists, idle, closing rules), on NIO's embedded
/// channel with a small command table: no core, no socket.
@Suite struct MPDConnectionTests {
    final class Registry: MPDConnectionRegistry {
        var connections: [MPDConnection] = []
        func add(_ connection: MPDConnection) { connections.append(connection) }
        func remove(_ connection: MPDConnection) { connections.removeAll { $0 === connection } }
    }

    /// Replies held by the `later` command until the test gives them.
    final class Deferred: @unchecked Sendable {
        let pending = Locked<[MPDReply]>([])
    }

    struct Harness {
        let channel: EmbeddedChannel
        let registry: Registry
        let deferred: Deferred

        func send(_ text: String) throws {
            var buffer = channel.allocator.buffer(capacity: text.utf8.count)
            buffer.writeString(text)
            try channel.writeInbound(buffer)
            channel.embeddedEventLoop.run()
        }

        /// Everything written since the last call.
        func output() throws -> String {
            var text = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
            return text
        }

        func releaseLater(_ body: String) {
            let replies = deferred.pending.withLock { pending in
                defer { pending.removeAll() }
                return pending
            }
            for reply in replies {
                var response = MPDResponse()
                response.field("later", body)
                reply(.success(response))
            }
            channel.embeddedEventLoop.run()
        }

        var isOpen: Bool { channel.isActive }
    }

    func harness(permission: MPDPermission = .all) throws -> Harness {
        let deferred = Deferred()
        let table = MPDCommandTable([
            .now("ping", [], 0, 0) { _ in MPDResponse() },
            MPDCommand("close", [], 0, nil) { _, reply in reply(.success(MPDResponse())) },
            MPDCommand("idle", .read, 0, nil) { _, reply in reply(.success(MPDResponse())) },
            .now("echo", .read, 0, nil) { request in
                var response = MPDResponse()
                for argument in request.arguments { response.field("arg", argument) }
                return response
            },
            .now("fail", .read, 0, 0) { _ throws(MPDAck) in throw MPDAck(.noExist, "No such song") },
            .now("play", .player, 0, 1) { _ in MPDResponse() },
            MPDCommand("later", .read, 0, 0) { _, reply in deferred.pending.withLock { $0.append(reply) } },
        ])
        let registry = Registry()
        let channel = EmbeddedChannel()
        let connection = MPDConnection.channelHandler(
            eventLoop: channel.eventLoop, table: table, hub: registry, client: MPDClient(permission: permission, isLocal: false),
            logger: Logger(label: "test"))
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineFrameDecoder(maxLineLength: 4 << 20)))
        try channel.pipeline.syncOperations.addHandler(connection)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        channel.embeddedEventLoop.run()
        return Harness(channel: channel, registry: registry, deferred: deferred)
    }

    @Test func greetsThenAnswersEachCommandOfOneReadInOrder() throws {
        let h = try harness()
        #expect(try h.output() == "OK MPD 0.23.0\n")
        try h.send("ping\necho a \"b c\"\nnope\nfail\nping\n")
        #expect(try h.output() == "OK\narg: a\narg: b c\nOK\nACK [5@0] {} unknown command \"nope\"\nACK [50@0] {fail} No such song\nOK\n")
    }

    @Test func linesWaitBehindACommandThatAnswersLater() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("later\necho after\n")
        #expect(try h.output() == "")
        h.releaseLater("now")
        #expect(try h.output() == "later: now\nOK\narg: after\nOK\n")
    }

    @Test func commandListsRunAtTheEndAndStopAtTheFirstError() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("command_list_begin\necho 1\nfail\necho 2\n")
        #expect(try h.output() == "")
        try h.send("command_list_end\n")
        #expect(try h.output() == "arg: 1\nACK [50@1] {fail} No such song\n")
        try h.send("command_list_ok_begin\necho 1\nlater\necho 2\ncommand_list_end\n")
        h.releaseLater("x")
        #expect(try h.output() == "arg: 1\nlist_OK\nlater: x\nlist_OK\narg: 2\nlist_OK\nOK\n")
    }

    /// The client closed its side: what it sent is answered, then the connection closes (and
    /// leaves the registry), as MPD's does; an idling client closes at once.
    @Test func theEndOfTheInputClosesOnceWhatCameBeforeIsAnswered() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("later\nping\n")
        h.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        h.channel.embeddedEventLoop.run()
        #expect(h.isOpen, "a command is still waiting for its answer")
        h.releaseLater("x")
        #expect(try h.output() == "later: x\nOK\nOK\n")
        #expect(!h.isOpen)
        #expect(h.registry.connections.isEmpty)

        let idler = try harness()
        try idler.send("idle\n")
        idler.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        idler.channel.embeddedEventLoop.run()
        #expect(!idler.isOpen)
        #expect(idler.registry.connections.isEmpty)
    }

    @Test func idleReturnsPendingEventsAtOnceOrWhenTheyCome() throws {
        let h = try harness()
        _ = try h.output()
        let connection = try #require(h.registry.connections.first)
        connection.post([.player, .mixer])
        try h.send("idle\n")
        #expect(try h.output() == "changed: player\nchanged: mixer\nOK\n")
        // An idle that returns clears every pending event (MPD 0.23), not only those it asked for.
        connection.post([.player, .mixer])
        try h.send("idle player\n")
        #expect(try h.output() == "changed: player\nOK\n")
        connection.post(.database)
        try h.send("idle\n")
        #expect(try h.output() == "changed: database\nOK\n")
        try h.send("idle playlist options\n")
        #expect(try h.output() == "")
        connection.post(.player)
        #expect(try h.output() == "")
        connection.post([.options, .database])
        h.channel.embeddedEventLoop.run()
        #expect(try h.output() == "changed: options\nOK\n")
        // database came with options and was cleared with it: the next idle waits.
        try h.send("idle database player\n")
        #expect(try h.output() == "")
        connection.post(.database)
        #expect(try h.output() == "changed: database\nOK\n")
    }

    @Test func noidleAnswersOnlyWhileIdling() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("noidle\n")
        #expect(try h.output() == "")
        try h.send("idle\nnoidle\nping\n")
        #expect(try h.output() == "OK\nOK\n")
        #expect(h.isOpen)
    }

    @Test func aCommandWhileIdlingClosesTheConnection() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("idle\nping\n")
        #expect(try h.output() == "")
        #expect(!h.isOpen)
    }

    @Test func idleInsideACommandListClosesTheConnection() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("command_list_begin\nidle\n")
        #expect(!h.isOpen)
    }

    @Test func aLineThatIsNotACommandClosesWithoutAReply() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("GET / HTTP/1.1\n")
        #expect(try h.output() == "")
        #expect(!h.isOpen)
    }

    @Test func aMalformedCommandNameIsAnsweredThenClosed() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("pl-ay\n")
        #expect(try h.output() == "ACK [5@0] {} Invalid word character\n")
        #expect(!h.isOpen)
    }

    @Test func aMalformedArgumentIsAnsweredAndTheConnectionGoesOn() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("echo \"open\nping\n")
        #expect(try h.output() == "ACK [5@0] {} Missing closing '\"'\nOK\n")
        #expect(h.isOpen)
    }

    @Test func permissionsAndArgumentCountsAreCheckedFirst() throws {
        let h = try harness(permission: [.read])
        _ = try h.output()
        try h.send("play\nping 1\nplay 1 2\n")
        #expect(
            try h.output()
                == "ACK [4@0] {play} you don't have permission for \"play\"\n"
                + "ACK [2@0] {ping} wrong number of arguments for \"ping\"\n"
                + "ACK [4@0] {play} you don't have permission for \"play\"\n")
    }

    @Test func aCommandListOver2MiBClosesTheConnection() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("command_list_begin\n")
        let line = "echo " + String(repeating: "x", count: 1000) + "\n"
        for _ in 0..<2200 { try h.send(line) }  // 2200 × 1006 bytes > 2 MiB (2,097,152)
        #expect(!h.isOpen)
        #expect(try h.output() == "")
    }

    @Test func aSilentConnectionExpiresUnlessItIdles() throws {
        let idler = try harness()
        _ = try idler.output()
        try idler.send("idle\n")
        let idling = try #require(idler.registry.connections.first)
        idling.expireIfSilent(since: .now() + .seconds(120))
        #expect(idler.isOpen)

        let silent = try harness()
        _ = try silent.output()
        try silent.send("ping\n")
        let connection = try #require(silent.registry.connections.first)
        connection.expireIfSilent(since: .now() - .seconds(120))
        #expect(silent.isOpen)  // it spoke after that deadline
        connection.expireIfSilent(since: .now() + .seconds(1))
        silent.channel.embeddedEventLoop.run()
        #expect(!silent.isOpen)
    }

    @Test func closeEndsTheConnectionWithoutAReply() throws {
        let h = try harness()
        _ = try h.output()
        try h.send("close\n")
        #expect(try h.output() == "")
        #expect(!h.isOpen)
        #expect(h.registry.connections.isEmpty)
    }
}
