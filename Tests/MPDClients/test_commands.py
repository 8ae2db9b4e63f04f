"""`commands` lists what works; the fixed replies have MPD's shape (outputs, decoders,
urlhandlers, stats, replay_gain_status)."""

from __future__ import annotations

import re

from conftest import only_for
from mpdtest import TREE

# Issue 12's "must" list (noidle and the command_list_* words are never listed by MPD).
MUST = set("""status currentsong idle ping close password commands notcommands tagtypes play playid
pause stop next previous seek seekid seekcur setvol volume getvol repeat random single consume
clear add addid delete deleteid move moveid swap swapid shuffle playlistinfo playlistid plchanges
plchangesposid lsinfo listall listallinfo urlhandlers decoders outputs stats replay_gain_status
listplaylists find search update""".split())

# Every command name MPD 0.23.12 knows (its `commands` plus `notcommands` with a password set).
MPD_COMMANDS = set("""add addid addtagid albumart binarylimit channels clear clearerror cleartagid
close commands config consume count crossfade currentsong decoders delete deleteid delpartition
disableoutput enableoutput find findadd getfingerprint getvol idle kill list listall listallinfo
listfiles listmounts listneighbors listpartitions listplaylist listplaylistinfo listplaylists load
lsinfo mixrampdb mixrampdelay mount move moveid moveoutput newpartition next notcommands outputs
outputset partition password pause ping play playid playlist playlistadd playlistclear
playlistdelete playlistfind playlistid playlistinfo playlistmove playlistsearch plchanges
plchangesposid previous prio prioid random rangeid readcomments readmessages readpicture rename
repeat replay_gain_mode replay_gain_status rescan rm save search searchadd searchaddpl seek
seekcur seekid sendmessage setvol shuffle single stats status sticker stop subscribe swap swapid
tagtypes toggleoutput unmount unsubscribe update urlhandlers volume""".split())

# Not sent bare: they stop the server, end or block the connection.
NOT_SENT = {"kill", "close", "idle"}


def listed(c, command="commands"):
    lines = c.ok(command)
    assert all(l.startswith("command: ") for l in lines), lines
    return [l.split(": ", 1)[1] for l in lines]


def test_commands_lists_what_works(server):
    with server.authed() as c:
        commands = listed(c)
        assert commands == sorted(commands)
        assert MUST <= set(commands), sorted(MUST - set(commands))
        assert not {"noidle", "command_list_begin", "command_list_ok_begin", "command_list_end"} & set(commands)
        # Each listed command is known: sent bare, it is never `unknown command`.
        for name in commands:
            if name in NOT_SENT:
                continue
            reply = c.cmd(name)
            assert reply[-1] is not None, f"{name} closed the connection"
            assert not reply[-1].startswith("ACK [5@0] {} unknown command"), (name, reply)


@only_for("reel")
def test_unlisted_commands_are_unknown(server):
    with server.authed() as c:
        commands = set(listed(c))
        for name in sorted(MPD_COMMANDS - commands - NOT_SENT):
            assert c.cmd(name) == [f'ACK [5@0] {{}} unknown command "{name}"'], name
        assert c.cmd("ping") == ["OK"]


def test_fixed_replies(server):
    with server.authed() as c:
        outputs = c.ok("outputs")
        assert outputs, "no output"
        keys = [l.split(": ", 1)[0] for l in outputs]
        assert keys[:4] == ["outputid", "outputname", "plugin", "outputenabled"], outputs
        assert re.fullmatch(r"\d+", outputs[0].split(": ", 1)[1])
        assert outputs[3] in ("outputenabled: 0", "outputenabled: 1")

        decoders = c.ok("decoders")
        assert decoders[0].startswith("plugin: ")
        suffixes = {l.split(": ", 1)[1] for l in decoders if l.startswith("suffix: ")}
        assert {"flac", "mp3", "wav"} <= suffixes, suffixes
        for line in decoders:
            assert line.split(": ", 1)[0] in ("plugin", "suffix", "mime_type"), line

        handlers = c.ok("urlhandlers")
        assert all(re.fullmatch(r"handler: [a-z0-9+.-]+://", l) for l in handlers), handlers

        stats = c.ok("stats")
        assert [l.split(": ", 1)[0] for l in stats] == [
            "uptime", "playtime", "artists", "albums", "songs", "db_playtime", "db_update"]
        values = dict(l.split(": ", 1) for l in stats)
        assert all(re.fullmatch(r"\d+", v) for v in values.values()), stats
        assert values["songs"] == str(len(TREE))
        assert values["albums"] == "3"  # Meetings, 2025, Notes
        assert values["artists"] == "0"
        assert values["db_playtime"] == str(sum(r.seconds for r in TREE))

        assert c.ok("replay_gain_status") == ["replay_gain_mode: off"]
        assert c.ok("listplaylists") == []
        assert c.ok("notcommands") == []


def test_outputs_turn_off_and_on_with_the_output_idle_event(server):
    """enableoutput, disableoutput, toggleoutput on output 0, as MPD answers them (both targets)."""
    with server.authed() as idler, server.authed() as c:
        def enabled():
            return dict(l.split(": ", 1) for l in c.ok("outputs")[:4])["outputenabled"]

        assert enabled() == "1"
        idler.send("idle output\n")
        assert c.cmd("disableoutput 0") == ["OK"]
        assert idler.reply() == ["changed: output", "OK"]
        assert enabled() == "0"
        assert c.cmd("toggleoutput 0") == ["OK"]
        assert enabled() == "1"
        assert c.cmd("enableoutput 0") == ["OK"]  # already on: no error
        assert c.cmd("enableoutput 99") == ["ACK [50@0] {enableoutput} No such audio output"]
        assert c.cmd("disableoutput 99") == ["ACK [50@0] {disableoutput} No such audio output"]
        assert c.cmd("toggleoutput x") == ["ACK [2@0] {toggleoutput} Integer expected: x"]
        assert c.cmd("enableoutput") == ['ACK [2@0] {enableoutput} wrong number of arguments for "enableoutput"']
        assert enabled() == "1"


@only_for("reel")
def test_crossfade_other_than_0_is_refused_and_changes_nothing(server):
    """Reel does not crossfade: MPD would take `crossfade 5` (and show `xfade: 5`); Reel says
    so instead of pretending."""
    with server.authed() as c:
        assert c.cmd("crossfade 5") == [
            "ACK [2@0] {crossfade} crossfading is not supported: only 0 (no crossfade) is accepted"]
        assert "xfade" not in c.status()
        assert c.cmd("crossfade 0") == ["OK"]
