"""Mounting, cutting and unmounting cutfs (cutfs.c) from Python; imported, not run.

A `CutFS` is used as a context manager: the mount is always undone on the way out, whatever
happened inside (an exception, a failed check), and its cutfs process is stopped by its PID.
"""
import os
import shutil
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def build(output):
    """Compiles cutfs.c into `output` (when the source is newer); returns `output`."""
    source = os.path.join(HERE, "cutfs.c")
    if not os.path.exists(output) or os.path.getmtime(output) < os.path.getmtime(source):
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "fuse3"], check=True,
                               capture_output=True, text=True).stdout.split()
        os.makedirs(os.path.dirname(output) or ".", exist_ok=True)
        compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
        if not compiler:
            raise RuntimeError("no C compiler for cutfs.c (scripts/install-deps --test installs gcc)")
        subprocess.run([compiler, "-O2", "-Wall", "-Wextra", "-o", output, source] + flags, check=True)
    return output


def mounted(path):
    path = os.path.realpath(path)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == path for line in f)


class CutFS:
    """cutfs over `backing`, mounted at `mountpoint` (both made if missing)."""

    def __init__(self, binary, backing, mountpoint, log=None):
        self.binary, self.backing, self.mountpoint = binary, backing, mountpoint
        self.log = log or backing.rstrip("/") + ".cutfs.log"
        self.process = None

    def __enter__(self):
        self.mount()
        return self

    def __exit__(self, *exc):
        self.unmount()
        return False

    @property
    def control(self):
        return os.path.join(self.mountpoint, ".cutfs")

    def mount(self):
        os.makedirs(self.backing, exist_ok=True)
        os.makedirs(self.mountpoint, exist_ok=True)
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen([self.binary, self.backing, self.mountpoint, "-f"],
                                            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while not mounted(self.mountpoint):
            if self.process.poll() is not None:
                raise RuntimeError(f"cutfs did not mount {self.mountpoint}: {open(self.log).read()[-2000:]}")
            if time.monotonic() > deadline:
                self.unmount()
                raise RuntimeError(f"cutfs did not mount {self.mountpoint} within 30 s")
            time.sleep(0.02)

    def command(self, text):
        with open(self.control, "w") as f:
            f.write(text + "\n")

    def cut(self):
        """The power cut: what is not durable is gone from the backing directory; every operation
        on the mount fails with EIO from now on. Unmount, then mount again to go on."""
        self.command("cut")

    def sync(self):
        self.command("sync")

    def cut_after(self, syncs, stop_caller=False):
        """Arms the cut: the power goes right after the `syncs`th fsync or fsyncdir from now;
        with `stop_caller`, the process that made it is stopped (SIGSTOP) at that instant."""
        self.command(f"cut-after {syncs}" + (" stop" if stop_caller else ""))

    def is_cut(self):
        with open(self.control) as f:
            return f.read().strip() == "cut"

    def unmount(self):
        """Unmounts (lazily if something still holds it) and waits for cutfs to exit."""
        if self.process is None:
            return
        if mounted(self.mountpoint):
            result = subprocess.run(["fusermount3", "-u", self.mountpoint], capture_output=True)
            if result.returncode != 0:
                subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], capture_output=True)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            subprocess.run(["fusermount3", "-u", "-z", self.mountpoint], capture_output=True)
        self.process = None
