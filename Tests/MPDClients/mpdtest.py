"""Helpers for the MPD-client tests: test audio, the servers under test, a raw protocol client.

The same tree of recordings is served by Debian's `mpd` (as files in its music_directory) and by
reeld (imported with the `reel` CLI), so that the same tests and transcripts run against both.
"""

from __future__ import annotations

import datetime
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "PythonSupport"))
from testkit import build_dir, free_port, waiter  # noqa: E402

# Every wait in the suite is a poll against a deadline; these are upper bounds, not expectations.
DEADLINE = float(os.environ.get("REEL_MPD_TEST_DEADLINE", "20"))
wait_for = waiter(DEADLINE, interval=0.02)


# ---------------------------------------------------------------------------------------------
# Test audio

@dataclass(frozen=True)
class Recording:
    folder: str  # Reel tree path without the leading slash, e.g. "Meetings/2025"
    name: str
    ext: str
    seconds: int
    freq: int
    rate: int
    channels: int

    @property
    def album(self) -> str:
        return self.folder.rsplit("/", 1)[-1]

    @property
    def uri(self) -> str:
        """The song's URI in the MPD view: Recordings/Folder/Sub/Name.ext."""
        return f"Recordings/{self.folder}/{self.name}.{self.ext}"

    @property
    def tree_folder(self) -> str:
        return "/" + self.folder


# A tone at the start, then silence: small files that last long enough (MPD's null output plays
# in real time; Reel's is not paced, so the tests pause right after play and poll for states).
# Names are chosen so that MPD's collating order differs from byte order ("idea" < "Memo").
TREE = [
    Recording("Meetings", "Standup", "flac", 600, 440, 44100, 2),
    Recording("Meetings", "Retro", "mp3", 240, 550, 22050, 1),
    Recording("Meetings/2025", "Kickoff", "flac", 420, 660, 48000, 1),
    Recording("Notes", "idea", "flac", 300, 330, 44100, 1),
    Recording("Notes", "Memo", "wav", 60, 300, 8000, 1),
]
FOLDERS = ["Meetings", "Meetings/2025", "Notes"]

# MPD's listall order (songs of a directory first, collated, then its subdirectories).
LISTALL_ORDER = [
    "Recordings/Meetings/Retro.mp3",
    "Recordings/Meetings/Standup.flac",
    "Recordings/Meetings/2025/Kickoff.flac",
    "Recordings/Notes/idea.flac",
    "Recordings/Notes/Memo.wav",
]


def by_name(name: str) -> Recording:
    return next(r for r in TREE if r.name == name)


def today() -> str:
    return datetime.date.today().isoformat()


def make_media(root: Path) -> Path:
    """Generates TREE under root/Recordings/… with tags Title = name, Album = folder, Date = today."""
    from mutagen.flac import FLAC
    from mutagen.id3 import ID3, TALB, TDRC, TIT2
    from mutagen.wave import WAVE

    for r in TREE:
        path = root / r.uri
        path.parent.mkdir(parents=True, exist_ok=True)
        tone = ["synth", "2", "sine", str(r.freq), "vol", "0.5", "pad", "0", str(r.seconds - 2)]
        fmt = ["-r", str(r.rate), "-c", str(r.channels), "-b", "16"]
        if r.ext == "mp3":
            wav = path.with_suffix(".tmp.wav")
            subprocess.run(["sox", "-n", *fmt, str(wav), *tone], check=True)
            subprocess.run(["lame", "--quiet", "-b", "32", str(wav), str(path)], check=True)
            wav.unlink()
            tags = ID3()
            tags.add(TIT2(encoding=3, text=r.name))
            tags.add(TALB(encoding=3, text=r.album))
            tags.add(TDRC(encoding=3, text=today()))
            tags.save(str(path))
        else:
            subprocess.run(["sox", "-n", *fmt, str(path), *tone], check=True)
            if r.ext == "flac":
                f = FLAC(str(path))
                f["TITLE"] = r.name
                f["ALBUM"] = r.album
                f["DATE"] = today()
                f.save()
            else:
                w = WAVE(str(path))
                w.add_tags()
                w.tags.add(TIT2(encoding=3, text=r.name))
                w.tags.add(TALB(encoding=3, text=r.album))
                w.tags.add(TDRC(encoding=3, text=today()))
                w.save()
    return root


