#!/usr/bin/env python3
"""Helpers for bench/compare (Python standard library only).

  compare.py mpd SOCKET COMMAND...
      Sends the commands to MPD (as a command list when more than one) and prints the reply
      lines; exit 1 on an ACK.
  compare.py output --protocol reel|mpd --socket S --play JSON-OR-COMMAND --source MONITOR
      Records the output (PulseAudio source MONITOR, i.e. the null sink's monitor) with parec,
      starts playback, pauses it 3 s later and stops it; prints
      `play_ms=… pause_ms=… play_reply_ms=… pause_reply_ms=…`: from the play command's reply to
      the first non-silent sample at the output, and from sending the pause command to the last.
  compare.py window --pid PID --seconds N
      Samples process PID for N s and prints `cpu_ns=… ticks=… wakeups=… threads_started=…
      threads_ended=… rss_kb=… seconds=… changed=…`: CPU time of the whole process (its CPU clock: threads
      that ended in the window included), utime+stime in clock ticks as a cross-check, voluntary
      context switches of every thread seen (read each second), the peak VmRSS, and the threads
      that started (+name/TID) or ended (-name/TID) in the window.
  compare.py follow --protocol reel|mpd --socket S --seconds N --interval I --daemon-pid PID
      Follows the position for N s: MPD by a `status` poll every I s, Reel by one `player`
      subscription at interval I. Prints bytes each way, messages, the client's wake-ups
      (voluntary context switches), and the daemon's wake-ups and CPU over the same window
      (as `window` takes them).
  compare.py mpd-rtt --address A --count N --warmup N
      `status` round trips on one connection to an MPD-protocol listener A (HOST:PORT or a Unix
      socket path): N unmeasured, then N timed from the send to the read that brought the `OK`;
      prints `p50_us=… p99_us=… max_us=… count=…`.
  compare.py mpd-idle --address A --count N --commands C1,C2
      One client waits in `idle player`, another sends C1, C2, C1, … (N in all); per command,
      the time from its send to the idle client's `changed: player`; prints, per command (its
      spaces as _), `C1_p50_ms=… C1_p99_ms=… C1_max_ms=…`, then `count=… early=…` (idle replies
      that came before a command was sent, not counted).
  compare.py mpd-idle-clients --address A --clients N --seconds S --daemon-pid PID
      N connections to A, each in `idle`, from this one process (non-blocking sockets, a
      selector; RLIMIT_NOFILE raised); the daemon's CPU over S s while nothing changes; then each
      sends `noidle` and must get `OK`. Prints `cpu_ms=… percent=… wakeups=… seconds=…
      clients=… rss_kb=… threads=…` (percent: of one core).
  compare.py table RESULTS SECONDS ROUNDS FOLLOW NPROC MODEL KERNEL
      Prints the table from the results file bench/compare wrote.
"""
import array
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import threading
import time

from measuring import options as parse_options, percentile


def options(argv, names):
    return parse_options(argv, names, fail)


def fail(message):
    print(f"error={message}")
    sys.exit(1)


# --- the two protocols -------------------------------------------------------------------------

