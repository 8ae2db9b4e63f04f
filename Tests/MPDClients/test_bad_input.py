"""Bad input against the server under test: malformed lines, over-long lines, a 2 MiB command
list, 1,000 idle clients. Each case checks MPD's exact behaviour (MPD-REPLIES.md) and that
other clients are unaffected."""

from __future__ import annotations

import selectors
import socket
import time

import pytest

from mpdtest import DEADLINE, Raw, wait_for


def assert_healthy(server):
    """Another client still gets its replies."""
    with server.authed() as c:
        assert c.cmd("ping") == ["OK"]
        assert c.status()["state"] in ("stop", "play", "pause")


@pytest.mark.parametrize("line", [b"Ping\n", b"1ping\n", b"\n", b" ping\n", b"_ping\n", b"\tping\n"])
def test_lines_that_close_without_a_reply(server, line):
    with server.authed() as c:
        c.send(line)
        assert c.closed_within()
    assert_healthy(server)


def test_invalid_word_character_acks_then_closes(server):
    with server.authed() as c:
        c.send(b"pi-ng\n")
        assert c.readline() == 'ACK [5@0] {} Invalid word character'
        assert c.closed_within()
    assert_healthy(server)


TOKENIZER_ACKS = [
    (b'ping "unterminated\n', "ACK [5@0] {} Missing closing '\"'"),
    (b'find title "idea"x\n', "ACK [5@0] {} Space expected after closing '\"'"),
    (b"find title 'idea'\n", "ACK [5@0] {} Invalid unquoted character"),
    (b'ping \\"\n', "ACK [5@0] {} Invalid unquoted character"),
    (b"foo\n", 'ACK [5@0] {} unknown command "foo"'),
    (b'foo "bar" baz\n', 'ACK [5@0] {} unknown command "foo"'),
    (b"ping x\n", 'ACK [2@0] {ping} wrong number of arguments for "ping"'),
]


def test_tokenizer_errors_keep_the_connection(server):
    with server.authed() as c:
        for line, ack in TOKENIZER_ACKS:
            c.send(line)
            assert c.reply() == [ack], line
        # Runs of spaces and tabs, trailing blanks, CR LF, escapes.
        assert c.cmd("ping \t \r") == ["OK"]
        found = c.ok('find  title\t"\\i\\d\\e\\a"')
        assert "file: Recordings/Notes/idea.flac" in found
        assert c.ok('find title "id\\"ea"') == []
        assert c.cmd("ping") == ["OK"]


def test_several_commands_in_one_write(server):
    with server.authed() as c:
        c.send(b"ping\nping\nstatus x\nping\nsetvol 42\ngetvol\n")
        assert c.reply() == ["OK"]
        assert c.reply() == ["OK"]
        assert c.reply() == ['ACK [2@0] {status} wrong number of arguments for "status"']
        assert c.reply() == ["OK"]
        assert c.reply() == ["OK"]
        assert c.reply() == ["volume: 42", "OK"]


def test_long_lines(server):
    with server.authed() as c:
        # A line of 8192 bytes (with its newline) is still read and answered.
        line = b"ping " + b"x" * (8192 - 6) + b"\n"
        assert len(line) == 8192
        c.send(line)
        assert c.reply() == ['ACK [2@0] {ping} wrong number of arguments for "ping"']
        # A 5,000-letter unknown command is named whole.
        c.send(b"p" + b"i" * 4999 + b"\n")
        assert c.reply() == ['ACK [5@0] {} unknown command "p' + "i" * 4999 + '"']
    for size in (8193, 100_000, 1 << 20):
        with server.authed() as c:
            try:
                c.send(b"find title " + b"x" * (size - 12) + b"\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # closed while we were still writing: that is the expected outcome
            assert c.closed_within(), size
        assert_healthy(server)


LIST_MAX = 2048 * 1024  # MPD's max_command_list_size default, in bytes


def send_list(server, count: int) -> list:
    """Sends a command_list_begin with `count` pings (5 bytes each with the newline)."""
    data = b"command_list_begin\n" + b"ping\n" * count + b"command_list_end\n"
    with server.authed() as c:
        try:
            c.send(data)
        except (BrokenPipeError, ConnectionResetError):
            pass
        return c.reply()


def test_command_list_of_2_mib(server):
    under = LIST_MAX // 5  # 419,430 pings: 2,097,150 bytes
    assert send_list(server, under) == ["OK"]
    assert send_list(server, under + 1) == [None]  # over 2 MiB: closed, no reply
    assert_healthy(server)
    # The failing index of a long list.
    with server.authed() as c:
        c.send(b"command_list_ok_begin\n" + b"ping\n" * 1000 + b"foo\nping\ncommand_list_end\n")
        reply = c.reply()
        assert reply[:-1] == ["list_OK"] * 1000
        assert reply[-1] == 'ACK [5@1000] {} unknown command "foo"'


def test_1000_idle_clients(server):
    count = 1000
    selector = selectors.DefaultSelector()
    clients: list[socket.socket] = []
    try:
        # One at a time, each waiting for its greeting: a burst of connects would overflow a
        # small listen backlog and wait for SYN retransmits (MPD's does, 1 s each).
        for _ in range(count):
            s = socket.create_connection(server.address, timeout=DEADLINE)
            clients.append(s)
            greeting = b""
            while not greeting.endswith(b"\n"):
                data = s.recv(100)
                assert data, "closed before the greeting"
                greeting += data
            assert greeting.startswith(b"OK MPD "), greeting
            if server.password:
                s.sendall(f"password {server.password}\n".encode())
                assert s.recv(100) == b"OK\n"
            s.sendall(b"idle\n")

        # Other clients still get their replies, and promptly.
        with server.authed() as c:
            c.cmd("ping")
            for _ in range(20):
                start = time.monotonic()
                assert c.cmd("ping", timeout=5) == ["OK"]
                assert time.monotonic() - start < 2.0, "a ping took over 2 s with 1,000 idle clients"
            c.ok("setvol 37")

        # One change wakes every idle client.
        received = {s: b"" for s in clients}
        for s in clients:
            s.setblocking(False)
            selector.register(s, selectors.EVENT_READ)
        done = 0
        end = time.monotonic() + 3 * DEADLINE
        while done < count:
            assert time.monotonic() < end, f"only {done} of {count} idle clients were woken"
            for key, _ in selector.select(timeout=1):
                s = key.fileobj
                data = s.recv(4096)
                assert data, "an idle client was disconnected"
                received[s] += data
                if received[s].endswith(b"OK\n"):
                    assert received[s] == b"changed: mixer\nOK\n", received[s]
                    selector.unregister(s)
                    done += 1
    finally:
        selector.close()
        for s in clients:
            s.close()
    assert_healthy(server)
