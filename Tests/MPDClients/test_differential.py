"""Differential transcripts: the same raw protocol lines sent to Debian's mpd and to Reel on the
same files; the replies must match once the fields that must differ are masked.

Runs only where mpd is installed (it is in CI). With REEL_MPD_TARGET=mpd the other side is a
second mpd, which checks that the transcripts and masks are deterministic.
Set REEL_MPD_DUMP=FILE to write every transcript's raw replies from both servers to FILE.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil

import pytest

import mpdtest
from mpdtest import Raw, today
from transcripts import (FOLDER_PLAYLIST_TRANSCRIPTS, FOLDER_PLAYLISTS, MUSIC_TRANSCRIPTS, SEED_PLAYLIST,
                         TRANSCRIPTS)

READ_TIMEOUT = mpdtest.DEADLINE / 2

# Fields whose values legitimately differ between two servers (or two runs). `outputname` and
# `plugin`: MPD's test output is `null`, Reel's the ALSA device; `error`: each server words the
# player's error its own way (that there is one is compared).
MASKED = {"Last-Modified", "elapsed", "bitrate", "uptime", "playtime", "db_update",
          "mixrampdb", "updating_db", "outputname", "plugin", "error"}
# In the reply to a "~ CMD" step the position is not compared either (see transcripts.py).
POSITION = {"time", "elapsed"}
ID_KEYS = {"Id", "songid", "nextsongid"}
TAG_ORDER = ["Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc"]


def mask(lines: list[str]) -> list[str]:
    """Masks volatile values; ids are renumbered by first appearance; durations are compared in
    whole seconds; the sample format of MP3s (24 bits from MPD's mad decoder) is not compared."""
    ids: dict[str, str] = {}
    out = []
    file = state = None
    # MPD prints an MP3's tags in the order its ID3 import reads them (Artist, AlbumArtist,
    # Title, Album, Track, Date, Genre, Disc), not the file's; Reel prints every file's in MPD's
    # tag order. Only the order of an MP3's tag lines is normalised, never their values.
    mp3_tags: list[str] = []

    def flush_tags():
        out.extend(sorted(mp3_tags, key=lambda l: TAG_ORDER.index(l[2:].split(": ", 1)[0])))
        mp3_tags.clear()

    loose = False
    for line in lines:
        if not line.startswith("  "):
            loose = line.startswith("~ ")
        key = line[2:].partition(": ")[0] if line.startswith("  ") else None
        if key in TAG_ORDER and file and file.endswith(".mp3"):
            mp3_tags.append(line)
            continue
        flush_tags()
        if not line.startswith("  "):
            file = state = None
            out.append(line)
            continue
        key, sep, value = line[2:].partition(": ")
        if not sep:
            out.append(line)
            continue
        if key == "file":
            file = value
        if key == "state":
            state = value
        if key in ID_KEYS:
            value = ids.setdefault(value, f"<id {len(ids) + 1}>")
        elif key in POSITION and loose:
            value = "<position>"
        elif key == "elapsed" and state == "pause":
            value = f"{float(value):.0f} s"  # paused: where it was paused or sought to
        elif key in MASKED or (key == "playlist" and value.isdigit()):
            # (`playlist` is the queue's version in `status`, a name elsewhere.)
            value = "<masked>"
        elif key == "time" and re.fullmatch(r"\d+:\d+", value) and state != "pause":
            value = "<elapsed>:" + value.split(":")[1]
        elif key == "duration":
            value = f"{float(value):.0f} s"
        elif key in ("Format", "audio") and file and file.endswith(".mp3"):
            rate, _, channels = value.split(":")
            value = f"{rate}:<bits>:{channels}"
        out.append(f"  {key}: {value}")
    flush_tags()
    return out


def reset(server):
    """Empty queue, stopped, options off, volume 100, ReplayGain off: the state every transcript
    starts from."""
    with server.authed() as c:
        for command in ("clear", "stop", "repeat 0", "random 0", "single 0", "consume 0", "setvol 100",
                        "replay_gain_mode off"):
            c.ok(command)
        mpdtest.wait_for(lambda: (s := c.status())["state"] == "stop" and s["playlistlength"] == "0",
                         what="the reset state")
        # The stored playlists: only seed.m3u (transcripts.SEED_PLAYLIST).
        for line in c.ok("listplaylists"):
            if line.startswith("playlist: "):
                c.ok(f'rm "{line.split(": ", 1)[1]}"')
    (server.dir / "playlists" / "seed.m3u").write_bytes(SEED_PLAYLIST)


def substitute(line: str, other: Raw) -> str:
    def queue_id(match):
        pairs = other.pairs(f"playlistinfo {match.group(1)}")
        return pairs["Id"]
    line = re.sub(r"\{id@(\d+)\}", queue_id, line)
    return line.replace("{today}", today())


def run(server, steps: list[str]) -> list[str]:
    """Runs a transcript on a fresh connection; returns what was sent and received, line by line."""
    reset(server)
    record: list[str] = []
    in_list = False
    with server.authed() as other, server.authed() as c:
        c.timeout = READ_TIMEOUT

        def read():
            try:
                reply = c.reply()
            except TimeoutError:
                record.append(f"  <no reply within {READ_TIMEOUT:.0f} s>")
                return False
            for line in reply:
                record.append("  <connection closed>" if line is None else "  " + line)
            return reply[-1] is not None

        for index, step in enumerate(steps + ["ping"]):
            if step == "<":
                record.append("<")
                if not read():
                    break
                continue
            if step == "wait for audio":
                # Right after play (and pause) MPD prints no `audio` until the decoder has started.
                record.append(step)
                mpdtest.wait_for(lambda: "audio" in other.status(), what="status to show audio")
                continue
            if step.startswith("@ "):
                record.append(step)
                record.extend("  " + l for l in other.cmd(substitute(step[2:], other)))
                continue
            send_only = step.startswith("> ")
            loose = step.startswith("~ ")
            line = step[2:] if send_only or loose else step
            prefix = "> " if send_only else "~ " if loose else ""
            record.append(prefix + repr(line)[1:-1] if line != "" else "(empty line)")
            c.send(substitute(line, other).encode() + b"\n")
            if line in ("command_list_begin", "command_list_ok_begin") and not in_list:
                in_list = True
                continue
            if in_list:
                if line == "command_list_end":
                    in_list = False
                else:
                    continue
            if send_only:
                continue
            if not read():
                if index < len(steps) - 1:
                    record.append(f"({len(steps) - index - 1} steps not run)")
                break
    return record


@pytest.fixture(scope="module")
def servers(media, tmp_path_factory):
    if shutil.which("mpd") is None:
        pytest.skip("Debian's mpd is not installed (scripts/install-deps --test)")
    kind = mpdtest.target()
    if kind == "reel" and (reason := mpdtest.reeld_supports_mpd()):
        pytest.fail(f"cannot test Reel: {reason}")
    base = tmp_path_factory.mktemp("differential")
    started = []
    try:
        for i, k in enumerate(("mpd", kind)):
            started.append(mpdtest.start_server(k, base / f"{k}{i}", media))
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def music_servers(media, music, tmp_path_factory):
    """Debian's mpd with the recordings and the collection in its music_directory, and the
    target with the collection as its one music folder (and the recordings imported)."""
    if shutil.which("mpd") is None:
        pytest.skip("Debian's mpd is not installed (scripts/install-deps --test)")
    kind = mpdtest.target()
    if kind == "reel" and (reason := mpdtest.reeld_supports_mpd()):
        pytest.fail(f"cannot test Reel: {reason}")
    base = tmp_path_factory.mktemp("differential-music")
    started = []
    try:
        for i, k in enumerate(("mpd", kind)):
            started.append(mpdtest.start_server(k, base / f"{k}{i}", media, music=music))
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def folder_playlist_servers(media, music, tmp_path_factory):
    """As music_servers, with the playlist files of transcripts.FOLDER_PLAYLISTS added to a copy
    of the collection."""
    if shutil.which("mpd") is None:
        pytest.skip("Debian's mpd is not installed (scripts/install-deps --test)")
    kind = mpdtest.target()
    if kind == "reel" and (reason := mpdtest.reeld_supports_mpd()):
        pytest.fail(f"cannot test Reel: {reason}")
    base = tmp_path_factory.mktemp("differential-folder-playlists")
    collection = base / "Music"
    shutil.copytree(music, collection)
    for path, content in FOLDER_PLAYLISTS.items():
        (collection / path).write_bytes(content)
    started = []
    try:
        for i, k in enumerate(("mpd", kind)):
            started.append(mpdtest.start_server(k, base / f"{k}{i}", media, music=collection))
        yield started
    finally:
        for s in started:
            s.stop()


@pytest.fixture(scope="module")
def dump():
    path = os.environ.get("REEL_MPD_DUMP")
    chunks: list[str] = []
    yield chunks
    if path:
        with open(path, "w") as f:
            f.write("# The replies to the transcripts in transcripts.py, unmasked, written by\n"
                    "# REEL_MPD_DUMP=FILE scripts/test-mpd-clients -k differential\n"
                    "# (reference: Debian's mpd; a `(reel)` section is Reel's reply where both ran)\n\n")
            f.write("\n".join(chunks) + "\n")


@pytest.mark.parametrize("name", list(TRANSCRIPTS))
def test_transcript(servers, dump, name):
    compare(servers, dump, name, TRANSCRIPTS[name])


@pytest.mark.parametrize("name", list(MUSIC_TRANSCRIPTS))
def test_music_transcript(music_servers, dump, name):
    compare(music_servers, dump, name, MUSIC_TRANSCRIPTS[name])


@pytest.mark.parametrize("name", list(FOLDER_PLAYLIST_TRANSCRIPTS))
def test_folder_playlist_transcript(folder_playlist_servers, dump, name):
    compare(folder_playlist_servers, dump, name, FOLDER_PLAYLIST_TRANSCRIPTS[name])


def compare(servers, dump, name, steps):
    reference, subject = servers
    expected = run(reference, steps)
    got = run(subject, steps)
    dump.append(f"### {name}\n" + "\n".join(expected))
    if subject.kind != reference.kind:
        dump.append(f"### {name} ({subject.kind})\n" + "\n".join(got))
    masked_expected, masked_got = mask(expected), mask(got)
    if masked_expected != masked_got:
        diff = "\n".join(difflib.unified_diff(masked_expected, masked_got, f"mpd", subject.kind,
                                              lineterm="", n=4))
        pytest.fail(f"{subject.kind} differs from mpd in transcript {name!r}:\n{diff}", pytrace=False)


def test_stats_playtime_is_the_time_spent_playing(make_server):
    """`stats` `playtime` (seconds played, rounded) on a fresh server of each kind: 0 while
    nothing plays however long the server is up, growing while playing, standing still while
    paused. The values are times, so the same steps are checked on both rather than compared.
    Repeat and single keep Reel's `null` device (not paced) on the one song."""
    if shutil.which("mpd") is None:
        pytest.skip("Debian's mpd is not installed (scripts/install-deps --test)")
    for kind in ("mpd", mpdtest.target()):
        server = make_server(kind)
        with server.authed() as c:
            def stats():
                return {k: int(v) for k, v in c.pairs("stats").items() if k in ("uptime", "playtime")}
            mpdtest.wait_for(lambda: stats()["uptime"] >= 2, what=f"{kind}'s uptime to pass 2 s")
            assert stats()["playtime"] == 0, f"{kind}: nothing played yet: {stats()}"
            c.ok("add Recordings/Meetings/Standup.flac")
            for command in ("repeat 1", "single 1", "play 0"):
                c.ok(command)
            mpdtest.wait_for(lambda: stats()["playtime"] >= 2, what=f"{kind}'s playtime to reach 2 s")
            c.ok("pause 1")
            paused = stats()
            mpdtest.wait_for(lambda: stats()["uptime"] >= paused["uptime"] + 2, what=f"{kind}'s uptime to go on")
            after = stats()
            assert after["playtime"] == paused["playtime"], f"{kind}: paused, playtime stands still: {paused} {after}"
            assert after["playtime"] < after["uptime"], f"{kind}: {after}"
            c.ok("stop")
