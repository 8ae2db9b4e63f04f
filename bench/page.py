"""The Python half of bench/page: drives headless Chromium (Selenium), reeld's Unix socket and
WebSocket clients of its own (standard library) that follow the player as the page does."""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import os
import selectors
import socket
import statistics
import struct
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service


def driver():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=390,844"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def request(sock_path, method):
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sock_path)
        s.sendall(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method}).encode() + b"\n")
        buf = b""
        while b"\n" not in buf:
            buf += s.recv(65536)
    return json.loads(buf)


def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def wait(d, script, timeout=20):
    end = time.monotonic() + timeout
    while not d.execute_script(script):
        if time.monotonic() > end:
            raise SystemExit(f"bench/page: timed out waiting for {script}")
        time.sleep(0.01)


# --- WebSocket clients that follow the player as the page does (standard library only) ---

WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
PLAYER_INTERVAL = 0.5  # the page's PLAYER_INTERVAL (Sources/ReelDaemon/HTTP/Page/app.js)


class WSClient:
    """One WebSocket to /rpc (RFC 6455): the handshake with the page's Origin, masked text frames
    out, text frames in (fragments joined), pings answered with pongs, a close answered."""

    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=10)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall((f"GET /rpc HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                           f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
                           f"Origin: http://{host}:{port}\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise SystemExit(f"bench/page: the WebSocket handshake was cut short: {head!r}")
            head += chunk
        head, self.buffer = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        accept = base64.b64encode(hashlib.sha1((key + WS_GUID).encode()).digest()).decode()
        if not lines[0].startswith("HTTP/1.1 101") or headers.get("sec-websocket-accept") != accept:
            raise SystemExit(f"bench/page: no WebSocket upgrade: {lines[0]}")
        self.fragments = []
        self.closed = False
        self.messages = []   # decoded JSON messages not yet taken
        self.counts = {}     # push method -> how many arrived
        self.next_id = 1

    def send_frame(self, opcode, payload):
        mask = os.urandom(4)
        n = len(payload)
        if n < 126:
            header = struct.pack("!BB", 0x80 | opcode, 0x80 | n)
        elif n < 1 << 16:
            header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, n)
        masked = bytes(b ^ mask[i & 3] for i, b in enumerate(payload))
        self.sock.sendall(header + mask + masked)

    def call(self, method, params):
        """Send a request as one text frame; its id."""
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        self.next_id += 1
        self.send_frame(0x1, json.dumps(request, separators=(",", ":")).encode())
        return request["id"]

    def readable(self):
        """Read what has arrived (the socket is ready) and take every whole frame in it."""
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            self.closed = True
            return
        self.buffer += chunk
        while True:
            if len(self.buffer) < 2:
                return
            b0, b1 = self.buffer[0], self.buffer[1]
            n, at = b1 & 0x7F, 2
            if n == 126:
                if len(self.buffer) < 4:
                    return
                n, at = struct.unpack_from("!H", self.buffer, 2)[0], 4
            elif n == 127:
                if len(self.buffer) < 10:
                    return
                n, at = struct.unpack_from("!Q", self.buffer, 2)[0], 10
            if b1 & 0x80:
                raise SystemExit("bench/page: the server sent a masked frame")
            if len(self.buffer) < at + n:
                return
            payload, self.buffer = self.buffer[at:at + n], self.buffer[at + n:]
            opcode = b0 & 0x0F
            if opcode == 0x9:                      # ping
                self.send_frame(0xA, payload)
            elif opcode == 0x8:                    # close: answer it
                if not self.closed:
                    self.send_frame(0x8, payload[:2])
                self.closed = True
                return
            elif opcode in (0x0, 0x1, 0x2):        # text (binary read as text), continuation
                self.fragments.append(payload)
                if b0 & 0x80:
                    message = json.loads(b"".join(self.fragments))
                    self.fragments = []
                    for m in message if isinstance(message, list) else [message]:
                        if "id" not in m:
                            self.counts[m.get("method")] = self.counts.get(m.get("method"), 0) + 1
                        self.messages.append(m)

    def close(self):
        try:
            if not self.closed:
                self.send_frame(0x8, struct.pack("!H", 1000))
        except OSError:
            pass
        self.sock.close()


def pump(clients, seconds, tick=None, every=0.5):
    """Read every client's frames for `seconds`; `tick()` every `every` seconds meanwhile."""
    with selectors.DefaultSelector() as sel:
        for c in clients:
            if not c.closed:
                sel.register(c.sock, selectors.EVENT_READ, c)
        end = time.monotonic() + seconds
        next_tick = time.monotonic()
        while (left := end - time.monotonic()) > 0:
            if tick and time.monotonic() >= next_tick:
                tick()
                next_tick += every
            timeout = min(left, max(0.0, next_tick - time.monotonic())) if tick else left
            for key, _ in sel.select(timeout):
                c = key.data
                c.readable()
                if c.closed:
                    sel.unregister(c.sock)


def follow(host, port, count):
    """`count` clients, each subscribed to player (at the page's interval), queue and mixer, as
    the page's subscribeAll() does; waits for the three replies on each."""
    clients = []
    for _ in range(count):
        c = WSClient(host, port)
        ids = [c.call("subscribe", {"stream": "player", "interval": PLAYER_INTERVAL}),
               c.call("subscribe", {"stream": "queue"}),
               c.call("subscribe", {"stream": "mixer"})]
        clients.append((c, ids))
    end = time.monotonic() + 10
    for c, ids in clients:
        while True:
            replies = {m["id"]: m for m in c.messages if m.get("id") in ids}
            if len(replies) == len(ids):
                break
            if time.monotonic() > end or c.closed:
                raise SystemExit("bench/page: a client got no reply to its subscriptions")
            pump([c], 0.05)
        for m in replies.values():
            if "error" in m:
                raise SystemExit(f"bench/page: subscribe: {m['error']}")
    return [c for c, _ in clients]


class Proc:
    """reeld's CPU (utime+stime of the whole process from /proc/PID/stat: ended threads
    included) and RSS (VmRSS)."""

    def __init__(self, pid):
        self.pid = pid
        self.hz = os.sysconf("SC_CLK_TCK")

    def cpu(self):
        with open(f"/proc/{self.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self.hz   # utime, stime (fields 14, 15)

    def rss_kb(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        raise SystemExit("bench/page: no VmRSS for reeld")


def load_average():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def window(reeld, seconds, clients=()):
    """CPU share of a core, RSS samples (kB) every 0.5 s and load averages over `seconds`, reading
    the clients' frames meanwhile (when there are any)."""
    rss = []
    load_before = load_average()
    t0, c0 = time.monotonic(), reeld.cpu()
    pump(list(clients), seconds, tick=lambda: rss.append(reeld.rss_kb()))
    t1, c1 = time.monotonic(), reeld.cpu()
    rss.append(reeld.rss_kb())
    return {"cpu": (c1 - c0) / (t1 - t0), "cpu_s": c1 - c0, "rss": rss, "seconds": t1 - t0,
            "load": (load_before, load_average())}


PAGE_COUNTER = """window.__frames = 0;
    const receive = rpc.receive.bind(rpc);
    rpc.receive = (text) => { window.__frames++; receive(text); };"""


def clients_phase(a):
    """reeld playing with no client, then with a.clients WebSocket clients and the page open in
    Chromium: CPU and RSS over a window of a.window seconds after a.warmup seconds each. The lines
    to print and the Chromium driver (started after the first window)."""
    reeld = Proc(a.pid)
    url = urllib.parse.urlsplit(a.url)
    status = request(a.socket, "player.status")["result"]
    if status["state"] != "playing":
        raise SystemExit(f"bench/page: reeld is {status['state']}, not playing")
    time.sleep(a.warmup)
    alone = window(reeld, a.window)
    before = alone["rss"][-1]

    d = driver()
    try:
        clients = follow(url.hostname, url.port, a.clients)
        d.get(a.url + "/")
        wait(d, "return document.body.dataset.ready === '1'")
        d.execute_script(PAGE_COUNTER)
        pump(clients, a.warmup)
        for c in clients:
            c.counts = {}
        d.execute_script("window.__frames = 0")
        loaded = window(reeld, a.window, clients)
        page_frames = d.execute_script("return window.__frames")
        closed = sum(c.closed for c in clients)
        for c in clients:
            c.close()
        status = request(a.socket, "player.status")["result"]
        d.get("about:blank")
    except BaseException:
        d.quit()
        raise

    ticks = [c.counts.get("player.state", 0) for c in clients]
    others = {m: sum(c.counts.get(m, 0) for c in clients) for m in ("queue.changed", "mixer.state")}
    expected = loaded["seconds"] / PLAYER_INTERVAL
    peak = max(loaded["rss"])
    mb = lambda kb: kb / 1024
    rows = [
        ("figure", "no client", f"{a.clients} clients + page", "change", "target", "met"),
        ("RSS (VmRSS), MB: before / peak during", f"{mb(before):.1f}",
         f"{mb(peak):.1f} (median {mb(statistics.median(loaded['rss'])):.1f})", f"{mb(peak - before):+.1f} MB",
         "<= +5 MB", "yes" if peak - before <= 5 * 1024 else "no"),
        ("CPU, % of a core (utime+stime)", f"{alone['cpu'] * 100:.2f} ({alone['cpu_s'] * 1000:.0f} ms)",
         f"{loaded['cpu'] * 100:.2f} ({loaded['cpu_s'] * 1000:.0f} ms)",
         f"{(loaded['cpu'] - alone['cpu']) * 100:+.2f}", "<= 2 % (total)", "yes" if loaded["cpu"] <= 0.02 else "no"),
        ("load average (1 min), start -> end", f"{alone['load'][0]} -> {alone['load'][1]}",
         f"{loaded['load'][0]} -> {loaded['load'][1]}", "", "", ""),
    ]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [f"reeld with {a.clients} WebSocket clients (subscribed to player at {PLAYER_INTERVAL} s, queue, mixer; "
             f"Origin http://{url.netloc}) + 1 page in Chromium, playing FLAC into a PulseAudio null sink; "
             f"{a.window:g} s windows after {a.warmup:g} s of warm-up"]
    for i, r in enumerate(rows):
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip())
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append(f"pushes in the {loaded['seconds']:.1f} s window: player.state {sum(ticks)} "
                 f"(per client min {min(ticks)}, max {max(ticks)}; expected ~{expected:.0f}), "
                 f"queue.changed {others['queue.changed']}, mixer.state {others['mixer.state']}; "
                 f"the page received {page_frames} frames; clients closed by reeld: {closed}; "
                 f"player {status['state']}, underruns {status['underruns']}")
    return lines, d


def main():
    ap = argparse.ArgumentParser()
    for name in ("url", "socket", "page", "cpu", "cores"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--loads", type=int, default=10)
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--window", type=float, default=20)
    ap.add_argument("--warmup", type=float, default=10)
    a = ap.parse_args()

    # First, before anything has used reeld's HTTP server: reeld playing with no client, then
    # with the WebSocket clients and one page (Chromium starts between the two windows).
    d = None
    clients_lines = []
    if a.clients > 0:
        clients_lines, d = clients_phase(a)

    # Weight: what GET / and the two files it references serve.
    sizes, gz = {}, 0
    for path in ("/", "/app.js", "/style.css"):
        body = urllib.request.urlopen(a.url + path).read()
        sizes[path] = len(body)
        gz += len(gzip.compress(body, 9))
    total = sum(sizes.values())

    if d is None:
        d = driver()
    try:
        # Time to a first rendered player: navigation start to the first player state drawn
        # (performance mark 'reel-player', set after the DOM shows it), and to the first paint after it.
        firsts, paints = [], []
        for _ in range(a.loads):
            d.get("about:blank")
            d.get(a.url + "/")
            wait(d, "return document.body.dataset.ready === '1'")
            firsts.append(d.execute_script("return performance.getEntriesByName('reel-player')[0].startTime"))
            paints.append(d.execute_async_script("""const done = arguments[0];
                requestAnimationFrame(() => setTimeout(() => done(performance.now())))"""))

        # The delay from a state change to the DOM: a MutationObserver notes when the player's
        # data-state changes; the clocks are matched by the round trip with the least delay.
        d.execute_script("""window.__changes = [];
            new MutationObserver(() => window.__changes.push([performance.timeOrigin + performance.now(),
                document.getElementById('player').dataset.state]))
              .observe(document.getElementById('player'), {attributes: true, attributeFilter: ['data-state']});""")
        best = None
        for _ in range(30):
            before = time.time() * 1000
            js = d.execute_script("return performance.timeOrigin + performance.now()")
            after = time.time() * 1000
            if best is None or after - before < best[0]:
                best = (after - before, js - (before + after) / 2)
        rtt, offset = best
        delays = []
        state = request(a.socket, "player.status")["result"]["state"]
        for i in range(a.rounds):
            method = "player.pause" if state == "playing" else "player.resume"
            want = "paused" if method == "player.pause" else "playing"
            seen = len(d.execute_script("return window.__changes"))
            sent = time.time() * 1000
            reply = request(a.socket, method)
            if "error" in reply:
                raise SystemExit(f"bench/page: {method}: {reply['error']}")
            end = time.monotonic() + 10
            while True:
                changes = d.execute_script("return window.__changes")
                hit = [c for c in changes[seen:] if c[1] == want]
                if hit:
                    break
                if time.monotonic() > end:
                    raise SystemExit(f"bench/page: the page never showed {want}")
                time.sleep(0.002)
            delays.append(hit[0][0] - offset - sent)
            state = want
            time.sleep(0.05)
    finally:
        d.quit()

    print(f"bench/page  {a.cpu}, {a.cores} cores, Chromium headless")
    print(f"page weight:  {total} bytes uncompressed (index.html {sizes['/']}, app.js {sizes['/app.js']}, "
          f"style.css {sizes['/style.css']}); {gz} bytes gzipped; target <= 100 KB")
    print(f"first rendered player ({a.loads} loads, from navigation start):  "
          f"median {statistics.median(firsts):.1f} ms, max {max(firsts):.1f} ms; "
          f"painted: median {statistics.median(paints):.1f} ms")
    print(f"state change -> DOM ({a.rounds} pause/resume on the Unix socket; clocks matched to +-{rtt / 2:.2f} ms):  "
          f"p50 {pct(delays, 50):.1f} ms, p99 {pct(delays, 99):.1f} ms, max {max(delays):.1f} ms; target p99 <= 50 ms")
    for line in clients_lines:
        print(line)


if __name__ == "__main__":
    main()
