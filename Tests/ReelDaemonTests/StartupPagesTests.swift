import Testing

@testable import ReelDaemon

/// `StartupPages` hands back only mappings of the program that the process never wrote to.
struct StartupPagesTests {
    static let smaps = """
        55d0a0000000-55d0a2000000 r--p 00000000 fe:00 42    /usr/local/bin/reeld
        Size:              32768 kB
        Rss:               12000 kB
        Anonymous:             0 kB
        55d0a2000000-55d0a3000000 r-xp 02000000 fe:00 42    /usr/local/bin/reeld
        Size:              16384 kB
        Anonymous:             0 kB
        55d0a3000000-55d0a3100000 r--p 03000000 fe:00 42    /usr/local/bin/reeld
        Size:               1024 kB
        Anonymous:           908 kB
        55d0a3100000-55d0a3200000 rw-p 03100000 fe:00 42    /usr/local/bin/reeld
        Size:               1024 kB
        Anonymous:            12 kB
        7f0000000000-7f0000100000 r-xp 00000000 fe:00 77    /usr/lib/x86_64-linux-gnu/libc.so.6
        Size:               1024 kB
        Anonymous:             0 kB
        7f0000200000-7f0000300000 rw-p 00000000 00:00 0
        Anonymous:           400 kB
        7f0000400000-7f0000500000 r-xp 00000000 fe:00 99    /opt/my programs/reeld
        Anonymous:             0 kB
        """

    @Test func onlyTheProgramsUnwrittenReadOnlyMappingsAreReleased() {
        let found = StartupPages.unwrittenMappings(smaps: Self.smaps, path: "/usr/local/bin/reeld")
        #expect(found.map(\.start) == [0x55d0_a000_0000, 0x55d0_a200_0000])
        #expect(found.map(\.end) == [0x55d0_a200_0000, 0x55d0_a300_0000])
    }

    @Test func aProgramPathWithSpacesIsMatchedWhole() {
        let found = StartupPages.unwrittenMappings(smaps: Self.smaps, path: "/opt/my programs/reeld")
        #expect(found.map(\.start) == [0x7f00_0040_0000])
        #expect(StartupPages.unwrittenMappings(smaps: Self.smaps, path: "/opt/my").isEmpty)
    }

    @Test func releasingTheRunningProgramsPagesKeepsItRunning() {
        // The test process's own program: its code pages are unmapped and come back when run.
        #expect(StartupPages.release() != nil)
        #expect(StartupPages.unwrittenMappings(smaps: "", path: "/x").isEmpty)
    }
}
