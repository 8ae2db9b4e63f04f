// A hardware volume control on ALSA's simple mixer API.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
import ReelRuntime
#endif

/// One playback control of an ALSA control device (`hw:0`, `hw:CARD=X`, `pulse`, `default`),
/// shown as a volume of 0–100 the way alsamixer shows it (`VolumeMapping`), and its mute.
///
/// Any thread may call any method: the alsa-lib handle is used under a lock. Nothing here is
/// for the audio thread (alsa-lib calls may block on the driver or, for `pulse`, on the server).
///
/// - A setting reads back as set: where the control's steps are coarser than 1 % (a 0.5 dB
///   step near the top of a cubic range is about 2 %), the percent asked for is kept and
///   reported while the control still holds the value it was set to (as MPD does).
/// - Mute uses the control's playback switch. A control without one is muted by emulation:
///   the volume is kept, the control set to 0, and unmuting restores it; while muted,
///   `setVolume` changes the volume that unmuting restores.
/// - External changes (alsamixer, `pactl`, a hardware knob) arrive as events on
///   `pollDescriptors()`; `handleEvents()` takes them in and says whether (volume, muted)
///   changed since last reported. `MixerWatcher` does that on a thread of its own. The
///   `pulse` control device does signal them (a `pactl set-sink-volume` wakes the poll).
public final class ALSAMixer: Sendable {
    /// The controls tried, in order, when none is configured: `Digital` first for the PCM512x
    /// DACs of Raspberry Pi HATs, then the usual names.
    public static let preferredControls = ["Digital", "PCM", "Master", "Speaker", "Headphone"]

    /// How the control's values map to a percent.
    public enum Scale: Sendable, Equatable {
        /// A dB range in 0.01 dB (`VolumeMapping`: linear up to 24 dB, cubic beyond).
        case decibels(ClosedRange<Int>)
        /// No dB information: linear in raw steps.
        case raw(ClosedRange<Int>)
    }

    public let device: String
    public let controlName: String
    public let scale: Scale
    /// The control's raw register range.
    public let rawRange: ClosedRange<Int>
    /// Whether the control has a playback switch (else mute is emulated).
    public let hasSwitch: Bool
    private let state: Locked<State>

    private struct State {
        let mixer: OpaquePointer
        /// A configuration of the caller's, kept while the mixer is open.
        let configuration: OpaquePointer?
        let element: OpaquePointer
        let channels: [snd_mixer_selem_channel_id_t]
        /// The percent last set and the raw values it gave: reported while the control holds them.
        var requested: (percent: Int, values: [Int])?
        /// An emulated mute: the volume to restore and the raw values muting set.
        var emulatedMute: (volume: Int, values: [Int])?
        /// The last (volume, muted) reported by `handleEvents` or set here.
        var reported: (volume: Int, muted: Bool)
        /// A `MixerWatcher` takes events in; otherwise reads take them in first.
        var watched = false
    }

    /// Opens `control` on the control device `device`; `control` nil: the first of
    /// `preferredControls` the device has. Throws `deviceUnavailable` when the device cannot be
    /// opened or has no such control (the message lists the playback controls it has).
    public convenience init(device: String, control: String?) throws(ReelError) {
        try self.init(device: device, control: control, configuration: nil)
    }

