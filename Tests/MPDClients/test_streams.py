"""Streams over MPD with python-mpd2, as Home Assistant's `play_media` sends them (issue 26):
`clear`, `add URL`, `play` for a station; `clear`, `load URL`, `play` for a station playlist;
against Tests/Streams/stream_server.py on loopback. Also `addtagid`/`cleartagid` (upmpdcli) with
mpd 0.23.12's exact answers, and a server that holds a connection while every command answers.
Run against Debian's mpd too (REEL_MPD_TARGET=mpd): where Reel goes further than MPD (a playlist
added by `add` is expanded when it plays) the test is Reel's only.
"""

from __future__ import annotations

import json
import sys
import urllib.request
from pathlib import Path

import mpd
import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "Streams"))

from conftest import only_for  # noqa: E402
from mpdtest import DEADLINE, TREE, wait_for  # noqa: E402
from hls_server import HLSServer  # noqa: E402
from stream_server import StreamServer, make_mp3  # noqa: E402


@pytest.fixture(scope="module")
def stations(tmp_path_factory):
    path = make_mp3(str(tmp_path_factory.mktemp("stations") / "fixture.mp3"), seconds=5)
    with open(path, "rb") as f:
        server = StreamServer(f.read(), titles=("First title",)).start()
    try:
        yield server
    finally:
        server.stop()


def client_of(server) -> mpd.MPDClient:
    client = mpd.MPDClient()
    client.timeout = DEADLINE
    client.connect(server.host, server.port)
    if server.password:
        client.password(server.password)
    return client


def held(stations) -> int:
    with urllib.request.urlopen(stations.url("/control/stats"), timeout=DEADLINE) as answer:
        return json.load(answer)["held"]


def test_home_assistant_plays_a_station(server, stations):
    url = stations.url("/live.mp3")
    client = client_of(server)
    try:
        client.clear()
        client.add(url)
        client.play()
        wait_for(lambda: client.status()["state"] == "play" and client.currentsong().get("title") == "First title",
                 what="the station playing with its title")
        song = client.currentsong()
        assert song["file"] == url
        assert song["name"] == "Reel Test Radio"
        assert "time" not in song and "duration" not in song
        client.stop()
    finally:
        client.disconnect()


@only_for("reel")
def test_an_hls_stations_timed_id3_titles_are_currentsongs_titles_with_idle_player(server, tmp_path):
    # An HLS station in MPEG-TS with a timed-ID3 stream: each segment's "Segment N" (pool segment
    # 3's tag is broken, and skipped) is currentsong's Title once its audio plays, and each
    # change wakes `idle player` and `idle playlist` as MPD's title changes do.
    with HLSServer(tmp_path) as hls:
        url = hls.url("tsid3/live.m3u8")
        client = client_of(server)
        watcher = client_of(server)
        try:
            client.clear()
            client.add(url)
            client.play()
            wait_for(lambda: client.currentsong().get("title", "").startswith("Segment "),
                     what="the station's first timed-ID3 title")
            first = client.currentsong()["title"]
            assert client.currentsong()["file"] == url
            # Idle until the title changes: each wake-up names player or playlist.
            later = first
            while later == first:
                changed = watcher.idle("player", "playlist")
                assert "player" in changed or "playlist" in changed, changed
                later = client.currentsong().get("title")
            assert later.startswith("Segment ") and later != first, (first, later)
            assert int(later.split()[1]) % 10 != 3, "the broken tag's segment has no title of its own"
            client.stop()
        finally:
            client.disconnect()
            watcher.disconnect()


