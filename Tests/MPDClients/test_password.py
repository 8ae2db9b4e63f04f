"""A server with a password: before it, only what MPD allows without permission works
(mpd.conf `password "pw@read,add,control,admin"` and no default_permissions; reeld
`--mpd-password pw`)."""

from __future__ import annotations

import subprocess

import mpd
import pytest

from mpdtest import DEADLINE

PASSWORD = "pw"
# What MPD 0.23 allows without any permission. `binarylimit` is in it on MPD; a server that does
# not implement binarylimit leaves it out of `commands` altogether.
UNPRIVILEGED = {"close", "commands", "notcommands", "password", "ping", "tagtypes"}
OPTIONAL_UNPRIVILEGED = {"binarylimit"}


@pytest.fixture
def locked(make_server):
    return make_server(password=PASSWORD)


def names(lines):
    assert all(l.startswith("command: ") for l in lines), lines
    return [l[len("command: "):] for l in lines]


def test_before_the_password(locked):
    with locked.raw() as c:
        assert c.cmd("ping") == ["OK"]
        for command in ("status", "play", "idle", "lsinfo", "currentsong", "setvol 50", "add Recordings",
                        "update", "playlistinfo", "stats", "outputs"):
            name = command.split()[0]
            assert c.cmd(command) == [f'ACK [4@0] {{{name}}} you don\'t have permission for "{name}"'], command
        allowed = names(c.ok("commands"))
        assert allowed == sorted(allowed)
        assert UNPRIVILEGED <= set(allowed) <= UNPRIVILEGED | OPTIONAL_UNPRIVILEGED, allowed
        denied = names(c.ok("notcommands"))
        assert denied == sorted(denied)
        assert {"status", "play", "pause", "idle", "add", "setvol", "lsinfo", "currentsong"} <= set(denied)
        assert not set(denied) & set(allowed)
        assert c.ok("tagtypes")  # allowed and not empty

        # Wrong passwords; the connection stays usable.
        assert c.cmd("password wrong") == ["ACK [3@0] {password} incorrect password"]
        assert c.cmd("password") == ['ACK [2@0] {password} wrong number of arguments for "password"']
        assert c.cmd("password a b") == ['ACK [2@0] {password} wrong number of arguments for "password"']
        assert c.cmd("status") == ['ACK [4@0] {status} you don\'t have permission for "status"']

        # A command list stops at the first refused command, with its index.
        c.send("command_list_begin\nping\nstatus\nping\ncommand_list_end\n")
        assert c.reply() == ['ACK [4@1] {status} you don\'t have permission for "status"']


def test_after_the_password(locked):
    with locked.raw() as c:
        assert c.cmd(f"password {PASSWORD}") == ["OK"]
        assert c.status()["state"] == "stop"
        allowed = set(names(c.ok("commands")))
        assert {"status", "play", "idle", "add", "setvol", "password", "ping"} <= allowed
        assert c.ok("notcommands") == []
        c.ok("add Recordings/Notes")
        # A wrong password later does not take the permission away (as MPD).
        assert c.cmd("password wrong") == ["ACK [3@0] {password} incorrect password"]
        assert c.status()["playlistlength"] == "2"
    # Permissions belong to the connection.
    with locked.raw() as c:
        assert c.cmd("status") == ['ACK [4@0] {status} you don\'t have permission for "status"']


def test_clients_with_the_password(locked):
    # mpc takes it from MPD_HOST=password@host.
    out = locked.mpc("status").stdout
    assert "volume:" in out
    env = locked.mpc_env()
    env["MPD_HOST"] = f"wrong@{locked.host}"
    p = subprocess.run(["mpc", "status"], env=env, capture_output=True, text=True, timeout=DEADLINE)
    assert p.returncode == 1 and "incorrect password" in p.stderr, (p.returncode, p.stderr)
    env["MPD_HOST"] = locked.host
    p = subprocess.run(["mpc", "add", "Recordings"], env=env, capture_output=True, text=True,
                       timeout=DEADLINE)
    assert p.returncode == 1 and "you don't have permission for \"add\"" in p.stderr, p.stderr

    # python-mpd2, as Home Assistant: connect, then password.
    client = mpd.MPDClient()
    client.timeout = DEADLINE
    client.connect(locked.host, locked.port)
    try:
        with pytest.raises(mpd.CommandError) as error:
            client.status()
        assert error.value.errno == mpd.FailureResponseCode.PERMISSION
        with pytest.raises(mpd.CommandError) as error:
            client.password("nope")
        assert error.value.errno == mpd.FailureResponseCode.PASSWORD
        client.password(PASSWORD)
        assert client.status()["state"] == "stop"
    finally:
        client.disconnect()
