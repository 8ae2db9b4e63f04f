"""reel-snapcast on its own, as snapserver runs it: requests on stdin, replies and pushes on
stdout. Bad input gets JSON-RPC errors and never ends the plugin; the end of stdin does."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time

import pytest

import snaptest
from snaptest import DEADLINE


class Plugin:
    def __init__(self, socket_path, *extra):
        env = {k: v for k, v in os.environ.items() if not k.startswith("REEL_")}
        self.proc = subprocess.Popen(
            [str(snaptest.build_dir() / "reel-snapcast"), "--stream=Reel", "--snapcast-port=1780",
             "--snapcast-host=127.0.0.1", f"--socket={socket_path}", *extra],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.buf = b""
        self.messages: list[dict] = []

    def send(self, text: str | bytes):
        self.proc.stdin.write(text if isinstance(text, bytes) else text.encode())
        self.proc.stdin.flush()

    def next_message(self, timeout=DEADLINE) -> dict:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            remaining = end - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(0, remaining))
            if not ready:
                raise AssertionError(f"no message from reel-snapcast within {timeout} s")
            data = os.read(self.proc.stdout.fileno(), 65536)
            if not data:
                raise AssertionError(f"reel-snapcast closed stdout; stderr: {self.proc.stderr.read()!r}")
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def wait(self, predicate, what):
        end = time.monotonic() + DEADLINE
        seen = []
        while time.monotonic() < end:
            message = self.next_message(end - time.monotonic())
            seen.append(message)
            if predicate(message):
                return message
        raise AssertionError(f"no {what} from reel-snapcast; saw {seen[-5:]!r}")

    def reply(self, id):
        return self.wait(lambda m: m.get("id") == id and "method" not in m, f"reply to {id}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=DEADLINE)


@pytest.fixture
def plugin(reeld):
    p = Plugin(reeld.socket)
    yield p
    p.close()


def test_ready_then_properties(plugin):
    plugin.wait(lambda m: m.get("method") == "Plugin.Stream.Ready", "Plugin.Stream.Ready")
    plugin.send('{"jsonrpc":"2.0","id":1,"method":"Plugin.Stream.Player.GetProperties"}\n')
    result = plugin.reply(1)["result"]
    assert result["canControl"] is True and result["playbackStatus"] == "stopped"
    assert result["metadata"] == {}, "nothing current before the first play"


def test_bad_input_gets_errors_and_the_plugin_goes_on(plugin):
    plugin.wait(lambda m: m.get("method") == "Plugin.Stream.Ready", "Plugin.Stream.Ready")
    cases = [
        (b"this is not json\n", None, -32700),
        (b'{"jsonrpc":"2.0","id":2,"method":"Plugin.Stream.Player.Dance"}\n', 2, -32601),
        (b'{"jsonrpc":"2.0","id":3,"method":"Plugin.Stream.Player.Control","params":{"command":"fly"}}\n', 3, -32602),
        (b'{"jsonrpc":"2.0","id":4,"method":"Plugin.Stream.Player.Control","params":{"command":"seek"}}\n', 4, -32602),
        (b'{"jsonrpc":"2.0","id":5,"method":"Plugin.Stream.Player.SetProperty","params":{"volume":"max"}}\n', 5, -32602),
        (b'{"jsonrpc":"2.0","id":6,"method":"Plugin.Stream.Player.SetProperty","params":[1]}\n', 6, -32602),
        (b'{"id":7,"method":"Plugin.Stream.Player.GetProperties"}\n', 7, -32600),
        (b'[1,2]\n', None, -32600),
        (b"\xff\xfe\n", None, -32700),
        (b"x" * (1 << 20) + b"y" * 100 + b"\n", None, -32600),
    ]
    for line, id, code in cases:
        plugin.send(line)
        message = plugin.next_message()
        assert message.get("id") == id and message["error"]["code"] == code, (line[:80], message)
        assert isinstance(message["error"].get("data"), str), "snapserver 0.26 reads data as a string"
    # A notification with bad params gets no reply; the next request is answered.
    plugin.send('{"jsonrpc":"2.0","method":"Plugin.Stream.Player.Control","params":{"command":"fly"}}\n')
    plugin.send('{"jsonrpc":"2.0","id":8,"method":"Plugin.Stream.Player.Control","params":{"command":"play"}}\n')
    assert plugin.reply(8)["result"] == "ok"
    assert plugin.proc.poll() is None


def test_exits_when_stdin_closes(plugin):
    plugin.wait(lambda m: m.get("method") == "Plugin.Stream.Ready", "Plugin.Stream.Ready")
    plugin.proc.stdin.close()
    assert plugin.proc.wait(timeout=DEADLINE) == 0


def test_without_reeld_it_answers_and_logs(tmp_path):
    p = Plugin(tmp_path / "nobody.sock")
    try:
        log = p.wait(lambda m: m.get("method") == "Plugin.Stream.Log", "a log line")
        assert log["params"]["severity"] == "warning"
        assert str(tmp_path / "nobody.sock") in log["params"]["message"]
        p.wait(lambda m: m.get("method") == "Plugin.Stream.Ready", "Plugin.Stream.Ready")
        p.send('{"jsonrpc":"2.0","id":1,"method":"Plugin.Stream.Player.GetProperties"}\n')
        result = p.reply(1)["result"]
        assert result["canControl"] is False and result["playbackStatus"] == "stopped"
        p.send('{"jsonrpc":"2.0","id":2,"method":"Plugin.Stream.Player.Control","params":{"command":"play"}}\n')
        assert "not connected to reeld" in p.reply(2)["error"]["message"]
        # Retrying with a delay, not spinning: well under a core.
        time.sleep(1)
        ticks = int(open(f"/proc/{p.proc.pid}/stat").read().rsplit(") ", 1)[1].split()[11])  # utime
        assert ticks < 50, f"{ticks} clock ticks of user time in about a second without reeld"
    finally:
        p.close()


def test_usage_errors(tmp_path):
    p = subprocess.run([str(snaptest.build_dir() / "reel-snapcast"), "--bogus"], capture_output=True, text=True,
                       timeout=DEADLINE, stdin=subprocess.DEVNULL)
    assert p.returncode == 2 and 'unknown option "--bogus"' in p.stderr
