// What changed in the queue since a version: the entries added, moved or changed (MPD's `plchanges`).

import ReelModel

extension PlayQueue {
    /// The entries added, moved or changed after `entriesVersion` was `version`, in position
    /// order (MPD's `plchanges`). An entry counts as changed when it was added, when its position
    /// changed (it was moved, swapped or shuffled, or entries before it were added, removed or
    /// moved: every entry whose position shifts), or when its length, format, missing flag or
    /// source changed. Entries removed at the end are not reported: a client compares `length`.
    ///
    /// Every entry is returned when `version` is older than anything the queue tracks (after a
    /// `clear` every entry is newer than it), and, as MPD does, when `version` is newer than
    /// `entriesVersion` (a client that saw the queue before reeld restarted). O(n).
    public func changes(since version: Int) -> [QueueEntry] {
        if version > entriesVersion { return allEntries }
        return queue.filter { slots[$0].changed > version }.map(makeEntry)
    }
}
