"""The music folders as MPD's database, through real clients: mpc and python-mpd2 against the
generated collection (collection.py), beside the recordings. The same tests run against Debian's
mpd (REEL_MPD_TARGET=mpd) with the collection in its music_directory.
"""

from __future__ import annotations

import shutil
import subprocess

import mpd
import pytest

import collection
from conftest import only_for
from mpdtest import DEADLINE, wait_for

TOP = ["loose.ogg", "Alpha Band", "Recordings", "Untagged", "Various", "Zoë Keating"]


def tagged(tag: str) -> list[str]:
    """The values of `tag` over the collection (with MPD's AlbumArtist → Artist fallback, and
    "" for songs without it), in byte order, as `list` answers."""
    values = set()
    for song in collection.SONGS:
        value = song.tags.get(tag)
        if value is None and tag == "AlbumArtist":
            value = song.tags.get("Artist")
        values.add(value or "")
    return sorted(values, key=lambda v: v.encode())


@pytest.fixture
def music_server(make_server, music):
    return make_server(music=music)


@pytest.fixture
def changing_server(make_server, music, tmp_path):
    """A server on a copy of the collection, which the test may change."""
    copy = tmp_path / "Music"
    shutil.copytree(music, copy)
    return make_server(music=copy)


def client(server) -> mpd.MPDClient:
    c = mpd.MPDClient()
    c.timeout = DEADLINE
    c.idletimeout = DEADLINE
    c.connect(server.host, server.port)
    return c


# ---------------------------------------------------------------------------------------------
# mpc

def test_mpc_ls_lists_the_music_folder_as_the_root_beside_recordings(music_server):
    assert music_server.mpc("ls").stdout.splitlines() == TOP
    assert music_server.mpc("ls", "Alpha Band/First Light").stdout.splitlines() == [
        "Alpha Band/First Light/01 Dawn.flac", "Alpha Band/First Light/02 Noon.flac",
        "Alpha Band/First Light/03 Dusk.mp3"]
    assert music_server.mpc("ls", "Zoë Keating").stdout.splitlines() == ["Zoë Keating/Ünïcödé"]
    # The broken file is in neither database.
    assert "Untagged/broken.flac" not in music_server.mpc("listall").stdout.splitlines()


def test_mpc_list_and_find_by_tag(music_server):
    assert music_server.mpc("list", "artist").stdout.splitlines() == tagged("Artist")
    assert music_server.mpc("list", "albumartist").stdout.splitlines() == tagged("AlbumArtist")
    # The recordings' albums are their folders' names.
    albums = sorted(set(tagged("Album")) | {"Meetings", "2025", "Notes"}, key=lambda v: v.encode())
    assert music_server.mpc("list", "album").stdout.splitlines() == albums
    assert music_server.mpc("find", "album", "Second Wind").stdout.splitlines() == [
        "Alpha Band/Second Wind/01 Gale.mp3", "Alpha Band/Second Wind/02 Breeze.ogg"]
    assert music_server.mpc("find", "artist", "Zoë Keating").stdout.splitlines() == [
        "Zoë Keating/Ünïcödé/01 Café.flac"]
    assert music_server.mpc("search", "genre", "POP").stdout.splitlines() == [
        "Various/Compilation/01 Song.ogg", "Various/Compilation/02 Other.opus",
        "Various/Compilation/03 Third.flac"]
    assert music_server.mpc("list", "album", "albumartist", "Various Artists").stdout.splitlines() == ["Compilation"]


def test_mpc_albumart_and_readpicture(music_server):
    art = subprocess_bytes(music_server, "albumart", "Alpha Band/First Light/02 Noon.flac")
    assert art == collection.cover_bytes()
    for song in collection.SONGS:
        if song.picture:
            assert subprocess_bytes(music_server, "readpicture", song.path) == collection.picture_bytes(song)
    # A file without a picture: nothing to write (mpc then prints the status instead).
    assert not subprocess_bytes(music_server, "readpicture", "Alpha Band/First Light/02 Noon.flac").startswith(b"\xff\xd8")


