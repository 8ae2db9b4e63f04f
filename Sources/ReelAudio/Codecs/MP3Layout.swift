// The start of an MP3 file read byte by byte, without a decoder: where the first MPEG frame is
// (after any ID3v2 tag) and what its Xing/Info tag says. `AudioFileOpener` uses it to recognise
// an MP3 without libsndfile, and `Mpg123Reader` to know whether the length it gets from
// libmpg123 at open is exact (read from the tag) or only an estimate.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// The 4-byte header of an MPEG-1, -2 or -2.5 Layer III frame. A value; any thread.
struct MP3FrameHeader: Equatable {
    enum Version: Equatable { case mpeg1, mpeg2, mpeg25 }
    let version: Version
    let bitrate: Int
    let sampleRate: Int
    let padding: Bool
    let mono: Bool
    /// A 16-bit CRC follows the header (the protection bit is 0).
    let hasCRC: Bool

    /// Parses the header at `offset`; nil if there is none there (no sync, another layer, a
    /// reserved or free-format field).
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        let b1 = bytes[offset + 1], b2 = bytes[offset + 2], b3 = bytes[offset + 3]
        guard bytes[offset] == 0xFF, b1 & 0xE0 == 0xE0, (b1 >> 1) & 3 == 1 else { return nil }  // sync, Layer III
        switch (b1 >> 3) & 3 {
        case 3: version = .mpeg1
        case 2: version = .mpeg2
        case 0: version = .mpeg25
        default: return nil
        }
        let bitrateIndex = Int(b2 >> 4), rateIndex = Int((b2 >> 2) & 3)
        guard bitrateIndex != 0, bitrateIndex != 15, rateIndex != 3 else { return nil }
        let kilobits: [Int] =
            version == .mpeg1
            ? [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
            : [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160]
        let rates: [Int] =
            switch version {
            case .mpeg1: [44100, 48000, 32000]
            case .mpeg2: [22050, 24000, 16000]
            case .mpeg25: [11025, 12000, 8000]
            }
        bitrate = kilobits[bitrateIndex] * 1000
        sampleRate = rates[rateIndex]
        padding = (b2 >> 1) & 1 == 1
        mono = (b3 >> 6) == 3
        hasCRC = b1 & 1 == 0
    }

    /// Bytes in the frame, header included.
    var length: Int {
        (version == .mpeg1 ? 144 : 72) * bitrate / sampleRate + (padding ? 1 : 0)
    }

    /// The mean length of frames at this bitrate and rate, padding spread over them: what
    /// `length` is on average, without padding's jitter.
    var nominalLength: Double {
        Double(version == .mpeg1 ? 144 : 72) * Double(bitrate) / Double(sampleRate)
    }

    /// Bytes of side information after the header (and after the CRC, which libmpg123 does not
    /// count when it looks for a Xing/Info tag: neither do we).
    var sideInformationLength: Int {
        switch (version == .mpeg1, mono) {
        case (true, false): 32
        case (true, true), (false, false): 17
        case (false, true): 9
        }
    }
}

/// What a Xing or Info tag (LAME writes "Xing" for VBR, "Info" for CBR) declares.
struct XingTag: Equatable {
    /// MPEG frames after the tag's own frame, if the tag has the field.
    let frames: Int64?
    /// Bytes of the stream from the tag's frame on, if the tag has the field.
    let bytes: Int64?

    /// The tag in `frame` (the first frame's bytes, header included), found where libmpg123 looks
    /// for it: right after the side information, which must be all zero (the first two bytes
    /// after the header excepted).
    init?(frame: [UInt8], header: MP3FrameHeader) {
        let start = 4 + header.sideInformationLength
        let length = min(frame.count, header.length)
        guard length >= start + 8, frame[6..<start].allSatisfy({ $0 == 0 }) else { return nil }
        let id = Array(frame[start..<(start + 4)])
        guard id == Array("Xing".utf8) || id == Array("Info".utf8) else { return nil }
        func field(_ at: Int) -> Int64? {
            guard at + 4 <= length else { return nil }
            return frame[at..<(at + 4)].reduce(0) { $0 << 8 | Int64($1) }
        }
        let flags = field(start + 4) ?? 0
        var next = start + 8
        frames = flags & 1 != 0 ? field(next) : nil
        if flags & 1 != 0 { next += 4 }
        bytes = flags & 2 != 0 ? field(next) : nil
    }
}

/// Where an MP3 stream starts in its file and what its first frame says.
struct MP3Layout: Equatable {
    /// Offset of the first MPEG frame: after the ID3v2 tags, if any.
    let audioStart: Int64
    let firstFrame: MP3FrameHeader
    /// The Xing/Info tag in the first frame, if it has one.
    let xing: XingTag?
    /// The file's size in bytes.
    let fileSize: Int64

    /// How many bytes of the stream `parse` wants: a whole first frame (at most 1,441 bytes in
    /// Layer III) and the next frame's header.
    static let probeLength = 4096

    /// The layout of the file at `path`, or nil if it does not start with an MPEG Layer III frame
    /// (after ID3v2 tags). Reads at most a few kilobytes. Any thread; blocks on the file.
    static func read(path: String) -> MP3Layout? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        var start: Int64 = 0
        // ID3v2 tags may follow one another; a few at most.
        for _ in 0..<4 {
            guard let size = id3v2Length(readBytes(descriptor, at: start, count: 10)) else { break }
            start += Int64(size)
        }
        return parse(readBytes(descriptor, at: start, count: probeLength), at: start, fileSize: Int64(info.st_size))
    }

    /// Bytes in the ID3v2 tag these (at least 10) bytes begin, header and footer included; nil
    /// if they begin none.
    static func id3v2Length(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 10, bytes[0] == 0x49, bytes[1] == 0x44, bytes[2] == 0x33,  // "ID3"
            bytes[3] != 0xFF, bytes[4] != 0xFF, bytes[6..<10].allSatisfy({ $0 < 0x80 })
        else { return nil }
        let size = bytes[6..<10].reduce(0) { $0 << 7 | Int($1) }
        return 10 + size + (bytes[5] & 0x10 != 0 ? 10 : 0)
    }

    /// The layout from the bytes at `offset` (`probeLength` of them, or up to the end of the
    /// file): an MPEG Layer III frame that is followed by another of the same version and rate
    /// (or by the end of the file), so that chance bytes are not taken for one.
    static func parse(_ bytes: [UInt8], at offset: Int64, fileSize: Int64) -> MP3Layout? {
        guard let first = MP3FrameHeader(bytes, at: 0), bytes.count >= first.length else { return nil }
        if offset + Int64(first.length) < fileSize {
            guard let second = MP3FrameHeader(bytes, at: first.length),
                second.version == first.version, second.sampleRate == first.sampleRate
            else { return nil }
        }
        return MP3Layout(
            audioStart: offset, firstFrame: first, xing: XingTag(frame: bytes, header: first), fileSize: fileSize)
    }

    /// The frame count the Xing/Info tag gives, if the tag has one and the file holds all the
    /// bytes the tag announces (a cut-off download keeps its tag but not its frames).
    var declaredFrames: Int64? {
        guard let frames = xing?.frames, frames > 0 else { return nil }
        if let bytes = xing?.bytes, bytes > 0, audioStart + bytes > fileSize { return nil }
        return frames
    }

    private static func readBytes(_ descriptor: Int32, at offset: Int64, count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let n = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + filled, count - filled, off_t(offset) + off_t(filled)) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        return Array(bytes[0..<filled])
    }
}
