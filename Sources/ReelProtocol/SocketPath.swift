// Where the control socket lives, for the daemon (where to listen) and the CLI (where to
// connect). Both call the same function so they agree.

/// The default socket path.
public enum SocketPath {
    /// The socket path, from first to last choice:
    /// 1. `$REEL_SOCKET` if set and non-empty;
    /// 2. for the daemon only (`forDaemon`), `$RUNTIME_DIRECTORY/reel.sock` (systemd's
    ///    `RuntimeDirectory=`; the first entry if it lists several);
    /// 3. `$XDG_RUNTIME_DIR/reel/reel.sock`;
    /// 4. `/run/reel/reel.sock` when `uid` is 0;
    /// 5. `/tmp/reel-<uid>/reel.sock`.
    /// A pure function of its arguments: pass `ProcessInfo`'s environment and `getuid()`.
    public static func defaultPath(environment: [String: String], uid: UInt32, forDaemon: Bool = false) -> String {
        if let explicit = environment["REEL_SOCKET"], !explicit.isEmpty {
            return explicit
        }
        if forDaemon, let runtime = environment["RUNTIME_DIRECTORY"],
           let first = runtime.split(separator: ":").first, !first.isEmpty
        {
            return join(String(first), "reel.sock")
        }
        if let xdg = environment["XDG_RUNTIME_DIR"], !xdg.isEmpty {
            return join(xdg, "reel/reel.sock")
        }
        if uid == 0 { return "/run/reel/reel.sock" }
        return "/tmp/reel-\(uid)/reel.sock"
    }

    private static func join(_ directory: String, _ name: String) -> String {
        var directory = Substring(directory)
        while directory.count > 1 && directory.hasSuffix("/") { directory = directory.dropLast() }
        return directory == "/" ? "/" + name : directory + "/" + name
    }
}
