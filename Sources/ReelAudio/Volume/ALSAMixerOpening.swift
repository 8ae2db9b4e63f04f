// Opening an ALSA mixer: finding the control, and the control device of a PCM name.

import CALSA
import ReelModel

#if canImport(Glibc)
import Glibc
#endif

extension ALSAMixer {
    /// The ALSA control device of a PCM device name: the card's `hw:` control for `hw`,
    /// `plughw`, `sysdefault`, `front` and `dmix` names (`plughw:CARD=X,DEV=0` → `hw:CARD=X`,
    /// `hw:1,0` → `hw:1`); any other name is used as it is (`default`, `pulse`).
    public static func defaultControlDevice(forPCM device: String) -> String {
        guard let colon = device.firstIndex(of: ":") else { return device }
        let plugin = device[..<colon]
        guard ["hw", "plughw", "sysdefault", "front", "dmix"].contains(plugin) else { return device }
        let arguments = device[device.index(after: colon)...].split(separator: ",", omittingEmptySubsequences: false)
        if let named = arguments.first(where: { $0.hasPrefix("CARD=") }) {
            return "hw:\(named)"
        }
        guard let card = arguments.first, !card.isEmpty, !card.contains("=") else { return device }
        return "hw:\(card)"
    }

    /// `control` among a device's playback volume controls; nil: the first of
    /// `preferredControls` it has. The error lists the controls there are.
    static func chooseControl(
        _ control: String?, among elements: [(name: String, element: OpaquePointer)], device: String
    ) throws(ReelError) -> (name: String, element: OpaquePointer) {
        let listed = elements.isEmpty ? "it has no playback volume controls" :
            "it has " + elements.map { "\"\($0.name)\"" }.joined(separator: ", ")
        if let control {
            guard let found = elements.first(where: { $0.name == control }) else {
                throw ReelError(.deviceUnavailable, "ALSA mixer \"\(device)\" has no playback volume control \"\(control)\"; \(listed)")
            }
            return found
        }
        for name in preferredControls {
            if let found = elements.first(where: { $0.name == name }) { return found }
        }
        throw ReelError(.deviceUnavailable, "ALSA mixer \"\(device)\" has none of the controls "
            + preferredControls.map { "\"\($0)\"" }.joined(separator: ", ") + "; \(listed): configure one")
    }

    /// Attaches `device` as defined in `configuration` (ALSA configuration text), which is
    /// returned in `kept` for the caller to delete after closing the mixer.
    static func attach(
        _ mixer: OpaquePointer, _ device: String, configuration: String, keeping kept: inout OpaquePointer?
    ) -> Int32 {
        var loaded: OpaquePointer?
        var code = configuration.withCString { snd_config_load_string(&loaded, $0, strlen($0)) }
        guard code >= 0, let loaded else { return code < 0 ? code : -EINVAL }
        kept = loaded
        var control: OpaquePointer?
        code = snd_ctl_open_lconf(&control, device, 0, loaded)
        guard code >= 0, let control else { return code < 0 ? code : -ENODEV }
        var highLevel: OpaquePointer?
        code = snd_hctl_open_ctl(&highLevel, control)
        guard code >= 0, let highLevel else {
            snd_ctl_close(control)
            return code < 0 ? code : -ENODEV
        }
        // The mixer owns the hctl (and its ctl) from here: `snd_mixer_close` closes them. On
        // failure alsa-lib closes it on some paths and not others: leaked rather than closed twice.
        return snd_mixer_attach_hctl(mixer, highLevel)
    }

    static func playbackElements(_ mixer: OpaquePointer) -> [(name: String, element: OpaquePointer)] {
        var found: [(name: String, element: OpaquePointer)] = []
        var element = snd_mixer_first_elem(mixer)
        while let current = element {
            if snd_mixer_selem_is_active(current) != 0, snd_mixer_selem_has_playback_volume(current) != 0,
               let name = snd_mixer_selem_get_name(current)
            {
                let text = String(cString: name)
                let index = snd_mixer_selem_get_index(current)
                // A second control of the same name is `Name,1` (as amixer writes it).
                found.append((index == 0 ? text : "\(text),\(index)", current))
            }
            element = snd_mixer_elem_next(current)
        }
        return found
    }
}
