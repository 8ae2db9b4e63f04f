// Tagged audio files made on the spot with Debian's encoders and taggers (sox, flac/metaflac,
// lame/eyeD3, oggenc, opusenc), and small pictures to embed in them.

import Foundation
import ReelModel
import ReelTestSupport

enum TaggedFiles {
    /// A fresh temporary directory, removed by the caller's `defer`.
    static func temporaryDirectory() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("reel-tags-test-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// Runs a tool; throws with its output when it fails. In a UTF-8 locale: eyeD3 reads its
    /// arguments as UTF-8 only in one.
    static func run(_ executable: String, _ arguments: [String]) throws {
        try TestTool.run(executable, arguments, environment: ["LC_ALL": "C.UTF-8"])
    }

    /// A WAV of a sine tone (sox).
    static func wav(_ path: String, seconds: Double = 1, rate: Int = 44100, channels: Int = 2) throws {
        try run(
            "/usr/bin/sox",
            ["-n", "-r", "\(rate)", "-c", "\(channels)", "-b", "16", path, "synth", "\(seconds)", "sine", "440", "vol", "0.5"])
    }

    static func flac(_ path: String, seconds: Double = 1, rate: Int = 44100, channels: Int = 2) throws {
        let source = path + ".src.wav"
        try wav(source, seconds: seconds, rate: rate, channels: channels)
        defer { try? FileManager.default.removeItem(atPath: source) }
        try run("/usr/bin/flac", ["--silent", "--force", "-o", path, source])
    }

    static func mp3(_ path: String, seconds: Double = 1, rate: Int = 44100, channels: Int = 2) throws {
        let source = path + ".src.wav"
        try wav(source, seconds: seconds, rate: rate, channels: channels)
        defer { try? FileManager.default.removeItem(atPath: source) }
        // No ID3 tag of lame's own: the tests tag with eyeD3 (or leave the file without tags).
        try run("/usr/bin/lame", ["--quiet", "--noreplaygain", "--id3v2-only", "-b", "128", source, path])
        try run("/usr/bin/eyeD3", ["--quiet", "--remove-all", path])
    }

    /// Ogg Vorbis (oggenc), with `comments` as `NAME=value` Vorbis comments.
    static func vorbis(_ path: String, seconds: Double = 1, comments: [String] = []) throws {
        let source = path + ".src.wav"
        try wav(source, seconds: seconds)
        defer { try? FileManager.default.removeItem(atPath: source) }
        try run("/usr/bin/oggenc", ["--quiet", "-o", path] + comments.flatMap { ["-c", $0] } + [source])
    }

    /// Opus (opusenc), with its tag options (`--title`, `--comment NAME=value`, `--picture`).
    static func opus(_ path: String, seconds: Double = 1, rate: Int = 44100, options: [String] = []) throws {
        let source = path + ".src.wav"
        try wav(source, seconds: seconds, rate: rate)
        defer { try? FileManager.default.removeItem(atPath: source) }
        try run("/usr/bin/opusenc", ["--quiet"] + options + [source, path])
    }

    // MARK: - Pictures

    /// A valid PNG of `width`×`height` RGB pixels of one colour: signature, IHDR, IDAT (zlib with
    /// stored deflate blocks), IEND.
    static func png(width: Int, height: Int, rgb: (UInt8, UInt8, UInt8)) -> [UInt8] {
        var raw: [UInt8] = []
        for _ in 0..<height {
            raw.append(0)  // filter: none
            for _ in 0..<width { raw += [rgb.0, rgb.1, rgb.2] }
        }
        var zlib: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, raw.count - offset)
            let final: UInt8 = offset + count == raw.count ? 1 : 0
            zlib += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            zlib += raw[offset..<(offset + count)]
            offset += count
        } while offset < raw.count
        zlib += bigEndian(adler32(raw))

        var ihdr = bigEndian(UInt32(width)) + bigEndian(UInt32(height))
        ihdr += [8, 2, 0, 0, 0]  // 8 bits, truecolour, deflate, adaptive filtering, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", ihdr) + chunk("IDAT", zlib)
            + chunk("IEND", [])
    }

    /// The headers of a baseline JPEG (SOI, JFIF APP0, SOF0 of `width`×`height`, EOI): enough for
    /// a tagger and a MIME sniffer, not for a decoder.
    static func jpegHeaders(width: Int, height: Int) -> [UInt8] {
        var bytes: [UInt8] = [0xFF, 0xD8]
        bytes += [0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8) + [0, 1, 1, 0, 0, 1, 0, 1, 0, 0]
        bytes += [0xFF, 0xC0, 0x00, 0x0B, 8, UInt8(height >> 8), UInt8(height & 0xFF), UInt8(width >> 8)]
        bytes += [UInt8(width & 0xFF), 1, 1, 0x11, 0]
        bytes += [0xFF, 0xD9]
        return bytes
    }

    /// A FLAC METADATA_BLOCK_PICTURE, base64, as a Vorbis comment carries it.
    static func metadataBlockPicture(type: UInt32 = 3, mimeType: String, description: String = "", bytes: [UInt8])
        -> String
    {
        var block = bigEndian(type)
        block += bigEndian(UInt32(mimeType.utf8.count)) + Array(mimeType.utf8)
        block += bigEndian(UInt32(description.utf8.count)) + Array(description.utf8)
        block += bigEndian(UInt32(1)) + bigEndian(UInt32(1)) + bigEndian(UInt32(24)) + bigEndian(UInt32(0))
        block += bigEndian(UInt32(bytes.count)) + bytes
        return Data(block).base64EncodedString()
    }

    static func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    private static func adler32(_ bytes: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return b << 16 | a
    }
}
