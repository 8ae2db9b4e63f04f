// Splits an `Icy-MetaData: 1` HTTP body into its audio and its metadata blocks.
//
// How to use it (the network source, on its receiving thread):
//
//     var icy = ICYHeaders()
//     for line in responseHeaderLines { icy.take(headerLine: line) }
//     var demuxer = try ICYDemuxer(metaInterval: icy.metaInterval!)   // when the server sent one
//     // for every chunk libcurl hands over, in any chunking:
//     demuxer.feed(chunk) { piece in
//         switch piece {
//         case .audio(let bytes): decoderInput.append(bytes)      // valid only inside the closure
//         case .metadata(let metadata):
//             if let title = metadata.streamTitle { onAir.title = title }   // "" clears it
//         }
//     }
//
// `feed([UInt8]) -> [ICYChunk]` does the same with owned arrays (tests, fuzzing). A block is read
// whole before it is handed back (so a title applies from the audio that follows it); an empty
// block (length byte 0, the common case) or one of NULs only is "no change" and hands back
// nothing. Memory is bounded: a block is at most 255 × 16 = 4080 bytes by construction, and
// audio is passed through as slices of the input. Garbage never traps: a block without
// `Name=` fields is counted in `ignoredBlocks` and skipped.

/// What `ICYDemuxer.feed(_:_:)` hands back, in stream order. `audio` points into the caller's
/// buffer and is valid only during the closure call.
public enum ICYPiece {
    case audio(UnsafeRawBufferPointer)
    case metadata(ICYMetadata)
}

/// What `ICYDemuxer.feed(_:)` hands back, in stream order, with owned bytes.
public enum ICYChunk: Equatable, Sendable {
    case audio([UInt8])
    case metadata(ICYMetadata)
}

/// The de-interleaver of an ICY stream: `metaInterval` audio bytes, one length byte L, L × 16
/// metadata bytes, again. A value owned by one thread (the one receiving the body).
public struct ICYDemuxer: Sendable {
    /// The largest metadata block: the length byte counts 16-byte units.
    public static let maximumBlockSize = 255 * 16
    /// The largest `icy-metaint` accepted (servers send 8192 or 16000; 1 MiB leaves room).
    public static let maximumMetaInterval = 1 << 20

    /// Audio bytes between two metadata blocks (`icy-metaint`).
    public let metaInterval: Int
    /// Metadata blocks seen with at least one field (handed back as `.metadata`).
    public private(set) var metadataBlocks = 0
    /// Non-empty blocks with no readable field (skipped).
    public private(set) var ignoredBlocks = 0
    /// Audio bytes handed back so far.
    public private(set) var audioBytes: Int64 = 0

    private enum State: Sendable {
        case audio(remaining: Int)
        case lengthByte
        case block(expected: Int)
    }
    private var state: State
    private var block: [UInt8] = []

    /// A demuxer for a response that carried `icy-metaint: metaInterval`. Throws `.malformed`
    /// for 0, a negative value or one above `maximumMetaInterval`.
    public init(metaInterval: Int) throws(StreamFormatError) {
        guard metaInterval > 0, metaInterval <= Self.maximumMetaInterval else {
            throw StreamFormatError(
                .malformed, "icy-metaint \(metaInterval) is out of range (1…\(Self.maximumMetaInterval))")
        }
        self.metaInterval = metaInterval
        self.state = .audio(remaining: metaInterval)
    }

    /// Feeds the next received bytes; calls `body` for each piece in stream order (audio as
    /// slices of `bytes`, metadata once its block is complete).
    public mutating func feed<E: Error>(
        _ bytes: UnsafeRawBufferPointer, _ body: (ICYPiece) throws(E) -> Void
    ) throws(E) {
        var index = 0
        let count = bytes.count
        while index < count {
            switch state {
            case .audio(let remaining):
                let take = min(remaining, count - index)
                let slice = UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)])
                index += take
                audioBytes += Int64(take)
                state = take == remaining ? .lengthByte : .audio(remaining: remaining - take)
                try body(.audio(slice))
            case .lengthByte:
                let length = Int(bytes[index]) * 16
                index += 1
                if length == 0 {
                    state = .audio(remaining: metaInterval)
                } else {
                    block.removeAll(keepingCapacity: true)
                    state = .block(expected: length)
                }
            case .block(let expected):
                let take = min(expected - block.count, count - index)
                block.append(contentsOf: bytes[index..<(index + take)])
                index += take
                if block.count == expected {
                    state = .audio(remaining: metaInterval)
                    if let metadata = ICYMetadata(block: block) {
                        metadataBlocks += 1
                        try body(.metadata(metadata))
                    } else if block.contains(where: { $0 != 0 }) {
                        ignoredBlocks += 1
                    }
                }
            }
        }
    }

    /// Feeds the next received bytes and returns the pieces with owned bytes (adjacent audio
    /// joined).
    public mutating func feed(_ bytes: [UInt8]) -> [ICYChunk] {
        var chunks: [ICYChunk] = []
        bytes.withUnsafeBytes { raw in
            feed(raw) { (piece: ICYPiece) in
                switch piece {
                case .audio(let slice):
                    if case .audio(var previous) = chunks.last {
                        // Taken out and put back so the array is unique and grows in place
                        // (a metaint of 1 would otherwise copy it once a byte).
                        chunks.removeLast()
                        previous.append(contentsOf: slice)
                        chunks.append(.audio(previous))
                    } else {
                        chunks.append(.audio(Array(slice)))
                    }
                case .metadata(let metadata):
                    chunks.append(.metadata(metadata))
                }
            }
        }
        return chunks
    }
}
