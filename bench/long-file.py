#!/usr/bin/env python3
"""Helpers for bench/long-file (Python standard library only).

  long-file.py strip SOURCE OUT
      Writes SOURCE (an MP3 that starts with LAME's Xing/Info frame, no ID3v2 tag) without that
      frame: the same audio frames, no tag, as `lame -t` writes them.
  long-file.py repeat SOURCE TIMES OUT
      Writes SOURCE's audio frames TIMES over after one Xing/Info frame whose frame count, byte
      count, seek table and LAME CRC are those of the result: a valid tagged file TIMES as long
      (LAME's encoder delay and padding stay those of the first and last copy; each join adds a
      few ms of silence).
  long-file.py table RESULTS CACHE PLAYERS NAMES WAIT
      Prints the table from the results bench/long-file wrote, and each file's true length.
  long-file.py play --protocol reel|mpd --socket S --play JSON-OR-COMMAND --source MONITOR
          [--timeout SECONDS]
      Records the output (parec of the null sink's monitor), sends the play command, and polls
      the status every millisecond on a second connection until a duration shows, and (reeld)
      until it is no longer an estimate (`durationEstimated` false or absent), or the timeout.
      Prints `reply_ms=… audio_ms=… duration_ms=… duration_s=… exact_ms=… exact_s=…`, each from
      sending the play command: to its reply, to the first non-silent sample at the output, to
      the first status with a duration (`-` for none) and that duration, to the first with the
      exact duration and that duration (MPD: `-`, it has no such field).
"""
import json
import struct
import sys
import time

from compare import Client, Recorder, RATE
from measuring import options as parse_options


def fail(message):
    print(f"error={message}")
    sys.exit(1)


def options(argv, names, optional=()):
    argv = list(argv)
    given = {}
    for name in optional:
        flag = f"--{name}"
        if flag in argv:
            at = argv.index(flag)
            given[name] = argv[at + 1]
            del argv[at:at + 2]
    return {**parse_options(argv, names, fail), **given}


# --- MPEG-1 Layer III frames --------------------------------------------------------------------

BITRATES = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
RATES = [44100, 48000, 32000]


def frame_length(data, at):
    """Bytes of the MPEG-1 Layer III frame at `at`, or None if there is none."""
    if at + 4 > len(data) or data[at] != 0xFF or data[at + 1] & 0xFE != 0xFA:
        return None
    bitrate, rate = data[at + 2] >> 4, (data[at + 2] >> 2) & 3
    if bitrate in (0, 15) or rate == 3:
        return None
    return 144 * BITRATES[bitrate] * 1000 // RATES[rate] + ((data[at + 2] >> 1) & 1)


def frames(data, start):
    """Offsets of the frames from `start` to the end of `data`."""
    offsets, at = [], start
    while at < len(data):
        length = frame_length(data, at)
        if length is None:
            fail(f"no MPEG-1 Layer III frame at byte {at}")
        offsets.append(at)
        at += length
    return offsets


def tag_frame(data):
    """(length of the first frame, offset of "Xing"/"Info" in it); fails without one."""
    length = frame_length(data, 0)
    if length is None:
        fail("the file does not start with an MPEG-1 Layer III frame")
    side = 17 if data[3] >> 6 == 3 else 32
    if data[4 + side:8 + side] not in (b"Xing", b"Info"):
        fail("the first frame has no Xing/Info tag")
    return length, 4 + side


def crc16(data):
    """CRC-16 (polynomial 0x8005, reflected), as LAME computes its tag's CRC."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0xA001 if crc & 1 else crc >> 1
    return crc


def strip(argv):
    source, out = argv
    data = open(source, "rb").read()
    length, _ = tag_frame(data)
    with open(out, "wb") as f:
        f.write(data[length:])


def repeat(argv):
    source, times, out = argv[0], int(argv[1]), argv[2]
    data = open(source, "rb").read()
    length, xing = tag_frame(data)
    tag = bytearray(data[:length])
    flags = struct.unpack(">I", tag[xing + 4:xing + 8])[0]
    if flags & 7 != 7:
        fail(f"the tag lacks the frame count, byte count or seek table (flags {flags:#x})")
    audio = data[length:]
    offsets = frames(data, length)
    count = len(offsets) * times
    total = length + len(audio) * times
    struct.pack_into(">II", tag, xing + 8, count, total)
    # The seek table: for each percent of the duration, the byte where its frame starts, in 256ths.
    for percent in range(100):
        k = percent * count // 100
        at = (k // len(offsets)) * len(audio) + offsets[k % len(offsets)]
        tag[xing + 16 + percent] = min(255, at * 256 // total)
    lame = xing + 120 if flags & 8 else xing + 116
    if tag[lame:lame + 4] == b"LAME":
        struct.pack_into(">I", tag, lame + 28, total)            # music length
        struct.pack_into(">H", tag, lame + 34, crc16(tag[:lame + 34]))
    with open(out, "wb") as f:
        f.write(tag)
        for _ in range(times):
            f.write(audio)


# --- one play --------------------------------------------------------------------------------------

def status_duration(client):
    """(duration or None, whether it is exact); MPD's is never known to be."""
    if client.protocol == "mpd":
        for line in client.command("status"):
            if line.startswith("duration: "):
                return float(line.split(": ")[1]), False
        return None, False
    state = client.command(("player.status", None))
    duration = state.get("duration")
    return duration, duration is not None and not state.get("durationEstimated", False)


