import Foundation
import Glibc
@testable import ReelAudio
import ReelModel
import ReelRuntime
import Testing

/// Control device names from PCM names (pure).
@Suite struct MixerDeviceNameTests {
    @Test(arguments: [
        ("plughw:CARD,0", "hw:CARD"),
        ("hw:1,0", "hw:1"),
        ("hw:1", "hw:1"),
        ("plughw:1", "hw:1"),
        ("plughw:CARD=Headphones,DEV=0", "hw:CARD=Headphones"),
        ("hw:CARD=sndrpihifiberry,DEV=0", "hw:CARD=sndrpihifiberry"),
        ("sysdefault:CARD=X", "hw:CARD=X"),
        ("front:CARD=Device,DEV=0", "hw:CARD=Device"),
        ("dmix:CARD=X", "hw:CARD=X"),
        ("default", "default"),
        ("pulse", "pulse"),
        ("null", "null"),
        ("equal", "equal"),
        ("file:FILE=/tmp/x.raw,FORMAT=raw", "file:FILE=/tmp/x.raw,FORMAT=raw"),
    ])
    func controlDeviceOfAPCM(pcm: String, control: String) {
        #expect(ALSAMixer.defaultControlDevice(forPCM: pcm) == control)
    }

    @Test func aMissingCardIsDeviceUnavailable() {
        #expect {
            _ = try ALSAMixer(device: "hw:57", control: nil)
        } throws: { error in
            guard let error = error as? ReelError else { return false }
            return error.reason == .deviceUnavailable && error.message.contains("hw:57")
        }
    }
}

/// `ALSAMixer` on the `pulse` control device: its `Master` is the default sink's volume, so
/// every setting is checked against `pactl`. The suite restores 100 % unmuted after each test.
@Suite(.serialized, .enabled(if: PulseMixer.server != nil, "needs the PulseAudio server that scripts/test starts (REEL_TEST_PULSE_SERVER)"))
struct ALSAMixerPulseTests {
    init() throws {
        try PulseMixer.reset()
    }

