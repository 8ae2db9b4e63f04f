// reel-snapcast: Snapcast's stream plugin for Reel. snapserver starts it for a stream with
// `controlscript=`, sends JSON-RPC requests on its stdin and reads replies and pushes on its
// stdout; it controls reeld over reeld's socket. One thread: `PluginLoop`.

import ReelSnapcast

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let version = "0.2.0"

// A write to a closed stdout must fail with EPIPE, not kill the plugin.
signal(SIGPIPE, SIG_IGN)

let arguments: PluginArguments
do {
    arguments = try PluginArguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    let text = Array("reel-snapcast: \(error)\n\(PluginArguments.usage)\n".utf8)
    _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(2)
}
if arguments.showHelp {
    print(PluginArguments.usage)
    exit(0)
}
if arguments.showVersion {
    print("reel-snapcast \(version)")
    exit(0)
}

var environment: [String: String] = [:]
for key in ["REEL_SOCKET", "XDG_RUNTIME_DIR"] {
    if let value = getenv(key) { environment[key] = String(cString: value) }
}
let candidates = ReeldSocket.candidates(explicit: arguments.socket, environment: environment, uid: UInt32(getuid()))
exit(PluginLoop(socketCandidates: candidates).run())
