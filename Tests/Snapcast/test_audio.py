"""reeld's pipe output feeding a real snapserver, heard by a real snapclient that writes what it
receives to a file: the tone's frequency, level and length, dropouts, and what happens when
snapserver is not there, goes away and comes back.

Waits are polls against deadlines; nothing here assumes how fast the machine is.
"""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from snaptest import DEADLINE, Reeld, Snapclient, Snapserver, fifo_queued, wait_for

RATE = 48000
# What the pipe may hold with nobody reading: the lead (150 ms) at
# 48000:16:2, and what one more flush adds (50 ms).
MOST_UNREAD = (150 + 50) * RATE * 4 // 1000


def tone(path, seconds, freq, rate=44100):
    subprocess.run(["sox", "-n", "-r", str(rate), "-c", "2", "-b", "16", str(path),
                    "synth", str(seconds), "sine", str(freq), "vol", "0.5"], check=True)
    return path


def config(fifo, alsa_enabled):
    return "\n".join([
        "[[outputs]]", 'type = "alsa"', f"enabled = {'true' if alsa_enabled else 'false'}", "",
        "[[outputs]]", 'type = "snapcast"', 'name = "Snapcast"', f'path = "{fifo}"', "",
    ])


class Heard:
    """What a room heard: where the tone is, and how it sounds there."""

    def __init__(self, samples, threshold=0.05):
        self.samples = samples
        loud = int(threshold * 32767)
        indices = [i for i, v in enumerate(samples) if abs(v) > loud]
        self.start = indices[0] if indices else None
        self.end = indices[-1] if indices else None

    @property
    def seconds(self):
        return 0 if self.start is None else (self.end - self.start + 1) / RATE

    def frequency(self):
        s = self.samples
        rising = sum(1 for i in range(self.start + 1, self.end) if s[i - 1] < 0 <= s[i])
        return rising / self.seconds

    def peak(self):
        return max(abs(v) for v in self.samples[self.start:self.end + 1]) / 32767

    def longest_gap_ms(self):
        """The longest run of (near) silence inside the tone: a dropout."""
        longest = run = 0
        for v in self.samples[self.start:self.end + 1]:
            if abs(v) < 200:
                run += 1
                longest = max(longest, run)
            else:
                run = 0
        return longest * 1000 / RATE

    def largest_step(self):
        """The largest jump between neighbouring samples, as a fraction of full scale."""
        s = self.samples
        return max(abs(s[i] - s[i - 1]) for i in range(self.start + 1, self.end + 1)) / 32767


def outputs(reeld):
    return {o["name"]: o for o in reeld.call("outputs.list")["outputs"]}


def pipe_status(reeld):
    return outputs(reeld)["Snapcast"]["status"]


@pytest.fixture
def rig(tmp_path):
    """Starts nothing; stops whatever a test started."""
    started = []

    def start(thing):
        started.append(thing)
        return thing.start()

    yield start
    for thing in reversed(started):
        thing.stop()


def test_a_44100_hz_tone_reaches_the_room_at_48000_hz_whole_and_without_dropouts(tmp_path, rig):
    fifo = tmp_path / "snapfifo"
    reeld = rig(Reeld(tmp_path / "reeld", config=config(fifo, alsa_enabled=False)))
    server = rig(Snapserver(tmp_path / "snapserver", reeld.socket, fifo=fifo, buffer_ms=400))
    room = rig(Snapclient(tmp_path / "client", server))
    source = tone(tmp_path / "tone.wav", 3, 1000)
    reeld.reel("play", str(source))
    wait_for(lambda: reeld.call("player.status")["state"] == "stopped", timeout=DEADLINE + 5,
             what="the tone to play to its end")
    # Then until the room has heard it out (snapserver's buffer) and half a second more.
    wait_for(lambda: (h := Heard(room.samples())).end is not None and len(h.samples) - h.end > RATE // 2,
             what="the room to hear the tone out")
    heard = Heard(room.samples())
    assert abs(heard.seconds - 3.0) < 0.05, f"heard {heard.seconds:.3f} s of a 3 s tone"
    assert abs(heard.frequency() - 1000) < 5, f"heard {heard.frequency():.1f} Hz, not 1000 Hz (played fast or slow)"
    assert abs(heard.peak() - 0.5) < 0.02, f"peak {heard.peak():.3f}"
    assert heard.longest_gap_ms() <= 20, f"a dropout of {heard.longest_gap_ms():.1f} ms"
    assert heard.largest_step() < 0.1, f"a discontinuity of {heard.largest_step():.3f} of full scale"


