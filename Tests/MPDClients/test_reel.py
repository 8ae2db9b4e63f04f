"""What only Reel does: its library as MPD's database, its JSON-RPC side and the MPD side seeing
each other's changes, its listeners. Runs only with REEL_MPD_TARGET=reel."""

from __future__ import annotations

import json
import os
import socket
import subprocess

import pytest

import mpdtest
from conftest import only_for
from mpdtest import DEADLINE, TREE, today, wait_for

pytestmark = only_for("reel")


def reel_json(server, *args):
    return json.loads(server.reel(*args, "--json").stdout)


def song_blocks(lines):
    blocks, current = [], None
    for line in lines:
        key, _, value = line.partition(": ")
        if key in ("file", "directory"):
            current = {key: value}
            blocks.append(current)
        elif current is not None:
            current[key] = value
    return blocks


def test_library_is_the_recordings_directory(server):
    with server.authed() as c:
        files = {b["file"]: b for b in song_blocks(c.ok("listallinfo")) if "file" in b}
    assert sorted(files) == sorted(r.uri for r in TREE)
    for r in TREE:
        song = files[r.uri]
        assert song["Title"] == r.name and song["Album"] == r.album and song["Date"] == today()
        assert int(song["Time"]) == r.seconds
    # Every recording Reel lists is there, under its tree path.
    for folder in mpdtest.FOLDERS:
        listing = reel_json(server, "ls", "/" + folder)
        for item in listing["items"]:
            if item["kind"] == "recording":
                uri = f"Recordings{item['path']}.{item['format']['codec']}"
                if item["format"]["codec"] == "vorbis":
                    uri = uri[: -len("vorbis")] + "ogg"
                assert uri in files, (item, sorted(files))


def test_tree_changes_reach_mpd_clients(server):
    with server.authed() as idler, server.authed() as c:
        idler.send("idle database\n")
        server.reel("mkdir", "/Notes/Sub")
        assert idler.reply() == ["changed: database", "OK"]
        assert "directory: Recordings/Notes/Sub" in c.ok("lsinfo Recordings/Notes")
        # Songs first, then directories, as MPD.
        entries = [l for l in c.ok("lsinfo Recordings/Notes") if l.startswith(("file:", "directory:"))]
        assert entries == ["file: Recordings/Notes/idea.flac", "file: Recordings/Notes/Memo.wav",
                           "directory: Recordings/Notes/Sub"]

        idler.send("idle database\n")
        server.reel("rename", "/Notes/idea", "big idea")
        assert idler.reply() == ["changed: database", "OK"]
        song = c.pairs('lsinfo "Recordings/Notes/big idea.flac"')
        assert song["Title"] == "big idea" and song["Album"] == "Notes"
        assert c.cmd("lsinfo Recordings/Notes/idea.flac")[-1].startswith("ACK [50@0] {lsinfo}")

        idler.send("idle database\n")
        server.reel("rm", "/Notes/Sub")
        assert idler.reply() == ["changed: database", "OK"]
        assert "directory: Recordings/Notes/Sub" not in c.ok("lsinfo Recordings/Notes")
        assert c.pairs("stats")["songs"] == str(len(TREE))


def test_changes_show_on_both_sides(server):
    with server.authed() as idler, server.authed() as c:
        # MPD -> Reel: the queue, in MPD's order.
        c.ok("add Recordings/Notes")
        queue = reel_json(server, "queue")
        assert [e["source"]["path"] for e in queue["entries"]] == ["/Notes/idea", "/Notes/Memo"]
        c.ok("repeat 1")
        assert reel_json(server, "queue")["options"]["repeat"] is True
        c.ok("setvol 20")
        assert server.reel("vol").stdout.strip() == "volume: 20%"

        # Reel -> MPD, seen by an idle client.
        idler.send("idle mixer\n")
        server.reel("vol", "30")
        assert idler.reply() == ["changed: mixer", "OK"]
        assert c.status()["volume"] == "30"
        idler.send("idle playlist\n")
        server.reel("add", "/Meetings/Standup")
        assert idler.reply() == ["changed: playlist", "OK"]
        assert c.ok("playlist")[-1] == "2:file: Recordings/Meetings/Standup.flac"

        # Muted: volume 0 over MPD; setvol unmutes.
        server.reel("mute", "on")
        wait_for(lambda: c.status()["volume"] == "0", what="volume 0 while muted")
        c.ok("setvol 45")
        assert server.reel("vol").stdout.strip() == "volume: 45%"

        # The player, both ways.
        c.send("command_list_begin\nplay 0\npause 1\ncommand_list_end\n")
        assert c.reply() == ["OK"]
        state = json.loads(server.reel("status", "--json").stdout)
        assert state["state"] == "paused" and state["source"]["path"] == "/Notes/idea"
        idler.send("idle player\n")
        server.reel("stop")
        assert idler.reply() == ["changed: player", "OK"]
        assert c.status()["state"] == "stop"


def test_info_lists_the_listeners(server):
    info = reel_json(server, "info")
    mpd = {l["address"] for l in info["listeners"] if l["protocol"] == "mpd"}
    assert mpd == {f"{server.host}:{server.port}", str(server.unix)}


