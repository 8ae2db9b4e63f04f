import NIOHTTP1
import Testing

@testable import ReelDaemon

@Suite struct HTTPAccessRuleTests {
    let rule = HTTPAccessRule(listenHosts: ["127.0.0.1", "0.0.0.0", "192.168.1.20"], machineName: "Pi", password: nil)

    func check(
        _ rule: HTTPAccessRule, host: String?, origin: String? = nil, authorization: String? = nil,
        local: String = "127.0.0.1", port: Int = 8480, originRule: HTTPAccessRule.OriginRule = .required
    ) -> HTTPAccessRule.Refusal? {
        rule.check(
            host: host, origin: origin, authorization: authorization, localAddress: local, localPort: port,
            originRule: originRule)
    }

    @Test(arguments: [
        "localhost:8480", "127.0.0.1:8480", "[::1]:8480", "pi:8480", "pi.local:8480", "PI.Local:8480",
        "192.168.1.20:8480",
    ])
    func theDaemonsOwnNamesAreAccepted(host: String) {
        #expect(check(rule, host: host, origin: "http://" + host) == nil)
    }

    @Test func theAddressTheConnectionArrivedOnIsAccepted() {
        // Listening on 0.0.0.0: a phone opens the machine's LAN address.
        #expect(check(rule, host: "10.0.0.7:8480", origin: "http://10.0.0.7:8480", local: "10.0.0.7") == nil)
        #expect(check(rule, host: "10.0.0.8:8480", origin: "http://10.0.0.8:8480", local: "10.0.0.7") != nil)
    }

    @Test(arguments: [
        "evil.example:8480",  // DNS rebinding: a foreign name that resolves here
        "localhost:8481",  // another port
        "localhost",  // port 80, not ours
        "0.0.0.0:8480",  // a wildcard listen address names no host
        "pi.local.evil.example:8480", "[::1", "localhost:http", ":8480",
    ])
    func otherHostsAreRefused(host: String) {
        #expect(check(rule, host: host, origin: "http://" + host) == .unknownHost(host))
    }

    @Test func aRequestWithoutHostIsRefused() {
        #expect(check(rule, host: nil, originRule: .ignored) == .unknownHost(nil))
    }

    @Test func theWebSocketNeedsTheOriginOfThePageItself() {
        #expect(check(rule, host: "localhost:8480", origin: "http://localhost:8480") == nil)
        #expect(check(rule, host: "localhost:8480", origin: "HTTP://LOCALHOST:8480") == nil)
        for origin in [
            "http://evil.example", "http://127.0.0.1:8480", "https://localhost:8480", "http://localhost:8480/",
            "null", "http://localhost",
        ] {
            #expect(check(rule, host: "localhost:8480", origin: origin) == .foreignOrigin(origin))
        }
        #expect(check(rule, host: "localhost:8480", origin: nil) == .foreignOrigin(nil))
    }

