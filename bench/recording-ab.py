"""Two reeld binaries and arecord in one run, taking turns: bench/recording.py's measurements of
segmented FLAC (every 5 s) beside `arecord --max-file-time 5`, one take of WAV and FLAC beside
arecord's WAV, and armed listening. For a before/after figure:

    PULSE_SERVER=... python3 bench/recording-ab.py --before OLD/reeld --after NEW/reeld --work DIR

Needs a PulseAudio whose default source is a null sink's monitor (bench/recording starts one);
plays a noisy tone into it while it runs."""
import os, sys, statistics, time, argparse
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recording as R

p = argparse.ArgumentParser()
p.add_argument("--before", required=True)
p.add_argument("--after", required=True)
p.add_argument("--work", required=True)
p.add_argument("--seconds", type=int, default=20)
p.add_argument("--rounds", type=int, default=2)
a = p.parse_args()
res = {"arecord": {}, "before": {}, "after": {}}
loads = []
try:
    R.noise_source(a.work, a.rounds * 12 * (a.seconds + 4) + 60)
    reelds = {"before": R.Reeld(a.before, a.work, os.path.join(a.work, "data-before"), name="before"),
              "after": R.Reeld(a.after, a.work, os.path.join(a.work, "data-after"), name="after")}
    time.sleep(2)
    for r in range(a.rounds):
        order = ["before", "after"] if r % 2 == 0 else ["after", "before"]
        loads.append(os.getloadavg()[0])
        R.record_segmented_with_arecord(a.work, a.seconds, 5, res["arecord"])
        for k in order: R.record_segmented_with_reeld(reelds[k], a.seconds, 5, res[k])
        R.record_with_arecord(a.work, a.seconds, res["arecord"])
        for k in order:
            R.record_with_reeld(reelds[k], "wav", a.seconds, res[k])
            R.record_with_reeld(reelds[k], "flac", a.seconds, res[k])
        for k in order: R.armed_cpu(reelds[k], a.seconds, res[k])
        loads.append(os.getloadavg()[0])
finally:
    R.stop_all()
def med(d, key):
    v = d.get(key, [])
    return (statistics.median(v), v) if v else (None, d.get("na." + key))
seg = med(res["arecord"], "cpu.arecord.segmented")[0]
one = med(res["arecord"], "cpu.arecord.wav")[0]
print(f"\nload average (1 min) during the run: {min(loads):.2f}–{max(loads):.2f}")
print(f"arecord --max-file-time 5, WAV: {seg:.2f} ms/s  {res['arecord'].get('cpu.arecord.segmented')}")
print(f"arecord one take, WAV:          {one:.2f} ms/s  {res['arecord'].get('cpu.arecord.wav')}")
for k in ("before", "after"):
    d = res[k]
    m, v = med(d, "cpu.reeld.segmented"); print(f"{k}: segmented FLAC {m:.2f} ms/s ({m/seg:.2f}× arecord seg) {v}")
    m, v = med(d, "cpu.reeld.wav"); print(f"{k}: one take WAV {m:.2f} ms/s ({m/one:.2f}× arecord) {v}")
    m, v = med(d, "cpu.reeld.flac"); print(f"{k}: one take FLAC {m:.2f} ms/s ({m/one:.2f}× arecord) {v}")
    m, v = med(d, "cpu.reeld.armed"); print(f"{k}: armed {m:.3f} % of a core {v}")
    print(f"{k}: frames lost per boundary {d.get('lost.boundary.reeld')}")
print(f"arecord frames lost per boundary {res['arecord'].get('lost.boundary.arecord')}")
