"""The HLS fixture server itself (hls_server.py): its playlists parse as RFC 8216 says, slide
with time, and Debian's ffmpeg plays every variant from them. Run:

    .build/test-venv/bin/python -m pytest -p no:cacheprovider Tests/Streams/test_hls_server.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from hls_server import HLSServer  # noqa: E402
from icecast import DEADLINE, wait_for  # noqa: E402


@pytest.fixture(scope="module")
def hls(tmp_path_factory):
    if shutil.which("ffmpeg") is None:
        pytest.fail("ffmpeg is missing: run scripts/install-deps --test")
    server = HLSServer(tmp_path_factory.mktemp("hls"), window=4, segment_seconds=1, pool_seconds=8).start()
    yield server
    server.stop()


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=DEADLINE) as reply:
            return reply.status, reply.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def sequences(text: str) -> list[int]:
    first = int(next(l for l in text.splitlines() if l.startswith("#EXT-X-MEDIA-SEQUENCE:")).split(":")[1])
    uris = [l for l in text.splitlines() if l and not l.startswith("#")]
    return list(range(first, first + len(uris)))


def test_master_lists_the_three_audio_variants(hls):
    status, body = get(hls.url("master.m3u8"))
    text = body.decode()
    assert status == 200
    assert text.count("#EXT-X-STREAM-INF:") == 3
    for variant in ("ts", "fmp4", "adts"):
        assert f"{variant}/live.m3u8" in text


@pytest.mark.parametrize("variant", ["ts", "fmp4", "adts"])
def test_live_playlist_slides_and_serves_its_segments(hls, variant):
    _, body = get(hls.url(f"{variant}/live.m3u8"))
    text = body.decode()
    assert "#EXT-X-ENDLIST" not in text
    first = sequences(text)
    assert len(first) == 4
    if variant == "fmp4":
        assert '#EXT-X-MAP:URI="init.mp4"' in text
        assert get(hls.url("fmp4/init.mp4"))[0] == 200
    suffix = {"ts": "ts", "fmp4": "m4s", "adts": "aac"}[variant]
    status, segment = get(hls.url(f"{variant}/seg{first[-1]}.{suffix}"))
    assert status == 200 and len(segment) > 1000
    assert get(hls.url(f"{variant}/seg{first[-1] + 100}.{suffix}"))[0] == 404
    wait_for(lambda: sequences(get(hls.url(f"{variant}/live.m3u8"))[1].decode())[-1] > first[-1],
             what="the live edge to move")


def test_vod_playlist_is_finite(hls):
    text = get(hls.url("ts/vod.m3u8"))[1].decode()
    assert text.rstrip().endswith("#EXT-X-ENDLIST")
    assert "#EXT-X-PLAYLIST-TYPE:VOD" in text


def test_controls(hls):
    hls.freeze(True)
    frozen = get(hls.url("ts/live.m3u8"))[1]
    hls.jump(10)
    jumped = sequences(get(hls.url("ts/live.m3u8"))[1].decode())
    assert jumped[0] == sequences(frozen.decode())[0] + 10
    hls.restart()
    assert sequences(get(hls.url("ts/live.m3u8"))[1].decode()) == [0, 1, 2, 3]
    hls.freeze(False)


@pytest.mark.parametrize("path", ["master.m3u8", "ts/live.m3u8", "fmp4/live.m3u8", "adts/live.m3u8", "ts/vod.m3u8"])
def test_ffmpeg_plays_it(hls, path):
    # Debian's ffmpeg as a reference HLS client: 3 s of audio decoded from the live playlist.
    result = subprocess.run(["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-i", hls.url(path),
                             "-t", "3", "-f", "s16le", "-ac", "2", "-ar", "44100", "-"],
                            capture_output=True, timeout=DEADLINE * 3)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    assert len(result.stdout) >= 44100 * 4 * 2  # at least 2 of the 3 s (a window may be short)


def test_tsid3_segments_carry_timed_id3_at_their_first_audio(hls, tmp_path):
    # ffprobe as the reference demuxer: a timed_id3 data stream whose one packet per segment has
    # the PTS of the segment's first audio (an even segment's tag in a metadata access unit, an
    # odd one's bare; pool segment 3's is broken).
    for sequence in (2, 3):
        status, body = get(hls.url(f"tsid3/seg{sequence}.ts"))
        assert status == 200
        path = tmp_path / f"seg{sequence}.ts"
        path.write_bytes(body)
        streams = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "stream=codec_type,codec_name",
                                  "-of", "csv=p=0", str(path)], capture_output=True, text=True, timeout=DEADLINE)
        assert "timed_id3,data" in streams.stdout.replace(" ", ""), streams.stdout
        packets = subprocess.run(["ffprobe", "-v", "error", "-show_entries", "packet=codec_type,pts",
                                  "-of", "compact", str(path)], capture_output=True, text=True, timeout=DEADLINE)
        lines = packets.stdout.splitlines()
        audio = [l for l in lines if "codec_type=audio" in l]
        data = [l for l in lines if "codec_type=data" in l]
        assert len(data) == 1, packets.stdout[-2000:]
        pts = lambda line: int(line.split("pts=")[1].split("|")[0])
        assert pts(data[0]) == pts(audio[0])
