#!/usr/bin/env python3
"""The Python half of bench/streams (standard library only): reeld and MPD on the same local
Icecast, one table.

  streams.py --reeld BIN --compare BIN2|"" --work DIR --monitor SOURCE --rounds N --seconds S

It starts, in DIR: Debian's icecast2 on a free loopback port with two mounts fed by ffmpeg in
real time (`/live.mp3`, MP3 128 kbit/s; `/live.aac`, AAC-LC in ADTS, 128 kbit/s: the same tone),
MPD with a private configuration (ALSA output `pulse`, mixer none), and reeld (`--device pulse`,
an empty config: the pause buffer at its default 300 s). Every process is stopped by its PID.

1. Idle RSS: a fresh reeld, 2 s after its socket answers: VmRSS, and whether libcurl and FFmpeg's
   libavcodec are mapped (/proc/PID/maps); then after its first stream.
2. In each round, for MP3 then AAC: a raw listener's connect to its first audio byte (what the
   server itself takes, a floor for both daemons' first sound); then each daemon in turn (the
   order swapping every round): from
   sending `add`+`play` (MPD: `clear`, `add URL`, `play` in one command list; reeld:
   `player.play {url}`) to the first sound at the null sink's monitor (parec); then 3 s later its
   process CPU clock and peak VmRSS over S s (`compare.Sampler`), divided by the audio seconds
   its own position moved (reeld `position`, MPD `elapsed`); stopped. reeld answering
   `unsupported_format` for AAC prints "not played". A raw listener connects to the same mount
   as each play command is sent: it joins in the same turns of Icecast's source thread, so the
   first sound after its first byte is the daemon's own share on Icecast, without Icecast's
   0-87.5 ms phase (which makes the first-sound row itself vary by that much from play to play).
   Then the same from a server that answers at once (the project's test server: the same
   tone as a live MP3 and a live AAC stream, a 64 KB burst then real time): `add`+`play` to the
   first sound, each daemon, each round. Icecast 2.4 itself answers a new listener only after
   3 to 4 of its source reads (1400 bytes each, 87.5 ms apart at 128 kbit/s: src/source.c
   moves a listener from pending to active, sends its headers, places it in the queue, then
   sends its burst, one step per read), some 300 ms that no client can shorten; this row is what
   the daemons themselves take.
3. A drop: each daemon plays the MP3 mount; the source is stopped (Icecast closes the
   listeners), 8 s later (the daemons' buffers ran dry) it starts again; from the moment the
   mount is on air again to the first sound at the monitor after the silence; no sound within
   15 s: "stops".
4. The pause buffer: reeld plays the project's test server's live MP3 (128 kbit/s with icy-br,
   sent 16 times as fast as it plays), 3 s later VmRSS; paused until `stream.buffered` says the
   buffer holds its 300 s (or 60 s passed), VmRSS again; the difference against the buffer's
   size (300 s of 128 kbit/s, 4.8 MB).

With `--compare BIN2` (not empty), a second reeld (another build: before and after a change)
does all of this too, in the same rounds (the order turning every round), in a column of its own.
"""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "Tests", "Streams"))
from compare import RATE, Client, Recorder, Sampler  # noqa: E402
from icecast import Icecast  # noqa: E402
from measuring import Reeld, load_average, options as parse_options  # noqa: E402
from stream_server import StreamServer, make_fixture, make_mp3  # noqa: E402

WARMUP = 3.0
DROP_SECONDS = 8.0
CODECS = ("mp3", "aac")
NAMES = {"mp3": "MP3 128 kbit/s", "aac": "AAC-LC 128 kbit/s"}


