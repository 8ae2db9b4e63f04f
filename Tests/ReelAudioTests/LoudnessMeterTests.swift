import Foundation
import ReelAudio
import ReelModel
import Testing

/// A take's loudness through libebur128: a sine's integrated loudness is its level (a stereo
/// 1 kHz sine at −20 dBFS reads −20 LUFS, EBU Tech 3341's own check at −23), so its ReplayGain
/// 2.0 gain is −18 − (−20) = +2 dB; silence measures nothing.
@Suite struct LoudnessMeterTests {
    static let format = PCMFormat(sample: .s16, sampleRate: 48000, channels: 2)

    /// `seconds` of a stereo 1 kHz sine whose peak is `dBFS`.
    static func sine(dBFS: Double, seconds: Double) -> [Int16] {
        let amplitude = 32767 * pow(10, dBFS / 20)
        let frames = Int(seconds * 48000)
        var samples = [Int16](repeating: 0, count: frames * 2)
        for frame in 0..<frames {
            let value = Int16((amplitude * sin(2 * Double.pi * 1000 * Double(frame) / 48000)).rounded())
            samples[2 * frame] = value
            samples[2 * frame + 1] = value
        }
        return samples
    }

    func measure(_ samples: [Int16], chunk: Int = 4800) -> LoudnessMeter {
        let meter = LoudnessMeter(format: Self.format)
        samples.withUnsafeBytes { raw in
            var frame = 0
            let frames = samples.count / 2
            while frame < frames {
                let count = min(chunk, frames - frame)
                meter.add(raw.baseAddress! + frame * 4, frames: count)
                frame += count
            }
        }
        return meter
    }

    @Test func aSineReadsItsLevelAndGetsTheGainToMinus18LUFS() throws {
        let meter = measure(Self.sine(dBFS: -20, seconds: 5))
        #expect(meter.unavailable == nil)
        let loudness = try #require(meter.loudness)
        #expect(abs(loudness - -20) < 0.1, "a -20 dBFS sine reads \(loudness) LUFS")
        let gain = try #require(meter.replayGain)
        #expect(abs(gain.gain - 2) < 0.1)
        #expect(abs((gain.peak ?? 0) - pow(10, -20.0 / 20)) < 0.001)
        // −6 dBFS: 14 dB louder, 14 dB less gain.
        let loud = try #require(measure(Self.sine(dBFS: -6, seconds: 5)).replayGain)
        #expect(abs(gain.gain - loud.gain - 14) < 0.1)
    }

    @Test func silenceAndTooShortMeasureNothing() {
        #expect(measure([Int16](repeating: 0, count: 48000 * 2 * 3)).replayGain == nil)
        #expect(measure(Self.sine(dBFS: -20, seconds: 0.2)).replayGain == nil)
    }

    @Test func theMeasuringWriterFeedsTheMeterWhatItWrites() throws {
        let inner = MemoryWriter()
        inner.script { $0.channels = 2 }
        let meter = LoudnessMeter(format: Self.format)
        let writer = LoudnessMeasuringWriter(inner, meter: meter)
        let samples = Self.sine(dBFS: -20, seconds: 3)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: samples.count * 2, alignment: 16)
        defer { buffer.deallocate() }
        samples.withUnsafeBytes { buffer.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        try writer.write(buffer, frames: samples.count / 2)
        try writer.sync()
        try writer.close()
        #expect(inner.state.samples == samples)
        #expect(inner.state.closed)
        #expect(abs((meter.loudness ?? 0) - -20) < 0.1)
    }

    /// EBU Tech 3341 cases 3 and 4, shortened: a −23 dBFS stretch between −36 dBFS ones (under
    /// the relative gate) and −72 dBFS ones (under the absolute gate) reads −23 LUFS. (The
    /// blocks across each edge are partly loud and pass the gate: with 20 s of −23 they lower
    /// the result by ~0.06 LU; with 6 s, by 0.19.)
    @Test func theGatesLeaveOutTheQuietStretches() throws {
        func tone(_ parts: [(dBFS: Double, seconds: Double)]) -> [Int16] {
            parts.flatMap { Self.sine(dBFS: $0.dBFS, seconds: $0.seconds) }
        }
        let relative = try #require(measure(tone([(-36, 3), (-23, 20), (-36, 3)])).loudness)
        #expect(abs(relative - -23) < 0.1, "\(relative) LUFS")
        let absolute = try #require(measure(tone([(-72, 3), (-36, 3), (-23, 20), (-36, 3), (-72, 3)])).loudness)
        #expect(abs(absolute - -23) < 0.1, "\(absolute) LUFS")
        // Ungated, the −36 dBFS stretches would pull the first down to about −25.1 LUFS.
        #expect(measure(tone([(-80, 3)])).loudness == nil, "everything under −70 LUFS measures nothing")
    }

    /// A deterministic signal (100 Hz and 5 kHz sines and noise, at 1/20 of its level one
    /// second in three): libebur128 1.2.6 (EBUR128_MODE_I | EBUR128_MODE_SAMPLE_PEAK, fed 4800
    /// frames at a time) read the loudness and peak given here.
    @Test(arguments: [
        (48000, 1, 9.0, -15.027783, 0.433838),
        (44100, 2, 6.0, -11.976009, 0.435394),
        (16000, 1, 6.0, -14.975869, 0.432617),
    ])
    func theLoudnessIsLibebur128s(rate: Int, channels: Int, seconds: Double, loudness: Double, peak: Double) throws {
        let frames = Int(Double(rate) * seconds)
        var samples = [Int16](repeating: 0, count: frames * channels)
        var seed: UInt32 = 12345
        for frame in 0..<frames {
            for channel in 0..<channels {
                seed = seed &* 1103515245 &+ 12345
                let noise = Double(Int32(seed >> 16) & 0x7fff) - 16384
                let time = Double(frame) / Double(rate)
                let envelope = (frame / rate) % 3 == 2 ? 0.05 : 1.0
                let value = envelope * (8000 * sin(2 * Double.pi * 100 * time + Double(channel))
                    + 3000 * sin(2 * Double.pi * 5000 * time) + 0.2 * noise)
                samples[frame * channels + channel] = Int16(value.rounded())
            }
        }
        let meter = LoudnessMeter(format: PCMFormat(sample: .s16, sampleRate: rate, channels: channels))
        samples.withUnsafeBytes { raw in
            var frame = 0
            while frame < frames {
                let count = min(4800, frames - frame)
                meter.add(raw.baseAddress! + frame * channels * 2, frames: count)
                frame += count
            }
        }
        let measured = try #require(meter.loudness)
        #expect(abs(measured - loudness) < 0.001, "\(measured) LUFS against libebur128's \(loudness)")
        #expect(abs((meter.peak ?? 0) - peak) < 0.000001)
    }
}
