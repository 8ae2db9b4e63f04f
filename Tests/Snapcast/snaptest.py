"""Helpers for the Snapcast plugin's tests: test tones, a private reeld, a private snapserver
whose stream is controlled by reel-snapcast, and JSON-RPC clients for both.

Every wait is a poll against a deadline (DEADLINE seconds, generous): nothing depends on how
fast the machine is. Only the processes started here are stopped, by their pid.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "PythonSupport"))
from testkit import build_dir, free_port, stop_process, waiter  # noqa: E402

DEADLINE = float(os.environ.get("REEL_SNAPCAST_TEST_DEADLINE", "10"))




wait_for = waiter(DEADLINE, interval=0.02)



def make_tone(path: Path, seconds: int, freq: int) -> Path:
    """A tone of 2 s then silence, `seconds` long in all (small as FLAC), 48 kHz stereo."""
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "2", "-b", "16", str(path),
                    "synth", "2", "sine", str(freq), "vol", "0.5", "pad", "0", str(seconds - 2)], check=True)
    return path


class RPCError(Exception):
    def __init__(self, error: dict):
        super().__init__(f"{error.get('message')} ({error.get('code')})")
        self.error = error


class LineClient:
    """Newline-delimited JSON-RPC over a stream socket: replies matched by id, notifications
    kept in order. Every read is bounded by a deadline."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.buf = b""
        self.next_id = 1
        self.notifications: list[dict] = []

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send_line(self, text: str):
        self.sock.sendall(text.encode() + b"\n")

    def read_message(self, end: float) -> dict | None:
        """The next message before `end` (TimeoutError after), None when the peer closed."""
        while b"\n" not in self.buf:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no message before the deadline")
            self.sock.settimeout(remaining)
            try:
                data = self.sock.recv(1 << 16)
            except socket.timeout:
                raise TimeoutError("no message before the deadline") from None
            except ConnectionResetError:
                data = b""
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        if not line.strip():
            return self.read_message(end)
        return json.loads(line)

    def reply(self, id, timeout=DEADLINE) -> dict:
        """The whole reply to `id`; notifications read meanwhile are kept."""
        end = time.monotonic() + timeout
        while True:
            message = self.read_message(end)
            if message is None:
                raise ConnectionError("the connection was closed before the reply")
            if "id" in message and "method" not in message:
                if message["id"] == id:
                    return message
                continue
            self.notifications.append(message)

    def call_raw(self, method: str, params: dict | None = None, timeout=DEADLINE) -> dict:
        id = self.next_id
        self.next_id += 1
        request = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            request["params"] = params
        self.send_line(json.dumps(request))
        return self.reply(id, timeout)

    def call(self, method: str, params: dict | None = None, timeout=DEADLINE):
        reply = self.call_raw(method, params, timeout)
        if "error" in reply:
            raise RPCError(reply["error"])
        return reply["result"]

    def wait_notification(self, predicate, timeout=DEADLINE, what="a notification"):
        """The first notification (kept or new) for which `predicate` is true; it and those
        before it are taken."""
        end = time.monotonic() + timeout
        seen = []
        while True:
            while self.notifications:
                message = self.notifications.pop(0)
                seen.append(message)
                if predicate(message):
                    return message
            try:
                message = self.read_message(end)
            except TimeoutError:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}; saw {seen[-5:]!r}") from None
            if message is None:
                raise AssertionError(f"the connection closed while waiting for {what}")
            if "method" in message:
                self.notifications.append(message)

    def drain(self):
        """Forgets the notifications kept so far."""
        self.notifications = []


# ---------------------------------------------------------------------------------------------
# reeld

