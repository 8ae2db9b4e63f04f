#!/usr/bin/env python3
"""The Python half of bench/snapcast (standard library only): Reel's Snapcast output and MPD's
fifo output on the same pipe setup, a real snapserver reading the pipe, in one run.

  snapcast.py --reeld BIN --bench BIN --work DIR --rounds N --seconds S

Prints, per daemon, the median (min–max) over the rounds of:
- CPU per audio second (the process CPU clock over an S-second window, 3 s after play) with the
  ALSA output alone, the pipe alone, and both, for a 48 kHz FLAC file and a 44.1 kHz one (which
  the pipe's 48000:16:2 resamples: libsoxr's "high quality" recipe in both daemons);
- across a snapserver restart (SIGKILL, 2 s away, started again): how long from its start until
  it reads audio again (its log's `idle => playing`), what the pipe held when it came back
  (audio it reads first), and how much of that was older than what the daemon was playing then;
and the resampler alone (`reel-bench resample`, 60 s of 44.1 kHz stereo to 48 kHz).
"""
import datetime
import fcntl
import os
import signal
import socket
import statistics
import struct
import subprocess
import sys
import termios
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import process_cpu_ns  # noqa: E402
from measuring import RPC, options as parse_options  # noqa: E402

LEAD_MS = 150  # Reel's lead: what its pipe holds ahead of the frame heard now


def fail(message):
    print(f"bench/snapcast: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[bench/snapcast {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    fail(f"timed out waiting for {what}")


def fifo_queued(path):
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
    finally:
        os.close(fd)


def stop(process):
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Snapserver:
    """snapserver reading `fifo` (mode=read: the daemon makes it), private ports, log in a file."""

    def __init__(self, work, fifo, name):
        self.dir = os.path.join(work, name)
        os.makedirs(os.path.join(self.dir, "data"), exist_ok=True)
        self.fifo = fifo
        self.log = os.path.join(self.dir, "snapserver.log")
        self.process = None

    def start(self):
        conf = os.path.join(self.dir, "snapserver.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                "[server]", f"datadir = {self.dir}/data", "[http]", "enabled = false",
                "[tcp]", "enabled = true", "bind_to_address = 127.0.0.1", f"port = {free_port()}",
                "[stream]", "bind_to_address = 127.0.0.1", f"port = {free_port()}",
                f"source = pipe://{self.fifo}?name=bench&sampleformat=48000:16:2&mode=read&codec=pcm",
                "[logging]", f"sink = file:{self.log}", "filter = *:info", ""]))
        open(self.log, "w").close()
        self.started = time.time()
        self.process = subprocess.Popen(["snapserver", "-c", conf], stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return self

    def playing_at(self):
        """When its log says the stream went from idle to playing (wall clock), else None."""
        with open(self.log, errors="replace") as f:
            for line in f:
                if "idle => playing" in line:
                    stamp = line[:23]
                    return datetime.datetime.strptime(stamp, "%Y-%m-%d %H-%M-%S.%f").timestamp()
        return None

    def kill(self):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self):
        stop(self.process)


