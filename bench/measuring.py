"""Helpers shared by the Python halves of the benchmarks in bench/ (imported, not run)."""


def percentile(values, p):
    """Nearest rank: the smallest value with at least p % of them at or below it."""
    ordered = sorted(values)
    return ordered[max(0, -(-len(ordered) * p // 100) - 1)]


def options(argv, names, fail):
    """`--name value` pairs, every one of `names` required; `fail(message)` on anything else."""
    values = {}
    while argv:
        flag = argv.pop(0)
        if not flag.startswith("--") or flag[2:] not in names or not argv:
            fail(f"bad argument {flag}")
        values[flag[2:]] = argv.pop(0)
    missing = [n for n in names if n not in values]
    if missing:
        fail("missing --" + ", --".join(missing))
    return values


class RPC:
    """JSON-RPC 2.0 over reeld's Unix socket, one request at a time; pushes are skipped."""

    def __init__(self, path, timeout=30):
        import socket
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1

    def call(self, method, params=None):
        """The result; RuntimeError with the method and the error's message on an error reply."""
        import json
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        self.sock.sendall(json.dumps(request, separators=(",", ":")).encode() + b"\n")
        while True:
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(1 << 20)
                if not chunk:
                    raise RuntimeError(f"reeld closed the connection during {method}")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") != request["id"]:
                continue
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error'].get('message')}")
            return message["result"]

    def close(self):
        self.sock.close()


class Reeld:
    """One reeld with its own socket, data directory, empty config file and log, in `directory`
    (created). Stopped by its PID with `stop()` (SIGTERM, then SIGKILL after 10 s).

    `binary` may be a wrapper (a script that runs reeld under a debugger, with an environment,
    …): `pid` is then the process that listens on the socket, reeld itself, not the wrapper
    (`daemon_pid`), so that what is measured of it (memory, CPU) is reeld's."""

    def __init__(self, binary, directory, device, log_level="info"):
        import os
        import subprocess
        import time
        os.makedirs(directory, exist_ok=True)
        self.socket = os.path.join(directory, "reel.sock")
        self.log = os.path.join(directory, "reeld.log")
        config = os.path.join(directory, "empty.toml")
        open(config, "w").close()
        self.process = subprocess.Popen(
            [binary, "--config", config, "--socket", self.socket, "--data-dir", os.path.join(directory, "data"),
             "--device", device, "--log-level", log_level],
            stdin=subprocess.DEVNULL, stdout=open(self.log, "ab"), stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        deadline = time.monotonic() + 30
        while True:
            try:
                self.rpc = RPC(self.socket)
                break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"reeld did not start: {self.log_tail()}")
                time.sleep(0.05)
        self.pid = daemon_pid(self.process.pid, self.socket)

    def log_lines(self):
        with open(self.log, errors="replace") as f:
            return f.read().splitlines()

    def log_tail(self, lines=5):
        return " | ".join(self.log_lines()[-lines:])

    def stop(self):
        import os
        import signal
        import subprocess
        import time
        if self.pid != self.process.pid and self.process.poll() is None:
            # reeld under a wrapper: reeld first (a shell does not pass SIGTERM on to its child).
            try:
                os.kill(self.pid, signal.SIGTERM)
                deadline = time.monotonic() + 10
                while os.path.exists(f"/proc/{self.pid}") and time.monotonic() < deadline:
                    time.sleep(0.05)
                if os.path.exists(f"/proc/{self.pid}"):
                    os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def daemon_pid(pid, socket_path):
    """Of `pid` and the processes it started (and theirs), the one listening on the Unix socket
    `socket_path`; `pid` when none is found. A wrapper around reeld has no descriptor of the
    socket, reeld has."""
    import os
    inodes = set()
    try:
        with open("/proc/net/unix") as f:
            next(f)
            for line in f:
                fields = line.split()
                # Num RefCount Protocol Flags Type St Inode Path; Flags 00010000: listening.
                if len(fields) >= 8 and fields[7] == socket_path and int(fields[3], 16) & 0x10000:
                    inodes.add(f"socket:[{fields[6]}]")
    except OSError:
        return pid
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    tree, k = [pid], 0
    while k < len(tree):
        tree += children.get(tree[k], [])
        k += 1
    for candidate in tree:
        try:
            for fd in os.listdir(f"/proc/{candidate}/fd"):
                if os.readlink(f"/proc/{candidate}/fd/{fd}") in inodes:
                    return candidate
        except OSError:
            continue
    return pid


def load_average():
    """The 1, 5 and 15 minute load averages, as `uptime` prints them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def stop_process(process, timeout=20):
    """SIGTERM, then SIGKILL after `timeout` seconds; waits for the end."""
    import subprocess
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(predicate, seconds, what, fail, interval=0.01):
    """`predicate()`'s first true value within `seconds`; else `fail("timed out waiting for …")`."""
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    fail(f"timed out waiting for {what}")


class MPDClient:
    """One MPD-protocol connection over a Unix socket, one request at a time. A reply is read
    whole (to its `OK` or `ACK` line) and then split into lines once, so that the client's own
    cost stays linear in the reply's size and small beside the server's (splitting the buffer
    line by line, copying the rest each time, cost more than the servers for a 10,000-song
    `listplaylistinfo`). `fail(message)` is called on an `ACK` where a command must succeed
    (`ok`, `timed`); without it a RuntimeError is raised."""

    def __init__(self, path, timeout=300, fail=None):
        import socket
        self.fail = fail
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        greeting = self._reply(lambda data: data.endswith(b"\n"))
        if not greeting.startswith(b"OK MPD"):
            raise RuntimeError(f"not an MPD greeting: {greeting[:80]!r}")

    def _reply(self, complete):
        """The bytes received until `complete(all so far)` holds (checked at each line's end;
        it looks at the last line only)."""
        data = bytearray()
        while True:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("the connection closed")
            data += chunk
            if chunk.endswith(b"\n") and complete(data):
                return bytes(data)

    @staticmethod
    def _ended(data):
        """Whether `data` ends with a reply's last line (`OK`, or `ACK …`: a field line is
        `Key: value`, so neither can be one)."""
        last = data.rfind(b"\n", 0, len(data) - 1) + 1
        return data[last:] == b"OK\n" or data.startswith(b"ACK ", last)

    def _failed(self, message):
        if self.fail:
            self.fail(message)
        raise RuntimeError(message)

    def command(self, line):
        """(lines of the reply, None) or (lines so far, the ACK line)."""
        self.sock.sendall(line.encode() + b"\n")
        lines = self._reply(self._ended).split(b"\n")[:-1]
        if lines[-1] == b"OK":
            return lines[:-1], None
        return lines[:-1], lines[-1].decode(errors="replace")

    def ok(self, line):
        """The reply's lines; an ACK fails."""
        lines, ack = self.command(line)
        if ack:
            self._failed(f"{line}: {ack}")
        return lines

    def timed(self, line):
        """(ms from the request to the reply's last byte, its lines); an ACK fails."""
        import time
        started = time.perf_counter_ns()
        self.sock.sendall(line.encode() + b"\n")
        data = self._reply(self._ended)
        ms = (time.perf_counter_ns() - started) / 1e6
        lines = data.split(b"\n")[:-1]
        if lines[-1] != b"OK":
            self._failed(f"{line}: {lines[-1].decode(errors='replace')}")
        return ms, lines[:-1]

    def close(self):
        self.sock.close()


def write_mpd_config(directory, music, playlists, socket_path, db=None):
    """An mpd.conf in `directory` for a peer MPD on `socket_path`: the music and playlist
    directories given, a null audio output, no zeroconf, no automatic update. Its path."""
    import os
    conf = os.path.join(directory, "mpd.conf")
    with open(conf, "w") as f:
        f.write("\n".join([
            f'music_directory "{music}"', f'db_file "{db or os.path.join(directory, "db")}"',
            f'state_file "{directory}/state"', f'playlist_directory "{playlists}"', f'log_file "{directory}/log"',
            f'bind_to_address "{socket_path}"', 'zeroconf_enabled "no"', 'auto_update "no"', 'log_level "warning"',
            'audio_output {\n  type "null"\n  name "null"\n}', ""]))
    return conf


def start_mpd(conf, directory):
    """Debian's mpd in the foreground on `conf`, its output appended to `directory`/stderr."""
    import os
    import subprocess
    return subprocess.Popen(["mpd", "--no-daemon", conf], stdin=subprocess.DEVNULL,
                            stdout=open(os.path.join(directory, "stderr"), "ab"), stderr=subprocess.STDOUT)
