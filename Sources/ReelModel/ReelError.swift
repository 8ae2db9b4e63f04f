// Errors with a stable reason code and a sentence a person can act on.

/// The reason codes of `protocol.md`; the raw value is what goes on the wire.
public enum ErrorReason: String, Sendable, CaseIterable {
    case notFound = "not_found"
    case nameTaken = "name_taken"
    case invalidName = "invalid_name"
    case notAFolder = "not_a_folder"
    case notARecording = "not_a_recording"
    case cycle
    case root
    case busy
    case notPlaying = "not_playing"
    case notRecording = "not_recording"
    case outOfRange = "out_of_range"
    case unsupportedFormat = "unsupported_format"
    case corruptFile = "corrupt_file"
    case deviceUnavailable = "device_unavailable"
    case deviceBusy = "device_busy"
    case diskFull = "disk_full"
    case ioError = "io_error"
    case forbidden
    case noMixer = "no_mixer"
    /// A change asked of what reeld only reads: the music folders (the `/Music` branch).
    case readOnly = "read_only"
    /// A seek in a source that cannot go there (a stream, beyond what is kept of it).
    case notSeekable = "not_seekable"
    /// A URL that gave no audio: DNS, connect, TLS, an HTTP status, HTML instead of audio, or
    /// no audio at all (the message names the URL and what failed).
    case unreachable
}

/// An application error: what went wrong (`reason`) and what to do about it (`message`).
/// Errors from the audio thread cross to the control side as values of this type.
public struct ReelError: Error, Equatable, Sendable, CustomStringConvertible {
    public var reason: ErrorReason
    public var message: String

    public init(_ reason: ErrorReason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }
}
