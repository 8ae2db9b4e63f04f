// The one list of codecs: what each is called, which suffixes and MIME types name it, and which
// decoder reads it. The music scanner, the decoders, `daemon.info`, MPD's `decoders`, HTTP's
// content types and the CLI all read it.

import ReelModel

#if canImport(Glibc)
import Glibc
#endif

/// A codec Reel knows, and the library that decodes it.
public struct Codec: Sendable {
    /// Which library decodes a codec.
    public enum Decoder: Sendable, Equatable {
        /// libsndfile (`SndFileReader`).
        case sndfile
        /// libmpg123 (`Mpg123Reader`).
        case mpg123
    }

    public let description: CodecDescription
    public let decoder: Decoder
    public var name: String { description.name }
    public var suffixes: [String] { description.suffixes }
    public var mimeTypes: [String] { description.mimeTypes }

    init(_ name: String, suffixes: [String], mimeTypes: [String], decoder: Decoder) {
        description = CodecDescription(name: name, suffixes: suffixes, mimeTypes: mimeTypes)
        self.decoder = decoder
    }
}

/// Every codec Reel plays, in the order `daemon.info` lists them. Adding a codec is one entry in
/// `known` (and, for a new library, a case of `Codec.Decoder` that `AudioFileOpener` opens).
///
/// A suffix names what to *try*: a file is playable when a decoder opens it (`probe`), whatever
/// its suffix says, so a `.ogg` holding FLAC, or a `.flac` that is really an MP3, is judged by
/// its content. Files with the suffixes of `audioSuffixesWithoutDecoder` are audio Reel has no
/// decoder for: the music scan reports them as failures, with the reason, instead of ignoring
/// them. Immutable; any thread.
public enum CodecRegistry {
    /// Every codec this build knows, whether or not the installed libraries decode it.
    static let known: [Codec] = [
        Codec("flac", suffixes: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"], decoder: .sndfile),
        Codec("mp3", suffixes: ["mp3"], mimeTypes: ["audio/mpeg", "audio/mp3"], decoder: .mpg123),
        Codec("vorbis", suffixes: ["ogg", "oga"], mimeTypes: ["audio/ogg", "audio/vorbis", "application/ogg"], decoder: .sndfile),
        Codec("opus", suffixes: ["opus"], mimeTypes: ["audio/ogg; codecs=opus", "audio/opus"], decoder: .sndfile),
        Codec("wav", suffixes: ["wav", "wave", "w64", "rf64"], mimeTypes: ["audio/wav", "audio/x-wav", "audio/wave"], decoder: .sndfile),
        Codec("aiff", suffixes: ["aif", "aiff", "aifc"], mimeTypes: ["audio/aiff", "audio/x-aiff"], decoder: .sndfile),
        Codec("au", suffixes: ["au", "snd"], mimeTypes: ["audio/basic"], decoder: .sndfile),
        Codec("caf", suffixes: ["caf"], mimeTypes: ["audio/x-caf"], decoder: .sndfile),
    ]

    /// The codecs the installed libraries decode (libsndfile's list is asked at run time).
    public static let codecs: [Codec] = {
        let sndfile = Set(SndFileReader.decodableCodecs())
        return known.filter { $0.decoder == .mpg123 || sndfile.contains($0.name) }
    }()

    /// What clients are told: `daemon.info`'s `decoders`.
    public static var descriptions: [CodecDescription] { codecs.map(\.description) }

    /// The codec named so (`format.codec`), nil if none.
    public static func codec(named name: String) -> Codec? {
        codecs.first { $0.name == name }
    }

    /// The suffixes of every playable codec (lowercase).
    public static let suffixes: Set<String> = Set(codecs.flatMap(\.suffixes))

    /// Audio file suffixes no decoder of this build takes, with what such a file holds (for the
    /// reason a scan reports). A scan looks at them so that they are reported, not ignored.
    public static let audioSuffixesWithoutDecoder: [String: String] = {
        let all: [String: String] = [
            "m4a": "MP4 audio (AAC or ALAC)", "m4b": "MP4 audio (AAC or ALAC)", "mp4": "MP4 audio (AAC or ALAC)",
            "aac": "AAC", "alac": "ALAC", "wv": "WavPack", "ape": "Monkey's Audio (APE)", "wma": "WMA",
            "asf": "WMA", "dsf": "DSD", "dff": "DSD", "tta": "TTA", "mpc": "Musepack", "mp2": "MPEG Layer II",
        ]
        return all.filter { !suffixes.contains($0.key) }
    }()

    /// Every suffix a music scan walks: the playable ones and the audio ones it reports.
    public static var scannedSuffixes: Set<String> { suffixes.union(audioSuffixesWithoutDecoder.keys) }

    /// The codec a suffix names first (for a content type), nil if none.
    public static func codec(forSuffix suffix: String) -> Codec? {
        let suffix = suffix.lowercased()
        return codecs.first { $0.suffixes.contains(suffix) }
    }

    /// The `Content-Type` of a file with this suffix: its codec's first MIME type, else
    /// `application/octet-stream`.
    public static func mimeType(forSuffix suffix: String) -> String {
        codec(forSuffix: suffix)?.mimeTypes.first ?? "application/octet-stream"
    }

    /// The lowercase suffix of a path's last component, "" if it has none.
    public static func suffix(of path: String) -> String {
        let name = path.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "" }
        return String(name[name.index(after: dot)...]).lowercased()
    }

    /// Checks that a decoder of this build opens the file, as playing it would, without reading
    /// more than its headers (an MP3's length is not counted); returns what it found. Throws
    /// `unsupported_format` naming the file and why (no decoder for its kind, or its content is
    /// not what any decoder reads), `corrupt_file` or `io_error` as opening it to play would.
    /// Any thread.
    public static func probe(path: String) throws(ReelError) -> (format: AudioFormat, duration: Double?) {
        let suffix = suffix(of: path)
        if let kind = audioSuffixesWithoutDecoder[suffix] {
            throw ReelError(
                .unsupportedFormat,
                "\(path) is \(kind), which this Reel cannot decode (it plays \(codecs.map(\.name).joined(separator: ", ")))")
        }
        let reader = try AudioFileOpener.openHeaders(path: path)
        return (reader.format, reader.duration)
    }
}
