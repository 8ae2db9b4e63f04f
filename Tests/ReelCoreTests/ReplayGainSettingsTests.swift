import ReelModel
import Testing

/// ReplayGain's rules as values: which gain a mode picks, the preamp, the missing-tags preamp,
/// clipping prevention, the bound, and the tags' text.
@Suite struct ReplayGainSettingsTests {
    static let tagged = ReplayGainInfo(
        track: ReplayGainValue(gain: -6, peak: 0.5), album: ReplayGainValue(gain: -9, peak: 0.9))

    func decibels(_ settings: ReplayGainSettings, _ info: ReplayGainInfo?, random: Bool = false) -> Double? {
        settings.gain(for: info, random: random)
    }

    func close(_ value: Double?, _ expected: Double) -> Bool {
        guard let value else { return false }
        return abs(value - expected) < 1e-9
    }

    @Test func offAppliesNothing() {
        let off = ReplayGainSettings(mode: .off, preamp: 6, missingPreamp: -6)
        #expect(off.scale(for: Self.tagged, random: false) == nil)
        #expect(off.scale(for: nil, random: true) == nil)
    }

    @Test func trackAndAlbumPickTheirGain() {
        #expect(close(decibels(ReplayGainSettings(mode: .track), Self.tagged), -6))
        #expect(close(decibels(ReplayGainSettings(mode: .album), Self.tagged), -9))
    }

    @Test func autoIsAlbumInOrderAndTrackAtRandom() {
        let auto = ReplayGainSettings(mode: .auto)
        #expect(close(decibels(auto, Self.tagged, random: false), -9))
        #expect(close(decibels(auto, Self.tagged, random: true), -6))
        #expect(auto.usesAlbumGain(random: false) && !auto.usesAlbumGain(random: true))
        // track and album ignore random.
        #expect(close(decibels(ReplayGainSettings(mode: .album), Self.tagged, random: true), -9))
        #expect(close(decibels(ReplayGainSettings(mode: .track), Self.tagged, random: false), -6))
    }

    @Test func aMissingGainFallsBackToTheOther() {
        let trackOnly = ReplayGainInfo(track: ReplayGainValue(gain: -4))
        let albumOnly = ReplayGainInfo(album: ReplayGainValue(gain: -7))
        #expect(close(decibels(ReplayGainSettings(mode: .album), trackOnly), -4))
        #expect(close(decibels(ReplayGainSettings(mode: .track), albumOnly), -7))
    }

    @Test func preampAddsAndMissingPreampIsForUntaggedFiles() {
        let settings = ReplayGainSettings(mode: .track, preamp: 2.5, missingPreamp: -3)
        #expect(close(decibels(settings, Self.tagged), -3.5))
        #expect(close(decibels(settings, .none), -3))
        #expect(close(decibels(settings, nil), -3))
        #expect(ReplayGainSettings(mode: .track).scale(for: .none, random: false) == 1)
    }

    @Test func limitKeepsThePeakAtFullScale() {
        // +6 dB on a peak of 0.8 would reach 1.6: limited to 1/0.8.
        let loud = ReplayGainInfo(track: ReplayGainValue(gain: 6, peak: 0.8))
        let limited = ReplayGainSettings(mode: .track, limit: true)
        #expect(close(limited.scale(for: loud, random: false), 1 / 0.8))
        let unlimited = ReplayGainSettings(mode: .track, limit: false)
        #expect(close(unlimited.scale(for: loud, random: false), ReplayGainSettings.linear(dB: 6)))
        // A gain that does not reach the peak's limit is left alone; no peak: no limit.
        #expect(close(decibels(limited, Self.tagged), -6))
        #expect(close(decibels(limited, ReplayGainInfo(track: ReplayGainValue(gain: 6))), 6))
        // The preamp counts towards the limit: −6 + 15 dB on a peak of 0.5 would reach 1.41.
        let preamped = ReplayGainSettings(mode: .track, preamp: 15, limit: true)
        #expect(close(preamped.scale(for: Self.tagged, random: false), 2))
    }

    @Test func theScaleIsBounded() {
        let absurd = ReplayGainInfo(track: ReplayGainValue(gain: 60))
        #expect(ReplayGainSettings(mode: .track, preamp: 15).scale(for: absurd, random: false) == ReplayGainSettings.maximumScale)
    }

    @Test func tagTextIsParsed() {
        #expect(ReplayGainInfo.parseGain("-6.48 dB") == -6.48)
        #expect(ReplayGainInfo.parseGain("+2.10 dB") == 2.1)
        #expect(ReplayGainInfo.parseGain(" 3 DB ") == 3)
        #expect(ReplayGainInfo.parseGain("-1.5") == -1.5)
        #expect(ReplayGainInfo.parseGain("loud") == nil)
        #expect(ReplayGainInfo.parseGain("nan dB") == nil)
        #expect(ReplayGainInfo.parseGain("") == nil)
        #expect(ReplayGainInfo.parsePeak("0.988312") == 0.988312)
        #expect(ReplayGainInfo.parsePeak("-1") == nil)
        #expect(ReplayGainInfo.parsePeak("inf") == nil)
        // Q7.8 dB to −23 LUFS, made −18 LUFS: −1280 is −5 dB + 5.
        #expect(ReplayGainInfo.parseR128("-1280") == 0)
        #expect(ReplayGainInfo.parseR128("256") == 6)
        #expect(ReplayGainInfo.parseR128("1.5") == nil)
        #expect(ReplayGainInfo.parseR128("40000") == nil)
    }

    @Test func tagsCombine() {
        let info = ReplayGainInfo(
            trackGain: "-6.00 dB", trackPeak: "0.5", albumGain: nil, albumPeak: "0.9", r128TrackGain: "-1280",
            r128AlbumGain: "512")
        #expect(info.track == ReplayGainValue(gain: -6, peak: 0.5))
        // No REPLAYGAIN_ALBUM_GAIN: R128's, without a peak (a peak alone is not a gain).
        #expect(info.album == ReplayGainValue(gain: 7, peak: nil))
        #expect(ReplayGainInfo(trackGain: nil, trackPeak: "0.5", albumGain: nil, albumPeak: nil).isEmpty)
    }
}
