"""The Python half of bench/page: drives headless Chromium (Selenium) and reeld's Unix socket."""

from __future__ import annotations

import argparse
import gzip
import json
import socket
import statistics
import time
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


def main():
    ap = argparse.ArgumentParser()
    for name in ("url", "socket", "page", "cpu", "cores"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--loads", type=int, default=10)
    a = ap.parse_args()

    # Weight: what GET / and the two files it references serve.
    sizes, gz = {}, 0
    for path in ("/", "/app.js", "/style.css"):
        body = urllib.request.urlopen(a.url + path).read()
        sizes[path] = len(body)
        gz += len(gzip.compress(body, 9))
    total = sum(sizes.values())

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


if __name__ == "__main__":
    main()
