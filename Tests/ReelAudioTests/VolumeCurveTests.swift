import Foundation
import ReelAudio
import Testing

/// The software mixer's volume law (cubic, as PulseAudio and alsamixer's wide controls).
@Suite struct VolumeCurveTests {
    @Test func fullVolumeIsExactlyUnityGain() {
        #expect(VolumeCurve.gain(forVolume: 100) == 1.0)
        #expect(VolumeCurve.decibels(forVolume: 100) == 0)
    }

    @Test func halfVolumeIsMinus18Decibels() {
        // (1/2)^3: 60·log10(0.5) = −18.06 dB, PulseAudio's 50 %.
        #expect(abs(VolumeCurve.decibels(forVolume: 50) - (-18.06)) < 0.1)
        #expect(abs(VolumeCurve.decibels(forVolume: 75) - (-7.50)) < 0.1)
        #expect(abs(VolumeCurve.decibels(forVolume: 25) - (-36.12)) < 0.1)
    }

    @Test func zeroIsSilence() {
        #expect(VolumeCurve.gain(forVolume: 0) == 0)
        #expect(VolumeCurve.decibels(forVolume: 0) == -.infinity)
    }

    @Test func strictlyIncreasingAndClamped() {
        for volume in 1...100 {
            #expect(VolumeCurve.gain(forVolume: volume) > VolumeCurve.gain(forVolume: volume - 1))
        }
        #expect(VolumeCurve.gain(forVolume: 150) == 1)
        #expect(VolumeCurve.gain(forVolume: -5) == 0)
    }
}
