// Which decoder a stream goes to: by its first bytes, then by its Content-Type. Pure.

/// The decoder of a stream.
enum StreamDecoderChoice: Equatable {
    /// libmpg123's feed mode (`Mpg123StreamReader`): MP3.
    case mpg123
    /// FFmpeg over the stream (`FFmpegStreamReader`): everything else, probed from its bytes.
    case ffmpeg

    /// The bytes decide when they are a container or frame header that cannot be mistaken
    /// (Ogg, FLAC, MP4, ADTS AAC, an MPEG audio frame): a server's type may lie. Else the type:
    /// MP3's types go to libmpg123 (which looks for the first frame itself), any other type,
    /// or none, to FFmpeg, whose probe says what it is (or that it is not audio).
    static func choose(mediaType: String?, isMPEGAudioType: Bool, first bytes: [UInt8]) -> StreamDecoderChoice {
        if startsWith(bytes, "OggS") || startsWith(bytes, "fLaC") { return .ffmpeg }
        if bytes.count >= 8, bytes[4...7].elementsEqual(Array("ftyp".utf8)) { return .ffmpeg }
        if looksLikeADTS(bytes) { return .ffmpeg }
        if looksLikeMPEGAudioFrame(bytes) { return .mpg123 }
        if isMPEGAudioType { return .mpg123 }
        // An ID3v2 tag first says nothing of what follows: MP3 unless the type says otherwise.
        if startsWith(bytes, "ID3") && (mediaType == nil || mediaType?.hasPrefix("audio/") == false) { return .mpg123 }
        return .ffmpeg
    }

    /// The decoder a response's type promises before any byte of its body has come, or nil when
    /// the type does not tell: no type, a type that is not audio (a web page, a playlist's,
    /// `application/octet-stream`), a station playlist (`isPlaylist`). MP3's types:
    /// `.mpg123`; any other audio type (and `application/ogg`): `.ffmpeg`. Used to load the
    /// decoder's libraries while the body is awaited (`StreamDecoderPreload`); `choose` still
    /// decides by the bytes.
    static func expected(mediaType: String?, isMPEGAudioType: Bool, isPlaylist: Bool) -> StreamDecoderChoice? {
        guard !isPlaylist, let type = mediaType?.lowercased() else { return nil }
        if isMPEGAudioType { return .mpg123 }
        return type.hasPrefix("audio/") || type == "application/ogg" ? .ffmpeg : nil
    }

    static func startsWith(_ bytes: [UInt8], _ text: String) -> Bool {
        bytes.starts(with: Array(text.utf8))
    }

    /// An ADTS header: the 12-bit sync word, layer 0 (MPEG audio frames have layer 1–3), a
    /// sampling frequency index below 13.
    static func looksLikeADTS(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 3, bytes[0] == 0xFF, bytes[1] & 0xF6 == 0xF0 else { return false }
        return (bytes[2] >> 2) & 0x0F < 13
    }

    /// An MPEG audio (MP3, MP2) frame header: 11 sync bits and a layer other than 0.
    static func looksLikeMPEGAudioFrame(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 2 && bytes[0] == 0xFF && (bytes[1] & 0xE0) == 0xE0 && (bytes[1] & 0x06) != 0
    }
}
