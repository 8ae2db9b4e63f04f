"""mpc driving a whole listening run: exit codes and output checked.

Reel's null device is not paced, so a song may end quickly there: every check of the player's
state is made after `pause`, and waits are polls against a deadline.
"""

from __future__ import annotations

import re
import subprocess
import threading

import pytest

from mpdtest import DEADLINE, LISTALL_ORDER, TREE, by_name, wait_for

TITLES_IN_ORDER = [u.rsplit("/", 1)[-1].rsplit(".", 1)[0] for u in LISTALL_ORDER]
OPTIONS_RE = re.compile(
    r"^volume:\s*(?P<volume>\d+|n/a)%?\s+repeat: (?P<repeat>on|off)\s+random: (?P<random>on|off)\s+"
    r"single: (?P<single>on|off|once)\s+consume: (?P<consume>on|off)$")
STATE_RE = re.compile(r"^\[(?P<state>playing|paused)\]\s+#(?P<pos>\d+)/(?P<len>\d+)\s+"
                      r"(?P<elapsed>\d+:\d\d)/(?P<total>\d+:\d\d) \((?P<percent>\d+)%\)$")


def parse_status(out: str) -> dict:
    """mpc's three-line status: title, [state] #pos/len elapsed/total (p%), options line."""
    lines = out.splitlines()
    options = OPTIONS_RE.match(lines[-1])
    assert options, f"unexpected options line in {out!r}"
    result = dict(options.groupdict(), state="stopped", title=None)
    if len(lines) == 3:
        state = STATE_RE.match(lines[1])
        assert state, f"unexpected state line in {out!r}"
        result.update(state.groupdict(), title=lines[0])
    else:
        assert len(lines) == 1, f"unexpected status {out!r}"
    return result


def seconds(mmss: str) -> int:
    m, s = mmss.split(":")
    return int(m) * 60 + int(s)


class LineReader:
    """Collects a background process's stdout lines in a thread; read with a deadline."""

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.lines: list[str] = []
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        for line in self.proc.stdout:
            with self.lock:
                self.lines.append(line.rstrip("\n"))

    def snapshot(self) -> list[str]:
        with self.lock:
            return list(self.lines)

    def wait_for_line(self, line: str, start=0) -> int:
        """Waits until `line` appears at or after index `start`; returns the index after it."""
        def seen():
            lines = self.snapshot()
            for i in range(start, len(lines)):
                if lines[i] == line:
                    return i + 1
            return None
        return wait_for(seen, what=f"{line!r} from {self.proc.args} (got {self.snapshot()!r})")


def test_listening_run(server):
    mpc = server.mpc

    # The empty server.
    status = parse_status(mpc("status").stdout)
    assert status["state"] == "stopped"
    assert mpc("playlist").stdout == ""
    assert mpc("current").stdout == ""

    # Browsing.
    assert mpc("ls").stdout.splitlines() == ["Recordings"]
    assert mpc("ls", "Recordings").stdout.splitlines() == ["Recordings/Meetings", "Recordings/Notes"]
    assert mpc("ls", "Recordings/Meetings").stdout.splitlines() == [
        "Recordings/Meetings/Retro.mp3", "Recordings/Meetings/Standup.flac", "Recordings/Meetings/2025"]
    assert mpc("listall").stdout.splitlines() == LISTALL_ORDER
    assert mpc("listall", "Recordings/Notes").stdout.splitlines() == LISTALL_ORDER[3:]
    assert mpc("search", "title", "idea").stdout.splitlines() == ["Recordings/Notes/idea.flac"]
    assert mpc("search", "album", "notes").stdout.splitlines() == LISTALL_ORDER[3:]
    assert mpc("search", "title", "nothing-like-this").stdout == ""

    # Queue the whole tree.
    assert mpc("add", "Recordings").returncode == 0
    assert mpc("playlist").stdout.splitlines() == TITLES_IN_ORDER
    assert mpc("playlist", "-f", "%file%").stdout.splitlines() == LISTALL_ORDER

    # Play, then pause at once: the state is checked paused.
    played = mpc("play", "2")
    assert played.stdout.splitlines()[0] == "Standup", played.stdout
    paused = parse_status(mpc("pause").stdout)
    assert paused["state"] == "paused"
    assert paused["title"] == "Standup" and paused["pos"] == "2" and paused["len"] == "5"
    assert seconds(paused["total"]) == by_name("Standup").seconds
    assert mpc("current").stdout == "Standup\n"

    # Seek while paused: mpc prints the new position.
    sought = parse_status(mpc("seek", "1:30").stdout)
    assert sought["state"] == "paused" and sought["elapsed"] == "1:30", sought
    sought = parse_status(mpc("seek", "+10").stdout)
    assert sought["elapsed"] == "1:40", sought
    sought = parse_status(mpc("seek", "50%").stdout)
    assert sought["elapsed"] == "5:00", sought

    # Volume.
    assert parse_status(mpc("volume", "40").stdout)["volume"] == "40"
    assert parse_status(mpc("volume", "+15").stdout)["volume"] == "55"
    assert parse_status(mpc("volume", "-5").stdout)["volume"] == "50"
    assert mpc("volume").stdout == "volume: 50%\n"

    # next plays the next song (MPD's `next` starts playback even from pause); pause again.
    after_next = mpc("next").stdout.splitlines()
    assert after_next[0] == "Kickoff", after_next
    status = parse_status(mpc("pause").stdout)
    assert status["state"] == "paused" and status["title"] == "Kickoff" and status["pos"] == "3"

    # Options.
    assert parse_status(mpc("repeat", "on").stdout)["repeat"] == "on"
    assert parse_status(mpc("random", "on").stdout)["random"] == "on"
    status = parse_status(mpc("status").stdout)
    assert (status["repeat"], status["random"], status["state"]) == ("on", "on", "paused")
    assert parse_status(mpc("repeat").stdout)["repeat"] == "off"  # toggles
    assert parse_status(mpc("random", "off").stdout)["random"] == "off"

    # Edit the queue: delete and move, checked through the playlist.
    assert mpc("del", "1").returncode == 0  # Retro
    assert mpc("playlist").stdout.splitlines() == ["Standup", "Kickoff", "idea", "Memo"]
    assert mpc("move", "4", "1").returncode == 0
    assert mpc("playlist").stdout.splitlines() == ["Memo", "Standup", "Kickoff", "idea"]
    # The paused song kept its place in the moved queue.
    assert mpc("current").stdout == "Kickoff\n"

    # Errors: mpc exits 1 with MPD's message.
    for args, message in [
        (("play", "99"), "MPD error: Bad song index"),
        (("add", "Recordings/Nope"), "error adding Recordings/Nope: No such directory"),
        (("volume", "200"), "MPD error: Number too large: 200"),
        (("move", "9", "1"), "MPD error: Bad song index"),
    ]:
        failed = mpc(*args, check=False)
        assert failed.returncode == 1, (args, failed)
        assert message in failed.stderr, (args, failed.stderr)

    # clear empties the queue and stops.
    cleared = mpc("clear")
    assert parse_status(cleared.stdout)["state"] == "stopped"
    assert mpc("playlist").stdout == ""
    assert mpc("current").stdout == ""
    failed = mpc("next", check=False)
    assert failed.returncode == 1 and "MPD error: Not playing" in failed.stderr


