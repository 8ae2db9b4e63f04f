// snapserver's requests arrive on stdin, one JSON-RPC message per line. Main thread only.

import ReelProtocol

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads stdin and splits it into lines; a line over the limit is reported and skipped, and
/// reading goes on after its newline.
public final class StdinLines {
    public static let maxLineLength = 1 << 20

    public let fileDescriptor: Int32
    private var framer = LineFramer(maxLineLength: StdinLines.maxLineLength)
    /// After an over-long line: drop bytes up to the next newline.
    private var skipping = false
    public private(set) var isClosed = false

    public init(fileDescriptor: Int32 = 0) {
        self.fileDescriptor = fileDescriptor
    }

    /// What `read` found.
    public enum Piece: Equatable {
        case line([UInt8])
        case tooLong
    }

    /// Reads once (call when poll(2) says stdin is readable) and returns the complete lines;
    /// at the end of input, the last line without a newline too, and `isClosed` is set.
    public func read() -> [Piece] {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let count = chunk.withUnsafeMutableBytes { systemRead(fileDescriptor, $0.baseAddress, $0.count) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return [] }
            isClosed = true
        } else if count == 0 {
            isClosed = true
        } else {
            return take(chunk[0..<count])
        }
        var pieces: [Piece] = []
        if !skipping, let last = framer.finish() { pieces.append(Self.piece(last)) }
        return pieces
    }

    /// Frames `bytes` (what `read` does with what it read). Fed one line at a time, so that an
    /// over-long line costs the framer only its own bytes.
    public func take(_ bytes: ArraySlice<UInt8>) -> [Piece] {
        var pieces: [Piece] = []
        var rest = bytes
        while !rest.isEmpty {
            let end = rest.firstIndex(of: 0x0A).map { $0 + 1 } ?? rest.endIndex
            let segment = rest[..<end]
            rest = rest[end...]
            let complete = segment.last == 0x0A
            if skipping {
                if complete { skipping = false }
                continue
            }
            framer.append(segment)
            while let frame = framer.next() {
                pieces.append(Self.piece(frame))
                if frame == .tooLong {
                    framer = LineFramer(maxLineLength: Self.maxLineLength)
                    skipping = !complete
                }
            }
        }
        return pieces
    }

    private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    private static func piece(_ frame: LineFramer.Frame) -> Piece {
        switch frame {
        case .line(let line): .line(line)
        case .tooLong: .tooLong
        }
    }
}
