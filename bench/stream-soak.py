"""The measuring half of bench/stream-soak: reeld on a live stream that changes title and drops.

Starts the local stream server (Tests/Streams/stream_server.py) on an endless 128 kbit/s MP3 with
ICY metadata, reeld playing it into PulseAudio, and a subscriber to the player's pushes. Every
`--title-every` seconds a new title goes on air, every `--drop-every` seconds every connection
is dropped. Prints a line a minute and a summary; asserts nothing.
"""
import argparse
import json
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Streams"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from measuring import Reeld, load_average  # noqa: E402
from stream_server import StreamServer, make_mp3  # noqa: E402

# Seconds after a drop in which a buffering stream or a device underrun counts as the drop's.
DROP_WINDOW = 15


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

    def __init__(self, socket_path):
        super().__init__(daemon=True)
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

    def snapshot(self):
        with self.lock:
            return self.last, list(self.events), list(self.titles), self.pushes

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


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
    args = parser.parse_args()

    mp3_path = make_mp3(os.path.join(args.work, "loop.mp3"), seconds=30)
    with open(mp3_path, "rb") as f:
        mp3 = f.read()
    server = StreamServer(mp3, station="Soak FM", titles=("Soak title 0",), metaint=16000, title_every=1).start()
    url = server.url("/live.mp3")
    reeld = Reeld(args.reeld, os.path.join(args.work, "reeld"), "pulse")
    follower = None
    try:
        follower = Follower(reeld.socket)
        follower.start()
        run(args, server, url, reeld, follower)
    finally:
        if follower:
            follower.close()
        reeld.stop()
        server.stop()


def run(args, server, url, reeld, follower):
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
    print(f"{'minute':>6} {'RSS MB':>8} {'fds':>4} {'position s':>11} {'state':>8} {'stream':>12} "
          f"{'reconnects':>10} {'underruns':>9} {'title':>16}", flush=True)
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
            samples.append((minute, rss, now - started, state.get("position", 0.0)))
            print(f"{minute:>6} {rss / 1024:>8.1f} {fd_count(reeld.pid):>4} {state.get('position', 0.0):>11.1f} "
                  f"{state.get('state', '?'):>8} {stream.get('state', '-'):>12} {stream.get('reconnects', 0):>10} "
                  f"{state.get('underruns', 0):>9} {str((state.get('source') or {}).get('title'))[:16]:>16}",
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
    print(f"position {position:.1f} s after {elapsed:.1f} s of wall time (difference {elapsed - position:+.1f} s)")
    print(f"player pushes read: {pushes}")


if __name__ == "__main__":
    main()
