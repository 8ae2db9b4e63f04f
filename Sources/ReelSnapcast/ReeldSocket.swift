// Where the plugin looks for reeld's socket.

import ReelProtocol

/// The socket paths to try, in order. Pure.
public enum ReeldSocket {
    /// The system daemon's socket (`systemd/reeld.service`, group `audio`).
    public static let systemPath = "/run/reel/reel.sock"

    /// `--socket` alone when given; else `$REEL_SOCKET` alone when set; else the CLI's default
    /// for this user, then the system daemon's socket: snapserver runs as its own system user,
    /// which has no reeld of its own.
    public static func candidates(explicit: String?, environment: [String: String], uid: UInt32) -> [String] {
        if let explicit, !explicit.isEmpty { return [explicit] }
        let first = SocketPath.defaultPath(environment: environment, uid: uid, forDaemon: false)
        if let reelSocket = environment["REEL_SOCKET"], !reelSocket.isEmpty { return [first] }
        return first == systemPath ? [first] : [first, systemPath]
    }
}
