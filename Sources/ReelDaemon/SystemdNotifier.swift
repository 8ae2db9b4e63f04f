// sd_notify without libsystemd: one datagram to $NOTIFY_SOCKET.

#if canImport(Glibc)
import Glibc
#endif

/// Tells systemd about the daemon's life (`Type=notify`). Does nothing when `NOTIFY_SOCKET` is unset.
public struct SystemdNotifier: Sendable {
    let path: String?

    public init(environment: [String: String]) {
        path = environment["NOTIFY_SOCKET"].flatMap { $0.isEmpty ? nil : $0 }
    }

    public func ready() { send("READY=1\nSTATUS=Listening") }
    public func stopping() { send("STOPPING=1") }

    /// Sends `message`; returns false if it could not be delivered.
    @discardableResult
    public func send(_ message: String) -> Bool {
        guard let path else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(path.utf8)
        if bytes.first == UInt8(ascii: "@") { bytes[0] = 0 }  // abstract namespace
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity else { return false }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count)
        let sent = message.withCString { text in
            withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, text, strlen(text), 0, socketAddress, length)
                }
            }
        }
        return sent >= 0
    }
}
