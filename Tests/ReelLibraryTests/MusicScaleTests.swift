// The music index at the benchmark's size: 20,000 files in 2,000 album folders.
import Foundation
import ReelModel
import Testing

@testable import ReelLibrary

@Suite struct MusicScaleTests {
    /// Prints the time of a first scan, of a rescan with nothing changed (also after reopening
    /// the library), and latencies of the listings and search, over 20,000 empty files read by
    /// a fake reader (tags from the path: no file is opened). Opt-in: `REEL_LIBRARY_MEASURE=1`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["REEL_LIBRARY_MEASURE"] == "1"))
    func measureScanRescanListingsAndSearchOnTwentyThousandFiles() throws {
        let directory = TemporaryDirectory()
        let root = directory.file("Music")
        let clock = ContinuousClock()
        // 500 artists × 4 albums × 10 tracks.
        var start = clock.now
        for artist in 0..<500 {
            for album in 0..<4 {
                let folder = "\(root)/Artist \(artist)/Album \(artist)-\(album)"
                try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
                for track in 1...10 { TestFiles.touch("\(folder)/\(track) Song \(artist)-\(album)-\(track).flac") }
            }
        }
        print("music scale: made 20,000 empty files in \(milliseconds(clock.now - start)) ms")

        let reader: MusicScanner.Reader = { path throws(ReelError) in
            let parts = path.split(separator: "/").suffix(3).map(String.init)
            let name = (parts[2] as NSString).deletingPathExtension
            return ScannedAudio(
                tags: TrackTags(
                    title: name, artist: parts[0], album: parts[1], albumArtist: nil,
                    track: Int(name.split(separator: " ").first ?? ""), disc: 1, date: "2001", genre: "Rock"),
                codec: "flac", sampleRate: 44100, channels: 2, duration: 200, hasEmbeddedCover: true)
        }
        var store: LibraryStore? = try LibraryStore(directory: directory.file("data"))
        var scanner: MusicScanner! = MusicScanner(index: MusicIndex(store: store!), roots: [root], extensions: MusicTestSupport.audioExtensions, reader: reader)
        start = clock.now
        let first = try scanner.scan()
        print("music scale: first scan of 20,000 files (\(scanner.readerCount) readers, batches of \(scanner.batchSize)): \(milliseconds(clock.now - start)) ms; \(first.progress)")
        start = clock.now
        let second = try scanner.scan()
        print("music scale: rescan, nothing changed: \(milliseconds(clock.now - start)) ms; \(second.progress)")
        // A restart: the library closed and opened again.
        scanner = nil
        store = nil
        start = clock.now
        let index = MusicIndex(store: try LibraryStore(directory: directory.file("data")))
        let opened = clock.now - start
        let restart = try MusicScanner(index: index, roots: [root], extensions: MusicTestSupport.audioExtensions, reader: reader).scan()
        print("music scale: reopen \(milliseconds(opened)) ms, then rescan with nothing changed: \(milliseconds(clock.now - start)) ms in all; \(restart.progress)")
        let databaseSize = (try? FileManager.default.attributesOfItem(atPath: directory.file("data/library.sqlite"))[.size] as? Int) ?? 0
        print("music scale: library.sqlite \(databaseSize / 1024) KiB")

        func measure(_ label: String, _ body: (Int) throws -> Int) rethrows {
            var samples: [Double] = []
            var count = 0
            for i in 0..<200 {
                let t = clock.now
                count = try body(i)
                samples.append(milliseconds(clock.now - t))
            }
            samples.sort()
            print(
                "music scale: \(label): p50 \(format(samples[100])) ms, p99 \(format(samples[197])) ms, max \(format(samples[199])) ms (\(count) results)")
        }
        try measure("albums() (all 2,000)") { _ in try index.albums().count }
        try measure("albums(ofArtist:)") { i in try index.albums(ofArtist: "Artist \(i % 500)").count }
        try measure("artists() (all 500)") { _ in try index.artists().count }
        try measure("tracks(inAlbum:albumArtist:)") { i in
            try index.tracks(inAlbum: "Album \(i % 500)-\(i % 4)", albumArtist: "Artist \(i % 500)").count
        }
        try measure("search, rare (\"song 123-2-\")") { i in try index.search(text: "song \(100 + i % 400)-2-").tracks.count }
        try measure("search, common (\"song\", first page of 50)") { _ in try index.search(text: "song").tracks.count }
        try measure("search, no match (\"zzz\")") { _ in try index.search(text: "zzz").tracks.count }
        try measure("search, 2 letters, no match (\"q9\")") { _ in try index.search(text: "q9").tracks.count }
        try measure("stats()") { _ in try index.stats().songs }
        // The disk unplugged and back: every file's groups updated by the triggers.
        start = clock.now
        try index.setMissing(root: root, true)
        let away = clock.now - start
        start = clock.now
        try index.setMissing(root: root, false)
        print("music scale: 20,000 files marked missing in \(milliseconds(away)) ms, present again in \(milliseconds(clock.now - start)) ms")
        #expect(try index.albums().count == 2000)
        #expect(first.progress.indexed == 20_000 && second.progress.unchanged == 20_000 && restart.progress.unchanged == 20_000)
        #expect(try index.albums().count == 2000 && index.artists().count == 500)
        start = clock.now
        #expect(try index.removeRoots(notIn: []) == 20_000)
        print("music scale: 20,000 files removed (their folder no longer configured) in \(milliseconds(clock.now - start)) ms")
    }
}

private func format(_ value: Double) -> String { String(format: "%.3f", value) }

private func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
}
