// A tone made with sox in a daemon's temp directory, for the end-to-end tests.

import Foundation

extension DaemonProcess {
    /// A 44.1 kHz stereo 16-bit 440 Hz tone of `seconds` named `name` in this daemon's directory.
    func tone(_ name: String, seconds: Double) throws -> String {
        let path = directory.appendingPathComponent(name).path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        process.arguments = ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "\(seconds)", "sine", "440"]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TestFailure("sox failed for \(path)") }
        return path
    }
}
