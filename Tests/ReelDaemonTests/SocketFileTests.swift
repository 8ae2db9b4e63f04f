import Foundation
import Glibc
import Testing

@testable import ReelDaemon

@Suite struct SocketFileTests {
    let directory: String = {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reel-sock-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }()

    /// A bound (and optionally listening) Unix socket at `path`; returns its descriptor.
    func bind(_ path: String, listening: Bool) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        if listening { listen(fd, 1) }
        return fd
    }

    @Test func staleSocketFileIsRemoved() throws {
        let path = directory + "/stale.sock"
        close(bind(path, listening: false))  // a crash leaves the file behind
        #expect(FileManager.default.fileExists(atPath: path))
        try SocketFile.prepare(path)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func liveSocketIsLeftAloneWithAClearMessage() throws {
        let path = directory + "/live.sock"
        let fd = bind(path, listening: true)
        defer { close(fd) }
        do {
            try SocketFile.prepare(path)
            Issue.record("a live socket was replaced")
        } catch {
            #expect(error.description.contains("another reeld is already listening on \(path)"))
        }
        #expect(FileManager.default.fileExists(atPath: path))
    }

    @Test func regularFileIsNotReplaced() throws {
        let path = directory + "/file.sock"
        FileManager.default.createFile(atPath: path, contents: Data("keep me".utf8))
        #expect(throws: SocketSetupError.self) { try SocketFile.prepare(path) }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "keep me")
    }

    @Test func missingParentDirectoriesAreCreatedPrivate() throws {
        let path = directory + "/a/b/reel.sock"
        try SocketFile.prepare(path)
        var info = stat()
        #expect(stat(directory + "/a/b", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
    }
}

@Suite struct SystemdNotifierTests {
    @Test func readyIsSentAsADatagram() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("notify-\(UUID().uuidString)").path
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        SystemdNotifier(environment: ["NOTIFY_SOCKET": path]).ready()
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
        #expect(count > 0)
        #expect(String(decoding: buffer.prefix(max(count, 0)), as: UTF8.self).hasPrefix("READY=1"))
    }

    @Test func nothingHappensWithoutNotifySocket() {
        #expect(SystemdNotifier(environment: [:]).send("READY=1") == false)
    }
}

@Suite struct SystemDaemonDetectionTests {
    @Test func rootAndTheSystemUnitAreSystemDaemons() {
        #expect(SocketFile.isSystemDaemon(environment: [:], uid: 0))
        #expect(SocketFile.isSystemDaemon(environment: ["RUNTIME_DIRECTORY": "/run/reel"], uid: 61234))
    }

    @Test func aUsersDaemonIsNot() {
        #expect(!SocketFile.isSystemDaemon(environment: [:], uid: 1000))
        #expect(!SocketFile.isSystemDaemon(environment: ["RUNTIME_DIRECTORY": "/run/user/1000/reel"], uid: 1000))
    }

    @Test func userSocketIsPrivate() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mode-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: path, contents: nil)
        defer { unlink(path) }
        SocketFile.setPermissions(path, system: false)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }
}
