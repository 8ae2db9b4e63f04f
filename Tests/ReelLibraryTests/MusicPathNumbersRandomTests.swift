// `MusicPathNumbers` against a dictionary keyed by the paths' bytes, over random paths.
import Foundation
import Testing

@testable import ReelLibrary
import ReelTestSupport

@Suite struct MusicPathNumbersRandomTests {
    /// Random paths (a fixed seed) of 0 to 40 bytes from a small alphabet, so that many share
    /// prefixes, lengths and words, with repeats: each key finds exactly the numbers of the paths
    /// with its bytes, for table sizes around each power of two (a full table's edge).
    @Test func findsExactlyThePathsWithTheSameBytes() {
        var random = SeededGenerator(seed: 0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 { random.next() }
        let alphabet = Array("ab/é.".unicodeScalars)
        func randomPath() -> String {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int(next() % 41) { scalars.append(alphabet[Int(next() % UInt64(alphabet.count))]) }
            return String(scalars)
        }
        for count in [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 255, 256, 257, 2047, 2048, 2049] {
            var paths: [String] = []
            for _ in 0..<count {
                // One in five a repeat of an earlier path.
                if !paths.isEmpty, next() % 5 == 0 {
                    paths.append(paths[Int(next() % UInt64(paths.count))])
                } else {
                    paths.append(randomPath())
                }
            }
            var expected: [[UInt8]: [Int]] = [:]
            for (number, path) in paths.enumerated() { expected[Array(path.utf8), default: []].append(number) }
            let numbers = MusicPathNumbers(paths)
            func found(_ key: [UInt8]) -> [Int] {
                var found: [Int] = []
                key.withUnsafeBytes { numbers.forEachNumber(of: $0) { found.append($0) } }
                return found.sorted()
            }
            for (key, numbersOfKey) in expected { #expect(found(key) == numbersOfKey, "\(count) paths: \(key)") }
            // Keys not given: none found.
            for _ in 0..<200 {
                let key = Array(randomPath().utf8)
                #expect(found(key) == (expected[key] ?? []), "\(count) paths: \(key)")
            }
        }
    }
}
