#!/usr/bin/env python3
"""The measuring half of bench/command-cost (Python standard library only).

  command-cost.py ping reel|mpd SOCKET
      Exit 0 when the daemon answers one status request.
  command-cost.py run --reel-socket S --reel-pid P --mpd-socket S --mpd-pid P
                      --count N --warmup N --rounds N --command status|repeat
      Per round, for each daemon in turn (the order swapping every round): one new connection,
      `warmup` requests, then `count` requests back to back (one outstanding at a time) while
      the daemon's CPU time is taken before and after (nanoseconds on a CPU summed over its
      threads, /proc/PID/task/*/schedstat); prints the per-round figures and the medians.
      `status` asks the player's status (reeld `player.status`, MPD `status`); `repeat` changes
      the queue's repeat option, on and off by turns (reeld `queue.setOptions {"repeat": …}`,
      MPD `repeat 1`/`repeat 0`): a command the daemon acknowledges, which reeld saves before it
      answers.
"""
import os
import socket
import statistics
import sys
import time

from measuring import options as parse_options, percentile

# Per command and protocol: the requests, sent in turn (a change alternates between two values).
REQUESTS = {
    "status": {
        "reel": [b'{"jsonrpc":"2.0","id":1,"method":"player.status"}\n'],
        "mpd": [b"status\n"],
    },
    "repeat": {
        "reel": [b'{"jsonrpc":"2.0","id":1,"method":"queue.setOptions","params":{"repeat":true}}\n',
                 b'{"jsonrpc":"2.0","id":1,"method":"queue.setOptions","params":{"repeat":false}}\n'],
        "mpd": [b"repeat 1\n", b"repeat 0\n"],
    },
}
NAME = {"reel": "reeld", "mpd": "MPD"}
COMMANDS = {
    "status": {"reel": "player.status", "mpd": "status"},
    "repeat": {"reel": "queue.setOptions {repeat}", "mpd": "repeat 0|1"},
}


def fail(message):
    print(f"bench/command-cost: {message}", file=sys.stderr)
    sys.exit(1)


class Client:
    """One connection; `ask` sends the status request and returns the whole reply."""

    def __init__(self, protocol, path, command="status"):
        self.protocol = protocol
        self.command = command
        self.requests = REQUESTS[command][protocol]
        self.sent = 0
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        if protocol == "mpd":
            greeting = self.sock.recv(4096)
            if not greeting.startswith(b"OK MPD "):
                raise RuntimeError(f"no MPD greeting: {greeting!r}")

    def ask(self):
        sock = self.sock
        requests = self.requests
        sock.sendall(requests[self.sent % len(requests)])
        self.sent += 1
        reply = sock.recv(65536)
        if self.protocol == "reel":
            while not reply.endswith(b"\n"):
                chunk = sock.recv(65536)
                if not chunk:
                    raise RuntimeError("reeld closed the connection")
                reply += chunk
            return reply
        # MPD: lines up to `OK` (or one `ACK …` line on an error).
        while not (reply.endswith(b"\nOK\n") or reply == b"OK\n" or
                   (reply.endswith(b"\n") and reply.rsplit(b"\n", 2)[-2].startswith(b"ACK "))):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("MPD closed the connection")
            reply += chunk
        return reply

    def check(self, reply):
        name = COMMANDS[self.command][self.protocol]
        if self.protocol == "reel" and b'"result"' not in reply:
            raise RuntimeError(f"{name} failed: {reply[:300]!r}")
        if self.protocol == "mpd" and not reply.endswith(b"OK\n"):
            raise RuntimeError(f"{name} failed: {reply[:300]!r}")
        if self.protocol == "mpd" and self.command == "status" and b"\nstate: " not in b"\n" + reply:
            raise RuntimeError(f"status failed: {reply[:300]!r}")

    def close(self):
        self.sock.close()


def daemon_cpu(pid):
    """(ns on a CPU summed over the live threads, the set of thread ids)."""
    total = 0
    tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except OSError:
            pass  # a thread that just ended; the thread sets differ then
    return total, tids


def measure(protocol, path, pid, count, warmup, command):
    client = Client(protocol, path, command)
    try:
        reply = client.ask()
        client.check(reply)
        size = len(reply)
        for _ in range(warmup - 1):
            client.ask()
        rtts = [0] * count
        ask = client.ask
        clock = time.perf_counter_ns
        cpu0, tids0 = daemon_cpu(pid)
        for i in range(count):
            t0 = clock()
            reply = ask()
            rtts[i] = clock() - t0
        cpu1, tids1 = daemon_cpu(pid)
        client.check(reply)
    finally:
        client.close()
    return {
        "cpu_us": (cpu1 - cpu0) / 1000 / count,
        "p50_us": percentile(rtts, 50) / 1000,
        "p99_us": percentile(rtts, 99) / 1000,
        "bytes": size,
        "threads_changed": tids0 != tids1,
        "tids": (tids0, tids1),
    }