    @Test func anUploadChecksTheOriginOnlyWhenOneIsSent() {
        #expect(check(rule, host: "localhost:8480", origin: nil, originRule: .checkedIfPresent) == nil)
        #expect(check(rule, host: "localhost:8480", origin: "http://localhost:8480", originRule: .checkedIfPresent) == nil)
        #expect(
            check(rule, host: "localhost:8480", origin: "http://evil.example", originRule: .checkedIfPresent)
                == .foreignOrigin("http://evil.example"))
        #expect(check(rule, host: "localhost:8480", origin: "http://evil.example", originRule: .ignored) == nil)
    }

    @Test func thePasswordIsBasicAuthenticationWithAnyUserName() {
        let guarded = HTTPAccessRule(listenHosts: [], machineName: nil, password: "sécret")
        func basic(_ credentials: String) -> String { "Basic " + base64(Array(credentials.utf8)) }
        #expect(check(guarded, host: "localhost:8480", authorization: basic("reel:sécret"), originRule: .ignored) == nil)
        #expect(check(guarded, host: "localhost:8480", authorization: basic(":sécret"), originRule: .ignored) == nil)
        #expect(check(guarded, host: "localhost:8480", authorization: basic("a:b:sécret"), originRule: .ignored) == .unauthorized)
        #expect(check(guarded, host: "localhost:8480", authorization: basic("reel:wrong"), originRule: .ignored) == .unauthorized)
        #expect(check(guarded, host: "localhost:8480", authorization: basic("reel:sécre"), originRule: .ignored) == .unauthorized)
        #expect(check(guarded, host: "localhost:8480", authorization: "Bearer x", originRule: .ignored) == .unauthorized)
        #expect(check(guarded, host: "localhost:8480", authorization: "Basic !!!", originRule: .ignored) == .unauthorized)
        #expect(check(guarded, host: "localhost:8480", originRule: .ignored) == .unauthorized)
        // The Host and Origin rule comes first: a foreign page learns nothing about the password.
        #expect(check(guarded, host: "evil.example:8480", originRule: .ignored) == .unknownHost("evil.example:8480"))
    }

    @Test func base64DecodesWithAndWithoutPadding() {
        #expect(Base64.decode("cmVlbDpzZWNyZXQ=") == Array("reel:secret".utf8))
        #expect(Base64.decode("cmVlbDpzZWNyZXQ") == Array("reel:secret".utf8))
        #expect(Base64.decode("YQ==") == [0x61])
        #expect(Base64.decode("YQ=x") == nil)
        #expect(Base64.decode("a b") == nil)
    }

    @Test func routesNameTheirOriginRule() {
        #expect(HTTPRoute(method: .GET, path: "/rpc").originRule == .required)
        #expect(HTTPRoute(method: .POST, path: "/import").originRule == .checkedIfPresent)
        #expect(HTTPRoute(method: .GET, path: "/").originRule == .ignored)
        #expect(HTTPRoute(method: .GET, path: "/audio/x").originRule == .ignored)
    }

    @Test func anAudioIdIsOneSegmentNeverAPath() {
        #expect(HTTPRoute(method: .GET, path: "/audio/0190-ab") == .audio(id: "0190-ab"))
        #expect(HTTPRoute(method: .GET, path: "/audio/../../etc/passwd") == .notFound)
        #expect(HTTPRoute(method: .GET, path: "/audio/") == .notFound)
        #expect(HTTPRoute(method: .POST, path: "/audio/x") == .methodNotAllowed(allow: "GET, HEAD"))
        #expect(HTTPRoute(method: .GET, path: "/import") == .methodNotAllowed(allow: "POST"))
        #expect(HTTPRoute(method: .GET, path: "/etc/passwd") == .notFound)
    }

    @Test func theCoverRouteTakesItsAlbumFromTheQueryAndChangesNothing() {
        #expect(HTTPRoute(method: .GET, path: "/cover") == .cover)
        #expect(HTTPRoute(method: .HEAD, path: "/cover") == .cover)
        #expect(HTTPRoute(method: .POST, path: "/cover") == .methodNotAllowed(allow: "GET, HEAD"))
        #expect(HTTPRoute(method: .GET, path: "/cover/x") == .notFound)
        #expect(HTTPRoute(method: .GET, path: "/cover").originRule == .ignored)
    }

    @Test func requestTargetsAreDecoded() {
        let target = HTTPRequestTarget("/import?folderPath=%2FTalks%20%C3%A9t%C3%A9&name=A+b&x")
        #expect(target?.path == "/import")
        #expect(target?.query == ["folderPath": "/Talks été", "name": "A b", "x": ""])
        #expect(HTTPRequestTarget("/audio/%zz") == nil)
        #expect(HTTPRequestTarget("/a?b=%ff") == nil)
        #expect(HTTPRequestTarget("http://elsewhere/") == nil)
    }

    private func base64(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
        var out = ""
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = chunk.enumerated().reduce(0) { $0 | Int($1.element) << (16 - 8 * $1.offset) }
            for position in 0..<4 {
                out.append(position <= chunk.count ? alphabet[(value >> (18 - 6 * position)) & 63] : "=")
            }
            index += 3
        }
        return out
    }
}
