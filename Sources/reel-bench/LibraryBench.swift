// reel-bench's commands for bench/library: laying out a large tree, and timing reeld's start.
//
//   reel-bench build-tree --data-dir DIR [--folders 1000] [--per-folder 100] [--batch 10000]
//       Lays out `Meeting 0000`… under the root, each with `take 0000-000`… (the folder's
//       number, then the recording's), through LibraryStore (rows in transactions of --batch
//       recordings) and an empty audio file per recording, so that reeld's start-up
//       reconciliation finds every file. DIR must not hold a library yet.
//       Prints `folders=… recordings=… files=… seconds=…`.
//   reel-bench start --socket PATH [--log FILE] [--pid-file FILE] [--timeout 30] -- REELD [ARGS…]
//       Spawns REELD ARGS (stdout and stderr to --log, else /dev/null), writes its pid to
//       --pid-file, and connects to PATH every millisecond until `daemon.info` answers there;
//       then stops it with SIGTERM and waits for it (SIGKILL after 10 s).
//       Prints `start_ms=… stop_ms=… pid=…`: from just before the exec to the reply, and from
//       SIGTERM to its exit. Exit 1 if reeld exits by itself, answers with an error or not in time.

#if canImport(Glibc)
import Glibc
#endif
import ReelLibrary
import ReelModel
import ReelProtocol
import ReelRuntime

// MARK: - build-tree

func buildTreeCommand(_ arguments: [String]) -> Never {
    var dataDir: String?
    var folders = 1000
    var perFolder = 100
    var batch = 10_000
    var rest = arguments[...]
    while let flag = rest.popFirst() {
        guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
        func count() -> Int {
            guard let n = Int(value), n >= 1 else { fail("\(flag) must be a positive integer, not \(value)") }
            return n
        }
        switch flag {
        case "--data-dir": dataDir = value
        case "--folders": folders = count()
        case "--per-folder": perFolder = count()
        case "--batch": batch = count()
        default: fail("unknown flag \(flag) for build-tree (try --help)")
        }
    }
    guard let dataDir else { fail("build-tree needs --data-dir DIR") }
    guard access(dataDir + "/library.sqlite", F_OK) != 0 else {
        fail("\(dataDir) already holds a library; build-tree lays out a new one only")
    }
    let folderWidth = max(4, String(folders - 1).count)
    let takeWidth = max(3, String(perFolder - 1).count)
    func padded(_ n: Int, _ width: Int) -> String {
        let digits = String(n)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }

    let started = Int(monotonicNanoseconds())
    let store: LibraryStore
    let folderItems: [Item]
    do {
        store = try LibraryStore(directory: dataDir)
        folderItems = try store.createFolders(names: (0..<folders).map { "Meeting \(padded($0, folderWidth))" })
    } catch {
        fail("cannot lay out the folders in \(dataDir): \(error)", code: 1)
    }
    let format = AudioFormat(codec: "flac", sampleRate: 48000, channels: 1)
    let ext = LibraryStore.fileExtension(forCodec: format.codec)
    // The audio file's path is `<audio directory>/<id>.<ext>` (LibraryStore's documented layout),
    // checked against audioPath(for:) on the first recording; if it differs, asked for each.
    var layoutChecked = false
    var layoutHolds = false
    var recordings = 0
    var files = 0
    var pending: [NewRecording] = []
    pending.reserveCapacity(batch)

    func createEmptyFile(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { fail("cannot create \(path): \(String(cString: strerror(errno)))", code: 1) }
        close(fd)
        files += 1
    }
    func flush() {
        guard !pending.isEmpty else { return }
        let items: [Item]
        do { items = try store.insertRecordings(pending) } catch {
            fail("cannot add \(pending.count) recordings: \(error)", code: 1)
        }
        pending.removeAll(keepingCapacity: true)
        recordings += items.count
        for item in items {
            let derived = "\(store.audioDirectory)/\(item.id).\(ext)"
            if !layoutChecked {
                layoutChecked = true
                do { layoutHolds = try store.audioPath(for: item) == derived } catch {
                    fail("cannot find the audio path of \(item.path): \(error)", code: 1)
                }
            }
            if layoutHolds {
                createEmptyFile(derived)
            } else {
                do { createEmptyFile(try store.audioPath(for: item)) } catch {
                    fail("cannot find the audio path of \(item.path): \(error)", code: 1)
                }
            }
        }
    }
    for (f, folder) in folderItems.enumerated() {
        for r in 0..<perFolder {
            pending.append(
                NewRecording(
                    parent: folder.id, name: "take \(padded(f, folderWidth))-\(padded(r, takeWidth))", format: format,
                    duration: 60, size: 0, created: nil))
            if pending.count == batch { flush() }
        }
    }
    flush()
    let seconds = Double(Int(monotonicNanoseconds()) - started) / 1e9
    printLine("folders=\(folderItems.count) recordings=\(recordings) files=\(files) seconds=\(fixed(seconds, 2))")
    exit(0)
}

// MARK: - start

