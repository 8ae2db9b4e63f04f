// HLS playlists (RFC 8216): master playlists (variants) and media playlists (segments).
//
// How to use it (the network source): fetch the URL; `parseHLSPlaylist(body, url:)`. A master
// gives `chooseAudio(maximumBandwidth:)`: fetch that URL, a media playlist. Feed every load of
// the media playlist to an `HLSSegmentPlanner` (HLSSegmentPlanner.swift), fetch the segments it
// hands out, and reload the playlist at the time it says. Encrypted streams (`EXT-X-KEY` with a
// METHOD other than NONE) throw `.unsupported` here, before any segment is fetched.

/// A variant stream of a master playlist (`#EXT-X-STREAM-INF` and the URI line after it).
public struct HLSVariant: Equatable, Sendable {
    /// The variant's media playlist, resolved against the master's URL.
    public var url: String
    /// `BANDWIDTH` (bits per second, peak), or nil when missing or not a number.
    public var bandwidth: Int?
    /// `AVERAGE-BANDWIDTH`, if given.
    public var averageBandwidth: Int?
    /// `CODECS`, split at commas (`["mp4a.40.2"]`); empty when not given.
    public var codecs: [String]
    /// `RESOLUTION` (only video has one), if given.
    public var resolution: String?
    /// `AUDIO`: the group of `#EXT-X-MEDIA:TYPE=AUDIO` renditions it plays with, if any.
    public var audioGroup: String?

    public init(url: String, bandwidth: Int? = nil, averageBandwidth: Int? = nil, codecs: [String] = [],
                resolution: String? = nil, audioGroup: String? = nil) {
        self.url = url
        self.bandwidth = bandwidth
        self.averageBandwidth = averageBandwidth
        self.codecs = codecs
        self.resolution = resolution
        self.audioGroup = audioGroup
    }

    /// Whether every codec named is an audio codec and no resolution is given (a variant
    /// without `CODECS` and without `RESOLUTION` counts as audio: many radio masters omit both).
    public var isAudioOnly: Bool {
        resolution == nil && codecs.allSatisfy(isAudioCodec)
    }
}

/// An alternative audio rendition (`#EXT-X-MEDIA:TYPE=AUDIO` with a `URI`).
public struct HLSAudioRendition: Equatable, Sendable {
    public var url: String
    public var groupID: String
    public var name: String?
    public var isDefault: Bool

    public init(url: String, groupID: String, name: String? = nil, isDefault: Bool = false) {
        self.url = url
        self.groupID = groupID
        self.name = name
        self.isDefault = isDefault
    }
}

/// A master playlist: the variants to choose from.
public struct HLSMasterPlaylist: Equatable, Sendable {
    public var variants: [HLSVariant]
    public var audioRenditions: [HLSAudioRendition]

    public init(variants: [HLSVariant], audioRenditions: [HLSAudioRendition] = []) {
        self.variants = variants
        self.audioRenditions = audioRenditions
    }

    /// The media playlist to play for audio: the audio-only variant with the highest
    /// bandwidth not above `maximumBandwidth` (or the lowest one when all are above); else the
    /// default audio rendition of a variant's group (audio kept apart from video); else the
    /// variant with the lowest bandwidth (the least video to download and throw away). Nil
    /// when there is no variant.
    public func chooseAudio(maximumBandwidth: Int? = nil) -> String? {
        let audio = variants.filter(\.isAudioOnly)
        if !audio.isEmpty {
            let limit = maximumBandwidth ?? Int.max
            let fitting = audio.filter { ($0.bandwidth ?? 0) <= limit }
            if let best = fitting.max(by: { ($0.bandwidth ?? 0) < ($1.bandwidth ?? 0) }) { return best.url }
            return audio.min(by: { ($0.bandwidth ?? 0) < ($1.bandwidth ?? 0) })?.url
        }
        let groups = Set(variants.compactMap(\.audioGroup))
        let renditions = audioRenditions.filter { groups.contains($0.groupID) }
        if let rendition = renditions.first(where: \.isDefault) ?? renditions.first { return rendition.url }
        return variants.min(by: { ($0.bandwidth ?? Int.max) < ($1.bandwidth ?? Int.max) })?.url
    }
}