class Reeld:
    """A private reeld: its own socket and data directory, no MPD or HTTP listener; `config`
    is the text of its reeld.toml (outputs), none by default."""

    def __init__(self, workdir: Path, config: str | None = None):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.socket = self.dir / "reel.sock"
        self.log = self.dir / "reeld.log"
        self.config = config
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Reeld":
        # A paced device: PulseAudio's null sink when PULSE_SERVER is set (scripts/test-snapcast
        # sees to it), else ALSA's null device, which plays at CPU speed.
        device = os.environ.get("REEL_SNAPCAST_DEVICE", "pulse" if os.environ.get("PULSE_SERVER") else "null")
        args = [str(build_dir() / "reeld"), "--socket", str(self.socket), "--data-dir", str(self.dir / "data"),
                "--device", device, "--mpd-listen", "none", "--http-listen", "none"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("REEL_")}
        env["REEL_CONFIG"] = "/dev/null"
        if self.config is not None:
            (self.dir / "reeld.toml").write_text(self.config)
            args += ["--config", str(self.dir / "reeld.toml")]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(self._answers, what=f"reeld to answer on {self.socket}; log:\n{self.tail_log()}")
        return self

    def _answers(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"reeld exited with {self.proc.returncode}; log:\n{self.tail_log()}")
        try:
            with self.client(timeout=2) as c:
                return c.call("daemon.info")
        except (OSError, TimeoutError, ConnectionError):
            return False

    def client(self, timeout=DEADLINE) -> LineClient:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(self.socket))
        except OSError as error:
            sock.close()
            status = None if self.proc is None else self.proc.poll()
            raise ConnectionError(f"cannot connect to reeld at {self.socket} ({error}); reeld's exit status: "
                                  f"{status}; its log:\n{self.tail_log()}") from error
        return LineClient(sock)

    def call(self, method: str, params: dict | None = None):
        with self.client() as c:
            return c.call(method, params)

    def reel(self, *args) -> subprocess.CompletedProcess:
        """Runs the reel CLI against this daemon."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("REEL_")}
        p = subprocess.run([str(build_dir() / "reel"), "--socket", str(self.socket), *args], env=env,
                           capture_output=True, text=True, timeout=DEADLINE)
        assert p.returncode == 0, f"reel {' '.join(args)} exited {p.returncode}: {p.stderr}{p.stdout}"
        return p

    def tail_log(self, n=30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        """Stops the process this object started, by its pid."""
        stop_process(self.proc)


# ---------------------------------------------------------------------------------------------
# snapserver

STREAM = "Reel"


class Snapserver:
    """Debian's snapserver with a private config: private ports, no HTTP, a private data
    directory, and one pipe stream whose controlscript is the reel-snapcast just built."""

    def __init__(self, workdir: Path, reeld_socket: Path, fifo: Path | None = None, buffer_ms: int = 1000):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.reeld_socket = reeld_socket
        self.fifo = fifo or self.dir / "fifo"
        self.buffer_ms = buffer_ms
        self.tcp_port = free_port()
        self.stream_port = free_port()
        self.log = self.dir / "snapserver.log"
        self.proc: subprocess.Popen | None = None
        self.plugin = build_dir() / "reel-snapcast"

    def config(self) -> str:
        # snapserver 0.26 passes the controlscript only "--stream=<id>" (and --snapcast-port
        # with HTTP on): it has no controlscriptparams, so the socket reaches the plugin as
        # REEL_SOCKET in snapserver's environment. 0.27 and later also pass
        # controlscriptparams (URI-decoded, then split on spaces): given here for them.
        source = (f"pipe://{self.fifo}?name={STREAM}&sampleformat=48000:16:2&codec=pcm"
                  f"&controlscript={self.plugin}&controlscriptparams=--socket={self.reeld_socket}")
        return "\n".join([
            "[server]", f"datadir = {self.dir / 'data'}", "",
            "[http]", "enabled = false", "",
            "[tcp]", "enabled = true", "bind_to_address = 127.0.0.1", f"port = {self.tcp_port}", "",
            "[stream]", "bind_to_address = 127.0.0.1", f"port = {self.stream_port}", f"source = {source}",
            f"buffer = {self.buffer_ms}", "",
            "[logging]", "sink = stderr", "filter = *:debug", "",
        ])

    def start(self) -> "Snapserver":
        (self.dir / "data").mkdir(exist_ok=True)
        conf = self.dir / "snapserver.conf"
        conf.write_text(self.config())
        env = {k: v for k, v in os.environ.items() if not k.startswith("REEL_")}
        env["REEL_SOCKET"] = str(self.reeld_socket)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(["snapserver", "-c", str(conf)], env=env, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=self.dir)
        wait_for(self._answers, what=f"snapserver to answer on port {self.tcp_port}; log:\n{self.tail_log()}")
        return self

    def _answers(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"snapserver exited with {self.proc.returncode}; log:\n{self.tail_log()}")
        try:
            with self.client(timeout=2) as c:
                return c.call("Server.GetRPCVersion")
        except (OSError, TimeoutError, ConnectionError):
            return False

    def client(self, timeout=DEADLINE) -> LineClient:
        return LineClient(socket.create_connection(("127.0.0.1", self.tcp_port), timeout=timeout))

    def stream(self, client: LineClient) -> dict:
        status = client.call("Server.GetStatus")
        return next(s for s in status["server"]["streams"] if s["id"] == STREAM)

    def properties(self, client: LineClient) -> dict:
        return self.stream(client).get("properties", {})

    def plugin_pids(self) -> list[int]:
        """The reel-snapcast processes snapserver started (its children running the plugin)."""
        pids = []
        for task in Path(f"/proc/{self.proc.pid}/task").iterdir():
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for pid in children:
                try:
                    exe = os.readlink(f"/proc/{pid}/exe")
                except OSError:
                    continue
                if exe == str(self.plugin.resolve()):
                    pids.append(int(pid))
        return pids

    def tail_log(self, n=40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        """Stops the process this object started, by its pid."""
        stop_process(self.proc)

    def kill(self):
        """Kills it at once (SIGKILL), as a crash would; its plugin sees its stdin close."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE)


# ---------------------------------------------------------------------------------------------
# snapclient

class Snapclient:
    """Debian's snapclient playing to a file (`--player file`): what a room would hear, as raw
    48000:16:2 PCM, 50 ms written every 50 ms, silence while nothing comes."""

    def __init__(self, workdir: Path, server: Snapserver, name: str = "room"):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.server = server
        self.output = self.dir / f"{name}.raw"
        self.log = self.dir / f"{name}.log"
        self.name = name
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Snapclient":
        args = ["snapclient", "-h", "127.0.0.1", "-p", str(self.server.stream_port), "--hostID", self.name,
                "--player", f"file:filename={self.output}"]
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        wait_for(lambda: self.output.exists() and self.output.stat().st_size > 0,
                 what=f"snapclient to write {self.output}; log:\n{self.tail_log()}")
        return self

    def samples(self) -> "array.array":
        """Everything received so far, left channel, as 16-bit samples."""
        import array
        data = self.output.read_bytes()
        data = data[: len(data) // 4 * 4]
        both = array.array("h", data)
        return both[0::2]

    def tail_log(self, n=20) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        """Stops the process this object started, by its pid."""
        stop_process(self.proc)



def fifo_queued(path: Path) -> int:
    """Bytes waiting in the FIFO at `path` (FIONREAD through a read end opened for the purpose)."""
    import fcntl
    import struct
    import termios
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(fd)


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie is gone for our purpose: it has exited.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


def on_properties(predicate):
    """A predicate over notifications: Stream.OnProperties for the Reel stream whose
    properties satisfy `predicate`."""
    def matches(message):
        if message.get("method") != "Stream.OnProperties":
            return False
        params = message.get("params", {})
        return params.get("id") == STREAM and predicate(params.get("properties", {}))
    return matches
