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
        /// FFmpeg (`FFmpegReader`), loaded by the first file that needs it; `names` are
        /// FFmpeg's decoders of the codec.
        case ffmpeg(names: [String])
    }

    /// How the recorder writes a codec, and how a take cut off by a crash is made whole.
    public struct Recording: Sendable {
        /// What `recorder.start`'s `format` and `record_format` call it (`ogg` for Vorbis).
        public let format: String
        /// The encoder of a live take, kept readable as it grows (`live`) or not.
        public let makeWriter: @Sendable (_ path: String, _ format: PCMFormat, _ live: Bool) throws(ReelError) -> RecordingWriter
        /// Repairs a file the recorder did not finish, in place; returns what it did (for the log).
        public let repair: @Sendable (_ path: String) throws(ReelError) -> String
    }

    public let description: CodecDescription
    public let decoder: Decoder
    /// Set for the codecs Reel records to.
    public let recording: Recording?
    public var name: String { description.name }
    public var suffixes: [String] { description.suffixes }
    public var mimeTypes: [String] { description.mimeTypes }

    init(_ name: String, suffixes: [String], mimeTypes: [String], decoder: Decoder, recording: Recording? = nil) {
        description = CodecDescription(name: name, suffixes: suffixes, mimeTypes: mimeTypes)
        self.decoder = decoder
        self.recording = recording
    }
}

/// Every codec Reel plays, in the order `daemon.info` lists them. Adding a codec is one entry in
/// `known` (and, for a new library, a case of `Codec.Decoder` that `AudioFileOpener` opens).
///
/// A suffix names what to *try*: a file is playable when a decoder opens it (`probe`), whatever
/// its suffix says, so a `.ogg` holding FLAC, or a `.flac` that is really an MP3, is judged by
/// its content, and one that no decoder opens is a music scan failure with the decoder's
/// reason. Immutable; any thread.
public enum CodecRegistry {
    /// Every codec this build knows, whether or not the installed libraries decode it.
    static let known: [Codec] = [
        Codec(
            "flac", suffixes: ["flac"], mimeTypes: ["audio/flac", "audio/x-flac"], decoder: .sndfile,
            recording: Codec.Recording(
                format: "flac",
                // libFLAC directly (`FLACWriter`): libsndfile would have it compute an MD5.
                makeWriter: { path, pcm, _ throws(ReelError) -> RecordingWriter in try FLACWriter(path: path, format: pcm) },
                repair: FLACRepair.repair)),
        Codec("mp3", suffixes: ["mp3"], mimeTypes: ["audio/mpeg", "audio/mp3"], decoder: .mpg123),
        Codec(
            "vorbis", suffixes: ["ogg", "oga"], mimeTypes: ["audio/ogg", "audio/vorbis", "application/ogg"], decoder: .sndfile,
            recording: Codec.Recording(
                format: "ogg",
                // Live, through VorbisWriter (a page every quarter second): libsndfile's Vorbis
                // writer ignores the page latency.
                makeWriter: { path, format, live throws(ReelError) -> RecordingWriter in
                    if live { return try VorbisWriter(path: path, format: format) }
                    return try SndFileWriter(path: path, codec: "ogg", format: format)
                },
                repair: OggRepair.repair)),
        Codec(
            "opus", suffixes: ["opus"], mimeTypes: ["audio/ogg; codecs=opus", "audio/opus"], decoder: .sndfile,
            recording: .sndfile("opus", repair: OggRepair.repair)),
        Codec(
            "wav", suffixes: ["wav", "wave", "w64", "rf64"], mimeTypes: ["audio/wav", "audio/x-wav", "audio/wave"], decoder: .sndfile,
            recording: .sndfile("wav", repair: RecordingRepair.repairWAV)),
        Codec("aiff", suffixes: ["aif", "aiff", "aifc"], mimeTypes: ["audio/aiff", "audio/x-aiff"], decoder: .sndfile),
        Codec("au", suffixes: ["au", "snd"], mimeTypes: ["audio/basic"], decoder: .sndfile),
        Codec("caf", suffixes: ["caf"], mimeTypes: ["audio/x-caf"], decoder: .sndfile),
        Codec(
            "aac", suffixes: ["m4a", "m4b", "mp4", "aac"], mimeTypes: ["audio/mp4", "audio/aac", "audio/x-m4a", "audio/aacp"],
            decoder: .ffmpeg(names: ["aac"])),
        Codec("alac", suffixes: ["m4a"], mimeTypes: ["audio/mp4"], decoder: .ffmpeg(names: ["alac"])),
        Codec("wavpack", suffixes: ["wv"], mimeTypes: ["audio/x-wavpack", "audio/wavpack"], decoder: .ffmpeg(names: ["wavpack"])),
        Codec("ape", suffixes: ["ape"], mimeTypes: ["audio/x-ape", "audio/ape"], decoder: .ffmpeg(names: ["ape"])),
        Codec("wma", suffixes: ["wma", "asf"], mimeTypes: ["audio/x-ms-wma"], decoder: .ffmpeg(names: ["wmav1", "wmav2", "wmapro", "wmalossless"])),
        Codec(
            "dsd", suffixes: ["dsf", "dff"], mimeTypes: ["audio/x-dsf", "audio/x-dff", "audio/dsd"],
            decoder: .ffmpeg(names: ["dsd_lsbf", "dsd_msbf", "dsd_lsbf_planar", "dsd_msbf_planar"])),
        Codec("tta", suffixes: ["tta"], mimeTypes: ["audio/x-tta", "audio/tta"], decoder: .ffmpeg(names: ["tta"])),
        Codec("musepack", suffixes: ["mpc", "mpp", "mp+"], mimeTypes: ["audio/x-musepack"], decoder: .ffmpeg(names: ["mpc7", "mpc8"])),
    ]

