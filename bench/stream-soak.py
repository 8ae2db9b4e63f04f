"""The measuring half of bench/stream-soak: reeld on a live stream that changes title and drops.

Starts the local stream server (Tests/Streams/stream_server.py) on an endless 128 kbit/s MP3 with
ICY metadata, reeld playing it into PulseAudio, and a subscriber to the player's pushes. Every
`--title-every` seconds a new title goes on air, every `--drop-every` seconds every connection
is dropped. Prints a line a minute and a summary; asserts nothing.

Every stretch in which reeld's position fell behind the wall clock while it played (a "position
gap") is listed with what explains it: the stream waiting for bytes (`buffering`, and whether
the server was late then), a device underrun, the sound server taking no audio (a probe records
the null sink's monitor with `parec` and notes any second without audio), or this harness
itself not being scheduled (a watchdog thread notes its own late wake-ups).
"""
import argparse
import json
import os
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Streams"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from measuring import Reeld, load_average  # noqa: E402
from stream_server import StreamServer, make_mp3  # noqa: E402

# Seconds after a drop in which a buffering stream or a device underrun counts as the drop's.
DROP_WINDOW = 15
# Position lost against the wall clock between two pushes that starts (or continues) a gap.
GAP_STEP = 0.2
# A gap shorter than this in all is not listed (pushes are measured a period apart).
GAP_LISTED = 0.5
# A probe (the sink's monitor, the harness's watchdog) silent for longer than this notes it.
PROBE_GAP = 1.0


