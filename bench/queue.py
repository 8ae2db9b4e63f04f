"""The measuring half of bench/queue (the shell half installs, builds and starts PulseAudio).

Builds a long queue with queue.add (a few short files, again and again), then times, from the
client (send to reply, one request at a time on one connection, Python's JSON included), rounds
of queue.list, queue.add at the front, queue.remove, queue.move, queue.setOptions and
player.status: first with the player stopped, then while it plays the queue into a PulseAudio
null sink. Every process started here is stopped on the way out.
"""
import argparse
import os
import random
import subprocess
import sys
import time

from measuring import Reeld, load_average, percentile

OPERATIONS = ["queue.list", "queue.add", "queue.remove", "queue.move", "random on", "random off", "player.status"]


def log(text):
    print(f"[bench/queue {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def timed(rpc, method, params=None):
    t0 = time.perf_counter_ns()
    result = rpc.call(method, params)
    return (time.perf_counter_ns() - t0) / 1e6, result


def rounds(rpc, ids, count, rng, avoid):
    """`count` rounds of the six operations, interleaved (random on and off by turns); the queue's length stays the same (each
    round adds one entry and removes one). `avoid()` names entries not to remove or move (the
    current and next). Returns {method: [ms, …]}."""
    times = {name: [] for name in OPERATIONS}
    length = len(ids)
    for k in range(count):
        ms, _ = timed(rpc, "queue.list", {"start": length // 2, "count": 50})
        times["queue.list"].append(ms)
        ms, result = timed(rpc, "queue.add", {"file": rng.choice(avoid.files), "position": 0})
        times["queue.add"].append(ms)
        ids.append(result["entries"][0]["id"])
        skip = avoid()
        victim = rng.choice([i for i in rng.sample(ids, 8) if i not in skip] or [ids[-1]])
        ms, _ = timed(rpc, "queue.remove", {"id": victim})
        times["queue.remove"].append(ms)
        ids.remove(victim)
        mover = rng.choice([i for i in rng.sample(ids, 8) if i not in skip])
        ms, _ = timed(rpc, "queue.move", {"id": mover, "position": rng.randrange(length)})
        times["queue.move"].append(ms)
        ms, _ = timed(rpc, "queue.setOptions", {"random": k % 2 == 0})
        times["random on" if k % 2 == 0 else "random off"].append(ms)
        ms, _ = timed(rpc, "player.status")
        times["player.status"].append(ms)
    rpc.call("queue.setOptions", {"random": False})
    return times


def table(times, title):
    print(title)
    print(f"  {'operation':<42} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}   target p99 ≤ 5 ms")
    labels = {
        "queue.list": "queue.list {start: length/2, count: 50}",
        "queue.add": "queue.add {file, position: 0}",
        "queue.remove": "queue.remove {id}",
        "queue.move": "queue.move {id, position}",
        "random on": "queue.setOptions {random: true}",
        "random off": "queue.setOptions {random: false}",
        "player.status": "player.status",
    }
    for name in OPERATIONS:
        values = times[name]
        p99 = percentile(values, 99)
        print(f"  {labels[name]:<42} {percentile(values, 50):8.3f} {p99:8.3f} {max(values):8.3f}   "
              f"{'met' if p99 <= 5 else 'MISSED'} (n={len(values)})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--entries", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    music = os.path.join(args.work, "music")
    os.makedirs(music)
    files = []
    for n, (hz, ext) in enumerate([(440, "flac"), (554, "wav"), (659, "flac")]):
        path = os.path.join(music, f"short-{n}.{ext}")
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", path, "synth", "3", "sine", str(hz),
                        "vol", "0.3"], check=True)
        files.append(path)

    daemon = Reeld(args.reeld, os.path.join(args.work, "reeld"), "pulse", log_level="warning")
    try:
        rpc = daemon.rpc
        print(f"bench/queue — {os.cpu_count()} CPUs, load {load_average()}")
        log(f"adding {args.entries:,} entries one queue.add at a time")
        adds = []
        t0 = time.monotonic()
        for k in range(args.entries):
            ms, _ = timed(rpc, "queue.add", {"file": files[k % len(files)]})
            adds.append(ms)
        built = time.monotonic() - t0
        print(f"building the queue: {args.entries:,} queue.add in {built:.1f} s ({args.entries / built:,.0f} per s; "
              f"each p50 {percentile(adds, 50):.3f} ms, p99 {percentile(adds, 99):.3f} ms, max {max(adds):.3f} ms); "
              f"load {load_average()}")
        ms, listing = timed(rpc, "queue.list", {"start": 0, "count": args.entries})
        ids = [entry["id"] for entry in listing["entries"]]
        print(f"queue.list of all {len(ids):,} entries: {ms:.1f} ms, one reply; reeld RSS {rss_mb(daemon.pid):.1f} MB")
        if len(ids) != args.entries:
            print(f"  (queue.list answered {len(ids):,} entries of {args.entries:,}: length {listing.get('length')})")
            more = listing
            while len(ids) < args.entries and more["entries"]:
                more = rpc.call("queue.list", {"start": len(ids), "count": args.entries - len(ids)})
                ids += [entry["id"] for entry in more["entries"]]

        def nothing():
            return set()
        nothing.files = files
        stopped = rounds(rpc, ids, args.rounds, rng, nothing)
        print()
        table(stopped, f"player stopped, {args.entries:,} entries, {args.rounds} rounds (load {load_average()} after):")

        rpc.call("player.play", {"entry": ids[len(ids) // 2]})
        time.sleep(3)
        underruns = rpc.call("player.status").get("underruns", 0)

        def current_and_next():
            status = rpc.call("player.status")
            listing = rpc.call("queue.list", {"start": 0, "count": 1})
            return {status.get("entry"), listing.get("current"), listing.get("next")} - {None}
        current_and_next.files = files
        playing = rounds(rpc, ids, args.rounds, rng, current_and_next)
        status = rpc.call("player.status")
        print()
        table(playing, f"while playing the queue into the null sink, same rounds (load {load_average()} after):")
        print(f"  player {status['state']}, underruns during the rounds: {status.get('underruns', 0) - underruns}; "
              f"reeld RSS {rss_mb(daemon.pid):.1f} MB")
        print("  (times are client-side round trips through Python's json and socket on one connection, one request "
              "at a time)")
    finally:
        daemon.stop()


if __name__ == "__main__":
    main()
