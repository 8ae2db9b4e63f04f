// glibc malloc's thresholds as reeld sets them (HeapSettings).

@testable import ReelDaemon
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct HeapSettingsTests {
    /// glibc marks a block that is a mapping of its own with IS_MMAPPED, bit 1 of the size word
    /// just before the block.
    static func isOwnMapping(_ block: UnsafeMutableRawPointer) -> Bool {
        block.load(fromByteOffset: -MemoryLayout<Int>.size, as: UInt.self) & 2 != 0
    }

    /// Where a block comes from depends on the heaps' history: in this process, shared with
    /// every other test, a free chunk of many MB may be there to reuse (a CI run found one even
    /// for 20 MB), and then no threshold is looked at. So the settings' effect on a fresh heap is
    /// this test's (its own process: `swift test --filter HeapSettingsTests`) and bench/streams'
    /// (RSS), and what every run checks is that malloc takes them.
    @Test func mallocTakesTheSettings() {
        #expect(HeapSettings.apply())
    }

    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_TEST_FRESH_HEAP"] != nil,
                   "needs a process of its own: REEL_TEST_FRESH_HEAP=1 swift test --filter HeapSettingsTests"))
    func aLargeBlockFreedDoesNotMoveTheLargeBlocksAfterItIntoTheHeap() throws {
        HeapSettings.apply()
        // glibc's default would now raise its mmap threshold to 20 MB: the 8 MB block below
        // would come from the heap (and stay resident there after it is freed). (8 MB, not
        // less: a heap may hold a free chunk of a few MB from what the other tests in this
        // process freed, which malloc would use before any threshold is looked at.)
        let large = try #require(malloc(20 << 20))
        #expect(Self.isOwnMapping(large))
        free(large)
        let block = try #require(malloc(8 << 20))
        defer { free(block) }
        #expect(Self.isOwnMapping(block), "an 8 MB block after a 20 MB one was freed came from the heap")
        let small = try #require(malloc(Int(HeapSettings.mmapThreshold) / 2))
        defer { free(small) }
        #expect(!Self.isOwnMapping(small))
    }
}
