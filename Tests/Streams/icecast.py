"""A private Icecast 2 on loopback, fed by ffmpeg, for the stream tests (issue 26).

Importable from any test (put Tests/Streams on sys.path):

    from icecast import Icecast
    with Icecast(workdir) as ice:                      # Debian's icecast2 on a free 127.0.0.1 port
        mount = ice.feed("/live.mp3", codec="mp3")     # ffmpeg as a source client: a known tone
        ice.feed("/live.aac", codec="aac")             # AAC in ADTS
        ice.wait_for_mount("/live.mp3")
        url = ice.url("/live.mp3")                     # http://127.0.0.1:PORT/live.mp3
        ice.set_title("/live.mp3", "Artist - Song")    # the admin metadata URL: StreamTitle on air
        headers, metaint, titles = ice.listen("/live.mp3", seconds=2)   # a raw ICY listener

Everything is private: a config written to the work directory (chroot off; as root Icecast must
change its owner, so it runs as `nobody`, with a log directory that user can reach and write: a
fresh one under /tmp, since pytest's own temporary directories are private to root), a free port
on 127.0.0.1, no system service touched. `stop()` (or leaving the `with`) ends only the
processes this object started. Icecast answers a listener `Icy-MetaData: 1` with
`icy-metaint: 16000` and puts the station's name (ffmpeg's `-ice_name`) in `icy-name`.
"""

from __future__ import annotations

import base64
import os
import shutil
import socket
import tempfile
import subprocess
import time
import urllib.parse
import urllib.request
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "PythonSupport"))
from testkit import free_port, stop_process, waiter  # noqa: E402

DEADLINE = float(os.environ.get("REEL_STREAM_TEST_DEADLINE", "20"))

SOURCE_PASSWORD = "reel-source"
ADMIN_USER = "admin"
ADMIN_PASSWORD = "reel-admin"

# The tone every mount plays: 440 Hz on the left, 660 Hz on the right (a stream checker can find
# both frequencies in what it decodes).
SIGNAL = "sine=frequency=440:sample_rate=44100[l];sine=frequency=660:sample_rate=44100[r];[l][r]amerge=inputs=2"



wait_for = waiter(DEADLINE, interval=0.05)


