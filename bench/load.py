"""The measuring half of bench/load."""
import argparse
import json
import os
import resource
import select
import socket
import subprocess
import sys
import time

from measuring import percentile

CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def call(sock, method, params=None, buffer=b""):
    request = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        request["params"] = params
    sock.sendall(json.dumps(request).encode() + b"\n")
    while True:
        while b"\n" not in buffer:
            buffer += sock.recv(65536)
        line, buffer = buffer.split(b"\n", 1)
        message = json.loads(line)
        if message.get("id") == 1:
            return message.get("result", message.get("error"))


STATUS = b'{"jsonrpc":"2.0","id":1,"method":"player.status"}\n'


def rtt_client(path, seconds, interval):
    """The control client, run as its own process (so the subscribers' drain loop and the GIL
    cannot delay it): connects, says `ready`, waits for `go` on stdin, then for `seconds` sends a
    `player.status` request every `interval` s (the next at once when a reply comes late), one
    outstanding at a time, and prints each round trip in microseconds as a JSON list."""
    sock = socket.socket(socket.AF_UNIX)
    sock.connect(path)
    print("ready", flush=True)
    sys.stdin.readline()
    rtts = []
    start = time.monotonic()
    end = start + seconds
    k = 0
    while True:
        due = start + k * interval
        if due >= end:
            break
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        t0 = time.perf_counter_ns()
        sock.sendall(STATUS)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("reeld closed the control connection")
            reply += chunk
        rtts.append((time.perf_counter_ns() - t0) / 1000)
        if b'"result"' not in reply:
            raise RuntimeError(f"player.status failed: {reply[:200]!r}")
        k += 1
    print(json.dumps(rtts), flush=True)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "rtt-client":
        rtt_client(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--build", choices=["release", "debug"], default="release")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    music = os.path.join(args.work, "tone.flac")
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", music, "synth", str(3 * args.seconds + 20),
                    "sine", "440"], check=True)
    path = os.path.join(args.work, "reel.sock")
    config = os.path.join(args.work, "empty.toml")
    open(config, "w").close()
    reeld = subprocess.Popen([args.reeld, "--config", config, "--socket", path, "--data-dir",
                              os.path.join(args.work, "data"), "--device", "pulse", "--log-level", "warning"],
                             stdin=subprocess.DEVNULL, stdout=open(os.path.join(args.work, "reeld.log"), "ab"),
                             stderr=subprocess.STDOUT)
    clients = []
    rtt = None
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                control = socket.socket(socket.AF_UNIX)
                control.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline or reeld.poll() is not None:
                    raise RuntimeError("reeld did not start")
                time.sleep(0.05)
        call(control, "player.play", {"file": music})
        time.sleep(3)  # past PulseAudio's start-up hold
        before = cpu_seconds(reeld.pid)
        time.sleep(args.seconds)
        alone = (cpu_seconds(reeld.pid) - before) / args.seconds

        for _ in range(args.clients):
            client = socket.socket(socket.AF_UNIX)
            client.connect(path)
            client.sendall(b'{"jsonrpc":"2.0","id":1,"method":"subscribe","params":{"stream":"player","interval":0.1}}\n')
            client.setblocking(False)
            clients.append(client)
        poller = select.epoll()
        for index, client in enumerate(clients):
            poller.register(client.fileno(), select.EPOLLIN)
        by_fd = {client.fileno(): index for index, client in enumerate(clients)}
        ticks = [0] * len(clients)

        def drain(until, counting):
            while time.monotonic() < until:
                for fd, _ in poller.poll(0.05):
                    try:
                        data = clients[by_fd[fd]].recv(65536)
                    except BlockingIOError:
                        continue
                    if counting:
                        ticks[by_fd[fd]] += data.count(b"\n")

        rtt = subprocess.Popen([sys.executable, os.path.abspath(__file__), "rtt-client", path, str(args.seconds),
                                "0.01"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        if rtt.stdout.readline().strip() != "ready":
            raise RuntimeError("the control client did not connect")
        drain(time.monotonic() + 1, False)
        before = cpu_seconds(reeld.pid)
        rtt.stdin.write("go\n")
        rtt.stdin.flush()
        drain(time.monotonic() + args.seconds, True)
        loaded = (cpu_seconds(reeld.pid) - before) / args.seconds
        out, _ = rtt.communicate(timeout=30)
        if rtt.returncode != 0 or not out.strip():
            raise RuntimeError("the control client failed (see above)")
        rtts = json.loads(out)
        status = call(control, "player.status")
        expected = args.seconds / 0.1
        print()
        print(f"Load benchmark — {os.cpu_count()} CPUs, {args.build} reeld playing 44.1 kHz stereo FLAC into a "
              f"PulseAudio null sink")
        print(f"reeld CPU playing, no subscribers:                     {alone * 100:.1f} % of a core")
        print(f"reeld CPU playing, {args.clients} subscribers at 0.1 s:      {loaded * 100:.1f} % of a core")
        print(f"ticks per subscriber in {args.seconds} s (expected {expected:.0f}): min {min(ticks)}, "
              f"median {sorted(ticks)[len(ticks) // 2]}, max {max(ticks)}")
        print(f"min ticks / expected:                                  {min(ticks)} / {expected:.0f} = "
              f"{min(ticks) / expected * 100:.0f} %")
        print(f"player.status round trip during the load: p50 {percentile(rtts, 50) / 1000:.2f} ms, "
              f"p99 {percentile(rtts, 99) / 1000:.2f} ms, max {max(rtts) / 1000:.2f} ms "
              f"({len(rtts):,} requests, one every 10 ms, one outstanding)")
        print(f"player state {status.get('state')}, underruns {status.get('underruns')}")
    finally:
        if rtt is not None and rtt.poll() is None:
            rtt.kill()
            rtt.wait()
        for client in clients:
            client.close()
        if reeld.poll() is None:
            reeld.terminate()
            reeld.wait()


if __name__ == "__main__":
    main()