class Reel:
    name = "Reel"

    def __init__(self, binary, work, music, fifo):
        self.dir = os.path.join(work, "reel")
        os.makedirs(self.dir, exist_ok=True)
        self.music, self.fifo = music, fifo
        conf = os.path.join(self.dir, "reeld.toml")
        with open(conf, "w") as f:
            f.write(f'[[outputs]]\ntype = "alsa"\n\n[[outputs]]\ntype = "snapcast"\npath = "{fifo}"\n')
        self.socket = os.path.join(self.dir, "reel.sock")
        # Through a link of another name: a `pkill reeld` elsewhere cannot stop it mid-run.
        link = os.path.join(self.dir, "reel-daemon")
        os.symlink(binary, link)
        self.process = subprocess.Popen(
            [link, "--config", conf, "--socket", self.socket, "--data-dir", os.path.join(self.dir, "data"),
             "--device", "pulse", "--mpd-listen", "none", "--http-listen", "none", "--log-level", "warning"],
            stdin=subprocess.DEVNULL, stdout=open(os.path.join(self.dir, "log"), "ab"), stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        self.rpc = wait_for(self._connect, 30, "reeld to answer")

    def _connect(self):
        try:
            return RPC(self.socket)
        except OSError:
            if self.process.poll() is not None:
                fail("reeld exited")
            return None

    def outputs(self, alsa, pipe):
        for id, on in ((0, alsa), (1, pipe)):
            self.rpc.call("outputs.enable" if on else "outputs.disable", {"id": id})

    def play(self, file):
        self.rpc.call("player.play", {"file": os.path.join(self.music, file)})

    def playing(self):
        return self.rpc.call("player.status")["state"] == "playing"

    def stop_playing(self):
        self.rpc.call("player.stop")

    def pipe_connected(self):
        return self.rpc.call("outputs.list")["outputs"][1]["status"] == "connected"

    def stop(self):
        stop(self.process)


class MPD:
    name = "MPD"

    def __init__(self, work, music, fifo):
        self.dir = os.path.join(work, "mpd")
        os.makedirs(self.dir, exist_ok=True)
        self.socket = os.path.join(self.dir, "mpd.sock")
        conf = os.path.join(self.dir, "mpd.conf")
        with open(conf, "w") as f:
            f.write("\n".join([
                f'music_directory "{music}"', f'db_file "{self.dir}/db"', f'state_file "{self.dir}/state"',
                f'playlist_directory "{self.dir}"', f'log_file "{self.dir}/log"', f'bind_to_address "{self.socket}"',
                'zeroconf_enabled "no"', 'auto_update "no"',
                # The same resampler and recipe as Reel's pipe: libsoxr, "high quality".
                'resampler {\n  plugin "soxr"\n  quality "high"\n}',
                'audio_output {\n  type "alsa"\n  name "pulse"\n  device "pulse"\n  mixer_type "none"\n}',
                f'audio_output {{\n  type "fifo"\n  name "snapcast"\n  path "{fifo}"\n  format "48000:16:2"\n}}', ""]))
        self.process = subprocess.Popen(["mpd", "--no-daemon", conf], stdin=subprocess.DEVNULL,
                                        stdout=open(os.path.join(self.dir, "stderr"), "ab"), stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        wait_for(lambda: os.path.exists(self.socket) and self._try("ping") is not None, 30, "MPD to answer")
        self.command("update")
        wait_for(lambda: "updating_db" not in self.command("status"), 60, "MPD's database update")

    def _try(self, line):
        try:
            return self.command(line)
        except OSError:
            return None

    def command(self, line):
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(30)
            s.connect(self.socket)
            reply = b""
            while not reply.endswith(b"\n"):
                reply += s.recv(4096)
            s.sendall(line.encode() + b"\n")
            reply = b""
            while not (reply.endswith(b"OK\n") or b"ACK [" in reply):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            text = reply.decode()
            if "ACK [" in text:
                raise RuntimeError(f"MPD: {line}: {text.strip()}")
            return text

    def outputs(self, alsa, pipe):
        for id, on in ((0, alsa), (1, pipe)):
            self.command(f"{'enableoutput' if on else 'disableoutput'} {id}")

    def play(self, file):
        self.command("clear")
        self.command(f'add "{file}"')
        self.command("play")

    def playing(self):
        return "state: play" in self.command("status")

    def stop_playing(self):
        self.command("stop")

    def stop(self):
        stop(self.process)


def cpu_window(daemon, file, seconds):
    daemon.play(file)
    time.sleep(3)
    if not daemon.playing():
        return None
    c0, t0 = process_cpu_ns(daemon.pid), time.monotonic()
    time.sleep(seconds)
    c1, t1 = process_cpu_ns(daemon.pid), time.monotonic()
    still = daemon.playing()
    daemon.stop_playing()
    time.sleep(0.5)
    return (c1 - c0) / 1e6 / (t1 - t0) if still else None


def restart(daemon, file, work, fifo, round):
    """Plays `file` to the pipe alone, with snapserver reading; kills snapserver, waits 2 s, starts
    it again. Returns (seconds until it read audio again, ms of audio the pipe held then, ms of it
    older than the frame being played)."""
    daemon.outputs(alsa=False, pipe=True)
    first = Snapserver(work, fifo, f"snap-{daemon.name}-{round}-a").start()
    daemon.play(file)
    wait_for(first.playing_at, 20, "snapserver to read audio")
    time.sleep(2)
    first.kill()
    time.sleep(2)
    held_ms = fifo_queued(fifo) / (48000 * 4) * 1000
    second = Snapserver(work, fifo, f"snap-{daemon.name}-{round}-b").start()
    came = wait_for(second.playing_at, 20, "the restarted snapserver to read audio")
    delay = came - second.started
    second.stop()
    daemon.stop_playing()
    # Reel writes at most its lead ahead of the frame heard, and keeps nothing more when nobody
    # reads: what it held is due from now on. MPD's fifo output writes each chunk when its timer
    # says it plays (no lead), so what it held was all audio from before.
    stale_ms = max(0.0, held_ms - LEAD_MS) if daemon.name == "Reel" else held_ms
    return delay, held_ms, stale_ms


def spread(values):
    values = [v for v in values if v is not None]
    if not values:
        return "not measured"
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main(argv):
    o = parse_options(list(argv), ["reeld", "bench", "work", "rounds", "seconds"], fail)
    work, rounds, seconds = o["work"], int(o["rounds"]), int(o["seconds"])
    music = os.path.join(work, "music")
    os.makedirs(music, exist_ok=True)
    length = seconds + 10
    for rate in (48000, 44100):
        log(f"generating {length} s of {rate} Hz stereo 16-bit music as FLAC")
        subprocess.run(["sox", "-c", "4", "-r", str(rate), "-n", "-c", "2", "-b", "16", f"{music}/music-{rate}.flac",
                        "synth", str(length), "sine", "220", "sine", "277.18", "sine", "329.63", "pinknoise",
                        "remix", "1v0.3,2v0.2,4v0.08", "3v0.3,2v0.2,4v0.08", "tremolo", "4", "30"], check=True)
    fifo = os.path.join(work, "snapfifo")
    cases = [("ALSA only", True, False), ("pipe only", False, True), ("both", True, True)]
    files = [("48 kHz", "music-48000.flac"), ("44.1 kHz", "music-44100.flac")]
    cpu = {}
    restarts = {}
    for round in range(rounds):
        order = ["Reel", "MPD"] if round % 2 == 0 else ["MPD", "Reel"]
        for name in order:
            if os.path.exists(fifo):
                os.unlink(fifo)
            daemon = Reel(o["reeld"], os.path.join(work, f"r{round}"), music, fifo) if name == "Reel" \
                else MPD(os.path.join(work, f"r{round}"), music, fifo)
            reader = Snapserver(work, fifo, f"reader-{name}-{round}").start()
            try:
                for case, alsa, pipe in cases:
                    daemon.outputs(alsa, pipe)
                    for label, file in files:
                        value = cpu_window(daemon, file, seconds)
                        log(f"round {round + 1}/{rounds} {name} {case} {label}: "
                            f"{'not playing' if value is None else f'{value:.3f} ms per audio second'}")
                        cpu.setdefault((name, case, label), []).append(value)
                reader.stop()
                result = restart(daemon, "music-44100.flac", work, fifo, round)
                log(f"round {round + 1}/{rounds} {name} restart: audio again after {result[0]:.3f} s, "
                    f"pipe held {result[1]:.0f} ms, {result[2]:.0f} ms of it stale")
                restarts.setdefault(name, []).append(result)
            finally:
                reader.stop()
                daemon.stop()
    resample = subprocess.run([o["bench"], "resample", "--seconds", "60"], capture_output=True, text=True, check=True)
    fields = dict(kv.split("=", 1) for kv in resample.stdout.split())

    print()
    print(f"Snapcast outputs, {rounds} round(s) A/B, {seconds} s CPU windows; ALSA device pulse -> private "
          f"PulseAudio null sink; pipe 48000:16:2 read by snapserver 0.26; median (min–max)")
    head = ("figure", "Reel", "MPD", "Reel/MPD")
    rows = []
    for case, _, _ in cases:
        for label, _ in files:
            r = [v for v in cpu[("Reel", case, label)] if v is not None]
            m = [v for v in cpu[("MPD", case, label)] if v is not None]
            ratio = f"{statistics.median(r) / statistics.median(m):.2f}×" if r and m else "–"
            rows.append((f"CPU ms per audio second, {case}, {label} FLAC", spread(r), spread(m), ratio))
    for index, what in ((0, "restart: s until snapserver reads audio again"),
                        (1, "restart: ms of audio in the pipe when it came back"),
                        (2, "restart: ms of it older than the frame playing (stale)")):
        r = [x[index] for x in restarts.get("Reel", [])]
        m = [x[index] for x in restarts.get("MPD", [])]
        rows.append((what, spread(r), spread(m), "–"))
    rows.append(("resampler alone, 44.1→48 kHz stereo, ms per audio second (target ≤ 1)",
                 fields.get("ms_per_audio_second", "?"), "–", "–"))
    widths = [max(len(str(row[i])) for row in rows + [head]) for i in range(4)]
    for row in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


if __name__ == "__main__":
    main(sys.argv[1:])