def log(text):
    print(f"[stream-soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


class Follower(threading.Thread):
    """Reads the player's pushes on a connection of its own; keeps what the summary needs."""

    def __init__(self, socket_path, trace=None):
        super().__init__(daemon=True)
        # A file to write a line per push to (time, position, states, buffered, counts), or None.
        self.trace = trace
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(socket_path)
        self.sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"stream":"player","interval":1}}\n')
        self.lock = threading.Lock()
        self.last = None
        # (monotonic time, what): "buffering" when the stream starts waiting for bytes,
        # "underrun" when the device's count grows, "reconnecting", "title T".
        self.events = []
        self.titles = []
        self.pushes = 0
        # Position gaps: dicts with start/end (monotonic), lost seconds, stream states seen,
        # underruns counted and the least buffered seconds during it.
        self.gaps = []
        self.open_gap = None
        self.previous = None

    def run(self):
        buffer = b""
        stream_state = None
        underruns = 0
        title = None
        while True:
            try:
                chunk = self.sock.recv(1 << 16)
            except OSError:
                return
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                message = json.loads(line)
                if message.get("method") != "player.state":
                    continue
                state = message["params"]
                now = time.monotonic()
                with self.lock:
                    self.pushes += 1
                    self.last = state
                    stream = state.get("stream") or {}
                    if stream.get("state") != stream_state:
                        stream_state = stream.get("state")
                        if stream_state in ("buffering", "reconnecting"):
                            self.events.append((now, stream_state))
                    if state.get("underruns", 0) > underruns:
                        self.events.append((now, "underrun"))
                        underruns = state["underruns"]
                    shown = (state.get("source") or {}).get("title")
                    if shown != title:
                        title = shown
                        self.titles.append((now, shown))
                    self.follow_position(state)
                    if self.trace:
                        self.trace.write(
                            f"{now:.3f} {state.get('timestamp', 0.0):.3f} {state.get('position', 0.0):.3f} "
                            f"{state.get('state')} {stream.get('state')} {stream.get('buffered')} "
                            f"{stream.get('reconnects')} {state.get('underruns', 0)} "
                            f"{json.dumps((state.get('source') or {}).get('title'))}\n")

    def follow_position(self, state):
        """Adds what the position lost against reeld's clock (`timestamp`) since the last push
        to the gap open, or opens one. The lock is held."""
        stream = state.get("stream") or {}
        point = (state.get("timestamp", 0.0), state.get("position", 0.0), state.get("state"),
                 stream.get("state"), stream.get("buffered"), state.get("underruns", 0))
        previous, self.previous = self.previous, point
        if previous is None or previous[2] != "playing" or point[2] != "playing":
            self.open_gap = None
            return
        lost = (point[0] - previous[0]) - (point[1] - previous[1])
        if self.open_gap is None and lost < GAP_STEP:
            return
        if self.open_gap is None:
            self.open_gap = {"start": previous[0], "lost": 0.0, "states": set(), "underruns": 0,
                             "buffered": None}
            self.gaps.append(self.open_gap)
        gap = self.open_gap
        gap["end"] = point[0]
        gap["lost"] += max(lost, 0.0)
        gap["states"].add(point[3] or "-")
        gap["underruns"] += max(point[5] - previous[5], 0)
        if point[4] is not None:
            gap["buffered"] = point[4] if gap["buffered"] is None else min(gap["buffered"], point[4])
        if lost < GAP_STEP / 4:
            self.open_gap = None

    def snapshot(self):
        with self.lock:
            return self.last, list(self.events), list(self.titles), self.pushes

    def position_gaps(self):
        with self.lock:
            return [dict(g) for g in self.gaps if g["lost"] >= GAP_LISTED]

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class SinkProbe(threading.Thread):
    """Records the null sink's monitor (`parec`, 8 kHz mono) and notes every stretch longer than
    `PROBE_GAP` in which no audio came: the sound server took no audio then (or this harness
    was not scheduled: see `Watchdog`). Also counts the frames, to compare the sink's clock with
    the wall clock."""

    RATE = 8000

    def __init__(self):
        super().__init__(daemon=True)
        self.process = subprocess.Popen(
            ["parec", "--device=@DEFAULT_MONITOR@", "--rate", str(self.RATE), "--channels=1", "--format=s16le",
             "--latency-msec=100", "--raw"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.gaps = []
        self.frames = 0
        self.first = None
        self.last = None

    def run(self):
        while True:
            chunk = self.process.stdout.read1(1 << 14)
            if not chunk:
                return
            now = time.monotonic()
            with self.lock:
                if self.last is not None and now - self.last > PROBE_GAP:
                    self.gaps.append((self.last, now - self.last))
                if self.first is None:
                    self.first = now
                self.last = now
                self.frames += len(chunk) // 2

    def wait_for_audio(self, seconds=10):
        """Waits until the monitor gives its first audio (or `seconds`): a monitor stream that
        connects while reeld starts to play changes the sink's latency under it."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if self.frames >= self.RATE // 2:
                    return True
            time.sleep(0.05)
        return False

    def summary(self):
        """(gaps [(start, seconds)], seconds of audio recorded, wall seconds it took)."""
        with self.lock:
            wall = (self.last - self.first) if self.first is not None else 0.0
            return list(self.gaps), self.frames / self.RATE, wall

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()


class Watchdog(threading.Thread):
    """Wakes every 0.1 s and notes every wake-up more than `PROBE_GAP` late: this process (the
    harness and its stream server) was not scheduled then."""

    def __init__(self):
        super().__init__(daemon=True)
        self.lock = threading.Lock()
        self.gaps = []

    def run(self):
        last = time.monotonic()
        while True:
            time.sleep(0.1)
            now = time.monotonic()
            if now - last > PROBE_GAP:
                with self.lock:
                    self.gaps.append((last, now - last))
            last = now

    def summary(self):
        with self.lock:
            return list(self.gaps)


def overlapping(episodes, start, end, slack=2.0):
    """The (start, seconds) episodes that overlap [start - slack, end + slack]."""
    return [e for e in episodes if e[0] <= end + slack and e[0] + e[1] >= start - slack]


def explain(gap, sink_gaps, late, starved):
    """What explains a position gap, from what was seen during it."""
    reasons = []
    if "buffering" in gap["states"] or "reconnecting" in gap["states"]:
        waited = "reconnecting" if "reconnecting" in gap["states"] else "buffering"
        server = overlapping(late, gap["start"], gap["end"])
        reasons.append(f"the stream waited for bytes ({waited})"
                       + (f", the server {max(s for _, s in server):.1f} s late" if server else ""))
    if gap["underruns"]:
        reasons.append(f"{gap['underruns']} device underrun(s)")
    sink = overlapping(sink_gaps, gap["start"], gap["end"])
    if sink:
        reasons.append(f"the sound server took no audio for {max(s for _, s in sink):.1f} s (sink monitor)")
    harness = overlapping(starved, gap["start"], gap["end"])
    if harness:
        reasons.append(f"this harness was not scheduled for {max(s for _, s in harness):.1f} s")
    return "; ".join(reasons) or "nothing seen: no buffering, no underrun, the sink monitor had audio"


def slope_per_hour(points):
    """Least-squares slope of (minute, kB) points, in kB an hour."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    den = sum((x - mx) ** 2 for x, _ in points)
    return 60 * sum((x - mx) * (y - my) for x, y in points) / den if den else 0.0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--title-every", type=int, default=10)
    parser.add_argument("--drop-every", type=int, default=300)
    parser.add_argument("--keep", help="a directory for every push received (pushes.txt) and, at the end, "
                        "reeld's and PulseAudio's logs")
    args = parser.parse_args()

    mp3_path = make_mp3(os.path.join(args.work, "loop.mp3"), seconds=30)
    with open(mp3_path, "rb") as f:
        mp3 = f.read()
    # One timeline for every connection, as a station has (Icecast's): a new connection starts a
    # burst (64 KiB) behind live, so after a drop it repeats the end of what the last one sent.
    # (Without it each connection would start the 30 s loop again: the bytes after a drop would
    # repeat the last loop's start, up to 16 s before the drop, which reeld takes for a burst to
    # splice on, waiting in silence until the server's clock has passed them.)
    server = StreamServer(mp3, station="Soak FM", titles=("Soak title 0",), metaint=16000, title_every=1,
                          shared_clock=True).start()
    url = server.url("/live.mp3")
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    reeld = Reeld(args.reeld, os.path.join(args.work, "reeld"), "pulse")
    follower = None
    probe = SinkProbe()
    probe.start()
    if not probe.wait_for_audio():
        log("the sink monitor probe (parec) gave no audio in 10 s: its figures are missing")
    watchdog = Watchdog()
    watchdog.start()
    try:
        trace = open(os.path.join(args.keep, "pushes.txt"), "w", buffering=1) if args.keep else None
        if trace:
            trace.write("# received timestamp position state stream buffered reconnects underruns title\n")
        follower = Follower(reeld.socket, trace)
        follower.start()
        run(args, server, url, reeld, follower, probe, watchdog)
    finally:
        if follower:
            follower.close()
        probe.stop()
        reeld.stop()
        server.stop()
        if args.keep:
            for name, path in (("reeld.log", reeld.log), ("pulse.log", os.path.join(args.work, "pulse.log"))):
                if os.path.exists(path):
                    with open(path, "rb") as source, open(os.path.join(args.keep, name), "wb") as kept:
                        kept.write(source.read())
            log(f"logs kept in {args.keep}")


def run(args, server, url, reeld, follower, probe, watchdog):
    started = time.monotonic()
    reeld.rpc.call("player.play", {"url": url})
    log(f"playing {url}; load average {load_average()}")
    end = started + args.minutes * 60
    next_title = started + args.title_every
    next_drop = started + args.drop_every
    next_sample = started + 60
    titles_set = 1
    drops = []
    samples = []
    print(f"{'minute':>6} {'RSS MB':>8} {'fds':>4} {'position s':>11} {'behind s':>8} {'state':>8} {'stream':>12} "
          f"{'buffered s':>10} {'reconnects':>10} {'underruns':>9} {'gaps':>4} {'title':>16}", flush=True)
    while True:
        now = time.monotonic()
        if now >= end and next_sample > end + 1:
            break
        if now >= next_title and now < end:
            server.set_title(f"Soak title {titles_set}")
            titles_set += 1
            next_title += args.title_every
        if now >= next_drop and now < end:
            server.drop_all()
            drops.append(now)
            next_drop += args.drop_every
        if now >= next_sample:
            if reeld.process.poll() is not None:
                raise RuntimeError(f"reeld exited with {reeld.process.returncode}: {reeld.log_tail()}")
            state, _, _, _ = follower.snapshot()
            state = state or {}
            stream = state.get("stream") or {}
            minute = round((now - started) / 60)
            rss = rss_kb(reeld.pid)
            # Wall time and position both as of the state's `timestamp` (a push is up to 1 s old).
            samples.append((minute, rss, state.get("timestamp", now) - started, state.get("position", 0.0)))
            # Behind: wall seconds since play less the position (the start's connect and first
            # audio, then every gap and every drop's outage).
            behind = (state.get("timestamp", now) - started) - state.get("position", 0.0)
            buffered = stream.get("buffered")
            print(f"{minute:>6} {rss / 1024:>8.1f} {fd_count(reeld.pid):>4} {state.get('position', 0.0):>11.1f} "
                  f"{behind:>8.1f} {state.get('state', '?'):>8} {stream.get('state', '-'):>12} "
                  f"{'-' if buffered is None else f'{buffered:.1f}':>10} {stream.get('reconnects', 0):>10} "
                  f"{state.get('underruns', 0):>9} {len(follower.position_gaps()):>4} "
                  f"{str((state.get('source') or {}).get('title'))[:16]:>16}",
                  flush=True)
            next_sample += 60
        time.sleep(min(0.2, max(0.0, min(next_title, next_drop, next_sample) - time.monotonic())))

    state, events, titles, pushes = follower.snapshot()
    state = state or {}
    stream = state.get("stream") or {}

    def near_drop(t):
        return any(d <= t <= d + DROP_WINDOW for d in drops)

    warm = [e for e in events if e[0] - started > 10]
    outside = [e for e in warm if not near_drop(e[0])]
    inside = [e for e in warm if near_drop(e[0])]
    rss_points = [(m, r) for m, r, _, _ in samples if m >= 5]
    elapsed = samples[-1][2] if samples else 0
    position = samples[-1][3] if samples else 0
    print()
    print(f"load average at the end: {load_average()}")
    print(f"minutes played: {args.minutes}; drops: {len(drops)}; titles set: {titles_set}; "
          f"titles pushed: {len([t for t in titles if t[1]])}")
    if rss_points:
        values = [r for _, r in rss_points]
        print(f"RSS from minute 5: first {values[0] / 1024:.1f} MB, last {values[-1] / 1024:.1f} MB, "
              f"min {min(values) / 1024:.1f}, max {max(values) / 1024:.1f}; "
              f"slope {slope_per_hour(rss_points) / 1024:+.2f} MB/hour")
    print(f"reconnects: {stream.get('reconnects', 0)} (drops made: {len(drops)})")
    print(f"device underruns (PlayerState.underruns): {state.get('underruns', 0)}")
    print(f"stream buffering/reconnecting/underrun events within {DROP_WINDOW} s of a drop: {len(inside)} "
          f"({', '.join(sorted(set(e[1] for e in inside))) or 'none'})")
    print(f"stream buffering/underrun events outside the drops: {len(outside)}"
          + ("" if not outside else " at " + ", ".join(f"{e[0] - started:.0f} s {e[1]}" for e in outside[:20])))
    print(f"position {position:.1f} s after {elapsed:.1f} s of wall time (behind by {elapsed - position:.1f} s)")
    sink_gaps, sink_audio, sink_wall = probe.summary()
    starved = watchdog.summary()
    late = [(since, seconds) for since, seconds in server.stats["late"]]
    gaps = follower.position_gaps()
    at_start = [g for g in gaps if g["start"] - started <= 10]
    in_drops = [g for g in gaps if g["start"] - started > 10 and near_drop(g["start"])]
    out_drops = [g for g in gaps if g["start"] - started > 10 and not near_drop(g["start"])]
    print(f"position gaps (>= {GAP_LISTED} s lost while playing): {len(at_start)} in the first 10 s "
          f"({sum(g['lost'] for g in at_start):.1f} s), {len(in_drops)} within {DROP_WINDOW} s of a drop "
          f"({sum(g['lost'] for g in in_drops):.1f} s), {len(out_drops)} outside the drops "
          f"({sum(g['lost'] for g in out_drops):.1f} s)")
    for gap in out_drops:
        least = "-" if gap["buffered"] is None else f"{gap['buffered']:.1f} s"
        print(f"  at {gap['start'] - started:.0f} s: {gap['lost']:.1f} s lost in {gap['end'] - gap['start']:.1f} s; "
              f"stream {'/'.join(sorted(gap['states']))}, least buffered {least}: "
              f"{explain(gap, sink_gaps, late, starved)}")
    print(f"sink monitor: {sink_audio:.1f} s of audio in {sink_wall:.1f} s; gaps > {PROBE_GAP:.0f} s: {len(sink_gaps)}"
          + "".join(f"; at {t - started:.0f} s for {d:.1f} s" for t, d in sink_gaps[:10]))
    print(f"stream server late > 1 s: {len(late)}" + "".join(f"; at {t - started:.0f} s by {d:.1f} s" for t, d in late[:10]))
    print(f"harness not scheduled > {PROBE_GAP:.0f} s: {len(starved)}"
          + "".join(f"; at {t - started:.0f} s for {d:.1f} s" for t, d in starved[:10]))
    # reeld's own word on an output that played nothing for 2 s while playing (its log's
    # warnings, from the build that has them).
    stalls = [line for line in reeld.log_lines() if "the output has played nothing" in line or "the output plays again" in line]
    print(f"reeld's output stalls logged: {len([line for line in stalls if 'played nothing' in line])}"
          + "".join(f"\n  {line[:200]}" for line in stalls[:20]))
    print(f"player pushes read: {pushes}")


if __name__ == "__main__":
    main()
