"""Power cuts under reeld: its data directory on cutfs, the power cut at random moments.

    python3 Tests/PowerCut/powercut.py --reeld BIN --cutfs BIN --work DIR [--cuts N] [--seed S]
        [--modes plain,library,mixed,segmented,triggered] [--formats flac,wav,ogg,opus] [--max-loss SECONDS]

Needs PULSE_SERVER (a PulseAudio whose default source paces the capture: scripts/test-powercut
and bench/powercut start a private null sink) and /dev/fuse. Every cycle mounts cutfs over
DIR/disk, starts reeld with its data directory there and a capture device that plays a ramp
(sample n holds n, as 16-bit: ALSA's `file` plugin reading the ramp, paced by PulseAudio),
drives it in one of the modes, and at a random moment cuts the power: reeld is stopped
(SIGSTOP), cutfs throws away everything not made durable, reeld is killed. Then cutfs is mounted
again over what is left, `PRAGMA integrity_check` runs on the database as the cut left it,
reeld starts (repairing and reconciling), and the checks run:

  - every change the daemon answered is there ("a reply is a promise"): folders made, renamed,
    moved and deleted, imports (their bytes those of the source), takes started and takes
    finished (with every frame the reply counted; lossless takes hold exactly the ramp);
  - the take being made at the cut is there, decodes, holds the ramp from its start, and lost
    at most --max-loss seconds against what had been captured by the cut (an upper bound:
    the recorder's `elapsed` just before the cut plus the time until the cut);
  - every listed recording has its audio file, and decodes; the database is intact.

A mode is a class with `run(harness)` (the driver, in a thread of its own: it sends requests
and records each answered one in the model) and a name in MODES: `plain` (takes), `library`
(library writes), `mixed` (both at once), `segmented` (sessions of 1 s segments, whose takes
must join into the ramp), `triggered` (level-triggered sessions on the ramp with silent
stretches, a second ALSA device: takes start and end during the session; each holds the input
from its first frame, read from reeld's log). Exit status 0 when every check passed; the last
line says how many cuts were made and the worst loss.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cutfs  # noqa: E402

RATE = 48000
ROOT = "00000000-0000-0000-0000-000000000000"
LOSSLESS = {"flac", "wav"}
EXTENSIONS = {"flac": "flac", "wav": "wav", "ogg": "ogg", "vorbis": "ogg", "opus": "opus", "mp3": "mp3"}


def log(text):
    print(f"[powercut {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


class Failure(Exception):
    pass


class RPC:
    """JSON-RPC over reeld's socket, one request at a time. `ReplyError` for an error reply;
    `ConnectionError` when reeld goes (the cut)."""

    class ReplyError(Exception):
        def __init__(self, method, error):
            super().__init__(f"{method}: {error.get('message')}")
            self.reason = (error.get("data") or {}).get("reason")

    def __init__(self, path, timeout=60):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        try:
            self.sock.sendall(json.dumps(request).encode() + b"\n")
            while True:
                while b"\n" not in self.buffer:
                    chunk = self.sock.recv(1 << 20)
                    if not chunk:
                        raise ConnectionError(f"reeld closed the connection during {method}")
                    self.buffer += chunk
                line, self.buffer = self.buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("id") != request["id"]:
                    continue
                if "error" in message:
                    raise RPC.ReplyError(method, message["error"])
                return message["result"]
        except (OSError, socket.timeout) as error:
            raise ConnectionError(f"{method}: {error}") from error

    def close(self):
        self.sock.close()


class Model:
    """What reeld promised: the items its replies created, renamed, moved or deleted, the takes
    started and finished, the imports. Changed only by answered requests (under `lock`)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.items = {}       # id → {"kind", "parent", "name"}
        self.deleted = set()  # ids whose deletion was answered
        self.takes = {}       # id → {"codec", "frames" (None while recording)}
        self.imports = {}     # id → source file
        self.marked = {}      # id → labels of the marks answered in a take (FLAC: written as chapters)
        self.verified = {}    # id → size of the file when it was decoded and checked
        self.in_flight = {}  # driver → (method, ids) sent but not answered: either outcome may survive

    def descendants(self, item_id):
        found = {item_id}
        changed = True
        while changed:
            changed = False
            for other, item in self.items.items():
                if item["parent"] in found and other not in found:
                    found.add(other)
                    changed = True
        return found

    def folders(self):
        return [ROOT] + [i for i, item in self.items.items() if item["kind"] == "folder"]

    def add(self, item):
        self.items[item["id"]] = {"kind": item["kind"], "parent": item["parent"], "name": item["name"]}
        self.deleted.discard(item["id"])


def start_reeld(command, socket_path, log_path, env, header=None):
    """Starts reeld (`command`, its output appended to `log_path` after `header`) and waits for
    its socket: (the process, an RPC on it). `Failure` when it exits or does not answer in 60 s."""
    with open(log_path, "ab") as log_file:
        if header:
            log_file.write(header.encode())
            log_file.flush()
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + 60
    while True:
        try:
            return process, RPC(socket_path)
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                if process.poll() is None:
                    process.kill()
                process.wait()
                raise Failure(f"reeld did not start; see {log_path}")
            time.sleep(0.05)