def fail(message):
    print(f"bench/streams: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[bench/streams {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def maps(pid, name):
    with open(f"/proc/{pid}/maps") as f:
        return any(name in line for line in f)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class MPD:
    def __init__(self, work):
        self.dir = os.path.join(work, "mpd")
        os.makedirs(os.path.join(self.dir, "music"), exist_ok=True)
        self.socket = os.path.join(self.dir, "mpd.sock")
        conf = os.path.join(self.dir, "mpd.conf")
        with open(conf, "w") as f:
            f.write(f'''music_directory "{self.dir}/music"
db_file "{self.dir}/database"
state_file "{self.dir}/state"
playlist_directory "{self.dir}"
log_file "{self.dir}/log"
bind_to_address "{self.socket}"
zeroconf_enabled "no"
connection_timeout "3600"
audio_output {{
    type "alsa"
    name "pulse"
    device "pulse"
    mixer_type "none"
}}
''')
        self.process = subprocess.Popen(["mpd", "--no-daemon", conf], stdin=subprocess.DEVNULL,
                                        stdout=open(os.path.join(self.dir, "stderr"), "wb"), stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        deadline = time.monotonic() + 30
        while True:
            try:
                self.client = Client("mpd", self.socket)
                break
            except (OSError, RuntimeError):
                if self.process.poll() is not None or time.monotonic() > deadline:
                    fail("MPD did not start: " + open(os.path.join(self.dir, "stderr")).read()[-500:])
                time.sleep(0.1)

    def play(self, url):
        self.client.command(["clear", f"add {url}", "play"])

    def position(self):
        for line in self.client.command("status"):
            if line.startswith("elapsed: "):
                return float(line.split()[1])
        return None

    def playing(self):
        return "state: play" in self.client.command("status")

    def stop(self):
        try:
            self.client.command("stop")
        except (OSError, RuntimeError):
            pass

    def shutdown(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Reel:
    def __init__(self, binary, work, name):
        self.daemon = Reeld(binary, os.path.join(work, name), "pulse", log_level="warning")
        self.pid = self.daemon.pid

    def play(self, url):
        try:
            self.daemon.rpc.call("player.play", {"url": url})
        except RuntimeError as error:
            # Why, as the player's state says it (for every client): its reason.
            reason = ((self.status().get("error") or {}).get("reason")) or "?"
            raise RuntimeError(f"{reason}: {error}") from None

    def status(self):
        return self.daemon.rpc.call("player.status")

    def position(self):
        return self.status().get("position")

    def stop(self):
        try:
            self.daemon.rpc.call("player.stop")
        except RuntimeError:
            pass

    def shutdown(self):
        self.daemon.stop()


def first_sound(recorder, after_frame, within):
    """The index of the first loud frame at or after `after_frame`, waiting up to `within` s."""
    deadline = time.monotonic() + within
    checked = after_frame
    while time.monotonic() < deadline:
        loud = recorder.loud()
        for k in range(checked, len(loud)):
            if loud[k]:
                return k
        checked = max(checked, len(loud))
        time.sleep(0.05)
    return None


def start_recorder(monitor):
    recorder = Recorder(monitor)
    deadline = time.monotonic() + 5
    while recorder.frames() < RATE // 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    if recorder.frames() < RATE // 2:
        recorder.stop()
        fail("parec recorded nothing of the monitor in 5 s")
    return recorder


def play_until_heard(daemon, url, monitor, beside=None):
    """Plays `url` and waits for its first sound at the sink's monitor: ms from the play command
    to it, or why there was none (then the daemon is stopped; else it plays on). `beside`:
    (port, mount) of the same stream, which a raw listener connects to as the command is sent;
    then (ms to the first sound, ms from the raw listener's first byte to it or None)."""
    import threading
    recorder = start_recorder(monitor)
    raw = []
    listener = threading.Thread(target=lambda: raw.append(listener_first_byte(*beside)), daemon=True) if beside else None
    try:
        before = recorder.frames()
        t_send = time.monotonic()
        if listener:
            listener.start()
        try:
            daemon.play(url)
        except RuntimeError as error:
            return str(error)
        first = first_sound(recorder, before, 10)
    finally:
        recorder.stop()
        if listener:
            listener.join(timeout=10)
    if first is None:
        daemon.stop()
        return "no sound within 10 s"
    heard = (recorder.base() + first / RATE - t_send) * 1000
    if not beside:
        return heard
    return heard, (heard - raw[0] * 1000 if raw and raw[0] is not None else None)


def play_and_measure(daemon, url, monitor, seconds, beside):
    """(ms from the play command to the first sound, CPU ms per audio second, peak RSS MB, ms
    from the first byte of a raw listener connecting beside it to the first sound), or a reason
    it was not played."""
    got = play_until_heard(daemon, url, monitor, beside)
    if isinstance(got, str):
        return got
    first_ms, after_raw = got
    time.sleep(WARMUP)
    p0 = daemon.position()
    sampler = Sampler(daemon.pid).start()
    time.sleep(seconds)
    window = sampler.stop()
    p1 = daemon.position()
    daemon.stop()
    audio = (p1 or 0) - (p0 or 0)
    if audio < seconds * 0.5:
        return f"its position moved {audio:.1f} s in {seconds} s"
    return first_ms, window["cpu_ns"] / 1e6 / audio, window["rss_kb"] / 1024, after_raw


def first_sound_only(daemon, url, monitor):
    """ms from the play command to the first sound (the daemon is stopped after), or why not."""
    first_ms = play_until_heard(daemon, url, monitor)
    daemon.stop()
    return first_ms


def listener_first_byte(port, mount):
    """Seconds from a raw listener's connect to its first audio byte from `mount` (the server's
    own part of a first sound), or None."""
    import socket
    t0 = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(f"GET {mount} HTTP/1.0\r\nHost: 127.0.0.1\r\nIcy-MetaData: 1\r\n\r\n".encode())
            data = b""
            while b"\r\n\r\n" not in data or not data.split(b"\r\n\r\n", 1)[1]:
                chunk = sock.recv(65536)
                if not chunk:
                    return None
                data += chunk
            return time.monotonic() - t0
    except OSError:
        return None


def first_audio_byte(port, mount, deadline):
    """The monotonic time a raw listener, connecting again and again, gets its first audio
    byte from `mount` (the server's own delay after it is back), or None."""
    import socket
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
                sock.sendall(f"GET {mount} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n".encode())
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(4096)
                    if not chunk:
                        raise OSError("closed")
                    data += chunk
                if not data.startswith(b"HTTP/1.0 200") and not data.startswith(b"HTTP/1.1 200"):
                    raise OSError("not on air")
                body = data.split(b"\r\n\r\n", 1)[1]
                while not body:
                    body = sock.recv(4096)
                    if not body:
                        raise OSError("closed")
                return time.monotonic()
        except OSError:
            time.sleep(0.05)
    return None


def drop(daemon, ice, url, monitor):
    """Seconds from the mount being on air again to the first sound after the silence, and
    from a raw listener's first audio byte to it."""
    daemon.play(url)
    time.sleep(4)
    recorder = start_recorder(monitor)
    try:
        ice.stop_source("/live.mp3")
        time.sleep(DROP_SECONDS)
        silent_from = recorder.frames()
        import threading
        first_byte = []
        probe = threading.Thread(target=lambda: first_byte.append(
            first_audio_byte(ice.port, "/live.mp3", time.monotonic() + 20)), daemon=True)
        probe.start()
        ice.feed("/live.mp3", codec="mp3", bitrate="128k")
        ice.wait_for_mount("/live.mp3")
        t_back = time.monotonic()
        # Frames recorded up to now are before the mount was back; the sound must come after.
        back_frame = int((t_back - recorder.base()) * RATE)
        loud = recorder.loud()
        if any(loud[max(silent_from - RATE // 2, 0):silent_from]):
            return "still sound 8 s after the drop (its buffer held more)"
        first = first_sound(recorder, max(back_frame, silent_from), 15)
    finally:
        recorder.stop()
        daemon.stop()
    if first is None:
        return "stops"
    probe.join(timeout=20)
    heard = recorder.base() + first / RATE
    if first_byte and first_byte[0] is not None:
        log(f"  a raw listener's first audio byte {first_byte[0] - t_back:+.2f} s after the mount was listed; "
            f"sound {heard - first_byte[0]:.2f} s after that byte")
    return max(heard - t_back, 0.0)


def pause_buffer(binary, work):
    mp3 = make_mp3(os.path.join(work, "fast.mp3"), seconds=30)
    with open(mp3, "rb") as f:
        data = f.read()
    server = StreamServer(data, pace=16).start()
    reel = Reel(binary, work, "reeld-pause")
    try:
        reel.play(server.url("/live.mp3"))
        time.sleep(3)
        playing = rss_mb(reel.pid)
        reel.daemon.rpc.call("player.pause")
        deadline = time.monotonic() + 60
        buffered = 0.0
        while time.monotonic() < deadline:
            buffered = (reel.status().get("stream") or {}).get("buffered") or 0.0
            if buffered >= 295:
                break
            time.sleep(0.5)
        time.sleep(2)
        full = rss_mb(reel.pid)
        return playing, full, buffered
    finally:
        reel.shutdown()
        server.stop()


def spread(values, digits):
    if not values:
        return "not measured"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}"
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def main(argv):
    o = parse_options(argv, ["reeld", "compare", "work", "monitor", "rounds", "seconds"], fail)
    work, monitor = o["work"], o["monitor"]
    rounds, seconds = int(o["rounds"]), int(o["seconds"])
    # The reelds: "reel" (--reeld), and "reel2" (--compare) when given.
    binaries = {"reel": o["reeld"]}
    if o["compare"]:
        binaries["reel2"] = o["compare"]
    reels = list(binaries)

    # 1. Idle RSS.
    idle, after_first, curl_after, paused = {}, {}, {}, {}
    for name, binary in binaries.items():
        reel = Reel(binary, work, f"{name}-idle")
        time.sleep(2)
        idle[name] = (rss_mb(reel.pid), maps(reel.pid, "libcurl"), maps(reel.pid, "libavcodec"))
        reel.shutdown()
        log(f"idle {name}: VmRSS {idle[name][0]:.1f} MB, libcurl mapped: {idle[name][1]}, libavcodec mapped: {idle[name][2]}")

    ice = Icecast(os.path.join(work, "icecast")).start()
    mpd = None
    daemons = {}
    results = {}
    notes = []
    # The server that answers at once: the same tone, 30 s looped, as a live MP3 and a live AAC.
    with open(make_mp3(os.path.join(work, "quick.mp3"), seconds=30), "rb") as f:
        quick_mp3 = f.read()
    with open(make_fixture(work, "aac", seconds=30), "rb") as f:
        quick_aac = f.read()
    quick = StreamServer(quick_mp3, pace=1.0, fixtures={"tone.aac": (quick_aac, 30.0)}).start()
    quick_paths = {"mp3": "/live.mp3", "aac": "/live/tone.aac"}
    try:
        for codec in CODECS:
            ice.feed(f"/live.{codec}", codec=codec, bitrate="128k")
        for codec in CODECS:
            ice.wait_for_mount(f"/live.{codec}")
        mpd = MPD(work)
        for name, binary in binaries.items():
            daemons[name] = Reel(binary, work, "reeld" if name == "reel" else name)
        daemons["mpd"] = mpd
        names = reels + ["mpd"]
        for round_ in range(1, rounds + 1):
            # Each daemon first in turn (with one reeld: reeld first in odd rounds, as before).
            turn = (round_ - 1) % len(names)
            order = names[turn:] + names[:turn]
            for codec in CODECS:
                raw = listener_first_byte(ice.port, f"/live.{codec}")
                if raw is not None:
                    log(f"round {round_}, {codec}, a raw listener: first audio byte {raw * 1000:.0f} ms after connecting")
                    results.setdefault(("listener", codec, "first"), []).append(raw * 1000)
                for name in order:
                    got = play_and_measure(daemons[name], ice.url(f"/live.{codec}"), monitor, seconds,
                                           (ice.port, f"/live.{codec}"))
                    if isinstance(got, str):
                        log(f"round {round_}, {codec}, {name}: not measured: {got}")
                        results.setdefault((name, codec, "why"), got)
                        continue
                    beside = "?" if got[3] is None else f"{got[3]:.0f}"
                    log(f"round {round_}, {codec}, {name}: first sound {got[0]:.0f} ms ({beside} ms after the first byte "
                        f"of a raw listener connecting with it), CPU {got[1]:.2f} ms per audio s, RSS {got[2]:.1f} MB; "
                        f"load {load_average()}")
                    for key, value in zip(("first", "cpu", "rss", "beside"), got):
                        if value is not None:
                            results.setdefault((name, codec, key), []).append(value)
                    time.sleep(1)
            for codec in CODECS:
                for name in order:
                    got = first_sound_only(daemons[name], quick.url(quick_paths[codec]), monitor)
                    if isinstance(got, str):
                        log(f"round {round_}, {codec} from the test server, {name}: not measured: {got}")
                        results.setdefault((name, codec, "quick-why"), got)
                        continue
                    log(f"round {round_}, {codec} from the test server, {name}: first sound {got:.0f} ms")
                    results.setdefault((name, codec, "quick"), []).append(got)
                    time.sleep(1)
        for name in reels:
            after_first[name] = rss_mb(daemons[name].pid)
            curl_after[name] = maps(daemons[name].pid, "libcurl")
        for name in names:
            for round_ in range(1, rounds + 1):
                got = drop(daemons[name], ice, ice.url("/live.mp3"), monitor)
                log(f"drop, round {round_}, {name}: {got if isinstance(got, str) else f'{got:.2f} s'}")
                if isinstance(got, str):
                    results.setdefault((name, "drop", "why"), got)
                else:
                    results.setdefault((name, "drop", "s"), []).append(got)
                time.sleep(1)
    finally:
        for name, daemon in daemons.items():
            daemon.shutdown()
        ice.stop()
        quick.stop()
    for name, binary in binaries.items():
        os.makedirs(os.path.join(work, f"pause-{name}"), exist_ok=True)
        paused[name] = pause_buffer(binary, os.path.join(work, f"pause-{name}"))
        log(f"pause buffer, {name}: playing {paused[name][0]:.1f} MB, paused and full {paused[name][1]:.1f} MB, "
            f"buffered {paused[name][2]:.0f} s")

    def value(name, codec, key):
        return results.get((name, codec, key), [])

    def cell(name, codec, key, digits):
        values = value(name, codec, key)
        if values:
            return spread(values, digits)
        why = results.get((name, codec, "quick-why" if key == "quick" else "why"), "not measured")
        if name in reels and codec == "aac" and why.startswith("unsupported_format"):
            return "not played (unsupported_format)"
        return why

    def ratio(name, codec, key):
        a, b = value(name, codec, key), value("mpd", codec, key)
        if not a or not b:
            return "–"
        return f"{statistics.median(a) / statistics.median(b):.2f}×"

    def row(label, codec, key, digits, target, mpd_cell=None, ratios=True):
        cells = " ".join(f"{cell(name, codec, key, digits):>30}" for name in reels)
        mpd_text = cell("mpd", codec, key, digits) if mpd_cell is None else mpd_cell
        ratio_text = " ".join(f"{ratio(name, codec, key) if ratios else '':>10}" for name in reels)
        print(f"{label:52} {cells} {mpd_text:>30} {ratio_text}  {target}")

    def reel_cells(texts):
        return " ".join(f"{texts[name]:>30}" for name in reels)

    print()
    heads = {"reel": "reeld", "reel2": "reeld (--compare)"}
    ratio_heads = {"reel": "reeld/MPD", "reel2": "cmp/MPD"}
    print(f"{'':52} {reel_cells(heads)} {'MPD':>30} {' '.join(f'{ratio_heads[n]:>10}' for n in reels)}  target")
    for codec in CODECS:
        target = "≤ 0.5× MPD" if codec == "mp3" else "≤ 0.75× MPD"
        row('CPU per audio second, ' + NAMES[codec] + ' (ms)', codec, 'cpu', 2, target)
    for codec in CODECS:
        row('add+play → first sound, ' + NAMES[codec] + ' (ms)', codec, 'first', 0, "≤ MPD and ≤ 300 ms")
    for codec in CODECS:
        row('  after a raw listener connecting with it, ' + codec.upper() + ' (ms)', codec, 'beside', 0,
            "(its first byte to the sound)")
    for codec in CODECS:
        row('  from a server answering at once, ' + codec.upper() + ' (ms)', codec, 'quick', 0, "(the daemons' own share)")
    for codec in CODECS:
        print(f"{'  the server alone: connect → first byte, ' + codec.upper() + ' (ms)':52} "
              f"{cell('listener', codec, 'first', 0):>30}  (a raw listener, each round)")
    for codec in CODECS:
        row('peak RSS while playing, ' + NAMES[codec] + ' (MB)', codec, 'rss', 1, "≤ 0.5× MPD")
    row('server back from a drop → sound again (s)', 'drop', 's', 2, "≤ 1 s (MPD: stops)", ratios=False)
    yes = {True: "yes", False: "no"}
    idle_cells = {n: f"{idle[n][0]:.1f}; {yes[idle[n][1]]} / {yes[idle[n][2]]}" for n in reels}
    after_cells = {n: f"{after_first[n]:.1f}; {yes[curl_after[n]]}" for n in reels}
    pause_cells = {n: f"{paused[n][1]:.1f} - {paused[n][0]:.1f} = {paused[n][1] - paused[n][0]:.1f}" for n in reels}
    buffered = ", ".join(f"{paused[n][2]:.0f}" for n in reels)
    print(f"{'idle RSS, fresh (MB); libcurl / FFmpeg mapped':52} {reel_cells(idle_cells)}  libcurl and FFmpeg: no")
    print(f"{'RSS after the streams, stopped (MB); libcurl mapped':52} {reel_cells(after_cells)}")
    print(f"{'RSS paused, pause buffer full - playing (MB)':52} {reel_cells(pause_cells)}  "
          f"≤ 4.8 + 2 MB (300 s of 128 kbit/s; buffered {buffered} s)")
    for note in notes:
        print(note)


if __name__ == "__main__":
    main(sys.argv[1:])
