// reel: the command-line client of reeld.
//
// Parsing and running are done here rather than with `Reel.main()` so that the exit codes are
// those of `product.md`: 0 ok, 1 the daemon refused, 2 usage error, 3 cannot reach the daemon.

import ArgumentParser

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `reel --socket PATH status` means `reel status --socket PATH`: `--socket` given before the
/// subcommand is moved after it, where every subcommand declares it.
func movingGlobalOptions(_ arguments: [String]) -> [String] {
    var leading: [String] = []
    var rest = arguments[...]
    while let first = rest.first {
        if first == "--socket", rest.count >= 2 {
            leading += rest.prefix(2)
            rest = rest.dropFirst(2)
        } else if first.hasPrefix("--socket=") {
            leading.append(first)
            rest = rest.dropFirst()
        } else {
            break
        }
    }
    guard !leading.isEmpty, let subcommand = rest.first else { return arguments }
    return [subcommand] + leading + rest.dropFirst()
}

do {
    var command = try Reel.parseAsRoot(movingGlobalOptions(Array(CommandLine.arguments.dropFirst())))
    try command.run()
    exit(0)
} catch let error as CLIError {
    error.report()
    exit(error.exitCode)
} catch let error as ExitCode {
    exit(error.rawValue)
} catch {
    // Help and --version are "errors" with a success exit code: let ArgumentParser print them.
    if Reel.exitCode(for: error) == .success { Reel.exit(withError: error) }
    Output.error(Reel.fullMessage(for: error))
    exit(CLIError.usageExitCode)
}
