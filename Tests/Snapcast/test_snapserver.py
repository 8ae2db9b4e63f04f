"""reel-snapcast under Debian's snapserver 0.26: snapserver's JSON-RPC (TCP) reaches reeld
through the plugin, and reeld's changes reach snapserver's clients as Stream.OnProperties."""

from __future__ import annotations

import urllib.parse

import pytest

from conftest import stop_and_check_plugin_exits
from snaptest import DEADLINE, STREAM, RPCError, Reeld, Snapserver, on_properties, wait_for


def player(reeld):
    return reeld.call("player.status")


def control(client, command, params=None):
    request = {"id": STREAM, "command": command}
    if params is not None:
        request["params"] = params
    return client.call("Stream.Control", request)


def set_property(client, name, value):
    return client.call("Stream.SetProperty", {"id": STREAM, "property": name, "value": value})


def test_status_shows_reelds_state(reeld, snapserver, tones):
    reeld.call("mixer.setVolume", {"volume": 63})
    with snapserver.client() as c:
        props = wait_for(lambda: (p := snapserver.properties(c)).get("volume") == 63 and p,
                         what="the volume in Server.GetStatus")
        assert props["playbackStatus"] == "stopped"
        assert props["canControl"] is True and props["canPlay"] is True
        assert props["canGoNext"] is False and props["canSeek"] is False, "nothing is playing"
        assert props["loopStatus"] == "none" and props["shuffle"] is False


def test_control_reaches_reeld(reeld, snapserver, tones):
    with snapserver.client() as c:
        assert control(c, "play") == "ok"
        state = player(reeld)
        assert state["state"] == "playing" and state["source"]["path"] == str(tones[0])
        wait_for(lambda: snapserver.properties(c).get("canGoNext") is True, what="canGoNext once playing")

        assert control(c, "pause") == "ok"
        assert player(reeld)["state"] == "paused"
        assert control(c, "playPause") == "ok"
        assert player(reeld)["state"] == "playing"

        assert control(c, "next") == "ok"
        assert player(reeld)["source"]["path"] == str(tones[1])
        assert control(c, "previous") == "ok"
        assert player(reeld)["source"]["path"] == str(tones[0])

        assert control(c, "setPosition", {"position": 100.0}) == "ok"
        assert player(reeld)["position"] >= 100
        assert control(c, "seek", {"offset": -50.0}) == "ok"
        assert 50 <= player(reeld)["position"] < 100

        assert control(c, "stop") == "ok"
        assert player(reeld)["state"] == "stopped"


def test_set_property_reaches_reeld(reeld, snapserver):
    with snapserver.client() as c:
        assert set_property(c, "volume", 37) == "ok"
        assert reeld.call("mixer.status")["volume"] == 37
        c.wait_notification(on_properties(lambda p: p.get("volume") == 37), what="volume 37 pushed")

        assert set_property(c, "shuffle", True) == "ok"
        assert set_property(c, "loopStatus", "track") == "ok"
        options = reeld.call("queue.list", {"count": 0})["options"]
        assert options["random"] is True and options["repeat"] is True and options["single"] is True
        c.wait_notification(on_properties(lambda p: p.get("loopStatus") == "track" and p.get("shuffle") is True),
                            what="loopStatus track and shuffle pushed")
        assert set_property(c, "loopStatus", "playlist") == "ok"
        options = reeld.call("queue.list", {"count": 0})["options"]
        assert options["repeat"] is True and options["single"] is False


def test_pause_in_reeld_is_pushed(reeld, snapserver):
    with snapserver.client() as c:
        reeld.call("player.play")
        c.wait_notification(on_properties(lambda p: p.get("playbackStatus") == "playing"), what="playing pushed")
        reeld.reel("pause")
        pushed = c.wait_notification(on_properties(lambda p: p.get("playbackStatus") == "paused"),
                                     what="paused pushed after `reel pause`")
        assert pushed["params"]["properties"]["canControl"] is True
        assert snapserver.properties(c)["playbackStatus"] == "paused"


def test_metadata_of_the_current_entry(reeld, snapserver, tones):
    with snapserver.client() as c:
        reeld.call("player.play")
        pushed = c.wait_notification(
            on_properties(lambda p: p.get("metadata", {}).get("title") == "first tone.flac"),
            what="the first tone's metadata")
        metadata = pushed["params"]["properties"]["metadata"]
        assert metadata["duration"] == pytest.approx(300, abs=0.01)
        assert metadata["url"] == "file://" + urllib.parse.quote(str(tones[0]))
        entry = reeld.call("player.status")["entry"]
        assert metadata["trackId"] == str(entry)

        reeld.call("player.next")
        pushed = c.wait_notification(on_properties(lambda p: p.get("metadata", {}).get("title") == "second.flac"),
                                     what="the second tone's metadata after next")
        assert pushed["params"]["properties"]["metadata"]["duration"] == pytest.approx(240, abs=0.01)
        assert snapserver.properties(c)["metadata"]["title"] == "second.flac"


def test_reeld_restart(reeld, snapserver):
    with snapserver.client() as c:
        reeld.stop()
        c.wait_notification(on_properties(lambda p: p.get("canControl") is False),
                            what="canControl false once reeld stopped")
        with pytest.raises(RPCError) as refused:
            control(c, "play")
        # snapserver refuses by itself: the plugin said nothing can be controlled.
        assert "is false" in refused.value.error["message"]

        reeld.start()
        c.wait_notification(on_properties(lambda p: p.get("canControl") is True),
                            what="canControl true once reeld is back")
        assert control(c, "play") == "ok"
        assert player(reeld)["state"] == "playing"
        c.wait_notification(on_properties(lambda p: p.get("playbackStatus") == "playing"),
                            what="playing pushed after the restart")


def test_started_before_reeld(tmp_path, tones):
    reeld = Reeld(tmp_path / "reeld")
    server = Snapserver(tmp_path / "snapserver", reeld.socket).start()
    try:
        with server.client() as c:
            wait_for(lambda: server.properties(c).get("canControl") is False,
                     what="the stream, not controllable while reeld is not there")
            reeld.start()
            reeld.call("queue.add", {"file": str(tones[2])})
            wait_for(lambda: server.properties(c).get("canPlay") is True,
                     what="the stream, controllable once reeld started")
            assert control(c, "play") == "ok"
            wait_for(lambda: server.properties(c).get("metadata", {}).get("title") == "third.flac",
                     what="the metadata of the tone played")
    finally:
        stop_and_check_plugin_exits(server)
        reeld.stop()


def test_errors_from_the_plugin_and_reeld(reeld, snapserver):
    with snapserver.client() as c:
        # The plugin refuses what Reel does not have: snapserver passes its error on.
        reply = c.call_raw("Stream.SetProperty", {"id": STREAM, "property": "rate", "value": 1.5})
        assert reply["error"]["code"] == -32602
        assert "rate is not supported" in reply["error"]["message"]
        reply = c.call_raw("Stream.SetProperty", {"id": STREAM, "property": "volume", "value": 150})
        assert reply["error"]["code"] == -32602
        assert "volume must be from 0 to 100, not 150" in reply["error"]["message"]

        # reeld refuses: its message and reason come back.
        reeld.call("player.play")
        wait_for(lambda: snapserver.properties(c).get("canSeek") is True, what="canSeek once playing")
        reply = c.call_raw("Stream.Control", {"id": STREAM, "command": "setPosition", "params": {"position": 10000}})
        assert reply["error"]["code"] == -32000
        assert "out_of_range" in reply["error"]["message"]

        # The stream still works.
        assert control(c, "pause") == "ok"
        assert player(reeld)["state"] == "paused"