/// An `EXT-X-MAP`: the initialization section (fMP4 `ftyp`+`moov`) of the segments after it.
public struct HLSInitSection: Equatable, Sendable {
    public var url: String
    public var byteRange: HLSByteRange?

    public init(url: String, byteRange: HLSByteRange? = nil) {
        self.url = url
        self.byteRange = byteRange
    }
}

/// `EXT-X-BYTERANGE` / `BYTERANGE=`: `length` bytes from `offset` (an HTTP Range request).
public struct HLSByteRange: Equatable, Sendable {
    public var length: Int64
    public var offset: Int64

    public init(length: Int64, offset: Int64) {
        self.length = length
        self.offset = offset
    }
}

/// A media segment.
public struct HLSSegment: Equatable, Sendable {
    /// Its media sequence number (`EXT-X-MEDIA-SEQUENCE` + its index).
    public var sequence: Int64
    /// Its URL, resolved against the media playlist's URL.
    public var url: String
    /// `EXTINF`'s duration in seconds.
    public var duration: Double
    /// `EXTINF`'s title, if any.
    public var title: String?
    /// Whether `EXT-X-DISCONTINUITY` comes before it (a new encoder, format or timeline).
    public var discontinuity: Bool
    /// The initialization section it needs (fMP4), if any.
    public var initSection: HLSInitSection?
    /// The part of its URL's resource it is, if not all of it.
    public var byteRange: HLSByteRange?

    public init(sequence: Int64, url: String, duration: Double, title: String? = nil, discontinuity: Bool = false,
                initSection: HLSInitSection? = nil, byteRange: HLSByteRange? = nil) {
        self.sequence = sequence
        self.url = url
        self.duration = duration
        self.title = title
        self.discontinuity = discontinuity
        self.initSection = initSection
        self.byteRange = byteRange
    }
}

/// A media playlist: the segments now listed.
public struct HLSMediaPlaylist: Equatable, Sendable {
    public enum PlaylistType: String, Equatable, Sendable {
        case vod = "VOD"
        case event = "EVENT"
    }

    /// `EXT-X-TARGETDURATION`: the longest segment, in whole seconds (1…3600 accepted).
    public var targetDuration: Int
    /// `EXT-X-MEDIA-SEQUENCE`: the first segment's sequence number (0 when absent).
    public var mediaSequence: Int64
    /// `EXT-X-DISCONTINUITY-SEQUENCE` (0 when absent).
    public var discontinuitySequence: Int64
    public var segments: [HLSSegment]
    /// `EXT-X-ENDLIST`: no segment will be added (a finite stream).
    public var endList: Bool
    public var playlistType: PlaylistType?

    public init(targetDuration: Int, mediaSequence: Int64 = 0, discontinuitySequence: Int64 = 0,
                segments: [HLSSegment], endList: Bool = false, playlistType: PlaylistType? = nil) {
        self.targetDuration = targetDuration
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.segments = segments
        self.endList = endList
        self.playlistType = playlistType
    }

    /// Whether the stream is live: segments may still be added (no `EXT-X-ENDLIST`).
    public var isLive: Bool { !endList }

    /// The sum of the segments' durations.
    public var totalDuration: Double { segments.reduce(0) { $0 + $1.duration } }
}

/// What an HLS URL held.
public enum HLSPlaylist: Equatable, Sendable {
    case master(HLSMasterPlaylist)
    case media(HLSMediaPlaylist)
}

/// The largest `EXT-X-MEDIA-SEQUENCE` accepted (2⁶²: sequence arithmetic never overflows).
public let maximumHLSSequence: Int64 = 1 << 62

/// The longest segment or target duration accepted, in seconds.
public let maximumHLSSegmentDuration = 3600.0

/// Parses an HLS playlist. URIs are resolved against `url` (the playlist's own URL, after
/// redirects) and must then be `http` or `https`. Throws `.malformed` (no `#EXTM3U`, a media playlist without
/// `EXT-X-TARGETDURATION`, a master without variants, bad numbers), `.tooLarge` (beyond
/// `limits`) or `.unsupported` (encryption).
public func parseHLSPlaylist(
    _ bytes: [UInt8], url: String, limits: PlaylistLimits = .station
) throws(StreamFormatError) -> HLSPlaylist {
    guard bytes.count <= limits.maximumBytes else {
        throw StreamFormatError(.tooLarge, "the HLS playlist is larger than \(limits.maximumBytes) bytes")
    }
    var parser = HLSParser(url: url, limits: limits)
    var failure: StreamFormatError?
    forEachLine(bytes) { line in
        do throws(StreamFormatError) {
            try parser.take(line)
            return true
        } catch {
            failure = error
            return false
        }
    }
    if let failure { throw failure }
    return try parser.finish()
}

