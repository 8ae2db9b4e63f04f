"""python-mpd2, sync and asyncio, used the way Home Assistant's and Music Assistant's MPD
integrations use it: connect, status, currentsong, commands, listplaylists, setvol, seekcur,
a fresh connection for every update, and the asyncio client's automatic idle/noidle around
every command (the client idles 0.1 s after a command and sends `noidle` before the next: a
server that answers a `noidle` arriving after the idle already returned breaks it).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import random
import time

import mpd
import pytest
from mpd.asyncio import MPDClient as AsyncClient

from mpdtest import DEADLINE, LISTALL_ORDER, by_name, today, wait_for

# What Home Assistant's mpd integration and Music Assistant call; `commands` must list them.
HA_COMMANDS = {"status", "currentsong", "commands", "listplaylists", "setvol", "seekcur", "play",
               "pause", "stop", "next", "previous", "clear", "add", "repeat", "single", "random",
               "idle", "password", "ping", "playlistinfo", "lsinfo"}  # never noidle: MPD does not list it


def sync_client(server) -> mpd.MPDClient:
    client = mpd.MPDClient()
    client.timeout = DEADLINE
    client.idletimeout = DEADLINE
    client.connect(server.host, server.port)
    if server.password:
        client.password(server.password)
    return client


def prepare_paused(server, position=1):
    """Queues the whole tree, plays `position` and pauses at once."""
    with server.authed() as c:
        c.ok("clear")
        c.ok("add Recordings")
        c.send(f"command_list_begin\nplay {position}\npause 1\ncommand_list_end\n")
        assert c.reply() == ["OK"]
        wait_for(lambda: c.status()["state"] == "pause", what="pause")


def test_the_server_plays_in_real_time(server):
    """What the tests here rely on: a song plays for as long as it lasts, as on MPD's null output,
    so a `pause` sent after `play` (the asyncio client idles between the two) finds it playing.
    ALSA's `null` device plays at CPU speed: scripts/test-mpd-clients gives reeld a PulseAudio null
    sink (`pulse`), and REEL_MPD_DEVICE=null, unpaced on purpose, skips this. Paced, `elapsed`
    never runs ahead of the clock by more than the device's buffer, however slow the machine."""
    if server.kind == "reel" and os.environ.get("REEL_MPD_DEVICE") == "null":
        pytest.skip("REEL_MPD_DEVICE=null plays at CPU speed")
    idea = by_name("idea")
    with server.authed() as c:
        c.ok("clear")
        c.ok(f'add "{idea.uri}"')
        started = time.monotonic()
        c.ok("play 0")

        def played_or_stopped():
            status = c.status()
            return status if status["state"] != "play" or float(status.get("elapsed", 0)) >= 3 else None

        status = wait_for(played_or_stopped, what="3 s of playback")
        since = time.monotonic() - started
        assert status["state"] == "play" and status["song"] == "0", (
            f"a {idea.seconds} s song is not playing after {since:.1f} s: {status} (device not paced?)")
        assert float(status["elapsed"]) <= since + 2, (
            f"{status['elapsed']} s played in {since:.1f} s (device not paced?)")
        c.ok("stop")


