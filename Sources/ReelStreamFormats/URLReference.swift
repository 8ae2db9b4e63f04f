// Resolving a playlist entry against the playlist's URL (RFC 3986, section 5.2), on strings.

/// The scheme of `text` in lower case (`http` of `HTTP://x`), or nil when `text` has none
/// (RFC 3986: a letter, then letters, digits, `+`, `-`, `.`, then `:`).
public func urlScheme(_ text: String) -> String? {
    var scheme = ""
    for (offset, character) in text.unicodeScalars.enumerated() {
        if character == ":" { return offset > 0 ? scheme.lowercased() : nil }
        let isLetter = (character >= "a" && character <= "z") || (character >= "A" && character <= "Z")
        let isOther = (character >= "0" && character <= "9") || character == "+" || character == "-" || character == "."
        guard isLetter || (offset > 0 && isOther), offset < 32 else { return nil }
        scheme.unicodeScalars.append(character)
    }
    return nil
}

/// Whether `text` is an `http://` or `https://` URL with a host.
public func isHTTPURL(_ text: String) -> Bool {
    guard let scheme = urlScheme(text), scheme == "http" || scheme == "https" else { return false }
    let rest = text.dropFirst(scheme.count + 1)
    guard rest.hasPrefix("//") else { return false }
    let authority = rest.dropFirst(2).prefix { $0 != "/" && $0 != "?" && $0 != "#" }
    let host = authority.split(separator: "@").last.map { $0.split(separator: ":").first ?? "" } ?? ""
    return !host.isEmpty || authority.contains("[")
}

/// `reference` resolved against the absolute URL `base` (RFC 3986, 5.2.2, with dot segments
/// removed). A reference with its own scheme is returned as it is; nil when `base` has no scheme.
public func resolveURL(_ reference: String, against base: String) -> String? {
    if urlScheme(reference) != nil { return reference }
    guard let baseScheme = urlScheme(base) else { return nil }
    let baseParts = URLParts(String(base.dropFirst(baseScheme.count + 1)))
    let ref = URLParts(reference)
    var result = URLParts()
    if let authority = ref.authority {
        result.authority = authority
        result.path = removeDotSegments(ref.path)
        result.query = ref.query
    } else {
        result.authority = baseParts.authority
        if ref.path.isEmpty {
            result.path = baseParts.path
            result.query = ref.query ?? baseParts.query
        } else {
            if ref.path.hasPrefix("/") {
                result.path = removeDotSegments(ref.path)
            } else {
                let merged: String
                if baseParts.authority != nil && baseParts.path.isEmpty {
                    merged = "/" + ref.path
                } else if let slash = baseParts.path.lastIndex(of: "/") {
                    merged = String(baseParts.path[...slash]) + ref.path
                } else {
                    merged = ref.path
                }
                result.path = removeDotSegments(merged)
            }
            result.query = ref.query
        }
    }
    result.fragment = ref.fragment
    return baseScheme + ":" + result.text
}

private struct URLParts {
    var authority: String?
    var path = ""
    var query: String?
    var fragment: String?

    init() {}

    init(_ text: String) {
        var rest = Substring(text)
        if let hash = rest.firstIndex(of: "#") {
            fragment = String(rest[rest.index(after: hash)...])
            rest = rest[..<hash]
        }
        if let question = rest.firstIndex(of: "?") {
            query = String(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        if rest.hasPrefix("//") {
            let afterSlashes = rest.dropFirst(2)
            let end = afterSlashes.firstIndex(of: "/") ?? afterSlashes.endIndex
            authority = String(afterSlashes[..<end])
            rest = afterSlashes[end...]
        }
        path = String(rest)
    }

    var text: String {
        var out = ""
        if let authority { out += "//" + authority }
        out += path
        if let query { out += "?" + query }
        if let fragment { out += "#" + fragment }
        return out
    }
}

/// RFC 3986, 5.2.4.
private func removeDotSegments(_ path: String) -> String {
    guard !path.isEmpty else { return path }
    var output: [Substring] = []
    let absolute = path.hasPrefix("/")
    var segments = Substring(path).split(separator: "/", omittingEmptySubsequences: false)
    if absolute { segments.removeFirst() }
    let endsWithDirectory = segments.last.map { $0 == "." || $0 == ".." || $0.isEmpty } ?? false
    for segment in segments {
        if segment == "." { continue }
        if segment == ".." {
            if !output.isEmpty { output.removeLast() }
            continue
        }
        output.append(segment)
    }
    var joined = (absolute ? "/" : "") + output.joined(separator: "/")
    if endsWithDirectory && !joined.hasSuffix("/") && !output.isEmpty { joined += "/" }
    if endsWithDirectory && output.isEmpty && !absolute { joined = "" }
    return joined
}
