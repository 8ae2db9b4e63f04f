import Testing
@testable import ReelProtocol

@Suite("Socket path")
struct SocketPathTests {
    @Test func explicitReelSocketWinsOverEverything() {
        let environment = ["REEL_SOCKET": "/x/y.sock", "RUNTIME_DIRECTORY": "/run/reel", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(SocketPath.defaultPath(environment: environment, uid: 0, forDaemon: true) == "/x/y.sock")
        #expect(SocketPath.defaultPath(environment: environment, uid: 1000) == "/x/y.sock")
    }

    @Test func emptyReelSocketIsIgnored() {
        #expect(SocketPath.defaultPath(environment: ["REEL_SOCKET": "", "XDG_RUNTIME_DIR": "/run/user/1000"], uid: 1000)
            == "/run/user/1000/reel/reel.sock")
    }

    @Test func daemonUsesSystemdRuntimeDirectory() {
        let environment = ["RUNTIME_DIRECTORY": "/run/reel", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(SocketPath.defaultPath(environment: environment, uid: 998, forDaemon: true) == "/run/reel/reel.sock")
        #expect(SocketPath.defaultPath(environment: ["RUNTIME_DIRECTORY": "/run/a/:/run/b"], uid: 5, forDaemon: true) == "/run/a/reel.sock")
    }

    @Test func clientIgnoresRuntimeDirectory() {
        let environment = ["RUNTIME_DIRECTORY": "/run/reel", "XDG_RUNTIME_DIR": "/run/user/1000"]
        #expect(SocketPath.defaultPath(environment: environment, uid: 1000) == "/run/user/1000/reel/reel.sock")
        #expect(SocketPath.defaultPath(environment: ["RUNTIME_DIRECTORY": "/run/reel"], uid: 1000) == "/tmp/reel-1000/reel.sock")
    }

    @Test func xdgRuntimeDirComesNext() {
        #expect(SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/1000/"], uid: 1000) == "/run/user/1000/reel/reel.sock")
        #expect(SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": "/run/user/0"], uid: 0) == "/run/user/0/reel/reel.sock")
        #expect(SocketPath.defaultPath(environment: ["XDG_RUNTIME_DIR": ""], uid: 1000) == "/tmp/reel-1000/reel.sock")
    }

    @Test func rootWithoutEnvironmentUsesRun() {
        #expect(SocketPath.defaultPath(environment: [:], uid: 0) == "/run/reel/reel.sock")
        #expect(SocketPath.defaultPath(environment: [:], uid: 0, forDaemon: true) == "/run/reel/reel.sock")
    }

    @Test func otherUsersWithoutEnvironmentUseTmp() {
        #expect(SocketPath.defaultPath(environment: [:], uid: 1000) == "/tmp/reel-1000/reel.sock")
    }
}