func startCommand(_ arguments: [String]) -> Never {
    var socketPath: String?
    var logPath = "/dev/null"
    var pidFile: String?
    var timeout = 30.0
    var rest = arguments[...]
    var command: [String] = []
    while let flag = rest.popFirst() {
        if flag == "--" {
            command = Array(rest)
            break
        }
        guard let value = rest.popFirst() else { fail("\(flag) needs a value") }
        switch flag {
        case "--socket": socketPath = value
        case "--log": logPath = value
        case "--pid-file": pidFile = value
        case "--timeout":
            guard let t = Double(value), t > 0 else { fail("--timeout must be a positive number of seconds") }
            timeout = t
        default: fail("unknown flag \(flag) for start (try --help)")
        }
    }
    guard let socketPath else { fail("start needs --socket PATH") }
    guard let executable = command.first else { fail("start needs -- REELD [ARGS…]") }

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    let argv: [UnsafeMutablePointer<CChar>?] = command.map { strdup($0) } + [nil]
    var pid: pid_t = 0

    let started = Int(monotonicNanoseconds())
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, environ)
    guard spawned == 0 else { fail("cannot start \(executable): \(String(cString: strerror(spawned)))", code: 1) }
    if let pidFile {
        let fd = open(pidFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        if fd >= 0 {
            let text = Array("\(pid)\n".utf8)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    let request = RPCRequest(id: .int(1), method: "daemon.info", params: [:]).encodedLine()
    let deadline = started + Int(timeout * 1e9)
    var answered = 0
    while answered == 0 {
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            fail("\(executable) exited before it answered (wait status \(status)); see \(logPath)", code: 1)
        }
        if Int(monotonicNanoseconds()) > deadline {
            stopChild(pid)
            fail("no daemon.info reply on \(socketPath) within \(timeout) s", code: 1)
        }
        let fd = connectUnix(socketPath)
        if fd < 0 {
            var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
            nanosleep(&pause, nil)
            continue
        }
        defer { close(fd) }
        guard sendAll(fd, request), let line = readReplyLine(fd) else { continue }
        let message: RPCMessage
        do { message = try RPCMessage(line: line) } catch {
            stopChild(pid)
            fail("unreadable daemon.info reply: \(error)", code: 1)
        }
        guard case .response(_, let result) = message else { continue }
        if case .failure(let error) = result {
            stopChild(pid)
            fail("daemon.info failed: \(error)", code: 1)
        }
        answered = Int(monotonicNanoseconds())
    }
    let stopping = Int(monotonicNanoseconds())
    let status = stopChild(pid)
    let stopped = Int(monotonicNanoseconds())
    if status != 0 { printError("\(executable) exited with wait status \(status) after SIGTERM; see \(logPath)") }
    printLine(
        "start_ms=\(fixed(Double(answered - started) / 1e6, 1)) stop_ms=\(fixed(Double(stopped - stopping) / 1e6, 1)) pid=\(pid)")
    exit(status == 0 ? 0 : 1)
}

/// SIGTERM, then SIGKILL after 10 s; returns the wait status.
@discardableResult
func stopChild(_ pid: pid_t) -> Int32 {
    kill(pid, SIGTERM)
    let deadline = Int(monotonicNanoseconds()) + 10_000_000_000
    var status: Int32 = 0
    while waitpid(pid, &status, WNOHANG) == 0 {
        if Int(monotonicNanoseconds()) > deadline {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            break
        }
        var pause = timespec(tv_sec: 0, tv_nsec: 1_000_000)
        nanosleep(&pause, nil)
    }
    return status
}

/// A connected AF_UNIX stream socket with a 5 s receive timeout, or -1.
func connectUnix(_ path: String) -> Int32 {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { return -1 }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(path.utf8)
    guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
        fail("socket path too long: \(path)")
    }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: pathBytes)
        raw[pathBytes.count] = 0
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
        }
    }
    guard result == 0 else {
        close(fd)
        return -1
    }
    var timeout = timeval(tv_sec: 5, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    return fd
}

func sendAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = send(fd, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            if n < 0 {
                if errno == EINTR { continue }
                return false
            }
            offset += n
        }
        return true
    }
}

/// The first line received (without `\n`), or nil on EOF, error or timeout.
func readReplyLine(_ fd: Int32) -> [UInt8]? {
    var line: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 && errno == EINTR { continue }
        if n <= 0 { return nil }
        if let newline = chunk[0..<n].firstIndex(of: 0x0A) {
            line.append(contentsOf: chunk[0..<newline])
            return line
        }
        line.append(contentsOf: chunk[0..<n])
    }
}

// MARK: - Helpers

/// `value` with `digits` decimals, without Foundation.
func fixed(_ value: Double, _ digits: Int) -> String {
    var scale = 1.0
    for _ in 0..<digits { scale *= 10 }
    let scaled = Int((value * scale).rounded())
    let whole = scaled / Int(scale)
    guard digits > 0 else { return String(whole) }
    let fraction = String(scaled % Int(scale))
    return "\(whole)." + String(repeating: "0", count: digits - fraction.count) + fraction
}

func printError(_ text: String) {
    let line = Array("reel-bench: \(text)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}
