// Which of the first MPEG Layer III frames a decoder run can decode whole: a frame's main data
// may begin in the frames before it (the bit reservoir), so a run that starts in the middle of
// a stream (a station joined live) has nothing to decode its first frames from.

/// The bit reservoir of one decoder run, counted as libmpg123 counts it: the main-data bytes of
/// the frames taken so far (each frame's length less its header, CRC and side information), at
/// most the 511 bytes (MPEG-1; 255 for MPEG-2 and 2.5) a frame can reach back. A frame whose
/// `main_data_begin` reaches further back than that is one libmpg123 decodes as silence, where
/// libmad (MPD's MP3 decoder) skips it. A value; any thread.
struct MP3BitReservoir: Equatable {
    /// Main-data bytes of the frames before the next one.
    private(set) var bytes = 0

    /// The bytes of a frame's start that `take` needs: its header, CRC and `main_data_begin`.
    static let frameStartLength = 8

    /// Takes the next frame of the run, from its first bytes (`frameStartLength`, or fewer if
    /// the frame is shorter): whether its main data is all there, so that it decodes to what the
    /// stream holds. Bytes that are no Layer III frame header say nothing about it: true, and the
    /// reservoir is not changed.
    mutating func take(_ start: [UInt8]) -> Bool {
        guard let header = MP3FrameHeader(start, at: 0) else { return true }
        let crc = header.hasCRC ? 2 : 0
        let at = 4 + crc
        let mpeg1 = header.version == .mpeg1
        guard start.count >= at + (mpeg1 ? 2 : 1) else { return true }
        // 9 bits in MPEG-1, 8 in MPEG-2 and 2.5.
        let reachesBack = mpeg1 ? Int(start[at]) << 1 | Int(start[at + 1] >> 7) : Int(start[at])
        let whole = reachesBack <= bytes
        let mainData = header.length - 4 - crc - header.sideInformationLength
        bytes = min(max(bytes + mainData, 0), mpeg1 ? 511 : 255)
        return whole
    }
}