def test_sync_client_like_home_assistant(server):
    client = sync_client(server)
    try:
        assert client.mpd_version and client.mpd_version.startswith("0.2")
        commands = set(client.commands())
        assert HA_COMMANDS <= commands, HA_COMMANDS - commands
        status = client.status()
        assert status["state"] == "stop"
        assert "volume" in status  # HA offers volume control only when present
        assert status["repeat"] == "0" and status["random"] == "0" and status["single"] == "0"
        assert client.currentsong() == {}
        assert client.listplaylists() == []

        client.setvol(40)
        assert client.status()["volume"] == "40"

        client.add("Recordings")
        assert [s["file"] for s in client.playlistinfo()] == LISTALL_ORDER
        client.play(1)
        client.pause(1)
        status = client.status()
        assert status["state"] == "pause"
        assert status["song"] == "1"
        assert float(status["duration"]) == pytest.approx(by_name("Standup").seconds, abs=0.5)
        elapsed, total = status["time"].split(":")
        assert int(total) == by_name("Standup").seconds
        song = client.currentsong()
        assert song["file"] == "Recordings/Meetings/Standup.flac"
        assert song["title"] == "Standup" and song["album"] == "Meetings" and song["date"] == today()
        assert song["pos"] == "1" and song["id"] == status["songid"]
        assert int(song["time"]) == by_name("Standup").seconds

        client.seekcur(120)
        assert float(client.status()["elapsed"]) == pytest.approx(120, abs=0.5)
        client.seekcur("+30")
        assert float(client.status()["elapsed"]) == pytest.approx(150, abs=0.5)
        client.seekcur("-100")
        assert float(client.status()["elapsed"]) == pytest.approx(50, abs=0.5)
        assert client.status()["state"] == "pause"

        client.repeat(1)
        client.single(1)
        status = client.status()
        assert status["repeat"] == "1" and status["single"] == "1"  # HA's "repeat one"
        client.random(1)
        assert client.status()["random"] == "1"

        assert client.find("title", "idea")[0]["file"] == "Recordings/Notes/idea.flac"
        assert client.find("(Title == 'idea')")[0]["file"] == "Recordings/Notes/idea.flac"
        assert [e.get("directory") for e in client.lsinfo("Recordings")] == [
            "Recordings/Meetings", "Recordings/Notes"]

        # A command list (python-mpd2 sends command_list_ok_begin).
        client.command_list_ok_begin()
        client.ping()
        client.status()
        client.currentsong()
        ping, status, song = client.command_list_end()
        assert ping is None and status["state"] == "pause" and song["title"] == "Standup"

        with pytest.raises(mpd.CommandError) as error:
            client.play(99)
        assert error.value.errno == mpd.FailureResponseCode.ARG
        assert str(error.value) == "[2@0] {play} Bad song index"
        with pytest.raises(mpd.CommandError) as error:
            client.playid(99999)
        assert error.value.errno == mpd.FailureResponseCode.NO_EXIST
        # The connection still works after errors.
        assert client.status()["state"] == "pause"
    finally:
        client.disconnect()


def test_home_assistant_source_list_loads_and_plays_a_playlist(server):
    """Home Assistant's source list: `listplaylists` names the stored playlists, picking one
    `clear`s, `load`s it and `play`s (its `async_select_source`). The playlist is saved from the
    queue over the same protocol, so it is in the server's playlist directory as MPD keeps it."""
    client = sync_client(server)
    try:
        assert client.listplaylists() == []
        client.add("Recordings/Notes")
        client.add("Recordings/Meetings/Standup.flac")
        client.save("Evening")
        client.clear()
        playlists = client.listplaylists()
        assert [p["playlist"] for p in playlists] == ["Evening"]
        assert "last-modified" in playlists[0]
        assert [s["file"] for s in client.listplaylistinfo("Evening")] == [
            "Recordings/Notes/idea.flac", "Recordings/Notes/Memo.wav", "Recordings/Meetings/Standup.flac"]
        # async_select_source: clear, load, play.
        client.clear()
        client.load("Evening")
        client.play()
        wait_for(lambda: client.status()["state"] == "play", what="play after load")
        assert client.currentsong()["file"] == "Recordings/Notes/idea.flac"
        assert int(client.status()["playlistlength"]) == 3
        client.stop()
        with pytest.raises(mpd.CommandError) as error:
            client.load("Nothing")
        assert str(error.value) == "[50@0] {load} No such playlist"
    finally:
        client.disconnect()


def test_sync_idle(server):
    """The sync client's blocking idle() (python-mpd2 3 has no noidle on it: raw tests cover that)."""
    idler = sync_client(server)
    other = sync_client(server)
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1)
    try:
        # Nothing pending: idle() blocks until the other client changes the volume.
        waiting = pool.submit(idler.idle)
        other.ping()
        other.setvol(30)
        assert waiting.result(timeout=DEADLINE) == ["mixer"]

        # Changes made while not idling are kept: idle returns them at once, in MPD's order.
        other.repeat(1)
        other.setvol(20)
        assert idler.idle() == ["mixer", "options"]

        # idle for one subsystem waits for it; when it returns, MPD drops every other pending
        # event too (Client::IdleNotify clears all flags): the mixer change is not reported later.
        other.setvol(10)
        waiting = pool.submit(idler.idle, "options")
        other.random(1)
        assert waiting.result(timeout=DEADLINE) == ["options"]
        other.single(1)
        assert idler.idle() == ["options"]
        assert idler.status()["random"] == "1"
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        other.disconnect()
        idler.disconnect()