def test_snapserver_absent_then_killed_and_restarted_while_alsa_plays_on(tmp_path, rig):
    if not os.environ.get("PULSE_SERVER"):
        pytest.fail("needs PULSE_SERVER (a paced ALSA device): run scripts/test-snapcast")
    fifo = tmp_path / "snapfifo"
    reeld = rig(Reeld(tmp_path / "reeld", config=config(fifo, alsa_enabled=True)))
    reeld.reel("play", str(tone(tmp_path / "long.flac", 60, 1000)))
    wait_for(lambda: pipe_status(reeld) == "waiting_for_reader", what="the pipe to wait for a reader")
    assert reeld.call("player.status")["state"] == "playing"
    underruns = reeld.call("player.status")["underruns"]

    def nothing_piles_up(seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            queued = fifo_queued(fifo)
            assert queued <= MOST_UNREAD, f"{queued} bytes wait in the pipe with nobody reading"
            time.sleep(0.05)

    nothing_piles_up(1.5)

    # snapserver comes: the pipe is read within the deadline, and the room hears the tone.
    server = rig(Snapserver(tmp_path / "snapserver", reeld.socket, fifo=fifo, buffer_ms=400))
    room = rig(Snapclient(tmp_path / "client", server, name="first"))
    wait_for(lambda: pipe_status(reeld) == "connected", what="reeld to see snapserver read the pipe")
    wait_for(lambda: Heard(room.samples()).start is not None, what="the room to hear the tone")

    # snapserver crashes: the pipe waits again, nothing piles up, the device plays on.
    room.stop()
    server.kill()
    wait_for(lambda: pipe_status(reeld) == "waiting_for_reader", what="the pipe to see the reader gone")
    nothing_piles_up(1.5)
    assert reeld.call("player.status")["state"] == "playing"

    # It comes back: the room hears the tone again, whole from where it starts.
    server = rig(Snapserver(tmp_path / "snapserver2", reeld.socket, fifo=fifo, buffer_ms=400))
    room = rig(Snapclient(tmp_path / "client2", server, name="second"))
    wait_for(lambda: pipe_status(reeld) == "connected", what="reeld to see the new snapserver read the pipe")
    wait_for(lambda: (h := Heard(room.samples())).start is not None and h.seconds > 2,
             what="the room to hear 2 s of the tone")
    heard = Heard(room.samples())
    assert heard.longest_gap_ms() <= 20, f"a dropout of {heard.longest_gap_ms():.1f} ms after the restart"
    assert abs(heard.frequency() - 1000) < 5
    status = reeld.call("player.status")
    assert status["state"] == "playing"
    assert status["underruns"] == underruns, "the ALSA output glitched while snapserver went and came"


def test_a_path_that_is_not_a_fifo_turns_the_pipe_off_with_the_reason_and_playback_goes_on(tmp_path, rig):
    plain = tmp_path / "plain-file"
    plain.write_text("not a pipe")
    missing = tmp_path / "no-such-dir" / "fifo"
    text = "\n".join([
        "[[outputs]]", 'type = "snapcast"', 'name = "Plain"', f'path = "{plain}"', "",
        "[[outputs]]", 'type = "snapcast"', 'name = "Missing"', f'path = "{missing}"', "",
    ])
    reeld = rig(Reeld(tmp_path / "reeld", config=text))
    listed = outputs(reeld)
    assert listed["Plain"]["enabled"] is False
    assert "is not a FIFO" in listed["Plain"]["error"]["message"]
    assert listed["Missing"]["enabled"] is False
    assert "No such file or directory" in listed["Missing"]["error"]["message"]
    alsa = next(o for o in listed.values() if o["kind"] == "alsa")
    assert alsa["enabled"] is True and alsa["id"] == 0
    with reeld.client() as c:
        reply = c.call_raw("outputs.enable", {"id": listed["Plain"]["id"]})
    assert "is not a FIFO" in reply["error"]["message"], reply
    assert outputs(reeld)["Plain"]["enabled"] is False
    reeld.reel("play", str(tone(tmp_path / "t.wav", 2, 440)))
    assert reeld.call("player.status")["state"] == "playing"
    printed = reeld.reel("outputs").stdout
    assert "Plain (pipe" in printed and "is not a FIFO" in printed, printed
    assert plain.read_text() == "not a pipe"


def test_outputs_turn_on_and_off_and_the_stream_tells(tmp_path, rig):
    fifo = tmp_path / "snapfifo"
    reeld = rig(Reeld(tmp_path / "reeld", config=config(fifo, alsa_enabled=True)))
    with reeld.client() as c:
        c.call("subscribe", {"stream": "outputs"})
        c.wait_notification(lambda m: m.get("method") == "outputs.changed", what="the first outputs push")
        pipe = outputs(reeld)["Snapcast"]
        assert pipe["enabled"] is True and pipe["path"] == str(fifo) and pipe["format"] == "48000:16:2"
        c.call("outputs.disable", {"id": pipe["id"]})
        c.wait_notification(
            lambda m: m.get("method") == "outputs.changed"
            and not next(o for o in m["params"]["outputs"] if o["id"] == pipe["id"])["enabled"],
            what="the pipe turned off on the stream")
        reply = c.call_raw("outputs.enable", {"id": 9})
        assert "no output 9" in reply["error"]["message"], reply
        reply = c.call_raw("outputs.enable", {})
        assert "needs \"id\"" in reply["error"]["message"], reply
    assert "Snapcast (pipe" in reeld.reel("outputs", "enable", str(pipe["id"])).stdout
    assert outputs(reeld)["Snapcast"]["enabled"] is True


def test_two_tracks_reach_the_room_gapless_at_the_mixers_volume(tmp_path, rig):
    """Gapless joins and the software volume apply to the pipe as to the device: two 1 s tones of
    whole cycles, back to back at volume 50 (gain 0.5³), are one 2 s tone in the room, with no
    gap and no click at the join."""
    fifo = tmp_path / "snapfifo"
    reeld = rig(Reeld(tmp_path / "reeld", config=config(fifo, alsa_enabled=False)))
    server = rig(Snapserver(tmp_path / "snapserver", reeld.socket, fifo=fifo, buffer_ms=400))
    room = rig(Snapclient(tmp_path / "client", server))
    first, second = tone(tmp_path / "a.wav", 1, 1000), tone(tmp_path / "b.wav", 1, 1000)
    assert reeld.call("mixer.setVolume", {"volume": 50})["volume"] == 50
    for path in (first, second):
        reeld.call("queue.add", {"file": str(path)})
    reeld.call("player.play")
    wait_for(lambda: reeld.call("player.status")["state"] == "stopped", timeout=DEADLINE + 5,
             what="both tones to play to their end")
    wait_for(lambda: (h := Heard(room.samples(), threshold=0.02)).end is not None and len(h.samples) - h.end > RATE // 2,
             what="the room to hear the tones out")
    heard = Heard(room.samples(), threshold=0.02)
    assert abs(heard.seconds - 2.0) < 0.05, f"heard {heard.seconds:.3f} s of two 1 s tones"
    assert abs(heard.peak() - 0.5 * 0.125) < 0.005, f"peak {heard.peak():.4f}, not 0.0625 (volume 50)"
    assert heard.longest_gap_ms() <= 20, f"a gap of {heard.longest_gap_ms():.1f} ms"
    assert heard.largest_step() < 0.02, f"a click of {heard.largest_step():.4f} of full scale"


def test_outputs_switched_on_and_off_stay_so_after_a_restart(tmp_path, rig):
    fifo = tmp_path / "snapfifo"
    reeld = rig(Reeld(tmp_path / "reeld", config=config(fifo, alsa_enabled=True)))
    reeld.call("outputs.disable", {"id": 0})
    reeld.call("outputs.disable", {"id": 1})
    reeld.call("outputs.enable", {"id": 1})
    reeld.call("outputs.disable", {"id": 1})
    reeld.call("outputs.enable", {"id": 1})
    reeld.stop()
    reeld.start()
    listed = outputs(reeld)
    assert listed["Snapcast"]["enabled"] is True
    assert next(o for o in listed.values() if o["kind"] == "alsa")["enabled"] is False
