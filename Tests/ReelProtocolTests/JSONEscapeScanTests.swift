// `JSONWriter.firstEscaped` against a byte-at-a-time scan, over every byte value and random text.
import Testing

@testable import ReelProtocol
import ReelTestSupport

@Suite struct JSONEscapeScanTests {
    /// The first byte a byte-at-a-time scan finds that JSON escapes, or `count`.
    private static func firstEscapedByteByByte(_ bytes: [UInt8]) -> Int {
        bytes.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C } ?? bytes.count
    }

    /// `firstEscaped` never passes a byte that needs an escape, and finds text of 8 bytes or
    /// more with none clean to its end: every byte value (0x00…0xFF, so 0x7F and bytes of
    /// 0x80 and above too) at every place of texts of 0 to 40 bytes, within a larger buffer
    /// (never read past `count`: the bytes after it are quotes).
    @Test func neverPassesAByteThatNeedsAnEscape() {
        for length in 0...40 {
            for place in 0..<max(length, 1) {
                for value in 0...255 {
                    var text = [UInt8](repeating: 0x61, count: length)
                    if length > 0 { text[place] = UInt8(value) }
                    // Quotes after the text: a scan that read past `count` would stop early.
                    let buffer = text + [UInt8](repeating: 0x22, count: 16)
                    let found = buffer.withUnsafeBytes { JSONWriter.firstEscaped($0.baseAddress!, count: length) }
                    let exact = Self.firstEscapedByteByByte(text)
                    #expect(found <= exact, "\(length) bytes, \(value) at \(place): \(found) past \(exact)")
                    // (Fewer than 8 bytes are never a word: scanned byte by byte from 0.)
                    if exact == length, length >= 8 { #expect(found == length, "\(length) bytes, \(value) at \(place): clean text stopped at \(found)") }
                }
            }
        }
    }

    /// Random bytes (a fixed seed): written escaped, each the same as a byte-by-byte writer.
    @Test func randomTextIsEscapedAsByteByByte() {
        var random = SeededGenerator(seed: 0x2545_F491_4F6C_DD1D)
        func next() -> UInt64 { random.next() }
        for _ in 0..<3000 {
            let length = Int(next() % 70)
            // Mostly letters, with a few quotes, backslashes, controls and non-ASCII scalars.
            var scalars = String.UnicodeScalarView()
            for _ in 0..<length {
                let roll = next() % 100
                let value: UInt32 = switch roll {
                case 0..<3: 0x22
                case 3..<6: 0x5C
                case 6..<10: UInt32(next() % 0x20)
                case 10..<14: 0x7F
                case 14..<20: [0xE9, 0x20AC, 0x1F600][Int(next() % 3)]
                default: 0x61 + UInt32(next() % 26)
                }
                scalars.append(Unicode.Scalar(value)!)
            }
            let text = String(scalars)
            var out: [UInt8] = []
            JSONWriter.writeString(text, into: &out)
            #expect(String(decoding: out, as: UTF8.self) == jsonEscapedOneByOne(text), "\(Array(text.utf8))")
        }
    }
}