def test_async_home_assistant_update_loop(server):
    """HA's entity: every update opens a connection, (password,) commands, status, currentsong,
    listplaylists, then disconnects; meanwhile another client drives the player."""

    async def update(expect_volume=None):
        client = AsyncClient()
        client.timeout = DEADLINE
        await asyncio.wait_for(client.connect(server.host, server.port), DEADLINE)
        try:
            if server.password:
                await client.password(server.password)
            commands = list(await client.commands())
            assert HA_COMMANDS <= set(commands)
            status = await client.status()
            song = await client.currentsong()
            playlists = await client.listplaylists()
            return status, song, playlists
        finally:
            client.disconnect()

    async def run():
        status, song, playlists = await update()
        assert status["state"] == "stop" and song == {} and playlists == []
        prepare_paused(server, position=3)
        for volume in range(10, 60, 5):
            with server.authed() as c:
                c.ok(f"setvol {volume}")
            status, song, playlists = await update()
            assert status["volume"] == str(volume)
            assert status["state"] == "pause"
            assert song["title"] == "idea" and song["file"] == "Recordings/Notes/idea.flac"
            assert float(status["elapsed"]) >= 0 and float(status["duration"]) > 0

        # The controls HA sends, through the asyncio client.
        client = AsyncClient()
        await client.connect(server.host, server.port)
        try:
            if server.password:
                await client.password(server.password)
            await client.setvol(65)
            await client.seekcur(42)
            status = await client.status()
            assert status["volume"] == "65"
            assert float(status["elapsed"]) == pytest.approx(42, abs=0.5)
            await client.pause(1)
            await client.repeat(1)
            await client.single(0)
            await client.random(0)
            status = await client.status()
            assert (status["state"], status["repeat"], status["single"]) == ("pause", "1", "0")
        finally:
            client.disconnect()

    asyncio.run(asyncio.wait_for(run(), 10 * DEADLINE))


def test_async_idle_noidle_race(server):
    """An asyncio client listens with idle() while it sends commands at about the moment its
    background idle starts (0.1 s after each command), and a second client makes changes at the
    same time. Every reply must belong to its command, and no event may be lost."""

    async def run():
        client = AsyncClient()
        client.timeout = DEADLINE
        await client.connect(server.host, server.port)
        if server.password:
            await client.password(server.password)
        seen: list[str] = []

        async def listen():
            async for changes in client.idle():
                seen.extend(changes)

        listener = asyncio.create_task(listen())
        try:
            rng = random.Random(12)
            for i in range(60):
                # Race the client's own idle against changes made by another connection.
                with server.authed() as other:
                    other.ok(f"setvol {i % 50 + 10}")
                await asyncio.sleep(rng.uniform(0.05, 0.15))
                kind = i % 4
                if kind == 0:
                    assert await client.ping() is None
                elif kind == 1:
                    status = await client.status()
                    assert status["state"] in ("stop", "play", "pause")
                    assert "volume" in status and "playlistlength" in status
                elif kind == 2:
                    assert await client.currentsong() == {}
                else:
                    assert await client.listplaylists() == []
                assert client.connected
            # The last change is seen by the listener.
            with server.authed() as other:
                other.ok("repeat 1")
            deadline = asyncio.get_running_loop().time() + DEADLINE
            while "options" not in seen:
                assert asyncio.get_running_loop().time() < deadline, f"no options event; saw {seen}"
                await asyncio.sleep(0.02)
            assert "mixer" in seen
            assert set(seen) <= {"mixer", "options"}, seen
            # Still in step: a final command gets its own reply.
            assert (await client.status())["repeat"] == "1"
        finally:
            listener.cancel()
            client.disconnect()

    asyncio.run(asyncio.wait_for(run(), 10 * DEADLINE))


def test_async_commands_while_listening_to_player(server):
    """Music Assistant style: idle() on player/mixer in a task while commands go out."""

    async def run():
        client = AsyncClient()
        await client.connect(server.host, server.port)
        if server.password:
            await client.password(server.password)
        events: asyncio.Queue = asyncio.Queue()

        async def listen():
            async for changes in client.idle(["player", "mixer", "playlist"]):
                await events.put(set(changes))

        async def expect(subsystem):
            while True:
                changes = await asyncio.wait_for(events.get(), DEADLINE)
                if subsystem in changes:
                    return

        listener = asyncio.create_task(listen())
        try:
            await asyncio.sleep(0.3)  # lets the client enter idle; not an assertion
            await client.add("Recordings/Notes")
            await expect("playlist")
            await client.play(0)
            await client.pause(1)
            await expect("player")
            await client.setvol(33)
            await expect("mixer")
            status = await client.status()
            assert status["state"] == "pause" and status["volume"] == "33"
            await client.clear()
            await expect("playlist")
            assert (await client.status())["playlistlength"] == "0"
        finally:
            listener.cancel()
            client.disconnect()

    asyncio.run(asyncio.wait_for(run(), 10 * DEADLINE))
