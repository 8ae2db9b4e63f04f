"""The formats FFmpeg decodes, through MPD's protocol: a music folder of AAC and ALAC (.m4a),
WavPack, WMA and TTA files made with Debian's ffmpeg, with tags and an MP4 cover. The same tests
run against Debian's mpd (REEL_MPD_TARGET=mpd), which decodes them through the same FFmpeg: both
list every file, and play each; `readpicture` gives the MP4's covr picture.
"""

from __future__ import annotations

import subprocess

import pytest

import collection
from mpdtest import DEADLINE, wait_for

FILES = {
    "Codecs/01 aac.m4a": ["-c:a", "aac", "-b:a", "128k"],
    "Codecs/02 alac.m4a": ["-c:a", "alac"],
    "Codecs/03 wavpack.wv": ["-c:a", "wavpack"],
    "Codecs/04 wma.wma": ["-c:a", "wmav2"],
    "Codecs/05 tta.tta": ["-c:a", "tta"],
}


@pytest.fixture
def codecs_server(make_server, tmp_path):
    root = tmp_path / "Music"
    (root / "Codecs").mkdir(parents=True)
    source = tmp_path / "source.wav"
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", str(source), "synth", "2", "sine", "440",
                    "vol", "0.3"], check=True)
    cover = tmp_path / "cover.jpg"
    cover.write_bytes(collection.cover_bytes())
    for number, (path, codec) in enumerate(FILES.items(), start=1):
        name = path.rsplit("/", 1)[1].split(".")[0][3:]
        arguments = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-i", str(source)]
        if path.endswith("aac.m4a"):
            arguments += ["-i", str(cover), "-map", "0", "-map", "1", "-c:v", "copy", "-disposition:v", "attached_pic"]
        arguments += codec + ["-metadata", f"title=Song {name}", "-metadata", "artist=Codec Band",
                              "-metadata", "album=Every Format", "-metadata", f"track={number}", str(root / path)]
        subprocess.run(arguments, check=True)
    return make_server(music=root, songs=len(FILES))


def test_every_format_is_listed_and_plays(codecs_server):
    listed = codecs_server.mpc("listall", "Codecs").stdout.splitlines()
    assert listed == list(FILES), listed
    # Tags read from each container (a TTA file's APEv2 tag aside: TagLib 1.13 does not read it
    # there, and Reel lists that file by its name; MPD reads it through FFmpeg).
    titles = set(codecs_server.mpc("list", "title", "album", "Every Format").stdout.splitlines())
    assert {"Song aac", "Song alac", "Song wavpack", "Song wma"} <= titles, titles
    codecs_server.mpc("add", "Codecs")
    for position in range(1, len(FILES) + 1):
        codecs_server.mpc("play", str(position))
        status = codecs_server.mpc("status", check=False).stdout
        assert "ERROR" not in status, status
        current = codecs_server.mpc("current", "-f", "%file%").stdout.strip()
        assert current in FILES or current == "", current


def test_the_mp4_cover_is_served_by_readpicture(codecs_server):
    art = subprocess.run(["mpc", "readpicture", "Codecs/01 aac.m4a"], env=codecs_server.mpc_env(),
                         capture_output=True, timeout=DEADLINE).stdout
    assert art == collection.cover_bytes(), art[:20]
    # A file without one: no picture.
    none = subprocess.run(["mpc", "readpicture", "Codecs/02 alac.m4a"], env=codecs_server.mpc_env(),
                          capture_output=True, timeout=DEADLINE).stdout
    assert not none.startswith(b"\xff\xd8"), none[:20]
