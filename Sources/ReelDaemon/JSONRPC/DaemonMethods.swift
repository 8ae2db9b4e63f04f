// daemon.* — what this daemon is and how it is set up.

import ReelAudio
import ReelCore
import ReelProtocol
import ReelRuntime

/// The facts `daemon.info` reports.
struct DaemonInfoSource: Sendable {
    let configuration: DaemonConfiguration
    let startedAt: UInt64

    var info: DaemonInfo {
        var info = DaemonInfo(
            version: Daemon.version, protocolVersion: DaemonInfo.currentProtocolVersion,
            device: configuration.device, captureDevice: configuration.captureDevice,
            dataDir: configuration.dataDir,
            uptime: Double(monotonicNanoseconds() - startedAt) / 1e9,
            formats: Codecs.decoders.map(\.name), decoders: Codecs.decoders,
            listeners: [DaemonInfo.Listener(protocolName: "json-rpc", address: configuration.socket)]
                + configuration.mpdListen.map { DaemonInfo.Listener(protocolName: "mpd", address: $0.description) }
                + configuration.httpListen.map { DaemonInfo.Listener(protocolName: "http", address: $0.description) })
        info.urlSchemes = PlayerController.urlSchemes
        return info
    }
}

enum DaemonMethods {
    static func register(into table: inout MethodTable, info: DaemonInfoSource) {
        table.register("daemon.info") { call throws(RPCError) in
            try call.params.rejectUnknown(allowed: [])
            return .result(info.info.json)
        }
    }
}