class Icecast:
    def __init__(self, workdir: Path, port: int | None = None, name: str = "Reel Test FM"):
        self.dir = Path(workdir)
        self.port = port or free_port()
        self.name = name
        self.proc: subprocess.Popen | None = None
        self.logdir: Path | None = None
        self.sources: dict[str, subprocess.Popen] = {}

    # -- server ---------------------------------------------------------------------------------

    def config(self) -> str:
        owner = ""
        if os.geteuid() == 0:
            owner = "<changeowner><user>nobody</user><group>nogroup</group></changeowner>"
        return f"""<icecast>
  <location>loopback</location><admin>reel@localhost</admin>
  <limits><clients>100</clients><sources>10</sources><queue-size>524288</queue-size>
    <client-timeout>30</client-timeout><header-timeout>15</header-timeout><source-timeout>10</source-timeout>
    <burst-on-connect>1</burst-on-connect><burst-size>65535</burst-size></limits>
  <authentication><source-password>{SOURCE_PASSWORD}</source-password>
    <relay-password>{SOURCE_PASSWORD}</relay-password>
    <admin-user>{ADMIN_USER}</admin-user><admin-password>{ADMIN_PASSWORD}</admin-password></authentication>
  <hostname>127.0.0.1</hostname>
  <listen-socket><port>{self.port}</port><bind-address>127.0.0.1</bind-address></listen-socket>
  <fileserve>1</fileserve>
  <paths><basedir>/usr/share/icecast2</basedir><logdir>{self.logdir}</logdir>
    <webroot>/usr/share/icecast2/web</webroot><adminroot>/usr/share/icecast2/admin</adminroot>
    <pidfile>{self.dir / "icecast.pid"}</pidfile></paths>
  <logging><accesslog>access.log</accesslog><errorlog>error.log</errorlog><loglevel>3</loglevel>
    <logsize>10000</logsize></logging>
  <security><chroot>0</chroot>{owner}</security>
</icecast>
"""

    def start(self) -> "Icecast":
        if shutil.which("icecast2") is None:
            raise RuntimeError("icecast2 is missing: run scripts/install-deps --test")
        self.dir.mkdir(parents=True, exist_ok=True)
        self.logdir = Path(tempfile.mkdtemp(prefix="reel-icecast-log-"))
        os.chmod(self.logdir, 0o755)
        if os.geteuid() == 0:
            import pwd
            nobody = pwd.getpwnam("nobody")
            os.chown(self.logdir, nobody.pw_uid, nobody.pw_gid)
        conf = self.dir / "icecast.xml"
        conf.write_text(self.config())
        self.stderr = open(self.dir / "icecast.stderr", "wb")
        self.proc = subprocess.Popen(["icecast2", "-c", str(conf)], stdout=self.stderr, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        wait_for(self._answers, what=f"icecast2 on 127.0.0.1:{self.port} ({self.tail_log()})")
        return self

    def _answers(self) -> bool:
        if self.proc.poll() is not None:
            raise RuntimeError(f"icecast2 exited with {self.proc.returncode}: {self.tail_log()}")
        return "<icestats>" in self.admin("stats")

    def tail_log(self, n: int = 20) -> str:
        lines = []
        for f in ([self.logdir / "error.log"] if self.logdir else []) + [self.dir / "icecast.stderr"]:
            try:
                lines += f.read_text(errors="replace").splitlines()[-n:]
            except OSError:
                pass
        return "\n".join(lines)

    def stop(self):
        for proc in list(self.sources.values()) + ([self.proc] if self.proc else []):
            stop_process(proc, DEADLINE)
        self.sources.clear()
        self.proc = None
        if self.logdir is not None:
            # Keep the server's log beside the config for a failed test to show.
            for name in ("error.log", "access.log"):
                try:
                    shutil.copy(self.logdir / name, self.dir / name)
                except OSError:
                    pass
            shutil.rmtree(self.logdir, ignore_errors=True)
            self.logdir = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # -- sources --------------------------------------------------------------------------------

    def url(self, mount: str) -> str:
        return f"http://127.0.0.1:{self.port}{mount}"

    def feed(self, mount: str, codec: str = "mp3", bitrate: str = "128k", name: str | None = None,
             genre: str = "Test", description: str = "A tone for tests") -> str:
        """Starts ffmpeg as the source client of `mount`, playing SIGNAL in real time (`-re`).
        codec: "mp3" (audio/mpeg) or "aac" (AAC-LC in ADTS, audio/aac). Returns the mount."""
        if codec == "mp3":
            encode = ["-c:a", "libmp3lame", "-b:a", bitrate, "-content_type", "audio/mpeg", "-f", "mp3"]
        elif codec == "aac":
            encode = ["-c:a", "aac", "-b:a", bitrate, "-content_type", "audio/aac", "-f", "adts"]
        else:
            raise ValueError(f"unknown codec {codec}")
        target = f"icecast://source:{SOURCE_PASSWORD}@127.0.0.1:{self.port}{mount}"
        args = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-re", "-f", "lavfi", "-i", SIGNAL,
                *encode, "-ice_name", name or self.name, "-ice_genre", genre, "-ice_description", description,
                "-ice_public", "0", target]
        log = open(self.dir / f"source{mount.replace('/', '_')}.log", "wb")
        self.sources[mount] = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        return mount

    def stop_source(self, mount: str):
        """Ends the source client of `mount` (listeners see the stream end)."""
        proc = self.sources.pop(mount, None)
        if proc:
            stop_process(proc, DEADLINE)

    def wait_for_mount(self, mount: str):
        """Waits until `mount` is on air (the admin stats list it with a listener URL)."""
        def on_air():
            proc = self.sources.get(mount)
            if proc is not None and proc.poll() is not None:
                log = (self.dir / f"source{mount.replace('/', '_')}.log").read_text(errors="replace")
                raise RuntimeError(f"ffmpeg for {mount} exited with {proc.returncode}: {log[-2000:]}")
            return f'<source mount="{mount}">' in self.admin("stats")
        wait_for(on_air, what=f"mount {mount} on air")

    # -- admin ----------------------------------------------------------------------------------

    def admin(self, command: str, **params) -> str:
        query = urllib.parse.urlencode(params)
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/admin/{command}" + (f"?{query}" if query else ""))
        token = base64.b64encode(f"{ADMIN_USER}:{ADMIN_PASSWORD}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
        with urllib.request.urlopen(request, timeout=DEADLINE) as reply:
            return reply.read().decode("utf-8", errors="replace")

    def set_title(self, mount: str, title: str):
        """Puts `title` on air as the mount's StreamTitle (Icecast's admin metadata URL)."""
        reply = self.admin("metadata", mount=mount, mode="updinfo", song=title)
        if "<return>1</return>" not in reply:
            raise AssertionError(f"icecast refused the title update: {reply}")

    # -- a raw ICY listener ---------------------------------------------------------------------

    def listen(self, mount: str, seconds: float = 2.0, until_title: str | None = None):
        """Connects as an ICY listener (`Icy-MetaData: 1`) and reads for `seconds` (or until
        `until_title` is on air, within the deadline). Returns (headers as a dict with lower-case
        names, icy-metaint, the StreamTitles seen in order, audio bytes read)."""
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=DEADLINE)
        try:
            sock.sendall(f"GET {mount} HTTP/1.0\r\nHost: 127.0.0.1\r\nIcy-MetaData: 1\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    raise AssertionError(f"icecast closed the connection: {data!r}")
                data += chunk
            head, body = data.split(b"\r\n\r\n", 1)
            headers = {}
            for line in head.decode("latin-1").split("\r\n")[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            metaint = int(headers.get("icy-metaint", "0"))
            titles: list[str] = []
            audio = 0
            end = time.monotonic() + (DEADLINE if until_title else seconds)
            buffer = body
            remaining = metaint
            while time.monotonic() < end:
                if not buffer:
                    buffer = sock.recv(65536)
                    if not buffer:
                        break
                if metaint == 0:
                    audio += len(buffer)
                    buffer = b""
                    continue
                take = min(remaining, len(buffer))
                audio += take
                buffer = buffer[take:]
                remaining -= take
                if remaining == 0:
                    while not buffer:
                        buffer = sock.recv(65536)
                    length = buffer[0] * 16
                    buffer = buffer[1:]
                    while len(buffer) < length:
                        more = sock.recv(65536)
                        if not more:
                            raise AssertionError("the stream ended inside a metadata block")
                        buffer += more
                    block, buffer = buffer[:length], buffer[length:]
                    remaining = metaint
                    text = block.rstrip(b"\0").decode("utf-8", errors="replace")
                    if text.startswith("StreamTitle='"):
                        titles.append(text[len("StreamTitle='"):].split("';", 1)[0])
                        if until_title is not None and titles[-1] == until_title:
                            break
            return headers, metaint, titles, audio
        finally:
            sock.close()

