// Where a front end listens: `HOST:PORT`, `[V6]:PORT` or an absolute Unix socket path.

import NIOCore

#if canImport(Glibc)
import Glibc
#endif

/// One listening address from the configuration (`mpd_listen`, and the next front ends').
public enum ListenAddress: Equatable, Sendable, CustomStringConvertible {
    case tcp(host: String, port: Int)
    case unix(path: String)

    /// Parses `127.0.0.1:6600`, `[::1]:6600`, `localhost:6600`, `0.0.0.0:6600` or `/run/reel/mpd.sock`.
    public init(parsing text: String) throws(ConfigurationError) {
        if text.hasPrefix("/") {
            self = .unix(path: text)
            return
        }
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw ConfigurationError("\"\(text)\" is not an address; write [IPv6]:PORT, HOST:PORT or an absolute socket path")
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw ConfigurationError("\"\(text)\" is not an address; write HOST:PORT, [IPv6]:PORT or an absolute socket path")
            }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw ConfigurationError("\"\(text)\" has no host; write 127.0.0.1:PORT to listen on this machine only") }
        guard let number = Int(port), (1...65535).contains(number) else {
            throw ConfigurationError("\"\(text)\" has no valid port (1–65535)")
        }
        self = .tcp(host: String(host), port: number)
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
        case .unix(let path): path
        }
    }

    /// True for a loopback TCP address or a Unix socket: what only this machine can reach.
    public var isLocalOnly: Bool {
        switch self {
        case .unix: true
        case .tcp(let host, _): host == "localhost" || host.hasPrefix("127.") || host == "::1"
        }
    }
}

/// TCP listening sockets for `StreamListener`.
enum TCPSocket {
    /// A listening TCP socket on `host:port` (non-blocking, close-on-exec, SO_REUSEADDR, an
    /// IPv6 socket only for IPv6). Throws a message naming the address when it is taken.
    static func listen(host: String, port: Int, backlog: Int32) throws(SocketSetupError) -> Int32 {
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw SocketSetupError("cannot resolve the listen address \(host): \(error)")
        }
        let family: Int32 = address.protocol == .inet6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw SocketSetupError("cannot create a socket: \(String(cString: strerror(errno)))") }
        var one: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if family == AF_INET6 {
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound: Int32
        switch address {
        case .v4(let v4):
            var raw = v4.address
            bound = withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6(let v6):
            var raw = v6.address
            bound = withUnsafePointer(to: &raw) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        default:
            close(fd)
            throw SocketSetupError("\(host) is not an IP address")
        }
        guard bound == 0, Glibc.listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            let hint = code == EADDRINUSE ? " (another program is listening there; stop it or choose another address)" : ""
            throw SocketSetupError("cannot listen on \(ListenAddress.tcp(host: host, port: port)): \(String(cString: strerror(code)))\(hint)")
        }
        return fd
    }
}
