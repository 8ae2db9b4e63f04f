"""A disk that fails under a take: reeld's data directory on cutfs, `cut` in the middle of a
recording (every operation after it fails with EIO, as a dying SD card does), then
`recorder.stop`. The take must not be answered as saved: the stop answers an error (`io_error`
naming the take, or `not_recording` when the writer's own sync met the failure first and ended
the session), and the recorder state's `error` says `io_error` with the file's name.

    python3 Tests/PowerCut/test_eio.py --reeld BIN --cutfs BIN --work DIR

Needs PULSE_SERVER (a PulseAudio whose default source paces the capture, as powercut.py) and
/dev/fuse. Exit status 0 when every check passed.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cutfs  # noqa: E402
from powercut import RPC, Failure, start_reeld  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reeld", required=True)
    parser.add_argument("--cutfs", required=True)
    parser.add_argument("--work", required=True)
    args = parser.parse_args()
    work = os.path.abspath(args.work)
    fs = cutfs.CutFS(args.cutfs, os.path.join(work, "disk"), os.path.join(work, "mnt"), log=os.path.join(work, "cutfs.log"))
    fs.mount()
    socket_path = os.path.join(work, "reel.sock")
    log_path = os.path.join(work, "reeld-eio.log")
    config = os.path.join(work, "empty-eio.toml")
    open(config, "w").close()
    env = dict(os.environ, REEL_MPD_LISTEN="none", REEL_HTTP_LISTEN="none")
    command = [args.reeld, "--config", config, "--socket", socket_path, "--data-dir", os.path.join(work, "mnt", "data"),
               "--device", "null", "--capture-device", "pulse", "--log-level", "info"]
    reeld = None
    failures = []
    try:
        try:
            reeld, rpc = start_reeld(command, socket_path, log_path, env)
        except Failure as failure:
            raise SystemExit(f"test_eio: {failure}")
        # One format: after the cut every operation fails, so the disk serves one take.
        codec = "flac"
        state = rpc.call("recorder.start", {"format": codec, "name": f"eio {codec}"})
        take = state["item"]["path"]
        time.sleep(1.5)
        fs.cut()
        try:
            done = rpc.call("recorder.stop")
            failures.append(f"recorder.stop answered the take as saved on a failed disk: {done}")
        except RPC.ReplyError as error:
            if error.reason == "io_error":
                if take not in str(error):
                    failures.append(f"the stop's error does not name the take {take}: {error}")
            elif error.reason != "not_recording":
                failures.append(f"recorder.stop answered {error.reason}: {error}")
            print(f"test_eio: recorder.stop refused: {error.reason}: {error}")
        status = rpc.call("recorder.status")
        problem = status.get("error")
        if not isinstance(problem, dict) or problem.get("reason") != "io_error":
            failures.append(f"the recorder state's error is {problem!r}, not io_error")
        elif "Input/output error" not in problem.get("message", ""):
            failures.append(f"the recorder state's error does not say EIO: {problem}")
        else:
            print(f"test_eio: the recorder state says: {problem['message']}")
        rpc.close()
    finally:
        if reeld and reeld.poll() is None:
            reeld.kill()
        if reeld:
            reeld.wait()
        fs.unmount()
    for failure in failures:
        print(f"test_eio: FAILED: {failure}", file=sys.stderr)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
