// reel-bench mp3-length: how close an MP3's length estimate comes, and what opening costs.

#if canImport(Glibc)
import Glibc
#endif
import ReelAudio
import ReelModel
import ReelRuntime

/// `reel-bench mp3-length FILE...`: for each MP3, one line `file=… exact_s=… estimate_s=…
/// estimate_error_pct=… first_frame_s=… first_frame_error_pct=… estimate_ms=… open_ms=…
/// source=…`: the exact length (every frame counted), the estimate a long file without a
/// Xing/Info tag opens with (`MP3LengthEstimate`, computed here for any file), the first frame's
/// bitrate over the file's size (what MPD shows for such a file), the time the estimate took,
/// and the time `Mpg123Reader` takes to open the file as the player does (with a small file's
/// count, or the estimate), and where its length came from.
func mp3LengthCommand(_ files: [String]) {
    guard !files.isEmpty else { fail("mp3-length needs one or more files") }
    func milliseconds(since start: UInt64) -> String {
        String(format: "%.3f", Double(ReelRuntime.monotonicNanoseconds() - start) / 1e6)
    }
    for path in files {
        let estimateStart = ReelRuntime.monotonicNanoseconds()
        guard let estimates = Mpg123Reader.lengthEstimates(path: path) else {
            fail("\(path) does not start with MPEG Layer III frames", code: 1)
        }
        let estimateTime = milliseconds(since: estimateStart)
        let openStart = ReelRuntime.monotonicNanoseconds()
        let opened: Mpg123Reader
        let exact: Int64
        do throws(ReelError) {
            opened = try Mpg123Reader(path: path, lengthScan: .estimate)
            let openTime = milliseconds(since: openStart)
            guard let count = try Mpg123Reader(path: path, lengthScan: .atOpen).frameCount else {
                fail("\(path): no length", code: 1)
            }
            exact = count
            let rate = Double(opened.pcmFormat.sampleRate)
            func seconds(_ frames: Int64?) -> String { frames.map { String(format: "%.3f", Double($0) / rate) } ?? "-" }
            func error(_ frames: Int64?) -> String {
                frames.map { String(format: "%+.3f", Double($0 - exact) / Double(exact) * 100) } ?? "-"
            }
            printLine(
                "file=\(path) exact_s=\(seconds(exact)) estimate_s=\(seconds(estimates.estimate)) "
                    + "estimate_error_pct=\(error(estimates.estimate)) first_frame_s=\(seconds(estimates.firstFrame)) "
                    + "first_frame_error_pct=\(error(estimates.firstFrame)) estimate_ms=\(estimateTime) open_ms=\(openTime) "
                    + "source=\(opened.frameCount == nil ? "estimate" : "counted")")
        } catch {
            fail("\(path): \(error.message)", code: 1)
        }
    }
}