def idle_rate(pid, seconds=2.0):
    """The daemon's CPU while nobody talks to it, in µs per second."""
    cpu0, _ = daemon_cpu(pid)
    t0 = time.monotonic()
    time.sleep(seconds)
    cpu1, _ = daemon_cpu(pid)
    return (cpu1 - cpu0) / 1000 / (time.monotonic() - t0)


def run(argv):
    o = parse_options(argv, ["reel-socket", "reel-pid", "mpd-socket", "mpd-pid", "count", "warmup", "rounds",
                             "command"], fail)
    command = o["command"]
    if command not in REQUESTS:
        fail(f"--command must be one of {', '.join(REQUESTS)}")
    socket_of = {"reel": o["reel-socket"], "mpd": o["mpd-socket"]}
    pid_of = {"reel": int(o["reel-pid"]), "mpd": int(o["mpd-pid"])}
    count, warmup, rounds = int(o["count"]), int(o["warmup"]), int(o["rounds"])

    idle = {p: idle_rate(pid_of[p]) for p in ("reel", "mpd")}
    results = []  # per round: {protocol: figures}
    for r in range(1, rounds + 1):
        order = ("reel", "mpd") if r % 2 else ("mpd", "reel")
        figures = {}
        for p in order:
            try:
                figures[p] = measure(p, socket_of[p], pid_of[p], count, warmup, command)
            except (OSError, RuntimeError) as error:
                fail(f"round {r}, {NAME[p]}: {error}")
            if figures[p]["threads_changed"]:
                before, after = figures[p]["tids"]
                print(f"bench/command-cost: warning: round {r}: {NAME[p]}'s threads changed during the "
                      f"window ({before} -> {after}): its CPU time may be incomplete", file=sys.stderr)
            print(f"[bench/command-cost {time.strftime('%H:%M:%S')}] round {r}/{rounds} {NAME[p]}: "
                  f"{figures[p]['cpu_us']:.2f} µs CPU per command, round trip p50 {figures[p]['p50_us']:.1f} µs",
                  file=sys.stderr)
        results.append((r, order[0], figures))

    head = ("round", "first", "reeld CPU µs/cmd", "MPD CPU µs/cmd", "reeld/MPD",
            "reeld RTT p50 / p99 µs", "MPD RTT p50 / p99 µs")
    rows = []
    for r, first, f in results:
        mark = {p: "*" if f[p]["threads_changed"] else "" for p in f}
        rows.append((str(r), NAME[first], f"{f['reel']['cpu_us']:.2f}{mark['reel']}",
                     f"{f['mpd']['cpu_us']:.2f}{mark['mpd']}", f"{f['reel']['cpu_us'] / f['mpd']['cpu_us']:.2f}×",
                     f"{f['reel']['p50_us']:.1f} / {f['reel']['p99_us']:.1f}",
                     f"{f['mpd']['p50_us']:.1f} / {f['mpd']['p99_us']:.1f}"))

    def med(p, key):
        return statistics.median(f[p][key] for _, _, f in results)

    ratio = statistics.median(f["reel"]["cpu_us"] / f["mpd"]["cpu_us"] for _, _, f in results)
    rows.append(("median", "", f"{med('reel', 'cpu_us'):.2f}", f"{med('mpd', 'cpu_us'):.2f}", f"{ratio:.2f}×",
                 f"{med('reel', 'p50_us'):.1f} / {med('reel', 'p99_us'):.1f}",
                 f"{med('mpd', 'p50_us'):.1f} / {med('mpd', 'p99_us'):.1f}"))
    widths = [max(len(row[i]) for row in rows + [head]) for i in range(len(head))]
    print()
    print(f"Command cost: reeld `{COMMANDS[command]['reel']}` vs MPD `{COMMANDS[command]['mpd']}`, both idle "
          f"(stopped); per round and daemon "
          f"{count:,} requests back to back on one connection after {warmup:,} of warm-up, one outstanding; "
          f"daemons and client pinned to CPU 0")
    for row in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
    print(f"daemon CPU = ns on a CPU summed over its threads (schedstat) over the window / requests; "
          f"ratio = reeld/MPD per round, median of the rounds")
    if any(f[p]["threads_changed"] for _, _, f in results for p in f):
        print("* the daemon's threads changed during that window: its CPU time may be incomplete")
    last = results[-1][2]
    print(f"reply size: reeld {last['reel']['bytes']} bytes, MPD {last['mpd']['bytes']} bytes; "
          f"idle background before the rounds: reeld {idle['reel']:.1f} µs/s, MPD {idle['mpd']:.1f} µs/s")


def ping(argv):
    if len(argv) != 2 or argv[0] not in NAME:
        fail("usage: command-cost.py ping reel|mpd SOCKET")
    try:
        client = Client(argv[0], argv[1])
        client.check(client.ask())
    except (OSError, RuntimeError):
        sys.exit(1)


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("run", "ping"):
        print(__doc__)
        sys.exit(2)
    {"run": run, "ping": ping}[sys.argv[1]](sys.argv[2:])