def subprocess_bytes(server, *args) -> bytes:
    import subprocess
    p = subprocess.run(["mpc", *args], env=server.mpc_env(), capture_output=True, timeout=DEADLINE)
    return p.stdout


def test_mpc_update_wait_finds_a_new_album(changing_server):
    root = changing_server.music_root
    shutil.copytree(root / "Alpha Band" / "First Light", root / "Delta" / "Copied")
    changing_server.mpc("update", "--wait")
    wait_for(lambda: "Delta/Copied/01 Dawn.flac" in changing_server.mpc("listall", "Delta").stdout,
             what="the copied album in the database")
    # The copy's songs carry the same tags: the album now has them twice.
    assert len(changing_server.mpc("find", "album", "First Light").stdout.splitlines()) == 6


def test_list_answers_follow_the_database(changing_server):
    """`list Album` (and a grouped `list`) asked again after an album came in: the new album is in
    the answer, as in MPD's, not the answer from before (Reel keeps list answers between changes)."""
    root = changing_server.music_root
    before = changing_server.mpc("list", "album").stdout.splitlines()
    grouped = changing_server.mpc("list", "album", "group", "albumartist").stdout.splitlines()
    assert before == changing_server.mpc("list", "album").stdout.splitlines()  # asked again: the same
    shutil.copytree(root / "Alpha Band" / "First Light", root / "Delta" / "Copied")
    for path in (root / "Delta" / "Copied").iterdir():
        if path.suffix == ".flac":
            subprocess.run(["metaflac", "--remove-tag=ALBUM", "--set-tag=ALBUM=Copied Light", str(path)], check=True)
    changing_server.mpc("update", "--wait")
    wait_for(lambda: "Copied Light" in changing_server.mpc("list", "album").stdout.splitlines(),
             what="the new album in `list album`")
    assert sorted(before + ["Copied Light"]) == sorted(changing_server.mpc("list", "album").stdout.splitlines())
    assert changing_server.mpc("list", "album", "group", "albumartist").stdout.splitlines() != grouped


@only_for("reel")
def test_a_music_folder_removed_while_running_lists_no_songs_until_it_returns(changing_server, tmp_path):
    """Reel keeps a removed music folder's songs (with their ids) but lists none of them until
    the folder is back: no client sees a song that cannot play. (MPD 0.23, its whole
    music_directory gone, fails the update and goes on listing every song: checked with
    REEL_MPD_TARGET=mpd.)"""
    root = changing_server.music_root
    listed = set(changing_server.mpc("listall").stdout.splitlines())
    songs = {song for song in listed if not song.startswith("Recordings/")}
    assert "Alpha Band/First Light/01 Dawn.flac" in songs
    away = tmp_path / "elsewhere"
    root.rename(away)
    changing_server.mpc("update", "--wait")
    wait_for(lambda: "Alpha Band/First Light/01 Dawn.flac" not in changing_server.mpc("listall").stdout,
             what="the removed folder's songs gone from listall")
    assert not set(changing_server.mpc("listall").stdout.splitlines()) & songs
    assert changing_server.mpc("find", "album", "First Light").stdout == ""
    assert changing_server.mpc("search", "any", "Dawn").stdout == ""
    away.rename(root)
    changing_server.mpc("update", "--wait")
    wait_for(lambda: "Alpha Band/First Light/01 Dawn.flac" in changing_server.mpc("listall").stdout,
             what="the folder's songs back in listall")
    assert set(changing_server.mpc("listall").stdout.splitlines()) == listed


# ---------------------------------------------------------------------------------------------
# python-mpd2

