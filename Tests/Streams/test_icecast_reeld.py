"""reeld on a local Icecast: the Reel side of the stream differential (issue 26).

The same transcripts as test_icecast_mpd.py (Debian's mpd 0.23 on the same Icecast, stored in
transcripts-mpd-0.23.12-streams.txt), run against reeld (.build/debug by default, see
mpdtest.reel_build_dir), and compared after the same masking: the MP3 mount and the AAC mount
(AAC-LC in ADTS at 96 kbit/s, which reeld plays through FFmpeg). Run:

    .build/test-venv/bin/python -m pytest -p no:cacheprovider Tests/Streams/test_icecast_reeld.py
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "MPDClients")]

import mpdtest  # noqa: E402
from icecast import Icecast, wait_for  # noqa: E402
from stream_transcripts import STREAM_TRANSCRIPTS, expected, mask, run_stream_transcript  # noqa: E402



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


@pytest.fixture(scope="module")
def reeld(tmp_path_factory):
    media = mpdtest.make_media(tmp_path_factory.mktemp("media"))
    server = mpdtest.ReelServer(tmp_path_factory.mktemp("reel"), media)
    try:
        yield server.start()
    finally:
        server.stop()


@pytest.mark.parametrize("name", list(STREAM_TRANSCRIPTS))
def test_reeld_answers_streams_as_mpd_does(icecast, reeld, name):
    record = mask(run_stream_transcript(reeld, icecast, STREAM_TRANSCRIPTS[name]), icecast.port)
    want = expected(name)
    assert record == want, "\n".join(["reeld answers:", *record, "", "mpd 0.23.12 answered:", *want])


def test_a_reconnect_does_not_play_icecasts_burst_again(icecast, reeld):
    """Icecast sends each new listener the last 64 KB it sent (burst-on-connect, about 4 s at
    128 kbit/s). After a dropped connection that burst repeats the end of what reeld received:
    reeld skips it, so nothing is heard twice and the listener is no further behind live than
    before the drop (written after the old bytes, each reconnect would add the burst)."""
    def stream():
        return json.loads(reeld.reel("status", "--json").stdout).get("stream") or {}
    reeld.reel("play", icecast.url("/live.mp3"))
    try:
        wait_for(lambda: stream().get("state") == "playing", what="reeld to play the station")
        time.sleep(3)  # past the first burst: what is buffered now is the steady lead
        before = stream()
        listeners = re.findall(r"<ID>(\d+)</ID>", icecast.admin("listclients", mount="/live.mp3"))
        assert listeners, "Icecast lists no listener on /live.mp3"
        for listener in listeners:
            icecast.admin("killclient", mount="/live.mp3", id=listener)
        wait_for(lambda: stream().get("reconnects", 0) > before.get("reconnects", 0)
                 and stream().get("state") == "playing", what="reeld to reconnect")
        time.sleep(2)
        after = stream()
        assert after["buffered"] < before["buffered"] + 2, (
            f"{after['buffered']} s buffered after the reconnect, {before['buffered']} s before: the burst was added")
    finally:
        reeld.reel("stop")