    /// With `configuration`, `device` is looked up in that ALSA configuration text instead of
    /// the system's (`ctl.NAME { type remap ... }`): tests make controls the machine lacks.
    init(device: String, control: String?, configuration: String?) throws(ReelError) {
        ALSA.silenceLibraryErrors()
        var handle: OpaquePointer?
        var code = snd_mixer_open(&handle, 0)
        guard code >= 0, let mixer = handle else {
            throw ReelError(.deviceUnavailable, "cannot open an ALSA mixer: \(ALSA.describe(code))")
        }
        var localConfiguration: OpaquePointer?
        func fail(_ message: String) -> ReelError {
            snd_mixer_close(mixer)
            if let localConfiguration { snd_config_delete(localConfiguration) }
            return ReelError(.deviceUnavailable, message)
        }
        if let configuration {
            code = Self.attach(mixer, device, configuration: configuration, keeping: &localConfiguration)
        } else {
            code = snd_mixer_attach(mixer, device)
        }
        if code >= 0 { code = snd_mixer_selem_register(mixer, nil, nil) }
        if code >= 0 { code = snd_mixer_load(mixer) }
        guard code >= 0 else {
            throw fail("cannot open ALSA mixer \"\(device)\": \(ALSA.describe(code))")
        }

        let chosen: (name: String, element: OpaquePointer)
        do {
            chosen = try Self.chooseControl(control, among: Self.playbackElements(mixer), device: device)
        } catch {
            throw fail(error.message)
        }
        let element = chosen.element

        var low = 0
        var high = 0
        snd_mixer_selem_get_playback_volume_range(element, &low, &high)
        let rawRange = low...max(low, high)
        var scale = Scale.raw(rawRange)
        if snd_mixer_selem_get_playback_dB_range(element, &low, &high) >= 0, low < high {
            scale = .decibels(low...high)
        }
        var channels: [snd_mixer_selem_channel_id_t] = []
        for raw in SND_MIXER_SCHN_FRONT_LEFT.rawValue...SND_MIXER_SCHN_LAST.rawValue {
            let channel = snd_mixer_selem_channel_id_t(rawValue: raw)
            if snd_mixer_selem_has_playback_channel(element, channel) != 0 { channels.append(channel) }
        }
        if channels.isEmpty { channels = [SND_MIXER_SCHN_MONO] }

        self.device = device
        self.controlName = chosen.name
        self.scale = scale
        self.rawRange = rawRange
        self.hasSwitch = snd_mixer_selem_has_playback_switch(element) != 0
        var initial = State(
            mixer: mixer, configuration: localConfiguration, element: element, channels: channels, reported: (0, false))
        initial.reported = Self.read(&initial, scale: scale, rawRange: rawRange, hasSwitch: hasSwitch)
        state = Locked(initial)
    }

    deinit {
        state.withLock { state in
            snd_mixer_close(state.mixer)
            if let configuration = state.configuration { snd_config_delete(configuration) }
        }
    }

    /// The volume, 0–100: the channels' average on the mapping, or the percent last set while
    /// the control holds what it was set to; while muted by emulation, the volume unmuting restores.
    public func volume() -> Int {
        current().volume
    }

    /// Whether the control is muted: its switch off on every channel (or muted by emulation).
    public func isMuted() -> Bool {
        current().muted
    }

    /// Volume and mute read together.
    public func current() -> (volume: Int, muted: Bool) {
        state.withLock { state in
            if !state.watched { _ = snd_mixer_handle_events(state.mixer) }
            return read(&state)
        }
    }

    /// Sets every channel to `percent` (clamped to 0–100): the control's step nearest to it.
    public func setVolume(_ percent: Int) throws(ReelError) {
        let percent = min(max(percent, 0), 100)
        try state.withLock { (state: inout State) throws(ReelError) in
            if !state.watched { _ = snd_mixer_handle_events(state.mixer) }
            if var muted = state.emulatedMute, Self.rawValues(state) == muted.values {
                muted.volume = percent
                state.emulatedMute = muted
                state.reported = (percent, true)
                return
            }
            try write(percent, &state)
            state.requested = (percent, Self.rawValues(state))
            state.reported = (percent, read(&state).muted)
        }
    }

    /// Mutes or unmutes: the playback switch, or without one the emulation described above.
    public func setMuted(_ muted: Bool) throws(ReelError) {
        try state.withLock { (state: inout State) throws(ReelError) in
            if !state.watched { _ = snd_mixer_handle_events(state.mixer) }
            if hasSwitch {
                let code = snd_mixer_selem_set_playback_switch_all(state.element, muted ? 0 : 1)
                guard code >= 0 else { throw failure("mute", code) }
            } else {
                let now = read(&state)
                if muted && !now.muted {
                    try write(0, &state)
                    state.emulatedMute = (now.volume, Self.rawValues(state))
                } else if !muted, let restore = state.emulatedMute {
                    state.emulatedMute = nil
                    try write(restore.volume, &state)
                    state.requested = (restore.volume, Self.rawValues(state))
                }
            }
            state.reported = read(&state)
        }
    }

    /// The descriptors to poll for external changes (POLLIN); then call `handleEvents`.
    public func pollDescriptors() -> [pollfd] {
        state.withLock { state in
            let count = Int(snd_mixer_poll_descriptors_count(state.mixer))
            guard count > 0 else { return [] }
            var descriptors = [pollfd](repeating: pollfd(), count: count)
            let filled = descriptors.withUnsafeMutableBufferPointer {
                snd_mixer_poll_descriptors(state.mixer, $0.baseAddress, UInt32(count))
            }
            return Array(descriptors.prefix(Int(max(filled, 0))))
        }
    }

