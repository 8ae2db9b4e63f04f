"""What every Python test harness of Reel's shares (Tests/MPDClients, Tests/Snapcast,
Tests/Streams, Tests/WebPage): where the build is, waiting for a condition against a deadline,
a free loopback port, stopping a process the harness started.

A harness adds this folder to `sys.path` and imports what it needs:

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "PythonSupport"))
    from testkit import build_dir, free_port, stop_process, waiter
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def build_dir() -> Path:
    """The reeld and reel under test: REEL_BUILD_DIR, or the debug build."""
    return Path(os.environ.get("REEL_BUILD_DIR", REPO / ".build" / "debug"))


def waiter(default_timeout: float, interval: float = 0.05):
    """A `wait_for(predicate, timeout=default_timeout, interval=interval, what=...)`: polls
    `predicate` until it returns a truthy value, which is returned; a predicate that raises
    AssertionError or OSError (a server not up yet) is polled again. At the deadline it fails
    with what was waited for and the last result. Every wait in the suites is such a poll:
    the timeouts are upper bounds, never expectations."""
    def wait_for(predicate, timeout=default_timeout, interval=interval, what="condition"):
        end = time.monotonic() + timeout
        last = None
        while True:
            try:
                last = predicate()
            except (AssertionError, OSError) as error:
                last = error
            else:
                if last:
                    return last
            if time.monotonic() > end:
                raise AssertionError(f"timed out after {timeout} s waiting for {what}; last: {last!r}")
            time.sleep(interval)
    return wait_for


def free_port() -> int:
    """A TCP port free on loopback now (never MPD's 6600, which a test may mean literally)."""
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port != 6600:
            return port


def stop_process(proc: subprocess.Popen | None, timeout: float = 20):
    """SIGTERM to a process the harness started (by its pid, never by name), SIGKILL if it has
    not exited within `timeout`."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=timeout)
