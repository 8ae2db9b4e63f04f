// reel-bench gain: a file decoded and put through the software gain stage as the playback
// engine does, with no device, for bench/replaygain (run under callgrind).

#if canImport(Glibc)
import Glibc
#endif
import ReelAudio
import ReelModel
import ReelTags

/// `reel-bench gain [--volume V] [--replaygain DB] [--read-tags] FILE`: opens FILE as playing
/// does (`AudioFileOpener.open`) and reads it to its end a period (100 ms) at a time, each period
/// through a `GainStage` aimed, as `PlaybackRunner` aims it, at the volume's gain (`VolumeCurve`,
/// default 100) times the ReplayGain factor of DB (default none). With `--read-tags`, the file's
/// tags are first read with TagReader, as the player does for a file outside the music index.
/// Prints `frames=… seconds=… gain=…`.
func gainCommand(_ arguments: [String]) -> Never {
    var volume = 100
    var replayGain: Double?
    var readTags = false
    var path: String?
    var rest = arguments[...]
    while let argument = rest.popFirst() {
        switch argument {
        case "--volume":
            guard let value = rest.popFirst().flatMap({ Int($0) }), (0...100).contains(value) else { fail("--volume needs 0–100") }
            volume = value
        case "--replaygain":
            guard let value = rest.popFirst().flatMap({ Double($0) }), value.isFinite else { fail("--replaygain needs dB") }
            replayGain = value
        case "--read-tags": readTags = true
        default: path = argument
        }
    }
    guard let path else { fail("gain needs a file") }
    if readTags, (try? TagReader.read(path: path)) == nil { fail("cannot read the tags of \(path)") }
    let reader: AudioFileReader
    do throws(ReelError) {
        reader = try AudioFileOpener.open(path: path)
    } catch {
        fail(error.message)
    }
    let format = reader.pcmFormat
    let factor = VolumeCurve.gain(forVolume: volume) * (replayGain.map { ReplayGainSettings.linear(dB: $0) } ?? 1)
    var stage = GainStage()
    stage.setTarget(gain: factor)
    stage.jumpToTarget()
    let period = max(format.sampleRate / 10, 1)
    let buffer = UnsafeMutableRawPointer.allocate(byteCount: period * format.bytesPerFrame, alignment: 16)
    defer { buffer.deallocate() }
    var frames = 0
    while true {
        let count: Int
        do throws(ReelError) {
            count = try reader.read(into: buffer, frames: period)
        } catch {
            fail(error.message)
        }
        if count == 0 { break }
        stage.apply(to: buffer, frames: count, format: format)
        frames += count
    }
    printLine("frames=\(frames) seconds=\(Double(frames) / Double(max(format.sampleRate, 1))) gain=\(factor)")
    exit(0)
}
