// Tags, stream properties and embedded pictures of audio files, read with TagLib.

import CTagLib
import ReelModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads what the music folders' index keeps of an audio file: its tags (Title, Artist, Album,
/// AlbumArtist, Track, Disc, Date, Genre), its stream (codec, rate, channels, duration) and
/// whether it embeds a picture; and that picture, for `albumart`/`readpicture` and the web page.
///
/// **Why TagLib, through a C++ shim.** TagLib reads ID3v2 (and ID3v1, APE) in MP3, Vorbis
/// comments in Ogg Vorbis, Opus and FLAC, FLAC picture blocks and MP4 atoms alike, with one
/// key set for all of them (its property map: `ALBUMARTIST` is ID3v2's TPE2, MP4's aART, …).
/// libsndfile's `sf_get_string` has no album artist, track, disc or pictures and reads no MP3
/// tags; libmpg123's ID3 reader knows only MP3. TagLib 1.13's C API (`tag_c.h`, Debian 12's
/// libtagc0) has title, artist, album, comment, genre, year and track only: no album artist,
/// disc, full date, multiple values or pictures, and it keeps every string it returns in one
/// global list, which makes it unsafe on several threads. So `CTagLib` is a small C++ target
/// (one file, `Sources/CTagLib/CTagLib.cpp`) on TagLib's C++ API behind a C header that Swift
/// imports as it imports libsndfile; it links `libtag` only (not `libtag_c`).
///
/// **What it reads.** Files are opened read-only (TagLib's own `FileRef(path)` opens a file
/// read-write when it may, which a folder watcher would see as a write). The format comes from
/// the name's extension, else from the first bytes (a FLAC file named `.mp3` is read as FLAC).
/// ReplayGain (`replayGain`): `REPLAYGAIN_TRACK_GAIN/PEAK` and `REPLAYGAIN_ALBUM_GAIN/PEAK` from
/// Vorbis comments, ID3v2 `TXXX` frames, APE items (also an MP3's APE tag beside its ID3v2 tag)
/// and MP4 freeform atoms (`----:com.apple.iTunes:replaygain_*`), names in any case; where a
/// gain is missing, Opus's `R128_TRACK_GAIN`/`R128_ALBUM_GAIN` (see `ReplayGainInfo.parseR128`).
/// Empty values are dropped; a tag with several values (two ARTIST comments, an ID3v2.4 frame
/// with several strings) is one string, its values joined with `"; "` in the file's order.
/// Track and disc are the number before any `/` (`"3/12"` → 3, `"03"` → 3); a value with no
/// leading number is nil. Date is as tagged (`"1997"`, `"1997-03-12"`). Codecs are named as
/// `AudioFormat.codec` names them: `flac` (also FLAC in Ogg), `mp3`, `vorbis`, `opus`, `wav`,
/// `aiff`, `aac` and `alac` (MP4), and TagLib's other formats (`speex`, `wavpack`, `mpc`,
/// `ape`, `tta`, `wma`, `mod`), which Reel may not decode. Opus reports 48000 Hz, as it decodes.
///
/// **Pictures** (`picture(path:)`): FLAC picture blocks, METADATA_BLOCK_PICTURE in Vorbis
/// comments (Ogg Vorbis, Opus, Ogg FLAC, a FLAC file's comment), ID3v2 APIC frames (MP3, WAV,
/// AIFF) and MP4's covr atom; the front cover when one is marked so, else the first. The MIME
/// type is as tagged, or from the bytes (PNG, JPEG, GIF, BMP, WebP) when the tag gives none.
///
/// **Threads.** Every call opens its own file and keeps nothing, and TagLib 1.13's reading
/// shares no mutable state between files (its reference counts are atomic; the lazily built
/// tables it has are used only when writing tags), so calls may run on several threads at
/// once, on different files or the same one. (TagLib 2.0 and 2.1 build some tables on first
/// use while reading ID3v2 and MP4 files, unsynchronised; should Reel move to those, read one
/// file before starting the others.)
public enum TagReader {
    /// Tags, stream properties and whether the file embeds a picture. Throws a ReelError that
    /// names the file and what is wrong: `.notFound` (no such file), `.ioError` (cannot be
    /// opened or read: permissions, a directory), `.unsupportedFormat` (not an audio format
    /// TagLib knows), `.corruptFile` (a format it knows, but the headers cannot be read or
    /// describe no audio stream; an empty file).
    public static func read(path: String) throws(ReelError) -> ScannedAudio {
        try checkReadable(path)
        var info = ReelTagsInfo()
        let status = reel_tags_read(path, &info)
        defer { reel_tags_info_free(&info) }
        try check(status, path: path, codec: info.codec, errorNumber: info.error_number)

        let tags = TrackTags(
            title: string(info.title), artist: string(info.artist), album: string(info.album),
            albumArtist: string(info.album_artist), track: leadingNumber(string(info.track)),
            disc: leadingNumber(string(info.disc)), date: string(info.date), genre: string(info.genre))
        return ScannedAudio(
            tags: tags, codec: info.codec.map { String(cString: $0) } ?? "unknown",
            sampleRate: Int(info.sample_rate), channels: Int(info.channels),
            duration: info.length_milliseconds > 0 ? Double(info.length_milliseconds) / 1000 : nil,
            hasEmbeddedCover: info.has_picture != 0,
            replayGain: ReplayGainInfo(
                trackGain: string(info.replaygain_track_gain), trackPeak: string(info.replaygain_track_peak),
                albumGain: string(info.replaygain_album_gain), albumPeak: string(info.replaygain_album_peak),
                r128TrackGain: string(info.r128_track_gain), r128AlbumGain: string(info.r128_album_gain)))
    }

