"""The measuring half of bench/recording (the shell half installs, builds and starts PulseAudio).

Every process started here is tracked by PID and stopped on the way out. A figure that cannot
be measured is printed as "not measured: why", never guessed.
"""
import argparse
import json
import os
import random
import resource
import signal
import socket
import statistics
import subprocess
import sys
import time

FORMATS = ["flac", "wav", "ogg", "opus"]
CLK_TCK = os.sysconf("SC_CLK_TCK")
started = []  # Popen objects to stop at exit


def log(text):
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def stop_all():
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


class Client:
    """JSON-RPC over reeld's Unix socket, one request at a time."""

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
            while b"\n" not in self.buffer:
                chunk = self.sock.recv(65536)
                if not chunk:
                    raise RuntimeError(f"reeld closed the connection during {method}")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") != request["id"]:
                continue
            if "error" in message:
                raise RuntimeError(f"{method}: {message['error'].get('message')}")
            return message["result"]

    def next_notification(self, timeout):
        """The next pushed message (method, params); RuntimeError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while True:
            while b"\n" not in self.buffer:
                self.sock.settimeout(max(deadline - time.monotonic(), 0.01))
                try:
                    chunk = self.sock.recv(65536)
                except socket.timeout:
                    raise RuntimeError(f"no push within {timeout} s")
                finally:
                    self.sock.settimeout(None)
                if not chunk:
                    raise RuntimeError("reeld closed the connection")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if "method" in message and "id" not in message:
                return message["method"], message["params"]

    def close(self):
        self.sock.close()


class Reeld:
    def __init__(self, binary, work, data, config_text="", name="reel"):
        self.socket = os.path.join(work, f"{name}.sock")
        self.log_path = os.path.join(work, f"{name}d.log")
        config = os.path.join(work, f"{name}-empty.toml" if not config_text else f"{name}.toml")
        with open(config, "w") as f:
            # Only the socket is used: no MPD or HTTP port, so two reelds (bench/recording-ab.py)
            # or one beside another program on 6600 can run.
            f.write("mpd_listen = []\nhttp_listen = []\n" + config_text)
        self.process = subprocess.Popen(
            [binary, "--config", config, "--socket", self.socket, "--data-dir", data, "--device", "null",
             "--capture-device", "pulse", "--log-level", "notice"],
            stdin=subprocess.DEVNULL, stdout=open(self.log_path, "ab"), stderr=subprocess.STDOUT)
        started.append(self.process)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                self.client = Client(self.socket)
                return
            except OSError:
                if self.process.poll() is not None:
                    break
                time.sleep(0.05)
        raise RuntimeError(f"reeld did not start: {open(self.log_path).read()[-2000:]}")

    def cpu_seconds(self):
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def rss_kb(self):
        with open(f"/proc/{self.process.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait()


def wait_idle(client, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.call("recorder.status")
        if status["state"] == "idle":
            return status
        time.sleep(0.1)
    raise RuntimeError(f"the recorder did not stop within {timeout} s")


def wait_elapsed(client, seconds, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.call("recorder.status")
        if status["elapsed"] >= seconds:
            return status
        time.sleep(0.05)
    raise RuntimeError(f"the recording did not reach {seconds} s within {timeout} s")


def noise_source(work, seconds):
    """paplay plays a tone with noise into the null sink: what the monitor captures."""
    path = os.path.join(work, "noise.wav")
    subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", "-b", "16", path, "synth", str(seconds),
                    "sine", "440", "whitenoise", "remix", "1v0.3,2v0.05"], check=True)
    process = subprocess.Popen(["paplay", path], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    started.append(process)
    time.sleep(1)
    return process


def unmeasured(results, key, reason):
    results.setdefault(f"na.{key}", []).append(reason)
    log(f"not measured: {key}: {reason}")


def record_with_reeld(reeld, fmt, seconds, results):
    try:
        measure_reeld(reeld, fmt, seconds, results)
    except (OSError, RuntimeError, KeyError, TypeError) as error:
        unmeasured(results, f"cpu.reeld.{fmt}", str(error))


def measure_reeld(reeld, fmt, seconds, results):
    # The end is awaited on a subscription without ticks: polling would cost reeld CPU too.
    watcher = Client(reeld.socket)
    watcher.call("subscribe", {"stream": "recorder", "interval": 3600})
    before = reeld.cpu_seconds()
    started = reeld.client.call("recorder.start", {"format": fmt, "name": f"cpu {fmt} {time.monotonic()}",
                                                    "maxDuration": seconds})
    item = started["item"]["id"]
    deadline = time.monotonic() + seconds + 20
    while True:
        method, params = watcher.next_notification(max(deadline - time.monotonic(), 0.01))
        if method == "recorder.state" and params["state"] == "idle" and (params.get("item") or {}).get("id") == item:
            break
    cpu = reeld.cpu_seconds() - before
    watcher.close()
    recorded = params["item"]["duration"]
    results.setdefault(f"cpu.reeld.{fmt}", []).append(cpu / recorded * 1000)
    results.setdefault("rss.reeld", []).append(reeld.rss_kb() / 1024)
    log(f"reeld {fmt}: {cpu * 1000:.0f} ms CPU for {recorded:.2f} s recorded")


def record_with_arecord(work, seconds, results):
    out = os.path.join(work, "arecord.wav")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(["arecord", "-q", "-D", "pulse", "-f", "S16_LE", "-r", "48000", "-c", "1",
                          "-d", str(seconds), out], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        unmeasured(results, "cpu.arecord.wav", f"arecord exited {run.returncode}: {run.stderr.strip()}")
        return
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    frames = (os.path.getsize(out) - 44) / 2
    recorded = frames / 48000
    if recorded < seconds * 0.9:
        unmeasured(results, "cpu.arecord.wav", f"arecord wrote only {recorded:.2f} s")
        return
    results.setdefault("cpu.arecord.wav", []).append(cpu / recorded * 1000)
    log(f"arecord wav: {cpu * 1000:.0f} ms CPU for {recorded:.2f} s recorded")
    os.unlink(out)


def record_segmented_with_reeld(reeld, seconds, segment, results, key="segmented"):
    """Continuous segmented FLAC: CPU per recorded second, and the frames lost at the boundaries
    (the session's captured frames minus the sum of its takes' frames). `key` names the reeld
    (its FLAC level) in the results."""
    try:
        watcher = Client(reeld.socket)
        watcher.call("subscribe", {"stream": "recorder", "interval": 3600})
        name = f"seg {time.monotonic():.3f}"
        before = reeld.cpu_seconds()
        reeld.client.call("recorder.start", {"format": "flac", "name": name, "segmentSeconds": segment,
                                             "maxDuration": seconds})
        deadline = time.monotonic() + seconds + 20
        while True:
            method, params = watcher.next_notification(max(deadline - time.monotonic(), 0.01))
            # The subscription's first push is the state before the start: wait for the session's end.
            if (method == "recorder.state" and params["state"] == "idle"
                    and (params.get("item") or {}).get("name", "").startswith(name + " ")):
                break
        cpu = reeld.cpu_seconds() - before
        watcher.close()
        items = [item for item in reeld.client.call("library.list", {"path": "/"})["items"]
                 if item["name"].startswith(name + " ")]
        frames = sum(round(item["duration"] * 48000) for item in items)
        results.setdefault(f"cpu.reeld.{key}", []).append(cpu / seconds * 1000)
        results.setdefault(f"size.reeld.{key}", []).append(sum(item.get("size", 0) for item in items) / seconds / 1000)
        boundaries = max(len(items) - 1, 1)
        results.setdefault("lost.boundary.reeld", []).append((round(seconds * 48000) - frames) / boundaries)
        log(f"reeld {key} flac: {cpu * 1000:.0f} ms CPU for {seconds} s in {len(items)} takes, "
            f"{round(seconds * 48000) - frames} frames missing")
    except (OSError, RuntimeError, KeyError, TypeError) as error:
        unmeasured(results, f"cpu.reeld.{key}", str(error))


def record_segmented_with_arecord(work, seconds, segment, results):
    """arecord --max-file-time: CPU, and the frames lost at its file boundaries (frames asked
    for minus the sum of the files' frames)."""
    directory = os.path.join(work, "arecord-seg")
    os.makedirs(directory, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run = subprocess.run(["arecord", "-q", "-D", "pulse", "-f", "S16_LE", "-r", "48000", "-c", "1",
                          "-d", str(seconds), "--max-file-time", str(segment),
                          os.path.join(directory, "take.wav")],
                         stdin=subprocess.DEVNULL, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    files = sorted(os.listdir(directory))
    if run.returncode != 0 or not files:
        unmeasured(results, "cpu.arecord.segmented", f"arecord exited {run.returncode}: {run.stderr.strip()}")
        return
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    frames = sum((os.path.getsize(os.path.join(directory, name)) - 44) // 2 for name in files)
    results.setdefault("cpu.arecord.segmented", []).append(cpu / seconds * 1000)
    boundaries = max(len(files) - 1, 1)
    results.setdefault("lost.boundary.arecord", []).append((seconds * 48000 - frames) / boundaries)
    log(f"arecord --max-file-time {segment}: {cpu * 1000:.0f} ms CPU, {len(files)} files, "
        f"{seconds * 48000 - frames} frames missing of {seconds * 48000}")
    for name in files:
        os.unlink(os.path.join(directory, name))


def sox_silence_takes(work, results, bursts=3, burst=2.0, attack=0.5, gap=4.0):
    """sox's recipe for voice-activated takes, `silence 1 0.1 1% 1 2.0 1% : newfile : restart`,
    from the null sink's monitor while paplay plays `bursts` tone bursts of `burst` s (each rising
    from silence over `attack` s, as a voice starts softly) between `gap` s of silence. What it
    loses at each take start: how far into the onset its file begins (read from the level of the
    file's first 10 ms: the onset rises linearly). Its CPU per second listened, as arecord's. Run before the noisy tone starts: sox needs
    the silence between bursts."""
    directory = os.path.join(work, "sox-silence")
    os.makedirs(directory, exist_ok=True)
    source = os.path.join(directory, "bursts.wav")
    pieces = [["-n", "-r", "48000", "-c", "1", "-b", "16", os.path.join(directory, "gap.wav"), "trim", "0", str(gap)],
              ["-n", "-r", "48000", "-c", "1", "-b", "16", os.path.join(directory, "burst.wav"), "synth", str(burst),
               "sine", "440", "vol", "0.5", "fade", "t", str(attack), str(burst), "0"]]
    try:
        for arguments in pieces:
            subprocess.run(["sox"] + arguments, check=True)
        subprocess.run(["sox"] + [os.path.join(directory, name) for name in ["gap.wav"] + ["burst.wav", "gap.wav"] * bursts]
                       + [source], check=True)
        total = gap + bursts * (burst + gap)
        sox = subprocess.Popen(["sox", "-q", "-t", "alsa", "pulse", "-r", "48000", "-c", "1", "-b", "16",
                                os.path.join(directory, "take.wav"), "silence", "1", "0.1", "1%", "1", "2.0", "1%",
                                ":", "newfile", ":", "restart"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        started.append(sox)
        time.sleep(1)
        subprocess.run(["paplay", source], check=True)
        time.sleep(1)
        # sox's own CPU (paplay's is not counted), in /proc ticks, before it is stopped.
        with open(f"/proc/{sox.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLK_TCK
        sox.send_signal(signal.SIGINT)
        _, errors = sox.communicate(timeout=20)
        files = sorted(name for name in os.listdir(directory) if name.startswith("take"))
        lengths, starts = [], []
        for name in files:
            path = os.path.join(directory, name)
            frames = (os.path.getsize(path) - 44) // 2
            if frames > 0:
                lengths.append(frames / 48000)
                # Where in the burst the take begins: the onset rises linearly to 0.5 of full
                # scale over `attack`, so the first 10 ms' peak says how far into it sox began.
                with open(path, "rb") as f:
                    f.seek(44)
                    head = f.read(960)
                peak = max((abs(int.from_bytes(head[i:i + 2], "little", signed=True)) for i in range(0, len(head) - 1, 2)),
                           default=0)
                starts.append(peak / 32768 / 0.5 * attack)
        if len(lengths) != bursts:
            unmeasured(results, "lost.start.sox", f"sox made {len(lengths)} takes of {bursts} bursts "
                       f"({', '.join(f'{x:.2f} s' for x in lengths)}): {errors.decode(errors='replace').strip()[:200]}")
            return
        listened = total + 2
        results.setdefault("cpu.sox.silence", []).append(cpu / listened * 1000)
        for start in starts:
            results.setdefault("lost.start.sox", []).append(start)
        log(f"sox silence: {cpu * 1000:.0f} ms CPU for {listened:.0f} s listened; takes "
            + ", ".join(f"{x:.3f} s" for x in lengths) + f" of {burst:.3f} s bursts, beginning "
            + ", ".join(f"{x * 1000:.0f} ms" for x in starts) + " into the onset")
    except (OSError, subprocess.SubprocessError) as error:
        unmeasured(results, "lost.start.sox", str(error))
    finally:
        for name in os.listdir(directory):
            os.unlink(os.path.join(directory, name))


def armed_cpu(reeld, seconds, results):
    """A triggered session whose level the noisy tone never reaches: the CPU of listening."""
    try:
        before = reeld.cpu_seconds()
        reeld.client.call("recorder.start", {"name": f"armed {time.monotonic():.3f}",
                                             "trigger": {"level": -0.5, "hold": 1}})
        time.sleep(seconds)
        status = reeld.client.call("recorder.status")
        cpu = reeld.cpu_seconds() - before
        reeld.client.call("recorder.stop")
        if status["state"] != "armed":
            unmeasured(results, "cpu.reeld.armed", f"the session was {status['state']}, not armed")
            return
        results.setdefault("cpu.reeld.armed", []).append(cpu / seconds * 100)
        log(f"reeld armed: {cpu * 1000:.0f} ms CPU in {seconds} s")
    except (OSError, RuntimeError, KeyError, TypeError) as error:
        unmeasured(results, "cpu.reeld.armed", str(error))


def listening_cpu(binary, work, seconds, results):
    """Idle reeld with capture_preroll = 30 (the device held open) against idle reeld without."""
    for key, text in (("cpu.reeld.idle", ""), ("cpu.reeld.listening", "capture_preroll = 30\n")):
        reeld = None
        try:
            reeld = Reeld(binary, work, os.path.join(work, "listen-data"), text)
            time.sleep(2)
            # Three times the take length: the kernel counts CPU in ticks of 1/CLK_TCK s.
            before = reeld.cpu_seconds()
            time.sleep(3 * seconds)
            cpu = reeld.cpu_seconds() - before
            results.setdefault(key, []).append(cpu / (3 * seconds) * 100)
            log(f"{key}: {cpu * 1000:.0f} ms CPU in {3 * seconds} s")
        except (OSError, RuntimeError) as error:
            unmeasured(results, key, str(error))
        finally:
            if reeld is not None:
                reeld.client.close()
                reeld.stop()


def kill_trials(binary, work, trials, results):
    data = os.path.join(work, "kill-data")
    for trial in range(trials):
        fmt = FORMATS[trial % len(FORMATS)]
        try:
            kill_trial(binary, work, data, trial, trials, fmt, results)
        except (OSError, RuntimeError, KeyError, TypeError) as error:
            unmeasured(results, f"lost.{fmt}", f"trial {trial + 1}: {error}")
            for process in started:  # this trial's reeld, so the next one can take the socket
                if process.args[0] == binary and process.poll() is None:
                    process.kill()
                    process.wait()


def kill_trial(binary, work, data, trial, trials, fmt, results):
    reeld = Reeld(binary, work, data)
    reeld.client.call("recorder.start", {"format": fmt, "name": f"kill {trial} {fmt}"})
    wait_elapsed(reeld.client, 1)
    time.sleep(random.uniform(0.5, 5))
    before = time.monotonic()
    status = reeld.client.call("recorder.status")
    item = status["item"]["id"]
    reeld.kill()
    gap = time.monotonic() - before
    # What was captured when the process died: at least the last elapsed, plus the time
    # from that answer to the kill (an upper bound of the loss, never an underestimate).
    captured = status["elapsed"] + gap
    reeld.client.close()
    again = Reeld(binary, work, data)
    kept = again.client.call("library.get", {"item": item})["duration"]
    lost = max(captured - kept, 0)
    results.setdefault(f"lost.{fmt}", []).append(lost)
    log(f"trial {trial + 1}/{trials} {fmt}: captured ≥ {status['elapsed']:.2f} s (+{gap * 1000:.0f} ms "
        f"to the kill), kept {kept:.2f} s after the restart → lost ≤ {lost:.3f} s")
    again.client.close()
    again.stop()


def summary(values, digits=2, reasons=()):
    if not values:
        return "not measured" + (": " + "; ".join(reasons) if reasons else "")
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--seconds", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--segment", type=int, default=5)
    parser.add_argument("--flac-levels", default="0,5",
                        help="FLAC compression levels measured segmented beside the default (record_flac_level)")
    args = parser.parse_args()
    levels = [int(level) for level in args.flac_levels.split(",") if level != ""]
    results = {}
    try:
        for _ in range(args.rounds):
            sox_silence_takes(args.work, results)
        total = args.rounds * (len(FORMATS) + 4 + len(levels)) * (args.seconds + 3) + 2 * (args.seconds + 5) + args.trials * 12 + 60
        noise_source(args.work, total)
        reeld = Reeld(args.reeld, args.work, os.path.join(args.work, "data"))
        for round_number in range(args.rounds):
            log(f"round {round_number + 1}/{args.rounds}")
            if round_number % 2 == 0:
                record_with_arecord(args.work, args.seconds, results)
            for fmt in FORMATS:
                record_with_reeld(reeld, fmt, args.seconds, results)
            if round_number % 2 == 1:
                record_with_arecord(args.work, args.seconds, results)
        for round_number in range(args.rounds):
            if round_number % 2 == 0:
                record_segmented_with_arecord(args.work, args.seconds, args.segment, results)
            record_segmented_with_reeld(reeld, args.seconds, args.segment, results)
            if round_number % 2 == 1:
                record_segmented_with_arecord(args.work, args.seconds, args.segment, results)
            armed_cpu(reeld, args.seconds, results)
        reeld.client.close()
        reeld.stop()
        for level in levels:
            other = Reeld(args.reeld, args.work, os.path.join(args.work, f"data-level{level}"),
                          f"record_flac_level = {level}\n", name=f"level{level}")
            for _ in range(args.rounds):
                record_segmented_with_reeld(other, args.seconds, args.segment, results, key=f"segmented.level{level}")
            other.client.close()
            other.stop()
        listening_cpu(args.reeld, args.work, args.seconds, results)
        kill_trials(args.reeld, args.work, args.trials, results)
    finally:
        stop_all()

    model = "unknown"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    print()
    print(f"Recording benchmark — {os.cpu_count()} CPUs ({model}), kernel {os.uname().release}")
    print(f"{args.rounds} rounds of {args.seconds} s per format; {args.trials} kill -9 trials; "
          "capture from the PulseAudio null sink's monitor (48 kHz mono) with a noisy tone playing")
    print(f"CPU = utime+stime of the whole process (reeld: /proc ticks of 1/{CLK_TCK} s from start to the "
          "end of the take, awaited on a subscription; arecord: rusage), per second recorded")
    print()
    rows = []
    arecord = results.get("cpu.arecord.wav", [])
    for fmt in FORMATS:
        values = results.get(f"cpu.reeld.{fmt}", [])
        rows.append((f"reeld CPU, {fmt} (ms per recorded s)",
                     summary(values, reasons=results.get(f"na.cpu.reeld.{fmt}", [])), ""))
    rows.append(("arecord CPU, wav (ms per recorded s)",
                 summary(arecord, reasons=results.get("na.cpu.arecord.wav", [])), ""))
    if arecord and results.get("cpu.reeld.flac"):
        ratio = statistics.median(results["cpu.reeld.flac"]) / statistics.median(arecord)
        rows.append(("CPU ratio reeld FLAC / arecord WAV (medians)", f"{ratio:.2f}×",
                     "target ≤ 2×: " + ("met" if ratio <= 2 else "MISSED")))
    if arecord and results.get("cpu.reeld.wav"):
        ratio = statistics.median(results["cpu.reeld.wav"]) / statistics.median(arecord)
        rows.append(("CPU ratio reeld WAV / arecord WAV (medians)", f"{ratio:.2f}×", ""))
    rows.append(("reeld RSS while recording (MB)", summary(results.get("rss.reeld", []), 1), ""))
    seg = results.get("cpu.reeld.segmented", [])
    seg_arecord = results.get("cpu.arecord.segmented", [])
    rows.append((f"reeld CPU, segmented FLAC every {args.segment} s (ms per recorded s)",
                 summary(seg, reasons=results.get("na.cpu.reeld.segmented", [])), ""))
    rows.append((f"arecord --max-file-time {args.segment} CPU, wav (ms per recorded s)",
                 summary(seg_arecord, reasons=results.get("na.cpu.arecord.segmented", [])), ""))
    if seg and seg_arecord:
        ratio = statistics.median(seg) / statistics.median(seg_arecord)
        rows.append(("CPU ratio reeld segmented FLAC / arecord segmented WAV", f"{ratio:.2f}×",
                     "target ≤ 1.0×: " + ("met" if ratio <= 1 else "MISSED")))
    rows.append(("file size, segmented FLAC, default level (kB per recorded s)",
                 summary(results.get("size.reeld.segmented", []), 1), ""))
    for level in levels:
        values = results.get(f"cpu.reeld.segmented.level{level}", [])
        rows.append((f"reeld CPU, segmented FLAC, record_flac_level = {level} (ms per recorded s)",
                     summary(values, reasons=results.get(f"na.cpu.reeld.segmented.level{level}", [])),
                     f"{statistics.median(values) / statistics.median(seg_arecord):.2f}× arecord"
                     if values and seg_arecord else ""))
        rows.append((f"file size, segmented FLAC, record_flac_level = {level} (kB per recorded s)",
                     summary(results.get(f"size.reeld.segmented.level{level}", []), 1), ""))
    rows.append(("sox silence recipe CPU, wav (ms per second listened)",
                 summary(results.get("cpu.sox.silence", []), reasons=results.get("na.lost.start.sox", [])), ""))
    rows.append(("audio lost at each take start, sox silence recipe (s; soft 0.5 s onset)",
                 summary(results.get("lost.start.sox", []), 3, reasons=results.get("na.lost.start.sox", [])),
                 "reeld's trigger keeps its pre-roll before the trigger"))
    rows.append(("frames lost per file boundary, reeld", summary(results.get("lost.boundary.reeld", []), 1),
                 "target 0"))
    rows.append(("frames lost per file boundary, arecord --max-file-time",
                 summary(results.get("lost.boundary.arecord", []), 1), ""))
    armed = results.get("cpu.reeld.armed", [])
    rows.append(("reeld CPU armed (trigger, % of a core)", summary(armed, 3, results.get("na.cpu.reeld.armed", [])),
                 ("target ≤ 1 %: " + ("met" if statistics.median(armed) <= 1 else "MISSED")) if armed else ""))
    rows.append(("reeld CPU idle (% of a core)", summary(results.get("cpu.reeld.idle", []), 3), ""))
    rows.append(("reeld CPU idle with capture_preroll = 30 (% of a core)",
                 summary(results.get("cpu.reeld.listening", []), 3), ""))
    worst_all = 0.0
    for fmt in FORMATS if args.trials > 0 else []:
        lost = results.get(f"lost.{fmt}", [])
        if lost:
            worst_all = max(worst_all, max(lost))
        rows.append((f"audio lost per kill -9, {fmt} (s; median, min–max, {len(lost)} trials)",
                     summary(lost, 3, reasons=results.get(f"na.lost.{fmt}", [])), ""))
    if any(results.get(f"lost.{fmt}") for fmt in FORMATS):
        rows.append(("most audio lost in any trial (s)", f"{worst_all:.3f}",
                     "target ≤ 1 s: " + ("met" if worst_all <= 1 else "MISSED")))
    width = max(len(row[0]) for row in rows)
    for name, value, target in rows:
        print(f"{name.ljust(width)}  {value}  {target}".rstrip())


if __name__ == "__main__":
    main()
