#!/usr/bin/env python3
"""The Python half of bench/codecs (standard library only): reeld and MPD playing AAC and ALAC
(.m4a) through the same FFmpeg, in one run, and reeld's idle RSS against a baseline build.

  codecs.py --reeld BIN --baseline-reeld BIN --baseline-commit REV --work DIR --music DIR --mpd-socket S --mpd-pid PID
            --monitor SOURCE --rounds N --seconds S

MUSIC holds music-aac.m4a and music-alac.m4a; MPD (started by bench/codecs on that music
directory) listens on S. This script starts its reelds itself (through a link named
`reel-daemon`, each with its own socket, empty config and data directory; `--device pulse`) and
stops them by their PID. It prints the table.

1. Idle RSS, in each round and for each page-cache state ("dropped": the binary's pages evicted
   with posix_fadvise(DONTNEED) just before it starts; "cached": the binary read whole just
   before it starts), the new reeld and the baseline in turn (order swapping every round): a
   fresh daemon, 2 s after its socket answers, its VmRSS, RssAnon, and from /proc/PID/smaps the
   resident part of its executable and of its shared libraries; whether FFmpeg's libraries are
   mapped. In the "cached" state the new reeld then plays the AAC file once (`compare.py
   output`: its time to first audio, FFmpeg loaded by this first file) and its VmRSS is read
   again, stopped.
2. Playing, with one reeld (started after part 1, so no other process maps its binary while
   part 1 runs) and MPD: in each round, for AAC then ALAC, each daemon in turn plays the file from
   its start; 3 s later its process CPU clock, wake-ups and peak VmRSS are sampled over S s
   (`compare.Sampler`) and divided by the audio seconds its own position moved. Then, per codec
   and daemon, `compare.py output`: from the play command to the first sound at the null sink's
   monitor (MPD: `clear`, `add`, then `play` timed).
"""
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Client, Sampler  # noqa: E402
from measuring import Reeld, load_average, options as parse_options  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
CODECS = ("aac", "alac")
NAMES = {"aac": "AAC-LC", "alac": "ALAC"}
SETTLE = 2.0  # seconds from the socket answering to the idle RSS reading
# What MPD's default 4 MB buffer holds of 16-bit stereo at 44.1 kHz (it decodes that far ahead).
MPD_BUFFER_SECONDS = 24


