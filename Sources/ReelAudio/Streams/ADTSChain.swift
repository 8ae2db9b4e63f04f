// Whether a stream's first bytes are ADTS AAC frames beyond doubt: a header whose next header
// follows at the length it says, and again. Pure.

/// ADTS frame headers chained in a stream's first bytes. A station that checks out opens with
/// FFmpeg's `aac` demuxer named (`FFmpegStreamReader`), skipping the format probe, which runs
/// every demuxer's probe over up to 64 KiB of an Icecast burst (about 3 ms on a Pi-class core);
/// anything else is probed as before.
enum ADTSChain {
    /// The headers that must chain: the one found and the two after it.
    static let headers = 3
    /// How far into the bytes the first header may be: an Icecast burst starts in the middle of
    /// a frame (at most 8,191 bytes, ADTS's longest), a stream at a frame.
    static let searchBytes = 8192

    /// The offset of the first of `headers` ADTS headers that chain (each the next's distance
    /// away by its frame length, all with the same MPEG version, profile, sampling frequency
    /// and channel configuration) starting within `searchBytes`; nil when `bytes` hold none.
    /// Bytes that start with another container's signature (an MPEG-TS packet, an Ogg page, a
    /// FLAC stream, an MP4 box) hold none: ADTS frames inside them (a TS packet's payload) are
    /// that container's.
    static func start(in bytes: [UInt8]) -> Int? {
        guard !startsWithOtherContainer(bytes) else { return nil }
        var offset = 0
        while offset < min(bytes.count, searchBytes) {
            if chains(bytes, from: offset) { return offset }
            offset += 1
        }
        return nil
    }

    /// MPEG-TS (sync bytes 188 apart), `OggS`, `fLaC`, an MP4's `ftyp`.
    static func startsWithOtherContainer(_ bytes: [UInt8]) -> Bool {
        if bytes.count > 188 && bytes[0] == 0x47 && bytes[188] == 0x47 { return true }
        if bytes.starts(with: Array("OggS".utf8)) || bytes.starts(with: Array("fLaC".utf8)) { return true }
        return bytes.count >= 8 && bytes[4...7].elementsEqual(Array("ftyp".utf8))
    }

    /// `headers` headers chain from `offset`.
    static func chains(_ bytes: [UInt8], from offset: Int) -> Bool {
        guard let first = header(bytes, at: offset) else { return false }
        var at = offset + first.length
        for _ in 1..<headers {
            guard let next = header(bytes, at: at), next.fixed == first.fixed else { return false }
            at += next.length
        }
        return true
    }

    /// An ADTS header at `offset`: the 12-bit sync word, layer 0, a sampling frequency index
    /// below 13, a frame length that holds at least the header (7 bytes, 9 with its CRC).
    /// `fixed` is its fixed header's fields that do not change from frame to frame.
    static func header(_ bytes: [UInt8], at offset: Int) -> (length: Int, fixed: UInt32)? {
        guard offset >= 0, offset + 7 <= bytes.count else { return nil }
        let b0 = bytes[offset], b1 = bytes[offset + 1], b2 = bytes[offset + 2], b3 = bytes[offset + 3]
        guard b0 == 0xFF, b1 & 0xF6 == 0xF0, (b2 >> 2) & 0x0F < 13 else { return nil }
        let length = Int(b3 & 0x03) << 11 | Int(bytes[offset + 4]) << 3 | Int(bytes[offset + 5] >> 5)
        let headerLength = b1 & 0x01 == 0 ? 9 : 7
        guard length >= headerLength else { return nil }
        // MPEG version, protection, profile, sampling frequency, channel configuration.
        let fixed = UInt32(b1 & 0x09) << 16 | UInt32(b2 & 0xFD) << 8 | UInt32(b3 >> 6)
        return (length, fixed)
    }
}