def play(argv):
    o = options(argv, ["protocol", "socket", "play", "source"], optional=["timeout"])
    protocol, timeout = o["protocol"], float(o.get("timeout", "10"))
    command = ("player.play", json.loads(o["play"])) if protocol == "reel" else o["play"]
    stop = ("player.stop", None) if protocol == "reel" else "stop"
    try:
        client, poller = Client(protocol, o["socket"]), Client(protocol, o["socket"])
    except (OSError, RuntimeError) as error:
        fail(f"cannot connect: {error}")
    recorder = Recorder(o["source"])
    try:
        deadline = time.monotonic() + 5
        while recorder.frames() < RATE and time.monotonic() < deadline:
            time.sleep(0.05)
        if recorder.frames() < RATE:
            fail("parec recorded less than 1 s of the monitor in 5 s")
        before = recorder.frames()
        t_play = time.monotonic()
        client.sock.settimeout(max(timeout, 60))
        client.command(command)
        t_reply = time.monotonic()
        duration, t_duration, exact, t_exact = None, None, None, None
        end = t_play + timeout
        while time.monotonic() < end:
            shown, is_exact = status_duration(poller)
            if shown is not None and t_duration is None:
                duration, t_duration = shown, time.monotonic()
            if is_exact:
                exact, t_exact = shown, time.monotonic()
                break
            if t_duration is not None and protocol == "mpd":
                break
            time.sleep(0.001)
        # Enough of the output to find the first sound: 2 s after the reply.
        while time.monotonic() < t_reply + 2:
            time.sleep(0.05)
    except (OSError, RuntimeError) as error:
        fail(f"command failed: {error}")
    finally:
        recorder.stop()
        try:
            client.command(stop)
        except (OSError, RuntimeError):
            pass
    loud = recorder.loud()
    if any(loud[max(0, before - RATE // 2):before]):
        fail("the output was not silent before the play command")
    first = next((k for k in range(before, len(loud)) if loud[k]), None)
    audio = "-" if first is None else f"{(recorder.base() + first / RATE - t_play) * 1000:.1f}"
    known = "-" if t_duration is None else f"{(t_duration - t_play) * 1000:.1f}"
    counted = "-" if t_exact is None else f"{(t_exact - t_play) * 1000:.1f}"
    print(f"reply_ms={(t_reply - t_play) * 1000:.2f} audio_ms={audio} duration_ms={known} "
          f"duration_s={'-' if duration is None else f'{duration:.3f}'} exact_ms={counted} "
          f"exact_s={'-' if exact is None else f'{exact:.3f}'}")


# --- the table ---------------------------------------------------------------------------------

def true_length(path):
    """Seconds of audio a gapless decoder gives: with LAME's tag, its frame count less the
    encoder delay and padding; without a tag, every frame."""
    data = open(path, "rb").read()
    side = 17 if data[3] >> 6 == 3 else 32
    if data[4 + side:8 + side] in (b"Xing", b"Info"):
        xing = 4 + side
        count = struct.unpack(">I", data[xing + 8:xing + 12])[0]
        lame = xing + 120
        delay = (data[lame + 21] << 4) | (data[lame + 22] >> 4)
        padding = ((data[lame + 22] & 15) << 8) | data[lame + 23]
        return (count * 1152 - delay - padding) / RATE
    return len(frames(data, 0)) * 1152 / RATE


def table(argv):
    import os
    import statistics
    path, cache, players, names, wait = argv[0], argv[1], argv[2].split(), argv[3].split(), argv[4]
    values, reasons = {}, {}
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if parts[0] == "na":
            reasons.setdefault((parts[1], parts[2]), parts[3] if len(parts) > 3 else "")
            continue
        player, name, *figures = parts
        for key, value in zip(("reply", "audio", "known", "duration", "exact_ms", "exact"), figures):
            values.setdefault((player, name, key), []).append(value)

    def summary(player, name, key, digits):
        if player == "mpd" and key.startswith("exact"):
            return "–"  # MPD does not say whether its duration is exact
        got = values.get((player, name, key), [])
        numbers = [float(v) for v in got if v != "-"]
        missing = len(got) - len(numbers)
        if not got:
            return "not measured: " + reasons.get((player, name), "see the log")[:60]
        if not numbers:
            return f"none in {wait} s ({missing}/{len(got)})"
        text = f"{statistics.median(numbers):,.{digits}f}"
        if len(numbers) > 1:
            text += f" ({min(numbers):,.{digits}f}–{max(numbers):,.{digits}f})"
        if missing:
            text += f", none in {wait} s in {missing}/{len(got)}"
        return text

    label = {"reel": "reeld", "mpd": "MPD", "baseline": "baseline reeld"}
    head = ("file", "from play sent, to", *(label[p] for p in players))
    rows = []
    figures = [("reply", "the reply (ms)", 2), ("audio", "first sound (ms)", 1),
               ("known", "a duration shown (ms)", 1), ("duration", "  the duration shown (s)", 3),
               ("exact_ms", "the exact duration (ms)", 1), ("exact", "  the exact duration (s)", 3)]
    for name in names:
        for i, (key, text, digits) in enumerate(figures):
            rows.append((name if i == 0 else "", text, *(summary(p, name, key, digits) for p in players)))
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    print()
    print("Playing long MP3s: median (min–max) over the rounds; the daemons play the same files")
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
    print("true lengths: " + ", ".join(
        f"{name} {true_length(os.path.join(cache, name)):.3f} s" for name in names))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    command, rest = sys.argv[1], sys.argv[2:]
    {"strip": strip, "repeat": repeat, "play": play, "table": table}.get(command, lambda _: (print(__doc__), sys.exit(2)))(rest)
