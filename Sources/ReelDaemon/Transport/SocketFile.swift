// Preparing the socket path: a live daemon is left alone, a stale file is replaced.

#if canImport(Glibc)
import Glibc
#endif

/// Checks and clears the way for binding the control socket.
enum SocketFile {
    /// Creates the parent directory if needed and removes a stale socket file.
    /// Throws if another daemon answers on `path` or if `path` is something else than a socket.
    static func prepare(_ path: String) throws(SocketSetupError) {
        let parent = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        if !parent.isEmpty { try makeDirectory(parent) }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw SocketSetupError("\(path) exists and is not a socket; remove it or choose another path with --socket")
        }
        if isAnswering(path) {
            throw SocketSetupError(
                "another reeld is already listening on \(path); stop it first, or start this one with --socket PATH")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw SocketSetupError("cannot remove the stale socket \(path): \(String(cString: strerror(errno)))")
        }
    }

    /// A listening Unix stream socket bound at `path` (non-blocking, close-on-exec).
    static func listen(_ path: String, backlog: Int32) throws(SocketSetupError) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw SocketSetupError("the socket path \(path) is too long (at most \(MemoryLayout.size(ofValue: address.sun_path) - 1) bytes)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = socket(
            AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketSetupError("cannot create a socket: \(String(cString: strerror(errno)))") }
        let bound = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw SocketSetupError("cannot listen on \(path): \(String(cString: strerror(code)))")
        }
        return fd
    }

    /// True if something accepts connections on the Unix socket at `path`.
    static func isAnswering(_ path: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return connected == 0
    }

    /// `mkdir -p` with mode 0700 for the directories it creates.
    static func makeDirectory(_ path: String) throws(SocketSetupError) {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw SocketSetupError("cannot create the directory \(current): \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Mode 0600 for a user's daemon. A system daemon (root, or the system unit's dynamic user)
    /// gives the socket to group `audio` with mode 0660, so members of `audio` may control it.
    static func setPermissions(_ path: String, system: Bool) {
        if system, let group = getgrnam("audio") {
            chown(path, getuid(), group.pointee.gr_gid)
            chmod(path, 0o660)
        } else {
            chmod(path, 0o600)
        }
    }

    /// True for a daemon started by root or by the system unit (`RuntimeDirectory=` outside
    /// `/run/user/`), false for a user's own daemon.
    static func isSystemDaemon(environment: [String: String], uid: UInt32) -> Bool {
        if uid == 0 { return true }
        guard let runtime = environment["RUNTIME_DIRECTORY"], !runtime.isEmpty else { return false }
        return !runtime.hasPrefix("/run/user/")
    }
}

public struct SocketSetupError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
