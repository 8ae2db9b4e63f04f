import Foundation
import Glibc
import ReelProtocol
import Testing

/// The world failing under a running daemon: the database locked by another program, its
/// filesystem turned read-only. Each gives a clear error, keeps what it had, and works again
/// once the cause is gone. (Device faults are injected at the engine layer: PlaybackEngineTests,
/// CaptureEngineTests.)
@Suite(.serialized) struct FaultTests {
    @Test func aDatabaseLockedByAnotherProgramIsAnIOErrorUntilItIsReleased() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.client()
        _ = try client.result("library.createFolder", ["name": "before"])
        // Another program holds the write lock for 7 s (the daemon waits 5 s for a lock).
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        locker.arguments = [
            "python3", "-c",
            "import sqlite3,sys,time; c=sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(7)",
            daemon.directory.path + "/data/library.sqlite",
        ]
        let out = Pipe()
        locker.standardOutput = out
        try locker.run()
        _ = out.fileHandleForReading.availableData  // "locked"
        // Reads go on.
        #expect(try client.result("library.list")["items"]?.arrayValue?.count == 1)
        guard case .failure(let error) = try client.call("library.createFolder", ["name": "during"], timeout: 15) else {
            Issue.record("a write succeeded while the database was locked")
            return
        }
        #expect(error.data?["reason"] == .string("io_error"), "\(error)")
        #expect(error.message.contains("locked"), "\(error.message)")
        locker.waitUntilExit()
        _ = try client.result("library.createFolder", ["name": "after"])
        #expect(try client.result("library.list")["items"]?.arrayValue?.count == 2)
    }

    @Test(.enabled(if: getuid() == 0, "mounting a filesystem needs root (CI runs as root)"))
    func aDataDirectoryOnAReadOnlyFilesystemIsAClearErrorNotACrash() throws {
        let scratch = try DaemonProcess()
        let dataDir = scratch.directory.path + "/ro-data"
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        let mount = try AudioAnalysis.run("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dataDir])
        try #require(mount.status == 0, "cannot mount a tmpfs: \(mount.output)")
        defer { _ = try? AudioAnalysis.run("umount", ["-l", dataDir]) }
        // A library made on it, then the filesystem turns read-only (a failing SD card does this).
        let first = try DaemonProcess(arguments: ["--data-dir", dataDir])
        _ = try first.client().result("library.createFolder", ["name": "kept"])
        #expect(first.stop() == 0)
        let remount = try AudioAnalysis.run("mount", ["-o", "remount,ro", dataDir])
        try #require(remount.status == 0, "cannot remount read-only: \(remount.output)")
        do {
            _ = try DaemonProcess(arguments: ["--data-dir", dataDir])
            Issue.record("reeld started on a read-only data directory")
        } catch {
            // It exits with a message naming the database; no crash, and the library is intact.
            #expect("\(error)".contains(dataDir), "\(error)")
            #expect("\(error)".contains("writable"), "\(error)")
        }
        _ = try AudioAnalysis.run("mount", ["-o", "remount,rw", dataDir])
        let again = try DaemonProcess(arguments: ["--data-dir", dataDir])
        #expect(try again.client().result("library.list")["items"]?.arrayValue?.count == 1)
    }
}
