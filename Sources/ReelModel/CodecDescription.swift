// A codec as clients see it: `daemon.info`'s `decoders`, MPD's `decoders`.

/// A codec Reel plays: its name (`format.codec`), the file suffixes it is looked for under
/// (lowercase, without the dot) and its MIME types, the first being the one a file of it is
/// served as.
public struct CodecDescription: Equatable, Sendable {
    public var name: String
    public var suffixes: [String]
    public var mimeTypes: [String]

    public init(name: String, suffixes: [String], mimeTypes: [String]) {
        self.name = name
        self.suffixes = suffixes
        self.mimeTypes = mimeTypes
    }
}
