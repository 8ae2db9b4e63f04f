// Which route a request's method and path name.

import NIOHTTP1

/// The routes of the HTTP front end. Pure; any thread.
///
/// | route | methods |
/// |---|---|
/// | `/`, `/index.html`, `/app.js`, `/style.css` — the page | GET, HEAD |
/// | `/rpc` — the WebSocket (JSON-RPC) | GET with `Upgrade: websocket` |
/// | `/audio/<recording id>` — a recording's file | GET, HEAD |
/// | `/cover?album=NAME[&artist=ARTIST]` — an album's art from the music folders | GET, HEAD |
/// | `/import` — an upload imported into the library | POST |
enum HTTPRoute: Equatable, Sendable {
    case page(path: String)
    case rpc
    case audio(id: String)
    case cover
    case upload
    case notFound
    case methodNotAllowed(allow: String)

    init(method: HTTPMethod, path: String) {
        let readable = method == .GET || method == .HEAD
        if HTTPPageAssets.asset(at: path) != nil {
            self = readable ? .page(path: path) : .methodNotAllowed(allow: "GET, HEAD")
        } else if path == "/rpc" {
            self = method == .GET ? .rpc : .methodNotAllowed(allow: "GET")
        } else if path.hasPrefix("/audio/") {
            let id = path.dropFirst("/audio/".count)
            // An id is a name the library looks up, never a path: one segment, nothing else.
            guard !id.isEmpty, !id.contains("/") else {
                self = .notFound
                return
            }
            self = readable ? .audio(id: String(id)) : .methodNotAllowed(allow: "GET, HEAD")
        } else if path == "/cover" {
            self = readable ? .cover : .methodNotAllowed(allow: "GET, HEAD")
        } else if path == "/import" {
            self = method == .POST ? .upload : .methodNotAllowed(allow: "POST")
        } else {
            self = .notFound
        }
    }

    /// How the Origin header is checked on this route (see `HTTPAccessRule`).
    var originRule: HTTPAccessRule.OriginRule {
        switch self {
        case .rpc: .required
        case .upload: .checkedIfPresent
        default: .ignored
        }
    }
}
