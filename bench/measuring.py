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
    (created). Stopped by its PID with `stop()` (SIGTERM, then SIGKILL after 10 s)."""

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

    def log_lines(self):
        with open(self.log, errors="replace") as f:
            return f.read().splitlines()

    def log_tail(self, lines=5):
        return " | ".join(self.log_lines()[-lines:])

    def stop(self):
        import subprocess
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def load_average():
    """The 1, 5 and 15 minute load averages, as `uptime` prints them."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
