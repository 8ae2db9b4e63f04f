// libFuzzer entry for the station playlist readers and the stored playlist format
// (scripts/fuzz-stream-formats). Input: byte 0 picks the format, the rest is the body.
// Properties checked besides "no crash": a stored playlist written and read back is the same;
// an M3U written from parsed entries parses back to the same entries.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPlaylist(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size >= 1 else { return 0 }
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let body = Array(input[1...])
    let format: PlaylistFormat = [.m3u, .pls, .xspf][Int(input[0] % 3)]
    let url = input[0] & 0x80 == 0 ? "http://radio.example/lists/a/b.pls?x=1" : nil

    _ = sniffPlaylistFormat(body)
    _ = isHLSPlaylist(body)
    _ = playlistFormat(url: decodeStationText(body.prefix(200)), contentType: decodeStationText(body.suffix(40)))

    if case .stations(let list)? = try? parseStationPlaylist(body, format: format, url: url) {
        precondition(!list.entries.isEmpty && list.entries.count <= PlaylistLimits.station.maximumEntries)
        for entry in list.entries { precondition(isHTTPURL(entry.location), "a non-http entry: \(entry.location)") }
        if format == .m3u, let written = try? writeM3U(list.entries) {
            guard case .stations(let again)? = try? parseStationPlaylist(written, format: .m3u, url: nil) else {
                fatalError("written M3U does not parse: \(String(decoding: written, as: UTF8.self))")
            }
            precondition(again.entries == list.entries, "M3U round trip changed the entries")
        }
    }

    let limits = PlaylistLimits(maximumBytes: 1 << 20, maximumEntries: 500, maximumLineLength: 300)
    let entriesOnly = try? StoredPlaylistEntries(reading: body, limits: limits)
    precondition((entriesOnly == nil) == ((try? StoredPlaylist(reading: body, limits: limits)) == nil), "the two readings disagree on an error")
    if let stored = try? StoredPlaylist(reading: body, limits: limits) {
        _ = stored.brokenLines
        if let entriesOnly {
            precondition(entriesOnly.entries == stored.entries, "the entries read in one pass differ")
            precondition(entriesOnly.brokenLines.map(\.line) == stored.brokenLines.map(\.line), "the broken lines read in one pass differ")
            precondition(entriesOnly.distinctOfEntry.map { entriesOnly.distinct[$0] } == stored.entries, "a distinct line is not its entry")
        }
        if let encoded = try? stored.encoded() {
            let again = try? StoredPlaylist(reading: encoded, limits: limits)
            precondition(again == stored, "stored playlist round trip changed it")
        }
    }

    let text = decodeStationText(body.prefix(400))
    _ = resolveURL(text, against: "http://a/b/c/d;p?q")
    _ = resolveURL("../x", against: text)
    _ = isHTTPURL(text)
    return 0
}
