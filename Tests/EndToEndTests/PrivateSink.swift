// A null sink of a test's own on the PulseAudio server that scripts/test starts, so that what
// one test records is what it played, not a mix of every test playing at the same time.

import Foundation

final class PrivateSink {
    let name: String
    private let module: String

    init() throws {
        name = "reel_test_\(UUID().uuidString.prefix(8).lowercased())"
        let (status, output) = try AudioAnalysis.run("pactl", ["load-module", "module-null-sink", "sink_name=\(name)"])
        guard status == 0, let index = output.split(separator: "\n").first.map(String.init), Int(index) != nil else {
            throw TestFailure("cannot load a null sink: \(output)")
        }
        module = index
    }

    deinit {
        _ = try? AudioAnalysis.run("pactl", ["unload-module", module])
    }

    /// For a process whose ALSA `pulse` device should play into this sink and record its monitor.
    var environment: [String: String] { ["PULSE_SINK": name, "PULSE_SOURCE": "\(name).monitor"] }
}