    /// The codecs the installed libraries decode. libsndfile's list is asked at run time;
    /// FFmpeg's entries are listed without loading it (reeld depends on Debian's FFmpeg 5.1,
    /// whose decoders they name; a test checks each against it), so that listing them maps none
    /// of it.
    public static let codecs: [Codec] = {
        let sndfile = Set(SndFileReader.decodableCodecs())
        return known.filter { codec in
            switch codec.decoder {
            case .sndfile: sndfile.contains(codec.name)
            case .mpg123, .ffmpeg: true
            }
        }
    }()

    /// The formats the recorder writes, in the order they are offered (`flac` first, the default).
    public static let recordingFormats: [String] = codecs.compactMap { $0.recording?.format }

    /// The codec a recording format (`ogg`) or codec name (`vorbis`) writes, nil if none records.
    public static func recordingCodec(_ name: String) -> Codec? {
        codecs.first { $0.recording != nil && ($0.recording?.format == name || $0.name == name) }
    }

    /// What clients are told: `daemon.info`'s `decoders`.
    public static var descriptions: [CodecDescription] { codecs.map(\.description) }

    /// The codec named so (`format.codec`), nil if none.
    public static func codec(named name: String) -> Codec? {
        codecs.first { $0.name == name }
    }

    /// The suffixes of every playable codec (lowercase).
    public static let suffixes: Set<String> = Set(codecs.flatMap(\.suffixes))

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
    /// `unsupported_format` naming the file and why (its content is not what any decoder reads),
    /// `corrupt_file` or `io_error` as opening it to play would.
    /// Any thread.
    public static func probe(path: String) throws(ReelError) -> (format: AudioFormat, duration: Double?) {
        let reader = try AudioFileOpener.openHeaders(path: path)
        return (reader.format, reader.duration)
    }
}

extension Codec.Recording {
    /// Written by libsndfile (`SndFileWriter`, kept readable as it grows when live).
    static func sndfile(_ format: String, repair: @escaping @Sendable (String) throws(ReelError) -> String) -> Codec.Recording {
        Codec.Recording(
            format: format,
            makeWriter: { path, pcm, live throws(ReelError) in try SndFileWriter(path: path, codec: format, format: pcm, live: live) },
            repair: repair)
    }
}
