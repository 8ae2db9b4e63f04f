"""Fixtures: the test audio (once per run), a private reeld per test, one headless Chromium per run."""

from __future__ import annotations

import shutil

import pytest

import webtest


def pytest_report_header(config):
    pace = "paced (PulseAudio)" if webtest.paced() else "not paced (ALSA null)"
    return f"reel build: {webtest.reel_build_dir()}, playback {pace}, screenshots: {webtest.SCREENSHOTS}"


@pytest.fixture(scope="session")
def media(tmp_path_factory):
    if shutil.which("sox") is None:
        pytest.fail("sox is missing: run scripts/install-deps --test")
    return webtest.make_media(tmp_path_factory.mktemp("media"))


@pytest.fixture(scope="session")
def driver():
    for path in ("/usr/bin/chromium", "/usr/bin/chromedriver"):
        if not shutil.which(path):
            pytest.fail(f"{path} is missing: run scripts/install-deps --test (chromium, chromium-driver)")
    d = webtest.make_driver()
    yield d
    d.quit()


@pytest.fixture
def reel(media, tmp_path):
    reason = webtest.reeld_serves_http()
    if reason:
        pytest.fail(f"cannot test the page: {reason} (build it, or set REEL_BUILD_DIR)")
    server = webtest.Reel(tmp_path / "reel", media)
    try:
        yield server.start()
    finally:
        server.close()


@pytest.fixture
def page(driver, reel):
    p = webtest.Page(driver, reel)
    yield p
    driver.get("about:blank")  # leaves the page before its reeld stops


def needs_pacing():
    return pytest.mark.skipif(not webtest.paced(), reason="needs real-time playback: set PULSE_SERVER (scripts/test-web-page starts one)")