def fail(message):
    print(f"bench/codecs: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[bench/codecs {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


class Results:
    """Figures by key, per round; a reason for each key that could not be measured."""

    def __init__(self):
        self.rounds = {}
        self.reasons = {}
        self.round = 0
        self.notes = []

    def record(self, key, value):
        self.rounds.setdefault(self.round, {})[key] = value

    def unmeasured(self, key, reason):
        self.reasons.setdefault(key, reason)
        log(f"not measured: {key}: {reason}")

    def values(self, key):
        return [r[key] for _, r in sorted(self.rounds.items()) if key in r]

    def pairs(self, a, b):
        return [(r[a], r[b]) for _, r in sorted(self.rounds.items()) if a in r and b in r]

    def why(self, key):
        parts = key.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in self.reasons:
                return "not measured: " + self.reasons[".".join(parts[:n])]
        return "not measured (see the log above)"


# --- memory of a process -------------------------------------------------------------------------

def status_kb(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def memory(pid, binary):
    """MB: VmRSS, RssAnon, the executable's resident pages and the shared libraries'
    (/proc/PID/smaps), and whether FFmpeg's libraries are mapped."""
    exe, libraries, ffmpeg, path = 0, 0, False, None
    real = os.path.realpath(binary)
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split()
            if "-" in fields[0] and len(fields) >= 5 and not fields[0].endswith(":"):
                path = fields[5] if len(fields) > 5 else None
                if path and "libavcodec" in path:
                    ffmpeg = True
            elif fields[0] == "Rss:" and path:
                kb = int(fields[1])
                if path == real:
                    exe += kb
                elif ".so" in os.path.basename(path):
                    libraries += kb
    return {"rss": status_kb(pid, "VmRSS") / 1024, "anon": status_kb(pid, "RssAnon") / 1024,
            "exe": exe / 1024, "libs": libraries / 1024, "ffmpeg": ffmpeg}


def page_cache_mb(path):
    """MB of the file in the page cache now (fincore), or None."""
    try:
        out = subprocess.run(["fincore", "--bytes", "--noheadings", "--output", "RES", path],
                             capture_output=True, text=True, check=True).stdout.split()
        return int(out[0]) / 1e6
    except (OSError, subprocess.CalledProcessError, IndexError, ValueError):
        return None


def drop_from_page_cache(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def read_whole(path):
    with open(path, "rb") as f:
        while f.read(1 << 20):
            pass


# --- part 1: idle RSS ------------------------------------------------------------------------------

def first_audio(protocol, socket, play, monitor):
    """`compare.py output`: (play reply → first audio, play sent → reply) in ms, or an error."""
    out = subprocess.run([sys.executable, os.path.join(HERE, "compare.py"), "output", "--protocol", protocol,
                          "--socket", socket, "--play", play, "--source", monitor],
                         capture_output=True, text=True).stdout.strip()
    figures = dict(pair.split("=", 1) for pair in out.split() if "=" in pair)
    if "play_ms" not in figures:
        return None, out.removeprefix("error=") or "compare.py output printed nothing"
    return (float(figures["play_ms"]), float(figures["play_reply_ms"])), None


def idle_rss(results, o, links, music):
    rounds = int(o["rounds"])
    for round_ in range(1, rounds + 1):
        results.round = round_
        order = ["reel", "baseline"] if round_ % 2 else ["baseline", "reel"]
        for state in ("dropped", "cached"):
            for name in order:
                link = links[name]
                binary = os.path.realpath(link)
                if state == "dropped":
                    drop_from_page_cache(binary)
                else:
                    read_whole(binary)
                cached = page_cache_mb(binary)
                directory = os.path.join(o["work"], f"idle-{name}-{state}-{round_}")
                try:
                    daemon = Reeld(link, directory, "pulse", log_level="warning")
                except RuntimeError as error:
                    results.unmeasured(f"idle.{name}.{state}", str(error))
                    continue
                try:
                    time.sleep(SETTLE)
                    m = memory(daemon.pid, binary)
                    for key in ("rss", "anon", "exe", "libs"):
                        results.record(f"idle.{name}.{state}.{key}", m[key])
                    results.record(f"idle.{name}.{state}.ffmpeg", 1.0 if m["ffmpeg"] else 0.0)
                    log(f"round {round_}, {state}: {name} idle VmRSS {m['rss']:.2f} MB (anon {m['anon']:.2f}, "
                        f"executable {m['exe']:.2f}, libraries {m['libs']:.2f}; FFmpeg mapped: "
                        f"{'yes' if m['ffmpeg'] else 'no'}; binary in the page cache at start: "
                        f"{'?' if cached is None else f'{cached:.1f}'} of {os.path.getsize(binary) / 1e6:.1f} MB)")
                    if name == "reel" and state == "cached":
                        first_play(results, o, daemon, binary, music)
                finally:
                    daemon.stop()
                time.sleep(0.5)


def first_play(results, o, daemon, binary, music):
    """The fresh reeld's first file is AAC: FFmpeg is loaded by it. Its time to first audio, then
    its RSS, stopped, with FFmpeg loaded."""
    daemon.rpc.close()
    figures, error = first_audio("reel", daemon.socket, json.dumps({"file": os.path.join(music, "music-aac.m4a")}),
                                 o["monitor"])
    if error:
        results.unmeasured("first.reel", error)
        return
    results.record("first.reel.audio", figures[0] + figures[1])
    results.record("first.reel.reply", figures[1])
    time.sleep(1)
    m = memory(daemon.pid, binary)
    results.record("loaded.reel.rss", m["rss"])
    results.record("loaded.reel.anon", m["anon"])
    results.record("loaded.reel.libs", m["libs"])
    results.record("loaded.reel.ffmpeg", 1.0 if m["ffmpeg"] else 0.0)
    log(f"fresh reeld's first file, AAC: sent → first audio {figures[0] + figures[1]:.1f} ms; then stopped: "
        f"VmRSS {m['rss']:.2f} MB (anon {m['anon']:.2f}, libraries {m['libs']:.2f}; FFmpeg mapped: "
        f"{'yes' if m['ffmpeg'] else 'no'})")


# --- part 2: playing ----------------------------------------------------------------------------------

class Player:
    """reeld over JSON-RPC or MPD over its protocol, behind one interface."""

    def __init__(self, name, protocol, socket, pid, binary, music):
        self.name, self.protocol, self.socket, self.pid, self.music = name, protocol, socket, pid, music
        self.binary = binary
        self.client = Client(protocol, socket)

    def file(self, codec):
        return f"music-{codec}.m4a"

    def play(self, codec):
        if self.protocol == "mpd":
            self.client.command(["clear", f"add {self.file(codec)}", "play"])
        else:
            self.client.command(("player.play", {"file": os.path.join(self.music, self.file(codec))}))

    def stop(self):
        self.client.command("stop" if self.protocol == "mpd" else ("player.stop", None))

    def status(self):
        """(state, position in s, format as the daemon names it, duration in s or 0)."""
        if self.protocol == "mpd":
            fields = dict(line.split(": ", 1) for line in self.client.command("status") if ": " in line)
            state = {"play": "playing", "pause": "paused", "stop": "stopped"}.get(fields.get("state"), "unknown")
            return state, float(fields.get("elapsed", 0)), fields.get("audio", "?"), float(fields.get("duration", 0))
        status = self.client.command(("player.status", None))
        codec = (status.get("format") or {}).get("codec", "?")
        return status.get("state", "unknown"), float(status.get("position") or 0), codec, float(status.get("duration") or 0)


def cpu_window(results, player, codec, seconds):
    key = f"cpu.{player.name}.{codec}"
    try:
        player.play(codec)
        time.sleep(3)
        s0 = player.status()
        sampler = Sampler(player.pid).start()
        time.sleep(seconds)
        figures = sampler.stop()
        s1 = player.status()
        m = memory(player.pid, player.binary)
        player.stop()
    except (OSError, RuntimeError, ValueError) as error:
        results.unmeasured(key, f"{player.name}: {error}")
        return
    if s0[0] != "playing" or s1[0] != "playing":
        results.unmeasured(key, f"{player.name} was not playing through the window ({s0[0]} / {s1[0]})")
        return
    audio, wall = s1[1] - s0[1], figures["seconds"]
    if not 0.9 * wall < audio < 1.1 * wall:
        results.unmeasured(key, f"{player.name} played {audio:.2f} s in {wall:.2f} s: not paced in real time")
        return
    if player.protocol == "mpd" and s1[3] - s1[1] < MPD_BUFFER_SECONDS:
        # MPD decodes ahead into its buffer: with less than that left, it had stopped decoding.
        results.unmeasured(key, f"only {s1[3] - s1[1]:.1f} s of the file were left after the window: MPD's buffer "
                                f"holds {MPD_BUFFER_SECONDS} s, so it was not decoding through it (a longer file)")
        return
    if player.protocol == "reel" and s1[2] != codec:
        results.unmeasured(key, f"reeld says the format is {s1[2]!r}, not {codec}")
        return
    results.record(key, figures["cpu_ns"] / 1e6 / audio)
    results.record(f"wake.{player.name}.{codec}", figures["wakeups"] / wall)
    peak = results.rounds.get(results.round, {}).get(f"rss.{player.name}.playing", 0)
    results.record(f"rss.{player.name}.playing", max(peak, figures["rss_kb"] / 1024))
    # The resident set's parts at the end of the window, the last window of the round counting.
    for part in ("anon", "exe", "libs"):
        results.record(f"{part}.{player.name}.playing", m[part])
    log(f"{player.name} {codec}: {figures['cpu_ns'] / 1e6:.1f} ms CPU over {audio:.2f} audio s "
        f"({figures['cpu_ns'] / 1e6 / audio:.3f} ms/s); format {s1[2]}; peak VmRSS {figures['rss_kb']} kB; "
        f"threads changed: {figures['changed']}")


def latency(results, player, codec, monitor):
    key = f"latency.{player.name}.{codec}"
    if player.protocol == "mpd":
        try:
            player.client.command(["clear", f"add {player.file(codec)}"])
        except (OSError, RuntimeError) as error:
            results.unmeasured(key, f"MPD could not queue the file: {error}")
            return
        play = "play"
    else:
        play = json.dumps({"file": os.path.join(player.music, player.file(codec))})
    figures, error = first_audio(player.protocol, player.socket, play, monitor)
    if error:
        results.unmeasured(key, error)
        return
    results.record(f"{key}.sent", figures[0] + figures[1])
    results.record(f"{key}.reply", figures[1])
    results.record(f"{key}.after", figures[0])
    log(f"{player.name} {codec}: play sent → first audio {figures[0] + figures[1]:.1f} ms "
        f"(reply after {figures[1]:.1f} ms)")


def playing(results, o, link, music):
    rounds, seconds = int(o["rounds"]), float(o["seconds"])
    daemon = Reeld(link, os.path.join(o["work"], "reel"), "pulse", log_level="warning")
    try:
        daemon.rpc.close()
        players = {"reel": Player("reel", "reel", daemon.socket, daemon.pid, os.path.realpath(link), music),
                   "mpd": Player("mpd", "mpd", o["mpd-socket"], int(o["mpd-pid"]),
                                 os.path.realpath(f"/proc/{o['mpd-pid']}/exe"), music)}
        log("warm-up: each daemon plays 2 s of each file (one-time set-up, not counted)")
        for player in players.values():
            for codec in CODECS:
                player.play(codec)
                time.sleep(2)
                log(f"warm-up: {player.name} {codec}: {player.status()}")
                player.stop()
        time.sleep(1)
        for round_ in range(1, rounds + 1):
            results.round = round_
            order = ["reel", "mpd"] if round_ % 2 else ["mpd", "reel"]
            log(f"round {round_}/{rounds}: {order[0]} first; load average {load_average()}")
            for codec in CODECS:
                for name in order:
                    if daemon.process.poll() is not None:
                        fail(f"reeld exited: {daemon.log_tail()}")
                    cpu_window(results, players[name], codec, seconds)
                    time.sleep(1)
            for codec in CODECS:
                for name in order:
                    latency(results, players[name], codec, o["monitor"])
                    time.sleep(1)
    finally:
        daemon.stop()


# --- the table --------------------------------------------------------------------------------------

def summary(values, digits, unit=""):
    if not values:
        return None
    if len(values) == 1:
        return f"{values[0]:,.{digits}f}{unit}"
    return f"{statistics.median(values):,.{digits}f}{unit} ({min(values):,.{digits}f}–{max(values):,.{digits}f})"


def table(results, o, baseline_name):
    rows = []

    def row(name, a, b, digits, target="", limit=None, other_name="MPD"):
        """a, b: keys of the two columns; the ratio a/b per round; met: its median ≤ limit."""
        left = summary(results.values(a), digits) or results.why(a)
        right = (summary(results.values(b), digits) or results.why(b)) if b else ""
        pairs = results.pairs(a, b) if b else []
        ratios = [x / y for x, y in pairs if y > 0]
        ratio = summary(ratios, 2, "×") or ("—" if b else "")
        met = ""
        if limit is not None:
            met = "not measured" if not ratios else ("yes" if statistics.median(ratios) <= limit else "no")
        rows.append((name, left, right, ratio, target, met))

    for codec in CODECS:
        row(f"CPU per audio s, {NAMES[codec]} (ms/s)", f"cpu.reel.{codec}", f"cpu.mpd.{codec}", 3, "≤ 0.75×", 0.75)
    for codec in CODECS:
        row(f"wake-ups per s while playing, {NAMES[codec]}", f"wake.reel.{codec}", f"wake.mpd.{codec}", 1)
    row("peak RSS while playing (MB)", "rss.reel.playing", "rss.mpd.playing", 1, "≤ 0.5×", 0.5)
    row("  of it: RssAnon, at the end of the last window (MB)", "anon.reel.playing", "anon.mpd.playing", 1)
    row("  of it: the executable (smaps Rss) (MB)", "exe.reel.playing", "exe.mpd.playing", 1)
    row("  of it: shared libraries (smaps Rss) (MB)", "libs.reel.playing", "libs.mpd.playing", 1)
    for codec in CODECS:
        row(f"play sent → first audio, {NAMES[codec]} (ms)", f"latency.reel.{codec}.sent", f"latency.mpd.{codec}.sent", 1)
        row("  play sent → reply (ms)", f"latency.reel.{codec}.reply", f"latency.mpd.{codec}.reply", 1)

    head = ("figure", "Reel: median (min–max)", "MPD", "Reel/MPD", "target", "met")
    print()
    print(f"Reel vs MPD, formats FFmpeg decodes: {o['rounds']} round(s) A/B, {o['seconds']} s CPU windows, "
          "44.1 kHz stereo .m4a, ALSA pulse -> private PulseAudio null sink")
    print_rows(head, rows)

    # Idle RSS: the new reeld against the baseline, paired per round and page-cache state.
    rows = []
    for state, words in (("dropped", "binary dropped from the page cache"), ("cached", "binary read whole")):
        rows.append((f"idle VmRSS, {words} (MB)", summary(results.values(f"idle.reel.{state}.rss"), 2)
                     or results.why(f"idle.reel.{state}"),
                     summary(results.values(f"idle.baseline.{state}.rss"), 2) or results.why(f"idle.baseline.{state}"),
                     *difference(results, state, "rss", target=0.3)))
        for key, words in (("anon", "RssAnon"), ("exe", "the executable (smaps Rss)"), ("libs", "shared libraries (smaps Rss)")):
            rows.append((f"  {words}", summary(results.values(f"idle.reel.{state}.{key}"), 2) or "",
                         summary(results.values(f"idle.baseline.{state}.{key}"), 2) or "", *difference(results, state, key)))
    mapped = results.values("idle.reel.dropped.ffmpeg") + results.values("idle.reel.cached.ffmpeg")
    rows.append(("FFmpeg mapped at idle (starts)", f"{int(sum(mapped))} of {len(mapped)}", "", "", "none",
                 "yes" if mapped and sum(mapped) == 0 else "no"))
    loaded = results.values("loaded.reel.rss")
    rows.append(("after a first AAC file, stopped: VmRSS (MB)", summary(loaded, 2) or results.why("first.reel"), "", "", "", ""))
    rows.append(("  of it more than at idle, same daemon (MB)",
                 summary([r["loaded.reel.rss"] - r["idle.reel.cached.rss"] for r in results.rounds.values()
                          if "loaded.reel.rss" in r and "idle.reel.cached.rss" in r], 2) or "", "", "", "", ""))
    rows.append(("  RssAnon / shared libraries (MB)", f"{summary(results.values('loaded.reel.anon'), 2)} / "
                 f"{summary(results.values('loaded.reel.libs'), 2)}" if loaded else "", "", "", "", ""))
    rows.append(("a fresh reeld's first file (AAC): play sent → first audio (ms)",
                 summary(results.values("first.reel.audio"), 1) or results.why("first.reel"), "", "", "", ""))
    rows.append(("  play sent → reply (ms)", summary(results.values("first.reel.reply"), 1) or "", "", "", "", ""))
    print()
    print(f"reeld idle, FFmpeg never used, against the baseline reeld ({baseline_name}): each a fresh daemon, "
          f"VmRSS {SETTLE:g} s after its socket answers; {o['rounds']} round(s), the order swapping every round")
    print_rows(("figure", "reeld: median (min–max)", "baseline", "reeld − baseline, per round", "target", "met"), rows)


def difference(results, state, key, target=None):
    pairs = results.pairs(f"idle.reel.{state}.{key}", f"idle.baseline.{state}.{key}")
    differences = [a - b for a, b in pairs]
    text = summary(differences, 2) or "—"
    if target is None:
        return text, "", ""
    met = "not measured" if not differences else ("yes" if statistics.median(differences) <= target else "no")
    return text, f"≤ +{target:g} MB", met


def print_rows(head, rows):
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def main(argv):
    o = parse_options(list(argv), ["reeld", "baseline-reeld", "baseline-commit", "work", "music", "mpd-socket", "mpd-pid", "monitor",
                                   "rounds", "seconds"], fail)
    music = os.path.realpath(o["music"])
    # Started through links with another name, so that a `pkill reeld` elsewhere cannot stop them.
    links = {}
    for name, binary in (("reel", o["reeld"]), ("baseline", o["baseline-reeld"])):
        directory = os.path.join(o["work"], f"{name}-bin")
        os.makedirs(directory, exist_ok=True)
        links[name] = os.path.join(directory, "reel-daemon")
        os.symlink(os.path.realpath(binary), links[name])
    results = Results()
    log(f"idle RSS, {o['rounds']} round(s); load average {load_average()}")
    idle_rss(results, o, links, music)
    log(f"playing, {o['rounds']} round(s); load average {load_average()}")
    playing(results, o, links["reel"], music)
    log(f"done; load average {load_average()}")
    table(results, o, o["baseline-commit"])


if __name__ == "__main__":
    main(sys.argv[1:])