# ---------------------------------------------------------------------------------------------
# A raw MPD protocol client

class Raw:
    """One connection speaking the protocol line by line, every read bounded by a deadline."""

    def __init__(self, address, timeout=DEADLINE):
        self.timeout = timeout
        if isinstance(address, tuple):
            self.sock = socket.create_connection(address, timeout=timeout)
        else:
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.settimeout(timeout)
            self.sock.connect(str(address))
        self.buf = b""
        self.greeting = self.readline()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.sock.sendall(data)

    def _fill(self, end) -> bool:
        """Reads more bytes before `end`; False on EOF. Raises TimeoutError at the deadline."""
        remaining = end - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no reply before the deadline")
        self.sock.settimeout(remaining)
        try:
            data = self.sock.recv(1 << 16)
        except socket.timeout:
            raise TimeoutError("no reply before the deadline") from None
        except ConnectionResetError:
            data = b""
        if not data:
            return False
        self.buf += data
        return True

    def readline(self, timeout=None):
        """The next line without its newline, or None if the server closed the connection."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while b"\n" not in self.buf:
            if not self._fill(end):
                return None
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", errors="replace")

    def read_bytes(self, count, timeout=None) -> bytes | None:
        """Exactly `count` bytes, or None if the server closed the connection first."""
        end = time.monotonic() + (self.timeout if timeout is None else timeout)
        while len(self.buf) < count:
            if not self._fill(end):
                return None
        data, self.buf = self.buf[:count], self.buf[count:]
        return data

    def reply(self, timeout=None, list_ok=False, binary=None):
        """Lines up to and including the final `OK` or `ACK …` (None appended if closed). A
        `binary: N` payload is read as bytes: appended to `binary` (a list) if given, and
        recorded as a line `<N bytes, sha1 …>`."""
        lines = []
        while True:
            line = self.readline(timeout)
            lines.append(line)
            if line is not None and line.startswith("binary: "):
                data = self.read_bytes(int(line.split(": ", 1)[1]) + 1, timeout)
                if data is None:
                    lines.append(None)
                    return lines
                if binary is not None:
                    binary.append(data[:-1])
                lines.append(f"<{len(data) - 1} bytes, sha1 {hashlib.sha1(data[:-1]).hexdigest()[:12]}>")
                continue
            if line is None or line == "OK" or line.startswith("ACK "):
                return lines

    def cmd(self, line, timeout=None):
        self.send(line + "\n")
        return self.reply(timeout)

    def ok(self, line):
        lines = self.cmd(line)
        assert lines[-1] == "OK", f"{line!r} -> {lines!r}"
        return lines[:-1]

    def pairs(self, line) -> dict:
        return dict(l.split(": ", 1) for l in self.ok(line))

    def status(self) -> dict:
        return self.pairs("status")

    def closed_within(self, timeout=DEADLINE) -> bool:
        """True once the server has closed the connection; any bytes it sends first fail the test."""
        end = time.monotonic() + timeout
        while True:
            if self.buf:
                raise AssertionError(f"expected the connection to close without a reply, got {self.buf!r}")
            if not self._fill(end):
                return True

    def at_eof(self) -> bool:
        """Whether the server has closed the connection (and sent nothing), without blocking long."""
        return self.closed_within(timeout=DEADLINE)



# ---------------------------------------------------------------------------------------------
# Servers

class Server:
    kind = "?"

    def __init__(self, workdir: Path, media: Path, password: str | None = None, music: Path | None = None):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.media = media
        self.password = password
        # A generated music collection (collection.py): MPD's music_directory holds it beside
        # the recordings; reeld has it as its one music folder.
        self.music = music
        self.host = "127.0.0.1"
        self.port = free_port()
        self.unix = self.dir / "mpd.sock"
        self.proc: subprocess.Popen | None = None
        self.log = self.dir / f"{self.kind}.log"

    @property
    def address(self):
        return (self.host, self.port)

    def raw(self, unix=False, timeout=DEADLINE) -> Raw:
        return Raw(self.unix if unix else self.address, timeout=timeout)

    def authed(self, unix=False) -> Raw:
        c = self.raw(unix)
        if self.password:
            assert c.cmd(f"password {self.password}") == ["OK"]
        return c

    def mpc_env(self) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MPD_")}
        env["MPD_HOST"] = f"{self.password}@{self.host}" if self.password else self.host
        env["MPD_PORT"] = str(self.port)
        return env

    def mpc(self, *args, check=True, timeout=DEADLINE) -> subprocess.CompletedProcess:
        p = subprocess.run(["mpc", *args], env=self.mpc_env(), capture_output=True, text=True,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"mpc {' '.join(args)} exited {p.returncode}: {p.stderr}{p.stdout}")
        return p

    def _wait_greeting(self):
        def greets():
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with {self.proc.returncode}; log:\n{self.tail_log()}")
            try:
                with Raw(self.address, timeout=2) as c:
                    return c.greeting and c.greeting.startswith("OK MPD ")
            except (OSError, TimeoutError):
                return False
        wait_for(greets, what=f"{self.kind} to greet on port {self.port}; log:\n{self.tail_log()}")
        wait_for(lambda: self.unix.exists(), what=f"{self.kind}'s Unix socket {self.unix}")

    def tail_log(self, n=40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def stop(self):
        """Stops the process this object started (by its pid), and only that."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def music_root(self) -> Path | None:
        """The folder this server reads the collection from (a test may change it)."""
        if self.music is None:
            return None
        return self.dir / "music" if self.kind == "mpd" else self.music

    #: The songs of a music folder that is not the generated collection (set by its test).
    music_songs: int | None = None

    def expected_songs(self) -> int:
        if self.music is None:
            return len(TREE)
        if self.music_songs is not None:
            return len(TREE) + self.music_songs
        import collection
        if not isinstance(self.music, list):
            return len(TREE) + len(collection.SONGS)
        # Several folders, each with (a part of) the collection: its audio files but the broken one.
        return len(TREE) + sum(1 for folder in self.music for path in folder.rglob("*")
                               if path.suffix in (".flac", ".mp3", ".ogg", ".opus")
                               and path.name != Path(collection.BROKEN).name)

    def wait_for_database(self):
        """Waits until no update runs and `stats` counts every song of the tree and collection."""
        want = str(self.expected_songs())
        with self.authed() as c:
            wait_for(lambda: "updating_db" not in c.status() and c.pairs("stats")["songs"] == want,
                     what=f"{self.kind}'s database to hold the {want} songs")


