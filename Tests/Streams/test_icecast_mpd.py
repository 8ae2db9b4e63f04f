"""Debian's mpd 0.23 on a local Icecast: the MPD side of the stream differential (issue 26).

Starts Icecast (icecast.py) with an MP3 and an AAC mount fed by ffmpeg, starts mpd with a
private config (Tests/MPDClients/mpdtest.py), runs the transcripts of stream_transcripts.py and
compares mpd's masked replies with transcripts-mpd-0.23.12-streams.txt. REEL_STREAM_RECORD=1
rewrites that file from this run instead. Run:

    .build/test-venv/bin/python -m pytest -p no:cacheprovider Tests/Streams/test_icecast_mpd.py
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "MPDClients")]

import mpdtest  # noqa: E402
from icecast import Icecast  # noqa: E402
from stream_transcripts import STREAM_TRANSCRIPTS, expected, mask, run_stream_transcript, write_expected  # noqa: E402

RECORD = os.environ.get("REEL_STREAM_RECORD") == "1"
recorded: dict[str, list[str]] = {}


@pytest.fixture(scope="module")
def icecast(tmp_path_factory):
    if shutil.which("icecast2") is None or shutil.which("ffmpeg") is None:
        pytest.fail("icecast2 or ffmpeg is missing: run scripts/install-deps --test")
    ice = Icecast(tmp_path_factory.mktemp("icecast")).start()
    try:
        ice.feed("/live.mp3", codec="mp3")
        ice.feed("/live.aac", codec="aac", bitrate="96k")
        ice.wait_for_mount("/live.mp3")
        ice.wait_for_mount("/live.aac")
        yield ice
    finally:
        ice.stop()
        if RECORD and recorded:
            write_expected(recorded)


@pytest.fixture(scope="module")
def mpd(tmp_path_factory):
    if shutil.which("mpd") is None:
        pytest.fail("mpd is missing: run scripts/install-deps --test")
    media = tmp_path_factory.mktemp("media")
    server = mpdtest.MPDServer(tmp_path_factory.mktemp("mpd"), media)
    server.expected_songs = lambda: 0  # no music: only streams
    try:
        yield server.start()
    finally:
        server.stop()


def test_raw_listener_sees_name_metaint_and_titles(icecast):
    headers, metaint, titles, audio = icecast.listen("/live.mp3", seconds=0, until_title=None)
    assert headers["icy-name"] == "Reel Test FM"
    assert headers["content-type"] == "audio/mpeg"
    assert metaint == 16000
    icecast.set_title("/live.mp3", "Listener - Check")
    _, _, titles, audio = icecast.listen("/live.mp3", until_title="Listener - Check")
    assert titles[-1] == "Listener - Check"
    assert audio >= metaint


def test_mpd_currentsong_shows_name_and_title(icecast, mpd):
    record = run_stream_transcript(mpd, icecast, STREAM_TRANSCRIPTS["add a station, play, currentsong with Name and Title"])
    text = "\n".join(record)
    assert "  Name: Reel Test FM" in text
    assert "  Title: Reel Test - First" in text
    assert f"  file: {icecast.url('/live.mp3')}" in text


@pytest.mark.parametrize("name", list(STREAM_TRANSCRIPTS))
def test_mpd_transcripts_match_the_stored_ones(icecast, mpd, name):
    record = mask(run_stream_transcript(mpd, icecast, STREAM_TRANSCRIPTS[name]), icecast.port)
    if RECORD:
        recorded[name] = record
        return
    want = expected(name)
    assert record == want, "\n".join(["mpd now answers:", *record, "", "stored:", *want])
