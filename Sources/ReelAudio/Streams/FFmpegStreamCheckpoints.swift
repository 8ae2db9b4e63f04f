// Where an FFmpeg-decoded stream can be decoded again from: the places of its decoded frames and
// the byte offsets at which a new demuxer can open (a seek back within the pause buffer).

/// The decoded frames of a stream, each placed by its packet (the byte offset FFmpeg says it
/// came from, and its order among the packets there: `reel_ff_place`) at the output frame it
/// started at, and the points a new demuxer can open at: a packet's offset in a container that
/// can be entered there (ADTS, an Ogg page, an MPEG-TS packet, FLAC: `resumableContainers`),
/// after the header its run began with (Ogg's header pages, MPEG-TS's tables, FLAC's
/// STREAMINFO), or the start of a run (where a demuxer opened). A value; one thread at a time.
struct FFmpegStreamCheckpoints {
    /// A decoded frame's packet and where its first sample is in the output.
    struct Place: Equatable {
        var offset: Int64
        var index: Int64
        var frame: Int64
        var samples: Int
    }

    /// Where a new demuxer can open: byte `offset`, decoding frames from output frame `frame`
    /// on; `header` is the offset its run started at, whose header's bytes go first unless it is
    /// `runStart`.
    struct Point: Equatable {
        var offset: Int64
        var frame: Int64
        var header: Int64
        /// The start of a run: decoding from here gives what the first decode gave, from its
        /// first frame (no decoder state to rebuild first).
        var runStart: Bool
    }

    /// Demuxers (`reel_ff_info.container`) that can be opened at any of their packets' offsets
    /// once their header is given first.
    static let resumableContainers: Set<String> = ["aac", "ogg", "mpegts", "flac"]

    private(set) var places: [Place] = []
    private(set) var points: [Point] = []

    /// Adds the place of a frame decoded for the first time; a frame decoded again (after a
    /// seek back), at or before the last one, is already there.
    mutating func add(_ place: Place) {
        if let last = places.last, (place.offset, place.index) <= (last.offset, last.index) { return }
        places.append(place)
    }

    /// Adds a point after the last one.
    mutating func add(_ point: Point) {
        if let last = points.last, point.offset <= last.offset { return }
        points.append(point)
    }

    /// The place of the frame decoded from packet `index` at byte `offset`, when it was decoded.
    func place(offset: Int64, index: Int64) -> Place? {
        var low = 0, high = places.count
        while low < high {
            let middle = (low + high) / 2
            if (places[middle].offset, places[middle].index) < (offset, index) { low = middle + 1 } else { high = middle }
        }
        return low < places.count && places[low].offset == offset && places[low].index == index ? places[low] : nil
    }

    /// The point to decode from to reach output frame `target`, among those at or after byte
    /// `kept` (the oldest byte the buffer keeps): the last one `preroll` frames or more before
    /// it (the decoder's state is built again by then), else the first at least
    /// `minimumPreroll` before it; a run's start needs none. Nil when none is.
    func point(toReach target: Int64, keptFrom kept: Int64, preroll: Int64, minimumPreroll: Int64) -> Point? {
        var best: Point?
        for point in points where point.offset >= kept {
            if point.frame > target { break }
            if point.frame + (point.runStart ? 0 : preroll) <= target {
                best = point  // the whole preroll: the later, the less to decode
            } else if best == nil && point.frame + (point.runStart ? 0 : minimumPreroll) <= target {
                best = point  // only the least preroll: the earliest such, the most of it
            }
        }
        return best
    }

    /// The first output frame a seek can reach (`point(toReach:…)` finds one), nil when none.
    func firstReachable(keptFrom kept: Int64, minimumPreroll: Int64) -> Int64? {
        points.first { $0.offset >= kept }.map { $0.runStart ? $0.frame : $0.frame + minimumPreroll }
    }

    /// Forgets places and points before byte `offset` (no longer kept).
    mutating func dropBefore(offset: Int64) {
        if let first = places.first, first.offset < offset {
            let count = places.firstIndex { $0.offset >= offset } ?? places.count
            if count > 1024 || count == places.count { places.removeFirst(count) }
        }
        if let first = points.first, first.offset < offset {
            let count = points.firstIndex { $0.offset >= offset } ?? points.count
            if count > 1024 || count == points.count { points.removeFirst(count) }
        }
    }

    mutating func removeAll() {
        places.removeAll()
        points.removeAll()
    }
}