    /// The embedded front cover (or first picture): bytes and MIME type; nil when there is none.
    /// Throws as `read(path:)` does.
    public static func picture(path: String) throws(ReelError) -> (bytes: [UInt8], mimeType: String)? {
        try checkReadable(path)
        var picture = ReelTagsPicture()
        let status = reel_tags_picture(path, &picture)
        defer { reel_tags_picture_free(&picture) }
        try check(status, path: path, codec: picture.codec, errorNumber: picture.error_number)
        guard let start = picture.bytes, picture.count > 0 else { return nil }
        let bytes = Array(UnsafeBufferPointer(start: start, count: picture.count))
        let tagged = string(picture.mime_type)?.lowercased()
        return (bytes, mimeType(tagged: tagged, bytes: bytes))
    }

    // MARK: - Errors

    /// Not there, not a file, not readable or empty: said before TagLib is asked (TagLib says
    /// only that it found no file).
    private static func checkReadable(_ path: String) throws(ReelError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let error = errno
            if error == ENOENT || error == ENOTDIR {
                throw ReelError(.notFound, "no such file: \(path)")
            }
            throw ReelError(.ioError, "cannot read \(path): \(describe(error))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let what = (info.st_mode & S_IFMT) == S_IFDIR ? "a directory" : "not a regular file"
            throw ReelError(.ioError, "cannot read \(path): \(what), not an audio file")
        }
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else {
            throw ReelError(.ioError, "cannot read \(path): \(describe(errno))")
        }
        close(descriptor)
        guard info.st_size > 0 else {
            throw ReelError(.corruptFile, "empty file: \(path)")
        }
    }

    private static func check(
        _ status: ReelTagsStatus, path: String, codec: UnsafePointer<CChar>?, errorNumber: Int32
    ) throws(ReelError) {
        let format = codec.map { formatName(String(cString: $0)) } ?? "audio"
        switch status {
        case REEL_TAGS_OK:
            return
        case REEL_TAGS_UNKNOWN_FORMAT:
            throw ReelError(.unsupportedFormat, "not an audio file Reel can read the tags of: \(path)")
        case REEL_TAGS_INVALID:
            throw ReelError(.corruptFile, "corrupt or truncated \(format) file: \(path) (its headers cannot be read)")
        case REEL_TAGS_NO_AUDIO:
            throw ReelError(.corruptFile, "corrupt \(format) file: \(path) (no audio stream found in it)")
        case REEL_TAGS_OPEN_FAILED:
            throw ReelError(.ioError, "cannot read \(path): \(describe(errorNumber))")
        default:
            throw ReelError(.ioError, "cannot read the tags of \(path): TagLib failed (out of memory?)")
        }
    }

    private static func formatName(_ codec: String) -> String {
        switch codec {
        case "flac", "mp3", "wav", "aiff", "aac", "alac", "mp4", "ape", "tta", "wma", "mpc": codec.uppercased()
        case "vorbis": "Ogg Vorbis"
        case "opus": "Opus"
        case "speex": "Speex"
        case "wavpack": "WavPack"
        default: "audio"
        }
    }

    private static func describe(_ error: Int32) -> String {
        String(cString: strerror(error))
    }

    // MARK: - Values

    /// A C string from the shim, nil when NULL or only white space.
    private static func string(_ text: UnsafeMutablePointer<CChar>?) -> String? {
        guard let text else { return nil }
        let value = String(cString: text)
        return value.allSatisfy(\.isWhitespace) ? nil : value
    }

    /// The number a track or disc value starts with: `"3/12"` → 3, `" 03 "` → 3, `"A1"` → nil.
    static func leadingNumber(_ text: String?) -> Int? {
        guard let text else { return nil }
        let digits = text.drop(while: \.isWhitespace).prefix(while: { $0.isASCII && $0.isNumber })
        guard !digits.isEmpty, digits.count <= 9 else { return nil }
        return Int(digits)
    }

    /// The picture's MIME type: as tagged when it names an image type ("jpg" made "jpeg"), else
    /// from its first bytes; `application/octet-stream` when neither says.
    static func mimeType(tagged: String?, bytes: [UInt8]) -> String {
        if let tagged, tagged.hasPrefix("image/"), tagged.count > "image/".count {
            return tagged == "image/jpg" ? "image/jpeg" : tagged
        }
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if bytes.starts(with: Array("GIF8".utf8)) { return "image/gif" }
        if bytes.starts(with: Array("BM".utf8)) { return "image/bmp" }
        if bytes.count >= 12, bytes.starts(with: Array("RIFF".utf8)), Array(bytes[8..<12]) == Array("WEBP".utf8) {
            return "image/webp"
        }
        // Some taggers write a bare format where the MIME type goes ("PNG", "jpg").
        switch tagged {
        case "png": return "image/png"
        case "jpg", "jpeg": return "image/jpeg"
        default: return "application/octet-stream"
        }
    }
}
