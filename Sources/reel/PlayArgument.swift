// What `reel play ARG` means: a local file, a recording's tree path, or a queue position.

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

enum PlayArgument: Equatable {
    /// A local file, as an absolute path (`player.play {file}`).
    case file(String)
    /// A recording in the library (`player.play {path}`).
    case treePath(String)
    /// An entry of the queue by its 1-based position (`player.play {entry}` once looked up).
    case queuePosition(Int)
    /// A URL, `scheme://…` (`player.play {url}`; the daemon says which schemes it plays).
    case url(String)

    /// Whether `argument` is written as a URL: a scheme of letters, digits, `+`, `-`, `.`, then
    /// `://`.
    static func isURL(_ argument: String) -> Bool {
        guard let colon = argument.firstIndex(of: ":"), colon != argument.startIndex,
            argument[colon...].hasPrefix("://")
        else { return false }
        let scheme = argument[..<colon]
        return scheme.first!.isLetter && scheme.allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
    }

    /// The rule, in `reel play --help`: an argument that exists as a local file (anything but a
    /// directory) is that file, made absolute against the current directory; else a number is
    /// a position in the queue (from 1; 0 is a usage error); else one starting with `/` is a
    /// tree path; else it is an error (exit 1) naming the absolute path looked at.
    static func resolve(_ argument: String) throws(CLIError) -> PlayArgument {
        if isURL(argument) { return .url(argument) }
        let path = absolutePath(argument)
        var info = stat()
        let isNumber = !argument.isEmpty && argument.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) != S_IFDIR { return .file(path) }
            if !argument.hasPrefix("/") && !isNumber {
                throw CLIError(exitCode: CLIError.refusedExitCode, message: "\(path) is a directory, not an audio file")
            }
        } else if errno != ENOENT && errno != ENOTDIR {
            // It may exist but cannot be looked at from here (EACCES): let the daemon say.
            return .file(path)
        }
        if isNumber {
            guard let position = Int(argument), position >= 1 else {
                throw CLIError(
                    exitCode: CLIError.usageExitCode,
                    message: "'\(argument)' is not a queue position: positions start at 1 (as `reel queue` shows them)")
            }
            return .queuePosition(position)
        }
        if argument.hasPrefix("/") { return .treePath(argument) }
        throw CLIError(
            exitCode: CLIError.refusedExitCode,
            message: "no file at \(path) (a recording in the library is given by its tree path, starting with '/')")
    }
}
