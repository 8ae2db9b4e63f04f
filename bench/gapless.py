"""The measuring half of bench/gapless (the shell half installs, builds and starts PulseAudio).

The test signal numbers its frames: frame i is left = (i & 0x7fff) - 16384, right = 1000 + (i >> 15),
so every frame of the whole signal is different and a captured frame says which one it is (a
frame that decodes to no index — silence, say — was not in the signal). The signal is cut into
files at random lengths; the files are queued in order and played from the first entry; the
output is captured and decoded frame by frame, and every frame inserted or dropped is placed at
the junction (or inside the file) where it happened.

Every process started here is tracked and stopped on the way out. A figure that cannot be
measured is printed as "not measured: why", never guessed.
"""
import argparse
import array
import bisect
import json
import math
import os
import random
import re
import select
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time
import wave

from compare import Recorder
from measuring import RPC, Reeld, load_average, percentile

RATE = 44100
RIGHT_BASE = 1000  # the right channel never falls below this: the signal is never silent
daemons = []  # Reeld objects to stop at exit
recorders = []


def log(text):
    print(f"[bench/gapless {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def say(text=""):
    print(text, flush=True)


class Dating:
    """Dates the recorded frames. The null sink renders a block when its first frame is due and
    the monitor hands it over at once, so the read that arrived earliest relative to the frame
    count dates the frames (bench/compare's method); here the earliest read within ±`span` s of
    the moment in question, because the sink's frame clock drifts against CLOCK_MONOTONIC
    (hundreds of ppm on this VM), which over a minute would move a single dating by tens of ms."""

    def __init__(self, recorder, span=0.5):
        self.times = [t for t, _ in recorder.reads]
        self.offsets = [t - (n // 4) / RATE for t, n in recorder.reads]
        self.span = span

    def base(self, t):
        lo = bisect.bisect_left(self.times, t - self.span)
        hi = bisect.bisect_right(self.times, t + self.span)
        return min(self.offsets[lo:hi] or self.offsets)

    def time_of(self, frame, near):
        return self.base(near) + frame / RATE

    def frame_at(self, t):
        return int(round((t - self.base(t)) * RATE))

    def drift_ppm(self):
        """The frame clock against CLOCK_MONOTONIC: the earliest reads of the first and last 2 s."""
        if not self.times or self.times[-1] - self.times[0] < 10:
            return None
        first = self.base(self.times[0] + 1.0)
        last = self.base(self.times[-1] - 1.0)
        return (first - last) / ((self.times[-1] - 1.0) - (self.times[0] + 1.0)) * 1e6

    def spread_ms(self):
        """How late reads arrive after the earliest one near them: p50 and p99, in ms."""
        late = [(o - self.base(t)) * 1000 for t, o in zip(self.times[::10], self.offsets[::10])]
        return percentile(late, 50), percentile(late, 99)


def start_reeld(binary, directory, device):
    daemon = Reeld(binary, directory, device, log_level="debug")
    daemons.append(daemon)
    return daemon


# --- the numbered signal ---------------------------------------------------------------------

def signal(start, count):
    """Frames start ..< start + count of the numbered signal, as s16le interleaved stereo."""
    samples = array.array("h", bytes(4 * count))
    samples[0::2] = array.array("h", [(i & 0x7FFF) - 16384 for i in range(start, start + count)])
    samples[1::2] = array.array("h", [RIGHT_BASE + (i >> 15) for i in range(start, start + count)])
    if sys.byteorder != "little":
        samples.byteswap()
    return samples.tobytes()


def decode(data, total):
    """Per captured frame: the index of the signal frame it is, or -1 (not a frame of the signal)."""
    samples = array.array("h")
    samples.frombytes(data[: len(data) // 4 * 4])
    if sys.byteorder != "little":
        samples.byteswap()
    top = RIGHT_BASE + ((total - 1) >> 15)
    indices = []
    append = indices.append
    for left, right in zip(samples[0::2], samples[1::2]):
        if RIGHT_BASE <= right <= top:
            index = ((right - RIGHT_BASE) << 15) | (left + 16384)
            append(index if index < total else -1)
        else:
            append(-1)
    return indices


def make_files(directory, lengths, flac):
    """Writes part-NNN.wav (and .flac) holding consecutive stretches of the signal; returns the
    whole signal's bytes."""
    os.makedirs(directory, exist_ok=True)
    whole = bytearray()
    start = 0
    for number, length in enumerate(lengths, 1):
        data = signal(start, length)
        whole += data
        path = os.path.join(directory, f"part-{number:03d}.wav")
        with wave.open(path, "wb") as w:
            w.setnchannels(2)
            w.setsampwidth(2)
            w.setframerate(RATE)
            w.writeframes(data)
        start += length
    if flac:
        names = [os.path.join(directory, f"part-{n:03d}.wav") for n in range(1, len(lengths) + 1)]
        subprocess.run(["flac", "--silent", "--force", "-8", *names], check=True)
    return bytes(whole)


def random_lengths(rng, count, low, high):
    """`count` frame counts from `low` to `high` s, none a multiple of 64 frames or of 10 ms."""
    lengths = []
    while len(lengths) < count:
        n = rng.randint(int(low * RATE), int(high * RATE))
        if n % 64 and n % 441:
            lengths.append(n)
    return lengths


# --- comparing an output with the signal -------------------------------------------------------

class Comparison:
    """The captured frames against the signal 0 ..< total, junction by junction.

    Walking the captured frames in order: a frame that is the one after the previous good frame
    is good; a frame that is not a frame of the signal, or repeats or goes back, is inserted; a
    jump forward drops the frames skipped. Each fault is placed at the signal frame it happened
    before: a junction when that is a file's first frame, else inside a file."""

    def __init__(self, indices, total, junctions, trim_silence):
        self.total = total
        self.junctions = junctions  # the first frame of files 2 … n
        self.lead = self.tail = 0
        if trim_silence:
            # Before the first frame of the signal and after its last: the device's silence.
            while self.lead < len(indices) and indices[self.lead] == -1:
                self.lead += 1
            end = len(indices)
            while end > self.lead and indices[end - 1] == -1:
                end -= 1
            self.tail = len(indices) - end
            indices = indices[self.lead:end]
        self.captured = len(indices)
        self.inserted = {}  # signal frame → frames inserted before it
        self.inserted_silent = 0
        self.dropped = {}  # signal frame → frames dropped from it on
        expected = 0
        for index in indices:
            if index == expected:
                expected += 1
            elif index > expected:
                self.dropped[expected] = self.dropped.get(expected, 0) + index - expected
                expected = index + 1
            else:
                self.inserted[expected] = self.inserted.get(expected, 0) + 1
                if index == -1:
                    self.inserted_silent += 1
        if expected < total:
            self.dropped[expected] = self.dropped.get(expected, 0) + total - expected
        self.good_fraction = 0 if not indices else sum(1 for i in indices if i != -1) / len(indices)

    def where(self, frame):
        """'junction k (files k | k+1)' or 'inside file k, frame f of it'."""
        if frame == 0:
            return "at the start (file 1's first frame)"
        starts = [0] + self.junctions
        k = max(i for i, s in enumerate(starts) if s <= frame) if frame < self.total else len(starts) - 1
        if frame == starts[k] and k > 0:
            return f"junction {k} (file {k} → {k + 1})"
        if frame >= self.total:
            return "after the last frame"
        return f"inside file {k + 1}, {frame - starts[k]} frames in"

    def faults(self):
        rows = []
        for frame, n in sorted(self.inserted.items()):
            rows.append((frame, f"{self.where(frame)}: {n:,} frames inserted"))
        for frame, n in sorted(self.dropped.items()):
            rows.append((frame, f"{self.where(frame)}: {n:,} frames dropped"))
        return [text for _, text in sorted(rows)]

    def junction_faults(self):
        at = set(self.junctions)
        return sorted({f for f in list(self.inserted) + list(self.dropped) if f in at})

    def report(self, indent="  "):
        inserted = sum(self.inserted.values())
        dropped = sum(self.dropped.values())
        at = set(self.junctions)
        inserted_j = sum(n for f, n in self.inserted.items() if f in at)
        dropped_j = sum(n for f, n in self.dropped.items() if f in at)
        say(f"{indent}frames inserted at the {len(self.junctions)} junctions: {inserted_j:,}; dropped: {dropped_j:,}"
            f"   (target 0 and 0)")
        say(f"{indent}frames inserted anywhere: {inserted:,} ({self.inserted_silent:,} of them not signal frames); "
            f"dropped anywhere: {dropped:,}")
        faults = self.faults()
        if faults:
            say(f"{indent}junctions with a fault: {len(self.junction_faults())} of {len(self.junctions)}; "
                f"every fault ({len(faults)}):")
            for text in faults[:40]:
                say(f"{indent}  {text}")
            if len(faults) > 40:
                say(f"{indent}  … and {len(faults) - 40} more")
        else:
            say(f"{indent}junctions with a fault: 0 of {len(self.junctions)}")


class Watcher:
    """A second connection subscribed to the player stream: every player.state push, with the
    time it arrived, kept until `stop()`."""

    def __init__(self, path):
        self.rpc = RPC(path)
        self.pushes = []  # (monotonic time, params)
        self.rpc.call("subscribe", {"stream": "player", "interval": 1})
        # The current value comes right after the reply: taken here, so that every push kept
        # is a change or a tick.
        while b"\n" not in self.rpc.buffer:
            self.rpc.buffer += self.rpc.sock.recv(1 << 16)
        line, self.rpc.buffer = self.rpc.buffer.split(b"\n", 1)
        self.initial = json.loads(line).get("params")
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        sock = self.rpc.sock
        sock.settimeout(0.2)
        buffer = self.rpc.buffer
        while self.running:
            try:
                chunk = sock.recv(1 << 16)
            except socket.timeout:
                continue
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("method") == "player.state":
                    self.pushes.append((time.monotonic(), message["params"]))

    def stop(self):
        self.running = False
        self.thread.join(timeout=2)
        self.rpc.close()


def play_queue(daemon, files, timeout, settle):
    """Queues `files`, plays the first entry and waits until the queue has ended: stopped with
    no entry for `settle` s on end. Returns (seconds from the play command to the first sight of
    that end, the highest `underruns` seen, the entries' ids, the player stream's pushes)."""
    rpc = daemon.rpc
    rpc.call("queue.clear")
    ids = []
    for path in files:
        ids += [e["id"] for e in rpc.call("queue.add", {"file": path})["entries"]]
    mixer = rpc.call("mixer.status")
    if mixer.get("volume") != 100 or mixer.get("muted"):
        rpc.call("mixer.setVolume", {"volume": 100})
        rpc.call("mixer.setMuted", {"muted": False})
    underruns = rpc.call("player.status").get("underruns", 0)
    watcher = Watcher(daemon.socket)
    try:
        t0 = time.monotonic()
        rpc.call("player.play", {"entry": ids[0]})
        deadline = t0 + timeout
        ended = None
        while True:
            status = rpc.call("player.status")
            underruns = max(underruns, status.get("underruns", 0))
            now = time.monotonic()
            if status["state"] == "stopped" and status.get("entry") is None:
                ended = ended or now
                if now - ended >= settle:
                    break
            else:
                ended = None
            if now > deadline:
                raise RuntimeError(f"the queue had not ended {timeout} s after the play command: {status}")
            time.sleep(0.01)
    finally:
        watcher.stop()
    pushes = [(t - t0, p) for t, p in watcher.pushes if t >= t0]
    return ended - t0, underruns, ids, pushes


def stream_report(pushes, ids, indent):
    """What a client following the player saw: `stopped` between entries (before the last
    entry), and which entries it was told about."""
    last = ids[-1]
    seen_last = False
    stops = []
    entries = []
    for t, p in pushes:
        if p.get("entry") is not None and (not entries or entries[-1] != p["entry"]):
            entries.append(p["entry"])
        if p.get("entry") == last:
            seen_last = True
        if p["state"] == "stopped" and not seen_last:
            stops.append((t, p.get("entry")))
    missing = [n for n, entry in enumerate(ids, 1) if entry not in set(entries)]
    say(f"{indent}player stream (ticks every 1 s, and changes): {len(pushes)} pushes; `stopped` before the last entry "
        f"played: {len(stops)} time(s)"
        + (f" (with entry null {sum(1 for _, e in stops if e is None)} of them)" if stops else "")
        + f"; entries it never named: {len(missing)} of {len(ids)}" + (f" (files {compact(missing)})" if missing else ""))


def started_entries(daemon):
    """From reeld's log: the files the player started itself (`play`: the play command's, and
    each one that was not lined up in time, so the device was closed and opened for it), and the
    playback device's openings."""
    lines = daemon.log_lines()
    plays = [m.group(1) for m in (re.search(r"file=(\S+) .*\] play$", line) for line in lines) if m]
    opens = [line for line in lines if "playback device opened" in line]
    return plays, opens


def device_timing(opens):
    if not opens:
        return "not in the log"
    line = opens[-1]
    period = re.search(r"period=(\d+)", line)
    buffer = re.search(r"buffer=(\d+)", line)
    if not (period and buffer):
        return line
    p, b = int(period.group(1)), int(buffer.group(1))
    return f"period {p} frames ({p * 1000 / RATE:.0f} ms), buffer {b} frames ({b * 1000 / RATE:.0f} ms)"


def late_report(plays, lengths, indent):
    """The junctions where the next file was started, not lined up: from the `play` log lines."""
    numbers = sorted({int(m.group(1)) for m in (re.search(r"part-(\d+)\.", f) for f in plays[1:]) if m})
    junctions = [n - 1 for n in numbers if n >= 2]
    say(f"{indent}junctions where the next entry was not lined up in time (so the player stopped, then started it, "
        f"closing and opening the device): {len(junctions)} of {len(lengths) - 1}"
        + (f": {compact(junctions)}" if junctions else ""))
    return junctions


def compact(numbers):
    """1, 2, 3, 5 → '1–3, 5'."""
    ranges = []
    for n in numbers:
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in ranges)


class FifoCapture:
    """The file plugin's FILE as a named pipe, read as fast as it is written: the file plugin
    opens its file with O_TRUNC whenever the device is opened, which on a regular file would
    throw away what was written before a reopening; a pipe keeps every byte, in order. The
    pipe is held open for writing here too, so a reopening is not an end of file."""

    def __init__(self, path):
        os.mkfifo(path, 0o600)
        self.fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        self.data = bytearray()
        self.running = True
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def drain(self):
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                return
            self.data += chunk

    def run(self):
        while self.running:
            select.select([self.fd], [], [], 0.1)
            self.drain()

    def stop(self):
        self.running = False
        self.thread.join(timeout=2)
        self.drain()
        os.close(self.fd)
        return bytes(self.data)


# --- (1) the file device: every byte written, unpaced --------------------------------------------

def file_device(args, parts, lengths, whole, formats):
    total = len(whole) // 4
    junctions = []
    for n in lengths[:-1]:
        junctions.append((junctions[-1] if junctions else 0) + n)
    say()
    say(f"(1) Gapless through the ALSA file plugin over null (every byte written, not paced; FILE is a named pipe "
        f"read at once): {len(lengths)} files, {len(junctions)} junctions, {total:,} frames ({total / RATE:.1f} s)")
    for ext in formats:
        say(f"  {ext.upper()} (load {load_average()} before):")
        out = os.path.join(args.work, f"out-{ext}.raw")
        capture = FifoCapture(out)
        directory = os.path.join(args.work, f"file-{ext}")
        try:
            daemon = start_reeld(args.reeld, directory, f"file:FILE={out},FORMAT=raw")
            files = [os.path.join(parts, f"part-{n:03d}.{ext}") for n in range(1, len(lengths) + 1)]
            seconds, underruns, ids, pushes = play_queue(daemon, files, 120, settle=1.0)
        except RuntimeError as error:
            say(f"    not measured: {error}")
            capture.stop()
            for d in daemons:
                d.stop()
            continue
        daemon.stop()
        data = capture.stop()
        plays, opens = started_entries(daemon)
        say(f"    the queue ended {seconds * 1000:.0f} ms after the play command; captured {len(data) // 4:,} frames "
            f"of {total:,}; byte-identical to the signal: {'yes' if data == whole else 'no'}")
        say(f"    device: {device_timing(opens)}; opened {len(opens)} time(s); underruns {underruns}")
        comparison = Comparison(decode(data, total), total, junctions, trim_silence=False)
        comparison.report("    ")
        late_report(plays, lengths, "    ")
        stream_report(pushes, ids, "    ")


# --- (1, 2) real time on the PulseAudio null sink -----------------------------------------------

def real_time(args, parts, lengths, whole, formats):
    total = len(whole) // 4
    junctions = []
    for n in lengths[:-1]:
        junctions.append((junctions[-1] if junctions else 0) + n)
    say()
    say(f"(1, 2) Gapless in real time: ALSA pulse → private PulseAudio null sink, its monitor recorded with "
        f"parec; {len(lengths)} files, {len(junctions)} junctions, {total / RATE:.1f} s")
    stream_start(args, parts, lengths[0])
    for ext in formats:
        say(f"  {ext.upper()} (load {load_average()} before):")
        directory = os.path.join(args.work, f"pulse-{ext}")
        try:
            daemon = start_reeld(args.reeld, directory, "pulse")
        except RuntimeError as error:
            say(f"    not measured: {error}")
            continue
        recorder = Recorder(args.source)
        recorders.append(recorder)
        try:
            deadline = time.monotonic() + 5
            while recorder.frames() < RATE // 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            if recorder.frames() < RATE // 2:
                raise RuntimeError("parec recorded less than 0.5 s of the monitor in 5 s")
            files = [os.path.join(parts, f"part-{n:03d}.{ext}") for n in range(1, len(lengths) + 1)]
            seconds, underruns, ids, pushes = play_queue(daemon, files, total / RATE + 60, settle=0.5)
        except RuntimeError as error:
            say(f"    not measured: {error}")
            recorder.stop()
            daemon.stop()
            continue
        recorder.stop()
        daemon.stop()
        plays, opens = started_entries(daemon)
        say(f"    load {load_average()} after; the queue ended {seconds:.2f} s after the play command "
            f"({total / RATE:.2f} s of audio); device: {device_timing(opens)}, opened {len(opens)} time(s)")
        say(f"    underruns (player.status): {underruns}   (target 0)")
        indices = decode(bytes(recorder.data), total)
        comparison = Comparison(indices, total, junctions, trim_silence=True)
        if comparison.good_fraction < 0.9:
            say(f"    the monitor is not bit-exact ({comparison.good_fraction * 100:.1f} % of the frames between the first "
                "and last sound are signal frames): counting silent runs instead")
            silence_runs(recorder, junctions, total)
        else:
            say(f"    the monitor holds the signal bit-exact: {comparison.captured:,} frames from the first signal frame "
                f"to the last ({total:,} in the signal); silence before it {comparison.lead:,} frames, after "
                f"{comparison.tail:,}")
            comparison.report("    ")
        late_report(plays, lengths, "    ")
        stream_report(pushes, ids, "    ")
        if comparison.good_fraction >= 0.9:
            position_report(pushes, ids, lengths, indices, Dating(recorder), "    ")


def position_report(pushes, ids, lengths, indices, dating, indent):
    """The player stream's (entry, position) against what the output held at the push's
    timestamp (the daemon's CLOCK_MONOTONIC, as Python's time.monotonic): the signal frame
    there, decoded from the monitor."""
    starts = {}
    frame = 0
    for entry, n in zip(ids, lengths):
        starts[entry] = frame
        frame += n
    errors = []
    for _, p in pushes:
        if p["state"] != "playing" or p.get("entry") not in starts:
            continue
        k = dating.frame_at(p["timestamp"])
        if not 0 <= k < len(indices) or indices[k] == -1:
            continue
        said = starts[p["entry"]] + p["position"] * RATE
        errors.append(((said - indices[k]) / RATE * 1000, p["entry"], p["position"], indices[k]))
    if not errors:
        say(f"{indent}player stream position against the output: not measured (no playing push fell on signal)")
        return
    magnitudes = [abs(e[0]) for e in errors]
    file_of = {entry: number for number, entry in enumerate(ids, 1)}
    ordered = sorted(starts.values())

    def file_at(frame):
        return max(k for k, start in enumerate(ordered, 1) if start <= frame)

    off = [e for e in errors if abs(e[0]) > 20]
    say(f"{indent}player stream (entry, position) against the output at the push's timestamp: |error| p50 "
        f"{percentile(magnitudes, 50):.1f} ms, max {max(magnitudes):.1f} ms over {len(errors)} playing pushes; "
        f"{len(off)} off by more than 20 ms" + (":" if off else ""))
    for error, entry, position, actual in off[:10]:
        say(f"{indent}  said file {file_of[entry]} at {position:.3f} s; the output was at file {file_at(actual)}, "
            f"{(actual - ordered[file_at(actual) - 1]) / RATE:.3f} s ({error:+.0f} ms)")


def stream_start(args, parts, length):
    """What the monitor misses at the start of any PulseAudio stream: paplay plays file 1 and the
    first signal frame at the monitor is counted."""
    if shutil.which("paplay") is None:
        say("  reference, paplay of file 1: not measured: paplay is missing")
        return
    firsts = []
    for _ in range(3):
        recorder = Recorder(args.source)
        recorders.append(recorder)
        time.sleep(0.5)
        result = subprocess.run(["paplay", os.path.join(parts, "part-001.wav")], capture_output=True, text=True)
        time.sleep(0.3)
        recorder.stop()
        if result.returncode != 0:
            say(f"  reference, paplay of file 1: not measured: {result.stderr.strip()}")
            return
        indices = decode(bytes(recorder.data), length)
        first = next((i for i in indices if i != -1), None)
        if first is None:
            say("  reference, paplay of file 1: not measured: no signal at the monitor")
            return
        firsts.append(first)
    say(f"  reference: paplay of file 1, 3 times: its first signal frame at the monitor was frame "
        f"{', '.join(str(f) for f in firsts)} (PulseAudio's monitor misses the start of a new stream)")


def silence_runs(recorder, junctions, total):
    """When the monitor is not bit-exact: runs of 2 or more near-silent frames between the first
    and the last sound (the signal's right channel never drops below RIGHT_BASE)."""
    samples = array.array("h")
    samples.frombytes(bytes(recorder.data[: recorder.frames() * 4]))
    quiet = [abs(r) < RIGHT_BASE // 4 for r in samples[1::2]]
    first = next((k for k, q in enumerate(quiet) if not q), None)
    if first is None:
        say("    no sound at the output")
        return
    last = max(k for k, q in enumerate(quiet) if not q)
    runs = []
    k = first
    while k <= last:
        if quiet[k]:
            start = k
            while quiet[k]:
                k += 1
            if k - start >= 2:
                runs.append((start - first, k - start))
        k += 1
    say(f"    sound for {(last - first + 1):,} frames ({total:,} in the signal); silent runs inside: {len(runs)}"
        + "".join(f"; {n} frames at {s / RATE:.3f} s (nearest junction {min(junctions, key=lambda j: abs(j - s)):,})"
                  for s, n in runs[:20]))


# --- (3) volume change latency ------------------------------------------------------------------

TONE_HZ = 900  # 49 frames a cycle at 44.1 kHz: RMS over one cycle does not depend on the phase
WINDOW = RATE // TONE_HZ


def with_recording(args, name, play, actions):
    """Starts reeld on pulse and parec on the monitor, plays `play` (player.play params), runs
    `actions(rpc)` and waits for the player to stop. Returns (recorder, status at the end,
    device timing) or raises RuntimeError."""
    daemon = start_reeld(args.reeld, os.path.join(args.work, name), "pulse")
    recorder = Recorder(args.source)
    recorders.append(recorder)
    try:
        deadline = time.monotonic() + 5
        while recorder.frames() < RATE // 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        if recorder.frames() < RATE // 2:
            raise RuntimeError("parec recorded less than 0.5 s of the monitor in 5 s")
        rpc = daemon.rpc
        rpc.call("mixer.setVolume", {"volume": 100})
        rpc.call("player.play", play)
        actions(rpc)
        status = rpc.call("player.status")
        deadline = time.monotonic() + 30
        while status["state"] != "stopped" and time.monotonic() < deadline:
            time.sleep(0.1)
            status = rpc.call("player.status")
        time.sleep(0.5)
    finally:
        recorder.stop()
        daemon.stop()
    _, opens = started_entries(daemon)
    return recorder, status, device_timing(opens)


def volume_latency(args):
    trials, spacing = args.trials, 2.5
    seconds = 4 + trials * 2 * spacing + 1
    tone = os.path.join(args.work, "tone.wav")
    subprocess.run(["sox", "-n", "-r", str(RATE), "-c", "2", "-b", "16", tone, "synth", str(seconds),
                    "sine", str(TONE_HZ), "vol", "0.5"], check=True)
    say()
    say(f"(3) Volume change latency: a {TONE_HZ} Hz tone at -6 dBFS through ALSA pulse → private PulseAudio null "
        f"sink; mixer.setVolume 100 → 30 and back, {trials} times each, {spacing} s apart; load {load_average()} before")
    changes = []  # (target volume, send time, reply time)

    def actions(rpc):
        time.sleep(4)
        for _ in range(trials):
            for volume in (30, 100):
                t_send = time.monotonic()
                rpc.call("mixer.setVolume", {"volume": volume})
                changes.append((volume, t_send, time.monotonic()))
                time.sleep(spacing)

    try:
        recorder, status, timing = with_recording(args, "volume", {"file": tone}, actions)
    except RuntimeError as error:
        say(f"  not measured: {error}")
        return
    say(f"  device: {timing}; underruns {status.get('underruns')}; load {load_average()} after")

    samples = array.array("h")
    samples.frombytes(bytes(recorder.data[: recorder.frames() * 4]))
    left, right = samples[0::2], samples[1::2]
    dating = Dating(recorder)
    read_starts = [n // 4 for _, n in recorder.reads]

    def arrival(frame):
        """When the read holding `frame` reached parec: no earlier than the frame was rendered."""
        return recorder.reads[bisect.bisect_right(read_starts, frame) - 1][0]

    def rms(start):
        chunk = left[start:start + WINDOW]
        return math.sqrt(sum(x * x for x in chunk) / len(chunk)) if len(chunk) == WINDOW else 0.0

    def db(x):
        return 20 * math.log10(max(x, 1e-9))

    def ms_after(t_send, frame):
        return (dating.time_of(frame, t_send) - t_send) * 1000

    figures = {v: {"first": [], "reached": [], "reached_read": [], "reply": [], "holes": []} for v in (30, 100)}
    problems = []
    for volume, t_send, t_reply in changes:
        f = figures[volume]
        f["reply"].append((t_reply - t_send) * 1000)
        s = dating.frame_at(t_send)
        before = statistics.median(rms(k) for k in range(s - int(0.3 * RATE), s - int(0.05 * RATE), WINDOW))
        after = statistics.median(rms(k) for k in range(s + int((spacing - 0.4) * RATE), s + int((spacing - 0.1) * RATE),
                                                          WINDOW))
        if before <= 0 or after <= 0 or abs(db(after) - db(before)) < 10:
            problems.append(f"volume {volume} at frame {s}: no level change "
                            f"(RMS {before:.0f} before, {after:.0f} {spacing - 0.4:.1f} s after)")
            continue
        first = reached = None
        k = s - int(0.05 * RATE)
        while k < s + int((spacing - 0.1) * RATE):
            level = rms(k)
            if first is None and abs(db(level) - db(before)) > 1:
                first = k
            if abs(db(level) - db(after)) <= 1:
                reached = reached if reached is not None else k
            else:
                reached = None
            k += WINDOW
        if first is None or reached is None:
            problems.append(f"volume {volume} at frame {s}: the level did not settle")
            continue
        f["first"].append(ms_after(t_send, first))
        f["reached"].append(ms_after(t_send, reached + WINDOW))
        f["reached_read"].append((arrival(reached + WINDOW - 1) - t_send) * 1000)
        # Digital silence: both channels exactly 0 for 3 frames or more (the tone, even at 30 %,
        # is never 0 twice in a row).
        hole = 0
        k = s - int(0.05 * RATE)
        while k < s + int(0.5 * RATE):
            if left[k] == 0 and right[k] == 0:
                start = k
                while left[k] == 0 and right[k] == 0:
                    k += 1
                if k - start >= 3:
                    hole += k - start
            k += 1
        f["holes"].append(hole)

    def line(label, values, target=""):
        if not values:
            return f"  {label}: not measured"
        return (f"  {label}: p50 {percentile(values, 50):.1f} ms, p90 {percentile(values, 90):.1f} ms, "
                f"max {max(values):.1f} ms (n={len(values)}){target}")

    for volume, name in ((30, "100 → 30"), (100, "30 → 100")):
        f = figures[volume]
        target = "   (target ≤ 100 ms)" if volume == 30 else ""
        say(line(f"{name}: sent → new level reached (within 1 dB, staying), dated by frame count", f["reached"]))
        say(line(f"{name}: sent → the read holding that frame reached parec (an upper bound)", f["reached_read"], target))
        say(line(f"{name}: sent → first change at the output (1 dB off: a hole or the ramp)", f["first"]))
        holes = f["holes"]
        if holes:
            with_hole = [h for h in holes if h]
            say(f"  {name}: digital silence (both channels 0) inserted at the change: {len(with_hole)} of {len(holes)} "
                "changes" + (f", {min(with_hole)}–{max(with_hole)} frames (p50 {percentile(with_hole, 50)}, "
                             f"{percentile(with_hole, 50) * 1000 / RATE:.1f} ms)" if with_hole else ""))
    say(line("mixer.setVolume round trip", figures[30]["reply"] + figures[100]["reply"]))
    p50, p99 = dating.spread_ms()
    drift = dating.drift_ppm()
    say(f"  dating: by the earliest parec read within ±{dating.span} s; reads arrived p50 {p50:.2f} ms, p99 {p99:.2f} ms "
        f"after it (a frame-count date can be early by about that much, a read's arrival is late by the delivery); "
        f"the sink's frame clock ran {drift:+.0f} ppm against CLOCK_MONOTONIC; RMS windows of {WINDOW * 1000 / RATE:.1f} ms"
        if drift is not None else "")
    for text in problems:
        say(f"  problem: {text}")
    loud = [abs(x) > 100 for x in left]
    if any(loud):
        first = loud.index(True)
        last = len(loud) - 1 - loud[::-1].index(True)
        say(f"  the tone lasted {(last - first + 1) / RATE:.3f} s at the output (the file: {seconds:.3f} s)")
    volume_continuity(args)


def volume_continuity(args):
    """The numbered signal through the same path with volume cycles 100 → 30 → 100: at gain 1 the
    output is the signal bit for bit, so between the last exact frame before a cycle and the first
    after it, the output's frame count against the signal's says how many frames the two changes
    inserted (or dropped)."""
    cycles, spacing, low = 6, 2.0, 1.0
    seconds = 3 + cycles * spacing + 2
    total = int(seconds * RATE)
    path = os.path.join(args.work, "numbered.wav")
    with wave.open(path, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(RATE)
        for start in range(0, total, RATE):
            w.writeframes(signal(start, min(RATE, total - start)))

    def actions(rpc):
        time.sleep(3)
        for _ in range(cycles):
            rpc.call("mixer.setVolume", {"volume": 30})
            time.sleep(low)
            rpc.call("mixer.setVolume", {"volume": 100})
            time.sleep(spacing - low)

    try:
        recorder, status, _ = with_recording(args, "volume-continuity", {"file": path}, actions)
    except RuntimeError as error:
        say(f"  continuity: not measured: {error}")
        return
    indices = decode(bytes(recorder.data), total)
    # Runs of consecutive signal frames at the output: (output position, first index, length).
    runs = []
    k = 0
    while k < len(indices):
        if indices[k] == -1:
            k += 1
            continue
        start = k
        while k + 1 < len(indices) and indices[k + 1] == indices[k] + 1:
            k += 1
        if k + 1 - start >= RATE // 10:
            runs.append((start, indices[start], k + 1 - start))
        k += 1
    nets, zeros = [], []
    for (p0, i0, n0), (p1, i1, _) in zip(runs, runs[1:]):
        gap_out = p1 - (p0 + n0)
        gap_signal = i1 - (i0 + n0)
        nets.append(gap_out - gap_signal)
        zeros.append(sum(1 for j in range(p0 + n0, p1) if indices[j] == -1 and recorder.data[4 * j:4 * j + 4] == bytes(4)))
    if len(nets) != cycles:
        say(f"  continuity: {len(runs)} stretches of the signal at gain 1 at the output, {cycles + 1} expected: "
            "not measured")
        return
    say(f"  continuity, the numbered signal with {cycles} cycles 100 → 30 → 100 ({low} s at 30; the frames at 100 "
        f"are the signal bit for bit): per cycle (two changes), frames the output gained over the signal: "
        f"{', '.join(f'{n:+d}' for n in nets)}; of them digital silence: {', '.join(str(z) for z in zeros)}; so audio "
        f"frames repeated (+) or skipped (−): {', '.join(f'{n - z:+d}' for n, z in zip(nets, zeros))}; "
        f"underruns {status.get('underruns')}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--source", required=True, help="the null sink's monitor")
    parser.add_argument("--parts", default="file,realtime,volume")
    parser.add_argument("--files", type=int, default=101)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--formats", default="wav,flac")
    args = parser.parse_args()
    parts_wanted = args.parts.split(",")
    formats = args.formats.split(",")
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    flac = "flac" in formats
    if flac and shutil.which("flac") is None:
        say("FLAC: not measured: the flac command is missing")
        formats.remove("flac")
        flac = False
    try:
        say(f"bench/gapless — {os.cpu_count()} CPUs, load {load_average()}, seed {seed}")
        if "file" in parts_wanted or "realtime" in parts_wanted:
            lengths = random_lengths(random.Random(seed), args.files, 0.3, 0.5)
            parts = os.path.join(args.work, "parts")
            log(f"writing {args.files} files of the numbered signal ({sum(lengths) / RATE:.1f} s)")
            whole = make_files(parts, lengths, flac)
            say(f"signal: {len(lengths)} files of {min(lengths):,}–{max(lengths):,} frames "
                f"({min(lengths) / RATE:.3f}–{max(lengths) / RATE:.3f} s; none a multiple of 64 frames or 10 ms)")
            if "file" in parts_wanted:
                file_device(args, parts, lengths, whole, formats)
            if "realtime" in parts_wanted:
                real_time(args, parts, lengths, whole, formats)
        if "volume" in parts_wanted:
            volume_latency(args)
    finally:
        for recorder in recorders:
            if recorder.process.poll() is None:
                recorder.stop()
        for daemon in daemons:
            daemon.stop()


if __name__ == "__main__":
    main()
