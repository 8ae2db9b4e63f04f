// The titles a recorded source announced (a station's StreamTitle), each with the frame it began at.

import ReelModel
import ReelRuntime

/// The title changes of a recording's source, by source frame (the frames the source has given
/// the capture engine, which are the session's frames). Written by the capture thread, read by
/// any.
public final class SourceTitles: @unchecked Sendable {
    public struct Change: Sendable, Equatable {
        /// The source frame the title began at.
        public var frame: Int64
        /// nil: the station stopped naming what it plays.
        public var title: String?

        public init(frame: Int64, title: String?) {
            self.frame = frame
            self.title = title
        }
    }

    private let changes = Locked<[Change]>([])
    /// The capture thread's own: the title last noted (nil: none noted yet).
    private var last: String??
    private let onChange: @Sendable (Change) -> Void

    /// `onChange` is called on the capture thread for each change (the first title included); it
    /// must not block.
    public init(onChange: @escaping @Sendable (Change) -> Void = { _ in }) {
        self.onChange = onChange
    }

    /// Every change so far, oldest first.
    public var all: [Change] { changes.current }

    /// The title at `frame` is `title`; a change is kept and told. On the capture thread.
    func note(_ title: String?, atFrame frame: Int64) {
        if let last, last == title { return }
        if last == nil && title == nil {
            last = .some(nil)
            return
        }
        last = .some(title)
        let change = Change(frame: frame, title: title)
        changes.withLock { $0.append(change) }
        onChange(change)
    }
}
