// Who may use the HTTP front end: the Host and Origin rule, and the password.

/// Decides whether a request may go on, before anything is routed. Pure; any thread.
///
/// - **Host** (every request): a name the browser used to reach this daemon, with the port the
///   connection arrived on: `localhost`, `127.0.0.1`, `[::1]`, a host of `http_listen`, the
///   machine's name (`gethostname`) or that name with `.local`, or the IP address the
///   connection arrived on. Any other name is refused: a page elsewhere that made its own name
///   resolve to this machine (DNS rebinding) gets nothing. An IP address cannot be rebound, so
///   the connection's own address is safe to accept.
/// - **Origin**: must be exactly `http://` + the Host. The WebSocket (`/rpc`) requires it (a
///   browser always sends it there); `POST /import` checks it when present (browsers send it with
///   every POST; `curl` sends none). A page elsewhere in the same browser cannot drive the daemon.
/// - **Password** (`http_password`, every request when set): HTTP Basic authentication; the user
///   name is ignored, the password compared in constant time.
struct HTTPAccessRule: Sendable {
    /// Lowercased host names and addresses accepted in `Host` (without brackets or port).
    let acceptedHosts: Set<String>
    let password: String?

    /// Why a request is refused; `status` is what the client gets.
    enum Refusal: Equatable, Sendable {
        case unknownHost(String?)
        case foreignOrigin(String?)
        case unauthorized

        var status: Int {
            switch self {
            case .unknownHost, .foreignOrigin: 403
            case .unauthorized: 401
            }
        }

        var message: String {
            switch self {
            case .unknownHost(let host?):
                "\(host) is not a name of this Reel daemon; open it as localhost, by its address or by the machine's name"
            case .unknownHost(nil): "the request has no Host header"
            case .foreignOrigin(let origin?): "a page from \(origin) may not use this Reel daemon"
            case .foreignOrigin(nil): "the WebSocket needs an Origin header naming this page"
            case .unauthorized: "this Reel daemon needs its password (http_password)"
            }
        }

        var reason: String {
            switch self {
            case .unknownHost: "unknown_host"
            case .foreignOrigin: "foreign_origin"
            case .unauthorized: "unauthorized"
            }
        }
    }

    /// `listenHosts`: the hosts of `http_listen` (a wildcard such as `0.0.0.0` or `::` names
    /// no host and is left out); `machineName`: `gethostname`'s answer.
    init(listenHosts: [String], machineName: String?, password: String?) {
        var hosts: Set<String> = ["localhost", "127.0.0.1", "::1"]
        for host in listenHosts where host != "0.0.0.0" && host != "::" {
            hosts.insert(host.lowercased())
        }
        if let machineName, !machineName.isEmpty {
            let name = machineName.lowercased()
            hosts.insert(name)
            if !name.hasSuffix(".local") { hosts.insert(name + ".local") }
        }
        acceptedHosts = hosts
        self.password = password
    }

    /// Checks a request's headers. `localAddress` and `localPort`: where the connection arrived.
    /// `origin`: `.required` for the WebSocket, `.checkedIfPresent` for uploads, `.ignored`
    /// for reads (the page, audio). The password is checked last, so a foreign page learns
    /// nothing from the difference between 401 and 403.
    func check(
        host: String?, origin: String?, authorization: String?, localAddress: String?, localPort: Int?,
        originRule: OriginRule
    ) -> Refusal? {
        guard let host, isOurs(host: host, localAddress: localAddress, localPort: localPort) else {
            return .unknownHost(host)
        }
        switch originRule {
        case .ignored:
            break
        case .required:
            guard let origin, Self.origin(origin, matches: host) else { return .foreignOrigin(origin) }
        case .checkedIfPresent:
            if let origin, !Self.origin(origin, matches: host) { return .foreignOrigin(origin) }
        }
        if let password, !Self.authorization(authorization, carries: password) { return .unauthorized }
        return nil
    }

    enum OriginRule: Sendable {
        case ignored, required, checkedIfPresent
    }

    /// True when `host` (a Host header: `name`, `name:port`, `[v6]:port`) names this daemon
    /// on the port the connection arrived on (80 when the header has none).
    func isOurs(host: String, localAddress: String?, localPort: Int?) -> Bool {
        guard let (name, port) = Self.split(host: host.lowercased()), let localPort, port == localPort else {
            return false
        }
        if acceptedHosts.contains(name) { return true }
        if let localAddress, name == localAddress.lowercased() { return true }
        return false
    }

    /// `Origin` is `http://` + the Host, compared without regard to case.
    static func origin(_ origin: String, matches host: String) -> Bool {
        origin.lowercased() == "http://" + host.lowercased()
    }

    /// The name (without brackets) and port of a Host header; nil if it is malformed.
    static func split(host: String) -> (name: String, port: Int)? {
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return nil }
            let name = String(host[host.index(after: host.startIndex)..<close])
            let rest = host[host.index(after: close)...]
            if rest.isEmpty { return (name, 80) }
            guard rest.hasPrefix(":"), let port = Int(rest.dropFirst()), (1...65535).contains(port) else { return nil }
            return (name, port)
        }
        guard !host.isEmpty else { return nil }
        guard let colon = host.firstIndex(of: ":") else { return (host, 80) }
        guard let port = Int(host[host.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        let name = String(host[..<colon])
        return name.isEmpty ? nil : (name, port)
    }

    /// True when `Authorization: Basic base64(user:password)` carries `password` (any user).
    static func authorization(_ header: String?, carries password: String) -> Bool {
        guard let header else { return false }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic", let decoded = Base64.decode(parts[1].trimmingSpaces),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return false }
        return constantTimeEqual(Array(decoded[(colon + 1)...]), Array(password.utf8))
    }

    /// Compares without returning early at the first difference (the time taken does not tell
    /// how much of a guess was right).
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0xff)
        }
        return difference == 0
    }
}

/// Standard base64 (RFC 4648, `=` padding optional), for Basic authentication.
enum Base64 {
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var accumulator: UInt32 = 0
        var bits = 0
        var padding = 0
        for byte in text.utf8 {
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a") + 26
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = byte - UInt8(ascii: "0") + 52
            case UInt8(ascii: "+"): value = 62
            case UInt8(ascii: "/"): value = 63
            case UInt8(ascii: "="):
                padding += 1
                continue
            default: return nil
            }
            guard padding == 0 else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        return padding <= 2 ? out : nil
    }
}
