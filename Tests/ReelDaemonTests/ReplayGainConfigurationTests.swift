import ReelModel
import Testing

@testable import ReelDaemon

/// The ReplayGain keys, as MPD names them: from the file (a preamp as a number, `-3.5`, or a
/// string, the limit as a boolean) and the environment; a bad value names the key and what it
/// must be, and changes nothing.
@Suite struct ReplayGainConfigurationTests {
    let environment = ["HOME": "/home/me"]

    @Test func keysFromTheFileAndTheEnvironment() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        #expect(settings.mixer.replayGain == ReplayGainSettings())
        try settings.apply(
            toml: """
                replaygain = "album"
                replaygain_preamp = "-3.5"
                replaygain_missing_preamp = 4
                replaygain_limit = false
                """, source: "reeld.toml")
        #expect(settings.mixer.replayGain == ReplayGainSettings(mode: .album, preamp: -3.5, missingPreamp: 4, limit: false))
        try settings.apply(environment: ["REEL_REPLAYGAIN": "auto", "REEL_REPLAYGAIN_LIMIT": "yes"])
        #expect(settings.mixer.replayGain.mode == .auto)
        #expect(settings.mixer.replayGain.limit)
    }

    /// A preamp written as TOML writes a number with a fraction (not refused as "only whole
    /// numbers", as it was).
    @Test func aPreampIsADecimalNumber() throws {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        try settings.apply(toml: "replaygain_preamp = -3.5\nreplaygain_missing_preamp = 1.25", source: "reeld.toml")
        #expect(settings.mixer.replayGain.preamp == -3.5)
        #expect(settings.mixer.replayGain.missingPreamp == 1.25)
    }

    @Test(arguments: [
        ("replaygain = \"loud\"", "is not one of off, track, album, auto"),
        ("replaygain_preamp = 16", "is not a gain in dB from -15 to 15"),
        ("replaygain_missing_preamp = \"x\"", "is not a gain in dB from -15 to 15"),
        ("replaygain_limit = \"maybe\"", "is not yes or no"),
        ("replaygain_preamp = 15.5", "is not a gain in dB from -15 to 15"),
        ("replaygain_limit = 1.5", "is not yes or no"),
    ])
    func badValuesAreNamed(line: String, message: String) {
        var settings = DaemonConfiguration.defaults(environment: environment, uid: 1000)
        do {
            try settings.apply(toml: line, source: "a.toml")
            Issue.record("\(line) was taken")
        } catch {
            #expect(error.description.contains(message), "\(error.description)")
            #expect(error.description.contains("a.toml:1"))
        }
        #expect(settings.mixer.replayGain == ReplayGainSettings())
    }
}
