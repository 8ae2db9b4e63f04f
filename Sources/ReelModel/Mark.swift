// A mark in a recording: a place (a frame offset) with an optional label.

/// A mark of a recording (`marks: [{at, label}]` in `protocol.md`): made with `recorder.mark`
/// while the take is recorded, `player.mark` while it plays, or by the recorder itself.
/// Kept as a frame offset from the recording's first frame, so it stays sample-exact.
public struct Mark: Equatable, Sendable {
    /// Frames from the recording's first frame, at its sample rate.
    public var frame: Int64
    public var label: String?
    /// The recording's sample rate (frames a second).
    public var sampleRate: Int

    public init(frame: Int64, label: String?, sampleRate: Int) {
        self.frame = frame
        self.label = label
        self.sampleRate = sampleRate
    }

    /// Seconds from the recording's start.
    public var seconds: Double { sampleRate > 0 ? Double(frame) / Double(sampleRate) : 0 }

    /// The longest label, in bytes of UTF-8.
    public static let maximumLabelBytes = 1000

    /// A label as given: nil or empty is none; too long or holding control characters (a
    /// newline would end a chapter comment) is `out_of_range`, naming what is wrong.
    public static func validate(label: String?) throws(ReelError) -> String? {
        guard let label, !label.isEmpty else { return nil }
        guard label.utf8.count <= maximumLabelBytes else {
            throw ReelError(.outOfRange, "a mark's label is at most \(maximumLabelBytes) bytes, not \(label.utf8.count)")
        }
        guard !label.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7f }) else {
            throw ReelError(.outOfRange, "a mark's label cannot contain control characters (a newline, a tab)")
        }
        return label
    }

    /// `HH:MM:SS.sss`, as chapter comments give a chapter's start (milliseconds rounded down,
    /// so the chapter never starts after its mark).
    public var chapterTime: String {
        let milliseconds = sampleRate > 0 ? frame * 1000 / Int64(sampleRate) : 0
        let seconds = milliseconds / 1000
        func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(seconds / 3600, 2)):\(pad(seconds / 60 % 60, 2)):\(pad(seconds % 60, 2)).\(pad(milliseconds % 1000, 3))"
    }
}