class MPDServer(Server):
    kind = "mpd"

    def start(self):
        music = self.dir / "music"
        shutil.copytree(self.media, music, copy_function=os.link if _same_fs(self.media, self.dir) else shutil.copy2)
        if self.music is not None:
            shutil.copytree(self.music, music, dirs_exist_ok=True, copy_function=shutil.copy2)
        (self.dir / "playlists").mkdir()
        lines = [
            f'music_directory "{music}"',
            f'playlist_directory "{self.dir / "playlists"}"',
            f'db_file "{self.dir / "db"}"',
            f'state_file "{self.dir / "state"}"',
            f'pid_file "{self.dir / "pid"}"',
            f'log_file "{self.log}"',
            f'bind_to_address "{self.host}"',
            f'port "{self.port}"',
            f'bind_to_address "{self.unix}"',
            'auto_update "no"',
            'max_connections "1100"',
            'zeroconf_enabled "no"',
            'audio_output {\n  type "null"\n  name "null"\n  mixer_type "software"\n}',
        ]
        if self.password:
            lines.append(f'password "{self.password}@read,add,control,admin"')
        conf = self.dir / "mpd.conf"
        conf.write_text("\n".join(lines) + "\n")
        self.stderr = open(self.dir / "mpd.stderr", "wb")
        self.proc = subprocess.Popen(["mpd", "--no-daemon", str(conf)], stdout=self.stderr,
                                     stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        self._wait_greeting()
        with self.authed() as c:
            c.ok("update")
        self.wait_for_database()
        return self

    def tail_log(self, n=40) -> str:
        parts = []
        for f in (self.log, self.dir / "mpd.stderr"):
            try:
                parts += f.read_text(errors="replace").splitlines()[-n:]
            except OSError:
                pass
        return "\n".join(parts)


def _same_fs(a: Path, b: Path) -> bool:
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False


reel_build_dir = build_dir


def reeld_supports_mpd() -> str | None:
    """None if reeld is built and knows --mpd-listen, else the reason it cannot be tested."""
    reeld = reel_build_dir() / "reeld"
    if not reeld.exists():
        return f"{reeld} is not built"
    try:
        out = subprocess.run([str(reeld), "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{reeld} --help failed: {error}"
    if "--mpd-listen" not in out.stdout + out.stderr:
        return f"{reeld} has no --mpd-listen"
    return None


class ReelServer(Server):
    kind = "reel"

    def start(self):
        build = reel_build_dir()
        self.reeld = build / "reeld"
        self.reel_bin = build / "reel"
        self.socket = self.dir / "reel.sock"
        # A paced device: ALSA's `null` plays at CPU speed, so a track can end between two
        # commands (play, then pause) on a fast machine. scripts/test starts a PulseAudio null
        # sink and exports PULSE_SERVER; without one the tests fall back to `null`.
        default_device = "pulse" if os.environ.get("PULSE_SERVER") else "null"
        device = os.environ.get("REEL_MPD_DEVICE", default_device)
        args = [str(self.reeld), "--socket", str(self.socket), "--data-dir", str(self.dir / "data"),
                "--device", device, "--mpd-listen", f"{self.host}:{self.port}",
                "--mpd-listen", str(self.unix), "--http-listen", "none"]
        # The stored playlists where MPD's are (MPDServer: playlist_directory).
        (self.dir / "playlists").mkdir(exist_ok=True)
        args_env_playlists = str(self.dir / "playlists")
        if self.password:
            args += ["--mpd-password", self.password]
        env = dict(os.environ, REEL_CONFIG="/dev/null")
        for key in list(env):
            if key.startswith("REEL_MPD_") or key in ("REEL_SOCKET", "REEL_MUSIC_DIRS", "REEL_PLAYLIST_DIR"):
                del env[key]
        env["REEL_PLAYLIST_DIR"] = args_env_playlists
        if self.music is not None:
            # A list: several music folders (reeld only).
            folders = self.music if isinstance(self.music, list) else [self.music]
            env["REEL_MUSIC_DIRS"] = ":".join(str(f) for f in folders)
        self.stderr = open(self.log, "wb")
        self.proc = subprocess.Popen(args, env=env, stdout=self.stderr, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self._wait_greeting()
        for folder in FOLDERS:
            self.reel("mkdir", "/" + folder)
        for r in TREE:
            self.reel("import", str(self.media / r.uri), r.tree_folder, "--name", r.name)
        if self.music is not None:
            self.wait_for_database()
        return self

    def reel(self, *args, check=True) -> subprocess.CompletedProcess:
        p = subprocess.run([str(self.reel_bin), *args[:1], "--socket", str(self.socket), *args[1:]],
                           capture_output=True, text=True, timeout=DEADLINE)
        if check and p.returncode != 0:
            raise AssertionError(f"reel {' '.join(args)} exited {p.returncode}: {p.stderr}{p.stdout}")
        return p


def target() -> str:
    value = os.environ.get("REEL_MPD_TARGET", "reel")
    if value not in ("reel", "mpd"):
        raise ValueError(f"REEL_MPD_TARGET must be reel or mpd, not {value!r}")
    return value


def start_server(kind: str, workdir: Path, media: Path, password: str | None = None,
                 music: Path | None = None, songs: int | None = None) -> Server:
    cls = MPDServer if kind == "mpd" else ReelServer
    server = cls(workdir, media, password, music)
    server.music_songs = songs
    try:
        return server.start()
    except BaseException:
        server.stop()
        raise
