// A cgroup of a test's own under the cgroup v1 `cpu` controller: a CPU quota for the processes
// put into it, a slower machine as testing.md describes it ("A slower machine").

import Foundation
import Glibc

final class CPUQuotaGroup {
    static let root = "/sys/fs/cgroup/cpu"

    /// Why no group can be made here; nil when one can: the cgroup v1 `cpu` controller, writable
    /// (root), with real-time group scheduling (`cpu.rt_runtime_us`, without which a SCHED_FIFO
    /// thread cannot join a group).
    static let unavailable: String? = {
        for file in ["cpu.cfs_quota_us", "cpu.rt_runtime_us", "cgroup.procs"]
        where !FileManager.default.fileExists(atPath: "\(root)/\(file)") {
            return "no \(root)/\(file): this machine has no cgroup v1 cpu controller with real-time group scheduling"
        }
        if access("\(root)/cgroup.procs", W_OK) != 0 { return "\(root) is not writable (root is needed)" }
        return nil
    }()

    let path: String
    private var removed = false

    /// A new group: its processes' ordinary threads get `quota` µs of CPU per `period` µs
    /// (`cpu.cfs_quota_us`), their real-time threads `realtime` µs per `period` µs
    /// (`cpu.rt_runtime_us`; with 0, a thread that asks for SCHED_FIFO is refused and stays an
    /// ordinary thread, inside the quota).
    init(quota: Int, realtime: Int, period: Int = 100_000) throws {
        path = "\(Self.root)/reel-test-\(UUID().uuidString.prefix(8).lowercased())"
        guard mkdir(path, 0o755) == 0 else { throw TestFailure("cannot make \(path): \(String(cString: strerror(errno)))") }
        do {
            try write("cpu.cfs_period_us", period)
            try write("cpu.cfs_quota_us", quota)
            // The period first: the runtime may not exceed it.
            try write("cpu.rt_period_us", period)
            try write("cpu.rt_runtime_us", realtime)
        } catch {
            remove()
            throw error
        }
    }

    deinit { remove() }

    private func write(_ file: String, _ value: Int) throws {
        let target = "\(path)/\(file)"
        let descriptor = open(target, O_WRONLY)
        guard descriptor >= 0 else { throw TestFailure("cannot open \(target): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let text = Array("\(value)\n".utf8)
        guard Glibc.write(descriptor, text, text.count) == text.count else {
            throw TestFailure("cannot write \(value) to \(target): \(String(cString: strerror(errno)))")
        }
    }

    /// A prefix for a command (`DaemonProcess`'s `wrapper`): the shell moves itself into the group,
    /// then execs the command, which so runs in it from its first instruction with the same PID.
    var wrapper: [String] { ["/bin/sh", "-c", "echo $$ > \"$0\" && exec \"$@\"", "\(path)/cgroup.procs"] }

    /// Whether process `pid` is in the group.
    func holds(_ pid: Int32) -> Bool {
        let procs = (try? String(contentsOfFile: "\(path)/cgroup.procs", encoding: .utf8)) ?? ""
        return procs.split(separator: "\n").contains { Int32($0) == pid }
    }

    /// `cpu.stat`: `nr_periods` (periods in which the group's processes ran), `nr_throttled`
    /// (those in which the quota ran out), `throttled_time` (ns).
    func stat() -> [String: Int] {
        let text = (try? String(contentsOfFile: "\(path)/cpu.stat", encoding: .utf8)) ?? ""
        var values: [String: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let value = Int(fields[1]) { values[String(fields[0])] = value }
        }
        return values
    }

    /// Removes the group; its processes must have ended (a group that still holds one stays).
    func remove() {
        guard !removed else { return }
        removed = rmdir(path) == 0
    }
}
