// libFuzzer entry for the HLS parser and the segment planner (scripts/fuzz-stream-formats).
// The body is parsed as an HLS playlist; a media playlist is fed to a planner twice, the second
// time with its sequence moved by an amount taken from the input, and the fetches are checked:
// each sequence is handed out at most once and in increasing order, except after a restart.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHLS(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    _ = isHLSPlaylist(input)
    guard let playlist = try? parseHLSPlaylist(input, url: "https://cdn.example/live/master.m3u8") else { return 0 }
    switch playlist {
    case .master(let master):
        precondition(!master.variants.isEmpty)
        _ = master.chooseAudio()
        _ = master.chooseAudio(maximumBandwidth: Int(input.first ?? 0) * 1000)
    case .media(let media):
        var planner = HLSSegmentPlanner()
        var last: Int64 = -1
        func drain(_ planner: inout HLSSegmentPlanner, restarted: Bool) {
            if restarted { last = -1 }
            while let fetch = planner.nextFetch() {
                precondition(fetch.segment.sequence > last, "sequence \(fetch.segment.sequence) after \(last)")
                last = fetch.segment.sequence
            }
        }
        var events = planner.playlistLoaded(media, loadStartedAt: 0)
        drain(&planner, restarted: false)
        if let reload = planner.nextReloadAt {
            let target = Double(media.targetDuration)
            precondition(reload == target || reload == target / 2, "reload at \(reload) for a target of \(target)")
        }
        let shift = Int64(Int8(bitPattern: input.last ?? 0))
        var moved = media
        moved.mediaSequence = max(0, media.mediaSequence + shift)
        moved.segments = media.segments.map {
            var segment = $0
            segment.sequence = max(0, segment.sequence + shift)
            return segment
        }
        moved.endList = shift % 3 == 0 ? media.endList : false
        events = planner.playlistLoaded(moved, loadStartedAt: 10)
        let restarted = events.contains { if case .restarted = $0 { true } else { false } }
        drain(&planner, restarted: restarted)
        if media.endList { precondition(planner.isFinished && planner.nextReloadAt == nil) }
    }
    return 0
}
