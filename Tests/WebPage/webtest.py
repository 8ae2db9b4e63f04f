"""Helpers for the web page's tests: test audio, a private reeld serving the page, a real Chromium.

reeld runs from REEL_BUILD_DIR (default <repo>/.build/debug) with its own data directory, Unix
socket and a free TCP port for --http-listen; only the process a test started is stopped.
Chromium is Debian's (/usr/bin/chromium, /usr/bin/chromedriver), headless, driven by Selenium
with SE_OFFLINE=true so that it never downloads a driver.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "PythonSupport"))
from testkit import REPO, build_dir, free_port, waiter  # noqa: E402


# Every wait is a poll against a deadline; an upper bound, not an expectation.
DEADLINE = float(os.environ.get("REEL_WEB_TEST_DEADLINE", "20"))

SCREENSHOTS = Path(os.environ.get("REEL_WEB_SCREENSHOTS", REPO / ".build" / "test-screenshots"))
# A phone is emulated (Chromium's device metrics: a 390×844 CSS px viewport at 3 device pixels
# per px, a mobile viewport, touch and no hover), since a window cannot be narrower than 500 px.
PHONE = (390, 844)
PHONE_PIXEL_RATIO = 3
DESKTOP = (1280, 800)


wait_for = waiter(DEADLINE, interval=0.05)


# ---------------------------------------------------------------------------------------------
# Test audio: a tone for the first 20 s, then silence (small files that last two minutes).

TREE = {
    "/Meetings": ["Standup", "Retro", "Planning"],
    "/Meetings/2025": ["Kickoff"],
    "/Notes": [],
}


def make_media(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for i, freq in enumerate((440, 550, 660, 330)):
        path = root / f"tone{i}.flac"
        subprocess.run(["sox", "-n", "-r", "22050", "-c", "1", "-b", "16", str(path),
                        "synth", "20", "sine", str(freq), "vol", "0.5", "pad", "0", "100"], check=True)
    return root



def paced() -> bool:
    """Whether playback runs in real time (a PulseAudio server to play to)."""
    return bool(os.environ.get("PULSE_SERVER"))


reel_build_dir = build_dir


def reeld_serves_http() -> str | None:
    """None if reeld is built and knows --http-listen, else why the page cannot be tested."""
    reeld = reel_build_dir() / "reeld"
    if not reeld.exists():
        return f"{reeld} is not built"
    out = subprocess.run([str(reeld), "--help"], capture_output=True, text=True, timeout=30)
    if "--http-listen" not in out.stdout + out.stderr:
        return f"{reeld} has no --http-listen"
    return None


# ---------------------------------------------------------------------------------------------
# reeld

class Reel:
    def __init__(self, workdir: Path, media: Path):
        self.dir = workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self.media = media
        self.port = free_port()
        self.socket = self.dir / "reel.sock"
        self.data = self.dir / "data"
        self.log = self.dir / "reeld.log"
        build = reel_build_dir()
        self.reeld = build / "reeld"
        self.reel_bin = build / "reel"
        self.proc: subprocess.Popen | None = None
        self.music_dirs: list[Path] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, populate=True):
        device = "pulse" if paced() else "null"
        args = [str(self.reeld), "--socket", str(self.socket), "--data-dir", str(self.data),
                "--device", device, "--capture-device", device, "--mpd-listen", "none"]
        args += ["--http-listen", f"127.0.0.1:{self.port}"]
        env = {k: v for k, v in os.environ.items() if not k.startswith("REEL_")}
        env["REEL_CONFIG"] = "/dev/null"
        if self.music_dirs:
            env["REEL_MUSIC_DIRS"] = ":".join(str(d) for d in self.music_dirs)
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL)
        wait_for(lambda: self._alive() and self.socket.exists() and self._answers(),
                 what=f"reeld to answer on {self.socket}; log:\n{self.tail_log()}")
        wait_for(self._http_up, what=f"the page on {self.url}; log:\n{self.tail_log()}")
        if populate:
            for folder, names in TREE.items():
                self.reel("mkdir", folder)
                for i, name in enumerate(names):
                    self.reel("import", str(self.media / f"tone{i}.flac"), folder, "--name", name)
        return self

    def _alive(self):
        if self.proc.poll() is not None:
            raise RuntimeError(f"reeld exited with {self.proc.returncode}; log:\n{self.tail_log()}")
        return True

    def _answers(self):
        try:
            self.rpc("daemon.info")
            return True
        except OSError:
            return False

    def _http_up(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=2):
                return True
        except OSError:
            return False

    def stop(self):
        """Stops the reeld this object started (by its pid), and only that."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)

    def close(self):
        self.stop()

    def tail_log(self, n=30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def reel(self, *args, check=True) -> str:
        p = subprocess.run([str(self.reel_bin), *args[:1], "--socket", str(self.socket), *args[1:]],
                           capture_output=True, text=True, timeout=DEADLINE)
        if check and p.returncode != 0:
            raise AssertionError(f"reel {' '.join(args)} exited {p.returncode}: {p.stderr}{p.stdout}")
        return p.stdout

    def rpc(self, method, params=None):
        """One request on a new connection to the Unix socket; the result, or AssertionError."""
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(DEADLINE)
            s.connect(str(self.socket))
            request = {"jsonrpc": "2.0", "id": 1, "method": method}
            if params:
                request["params"] = params
            s.sendall(json.dumps(request).encode() + b"\n")
            buf = b""
            while b"\n" not in buf:
                chunk = s.recv(65536)
                if not chunk:
                    break
                buf += chunk
        reply = json.loads(buf)
        if "error" in reply:
            raise AssertionError(f"{method}: {reply['error']}")
        return reply["result"]

    def status(self) -> dict:
        return json.loads(self.reel("status", "--json"))


# ---------------------------------------------------------------------------------------------
# Chromium

def make_driver():
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--autoplay-policy=no-user-gesture-required", f"--window-size={DESKTOP[0]},{DESKTOP[1]}"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Page:
    """The page in one browser tab, with the few moves the tests make."""

    def __init__(self, driver, reel: Reel):
        self.d = driver
        self.reel = reel
        self.size = None

    def emulate(self, size):
        """PHONE: Chromium's mobile emulation, a 390×844 viewport at 3 device pixels per px
        with touch (so no hover); another size: a desktop viewport of exactly that size."""
        self.size = size
        phone = size == PHONE
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": size[0], "height": size[1], "deviceScaleFactor": PHONE_PIXEL_RATIO if phone else 1,
            "mobile": phone})
        self.d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 5})

    def open(self, fragment="", size=PHONE):
        self.emulate(size)
        self.d.get("about:blank")
        self.d.get(self.reel.url + "/" + fragment)
        wait_for(lambda: self.js("return document.body.dataset.ready === '1'"), what="the first player state")
        if fragment.startswith("#library"):
            path = fragment.partition(":")[2] or "/"
            wait_for(lambda: self.folder() == path, what=f"the library to show {path}")
        return self

    def js(self, script, *args):
        return self.d.execute_script(script, *args)

    def el(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_element(By.CSS_SELECTOR, css)

    def els(self, css):
        from selenium.webdriver.common.by import By
        return self.d.find_elements(By.CSS_SELECTOR, css)

    def text(self, css) -> str:
        return self.js("const e = document.querySelector(arguments[0]); return e ? e.textContent : null", css)

    def tab(self, name):
        self.el(f'[data-tab="{name}"]').click()
        wait_for(lambda: self.js(f"return !document.getElementById('{name}').hidden"), what=f"the {name} tab")

    def folder(self) -> str:
        return self.js("return document.body.dataset.folder || ''")

    def item_names(self, css="#items") -> list[str]:
        return self.js(f"return [...document.querySelectorAll('{css} > li')].map(li => li.dataset.name)")

    def open_folder(self, path):
        self.js("location.hash = arguments[0]", "#library:" + path)
        wait_for(lambda: self.folder() == path, what=f"the library to show {path}")

    def row(self, name, css="#items"):
        rows = [r for r in self.els(f"{css} > li") if r.get_attribute("data-name") == name]
        assert rows, f"no row {name!r} in {css}: {self.item_names(css)}"
        return rows[0]

    def action(self, name, label, css="#items"):
        """Clicks `label` in the actions of the row `name` (opening them with its ⋯ button first)."""
        if not self.row(name, css).find_elements("css selector", ".actions"):
            self.row(name, css).find_element("css selector", ".more-button").click()
        buttons = [b for b in self.row(name, css).find_elements("css selector", ".actions > *") if b.text == label]
        assert buttons, f"no action {label!r} for {name!r}"
        buttons[0].click()

    def progress_fraction(self, redraw=False) -> float:
        """The bar's fill as drawn; with `redraw`, drawn first for this instant (the page draws
        on animation frames, which a loaded machine's browser may hold back for some 100 ms)."""
        return self.js(("drawProgress();" if redraw else "") +
                       """const f = document.getElementById('progress-fill').getBoundingClientRect();
                          const t = document.querySelector('.progress-track').getBoundingClientRect();
                          return f.width / t.width""")

    def answer_dialog(self, text=None, ok=True):
        from selenium.webdriver.common.by import By
        wait_for(lambda: self.js("return document.getElementById('dialog').open"), what="the dialog")
        if text is not None:
            field = self.d.find_element(By.ID, "dlg-input")
            field.clear()
            field.send_keys(text)
        self.d.find_element(By.ID, "dlg-ok" if ok else "dlg-cancel").click()
        wait_for(lambda: not self.js("return document.getElementById('dialog').open"), what="the dialog to close")

    def toasts(self, kind="") -> list[str]:
        css = "#toasts .toast" + ("." + kind if kind else "")
        return self.js("return [...document.querySelectorAll(arguments[0])].map(t => t.textContent)", css)

    def screenshot(self, name):
        """The viewport as shown (a phone's at 3 device pixels per px), as NAME-phone.png or
        NAME-desktop.png."""
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        kind = "phone" if self.size == PHONE else "desktop"
        self.d.save_screenshot(str(SCREENSHOTS / f"{name}-{kind}.png"))

    def viewport(self) -> tuple[int, int]:
        return tuple(self.js("return [window.innerWidth, window.innerHeight]"))

    def overflow(self) -> list[str]:
        """What sticks out sideways past the viewport (the page scrolls sideways, or a visible
        element ends beyond its right edge), as descriptions; [] when everything fits."""
        return self.js("""
            const w = document.documentElement.clientWidth, out = [];
            if (document.documentElement.scrollWidth > w) out.push(`the page is ${document.documentElement.scrollWidth} px wide in ${w}`);
            for (const e of document.querySelectorAll('body *')) {
              const r = e.getBoundingClientRect();
              if (!r.width || !r.height || getComputedStyle(e).visibility === 'hidden') continue;
              if (r.right > w + 0.5 || r.left < -0.5) out.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className.baseVal ?? e.className} at ${Math.round(r.left)}–${Math.round(r.right)}`);
            }
            return out""")

    def cut_text(self) -> list[str]:
        """Text cut or broken where it should not be, as descriptions; [] when none: a visible
        field's placeholder wider than the field, a part kept on one line (.kept: a format, a
        date, "2 of 4") that wrapped anyway."""
        return self.js("""
            const out = [];
            for (const e of document.querySelectorAll('input[placeholder]')) {
              if (!e.getClientRects().length) continue;
              // The placeholder's width as the field lays out text (a search field keeps room
              // for its clear button): put it in as the value a moment, no event fired.
              const value = e.value;
              e.value = e.placeholder;
              const need = e.scrollWidth, room = e.clientWidth;
              e.value = value;
              if (need > room) out.push(`#${e.id}'s placeholder "${e.placeholder}" needs ${need} px of ${room}`);
            }
            for (const e of document.querySelectorAll('.kept'))
              if (e.getClientRects().length > 1) out.push(`"${e.textContent}" broken over lines`);
            return out""")

    def console_errors(self) -> list[str]:
        return [e["message"] for e in self.d.get_log("browser") if e["level"] == "SEVERE"]