class Reeld:
    """reeld with its data directory on the mount, capturing from the ALSA device `capture`
    (`feed`: the ramp; `feedgaps`: the ramp with silent stretches)."""

    def __init__(self, harness, capture="feed"):
        h = harness
        self.capture = capture
        self.socket = os.path.join(h.work, "reel.sock")
        self.log = os.path.join(h.work, "reeld.log")
        env = dict(os.environ, HOME=h.home, REEL_MPD_LISTEN="none", REEL_HTTP_LISTEN="none")
        command = [h.reeld, "--config", h.config, "--socket", self.socket, "--data-dir", h.data,
                   "--device", "null", "--capture-device", capture, "--log-level", "info"]
        self.process, self.rpc = start_reeld(command, self.socket, self.log, env, header=f"---- cycle {h.cycle}\n")

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()

    def terminate(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()


# ---- Modes: each drives reeld until the connection goes (the cut).

class Mode:
    name = "?"
    # The ALSA device reeld captures from in this mode's cycles (see Harness.prepare).
    capture = "feed"

    def run(self, harness):
        raise NotImplementedError

    def session(self, h, rpc, params, seconds, started=None, stopped=None):
        """One recorder session: `recorder.start` with `params`, then `recorder.stop` after
        `seconds` unless the power is cut first. Each request is in flight until answered;
        `started(state)` and `stopped(reply)` run under the model's lock when the answers come
        (`started` returns the ids the stop may change). A start refused for what the other
        driver did (a folder deleted, a name taken) ends the session at once; a stop that finds
        nothing recording (the take deleted meanwhile) changes nothing."""
        model = h.model
        model.in_flight[self.name] = ("recorder.start", set())
        try:
            state = rpc.call("recorder.start", params)
        except RPC.ReplyError as error:
            model.in_flight.pop(self.name, None)
            if error.reason in ("not_found", "name_taken", "busy"):
                time.sleep(0.05)
                return
            raise
        with model.lock:
            ids = (started(state) if started else None) or set()
            model.in_flight.pop(self.name, None)
        h.wait_or_cut(seconds)
        if h.cutting.is_set():
            return
        model.in_flight[self.name] = ("recorder.stop", ids)
        try:
            done = rpc.call("recorder.stop")
        except RPC.ReplyError as error:
            if error.reason != "not_recording":
                raise
            done = None
        with model.lock:
            if done is not None and stopped:
                stopped(done)
            model.in_flight.pop(self.name, None)


class PlainRecording(Mode):
    """One take after another, each stopped after 0.2–4 s or cut by the power."""
    name = "plain"

    def run(self, h):
        rpc = RPC(h.reeld_process.socket)
        model = h.model
        while not h.cutting.is_set():
            codec = h.random.choice(h.formats)
            with model.lock:
                folder = h.random.choice(model.folders())
            name = f"take {h.cycle} {h.random.randrange(10**6)}"

            def started(state, codec=codec):
                item = state["item"]
                model.add(item)
                model.takes[item["id"]] = {"codec": codec, "frames": None}
                h.current_take = item["id"]
                return {item["id"]}

            def stopped(done):
                if done["id"] in model.takes:
                    model.takes[done["id"]]["frames"] = round(done["duration"] * RATE)

            self.session(h, rpc, {"format": codec, "folder": folder, "name": name}, h.random.uniform(0.2, 4.0),
                         started, stopped)
            if not h.cutting.is_set():
                h.current_take = None


class LibraryWrites(Mode):
    """Folders made, renamed, moved and deleted, files imported, one request at a time."""
    name = "library"

    def run(self, h):
        rpc = RPC(h.reeld_process.socket)
        model = h.model
        r = h.random
        while not h.cutting.is_set():
            with model.lock:
                folders = model.folders()
                others = [i for i in model.items if i != h.current_take]
                size = len(model.items)
            op = r.choices(["create", "rename", "move", "delete", "import"],
                           weights=[3, 2, 2, 1 + size // 15, 2])[0]
            if op in ("rename", "move", "delete") and not others:
                op = "create"
            name = f"n{h.cycle}-{r.randrange(10**6)}"
            try:
                if op == "create":
                    model.in_flight[self.name] = ("library.createFolder", set())
                    item = rpc.call("library.createFolder", {"parent": r.choice(folders), "name": name})
                    with model.lock:
                        model.add(item)
                elif op == "import":
                    model.in_flight[self.name] = ("library.import", set())
                    source = r.choice(h.sources)
                    item = rpc.call("library.import", {"file": source, "folder": r.choice(folders), "name": name})
                    with model.lock:
                        model.add(item)
                        model.imports[item["id"]] = source
                elif op == "rename":
                    target = r.choice(others)
                    model.in_flight[self.name] = ("library.rename", {target})
                    item = rpc.call("library.rename", {"item": target, "name": name})
                    with model.lock:
                        model.items[target]["name"] = item["name"]
                elif op == "move":
                    target, to = r.choice(others), r.choice(folders)
                    model.in_flight[self.name] = ("library.move", {target})
                    item = rpc.call("library.move", {"item": target, "to": to})
                    with model.lock:
                        model.items[target]["parent"] = item["parent"]
                else:
                    target = r.choice(others)
                    with model.lock:
                        gone = model.descendants(target)
                    model.in_flight[self.name] = ("library.delete", gone)
                    rpc.call("library.delete", {"item": target})
                    with model.lock:
                        # With what the other driver added below it meanwhile (a take started in it).
                        gone |= model.descendants(target)
                        for i in gone:
                            model.items.pop(i, None)
                            model.takes.pop(i, None)
                            model.imports.pop(i, None)
                            model.verified.pop(i, None)
                        model.deleted |= gone
            except RPC.ReplyError as error:
                # Refused (a cycle, a name taken, an item another driver just deleted): no change.
                if error.reason not in ("cycle", "name_taken", "not_found", "not_a_folder", "busy"):
                    raise
            model.in_flight.pop(self.name, None)


class SegmentedRecording(Mode):
    """One segmented session after another (`segmentSeconds: 1`: a new take every second of
    captured frames, `NAME 001`, `NAME 002`, ...), each stopped after 0.5-5 s or cut by the
    power. The segments are not answered one by one: each listed one must decode, the ones of
    the session cut must join into the ramp from its start (lossless) and together lose at
    most --max-loss against what the session had captured."""
    name = "segmented"

    def run(self, h):
        rpc = RPC(h.reeld_process.socket)
        model = h.model
        while not h.cutting.is_set():
            codec = h.random.choice(h.formats)
            with model.lock:
                folder = h.random.choice(model.folders())
            name = f"seg {h.cycle} {h.random.randrange(10**6)}"

            def started(state, name=name, codec=codec):
                model.add(state["item"])
                h.current_series = ("segmented", state["item"]["parent"], name, codec)

            self.session(h, rpc, {"format": codec, "folder": folder, "name": name, "segmentSeconds": 1},
                         h.random.uniform(0.5, 5.0), started)
            if not h.cutting.is_set():
                h.current_series = None


class TriggeredRecording(Mode):
    """One level-triggered session after another on the ramp with silent stretches (loud
    0.3-2 s, silent 0.6-2 s: takes start and end during the run), each stopped after 1-6 s or
    cut by the power, so cuts land while armed, recording and closing a take. A take's first
    frame (counted from the session's, which is the input's first) is read from reeld's log.
    Each listed take decodes to the length the tree says; the lossless ones hold exactly the
    input from their first frame (pre-roll included); the take open at the cut lost at most
    --max-loss against what it had captured."""
    name = "triggered"
    capture = "feedgaps"
    TRIGGER = {"level": -30, "hold": 0.3, "preroll": 0.2, "minLength": 0.1}

    def run(self, h):
        rpc = RPC(h.reeld_process.socket)
        model = h.model
        while not h.cutting.is_set():
            codec = h.random.choice(h.formats)
            with model.lock:
                folder = h.random.choice(model.folders())
            name = f"vox {h.cycle} {h.random.randrange(10**6)}"

            def started(state, folder=folder, name=name, codec=codec):
                h.current_series = ("triggered", folder, name, codec)

            self.session(h, rpc, {"format": codec, "folder": folder, "name": name, "trigger": self.TRIGGER},
                         h.random.uniform(1.0, 6.0), started)
            if not h.cutting.is_set():
                h.current_series = None


class Mixed(Mode):
    """Recording and library writes at once."""
    name = "mixed"

    def run(self, h):
        other = threading.Thread(target=h.guarded, args=(LibraryWrites(),), daemon=True)
        other.start()
        h.guarded(PlainRecording())
        other.join()


MODES = {mode.name: mode for mode in (PlainRecording, LibraryWrites, Mixed, SegmentedRecording, TriggeredRecording)}


# ---- The harness.

class Harness:
    def __init__(self, args):
        self.reeld, self.cutfs_binary = args.reeld, args.cutfs
        self.work = os.path.abspath(args.work)
        self.random = random.Random(args.seed)
        self.modes = [MODES[m]() for m in args.modes.split(",")]
        self.formats = args.formats.split(",")
        self.max_loss = args.max_loss
        self.backing = os.path.join(self.work, "disk")
        self.mnt = os.path.join(self.work, "mnt")
        self.data = os.path.join(self.mnt, "data")
        self.home = os.path.join(self.work, "home")
        self.config = os.path.join(self.work, "empty.toml")
        self.model = Model()
        self.cycle = 0
        self.losses = []  # (seconds, codec)
        self.failures = []
        self.fs = None
        self.reeld_process = None
        self.current_take = None
        # A session of many takes being recorded: ("segmented" or "triggered", folder id, its name, codec).
        self.current_series = None
        self.cutting = threading.Event()
        self.driver_errors = []
        self.stats = {"takes finished": 0, "takes cut": 0, "library changes": 0, "strays": 0}

    # Setup

    def prepare(self):
        os.makedirs(self.home, exist_ok=True)
        open(self.config, "w").close()
        ramp = os.path.join(self.work, "ramp.raw")
        seconds = 120
        with open(ramp, "wb") as f:
            pattern = b"".join(((n + 32768) % 65536 - 32768).to_bytes(2, "little", signed=True) for n in range(65536))
            total = seconds * RATE * 2
            while total > 0:
                f.write(pattern[:total])
                total -= len(pattern)
        with open(ramp, "rb") as f:
            self.ramp = f.read()
        # The ramp with silent stretches, for triggered takes: loud 0.3-2 s, silent 0.6-2 s
        # (always longer than the trigger's hold), from a fixed seed; silent for its first 0.5 s.
        gaps = bytearray(self.ramp)
        layout, at = random.Random(28), 0
        while at < len(gaps) // 2:
            silent = layout.uniform(0.6, 2.0) if at else 0.5
            end = min(len(gaps) // 2, at + int(silent * RATE))
            gaps[at * 2:end * 2] = bytes((end - at) * 2)
            at = end + int(layout.uniform(0.3, 2.0) * RATE)
        self.gaps = bytes(gaps)
        gaps_path = os.path.join(self.work, "ramp-gaps.raw")
        with open(gaps_path, "wb") as f:
            f.write(self.gaps)
        with open(os.path.join(self.home, ".asoundrc"), "w") as f:
            for device, infile in (("feed", ramp), ("feedgaps", gaps_path)):
                f.write(f'pcm.{device} {{\n type file\n slave.pcm "pulse"\n file "/dev/null"\n infile "{infile}"\n format raw\n}}\n')
        sources = os.path.join(self.work, "sources")
        os.makedirs(sources, exist_ok=True)
        self.sources = []
        for name, args in (("tone.flac", ["synth", "1.5", "sine", "440"]), ("noise.wav", ["synth", "0.7", "whitenoise"]),
                           ("tone.ogg", ["synth", "1", "sine", "220"])):
            path = os.path.join(sources, name)
            subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", path] + args, check=True)
            self.sources.append(path)

    # A cycle

    def wait_or_cut(self, seconds):
        self.cutting.wait(seconds)

    def guarded(self, mode):
        try:
            mode.run(self)
        except ConnectionError:
            if not self.cutting.is_set():
                self.driver_errors.append(f"{mode.name}: reeld went away before the cut")
        except Exception as error:  # a reply that breaks the protocol, a wrong error
            if not self.cutting.is_set():
                self.driver_errors.append(f"{mode.name}: {error!r}")

    def run_cycle(self, mode):
        self.cutting.clear()
        self.current_take = None
        self.current_series = None
        driver = threading.Thread(target=self.guarded, args=(mode,), daemon=True)
        driver.start()
        at = self.random.uniform(0.3, 6.0)
        self.cutting.wait(at)
        # Just before the cut: what the recorder had captured (an upper bound follows from the time).
        status, asked = None, time.monotonic()
        try:
            status = self.reeld_process.rpc.call("recorder.status")
        except (ConnectionError, RPC.ReplyError):
            pass
        stopped = self.power_cut()
        driver.join(30)
        in_flight = list(self.model.in_flight.values())
        self.model.in_flight = {}
        cut_take = None
        series = self.current_series
        if status and status["state"] in ("recording", "armed"):
            # `elapsed` is the session's: for a segmented or triggered one, of all its takes
            # together (and, triggered, of the time armed).
            captured = status["elapsed"] + (stopped - asked)
            if status.get("series") and series:
                # Triggered: the id of the take open at the cut (None while armed).
                open_take = status["item"]["id"] if status["state"] == "recording" and status["item"] else None
                cut_take = (series, captured, series[3], open_take)
                if series[0] == "triggered":
                    key = f"triggered sessions cut while {'recording' if open_take else 'armed'}"
                    self.stats[key] = self.stats.get(key, 0) + 1
            elif status["item"] and status["state"] == "recording":
                cut_take = (status["item"]["id"], captured, status["format"]["codec"])
        log(f"cycle {self.cycle}: {mode.name}, cut after {at:.2f} s"
            + (f" while {status['state']} {cut_take[2]} ({cut_take[1]:.2f} s captured)" if cut_take else "")
            + "".join(f", {method} unanswered" for method, _ in in_flight))
        self.fs.unmount()
        for error in self.driver_errors:
            if "Stale file handle" in error:
                # cutfs, not reeld: the kernel found a node of the mount stale (seen once in 221
                # cuts, on creating a file in audio/; not yet understood). reeld refused cleanly.
                self.stats["ESTALE from cutfs"] = self.stats.get("ESTALE from cutfs", 0) + 1
                log(f"cycle {self.cycle}: cutfs answered ESTALE (not counted against reeld): {error}")
                continue
            self.fail(f"cycle {self.cycle}: driver: {error}")
        self.driver_errors = []
        return in_flight, cut_take

    def power_cut(self):
        """reeld stops at once (SIGSTOP: nothing it does after this reaches the disk), cutfs throws
        away what is not durable, reeld is killed, cutfs unmounted. Returns when reeld stopped."""
        os.kill(self.reeld_process.process.pid, signal.SIGSTOP)
        stopped = time.monotonic()
        self.cutting.set()
        self.fs.cut()
        self.reeld_process.kill()
        return stopped

    # Checks after the restart

    def fail(self, text):
        log("FAILED: " + text)
        self.failures.append(text)

    def check_database_as_left(self):
        path = os.path.join(self.data, "library.sqlite")
        if not os.path.exists(path):
            if self.model.items:
                self.fail(f"cycle {self.cycle}: the database is gone, with {len(self.model.items)} answered items")
            return
        db = sqlite3.connect(path)
        try:
            result = db.execute("PRAGMA integrity_check").fetchall()
            if result != [("ok",)]:
                self.fail(f"cycle {self.cycle}: integrity_check: {result}")
            keys = db.execute("PRAGMA foreign_key_check").fetchall()
            if keys:
                self.fail(f"cycle {self.cycle}: foreign_key_check: {keys[:5]}")
        finally:
            db.close()

    def tree(self, rpc):
        found, folders = {}, [ROOT]
        while folders:
            folder = folders.pop()
            for item in rpc.call("library.list", {"item": folder})["items"]:
                found[item["id"]] = item
                if item["kind"] == "folder":
                    folders.append(item["id"])
        return found

    def audio_file(self, item):
        codec = (item.get("format") or {}).get("codec", "")
        return os.path.join(self.data, "audio", f"{item['id']}.{EXTENSIONS.get(codec, codec)}")

    def decode(self, path):
        """The samples (s16le, mono, 48 kHz) and the decoder's complaints: ffmpeg's, or, for a
        file ffmpeg will not open, sox's (ffmpeg finds no stream in an Ogg Vorbis file of headers
        only, a take of no frames, which libvorbis reads)."""
        run = subprocess.run(["ffmpeg", "-nostdin", "-v", "error", "-i", path, "-f", "s16le", "-ac", "1", "-ar", str(RATE), "-"],
                             capture_output=True)
        complaints = run.stderr.decode(errors="replace").strip() + ("" if run.returncode == 0 else f" (exit {run.returncode})")
        if run.returncode != 0:
            sox = subprocess.run(["sox", "-V1", path, "-t", "raw", "-e", "signed", "-b", "16", "-L", "-c", "1", "-"],
                                 capture_output=True)
            if sox.returncode == 0 and not sox.stderr.strip():
                return sox.stdout, ""
            complaints += f"; sox: {sox.stderr.decode(errors='replace').strip()} (exit {sox.returncode})"
        return run.stdout, complaints

    def decode_take(self, item, codec, where):
        """A take's samples; None (and a failure) when it does not decode cleanly. A take of no
        frames is Ogg headers only, which ffmpeg refuses ("End of file"): counted, not failed."""
        samples, complaints = self.decode(self.audio_file(item))
        if complaints and not item.get("duration") and codec in ("opus", "vorbis", "ogg"):
            self.stats["empty ogg takes"] = self.stats.get("empty ogg takes", 0) + 1
            return b""
        if complaints:
            self.fail(f"{where}: {item['path']} does not decode cleanly: {complaints[:300]}")
            return None
        return samples

    def check_take(self, item, codec, expected_frames=None, captured=None):
        path = self.audio_file(item)
        where = f"cycle {self.cycle}: take {item['path']} ({codec})"
        samples = self.decode_take(item, codec, where)
        if samples is None:
            return
        frames = len(samples) // 2
        if codec in LOSSLESS and samples != self.ramp[:len(samples)]:
            first = next(i for i in range(0, len(samples), 2) if samples[i:i + 2] != self.ramp[i:i + 2]) // 2
            self.fail(f"{where}: frame {first} of {frames} is not the ramp's")
        duration = item.get("duration") or 0
        if abs(round(duration * RATE) - frames) > (0 if codec in LOSSLESS else 960):
            self.fail(f"{where}: the tree says {duration:.4f} s, the file decodes to {frames / RATE:.4f} s")
        if expected_frames is not None and abs(frames - expected_frames) > (0 if codec in LOSSLESS else 960):
            self.fail(f"{where}: finished with {expected_frames} frames answered, {frames} kept")
        if captured is not None:
            loss = captured - frames / RATE
            self.losses.append((loss, codec))
            if loss > self.max_loss:
                self.fail(f"{where}: lost {loss:.3f} s (captured {captured:.3f} s, kept {frames / RATE:.3f} s)")
        self.model.verified[item["id"]] = os.path.getsize(path)

    def check_chapters(self, rpc, tree, where):
        """Each take with answered marks lists them (library.get), and its FLAC file holds the
        chapters of all of them or none (a cut before the chapters were written), never a torn
        header: it decodes, and metaflac reads its comment."""
        for item_id, labels in self.model.marked.items():
            item = tree.get(item_id)
            if item is None:
                continue
            listed = rpc.call("library.get", {"item": item_id}).get("marks") or []
            if [mark.get("label") for mark in listed][:len(labels)] != labels:
                self.fail(f"{where}: {item['path']} lists marks {listed}, answered {labels}")
            path = self.audio_file(item)
            run = subprocess.run(["metaflac", "--export-tags-to=-", path], capture_output=True)
            if run.returncode != 0:
                self.fail(f"{where}: metaflac cannot read {item['path']}'s comment: {run.stderr.decode(errors='replace')[:200]}")
                continue
            chapters = [line for line in run.stdout.decode(errors="replace").splitlines() if line.upper().startswith("CHAPTER")]
            names = [line.split("=", 1)[1] for line in chapters if "NAME=" in line.upper()]
            if chapters and names != [mark.get("label") for mark in listed]:
                self.fail(f"{where}: {item['path']} has chapters {chapters}, the library lists {listed}")
            self.stats["marked takes with chapters" if chapters else "marked takes without chapters"] = \
                self.stats.get("marked takes with chapters" if chapters else "marked takes without chapters", 0) + 1
            samples, complaints = self.decode(path)
            if complaints:
                self.fail(f"{where}: {item['path']} does not decode cleanly after its chapters: {complaints[:300]}")

    def check_series(self, takes, codec, captured):
        """The takes of a segmented session cut by the power, in order: each decodes, lossless
        ones join into the ramp exactly (no gap, no overlap), and all together lost at most
        --max-loss against what the session had captured."""
        where = f"cycle {self.cycle}: segmented session ({codec}, {len(takes)} takes)"
        self.stats["takes cut"] += 1
        self.stats["segmented sessions cut"] = self.stats.get("segmented sessions cut", 0) + 1
        joined, frames = b"", 0
        for item in takes:
            path = self.audio_file(item)
            if not os.path.exists(path):
                continue  # reported by the listing check
            samples = self.decode_take(item, codec, where)
            if samples is None:
                return
            joined += samples
            frames += len(samples) // 2
        if codec in LOSSLESS and joined != self.ramp[:len(joined)]:
            first = next(i for i in range(0, len(joined), 2) if joined[i:i + 2] != self.ramp[i:i + 2]) // 2
            self.fail(f"{where}: frame {first} of the joined {frames} is not the ramp's")
        loss = captured - frames / RATE
        self.losses.append((loss, codec + " segmented"))
        if loss > self.max_loss:
            self.fail(f"{where}: lost {loss:.3f} s (captured {captured:.3f} s, kept {frames / RATE:.3f} s)")

    def take_starts(self):
        """The first frame of each take reeld opened, by its tree path (unique: the session names
        hold the cycle and a random number), counted from the session's first frame: reeld's
        log, `… path=/NAME 001 startFrame=N … take`."""
        starts = {}
        with open(self.reeld_process.log, errors="replace") as f:
            for line in f:
                if line.rstrip().endswith("] take"):
                    found = re.search(r" path=(/.*?) startFrame=(-?\d+) ", line)
                    if found:
                        starts[found.group(1)] = int(found.group(2))
        return starts

    def check_triggered(self, takes, codec, captured, open_take):
        """The takes of a triggered session cut by the power: each decodes to the length the tree
        says, the lossless ones hold exactly the input (the ramp with silences) from their first
        frame, and the take open at the cut lost at most --max-loss against what it had
        captured (the session's captured time less the take's first frame)."""
        where = f"cycle {self.cycle}: triggered session ({codec}, {len(takes)} takes)"
        self.stats["takes cut"] += 1 if open_take else 0
        starts = self.take_starts()
        for item in takes:
            path = self.audio_file(item)
            if not os.path.exists(path):
                continue  # reported by the listing check
            samples = self.decode_take(item, codec, where)
            if samples is None:
                continue
            frames = len(samples) // 2
            if abs(round((item.get("duration") or 0) * RATE) - frames) > (0 if codec in LOSSLESS else 960):
                self.fail(f"{where}: {item['path']}: the tree says {item.get('duration') or 0:.4f} s, "
                          f"the file decodes to {frames / RATE:.4f} s")
            start = starts.get(item["path"])
            if start is None:
                if item is takes[-1]:
                    # Opened as the power went: reeld logs a take once its row and file are
                    # synced, and the cut came between the two (its audio was never synced).
                    self.stats["triggered takes opened at the cut"] = self.stats.get("triggered takes opened at the cut", 0) + 1
                    continue
                self.fail(f"{where}: {item['path']}: reeld's log names no first frame for it")
                continue
            self.stats["triggered takes checked"] = self.stats.get("triggered takes checked", 0) + 1
            if codec in LOSSLESS:
                expected = self.gaps[max(0, start) * 2:max(0, start) * 2 + len(samples)]
                if start < 0 or samples != expected:
                    first = next((i for i in range(0, len(samples), 2) if samples[i:i + 2] != expected[i:i + 2]), 0) // 2
                    self.fail(f"{where}: {item['path']}: frame {first} of {frames} is not the input's "
                              f"frame {start + first} (the take's first is {start})")
            if item["id"] == open_take:
                loss = captured - start / RATE - frames / RATE
                self.losses.append((loss, codec + " triggered"))
                if loss > self.max_loss:
                    self.fail(f"{where}: {item['path']} lost {loss:.3f} s (captured {captured - start / RATE:.3f} s, "
                              f"kept {frames / RATE:.3f} s)")

    def check_after_restart(self, in_flight, cut_take):
        m = self.model
        rpc = self.reeld_process.rpc
        tree = self.tree(rpc)
        uncertain = set().union(*(ids for _, ids in in_flight)) if in_flight else set()
        where = f"cycle {self.cycle}"
        # Every answered change survived.
        for item_id, expected in m.items.items():
            if item_id in uncertain:
                continue
            actual = tree.get(item_id)
            if actual is None:
                self.fail(f"{where}: answered {expected['kind']} {expected['name']} ({item_id}) is gone")
                continue
            if (actual["parent"], actual["name"]) != (expected["parent"], expected["name"]):
                self.fail(f"{where}: {item_id} is {actual['name']} in {actual['parent']}, "
                          f"answered as {expected['name']} in {expected['parent']}")
        for item_id in m.deleted - uncertain:
            if item_id in tree:
                self.fail(f"{where}: {tree[item_id]['path']} is back after its deletion was answered")
        # A segmented session cut: its takes join into the ramp and lose at most --max-loss.
        # A triggered one: each take holds the input from its first frame, the open one lost
        # at most --max-loss.
        series_ids = set()
        if cut_take and isinstance(cut_take[0], tuple):
            kind, folder, name, codec = cut_take[0]
            takes = sorted((i for i in tree.values() if i["kind"] == "recording" and i["parent"] == folder
                            and i["name"].startswith(name + " ") and i["name"][len(name) + 1:].isdigit()),
                           key=lambda i: int(i["name"][len(name) + 1:]))
            series_ids = {i["id"] for i in takes}
            if kind == "triggered":
                self.check_triggered(takes, codec, cut_take[1], cut_take[3])
            else:
                self.check_series(takes, codec, cut_take[1])
        # Every listed recording has its file, and it decodes.
        audio = os.path.join(self.data, "audio")
        for item in tree.values():
            if item["kind"] != "recording":
                continue
            path = self.audio_file(item)
            if not os.path.exists(path) or not item.get("size"):
                self.fail(f"{where}: {item['path']} is listed without its audio file ({os.path.basename(path)})")
                continue
            codec = item["format"]["codec"]
            if item["id"] in m.imports:
                if m.verified.get(item["id"]) is None:
                    with open(path, "rb") as a, open(m.imports[item["id"]], "rb") as b:
                        if a.read() != b.read():
                            self.fail(f"{where}: import {item['path']} does not hold the source's bytes")
                    m.verified[item["id"]] = os.path.getsize(path)
            elif item["id"] in series_ids:
                m.verified[item["id"]] = os.path.getsize(path)
            elif cut_take and item["id"] == cut_take[0]:
                self.stats["takes cut"] += 1
                self.check_take(item, cut_take[2], captured=cut_take[1])
            elif item["id"] in m.takes and m.takes[item["id"]]["frames"] is not None:
                if m.verified.get(item["id"]) != os.path.getsize(path):
                    self.stats["takes finished"] += 1
                    self.check_take(item, m.takes[item["id"]]["codec"], expected_frames=m.takes[item["id"]]["frames"])
            elif m.verified.get(item["id"]) != os.path.getsize(path):
                # A take whose start or stop was never answered, or an import in flight.
                samples, complaints = self.decode(path)
                if complaints and not item.get("duration") and codec in ("opus", "vorbis"):
                    self.stats["empty ogg takes"] = self.stats.get("empty ogg takes", 0) + 1
                    complaints = ""  # headers only: see check_take
                if complaints:
                    self.fail(f"{where}: {item['path']} does not decode cleanly: {complaints[:300]}")
                m.verified[item["id"]] = os.path.getsize(path)
        self.check_chapters(rpc, tree, where)
        found = os.path.join(self.data, "lost+found")
        self.stats["strays"] = len(os.listdir(found)) if os.path.isdir(found) else 0
        if os.path.isdir(audio):
            listed = {os.path.basename(self.audio_file(i)) for i in tree.values() if i["kind"] == "recording"}
            unlisted = [n for n in os.listdir(audio) if n not in listed]
            if unlisted:
                self.fail(f"{where}: files in audio/ that no recording lists after the restart: {unlisted[:5]}")
        # From now on the model is what is there (the unanswered request may have gone either way).
        with m.lock:
            m.items = {i: {"kind": t["kind"], "parent": t["parent"], "name": t["name"]} for i, t in tree.items()}
            m.deleted = {i for i in m.deleted if i not in tree}
            for i, t in tree.items():
                if t["kind"] == "recording" and i in m.takes and m.takes[i]["frames"] is None:
                    m.takes[i]["frames"] = round(t["duration"] * RATE)  # repaired: finished now
            for table in (m.takes, m.imports, m.verified):
                for i in [i for i in table if i not in tree]:
                    del table[i]
        self.stats["library changes"] = len(tree)

    # Every crash point of one operation in turn: the power goes right after its 1st sync, then
    # after its 2nd, and so on until it completes with syncs to spare.

    CRASH_OPS = ("createFolder", "rename", "move", "delete", "import", "take", "markedTake")

    def crash_setup(self, op):
        """What the operation works on, made (and answered) before the cut is armed."""
        rpc, m = self.reeld_process.rpc, self.model

        def folder(name, parent=ROOT):
            item = rpc.call("library.createFolder", {"parent": parent, "name": name})
            m.add(item)
            return item["id"]

        if op == "rename":
            return folder(f"s{self.cycle}")
        if op == "move":
            return folder(f"a{self.cycle}"), folder(f"b{self.cycle}")
        if op == "delete":
            holder = folder(f"d{self.cycle}")
            item = rpc.call("library.import", {"file": self.sources[0], "folder": holder, "name": "x"})
            m.add(item)
            m.imports[item["id"]] = self.sources[0]
            return holder
        return None

    def crash_op(self, op, target, point):
        m, name = self.model, f"c{self.cycle}"
        rpc = RPC(self.reeld_process.socket, timeout=20)
        try:
            if op == "createFolder":
                m.in_flight["crash"] = ("library.createFolder", set())
                m.add(rpc.call("library.createFolder", {"name": name}))
            elif op == "rename":
                m.in_flight["crash"] = ("library.rename", {target})
                m.items[target]["name"] = rpc.call("library.rename", {"item": target, "name": name})["name"]
            elif op == "move":
                moved, into = target
                m.in_flight["crash"] = ("library.move", {moved})
                m.items[moved]["parent"] = rpc.call("library.move", {"item": moved, "to": into})["parent"]
            elif op == "delete":
                gone = m.descendants(target)
                m.in_flight["crash"] = ("library.delete", gone)
                rpc.call("library.delete", {"item": target})
                for i in gone:
                    for table in (m.items, m.takes, m.imports, m.verified):
                        table.pop(i, None)
                m.deleted |= gone
            elif op == "import":
                source = self.sources[point % len(self.sources)]
                m.in_flight["crash"] = ("library.import", set())
                item = rpc.call("library.import", {"file": source, "name": name})
                m.add(item)
                m.imports[item["id"]] = source
            elif op == "take":
                codec = self.formats[point % len(self.formats)]
                m.in_flight["crash"] = ("recorder.start", set())
                item = rpc.call("recorder.start", {"format": codec, "name": name})["item"]
                m.add(item)
                m.takes[item["id"]] = {"codec": codec, "frames": None}
                m.in_flight["crash"] = ("recorder.stop", {item["id"]})
                time.sleep(1.3)
                done = rpc.call("recorder.stop")
                m.takes[item["id"]]["frames"] = round(done["duration"] * RATE)
            elif op == "markedTake":
                # A FLAC take with two marks: its chapters are written into its header in place
                # (through a journal) when it closes; cut at each sync of that too.
                m.in_flight["crash"] = ("recorder.start", set())
                item = rpc.call("recorder.start", {"format": "flac", "name": name})["item"]
                m.add(item)
                m.takes[item["id"]] = {"codec": "flac", "frames": None}
                m.in_flight["crash"] = ("recorder.stop", {item["id"]})
                for label in ("one", "two"):
                    time.sleep(0.5)
                    rpc.call("recorder.mark", {"label": label})
                    m.marked.setdefault(item["id"], []).append(label)
                time.sleep(0.3)
                done = rpc.call("recorder.stop")
                m.takes[item["id"]]["frames"] = round(done["duration"] * RATE)
            m.in_flight.pop("crash", None)
            return "answered"
        except RPC.ReplyError as error:
            return f"answered with an error ({error})"  # the change may or may not be there
        except ConnectionError as error:
            return f"unanswered ({error})"
        finally:
            rpc.close()

    def crash_points(self, ops, limit=40):
        for op in ops:
            for point in range(1, limit + 1):
                self.cycle += 1
                target = self.crash_setup(op)
                # reeld stops with the disk (as with a real cut, it answers nothing after it).
                self.fs.cut_after(point, stop_caller=True)
                result = {}
                worker = threading.Thread(
                    target=lambda: result.setdefault("outcome", self.crash_op(op, target, point)), daemon=True)
                worker.start()
                while worker.is_alive() and not self.fs.is_cut():
                    time.sleep(0.02)
                reached = self.fs.is_cut()
                self.power_cut()
                worker.join(30)
                outcome = result.get("outcome", "unanswered")
                in_flight = list(self.model.in_flight.values())
                self.model.in_flight = {}
                self.fs.unmount()
                log(f"cycle {self.cycle}: {op}, cut after its sync {point}: {outcome}"
                    if reached else f"cycle {self.cycle}: {op} done with {point - 1} syncs; cut after it")
                self.boot()
                self.check_after_restart(in_flight, None)
                self.stats["crash points"] = self.stats.get("crash points", 0) + 1
                if not reached:
                    break

    # The whole run

    def boot(self, capture="feed"):
        self.fs = cutfs.CutFS(self.cutfs_binary, self.backing, self.mnt, log=os.path.join(self.work, "cutfs.log"))
        self.fs.mount()
        self.check_database_as_left()
        self.reeld_process = Reeld(self, capture)

    def run(self, cuts, crash_ops=()):
        self.prepare()
        try:
            self.boot()
            if crash_ops:
                self.crash_points(crash_ops)
            random_cuts = 0
            mode = self.random.choice(self.modes)
            while random_cuts < cuts and len(self.failures) <= 20:
                random_cuts += 1
                self.cycle += 1
                if self.reeld_process.capture != mode.capture:
                    # Another input (the triggered mode's has silences): reeld starts again on it.
                    self.reeld_process.terminate()
                    self.reeld_process = Reeld(self, mode.capture)
                in_flight, cut_take = self.run_cycle(mode)
                # The next cycle's mode now: reeld restarts on its input.
                mode = self.random.choice(self.modes)
                self.boot(mode.capture)
                self.check_after_restart(in_flight, cut_take)
            self.reeld_process.terminate()
        finally:
            if self.reeld_process:
                self.reeld_process.kill()
            if self.fs:
                self.fs.unmount()
        worst = max(self.losses, default=(0.0, "-"))
        cut_losses = sorted(loss for loss, _ in self.losses)
        median = cut_losses[len(cut_losses) // 2] if cut_losses else 0.0
        print(f"powercut: {self.cycle} cuts ({self.stats.get('crash points', 0)} at every crash point of "
              f"{len(crash_ops)} operations, {self.cycle - self.stats.get('crash points', 0)} at random moments), "
              f"{len(self.losses)} during a take "
              f"(worst loss {worst[0]:.3f} s, {worst[1]}; median {median:.3f} s), "
              f"{self.stats['takes finished']} finished takes checked, {len(self.model.items)} items at the end, "
              f"{self.stats['strays']} files in lost+found, {self.stats.get('ESTALE from cutfs', 0)} ESTALE from cutfs; "
              f"{len(self.failures)} failures")
        armed, recording = (self.stats.get(f"triggered sessions cut while {s}", 0) for s in ("armed", "recording"))
        if armed or recording:
            print(f"powercut: triggered sessions cut: {armed} while armed, {recording} with a take open; "
                  f"{self.stats.get('triggered takes checked', 0)} of their takes checked against the input")
        with_chapters, without = (self.stats.get(f"marked takes {s} chapters", 0) for s in ("with", "without"))
        if with_chapters or without:
            log_path = os.path.join(self.work, "reeld.log")
            with open(log_path, errors="replace") as log_file:
                journals = log_file.read().count("finished writing a recording's chapters, cut short by a crash")
            print(f"powercut: marked FLAC takes checked {with_chapters} times with all their chapters, {without} "
                  f"times with none; {journals} chapter journals finished at start")
        for codec in sorted({c for _, c in self.losses}):
            values = sorted(loss for loss, c in self.losses if c == codec)
            print(f"powercut: {codec}: {len(values)} cut takes, loss median {values[len(values) // 2]:.3f} s, "
                  f"max {values[-1]:.3f} s")
        return not self.failures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--cutfs", required=True)
    parser.add_argument("--work", required=True, help="an empty directory for the disk, the mount and logs")
    parser.add_argument("--cuts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--modes", default="plain,library,mixed,segmented,triggered", help=f"any of {', '.join(MODES)}")
    parser.add_argument("--crash-points", default="",
                        help=f"first cut at every sync of these operations in turn ({', '.join(Harness.CRASH_OPS)}, or all)")
    parser.add_argument("--formats", default="flac,wav,ogg,opus")
    parser.add_argument("--max-loss", type=float, default=1.5,
                        help="seconds a cut take may lose: the half second between syncs, the writer's drain and "
                        "the encoder's lag, with a margin for a loaded machine (the bound counts the time from "
                        "the last status to the cut)")
    args = parser.parse_args()
    if args.seed is None:
        args.seed = random.randrange(10**9)
    for name in args.modes.split(","):
        if name not in MODES:
            parser.error(f"unknown mode {name}; modes are {', '.join(MODES)}")
    if not os.environ.get("PULSE_SERVER"):
        parser.error("PULSE_SERVER must name the PulseAudio that paces the capture")
    log(f"seed {args.seed} (--seed {args.seed} repeats the choices, not the timing)")
    crash_ops = Harness.CRASH_OPS if args.crash_points == "all" else [o for o in args.crash_points.split(",") if o]
    for op in crash_ops:
        if op not in Harness.CRASH_OPS:
            parser.error(f"unknown operation {op}; operations are {', '.join(Harness.CRASH_OPS)}")
    ok = Harness(args).run(args.cuts, crash_ops)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