private struct HLSParser {
    let url: String
    let limits: PlaylistLimits
    var sawHeader = false
    var sawContent = false
    // Master.
    var variants: [HLSVariant] = []
    var renditions: [HLSAudioRendition] = []
    var pendingVariant: HLSVariant?
    // Media.
    var targetDuration: Int?
    var mediaSequence: Int64 = 0
    var discontinuitySequence: Int64 = 0
    var segments: [HLSSegment] = []
    var endList = false
    var playlistType: HLSMediaPlaylist.PlaylistType?
    var pendingDuration: Double?
    var pendingTitle: String?
    var pendingDiscontinuity = false
    var pendingByteRange: HLSByteRange?
    var nextByteRangeOffset: Int64?
    var initSection: HLSInitSection?

    init(url: String, limits: PlaylistLimits) {
        self.url = url
        self.limits = limits
    }

    mutating func take(_ line: TextLine) throws(StreamFormatError) {
        let text = trimmedBlankBytes(line.bytes)
        if text.isEmpty { return }
        guard text.count <= limits.maximumLineLength else {
            throw StreamFormatError(.tooLarge, "line \(line.number) of the HLS playlist is longer than \(limits.maximumLineLength) bytes")
        }
        if !sawHeader {
            guard hasASCIIPrefix(text, "#EXTM3U", ignoringCase: false) else {
                throw StreamFormatError(.malformed, "not an HLS playlist: it does not start with #EXTM3U")
            }
            sawHeader = true
            return
        }
        let string = decodeStationText(text)
        if string.hasPrefix("#") {
            try tag(string, line: line.number)
            return
        }
        // A URI line.
        guard variants.count + segments.count < limits.maximumEntries else {
            throw StreamFormatError(.tooLarge, "the HLS playlist lists more than \(limits.maximumEntries) entries")
        }
        let resolved = try resolve(string, line: line.number)
        if var variant = pendingVariant {
            variant.url = resolved
            variants.append(variant)
            pendingVariant = nil
        } else if let duration = pendingDuration {
            var range = pendingByteRange
            if let pending = range, pending.offset < 0 {
                guard let offset = nextByteRangeOffset else {
                    throw StreamFormatError(.malformed, "line \(line.number): EXT-X-BYTERANGE without an offset and no previous range")
                }
                range = HLSByteRange(length: pending.length, offset: offset)
            }
            if let range {
                let (end, overflow) = range.offset.addingReportingOverflow(range.length)
                nextByteRangeOffset = overflow ? nil : end
            }
            let sequence = mediaSequence + Int64(segments.count)
            segments.append(HLSSegment(
                sequence: sequence, url: resolved, duration: duration, title: pendingTitle,
                discontinuity: pendingDiscontinuity, initSection: initSection, byteRange: range))
            pendingDuration = nil
            pendingTitle = nil
            pendingDiscontinuity = false
            pendingByteRange = nil
        } else {
            throw StreamFormatError(.malformed, "line \(line.number) of the HLS playlist is a URI without #EXTINF or #EXT-X-STREAM-INF before it")
        }
        sawContent = true
    }

