// The web page's files, built into the binary from HTTP/Page/ (SwiftPM's embedInCode).

import NIOCore

/// One file of the page: its bytes (shared by every response: writing them copies nothing),
/// its type and an ETag, so a browser revalidates (`Cache-Control: no-cache`) and gets a 304
/// while the daemon is not upgraded, and the new page at once when it is.
struct HTTPPageAsset: Sendable {
    let bytes: ByteBuffer
    let contentType: String
    let etag: String

    init(_ bytes: [UInt8], contentType: String) {
        self.bytes = ByteBuffer(bytes: bytes)
        self.contentType = contentType
        etag = "\"" + String(HTTPPageAsset.fnv1a(bytes), radix: 16) + "\""
    }

    /// 64-bit FNV-1a: a fingerprint of the file's bytes for its ETag (not a security measure).
    static func fnv1a(_ bytes: [UInt8]) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x100_0000_01b3
        }
        return hash
    }
}

/// The page's routes: `/` (and `/index.html`), `/app.js`, `/style.css`. The files are
/// `Sources/ReelDaemon/HTTP/Page/`; nothing is read from disk or fetched at run time.
enum HTTPPageAssets {
    static let index = HTTPPageAsset(PackageResources.index_html, contentType: "text/html; charset=utf-8")
    static let script = HTTPPageAsset(PackageResources.app_js, contentType: "text/javascript; charset=utf-8")
    static let styles = HTTPPageAsset(PackageResources.style_css, contentType: "text/css; charset=utf-8")

    /// The asset served at `path`, if any.
    static func asset(at path: String) -> HTTPPageAsset? {
        switch path {
        case "/", "/index.html": index
        case "/app.js": script
        case "/style.css": styles
        default: nil
        }
    }
}
