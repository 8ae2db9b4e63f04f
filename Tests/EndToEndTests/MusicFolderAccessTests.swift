// The README's recipe for a music folder in a home directory of mode 0700, run for real: reeld as
// an unprivileged user in the group audio (as the system unit's dynamic user) cannot read the
// folder, and can once the README's setfacl lines have run.

import Foundation
import ReelProtocol
import ReelTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite struct MusicFolderAccessTests {
    /// Root (to own files as another user and run reeld as `nobody`), setfacl and setpriv.
    static let canRun =
        getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setfacl")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") && getgrnam("audio") != nil

    /// The `sudo setfacl` lines of the README's "Music folders in a home directory", with
    /// `/home/pi` replaced by `home`, as argument lists.
    static func readmeACLCommands(home: String) throws -> [[String]] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let section = text.range(of: "#### Music folders in a home directory") else {
            throw TestFailure("README has no section \"Music folders in a home directory\"")
        }
        let commands = text[section.upperBound...].split(separator: "\n").prefix(40)
            .filter { $0.hasPrefix("sudo setfacl ") }
            .map { line -> [String] in
                let command = line.dropFirst("sudo ".count).split(separator: "#").first ?? ""
                return command.split(separator: " ").map { String($0).replacingOccurrences(of: "/home/pi", with: home) }
            }
        guard commands.count == 3 else { throw TestFailure("expected 3 setfacl lines in the README, found \(commands)") }
        return commands
    }

    @Test(.enabled(if: canRun, "needs root, setfacl, setpriv and the group audio"))
    func aMusicFolderInAPrivateHomeIsReadOnceTheReadmesACLIsSet() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("reel-home-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let home = base.appendingPathComponent("pi")
        let music = home.appendingPathComponent("Music")
        let album = music.appendingPathComponent("Trane/Blue Train")
        try FileManager.default.createDirectory(at: album, withIntermediateDirectories: true)
        try Self.tagged(album.appendingPathComponent("01 Moment.flac").path, title: "Moment")
        // A home directory as Debian makes it: owned by its user, mode 0700.
        let owner: uid_t = 4242
        try TestTool.run("chown", ["-R", "\(owner):\(owner)", home.path])
        #expect(chmod(home.path, 0o700) == 0)
        // reeld's own socket and data, writable by `nobody`.
        let run = base.appendingPathComponent("run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true)
        #expect(chmod(run.path, 0o1777) == 0)
        let audio = try #require(getgrnam("audio")).pointee.gr_gid

        let daemon = try DaemonProcess(
            arguments: ["--data-dir", run.appendingPathComponent("data").path],
            environment: ["REEL_MUSIC_DIRS": music.path], socketPath: run.appendingPathComponent("reel.sock").path,
            wrapper: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--groups=\(audio)"])
        let client = try daemon.client()
        _ = try client.result("subscribe", ["stream": "scan"])
        let first = try MusicFoldersTests.scanEnded(client, atLeast: 1)
        #expect(first["indexed"]?.intValue == 0)
        #expect(try client.result("music.albums")["albums"]?.arrayValue?.isEmpty == true)
        let log = try String(contentsOf: daemon.logURL, encoding: .utf8)
        #expect(log.contains("cannot reach it: Permission denied"), "reeld's log should say why the folder cannot be read")

        for command in try Self.readmeACLCommands(home: home.path) {
            try TestTool.run(command[0], Array(command.dropFirst()))
        }
        let rescan = try client.result("library.rescan")
        _ = try MusicFoldersTests.scanEnded(client, atLeast: rescan["scan"]?.intValue ?? 2)
        let albums = try client.result("music.albums")["albums"]?.arrayValue ?? []
        #expect(albums.map { $0["name"]?.stringValue } == ["Blue Train"])

        // A file created in the folder later is readable too (the default ACL).
        let later = album.appendingPathComponent("02 Locomotion.flac").path
        try Self.tagged(later, title: "Locomotion")
        try TestTool.run("chown", ["\(owner):\(owner)", later])
        let again = try client.result("library.rescan")
        _ = try MusicFoldersTests.scanEnded(client, atLeast: again["scan"]?.intValue ?? 3)
        let tracks = try client.result("music.tracks", ["album": "Blue Train"])["tracks"]?.arrayValue ?? []
        #expect(tracks.map { $0["title"]?.stringValue } == ["Moment", "Locomotion"])
        #expect(try client.result("music.failures")["failures"]?.arrayValue?.isEmpty == true)
    }

    /// A one-second FLAC tagged as a track of Trane's Blue Train.
    static func tagged(_ path: String, title: String) throws {
        try TestTool.run("sox", ["-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "1", "sine", "440"])
        try TestTool.run("metaflac", [
            "--set-tag=TITLE=\(title)", "--set-tag=ARTIST=Trane", "--set-tag=ALBUM=Blue Train",
            "--set-tag=TRACKNUMBER=\(title == "Moment" ? 1 : 2)", path,
        ])
    }
}