    mutating func tag(_ text: String, line: Int) throws(StreamFormatError) {
        let (name, value) = splitTag(text)
        switch name {
        case "#EXTINF":
            let comma = value.firstIndex(of: ",")
            let number = trimmedBlanks(comma.map { value[..<$0] } ?? value[...])
            guard number.count <= 24, let duration = Double(number), duration.isFinite, duration >= 0,
                duration <= maximumHLSSegmentDuration
            else {
                throw StreamFormatError(.malformed, "line \(line): #EXTINF duration '\(clip(String(number)))' is not 0…\(Int(maximumHLSSegmentDuration)) seconds")
            }
            pendingDuration = duration
            if let comma {
                let title = String(trimmedBlanks(value[value.index(after: comma)...]))
                pendingTitle = title.isEmpty ? nil : title
            }
        case "#EXT-X-TARGETDURATION":
            guard let seconds = Int(trimmedBlanks(value)), seconds >= 1, Double(seconds) <= maximumHLSSegmentDuration else {
                throw StreamFormatError(.malformed, "line \(line): EXT-X-TARGETDURATION '\(clip(String(value)))' is not 1…\(Int(maximumHLSSegmentDuration))")
            }
            targetDuration = seconds
        case "#EXT-X-MEDIA-SEQUENCE":
            guard segments.isEmpty, let number = Int64(trimmedBlanks(value)), number >= 0, number <= maximumHLSSequence else {
                throw StreamFormatError(.malformed, "line \(line): EXT-X-MEDIA-SEQUENCE '\(clip(String(value)))' is not 0…2⁶² before the first segment")
            }
            mediaSequence = number
        case "#EXT-X-DISCONTINUITY-SEQUENCE":
            guard let number = Int64(trimmedBlanks(value)), number >= 0 else {
                throw StreamFormatError(.malformed, "line \(line): EXT-X-DISCONTINUITY-SEQUENCE '\(clip(String(value)))' is not a number")
            }
            discontinuitySequence = number
        case "#EXT-X-DISCONTINUITY":
            pendingDiscontinuity = true
        case "#EXT-X-ENDLIST":
            endList = true
        case "#EXT-X-PLAYLIST-TYPE":
            playlistType = HLSMediaPlaylist.PlaylistType(rawValue: String(trimmedBlanks(value)).uppercased())
        case "#EXT-X-BYTERANGE":
            guard let range = parseByteRange(String(trimmedBlanks(value))) else {
                throw StreamFormatError(.malformed, "line \(line): EXT-X-BYTERANGE '\(clip(String(value)))' is not <length>[@<offset>]")
            }
            pendingByteRange = range
        case "#EXT-X-KEY", "#EXT-X-SESSION-KEY":
            let attributes = parseAttributes(value)
            let method = attributes["METHOD"]?.uppercased() ?? ""
            if method != "NONE" {
                throw StreamFormatError(
                    .unsupported, "encrypted HLS is not supported (line \(line): \(name.dropFirst()) METHOD=\(clip(method)))")
            }
        case "#EXT-X-MAP":
            let attributes = parseAttributes(value)
            guard let uri = attributes["URI"], !uri.isEmpty else {
                throw StreamFormatError(.malformed, "line \(line): EXT-X-MAP without a URI")
            }
            var range: HLSByteRange?
            if let text = attributes["BYTERANGE"] {
                guard let parsed = parseByteRange(text), parsed.offset >= 0 else {
                    throw StreamFormatError(.malformed, "line \(line): EXT-X-MAP BYTERANGE '\(clip(text))' is not <length>@<offset>")
                }
                range = parsed
            }
            initSection = HLSInitSection(url: try resolve(uri, line: line), byteRange: range)
        case "#EXT-X-STREAM-INF":
            let attributes = parseAttributes(value)
            pendingVariant = HLSVariant(
                url: "", bandwidth: attributes["BANDWIDTH"].flatMap { Int($0) },
                averageBandwidth: attributes["AVERAGE-BANDWIDTH"].flatMap { Int($0) },
                codecs: attributes["CODECS"].map { $0.split(separator: ",").map { String(trimmedBlanks($0)) } } ?? [],
                resolution: attributes["RESOLUTION"], audioGroup: attributes["AUDIO"])
        case "#EXT-X-MEDIA":
            let attributes = parseAttributes(value)
            if attributes["TYPE"]?.uppercased() == "AUDIO", let uri = attributes["URI"], let group = attributes["GROUP-ID"] {
                guard renditions.count < limits.maximumEntries else {
                    throw StreamFormatError(.tooLarge, "the HLS playlist lists more than \(limits.maximumEntries) renditions")
                }
                renditions.append(HLSAudioRendition(
                    url: try resolve(uri, line: line), groupID: group, name: attributes["NAME"],
                    isDefault: attributes["DEFAULT"]?.uppercased() == "YES"))
            }
        default:
            break  // other tags (EXT-X-VERSION, PROGRAM-DATE-TIME, comments) do not change what plays
        }
    }

