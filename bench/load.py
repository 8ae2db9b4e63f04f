"""The measuring half of bench/load."""
import argparse
import json
import os
import resource
import select
import socket
import subprocess
import time

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


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
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

        drain(time.monotonic() + 1, False)
        before = cpu_seconds(reeld.pid)
        drain(time.monotonic() + args.seconds, True)
        loaded = (cpu_seconds(reeld.pid) - before) / args.seconds
        status = call(control, "player.status")
        expected = args.seconds / 0.1
        print()
        print(f"Load benchmark — {os.cpu_count()} CPUs, release reeld playing 44.1 kHz stereo FLAC into a "
              f"PulseAudio null sink")
        print(f"reeld CPU playing, no subscribers:                     {alone * 100:.1f} % of a core")
        print(f"reeld CPU playing, {args.clients} subscribers at 0.1 s:      {loaded * 100:.1f} % of a core")
        print(f"ticks per subscriber in {args.seconds} s (expected {expected:.0f}): min {min(ticks)}, "
              f"median {sorted(ticks)[len(ticks) // 2]}, max {max(ticks)}")
        print(f"player state {status.get('state')}, underruns {status.get('underruns')}")
    finally:
        for client in clients:
            client.close()
        if reeld.poll() is None:
            reeld.terminate()
            reeld.wait()


if __name__ == "__main__":
    main()
