// reel-bench resample: what a Snapcast output's conversion costs, alone (bench/snapcast).

#if canImport(Glibc)
import Glibc
#endif
import ReelAudio
import ReelModel

/// `reel-bench resample [--seconds N] [--rate R]`: converts N seconds (default 60) of a 16-bit
/// stereo tone at R Hz (default 44100) to 48000:16:2 with the pipe outputs' converter (libsoxr,
/// its "high quality" recipe), in the engine's periods of 50 ms, and prints
/// `ms_per_audio_second=… frames_in=… frames_out=… cpu_ms=…`: the thread's CPU time
/// (CLOCK_THREAD_CPUTIME_ID) per second of audio.
func resampleCommand(_ arguments: [String]) {
    var seconds = 60
    var rate = 44100
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst(), let number = Int(value), number > 0 else { fail("\(flag) needs a positive number") }
        switch flag {
        case "--seconds": seconds = number
        case "--rate": rate = number
        default: fail("unknown flag \(flag) for resample")
        }
    }
    let period = rate / 20
    let source = PCMFormat(sample: .s16, sampleRate: rate, channels: 2)
    let converter: PipeConverter
    do throws(ReelError) {
        converter = try PipeConverter(source: source, target: .snapcastDefault, maxFrames: period)
    } catch {
        fail(error.message, code: 1)
    }
    // One second of a 1 kHz tone with pink-ish noise, converted over and over.
    var samples = [Int16](repeating: 0, count: rate * 2)
    var noise: UInt32 = 0x1234_5678
    for frame in 0..<rate {
        noise ^= noise << 13; noise ^= noise >> 17; noise ^= noise << 5
        let value = 0.4 * sin(2 * Double.pi * 1000 * Double(frame) / Double(rate)) + 0.1 * (Double(noise % 2001) / 1000 - 1)
        samples[2 * frame] = Int16(value * 32767)
        samples[2 * frame + 1] = Int16(value * 32767)
    }
    var ring = ByteRing(capacity: 1 << 20)
    defer { ring.deallocate() }
    var framesOut = 0
    var clock = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &clock)
    let start = Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec)
    samples.withUnsafeBytes { bytes in
        for _ in 0..<seconds {
            var frame = 0
            while frame < rate {
                let count = min(period, rate - frame)
                framesOut += converter.convert(bytes.baseAddress! + frame * 4, frames: count, into: &ring)
                ring.removeAll()
                frame += count
            }
        }
    }
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &clock)
    let cpu = Double(Int64(clock.tv_sec) * 1_000_000_000 + Int64(clock.tv_nsec) - start) / 1e6
    printLine(
        "ms_per_audio_second=\(format3(cpu / Double(seconds))) frames_in=\(seconds * rate) frames_out=\(framesOut) cpu_ms=\(format3(cpu))")
    exit(0)
}

func format3(_ value: Double) -> String {
    let scaled = (value * 1000).rounded() / 1000
    return "\(scaled)"
}