    /// `uri` resolved against the playlist's URL; it must be `http` or `https` (a playlist
    /// never leads to a file or another scheme).
    func resolve(_ uri: String, line: Int) throws(StreamFormatError) -> String {
        let resolved = resolveURL(uri, against: url) ?? uri
        guard isHTTPURL(resolved) else {
            throw StreamFormatError(.malformed, "line \(line) of the HLS playlist is not an http or https URL: \(clip(resolved))")
        }
        return resolved
    }

    func finish() throws(StreamFormatError) -> HLSPlaylist {
        if !variants.isEmpty || pendingVariant != nil {
            guard segments.isEmpty else {
                throw StreamFormatError(.malformed, "the HLS playlist mixes variants and segments")
            }
            guard !variants.isEmpty else {
                throw StreamFormatError(.malformed, "the HLS master playlist's EXT-X-STREAM-INF has no URI after it")
            }
            return .master(HLSMasterPlaylist(variants: variants, audioRenditions: renditions))
        }
        guard sawHeader else { throw StreamFormatError(.malformed, "not an HLS playlist: it is empty") }
        guard let targetDuration else {
            throw StreamFormatError(.malformed, "the HLS media playlist has no EXT-X-TARGETDURATION")
        }
        return .media(HLSMediaPlaylist(
            targetDuration: targetDuration, mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence,
            segments: segments, endList: endList, playlistType: playlistType))
    }
}

/// `#NAME:value` → ("#NAME", "value"); a tag without a colon has an empty value.
private func splitTag(_ text: String) -> (String, Substring) {
    guard let colon = text.firstIndex(of: ":") else { return (String(trimmedBlanks(text)), "") }
    return (String(text[..<colon]), text[text.index(after: colon)...])
}

/// `<length>[@<offset>]`; a missing offset is -1 (continue after the previous range).
private func parseByteRange(_ text: String) -> HLSByteRange? {
    let parts = text.split(separator: "@", maxSplits: 1, omittingEmptySubsequences: false)
    guard let length = Int64(parts[0]), length >= 0 else { return nil }
    if parts.count == 2 {
        guard let offset = Int64(parts[1]), offset >= 0 else { return nil }
        return HLSByteRange(length: length, offset: offset)
    }
    return HLSByteRange(length: length, offset: -1)
}

/// An attribute list (`KEY=value,KEY="quoted, with commas"`): keys upper-cased, quotes removed.
func parseAttributes(_ text: Substring) -> [String: String] {
    var attributes: [String: String] = [:]
    var index = text.startIndex
    while index < text.endIndex, attributes.count < 64 {
        while index < text.endIndex, text[index] == "," || text[index] == " " { index = text.index(after: index) }
        guard let equals = text[index...].firstIndex(of: "=") else { break }
        let key = String(trimmedBlanks(text[index..<equals])).uppercased()
        var valueStart = text.index(after: equals)
        var value: Substring
        if valueStart < text.endIndex, text[valueStart] == "\"" {
            valueStart = text.index(after: valueStart)
            let close = text[valueStart...].firstIndex(of: "\"") ?? text.endIndex
            value = text[valueStart..<close]
            index = close < text.endIndex ? text.index(after: close) : close
        } else {
            let comma = text[valueStart...].firstIndex(of: ",") ?? text.endIndex
            value = trimmedBlanks(text[valueStart..<comma])
            index = comma
        }
        if !key.isEmpty, attributes[key] == nil { attributes[key] = String(value) }
    }
    return attributes
}

/// Whether an RFC 6381 codec name is audio (AAC and HE-AAC `mp4a.*`, MP3 `mp4a.40.34`/`mp3`,
/// AC-3, E-AC-3, Opus, FLAC, ALAC, Vorbis).
func isAudioCodec(_ codec: String) -> Bool {
    let lower = codec.lowercased()
    return lower.hasPrefix("mp4a") || lower == "mp3" || lower == "ac-3" || lower == "ec-3" || lower == "opus"
        || lower == "flac" || lower == "alac" || lower == "vorbis" || lower == "ac-4"
}