def test_idle_and_idleloop(server):
    mpc = server.mpc
    env = server.mpc_env()

    loop = subprocess.Popen(["mpc", "idleloop"], env=env, stdout=subprocess.PIPE, text=True)
    try:
        lines = LineReader(loop)
        # `mpc idle` waits for one event, prints its subsystem and exits 0.
        once = subprocess.Popen(["mpc", "idle", "options"], env=env, stdout=subprocess.PIPE, text=True)
        try:
            # mpc connects asynchronously: keep changing options until it has seen one.
            def idle_returned():
                mpc("repeat")  # toggles: every call is a change
                return once.poll() is not None or None
            wait_for(idle_returned, interval=0.2, what="mpc idle options to return")
            out, _ = once.communicate(timeout=DEADLINE)
            assert once.returncode == 0 and out == "options\n", (once.returncode, out)
        finally:
            if once.poll() is None:
                once.kill()
                once.wait()

        at = lines.wait_for_line("options")
        mpc("add", "Recordings/Notes")
        at = lines.wait_for_line("playlist", at)
        mpc("volume", "30")
        at = lines.wait_for_line("mixer", at)
        mpc("play")
        mpc("pause")
        at = lines.wait_for_line("player", at)
        mpc("clear")
        lines.wait_for_line("playlist", at)
        assert loop.poll() is None, "idleloop ended by itself"
        assert set(lines.snapshot()) <= {"options", "playlist", "mixer", "player"}, lines.snapshot()
    finally:
        loop.kill()
        loop.wait(timeout=DEADLINE)


def test_searchplay_prio_crossfade_clearerror_and_messages(server):
    """mpc's commands over playlistsearch, prio, crossfade, clearerror and the message channels.
    Repeat and single keep the song searchplay started playing on Reel's unpaced device."""
    mpc = server.mpc
    assert mpc("add", "Recordings").returncode == 0
    mpc("repeat", "on")
    mpc("single", "on")
    played = mpc("searchplay", "idea")
    assert played.stdout.splitlines()[0] == "idea", played.stdout
    assert parse_status(mpc("pause").stdout)["pos"] == "4"
    missing = mpc("searchplay", "nothing-like-this", check=False)
    assert missing.returncode == 1 and "contains no matching song" in missing.stderr, missing

    assert mpc("prio", "7", "1").returncode == 0
    assert mpc("clearerror").returncode == 0
    assert mpc("crossfade", "0").returncode == 0
    assert mpc("crossfade").stdout == "crossfade: 0\n"

    # Messages between two clients: mpc waitmessage gets what mpc sendmessage sends.
    assert mpc("channels").stdout == ""
    failed = mpc("sendmessage", "chat", "hello", check=False)
    assert failed.returncode == 1 and "nobody is subscribed to this channel" in failed.stderr, failed
    waiting = subprocess.Popen(["mpc", "waitmessage", "chat"], env=server.mpc_env(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_for(lambda: mpc("channels").stdout == "chat\n", what="the waiting client's channel")
        assert mpc("sendmessage", "chat", "hello there").returncode == 0
        out, err = waiting.communicate(timeout=DEADLINE)
        assert waiting.returncode == 0, err
        assert out == "hello there\n", out
    finally:
        if waiting.poll() is None:
            waiting.kill()
            waiting.wait()
    wait_for(lambda: mpc("channels").stdout == "", what="the channel to go with its client")
