"""The measuring half of bench/soak: reeld under a steady trickle of control traffic."""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time


def log(text):
    print(f"[soak {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


class Client:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.buffer = b""
        self.next_id = 1

    def call(self, method, params=None):
        request = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            request["params"] = params
        self.next_id += 1
        self.sock.sendall(json.dumps(request).encode() + b"\n")
        while True:
            message = self.read()
            if message.get("id") == request["id"]:
                return message

    def read(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise RuntimeError("reeld closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def close(self):
        self.sock.close()


def rss_kb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--minutes", type=int, default=60)
    args = parser.parse_args()

    music = os.path.join(args.work, "loop.flac")
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", music, "synth", "30",
                    "sine", "220", "sine", "330", "remix", "1v0.4", "2v0.4"], check=True)
    socket_path = os.path.join(args.work, "reel.sock")
    config = os.path.join(args.work, "empty.toml")
    open(config, "w").close()
    reeld = subprocess.Popen(
        [args.reeld, "--config", config, "--socket", socket_path, "--data-dir", os.path.join(args.work, "data"),
         "--device", "pulse", "--log-level", "warning"],
        stdin=subprocess.DEVNULL, stdout=open(os.path.join(args.work, "reeld.log"), "ab"), stderr=subprocess.STDOUT)
    try:
        run(args, reeld, socket_path, music)
    finally:
        if reeld.poll() is None:
            reeld.terminate()
            reeld.wait()


def run(args, reeld, socket_path, music):
    deadline = time.monotonic() + 20
    control = None
    while control is None:
        try:
            control = Client(socket_path)
        except OSError:
            if time.monotonic() > deadline or reeld.poll() is not None:
                raise RuntimeError("reeld did not start")
            time.sleep(0.05)
    control.call("player.play", {"file": music})
    start = time.monotonic()
    samples = []  # (minute, rss MB, fds, underruns)
    counts = {"seeks": 0, "pauses": 0, "subscriptions": 0, "restarts": 0, "errors": 0}
    next_sample = start
    second = 0
    print(f"{'minute':>6}  {'RSS MB':>7}  {'fds':>4}  {'underruns':>9}", flush=True)
    while True:
        now = time.monotonic()
        if now >= next_sample:
            status = control.call("player.status")["result"]
            minute = round((now - start) / 60)
            sample = (minute, rss_kb(reeld.pid) / 1024, fd_count(reeld.pid), status.get("underruns", 0))
            samples.append(sample)
            print(f"{sample[0]:>6}  {sample[1]:>7.1f}  {sample[2]:>4}  {sample[3]:>9}", flush=True)
            next_sample += 60
            if minute >= args.minutes:
                break
        second += 1
        action = second % 4
        state = control.call("player.status")["result"]
        if state["state"] == "stopped":
            control.call("player.play", {"file": music})  # the loop
            counts["restarts"] += 1
        elif action == 0:
            reply = control.call("player.seek", {"position": round(random.uniform(0, 25), 2)})
            counts["seeks"] += 1
            counts["errors"] += "error" in reply
        elif action == 1:
            control.call("player.pause")
            counts["pauses"] += 1
        elif action == 2:
            control.call("player.resume")
        else:
            watcher = Client(socket_path)
            watcher.call("subscribe", {"stream": "player", "interval": 0.1})
            watcher.read()
            watcher.close()
            counts["subscriptions"] += 1
        time.sleep(max(start + second - time.monotonic(), 0))
    control.close()

    warm = [s for s in samples if s[0] >= 2]
    print()
    print(f"{args.minutes} minutes; {counts['seeks']} seeks, {counts['pauses']} pauses and resumes, "
          f"{counts['subscriptions']} subscriptions opened and dropped, {counts['restarts']} loops; "
          f"{counts['errors']} error replies")
    if len(warm) >= 2:
        growth = warm[-1][1] - warm[0][1]
        peak = max(s[1] for s in warm)
        print(f"RSS after warm-up (minute {warm[0][0]}): {warm[0][1]:.1f} MB → {warm[-1][1]:.1f} MB at minute "
              f"{warm[-1][0]} (peak {peak:.1f}); growth {growth:+.1f} MB")
        print(f"open descriptors: {warm[0][2]} → {warm[-1][2]}")
        verdict = "does not grow" if growth <= 1.0 and warm[-1][2] <= warm[0][2] else "GROWS"
        print(f"memory and descriptors after warm-up: {verdict} (allowance 1 MB for allocator noise)")


if __name__ == "__main__":
    main()