def test_home_assistant_loads_a_station_playlist(server, stations):
    client = client_of(server)
    try:
        for name in ("/list.pls", "/list.m3u", "/list.xspf"):
            client.clear()
            client.load(stations.url(name))
            listed = client.playlistinfo()
            assert [s["file"] for s in listed] == [stations.url("/live.mp3"), stations.url("/file.mp3")], name
            # Titles: MPD takes PLS's; Reel takes every format's (mpd's M3U reader drops #EXTINF's).
            if name == "/list.pls":
                assert [s.get("title") for s in listed] == ["Live", "File"]
        client.play()
        wait_for(lambda: client.status()["state"] == "play" and client.currentsong()["file"] == stations.url("/live.mp3"),
                 what="the playlist's first station playing")
        # What is no playlist is refused, and nothing is added.
        client.clear()
        for bad in ("/html", "/live.mp3", "/status/404"):
            with pytest.raises(mpd.CommandError) as refused:
                client.load(stations.url(bad))
            assert str(refused.value).startswith("[50@0] {load} "), str(refused.value)
        assert client.playlistinfo() == []
    finally:
        client.disconnect()


@only_for("reel")
def test_a_playlist_added_as_a_url_is_expanded_when_it_plays(server, stations):
    # MPD queues it and then fails to decode it; Reel replaces it by its stations in place.
    client = client_of(server)
    try:
        client.clear()
        client.add(stations.url("/list-typed"))
        assert [s["file"] for s in client.playlistinfo()] == [stations.url("/list-typed")]
        client.play()
        wait_for(lambda: client.status()["state"] == "play" and client.currentsong()["file"] == stations.url("/live.mp3"),
                 what="the first station of the playlist playing")
        assert [s["file"] for s in client.playlistinfo()] == [stations.url("/live.mp3"), stations.url("/file.mp3")]
        client.stop()
    finally:
        client.disconnect()


def test_addtagid_and_cleartagid_answer_as_mpd(server, stations):
    client = client_of(server)
    try:
        client.clear()
        stream = client.addid(stations.url("/live.mp3"))
        local = client.addid(TREE[0].uri)
        client.addtagid(stream, "Title", "Set by a client")
        client.addtagid(stream, "artist", "Someone")
        song = client.playlistid(stream)[0]
        assert (song["title"], song["artist"]) == ("Set by a client", "Someone")
        errors = {
            (stream, "Foo", "Bar"): "[2@0] {addtagid} Unknown tag type: Foo",
            (99999, "Title", "X"): "[50@0] {addtagid} No such song",
            (local, "Title", "X"): "[4@0] {addtagid} Cannot edit tags of local file",
        }
        for arguments, answer in errors.items():
            with pytest.raises(mpd.CommandError) as refused:
                client.addtagid(*arguments)
            assert str(refused.value) == answer
        with pytest.raises(mpd.CommandError) as refused:
            client.cleartagid(local)
        assert str(refused.value) == "[4@0] {cleartagid} Cannot edit tags of local file"
        client.cleartagid(stream, "Artist")
        song = client.playlistid(stream)[0]
        assert song["title"] == "Set by a client" and "artist" not in song
        client.cleartagid(stream)
        assert "title" not in client.playlistid(stream)[0]
        client.addtagid(stream, "Title", "Again")
        # Playing, the stream's own title and name replace what the client set.
        client.playid(stream)
        wait_for(lambda: client.currentsong().get("title") == "First title", what="the stream's title")
        assert client.currentsong().get("name") == "Reel Test Radio"
        client.stop()
    finally:
        client.disconnect()


def test_commands_answer_while_a_server_holds_the_connection(server, stations):
    client, other = client_of(server), client_of(server)
    try:
        client.clear()
        client.add(stations.url("/hold/live.mp3"))
        client.add(TREE[0].uri)
        client.play(0)
        wait_for(lambda: held(stations) == 1, what="the server to hold the connection")
        # Both connections answer while it is held (each answer checked against the hold).
        assert other.status()["state"] == "play"
        assert other.currentsong()["file"] == stations.url("/hold/live.mp3")
        other.setvol(50)
        other.add(TREE[0].uri)
        assert len(client.playlistinfo()) == 3
        assert held(stations) == 1, "the commands waited for the connection"
        client.stop()
        wait_for(lambda: held(stations) == 0, what="the held connection to be closed")
        assert client.status()["state"] == "stop"
    finally:
        client.disconnect()
        other.disconnect()