def test_python_mpd2_browses_by_tag(music_server):
    c = client(music_server)
    try:
        assert [a["artist"] for a in c.list("artist")] == tagged("Artist")
        grouped = c.list("album", "group", "albumartist")
        assert {"albumartist": "Various Artists", "album": "Compilation"} in grouped
        songs = c.find("albumartist", "Various Artists")
        assert [s["file"] for s in songs] == [
            "Various/Compilation/01 Song.ogg", "Various/Compilation/02 Other.opus",
            "Various/Compilation/03 Third.flac"]
        first = songs[0]
        assert first["artist"] == "Beta Singer" and first["track"] == "1" and first["date"] == "2010"
        assert c.count("genre", "Pop") == {"songs": "2", "playtime": "4"}
        untagged = c.lsinfo("Untagged")
        assert [s["file"] for s in untagged] == ["Untagged/no tags.flac", "Untagged/no tags.mp3"]
        # Only the tags a file has.
        assert not {"title", "artist", "album"} & set(untagged[0])
        assert [s["title"] for s in c.search("title", "é")] == ["Café"]
        stats = c.stats()
        assert stats["songs"] == str(music_server.expected_songs())
        assert stats["artists"] == str(len([a for a in tagged("Artist") if a]))
        art = c.albumart("Alpha Band/First Light/01 Dawn.flac")
        assert art["binary"] == collection.cover_bytes()
        dawn = next(s for s in collection.SONGS if s.path.endswith("Dawn.flac"))
        picture = c.readpicture(dawn.path)
        assert picture["binary"] == collection.picture_bytes(dawn) and picture["type"] == "image/jpeg"
    finally:
        c.disconnect()


def test_python_mpd2_queue_shows_music_files_by_uri_with_tags(music_server):
    c = client(music_server)
    try:
        c.clear()
        c.add("Alpha Band/Second Wind")
        c.findadd("artist", "Zoë Keating")
        queue = c.playlistinfo()
        assert [s["file"] for s in queue] == [
            "Alpha Band/Second Wind/01 Gale.mp3", "Alpha Band/Second Wind/02 Breeze.ogg",
            "Zoë Keating/Ünïcödé/01 Café.flac"]
        assert queue[2]["title"] == "Café" and queue[2]["album"] == "Ünïcödé"
        assert c.playlistid(queue[0]["id"])[0]["title"] == "Gale"
        c.clear()
    finally:
        c.disconnect()


def test_update_idles_update_then_database_when_files_changed(changing_server):
    c = client(changing_server)
    try:
        with changing_server.raw() as watcher:
            watcher.send("idle database\n")
            shutil.copytree(changing_server.music_root / "Various", changing_server.music_root / "Echo")
            assert int(c.update()) > 0
            assert watcher.reply() == ["changed: database", "OK"]
            wait_for(lambda: len(c.find("base", "Echo")) == 3, what="the new folder's songs")
            # An update starts and ends: `update` (an idle that only waits for `update`).
            watcher.send("idle update\n")
            c.update()
            assert watcher.reply() == ["changed: update", "OK"]
    finally:
        c.disconnect()


@only_for("reel")
def test_several_music_folders_are_a_directory_each(make_server, music, tmp_path):
    other = tmp_path / "usb" / "Music"
    shutil.copytree(music / "Various", other / "Various")
    server = make_server(music=[music, other])
    # Both folders are named Music: the second one in music_dirs is "Music (2)".
    assert server.mpc("ls").stdout.splitlines() == ["Music", "Music (2)", "Recordings"]
    assert server.mpc("ls", "Music (2)").stdout.splitlines() == ["Music (2)/Various"]
    assert server.mpc("find", "album", "Compilation").stdout.splitlines() == [
        "Music/Various/Compilation/01 Song.ogg", "Music/Various/Compilation/02 Other.opus",
        "Music/Various/Compilation/03 Third.flac", "Music (2)/Various/Compilation/01 Song.ogg",
        "Music (2)/Various/Compilation/02 Other.opus", "Music (2)/Various/Compilation/03 Third.flac"]
    server.mpc("add", "Music (2)/Various/Compilation/02 Other.opus")
    assert server.mpc("playlist", "-f", "%file% %title%").stdout.splitlines() == [
        "Music (2)/Various/Compilation/02 Other.opus Other"]
    art = subprocess_bytes(server, "albumart", "Music/Alpha Band/First Light/01 Dawn.flac")
    assert art == collection.cover_bytes()