    /// Takes in pending events; true when (volume, muted) differs from what was last reported
    /// (by this call or a set here: own settings are not reported back). Throws when the device
    /// is gone (a USB DAC unplugged).
    public func handleEvents() throws(ReelError) -> Bool {
        try takeEvents().change != nil
    }

    /// `handleEvents`, with how many events there were and the new (volume, muted) if changed.
    func takeEvents() throws(ReelError) -> (events: Int, change: (volume: Int, muted: Bool)?) {
        try state.withLock { (state: inout State) throws(ReelError) in
            let code = snd_mixer_handle_events(state.mixer)
            guard code >= 0 else { throw failure("read", code) }
            let now = read(&state)
            guard now != state.reported else { return (Int(code), nil) }
            state.reported = now
            return (Int(code), now)
        }
    }

    /// Marks the mixer as watched: reads then leave events to the watcher's thread.
    func setWatched(_ watched: Bool) {
        state.withLock { $0.watched = watched }
    }

    // MARK: - Under the lock

    private func write(_ percent: Int, _ state: inout State) throws(ReelError) {
        let value: Int
        switch scale {
        case .raw(let range):
            value = VolumeMapping.raw(fromPercent: percent, range: range)
        case .decibels(let range):
            value = Self.nearestStep(percent, dB: range, element: state.element)
                ?? VolumeMapping.raw(fromPercent: percent, range: rawRange)
        }
        let code = snd_mixer_selem_set_playback_volume_all(state.element, value)
        guard code >= 0 else { throw failure("set the volume of", code) }
    }

    /// The raw step whose dB value maps nearest to `percent`: of the steps just below and just
    /// above the mapped dB value, the one whose percent is closer.
    private static func nearestStep(_ percent: Int, dB range: ClosedRange<Int>, element: OpaquePointer) -> Int? {
        let target = VolumeMapping.dB(fromPercent: percent, range: range)
        var best: (value: Int, distance: Double)?
        for direction: Int32 in [-1, 1] {
            var value = 0
            guard snd_mixer_selem_ask_playback_dB_vol(element, target, direction, &value) >= 0 else { continue }
            var dB = 0
            guard snd_mixer_selem_ask_playback_vol_dB(element, value, &dB) >= 0 else { continue }
            let distance = abs(VolumeMapping.normalized(fromDB: dB, range: range) * 100 - Double(percent))
            if best == nil || distance < best!.distance { best = (value, distance) }
        }
        return best?.value
    }

    private static func rawValues(_ state: State) -> [Int] {
        state.channels.map { channel in
            var value = 0
            snd_mixer_selem_get_playback_volume(state.element, channel, &value)
            return value
        }
    }

    private func read(_ state: inout State) -> (volume: Int, muted: Bool) {
        Self.read(&state, scale: scale, rawRange: rawRange, hasSwitch: hasSwitch)
    }

    private static func read(
        _ state: inout State, scale: Scale, rawRange: ClosedRange<Int>, hasSwitch: Bool
    ) -> (volume: Int, muted: Bool) {
        let values = rawValues(state)
        if let muted = state.emulatedMute {
            if values == muted.values { return (muted.volume, true) }
            state.emulatedMute = nil
        }
        var muted = false
        if hasSwitch {
            muted = state.channels.allSatisfy { channel in
                var on: Int32 = 1
                snd_mixer_selem_get_playback_switch(state.element, channel, &on)
                return on == 0
            }
        }
        if let requested = state.requested {
            if values == requested.values { return (requested.percent, muted) }
            state.requested = nil
        }
        var sum = 0.0
        for value in values {
            switch scale {
            case .raw(let range):
                sum += VolumeMapping.normalized(fromRaw: value, range: range)
            case .decibels(let range):
                var dB = 0
                if snd_mixer_selem_ask_playback_vol_dB(state.element, value, &dB) >= 0 {
                    sum += VolumeMapping.normalized(fromDB: dB, range: range)
                } else {
                    sum += VolumeMapping.normalized(fromRaw: value, range: rawRange)
                }
            }
        }
        return (VolumeMapping.percent(sum / Double(max(values.count, 1))), muted)
    }

    private func failure(_ verb: String, _ code: Int32) -> ReelError {
        ReelError(.deviceUnavailable,
                  "cannot \(verb) ALSA mixer control \"\(controlName)\" on \"\(device)\": \(ALSA.describe(code))")
    }
}
