"""reeld on a local Icecast: the Reel side of the stream differential (issue 26).

The same transcripts as test_icecast_mpd.py (Debian's mpd 0.23 on the same Icecast, stored in
transcripts-mpd-0.23.12-streams.txt), run against reeld (.build/debug by default, see
mpdtest.reel_build_dir), and compared after the same masking: the MP3 mount and the AAC mount
(AAC-LC in ADTS at 96 kbit/s, which reeld plays through FFmpeg). Run:

    .build/test-venv/bin/python -m pytest -p no:cacheprovider Tests/Streams/test_icecast_reeld.py
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "MPDClients")]

import mpdtest  # noqa: E402
from icecast import Icecast  # noqa: E402
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
