// What `reel play ARG` means: a local file, or a recording's tree path.

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

    /// The rule, in `reel play --help`: an argument that exists as a local file (anything but a
    /// directory) is that file, made absolute against the current directory; else one starting
    /// with `/` is a tree path; else it is an error (exit 1) naming the absolute path looked at.
    static func resolve(_ argument: String) throws(CLIError) -> PlayArgument {
        let path = absolutePath(argument)
        var info = stat()
        if stat(path, &info) == 0 {
            if (info.st_mode & S_IFMT) != S_IFDIR { return .file(path) }
            if !argument.hasPrefix("/") {
                throw CLIError(exitCode: CLIError.refusedExitCode, message: "\(path) is a directory, not an audio file")
            }
        } else if errno != ENOENT && errno != ENOTDIR {
            // It may exist but cannot be looked at from here (EACCES): let the daemon say.
            return .file(path)
        }
        if argument.hasPrefix("/") { return .treePath(argument) }
        throw CLIError(
            exitCode: CLIError.refusedExitCode,
            message: "no file at \(path) (a recording in the library is given by its tree path, starting with '/')")
    }
}
