import Foundation
import Logging
import NIOCore
import NIOEmbedded
import ReelAudio
import ReelCore
@testable import ReelDaemon
import ReelModel
import ReelProtocol
import Testing

/// The JSON-RPC fan-out on a loop with a fake clock: one timer per interval, every subscriber
/// ticked once per interval, pushes spliced from one encoding, slow readers skipped and caught up.
@Suite struct PushHubTests {
    final class FakeTarget: PushTarget {
        var lines: [String] = []
        var isWritable = true
        var flushes = 0
        var dropped = false
        func push(_ line: ByteBuffer) { lines.append(String(buffer: line)) }
        func flushPushes() { flushes += 1 }
        func pushAndFlush(_ line: ByteBuffer) {
            push(line)
            flushPushes()
        }
        func drop(reason: String) { dropped = true }
    }

    static func makeCore() throws -> ReelCore {
        let directory = NSTemporaryDirectory() + "reel-hub-\(UUID().uuidString)"
        return try ReelCore(
            dataDirectory: directory, output: ALSAOutput(name: "null"), timing: PCMTiming(), input: ALSAInput(name: "null"),
            captureTiming: PCMTiming(), recording: RecordingDefaults(), mediaRoots: [], logger: Logger(label: "test"))
    }

    static func playing() -> PlayerState {
        PlayerState(
            state: .playing, position: 1, duration: 10, source: .file(path: "/a.flac"), format: nil, timestamp: 1,
            underruns: 0, error: nil)
    }

    @Test func everySubscriberGetsOneTickPerIntervalFromOneTimer() throws {
        let loop = EmbeddedEventLoop()
        let core = try Self.makeCore()
        defer { core.shutdown() }
        let hub = RPCPushHub(loop: loop, core: core, logger: Logger(label: "test"))
        let targets = (0..<200).map { _ in FakeTarget() }
        var subscriptions: [RPCSubscription] = []
        for (index, target) in targets.enumerated() {
            let subscription = RPCSubscription(target: target, id: index + 1, stream: .player, interval: .milliseconds(100))
            hub.add(subscription)
            hub.pushCurrent(subscription)
            subscriptions.append(subscription)
        }
        #expect(targets.allSatisfy { $0.lines.count == 1 }, "the current value first")
        #expect(hub.armedTickTimers == 0, "no ticks while stopped")

        core.player.changes.publish(Self.playing())
        loop.run()
        #expect(targets.allSatisfy { $0.lines.count == 2 }, "one push for the change")
        #expect(hub.armedTickTimers == 1, "one timer for 200 subscribers at one interval")

        loop.advanceTime(by: .seconds(1))
        for (index, target) in targets.enumerated() {
            #expect(target.lines.count == 12, "subscriber \(index + 1): \(target.lines.count - 2) ticks in 1 s")
            let push = try JSONValue.parse(Array(target.lines.last!.utf8.dropLast()))
            #expect(push["method"] == .string("player.state"))
            #expect(push["params"]?["subscription"] == .int(Int64(index + 1)))
            #expect(push["params"]?["state"] != nil)
        }

        // Stopped: the timer stops; a stopped daemon does not wake its subscribers.
        core.player.changes.publish(PlayerState())
        loop.run()
        #expect(hub.armedTickTimers == 0)
        loop.advanceTime(by: .seconds(1))
        #expect(targets.allSatisfy { $0.lines.count == 13 })
        for subscription in subscriptions { hub.remove(subscription) }
        try loop.syncShutdownGracefully()
    }

    @Test func aClientThatIsNotReadingIsSkippedAndGetsTheLatestWhenItReadsAgain() throws {
        let loop = EmbeddedEventLoop()
        let core = try Self.makeCore()
        defer { core.shutdown() }
        let hub = RPCPushHub(loop: loop, core: core, logger: Logger(label: "test"))
        let slow = FakeTarget()
        let fast = FakeTarget()
        let slowSubscription = RPCSubscription(target: slow, id: 1, stream: .player, interval: .milliseconds(50))
        let fastSubscription = RPCSubscription(target: fast, id: 1, stream: .player, interval: .milliseconds(50))
        for subscription in [slowSubscription, fastSubscription] {
            hub.add(subscription)
            hub.pushCurrent(subscription)
        }
        slow.isWritable = false
        core.player.changes.publish(Self.playing())
        loop.run()
        loop.advanceTime(by: .milliseconds(500))
        #expect(slow.lines.count == 1)
        #expect(fast.lines.count == 12)
        #expect(slowSubscription.dirty)
        slow.isWritable = true
        hub.pushCurrent(slowSubscription)
        #expect(slow.lines.count == 2, "one push with the latest, not the backlog")
        #expect(!slowSubscription.dirty)
        hub.remove(slowSubscription)
        hub.remove(fastSubscription)
        try loop.syncShutdownGracefully()
    }

    @Test func aSplicedPushIsTheWholeNotificationForEachSubscriber() throws {
        let push = SplicedPush(method: "item.changed", members: ["item": .object(["name": .string("a \"b\"")])])
        // Lines are built once per number and handed out again; more numbers than are kept
        // still each get their own.
        for id in [1, 42, 1_000_000, 1, 42] + Array(2...12) + [1, 12, 1_000_000] {
            var line = push.line(for: id)
            let text = line.readString(length: line.readableBytes)!
            #expect(text.hasSuffix("}\n"))
            let json = try JSONValue.parse(Array(text.utf8.dropLast()))
            #expect(json == .object([
                "jsonrpc": .string("2.0"), "method": .string("item.changed"),
                "params": .object(["subscription": .int(Int64(id)), "item": .object(["name": .string("a \"b\"")])]),
            ]))
        }
        var empty = SplicedPush(method: "x", members: [:]).line(for: 3)
        #expect(empty.readString(length: empty.readableBytes) == #"{"jsonrpc":"2.0","method":"x","params":{"subscription":3}}"# + "\n")
    }
}