class Client:
    """One connection to MPD or reeld; `command` sends one request and returns its reply."""

    def __init__(self, protocol, path):
        self.protocol = protocol
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.sent = 0
        self.received = 0
        self.next_id = 1
        if protocol == "mpd":
            greeting = self.line()
            if not greeting.startswith(b"OK MPD "):
                raise RuntimeError(f"no MPD greeting: {greeting!r}")

    def send(self, data):
        self.sock.sendall(data)
        self.sent += len(data)

    def line(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("the daemon closed the connection")
            self.received += len(chunk)
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return line

    def command(self, request):
        """MPD: a command line (or a list of them); Reel: (method, params). Raises on an error."""
        if self.protocol == "mpd":
            lines = [request] if isinstance(request, str) else ["command_list_begin", *request, "command_list_end"]
            self.send(("\n".join(lines) + "\n").encode())
            reply = []
            while True:
                line = self.line()
                if line == b"OK":
                    return reply
                if line.startswith(b"ACK "):
                    raise RuntimeError(line.decode(errors="replace"))
                reply.append(line.decode(errors="replace"))
        method, params = request
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        self.next_id += 1
        self.send((json.dumps(message, separators=(",", ":")) + "\n").encode())
        while True:
            reply = json.loads(self.line())
            if reply.get("id") != message["id"]:
                continue  # a push
            if "error" in reply:
                raise RuntimeError(json.dumps(reply["error"]))
            return reply["result"]


def mpd_command(argv):
    path, *commands = argv
    try:
        client = Client("mpd", path)
        reply = client.command(commands[0] if len(commands) == 1 else commands)
    except (OSError, RuntimeError) as error:
        print(error, file=sys.stderr)
        sys.exit(1)
    for line in reply:
        print(line)


# --- time to first audio and to silence --------------------------------------------------------

RATE = 44100
THRESHOLD = 100  # |sample| above this (of 32768) is sound; the test music never goes this quiet


class Recorder:
    """parec of the monitor into memory, with the arrival time of every read."""

    def __init__(self, source):
        self.process = subprocess.Popen(
            ["parec", f"--device={source}", "--raw", "--format=s16le", f"--rate={RATE}", "--channels=2",
             "--latency-msec=2"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.data = bytearray()
        self.reads = []  # (monotonic time, total bytes before the read)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        fd = self.process.stdout.fileno()
        while True:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return
            t = time.monotonic()
            self.reads.append((t, len(self.data)))
            self.data += chunk

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.thread.join(timeout=5)

    def frames(self):
        return len(self.data) // 4

    def base(self):
        """The monotonic time of frame 0. The sink renders a block of frames at the time its first
        frame is due, and the monitor hands it over at once: a read's first frame arrived no
        earlier than it was due, so the read that arrived earliest relative to the frame clock
        (min of arrival - first frame / rate) dates the frames, late by at most the delivery delay."""
        return min(t - (n // 4) / RATE for t, n in self.reads)

    def loud(self):
        """Per frame: True when either channel is above THRESHOLD."""
        samples = array.array("h")
        samples.frombytes(bytes(self.data[: self.frames() * 4]))
        if sys.byteorder != "little":
            samples.byteswap()
        return [abs(samples[i]) > THRESHOLD or abs(samples[i + 1]) > THRESHOLD
                for i in range(0, len(samples), 2)]


def output_latency(argv):
    o = options(argv, ["protocol", "socket", "play", "source"])
    protocol = o["protocol"]
    if protocol == "reel":
        play, pause, stop = ("player.play", json.loads(o["play"])), ("player.pause", None), ("player.stop", None)
    else:
        play, pause, stop = o["play"], "pause 1", "stop"
    try:
        client = Client(protocol, o["socket"])
    except (OSError, RuntimeError) as error:
        fail(f"cannot connect: {error}")
    recorder = Recorder(o["source"])
    try:
        deadline = time.monotonic() + 5
        while recorder.frames() < RATE and time.monotonic() < deadline:
            time.sleep(0.05)
        if recorder.frames() < RATE:
            detail = ""
            if recorder.process.poll() is not None:
                detail = ": " + recorder.process.stderr.read().decode(errors="replace").strip()
            fail("parec recorded less than 1 s of the monitor in 5 s" + detail)
        before = recorder.frames()
        t_play = time.monotonic()
        client.command(play)
        t_play_reply = time.monotonic()
        time.sleep(3.0)
        t_pause = time.monotonic()
        client.command(pause)
        t_pause_reply = time.monotonic()
        time.sleep(1.5)
    except (OSError, RuntimeError) as error:
        fail(f"command failed: {error}")
    finally:
        recorder.stop()
        try:
            client.command(stop)
        except (OSError, RuntimeError):
            pass
    loud = recorder.loud()
    base = recorder.base()
    if any(loud[before - RATE // 2: before]):
        fail("the output was not silent before the play command")
    first = next((k for k in range(before, len(loud)) if loud[k]), None)
    if first is None:
        fail("no sound at the output within 4.5 s of the play command")
    last = max(k for k in range(first, len(loud)) if loud[k])
    if len(loud) - last < RATE // 2:
        fail("still sound at the output 1 s after the pause command")
    play_ms = (base + first / RATE - t_play_reply) * 1000
    pause_ms = (base + (last + 1) / RATE - t_pause) * 1000
    print(f"play_ms={play_ms:.1f} pause_ms={pause_ms:.1f} play_reply_ms={(t_play_reply - t_play) * 1000:.1f} "
          f"pause_reply_ms={(t_pause_reply - t_pause) * 1000:.1f}")


# --- a process's CPU time and wake-ups over a window ---------------------------------------------

def process_cpu_ns(pid):
    """Nanoseconds on a CPU of every thread process `pid` has had, ended ones included: its
    process CPU clock (CLOCK_PROCESS_CPUTIME_ID, read from outside through the clock id
    clock_getcpuclockid(pid) gives, ((~pid) << 3) | CPUCLOCK_SCHED), the time utime+stime in
    /proc/PID/stat counts, at nanosecond rather than clock-tick resolution."""
    return time.clock_gettime_ns(((~pid) << 3) | 2)


def stat_ticks(pid):
    """utime+stime from /proc/PID/stat, in clock ticks (ended threads included): a cross-check."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


class Sampler:
    """A process's CPU time, wake-ups and peak RSS over a window, threads that start or end in it
    included. CPU: `process_cpu_ns`, at the start and the end. Wake-ups: voluntary context
    switches, which Linux keeps per thread (/proc/PID/task/TID/status; no process-wide total for
    another process): every thread is read every `interval` s, each known by its TID and start
    time, and one that ends counts what it had at its last reading (it can lose at most its last
    interval's switches; a thread that starts and ends between two readings is not seen)."""

    def __init__(self, pid, interval=1.0):
        self.pid, self.interval = pid, interval
        self.first, self.last, self.names = {}, {}, {}
        self.rss_kb = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def threads(self):
        counts = {}
        for tid in os.listdir(f"/proc/{self.pid}/task"):
            try:
                with open(f"/proc/{self.pid}/task/{tid}/stat") as f:
                    head, tail = f.read().rsplit(")", 1)
                start = tail.split()[19]
                self.names[(tid, start)] = head.split("(", 1)[1].replace(" ", "_").replace(",", "_")
                with open(f"/proc/{self.pid}/task/{tid}/status") as f:
                    for line in f:
                        if line.startswith("voluntary_ctxt_switches:"):
                            counts[(tid, start)] = int(line.split()[1])
            except OSError:
                pass  # a thread that just ended
        return counts

    def sample(self):
        self.last.update(self.threads())
        self.sample_rss()

    def sample_rss(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        self.rss_kb = max(self.rss_kb, int(line.split()[1]))
        except OSError:
            pass

    def start(self):
        self.first = self.threads()
        self.last = dict(self.first)
        self.t0 = time.monotonic()
        self.cpu0 = process_cpu_ns(self.pid)
        self.ticks0 = stat_ticks(self.pid)
        self.sample()
        self.thread.start()
        return self

    def run(self):
        while not self.stopping.wait(self.interval):
            self.sample()

    def stop(self):
        """{cpu_ns, ticks, wakeups, threads_started, threads_ended, rss_kb, seconds, changed}:
        `changed` names the threads that started (+) or ended (-) in the window."""
        cpu1 = process_cpu_ns(self.pid)
        ticks1 = stat_ticks(self.pid)
        t1 = time.monotonic()
        self.stopping.set()
        self.thread.join()
        final = self.threads()
        self.last.update(final)
        self.sample_rss()
        started, ended = set(self.last) - set(self.first), set(self.last) - set(final)
        changed = [f"+{self.names[k]}/{k[0]}" for k in sorted(started)] + [f"-{self.names[k]}/{k[0]}" for k in sorted(ended)]
        return {"cpu_ns": cpu1 - self.cpu0, "ticks": ticks1 - self.ticks0,
                "wakeups": sum(n - self.first.get(k, 0) for k, n in self.last.items()),
                "threads_started": len(started), "threads_ended": len(ended),
                "rss_kb": self.rss_kb, "seconds": t1 - self.t0, "changed": ",".join(changed) or "none"}


def window(argv):
    """`window --pid PID --seconds N`: the Sampler's figures over N s, as key=value pairs."""
    o = options(argv, ["pid", "seconds"])
    try:
        sampler = Sampler(int(o["pid"])).start()
        time.sleep(float(o["seconds"]))
        figures = sampler.stop()
    except OSError as error:
        fail(f"process {o['pid']}: {error}")
    print(" ".join(f"{k}={v:.6f}" if isinstance(v, float) else f"{k}={v}" for k, v in figures.items()))


# --- following the position --------------------------------------------------------------------

def follow(argv):
    o = options(argv, ["protocol", "socket", "seconds", "interval", "daemon-pid"])
    protocol, seconds, interval, pid = o["protocol"], float(o["seconds"]), float(o["interval"]), int(o["daemon-pid"])
    try:
        client = Client(protocol, o["socket"])
        messages = 0
        positions = []
        usage0 = resource.getrusage(resource.RUSAGE_SELF)
        sampler = Sampler(pid).start()
        start = time.monotonic()
        end = start + seconds
        if protocol == "mpd":
            k = 0
            while True:
                due = start + k * interval
                if due >= end:
                    break
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                reply = client.command("status")
                messages += 1
                positions += [float(line.split(": ")[1]) for line in reply if line.startswith("elapsed: ")]
                k += 1
        else:
            client.command(("subscribe", {"stream": "player", "interval": interval}))
            while True:
                left = end - time.monotonic()
                if left <= 0:
                    break
                client.sock.settimeout(left)
                try:
                    push = json.loads(client.line())
                except socket.timeout:
                    break
                messages += 1
                if push.get("method") == "player.state":
                    positions.append(push["params"]["position"])
        elapsed = time.monotonic() - start
        daemon = sampler.stop()
        usage1 = resource.getrusage(resource.RUSAGE_SELF)
    except (OSError, RuntimeError, ValueError) as error:
        fail(f"{error}")
    if len(positions) < 2 or positions[-1] - positions[0] < 0.5 * seconds:
        fail(f"the position did not move while following ({positions[:1]} … {positions[-1:]})")
    print(f"bytes_out={client.sent} bytes_in={client.received} messages={messages} "
          f"client_wakeups={usage1.ru_nvcsw - usage0.ru_nvcsw} daemon_wakeups={daemon['wakeups']} "
          f"daemon_cpu_ms={daemon['cpu_ns'] / 1e6:.2f} seconds={elapsed:.3f}")


# --- the MPD protocol: status round trips, idle wake-up, idle clients ----------------------------

def mpd_connect(address, timeout=10):
    """A connected socket to an MPD-protocol listener, its greeting read: `HOST:PORT` (TCP, with
    TCP_NODELAY on the client's side) or an absolute Unix socket path."""
    if address.startswith("/"):
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(address)
    else:
        host, port = address.rsplit(":", 1)
        sock = socket.create_connection((host, int(port)), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    greeting = b""
    while not greeting.endswith(b"\n"):
        chunk = sock.recv(256)
        if not chunk:
            raise RuntimeError(f"{address} closed the connection before its greeting")
        greeting += chunk
    if not greeting.startswith(b"OK MPD "):
        raise RuntimeError(f"no MPD greeting from {address}: {greeting!r}")
    return sock


def read_reply(sock, buffer=b""):
    """Reads up to and including the `OK` line that ends a reply; the reply's bytes.
    RuntimeError on an ACK or a closed connection."""
    while not (buffer.endswith(b"\nOK\n") or buffer == b"OK\n"):
        if buffer.startswith(b"ACK ") and buffer.endswith(b"\n"):
            raise RuntimeError(buffer.decode(errors="replace").strip())
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("the daemon closed the connection")
        buffer += chunk
    return buffer


def mpd_rtt(argv):
    """`status` back to back on one connection: `warmup` unmeasured, then `count` timed from the
    send to the read that completed the reply (its `OK` line)."""
    o = options(argv, ["address", "count", "warmup"])
    count, warmup = int(o["count"]), int(o["warmup"])
    try:
        sock = mpd_connect(o["address"])
        request = b"status\n"
        for _ in range(warmup):
            sock.sendall(request)
            read_reply(sock)
        times = []
        for _ in range(count):
            t0 = time.perf_counter_ns()
            sock.sendall(request)
            reply = read_reply(sock)
            times.append(time.perf_counter_ns() - t0)
        sock.close()
    except (OSError, RuntimeError) as error:
        fail(f"{o['address']}: {error}")
    if b"\nstate: " not in b"\n" + reply:
        fail(f"{o['address']}: the status reply has no state: {reply[:200]!r}")
    print(f"p50_us={percentile(times, 50) / 1000:.1f} p99_us={percentile(times, 99) / 1000:.1f} "
          f"max_us={max(times) / 1000:.1f} count={count}")


def mpd_idle(argv):
    """One client waits in `idle player`; another sends the commands in turn (`pause 1`, then
    `pause 0`, …); per command, the time from its send to the read that brought the idle
    client's `changed: player`. Before each, the idle client's pending events are cleared
    (`idle player` + `noidle`: the idle returns at once with a pending event, and the `noidle`
    then gets no reply; without one, the `noidle` ends the idle), it starts `idle player` again,
    and 0.1 s passes for the daemon to take it; if its `changed: player` has come by then (an
    event of the previous command, late), that try is counted as `early` and done again."""
    import select
    o = options(argv, ["address", "count", "commands"])
    count, commands = int(o["count"]), o["commands"].split(",")
    times = {c: [] for c in commands}
    early = 0
    try:
        watcher, control = mpd_connect(o["address"]), mpd_connect(o["address"])
        i = 0
        while i < count:
            command = commands[i % len(commands)]
            watcher.sendall(b"idle player\nnoidle\n")
            read_reply(watcher)
            watcher.sendall(b"idle player\n")
            time.sleep(0.1)
            if select.select([watcher], [], [], 0)[0]:
                read_reply(watcher)
                early += 1
                if early > count:
                    raise RuntimeError(f"{early} idle replies came before the command")
                continue
            t0 = time.perf_counter_ns()
            control.sendall(command.encode() + b"\n")
            buffer = b""
            while b"changed: player\n" not in buffer:
                try:
                    chunk = watcher.recv(4096)
                except socket.timeout:
                    read_reply(control)
                    control.sendall(b"status\n")
                    state = [line for line in read_reply(control).decode().splitlines()
                             if line.startswith(("state:", "elapsed:", "duration:"))]
                    raise RuntimeError(f"no changed: player within 10 s of `{command}` ({i + 1} of {count}); "
                                       f"{', '.join(state)}")
                if not chunk:
                    raise RuntimeError("the daemon closed the idle connection")
                buffer += chunk
            t1 = time.perf_counter_ns()
            read_reply(watcher, buffer)
            read_reply(control)
            times[command].append(t1 - t0)
            i += 1
            time.sleep(0.1)
        watcher.close()
        control.close()
    except (OSError, RuntimeError) as error:
        fail(f"{o['address']}: {error}")
    print(" ".join(f"{c.replace(' ', '_')}_p50_ms={percentile(ts, 50) / 1e6:.3f} "
                   f"{c.replace(' ', '_')}_p99_ms={percentile(ts, 99) / 1e6:.3f} "
                   f"{c.replace(' ', '_')}_max_ms={max(ts) / 1e6:.3f}" for c, ts in times.items())
          + f" count={count} early={early}")


def mpd_idle_clients(argv):
    """`clients` connections, each in `idle` (every subsystem), held by this one process with
    non-blocking sockets and a selector; the daemon's CPU over `seconds` (its process CPU clock)
    while nothing changes. Then each client sends `noidle` and must get its `OK`: all were
    connected and idling through the window. Any byte that arrived in the window is counted (an
    event, or a closed connection, means something did change)."""
    import selectors
    o = options(argv, ["address", "clients", "seconds", "daemon-pid"])
    clients, seconds, pid = int(o["clients"]), float(o["seconds"]), int(o["daemon-pid"])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < clients + 64:
        if hard != resource.RLIM_INFINITY and hard < clients + 64:
            fail(f"RLIMIT_NOFILE's hard limit {hard} is below {clients + 64}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (clients + 64, hard))
    selector = selectors.DefaultSelector()
    socks = []
    try:
        for _ in range(clients):
            sock = mpd_connect(o["address"])
            sock.sendall(b"idle\n")
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
            socks.append(sock)
        time.sleep(1.0)  # every idle taken by the daemon
        arrived = closed = 0
        sampler = Sampler(pid).start()
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            for key, _ in selector.select(timeout=left):
                data = key.fileobj.recv(65536)
                arrived += len(data)
                if not data:
                    closed += 1
                    selector.unregister(key.fileobj)
        figures = sampler.stop()
        replies = 0
        for sock in socks:
            sock.setblocking(True)
            sock.settimeout(10)
            try:
                sock.sendall(b"noidle\n")
                if read_reply(sock) == b"OK\n":
                    replies += 1
            except (OSError, RuntimeError):
                pass
    except (OSError, RuntimeError) as error:
        fail(f"{o['address']}, client {len(socks) + 1} of {clients}: {error}")
    finally:
        for sock in socks:
            sock.close()
    if clients and (arrived or closed or replies != clients):
        fail(f"not idle through the window: {arrived} bytes arrived, {closed} connections closed, "
             f"{replies} of {clients} answered noidle with OK")
    print(f"cpu_ms={figures['cpu_ns'] / 1e6:.3f} percent={figures['cpu_ns'] / 1e7 / figures['seconds']:.4f} "
          f"wakeups={figures['wakeups']} seconds={figures['seconds']:.3f} clients={clients} "
          f"rss_kb={figures['rss_kb']} threads={figures['changed']}")


# --- the table ---------------------------------------------------------------------------------

def table(argv):
    path, seconds, rounds, follow_seconds, nproc, model, kernel, idle_clients, idle_seconds = argv
    values, reasons, by_round = {}, {}, {}
    current_round = "0"
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "round":
            current_round = parts[1]
        elif parts[0] == "na":
            reasons.setdefault(parts[1], parts[2])
        else:
            values.setdefault(parts[0], []).append(float(parts[1]))
            by_round.setdefault(current_round, {})[parts[0]] = float(parts[1])

    def fmt(x, digits):
        return f"{x:,.{digits}f}"

    def summary(vs, digits, unit=""):
        if not vs:
            return None
        if len(vs) == 1:
            return fmt(vs[0], digits) + unit
        return f"{fmt(statistics.median(vs), digits)}{unit} ({fmt(min(vs), digits)}–{fmt(max(vs), digits)})"

    def why(key):
        parts = key.split(".")
        for k in [".".join(parts[:n]) for n in range(len(parts), 0, -1)] + [parts[1] if len(parts) > 1 else ""]:
            if k in reasons:
                return "not measured: " + reasons[k]
        return "not measured (see the log above)"

    rows = []
    notes = []

    def row(name, figure, digits, target=None, limit=None, other="mpd", resolution=None, absolute=None):
        """figure: the key without the player, e.g. cpu.{}.flac; the ratio is reel/other per round.
        Figures that can be 0 or below (a latency within the method's resolution) get no ratio;
        their target compares the medians. `absolute`: a target for Reel's median itself."""
        reel, theirs = figure.format("reel"), figure.format(other)
        a = summary(values.get(reel, []), digits) or why(reel)
        b = summary(values.get(theirs, []), digits) or why(theirs)
        pairs = [(r[reel], r[theirs]) for r in by_round.values() if reel in r and theirs in r]
        positive = bool(pairs) and all(x > 0 and y > 0 for x, y in pairs)
        ratios = [x / y for x, y in pairs] if positive else []
        ratio = summary(ratios, 2 if not ratios or min(ratios) >= 0.01 else 4, "×") or ("— (a value ≤ 0)" if pairs else "—")
        met = ""
        if absolute is not None:
            met = "not measured" if reel not in values else (
                "yes" if statistics.median(values[reel]) <= absolute else "no")
        if limit is not None:
            if pairs and resolution is not None and max(statistics.median(values[reel]),
                                                        statistics.median(values[theirs])) <= resolution:
                met = f"tie: both within ±{resolution:g} ms"
            elif not pairs:
                met = "not measured"
            elif positive:
                met = "yes" if statistics.median(ratios) <= limit else "no"
            else:
                mine = statistics.median(values[reel])
                met = "yes" if mine <= limit * statistics.median(values[theirs]) else "no"
        rows.append((name, a, b, ratio, target or "", met))

    # What following costs the daemon beyond playing: the follow window minus the same daemon
    # playing FLAC alone in the same round (its CPU window), scaled to the follow's length.
    for r in by_round.values():
        for p in ("reel", "mpd"):
            if f"follow.{p}.daemon_wakeups" in r and f"wake.{p}.flac" in r:
                net = r[f"follow.{p}.daemon_wakeups"] - r[f"wake.{p}.flac"] * float(follow_seconds)
                r[f"follownet.{p}.wakeups"] = net
                values.setdefault(f"follownet.{p}.wakeups", []).append(net)
            if f"follow.{p}.daemon_cpu" in r and f"cpu.{p}.flac" in r:
                net = r[f"follow.{p}.daemon_cpu"] - r[f"cpu.{p}.flac"] * float(follow_seconds)
                r[f"follownet.{p}.cpu"] = net
                values.setdefault(f"follownet.{p}.cpu", []).append(net)

    for ext in ("wav", "flac", "mp3"):
        target = "≤ 0.9×" if ext != "wav" else None
        row(f"CPU per audio s, {ext.upper()} (ms/s)", "cpu.{}." + ext, 2, target, 0.9 if target else None)
    for ext in ("wav", "flac", "mp3"):
        row(f"  floor: sndfile-play, {ext.upper()} (ms/s; ratio Reel/it)", "cpu.{}." + ext, 2, other="sndfile")
    for ext in ("wav", "flac", "mp3"):
        row(f"wake-ups per s while playing, {ext.upper()}", "wake.{}." + ext, 0)
    row("RSS idle, after start (MB)", "rss.{}.idle", 1)
    row("peak RSS while playing (MB)", "rss.{}.playing", 1, "≤ 0.5×", 0.5)
    row("RTT p50, stopped (µs)", "rtt.{}.stopped.p50", 1, "≤ 1×", 1.0)
    row("RTT p99, stopped (µs)", "rtt.{}.stopped.p99", 1, "≤ 1.5×", 1.5)
    row("RTT p50, playing (µs)", "rtt.{}.playing.p50", 1, "≤ 1×", 1.0)
    row("RTT p99, playing (µs)", "rtt.{}.playing.p99", 1, "≤ 1.5×", 1.5)
    row("worst RTT while a track ends (ms)", "rtt.{}.trackend.max", 2)
    # The output method dates a frame to about ±2 ms (see docs/performance.md): two figures that
    # both fall within that cannot be told apart.
    row("play reply → first audio (ms)", "latency.{}.play", 1, "≤ 0.5×", 0.5, resolution=2)
    row("  play sent → first audio (ms)", "latency.{}.play_sent", 1)
    row("  play sent → reply (ms)", "latency.{}.play_reply", 1)
    row("pause sent → silence (ms)", "latency.{}.pause", 1, "≤ 0.5×", 0.5, resolution=2)
    row("  pause sent → reply (ms)", "latency.{}.pause_reply", 1)
    row(f"follow {follow_seconds} s: client bytes sent", "follow.{}.bytes_out", 0)
    row(f"follow {follow_seconds} s: client bytes received", "follow.{}.bytes_in", 0)
    row(f"follow {follow_seconds} s: messages (polls / pushes)", "follow.{}.messages", 0)
    row(f"follow {follow_seconds} s: client wake-ups", "follow.{}.client_wakeups", 0)
    row(f"follow {follow_seconds} s: daemon wake-ups (playing too)", "follow.{}.daemon_wakeups", 0)
    row("  of them for the client (minus playing alone)", "follownet.{}.wakeups", 0)
    row(f"follow {follow_seconds} s: daemon CPU, ms (playing too)", "follow.{}.daemon_cpu", 1)
    row("  of it for the client (minus playing alone)", "follownet.{}.cpu", 1)
    for transport, name in (("tcp", "TCP"), ("unix", "Unix socket")):
        for phase in ("stopped", "playing"):
            for p in ("p50", "p99"):
                row(f"MPD protocol: status RTT {p}, {name}, {phase} (µs)", f"mpdrtt.{{}}.{transport}.{phase}.{p}", 1,
                    "≤ 1×", 1.0)
    for command, key in (("pause 1", "pause"), ("pause 0", "resume")):
        for p in ("p50", "p99"):
            row(f"MPD protocol: `{command}` → idle client's changed: player, {p} (ms)", f"mpdidle.{{}}.{key}.{p}", 3,
                "≤ 1×", 1.0)
    clients = f"{int(idle_clients):,}"
    row(f"CPU, stopped, {clients} MPD clients in idle (% of a core)", "idlecpu.{}.clients", 3, "≤ 1 %", absolute=1.0)
    row("  the same with no client (% of a core)", "idlecpu.{}.none", 3)
    row(f"RSS, stopped, {clients} MPD clients in idle (MB)", "idlerss.{}.clients", 1)

    head = ("figure", "Reel: median (min–max)", "MPD", "Reel/MPD", "target", "met")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(6)]
    print()
    print(f"Reel vs MPD: {rounds} round(s) A/B, {seconds} s CPU windows, 44.1 kHz stereo 16-bit, "
          f"ALSA pulse -> private PulseAudio null sink; {idle_seconds} s idle-client windows")
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print(f"machine: {nproc} CPUs, {model}, Linux {kernel}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    command, rest = sys.argv[1], sys.argv[2:]
    {"mpd": mpd_command, "output": output_latency, "window": window, "follow": follow,
     "mpd-rtt": mpd_rtt, "mpd-idle": mpd_idle, "mpd-idle-clients": mpd_idle_clients, "table": table}.get(
        command, lambda _: (print(__doc__), sys.exit(2)))(rest)
