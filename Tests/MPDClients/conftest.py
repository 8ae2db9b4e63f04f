"""Fixtures: the test audio (once per run) and a private server per test.

REEL_MPD_TARGET=reel (default) runs reeld from REEL_BUILD_DIR (default <repo>/.build/debug);
REEL_MPD_TARGET=mpd runs Debian's mpd. Each server gets its own temporary directory, a free TCP
port on 127.0.0.1 and a Unix socket; only the process the fixture started is stopped.
"""

from __future__ import annotations

import resource
import shutil

import pytest

import mpdtest


def pytest_configure(config):
    # 1,000 idle clients need more than the usual 1,024 descriptors, in this process and in the
    # servers it starts (they inherit the limit).
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 4096 if hard == resource.RLIM_INFINITY else min(hard, 4096)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def pytest_report_header(config):
    return f"MPD target: {mpdtest.target()} (REEL_MPD_TARGET), reel build: {mpdtest.reel_build_dir()}"


@pytest.fixture(scope="session")
def media(tmp_path_factory):
    for tool in ("sox", "lame"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/install-deps --test")
    return mpdtest.make_media(tmp_path_factory.mktemp("media"))


@pytest.fixture(scope="session")
def music(tmp_path_factory):
    """The generated music collection (collection.py), made once per run; tests that change it
    copy it first."""
    import collection
    root = tmp_path_factory.mktemp("music") / "Music"
    collection.make_collection(root)
    return root


@pytest.fixture
def make_server(media, tmp_path):
    """Starts servers (kind 'mpd' or 'reel', default the target) and stops them after the test."""
    started = []

    def make(kind: str | None = None, password: str | None = None, music=None, songs: int | None = None):
        kind = kind or mpdtest.target()
        if kind == "mpd" and shutil.which("mpd") is None:
            pytest.fail("mpd is missing: run scripts/install-deps --test")
        if kind == "reel":
            reason = mpdtest.reeld_supports_mpd()
            if reason:
                pytest.fail(f"cannot test Reel: {reason} (build it, or set REEL_BUILD_DIR)")
        server = mpdtest.start_server(kind, tmp_path / f"{kind}{len(started)}", media, password, music, songs)
        started.append(server)
        return server

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def server(make_server):
    return make_server()


def only_for(kind: str):
    """Marks a test that only makes sense against one server kind."""
    return pytest.mark.skipif(mpdtest.target() != kind, reason=f"only against {kind}")
