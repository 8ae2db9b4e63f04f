"""Raw MPD-protocol transcripts for streams on a local Icecast (issue 26): what Debian's mpd
0.23 answers is kept in transcripts-mpd-0.23.12-streams.txt (masked), and a server under test
(Reel) must answer the same.

Use from a test (Tests/Streams and Tests/MPDClients on sys.path; see test_icecast_mpd.py):

    from stream_transcripts import STREAM_TRANSCRIPTS, run_stream_transcript, mask, expected
    record = run_stream_transcript(server, icecast, STREAM_TRANSCRIPTS[name])
    assert mask(record, icecast.port) == expected(name)

Steps, run on one fresh connection (a second one, `other`, polls and makes changes):

    "CMD"                 send the line, read its reply (up to OK or ACK)
    "> CMD"               send the line, read nothing (idle)
    "<"                   read one reply
    "@ CMD"               run CMD on the second connection; its reply is recorded too
    "title TEXT"          put TEXT on air as the StreamTitle of /live.mp3 (Icecast's admin URL)
    "wait for title TEXT" poll `currentsong` on the second connection until `Title: TEXT`
    "wait for name"       poll `currentsong` until it has a `Name:` line
    "wait for play"       poll `status` until `state: play` and an `audio:` line
    "drain idle"          `idle` then `noidle` on the main connection, the reply not recorded:
                          events pending from earlier commands (play) are consumed, so the
                          next `idle` waits for what the following steps do

`{url}` in a line is the URL of the mount /live.mp3, `{aac}` of /live.aac. Before a transcript
the queue is cleared and playback stopped; the mount's title is set to "Reel Test - First".
"""

from __future__ import annotations

import re
from pathlib import Path

import mpdtest

HERE = Path(__file__).resolve().parent
EXPECTED_FILE = HERE / "transcripts-mpd-0.23.12-streams.txt"
FIRST_TITLE = "Reel Test - First"

STREAM_TRANSCRIPTS: dict[str, list[str]] = {
    "add a station, play, currentsong with Name and Title": [
        "add {url}",
        "playlistinfo",
        "currentsong",
        "play",
        "wait for play",
        f"wait for title {FIRST_TITLE}",
        "wait for name",
        "currentsong",
        "playlistinfo",
        "status",
    ],
    "a title change: idle player, then the new title": [
        "addid {url}",
        "play",
        "wait for play",
        f"wait for title {FIRST_TITLE}",
        "drain idle",
        "> idle player",
        "title Rock 'n' Roll; Live - Second",
        "<",
        "wait for title Rock 'n' Roll; Live - Second",
        "currentsong",
        "stop",
        "currentsong",
    ],
    "an AAC station": [
        "add {aac}",
        "play",
        "wait for play",
        "wait for name",
        "currentsong",
        "status",
    ],
}

# Values that differ between servers or runs; the keys are still compared.
MASKED = {"elapsed", "time", "bitrate", "audio", "playlist", "mixrampdb", "Last-Modified", "nextsong", "nextsongid"}
ID_KEYS = {"Id", "songid"}


def reset(server, icecast):
    with server.authed() as c:
        for command in ("clear", "stop", "repeat 0", "random 0", "single 0", "consume 0"):
            c.ok(command)
    icecast.set_title("/live.mp3", FIRST_TITLE)


def run_stream_transcript(server, icecast, steps: list[str]) -> list[str]:
    """Runs `steps` on `server` (an mpdtest.Server: mpd or reeld) against `icecast`; returns the
    record, line by line (commands, then their reply lines indented by two spaces)."""
    reset(server, icecast)
    urls = {"{url}": icecast.url("/live.mp3"), "{aac}": icecast.url("/live.aac")}
    record: list[str] = []
    with server.authed() as other, server.authed() as c:
        def substitute(line: str) -> str:
            for key, value in urls.items():
                line = line.replace(key, value)
            return line

        def song() -> dict:
            return other.pairs("currentsong")

        for step in steps + ["ping"]:
            if step == "<":
                record.append("<")
                record.extend("  " + line for line in c.reply())
            elif step.startswith("@ "):
                record.append(step)
                record.extend("  " + line for line in other.cmd(substitute(step[2:])))
            elif step.startswith("title "):
                record.append(step)
                icecast.set_title("/live.mp3", step[len("title "):])
            elif step.startswith("wait for title "):
                record.append(step)
                want = step[len("wait for title "):]
                mpdtest.wait_for(lambda: song().get("Title") == want, what=f"Title: {want}")
            elif step == "wait for name":
                record.append(step)
                mpdtest.wait_for(lambda: "Name" in song(), what="a Name: line")
            elif step == "wait for play":
                record.append(step)
                mpdtest.wait_for(lambda: (s := other.status()).get("state") == "play" and "audio" in s,
                                 what="state: play with audio")
            elif step == "drain idle":
                record.append(step)
                c.send("idle\nnoidle\n")
                reply = c.reply()
                assert reply[-1] == "OK", f"idle/noidle -> {reply!r}"
            elif step.startswith("> "):
                record.append(step)
                c.send(substitute(step[2:]) + "\n")
            else:
                record.append(step)
                record.extend("  " + line for line in c.cmd(substitute(step)))
    return record


def mask(record: list[str], port: int) -> list[str]:
    """Ids renumbered by first appearance, volatile values masked, Icecast's port replaced."""
    ids: dict[str, str] = {}
    out = []
    for line in record:
        line = line.replace(f"127.0.0.1:{port}", "127.0.0.1:{port}")
        if line.startswith("  ") and ": " in line:
            key, value = line[2:].split(": ", 1)
            if key in ID_KEYS:
                value = ids.setdefault(value, f"<id{len(ids) + 1}>")
            elif key in MASKED:
                value = "<masked>"
            line = f"  {key}: {value}"
        out.append(line)
    return out


def load_expected() -> dict[str, list[str]]:
    """The stored masked replies of mpd 0.23.12, by transcript name."""
    result: dict[str, list[str]] = {}
    name = None
    for line in EXPECTED_FILE.read_text().splitlines():
        match = re.fullmatch(r"## (.*)", line)
        if match:
            name = match.group(1)
            result[name] = []
        elif name is not None and line:
            result[name].append(line)
    return result


def expected(name: str) -> list[str]:
    return load_expected()[name]


def write_expected(records: dict[str, list[str]]):
    text = ["# Debian's mpd 0.23.12 on a local Icecast 2.4.4, masked by stream_transcripts.mask.",
            "# Written by REEL_STREAM_RECORD=1 (see test_icecast_mpd.py); one section per transcript.", ""]
    for name in STREAM_TRANSCRIPTS:
        if name in records:
            text += [f"## {name}", *records[name], ""]
    EXPECTED_FILE.write_text("\n".join(text))
