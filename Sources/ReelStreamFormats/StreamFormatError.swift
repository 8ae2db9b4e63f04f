// The error every parser of this module throws: what was wrong, in words a log line can carry.

/// Why a station's bytes could not be used. The parsers of `ReelStreamFormats` never trap on
/// bad input: they throw this (or hand back what they could read), and the caller maps it to
/// its own error (`ReelError(.unreachable, …)` in the network source).
public struct StreamFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What went wrong, by kind, for callers that decide on it (retry, skip, give up).
    public enum Kind: Equatable, Sendable {
        /// The input is not in the format, or breaks one of its rules.
        case malformed
        /// The input is larger than this module accepts (see `StreamFormatLimits`).
        case tooLarge
        /// The input asks for something Reel does not do (encrypted HLS, …).
        case unsupported
    }

    public var kind: Kind
    /// A sentence naming what was wrong, e.g. "the playlist has more than 10000 entries".
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
