// A recorder session as the capture engine sees it: its format, its cutting plan, its takes.

import ReelModel

/// What one session records: the format, how it is cut into takes, how long it may run, and how
/// far in the past its first take begins.
public struct CaptureSession: Sendable {
    public var format: PCMFormat
    public var plan: TakePlan
    /// The session ends by itself after this many captured frames (pre-roll not counted).
    public var maxFrames: Int64?
    /// The first take begins this many frames before the session (from a listening engine's
    /// history); for `single` and `segments` only.
    public var prerollFrames: Int64

    public init(format: PCMFormat, plan: TakePlan = .single, maxFrames: Int64? = nil, prerollFrames: Int64 = 0) {
        self.format = format
        self.plan = plan
        self.maxFrames = maxFrames
        self.prerollFrames = prerollFrames
    }
}

/// One take of a session.
public struct CaptureTake: Sendable, Equatable {
    /// 1 for the session's first take.
    public var index: Int
    /// Its first frame, counted from the session's first frame (negative: pre-roll).
    public var startFrame: Int64

    public init(index: Int, startFrame: Int64) {
        self.index = index
        self.startFrame = startFrame
    }
}

/// Where a session's takes go. `openTake` is called on the writer thread (and, for a session's
/// first take when it opens at once, by the caller of `CaptureEngine.start`); the rest on the
/// writer thread. They may block for file and database work (the ring holds capture meanwhile)
/// but must not wait for the caller of `CaptureEngine.stop`, which joins that thread.
public protocol CaptureTakes: AnyObject, Sendable {
    /// A take begins: create its file and return its encoder.
    func openTake(_ take: CaptureTake) throws(ReelError) -> RecordingWriter
    /// The take's file is closed with `frames` frames. `keep` false: discard it (shorter than the
    /// trigger's minimum, or cancelled). `failure`: a write failed and the file may need repair.
    func closedTake(_ take: CaptureTake, frames: Int64, keep: Bool, failure: ReelError?)
    /// After a sync, at most once a second.
    func progress(_ snapshot: CaptureSnapshot)
    /// The session ended by itself (its length limit, a full disk, a failed device), after its
    /// last take was closed.
    func ended(_ ending: CaptureEnding)
}
