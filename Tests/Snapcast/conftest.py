"""Fixtures: tones (once per run), a private reeld with them in its queue, and a private
snapserver whose Reel stream is controlled by reel-snapcast. Only the processes a fixture
started are stopped."""

from __future__ import annotations

import shutil

import pytest

import snaptest
from snaptest import DEADLINE, Reeld, Snapserver, wait_for

# The queue: three tones, long enough never to end during a test.
TONES = [("first tone", 300, 440), ("second", 240, 550), ("third", 180, 660)]


def pytest_report_header(config):
    return f"reel build: {snaptest.build_dir()}; snapserver: {shutil.which('snapserver')}"


@pytest.fixture(scope="session")
def tones(tmp_path_factory):
    for tool in ("sox", "snapserver"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/install-deps --test")
    for binary in ("reeld", "reel", "reel-snapcast"):
        if not (snaptest.build_dir() / binary).exists():
            pytest.fail(f"{snaptest.build_dir() / binary} is not built (swift build, or set REEL_BUILD_DIR)")
    directory = tmp_path_factory.mktemp("tones")
    return [snaptest.make_tone(directory / f"{name}.flac", seconds, freq) for name, seconds, freq in TONES]


@pytest.fixture
def reeld(tmp_path, tones):
    daemon = Reeld(tmp_path / "reeld").start()
    for tone in tones:
        daemon.call("queue.add", {"file": str(tone)})
    yield daemon
    daemon.stop()


@pytest.fixture
def snapserver(tmp_path, reeld):
    """snapserver, started once reeld is up; yields it after the stream became controllable."""
    server = Snapserver(tmp_path / "snapserver", reeld.socket).start()
    with server.client() as c:
        wait_for(lambda: server.properties(c).get("canControl") is True,
                 what=f"the Reel stream to become controllable; log:\n{server.tail_log()}")
    yield server
    stop_and_check_plugin_exits(server)


def stop_and_check_plugin_exits(server: Snapserver):
    """Stops snapserver; its reel-snapcast must exit with it (its stdin closes)."""
    running = server.proc is not None and server.proc.poll() is None
    plugins = server.plugin_pids() if running else []
    assert plugins or not running, f"snapserver runs no reel-snapcast; log:\n{server.tail_log()}"
    server.stop()
    for pid in plugins:
        wait_for(lambda: snaptest.pid_gone(pid), what=f"reel-snapcast (pid {pid}) to exit after snapserver")