@only_for("reel")
def test_a_cover_symlink_leading_out_of_the_music_folder_is_not_read(changing_server, tmp_path):
    secret = tmp_path / "secret.jpg"
    secret.write_bytes(collection.fake_jpeg(500, 3))
    (changing_server.music_root / "Various" / "Compilation" / "cover.jpg").symlink_to(secret)
    inside = changing_server.music_root / "Alpha Band" / "First Light" / "cover.jpg"
    (changing_server.music_root / "Alpha Band" / "Second Wind" / "cover.jpg").symlink_to(inside)
    with changing_server.authed() as c:
        assert c.cmd('albumart "Various/Compilation/01 Song.ogg" 0') == ["ACK [50@0] {albumart} No file exists"]
        data = []
        lines = c.send('albumart "Alpha Band/Second Wind/01 Gale.mp3" 0\n') or c.reply(binary=data)
        assert lines[0] == f"size: {collection.COVER_SIZE}" and lines[-1] == "OK"
        assert data == [collection.cover_bytes()[:8192]]


# ---------------------------------------------------------------------------------------------
# Bad input

def test_bad_uris_and_offsets_answer_as_mpd(music_server):
    with music_server.authed() as c:
        assert c.cmd("lsinfo ../x") == ["ACK [50@0] {lsinfo} No such directory"]
        assert c.cmd('lsinfo "Alpha Band/../Various"') == ["ACK [50@0] {lsinfo} No such directory"]
        assert c.cmd("listall nothing") == ["ACK [50@0] {listall} No such directory"]
        assert c.cmd('albumart "Alpha Band/First Light/01 Dawn.flac" 20001') == [
            "ACK [2@0] {albumart} Offset too large"]
        assert c.cmd('readpicture "Alpha Band/Second Wind/01 Gale.mp3" 99999') == [
            "ACK [2@0] {readpicture} Bad file offset"]
        assert c.cmd('albumart "../../etc/passwd" 0') == ["ACK [50@0] {albumart} No file exists"]
        assert c.cmd("add ../x")[-1].startswith("ACK [50@0] {add} ")
        assert c.cmd("list bogus") == ["ACK [2@0] {list} Unknown tag type: bogus"]
        assert c.cmd("count group")[-1].startswith("ACK [2@0] {count} ")
        assert c.cmd("ping") == ["OK"]


@only_for("reel")
def test_a_mixed_add_makes_one_queue_version_and_one_playlist_event(music_server):
    """`add /` adds the music folder's files and the recordings; `searchadd` hits both. Each is
    one change of the queue in Reel: one new version and one `playlist` idle event (MPD counts
    a version per song, so this is Reel's rule alone)."""
    c = client(music_server)
    try:
        for command, expected in [
            (lambda: c.add("/"), music_server.expected_songs()),
            # Titles of music files and recordings both hold an "n" ("Noon", "Standup", …).
            (lambda: c.searchadd("title", "n"), None),
        ]:
            c.clear()
            before = int(c.status()["playlist"])
            # A connection made now has no event pending from before.
            with music_server.raw() as watcher:
                watcher.send("idle playlist\n")
                command()
                assert watcher.reply() == ["changed: playlist", "OK"]
                files = [song["file"] for song in c.playlistinfo()]
                assert any(f.startswith("Recordings/") for f in files), files
                assert any(not f.startswith("Recordings/") for f in files), files
                if expected is not None:
                    assert len(files) == expected
                assert int(c.status()["playlist"]) == before + 1, "one add, one queue version"
                # No second `playlist` event is pending: the next idle sees only the marker.
                watcher.send("idle playlist options\n")
                c.repeat(0 if c.status()["repeat"] == "1" else 1)
                assert watcher.reply() == ["changed: options", "OK"]
    finally:
        c.clear()
        c.disconnect()