    @Test func pulseHasMasterWithoutDecibelsAndWithASwitch() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        #expect(mixer.controlName == "Master")
        #expect(mixer.scale == .raw(0...65536))
        #expect(mixer.hasSwitch)
        #expect(mixer.volume() == 100)
        #expect(!mixer.isMuted())
    }

    @Test func aSettingReachesTheSinkAndReadsBack() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: "Master")
        try mixer.setVolume(37)
        #expect(mixer.volume() == 37)
        let sink = try PulseMixer.sinkVolume()
        #expect(abs(sink - 37) <= 1, "the sink is at \(sink) %")
        // Another mixer on the device (a fresh read of the control) sees it too.
        #expect(try ALSAMixer(device: "pulse", control: nil).volume() == 37)
    }

    @Test func everyPercentReadsBack() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        for percent in 0...100 {
            try mixer.setVolume(percent)
            #expect(mixer.volume() == percent)
        }
    }

    @Test func muteUsesTheSinksSwitch() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        try mixer.setVolume(50)
        try mixer.setMuted(true)
        #expect(mixer.isMuted())
        #expect(try PulseMixer.sinkMuted())
        #expect(mixer.volume() == 50)
        try mixer.setMuted(false)
        #expect(!mixer.isMuted())
        #expect(try !PulseMixer.sinkMuted())
        #expect(mixer.volume() == 50)
    }

    @Test func handleEventsSeesAnExternalChangeWithinASecond() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        _ = try mixer.handleEvents()
        try PulseMixer.pactl(["set-sink-volume", "@DEFAULT_SINK@", "60%"])
        let deadline = Date().addingTimeInterval(1)
        var changed = false
        while !changed && Date() < deadline {
            var descriptors = mixer.pollDescriptors()
            #expect(!descriptors.isEmpty)
            _ = poll(&descriptors, nfds_t(descriptors.count), 100)
            changed = try mixer.handleEvents()
        }
        #expect(changed, "no change seen within a second")
        #expect(mixer.volume() == 60)
        // Once taken in, nothing more to report; own settings are not reported back.
        #expect(try !mixer.handleEvents())
        try mixer.setVolume(20)
        usleep(200_000)
        #expect(try !mixer.handleEvents())
    }

    @Test func theWatcherReportsExternalVolumeAndMuteChanges() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        let seen = Locked<[String]>([])
        let watcher = MixerWatcher(mixer: mixer) { volume, muted in
            seen.withLock { $0.append("\(volume)\(muted ? " muted" : "")") }
        }
        defer { watcher.stop() }
        usleep(100_000)
        try PulseMixer.pactl(["set-sink-volume", "@DEFAULT_SINK@", "60%"])
        #expect(Self.waitFor(seen, "60", within: 1), "seen: \(seen.current)")
        #expect(mixer.volume() == 60)
        try PulseMixer.pactl(["set-sink-mute", "@DEFAULT_SINK@", "1"])
        #expect(Self.waitFor(seen, "60 muted", within: 1), "seen: \(seen.current)")
        #expect(mixer.isMuted())
        // The mixer's own settings are not reported back.
        try mixer.setMuted(false)
        try mixer.setVolume(45)
        usleep(300_000)
        #expect(seen.current == ["60", "60 muted"])
    }

    @Test func theWatcherSleepsWhileNothingChanges() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "pulse", control: nil)
        let calls = Locked(0)
        let watcher = MixerWatcher(mixer: mixer) { _, _ in calls.withLock { $0 += 1 } }
        usleep(1_000_000)
        // The watcher's thread used (next to) no CPU over the second: it did not spin.
        let ticks = Self.watcherCPUTicks()
        #expect(ticks != nil, "no thread named reel-mixer")
        #expect((ticks ?? 0) <= 5, "the watcher used \(ticks ?? 0) ticks of CPU in a second")
        let stopStarted = Date()
        watcher.stop()
        #expect(Date().timeIntervalSince(stopStarted) < 0.5, "stop took too long")
        #expect(calls.current == 0)
    }

    @Test func anUnknownControlListsTheControlsThereAre() throws {
        do {
            _ = try ALSAMixer(device: "pulse", control: "Digital")
            Issue.record("opened a control pulse does not have")
        } catch {
            #expect(error.reason == .deviceUnavailable)
            #expect(error.message.contains("\"Digital\""))
            #expect(error.message.contains("\"Master\""), "\(error.message)")
        }
    }

    /// A `Digital` control with no switch, as on PCM512x DACs: the sink's volume renamed by
    /// alsa-lib's `remap` plugin over `pulse`, its switch renamed away. (A `map` would do too,
    /// but alsa-lib 1.2.8 does not pass the sink's events on to mapped controls; renamed ones
    /// get them.)
    static let switchless = """
        ctl.switchless {
            type remap
            child { type pulse }
            remap {
                "name='Master Playback Volume'" "name='Digital Playback Volume'"
                "name='Master Playback Switch'" "name='Elsewhere Switch'"
            }
        }
        """

    @Test func digitalIsPreferredAndAControlWithoutASwitchIsMutedByEmulation() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "switchless", control: nil, configuration: Self.switchless)
        #expect(mixer.controlName == "Digital")
        #expect(!mixer.hasSwitch)
        try mixer.setVolume(40)
        try mixer.setMuted(true)
        #expect(mixer.isMuted())
        #expect(mixer.volume() == 40)
        #expect(try PulseMixer.sinkVolume() == 0)
        #expect(try !PulseMixer.sinkMuted())
        // A volume set while muted is the one unmuting restores.
        try mixer.setVolume(70)
        #expect(mixer.isMuted())
        #expect(mixer.volume() == 70)
        #expect(try PulseMixer.sinkVolume() == 0)
        try mixer.setMuted(false)
        #expect(!mixer.isMuted())
        #expect(mixer.volume() == 70)
        #expect(try PulseMixer.sinkVolume() == 70)
    }

    @Test func raisingAnEmulatedMuteElsewhereUnmutes() throws {
        defer { try? PulseMixer.reset() }
        let mixer = try ALSAMixer(device: "switchless", control: "Digital", configuration: Self.switchless)
        try mixer.setVolume(40)
        try mixer.setMuted(true)
        try PulseMixer.pactl(["set-sink-volume", "@DEFAULT_SINK@", "25%"])
        let deadline = Date().addingTimeInterval(1)
        while mixer.isMuted() && Date() < deadline { usleep(10_000) }
        #expect(!mixer.isMuted())
        #expect(mixer.volume() == 25)
    }

    static func waitFor(_ seen: Locked<[String]>, _ value: String, within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if seen.current.contains(value) { return true }
            usleep(10_000)
        }
        return false
    }

    /// User plus system CPU time, in clock ticks, of this process's thread named `reel-mixer`.
    static func watcherCPUTicks() -> Int? {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.trimmingCharacters(in: .whitespacesAndNewlines) == "reel-mixer",
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")")
            else { continue }
            // After "(comm)": state is field 3, utime field 14, stime field 15.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { continue }
            return user + system
        }
        return nil
    }
}

/// `pactl` on the test server's default sink.
enum PulseMixer {
    static let server = ProcessInfo.processInfo.environment["REEL_TEST_PULSE_SERVER"]

    @discardableResult
    static func pactl(_ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pactl")
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        if let server { environment["PULSE_SERVER"] = server }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        guard process.terminationStatus == 0 else {
            throw ReelError(.ioError, "pactl \(arguments.joined(separator: " ")): \(text)")
        }
        return text
    }

    /// The default sink's volume in percent (its first channel), as pactl shows it.
    static func sinkVolume() throws -> Int {
        let text = try pactl(["get-sink-volume", "@DEFAULT_SINK@"])
        guard let match = text.firstMatch(of: /\/\s*(\d+)%/), let percent = Int(match.1) else {
            throw ReelError(.ioError, "unexpected pactl output: \(text)")
        }
        return percent
    }

    static func sinkMuted() throws -> Bool {
        try pactl(["get-sink-mute", "@DEFAULT_SINK@"]).contains("yes")
    }

    static func reset() throws {
        try pactl(["set-sink-mute", "@DEFAULT_SINK@", "0"])
        try pactl(["set-sink-volume", "@DEFAULT_SINK@", "100%"])
    }
}