def test_unix_socket_listener(server):
    with server.raw(unix=True) as c:
        assert c.greeting == "OK MPD 0.23.0"
        assert c.status()["state"] == "stop"


def test_absolute_paths_refused_over_tcp(server):
    with server.authed() as c:
        path = server.media / TREE[0].uri
        assert c.cmd(f'add "{path}"') == ["ACK [4@0] {add} Access denied"]
        assert c.cmd(f'add "file://{path}"') == ["ACK [4@0] {add} Access denied"]


def test_port_already_taken(media, tmp_path):
    if reason := mpdtest.reeld_supports_mpd():
        pytest.fail(reason)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        reeld = mpdtest.reel_build_dir() / "reeld"
        p = subprocess.run([str(reeld), "--socket", str(tmp_path / "reel.sock"), "--data-dir",
                            str(tmp_path / "data"), "--device", "null",
                            "--mpd-listen", f"127.0.0.1:{port}"],
                           env={"REEL_CONFIG": "/dev/null", "PATH": "/usr/bin:/bin"},
                           capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode != 0
    assert f"127.0.0.1:{port}" in p.stderr + p.stdout, p.stderr


def untagged_long_mp3(folder):
    """10 s (4 s of digital silence, 2 s of noise, 4 s of silence) as VBR without a tag (`lame
    -t -V 0`: frames of 104 bytes in the silence, about 500 in the noise), 128 times over: 21
    minutes, too long to be counted before the reply. Reel's estimate takes 128 windows, each in
    the middle of a copy's bytes, in the noise: about 40 % of the true length. Returns the path
    and the true length (every frame counted)."""
    base = folder / "segment"
    sox = ["sox", "-D", "-n", "-r", "44100", "-c", "2", "-b", "16"]
    subprocess.run(sox + [f"{base}-quiet.wav", "trim", "0", "4"], check=True)
    subprocess.run(sox + [f"{base}-noise.wav", "synth", "2", "whitenoise", "vol", "0.5"], check=True)
    subprocess.run(["sox", "-D", f"{base}-quiet.wav", f"{base}-noise.wav", f"{base}-quiet.wav", f"{base}.wav"],
                   check=True)
    subprocess.run(["lame", "--quiet", "-t", "-V", "0", f"{base}.wav", f"{base}.mp3"], check=True)
    segment = (folder / "segment.mp3").read_bytes()
    for leftover in folder.iterdir():
        leftover.unlink()
    bitrates = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320]
    at = frames = 0
    while at + 4 <= len(segment):
        assert segment[at] == 0xFF and segment[at + 1] & 0xFE == 0xFA, f"no frame at {at}"
        at += 144 * bitrates[segment[at + 2] >> 4] * 1000 // 44100 + (segment[at + 2] >> 1 & 1)
        frames += 1
    path = folder / "long.mp3"
    path.write_bytes(segment * 128)
    return path, frames * 128 * 1152 / 44100


def test_an_untagged_mp3_shows_its_estimate_then_its_length(make_server, tmp_path):
    """MPD shows a duration for an MP3 without a Xing/Info tag at once, an estimate; so does
    Reel (a better one), then the exact length when its count ends, with `player` and
    `playlist` for idle clients."""
    music = tmp_path / "music"
    music.mkdir()
    path, exact = untagged_long_mp3(music)
    server = make_server(music=[music])
    # A busy loop of normal priority on every CPU: reeld's count (a SCHED_IDLE thread) gets next
    # to nothing until they end, however fast the machine. (Pinning reeld to one CPU instead
    # would pin its audio thread too, which on the unpaced `null` device takes that CPU whole.)
    spinners = [subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])
                for cpu in sorted(os.sched_getaffinity(0))]

    def stop_spinners():
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
    try:
        with server.raw() as c, server.raw() as idler:
            c.ok(f'add "{path.name}"')
            c.send("command_list_begin\nplay 0\npause 1\ncommand_list_end\n")
            assert c.reply() == ["OK"]
            status = c.status()
            assert "duration" in status, sorted(status.items())
            estimate = float(status["duration"])
            assert estimate < exact * 0.6, (estimate, exact)
            assert status["time"].endswith(f":{round(estimate)}")
            song = c.pairs("playlistinfo")
            assert float(song["duration"]) == pytest.approx(estimate, abs=0.001)
            assert song["Time"] == str(round(estimate))
            idler.ok("idle")  # clears what the add and play left pending
            idler.send("idle player playlist\n")
            stop_spinners()
            changed = idler.reply()
            assert changed[-1] == "OK" and {"changed: player", "changed: playlist"} & set(changed), changed
            wait_for(lambda: float(c.status()["duration"]) == pytest.approx(exact, abs=0.001),
                     what="the counted duration in status")
            wait_for(lambda: c.pairs("playlistinfo")["Time"] == str(round(exact)),
                     what="the counted duration in the queue")
            assert c.status()["state"] == "pause"
    finally:
        stop_spinners()
