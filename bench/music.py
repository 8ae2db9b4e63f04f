#!/usr/bin/env python3
"""The Python half of bench/music: Reel's music-folder index against MPD's database on the same
generated tree, in one run.

  music.py generate --dir DIR --files N --base DIR
      Makes the tree in DIR (run with the venv's python: it needs mutagen and Pillow).
  music.py measure --reeld BIN --work DIR --music DIR --rounds N --queries N

**The tree** (`generate`): N real audio files in a layout Artist/Album/NN Title.ext (N/10
albums, N/100 artists; multi-disc albums in `Disc 1`, `Disc 2` folders; compilations under
`Various Artists`). Each album is one format, FLAC 40 %, MP3 35 %, Ogg Vorbis 15 %, Opus 10 %.
Five base files per format (a chord with a little pink noise, 2 to 4.8 s, 44.1 kHz
stereo) are encoded once with sox, flac, lame, oggenc and opusenc; each file of the tree is a
copy of one, tagged with mutagen: Title, Artist, Album, Track (`N` or `N/total`), Date
(`YYYY` or `YYYY-MM-DD`), Genre on every tagged file; AlbumArtist on compilations and on a
quarter of the other albums; Disc on multi-disc albums and some others. 2 % of the files have
no tags at all; about 10 % of the artists, and some titles, have non-ASCII names (accents,
Cyrillic, Japanese); 40 % of the album folders have a `cover.jpg` and 10 % of the albums embed
a picture (a 500×500 JPEG, Pillow) in every file. Seeded by N: the same N makes the same tree.

**The measurements** (`measure`), per round, MPD then Reel (Reel then MPD in even rounds), each
with its own empty database, the page cache warmed first (every file of the tree read once):
- first full index: MPD started with an empty database, then `update`, timed from the command
  to the `idle update` after which `status` has no `updating_db`; reeld started with
  `music_dirs` on an empty data directory, timed from the process's start to the `scan.progress`
  push of its first scan with `running: false` (its start-up is included); with the process CPU
  clock over the same spans, and both also timed from the process's start (MPD: its start, then
  `update`);
- RSS after indexing: `VmRSS` and `Pss` (`/proc/PID/smaps_rollup`) 1 s after the index is done,
  and `VmHWM` (the peak);
- database size: MPD's `db_file` (its simple database, gzip-compressed as Debian's MPD writes it
  by default) after the update; Reel's `library.sqlite` with its `-wal` and `-shm` files while it
  runs after the scan, and `library.sqlite` alone after it stopped (a clean stop checkpoints the
  WAL into it);
- queries over the MPD protocol (a Unix socket, one connection, one request at a time, from the
  send to the reply's `OK`): `list Album`, `search artist "<name>"` and `find album "<name>"`
  (a different artist or album of the tree each time, the same sequence for both), `--queries`
  of each after 20 unmeasured; p50 and p99. A reply `ACK` is printed as `n/a (ACK …)`. For Reel,
  also JSON-RPC `music.albums` (all albums) and `music.search {text: <artist>}`;
- restart with nothing changed: the daemon stopped (SIGTERM) and started again on its database;
  MPD timed from its start to the end of the `update` sent as soon as it answers, Reel from its
  start to the end of its start-up scan. MPD's `update` alone is printed too.
"""
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time

# bench/ last on the path: its queue.py must not hide the standard library's (multiprocessing).
BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != BENCH] + [BENCH]
from compare import process_cpu_ns  # noqa: E402
from measuring import (  # noqa: E402
    MPDClient, load_average, options as parse_options, percentile, start_mpd, stop_process, wait_for as wait, write_mpd_config)

FORMATS = [("flac", 0.40), ("mp3", 0.35), ("ogg", 0.15), ("opus", 0.10)]
DURATIONS = [2.0, 2.7, 3.4, 4.1, 4.8]


def fail(message):
    print(f"bench/music: {message}", file=sys.stderr)
    sys.exit(1)


def log(message):
    print(f"[bench/music {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# MARK: - The tree

WORDS = ("amber blue broken city cold dance dark distant dream echo electric empty fire flower "
         "ghost glass gold green heart highway hollow house light lonely lost machine midnight "
         "mirror moon morning night ocean paper quiet rain river road room salt secret shadow silver "
         "sky slow smoke snow song stone storm summer sun tide time train velvet water white wild "
         "wind winter wire young").split()
NON_ASCII = ["Björk Sørensen", "Sigur Rós Trio", "Mötley Brüder", "Zoë Ångström", "Chloé Fauré",
             "Ибрагим Оркестр", "Зимний Сад", "坂本 楽団", "東京 Strings", "Łukasz Żółw", "Ñandú Peña",
             "Øresund Ensemble", "Dvořák Četa", "Ólafur Þór", "François Mélodie", "Café Müller"]
GENRES = ["Rock", "Jazz", "Classical", "Electronic", "Folk", "Pop", "Hip-Hop", "Ambient", "Blues",
          "Metal", "Soundtrack", "World"]


def words(rng, low, high):
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high))).title()


def safe(name):
    """A name for the file system: `/` replaced, no leading dot."""
    return name.replace("/", "-").lstrip(".") or "_"


def plan(files, seed):
    """The tree: a list of albums, each a dict with its folder, tags and tracks."""
    rng = random.Random(seed)
    album_count = max(1, round(files / 10))
    artist_count = max(1, round(album_count / 10))
    artists, used = [], set()
    for index in range(artist_count):
        while True:
            if rng.random() < 0.10:
                name = rng.choice(NON_ASCII) + (f" {index}" if rng.random() < 0.5 else "")
            else:
                name = ("The " if rng.random() < 0.2 else "") + words(rng, 1, 3)
            if name not in used:
                used.add(name)
                artists.append(name)
                break
    counts = [files // album_count + (1 if i < files % album_count else 0) for i in range(album_count)]
    for i in range(album_count):
        j, d = rng.randrange(album_count), rng.randint(0, 4)
        if counts[i] - d >= 3:
            counts[i] -= d
            counts[j] += d
    albums, folders = [], set()
    for number, count in enumerate(counts):
        compilation = rng.random() < 0.05
        artist = "Various Artists" if compilation else artists[number % artist_count]
        title = words(rng, 1, 4)
        if rng.random() < 0.05:
            title += " " + rng.choice(["Ärger", "Été", "Ночь", "夜明け", "Señal"])
        folder = f"{safe(artist)}/{safe(title)}"
        while folder in folders:
            title += " II"
            folder = f"{safe(artist)}/{safe(title)}"
        folders.add(folder)
        roll, total = rng.random(), 0.0
        fmt = FORMATS[-1][0]
        for name, weight in FORMATS:
            total += weight
            if roll < total:
                fmt = name
                break
        discs = 2 if count >= 8 and rng.random() < 0.08 else 1
        year = rng.randint(1960, 2025)
        date = str(year) if rng.random() < 0.7 else f"{year}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}"
        album = {
            "folder": folder, "album": title, "format": fmt, "date": date, "genre": rng.choice(GENRES),
            "album_artist": artist if compilation or rng.random() < 0.25 else None,
            "cover_file": rng.random() < 0.40, "embedded": rng.random() < 0.10, "picture": rng.randrange(6),
            "disc_tag": discs > 1 or rng.random() < 0.10, "total_in_track": rng.random() < 0.3, "tracks": [],
        }
        per_disc = -(-count // discs)
        for index in range(count):
            disc, track = index // per_disc + 1, index % per_disc + 1
            name = words(rng, 1, 5)
            if rng.random() < 0.03:
                name += " " + rng.choice(["Café", "Über", "Ночь", "雨", "Niño"])
            subfolder = f"Disc {disc}/" if discs > 1 else ""
            album["tracks"].append({
                "path": f"{folder}/{subfolder}{track:02} {safe(name)}.{fmt}",
                "title": name, "artist": artists[rng.randrange(artist_count)] if compilation else artist,
                "track": track, "tracks": min(per_disc, count - (disc - 1) * per_disc), "disc": disc,
                "discs": discs, "base": rng.randrange(len(DURATIONS)), "untagged": rng.random() < 0.02,
            })
        albums.append(album)
    return albums


def make_bases(base):
    """The base files, encoded once: base/N.ext for each duration and format."""
    os.makedirs(base, exist_ok=True)
    for index, seconds in enumerate(DURATIONS):
        wav = os.path.join(base, f"{index}.wav")
        if all(os.path.exists(os.path.join(base, f"{index}.{fmt}")) for fmt, _ in FORMATS):
            continue
        root = 110 * (1 + index / 7)
        subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", str(seconds),
                        "sine", str(root), "sine", str(root * 1.26), "sine", str(root * 1.5), "pinknoise",
                        "remix", "1v0.3,2v0.2,4v0.05", "3v0.3,2v0.2,4v0.05", "fade", "0.05", str(seconds), "0.2"],
                       check=True)
        quiet = dict(stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        subprocess.run(["flac", "--silent", "-f", "-5", "-o", os.path.join(base, f"{index}.flac"), wav], **quiet)
        subprocess.run(["lame", "--quiet", "-b", "192", wav, os.path.join(base, f"{index}.mp3")], **quiet)
        subprocess.run(["oggenc", "--quiet", "-q", "5", "-o", os.path.join(base, f"{index}.ogg"), wav], **quiet)
        subprocess.run(["opusenc", "--quiet", "--bitrate", "128", wav, os.path.join(base, f"{index}.opus")], **quiet)
        os.unlink(wav)


def make_pictures(base):
    """Six 500×500 JPEG covers (Pillow): gradients with noise, 30–70 KB each."""
    from PIL import Image, ImageDraw
    paths = []
    for index in range(6):
        path = os.path.join(base, f"cover{index}.jpg")
        paths.append(path)
        if os.path.exists(path):
            continue
        rng = random.Random(index)
        image = Image.effect_noise((500, 500), 40 + 10 * index).convert("RGB")
        tint = Image.new("RGB", (500, 500), tuple(rng.randrange(256) for _ in range(3)))
        image = Image.blend(image, tint, 0.6)
        draw = ImageDraw.Draw(image)
        for _ in range(12):
            x, y, r = rng.randrange(500), rng.randrange(500), rng.randrange(20, 120)
            draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(rng.randrange(256) for _ in range(3)))
        image.save(path, "JPEG", quality=85)
    return paths


def tag(path, fmt, album, track, picture):
    """Writes the track's tags (and the album's picture, if any) into the copy at `path`."""
    number = f"{track['track']}/{track['tracks']}" if album["total_in_track"] else str(track["track"])
    fields = {"TITLE": track["title"], "ARTIST": track["artist"], "ALBUM": album["album"],
              "TRACKNUMBER": number, "DATE": album["date"], "GENRE": album["genre"]}
    if album["album_artist"]:
        fields["ALBUMARTIST"] = album["album_artist"]
    if album["disc_tag"]:
        fields["DISCNUMBER"] = f"{track['disc']}/{track['discs']}"
    if fmt == "mp3":
        from mutagen import id3
        tags = id3.ID3()
        frames = {"TITLE": id3.TIT2, "ARTIST": id3.TPE1, "ALBUM": id3.TALB, "TRACKNUMBER": id3.TRCK,
                  "DATE": id3.TDRC, "GENRE": id3.TCON, "ALBUMARTIST": id3.TPE2, "DISCNUMBER": id3.TPOS}
        for key, value in fields.items():
            tags.add(frames[key](encoding=3, text=value))
        if picture:
            tags.add(id3.APIC(encoding=3, mime="image/jpeg", type=3, desc="Cover", data=picture))
        tags.save(path, v2_version=4)
        return
    from mutagen.flac import FLAC, Picture
    from mutagen.oggopus import OggOpus
    from mutagen.oggvorbis import OggVorbis
    audio = {"flac": FLAC, "ogg": OggVorbis, "opus": OggOpus}[fmt](path)
    for key, value in fields.items():
        audio[key] = value
    if picture:
        block = Picture()
        block.type, block.mime, block.desc, block.data = 3, "image/jpeg", "Cover", picture
        block.width, block.height, block.depth = 500, 500, 24
        if fmt == "flac":
            audio.add_picture(block)
        else:
            import base64
            audio["METADATA_BLOCK_PICTURE"] = base64.b64encode(block.write()).decode("ascii")
    audio.save()


def make_albums(job):
    directory, base, albums, pictures = job
    images = [open(p, "rb").read() for p in pictures]
    for album in albums:
        for track in album["tracks"]:
            path = os.path.join(directory, track["path"])
            os.makedirs(os.path.dirname(path), exist_ok=True)
            shutil.copyfile(os.path.join(base, f"{track['base']}.{album['format']}"), path)
            if not track["untagged"]:
                tag(path, album["format"], album, track, images[album["picture"]] if album["embedded"] else None)
        if album["cover_file"]:
            shutil.copyfile(pictures[album["picture"]], os.path.join(directory, album["folder"], "cover.jpg"))
    return sum(len(a["tracks"]) for a in albums)


def generate(argv):
    o = parse_options(list(argv), ["dir", "files", "base"], fail)
    files, directory, base = int(o["files"]), o["dir"], o["base"]
    started = time.monotonic()
    make_bases(base)
    pictures = make_pictures(base)
    albums = plan(files, seed=files)
    partial = directory + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    os.makedirs(partial)
    workers = max(1, min(4, os.cpu_count() or 1))
    jobs = [(partial, base, albums[i::workers], pictures) for i in range(workers)]
    import multiprocessing
    with multiprocessing.Pool(workers) as pool:
        made = sum(pool.map(make_albums, jobs))
    # What the tree holds, for the measurements (names to search for): next to it, not in it.
    with open(partial + ".json", "w") as f:
        json.dump({"files": made, "albums": [{"album": a["album"], "artist": a["tracks"][0]["artist"],
                                              "album_artist": a["album_artist"], "format": a["format"],
                                              "tracks": len(a["tracks"])} for a in albums]}, f, ensure_ascii=False)
    os.replace(partial + ".json", directory + ".json")
    os.replace(partial, directory)
    log(f"generated {made} files in {len(albums)} albums in {time.monotonic() - started:.0f} s: {directory}")


# MARK: - Measuring


def warm(directory):
    """Reads every file of the tree once; (files, bytes, seconds)."""
    started, count, total = time.monotonic(), 0, 0
    for parent, _, names in os.walk(directory):
        for name in names:
            with open(os.path.join(parent, name), "rb") as f:
                while True:
                    chunk = f.read(1 << 20)
                    if not chunk:
                        break
                    total += len(chunk)
            count += 1
    return count, total, time.monotonic() - started


def memory(pid):
    """(VmRSS, VmHWM, Pss) in kB."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                fields[key] = int(value.split()[0])
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    fields["Pss"] = int(line.split()[1])
    except OSError:
        pass
    return fields.get("VmRSS"), fields.get("VmHWM"), fields.get("Pss")


def wait_for(predicate, timeout, what):
    return wait(predicate, timeout, what, fail, interval=0.002)


def stop(process):
    stop_process(process, timeout=30)


def quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class MPD:
    name = "MPD"

    def __init__(self, work, music, round):
        self.dir = os.path.join(work, f"mpd-{round}")
        os.makedirs(self.dir, exist_ok=True)
        self.socket = os.path.join(self.dir, "mpd.sock")
        self.db = os.path.join(self.dir, "db")
        self.conf = os.path.join(self.dir, "mpd.conf")
        self.conf = write_mpd_config(self.dir, music, self.dir, self.socket, db=self.db)
        self.process = None

    def start(self):
        """Starts MPD; returns the monotonic time it was started at, once it answers."""
        started = time.monotonic()
        self.process = start_mpd(self.conf, self.dir)
        self.pid = self.process.pid
        self.client = wait_for(self._connect, 120, "MPD to answer")
        return started

    def _connect(self):
        if self.process.poll() is not None:
            fail(f"MPD exited: see {self.dir}/log")
        try:
            return MPDClient(self.socket)
        except OSError:
            return None

    def update(self):
        """`update`, then waits for its end (`idle update` until `status` has no `updating_db`)."""
        lines, ack = self.client.command("update")
        if ack:
            fail(f"MPD: update: {ack}")
        while True:
            status, _ = self.client.command("status")
            if not any(line.startswith(b"updating_db:") for line in status):
                return
            self.client.command("idle update")

    def index(self):
        """(seconds, CPU seconds, seconds from the process's start): the first full index, from
        `update` to its end."""
        launched = self.start()
        started, cpu = time.monotonic(), process_cpu_ns(self.pid)
        self.update()
        done = time.monotonic()
        return done - started, (process_cpu_ns(self.pid) - cpu) / 1e9, done - launched

    def restart(self):
        """(start to ready, update alone, CPU seconds from the start): stopped, started on its
        database, `update` to its end."""
        self.stop()
        started = self.start()
        update_started = time.monotonic()
        self.update()
        done = time.monotonic()
        return done - started, done - update_started, process_cpu_ns(self.pid) / 1e9

    def counts(self):
        lines, _ = self.client.command("stats")
        stats = dict(line.decode().split(": ", 1) for line in lines)
        return f"{stats.get('songs')} songs, {stats.get('albums')} albums, {stats.get('artists')} artists"

    def db_size(self):
        return os.path.getsize(self.db), "db_file (gzip)"

    def stop(self):
        if self.process is not None:
            if getattr(self, "client", None) is not None:
                self.client.close()
                self.client = None
            stop(self.process)
            self.process = None


class Reel:
    name = "Reel"

    def __init__(self, binary, work, music, round):
        self.dir = os.path.join(work, f"reel-{round}")
        os.makedirs(self.dir, exist_ok=True)
        self.data = os.path.join(self.dir, "data")
        self.conf = os.path.join(self.dir, "reeld.toml")
        with open(self.conf, "w") as f:
            f.write(f"music_dirs = [{json.dumps(music)}]\n")
        self.socket = os.path.join(self.dir, "reel.sock")
        self.mpd_socket = os.path.join(self.dir, "reel-mpd.sock")
        # Through a link of another name: a `pkill reeld` elsewhere cannot stop it mid-run.
        self.link = os.path.join(self.dir, "reel-daemon")
        os.symlink(binary, self.link)
        self.process = None
        self.scans = 0

    def start(self):
        """Starts reeld and waits for the end of its start-up scan; returns the seconds from its
        start to that end."""
        for path in (self.socket, self.mpd_socket):
            if os.path.exists(path):
                os.unlink(path)
        started = time.monotonic()
        self.process = subprocess.Popen(
            [self.link, "--config", self.conf, "--socket", self.socket, "--data-dir", self.data,
             "--device", "null", "--mpd-listen", self.mpd_socket, "--http-listen", "none", "--log-level", "warning"],
            stdin=subprocess.DEVNULL, stdout=open(os.path.join(self.dir, "log"), "ab"), stderr=subprocess.STDOUT)
        self.pid = self.process.pid
        self.rpc = wait_for(self._connect, 120, "reeld to answer")
        self.scans += 1
        self._send({"jsonrpc": "2.0", "id": 1, "method": "subscribe", "params": {"stream": "scan"}})
        while True:
            message = self._receive()
            if "error" in message:
                fail(f"reeld: subscribe: {message['error']}")
            params = message.get("params") or {}
            if message.get("method") == "scan.progress" and params.get("scan", 0) >= 1 and not params.get("running"):
                done = time.monotonic()
                self.cpu = process_cpu_ns(self.pid) / 1e9
                self.progress = params
                break
        self.rpc.close()
        self.client = MPDClient(self.mpd_socket)
        return done - started

    def _connect(self):
        if self.process.poll() is not None:
            fail(f"reeld exited: see {self.dir}/log")
        try:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(300)
            sock.connect(self.socket)
        except OSError:
            return None
        self.buffer = b""
        return sock

    def _send(self, message):
        self.rpc.sendall(json.dumps(message).encode() + b"\n")

    def _receive(self):
        while b"\n" not in self.buffer:
            chunk = self.rpc.recv(1 << 20)
            if not chunk:
                fail("reeld closed the connection")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def call(self, method, params):
        """A JSON-RPC request on a connection of its own (kept for the next call)."""
        if getattr(self, "calls", None) is None:
            from measuring import RPC
            self.calls = RPC(self.socket)
        return self.calls.call(method, params)

    def index(self):
        """(seconds, CPU seconds), both from the process's start to the end of its first scan."""
        seconds = self.start()
        return seconds, self.cpu, seconds

    def restart(self):
        self.stop()
        return self.start(), None, self.cpu

    def counts(self):
        p = self.progress
        return (f"seen {p.get('seen')}, indexed {p.get('indexed')}, unchanged {p.get('unchanged')}, "
                f"failed {p.get('failed')}")

    def db_size(self):
        total, parts = 0, []
        for suffix in ("", "-wal", "-shm"):
            path = os.path.join(self.data, "library.sqlite" + suffix)
            if os.path.exists(path):
                size = os.path.getsize(path)
                total += size
                parts.append(f"library.sqlite{suffix} {size / 1e6:.1f}")
        return total, " + ".join(parts)

    def stop(self):
        if self.process is not None:
            if getattr(self, "calls", None) is not None:
                self.calls.close()
                self.calls = None
            if getattr(self, "client", None) is not None:
                self.client.close()
                self.client = None
            stop(self.process)
            self.process = None


def timed(request, count, warmup=20):
    """((p50, p99) in ms, None, items) of `request(i)` over `count` calls after `warmup`, or
    (None, the ACK, 0). `request` returns (ACK or None, items in the reply); `items` is the sum
    over the timed calls (a check that both daemons answer the same)."""
    for i in range(warmup):
        ack, _ = request(i)
        if ack:
            return None, ack, 0
    times, items = [], 0
    for i in range(count):
        t0 = time.perf_counter_ns()
        ack, n = request(warmup + i)
        times.append((time.perf_counter_ns() - t0) / 1e6)
        if ack:
            return None, ack, 0
        items += n
    return (percentile(times, 50), percentile(times, 99)), None, items


def queries(daemon, catalogue, count):
    """The MPD-protocol (and, for Reel, JSON-RPC) query timings of one daemon."""
    rng = random.Random(7)
    artists = sorted({a["artist"] for a in catalogue["albums"] if a["artist"] != "Various Artists"})
    albums = [a["album"] for a in catalogue["albums"]]
    artist_seq = [rng.choice(artists) for _ in range(count + 20)]
    album_seq = [rng.choice(albums) for _ in range(count + 20)]
    client = daemon.client
    lines, ack = client.command("list Album")
    out = {"list Album answer": f"{len(lines)} lines" if not ack else ack}

    def mpd(command):
        def run(i):
            lines, ack = client.command(command(i))
            return ack, sum(1 for line in lines if line.startswith(b"file: ") or line.startswith(b"Album: "))
        return run

    out["list Album"] = timed(mpd(lambda i: "list Album"), count)
    out["search artist"] = timed(mpd(lambda i: f"search artist {quote(artist_seq[i])}"), count)
    out["find album"] = timed(mpd(lambda i: f"find album {quote(album_seq[i])}"), count)
    if daemon.name == "Reel":
        def rpc(method, params):
            def run(i):
                try:
                    result = daemon.call(method, params(i))
                except RuntimeError as error:
                    return f"error: {error}", 0
                return None, len(result.get("albums") or result.get("tracks") or [])
            return run
        out["music.albums"] = timed(rpc("music.albums", lambda i: {}), count)
        out["music.search"] = timed(rpc("music.search", lambda i: {"text": artist_seq[i]}), count)
    return out


def measure_one(daemon, catalogue, count):
    result = {}
    result["index"] = daemon.index()
    result["counts"] = daemon.counts()
    time.sleep(1)
    result["memory"] = memory(daemon.pid)
    result["db"] = daemon.db_size()
    result["queries"] = queries(daemon, catalogue, count)
    result["memory after queries"] = memory(daemon.pid)
    result["restart"] = daemon.restart()
    result["restart counts"] = daemon.counts()
    daemon.stop()
    if daemon.name == "Reel":
        result["db stopped"] = daemon.db_size()
    return result


def spread(values, digits=3, unit=""):
    values = [v for v in values if v is not None]
    if not values:
        return "–"
    if len(values) == 1:
        return f"{values[0]:.{digits}f}{unit}"
    return f"{statistics.median(values):.{digits}f}{unit} ({min(values):.{digits}f}–{max(values):.{digits}f})"


def measure(argv):
    o = parse_options(list(argv), ["reeld", "work", "music", "rounds", "queries"], fail)
    work, music, rounds, count = o["work"], o["music"], int(o["rounds"]), int(o["queries"])
    with open(music.rstrip("/") + ".json") as f:
        catalogue = json.load(f)
    files, size, seconds = warm(music)
    warmed = f"page cache warmed before each round: every file of the tree read once ({files} files, {size / 1e6:.0f} MB)"
    log(f"{warmed}, {seconds:.1f} s")
    results = {"Reel": [], "MPD": []}
    loads = []
    for round in range(rounds):
        order = ["MPD", "Reel"] if round % 2 == 0 else ["Reel", "MPD"]
        for name in order:
            warm(music)
            loads.append(load_average().split()[0])
            daemon = MPD(work, music, round) if name == "MPD" else Reel(o["reeld"], work, music, round)
            try:
                result = measure_one(daemon, catalogue, count)
            finally:
                daemon.stop()
            results[name].append(result)
            q = result["queries"]
            log(f"round {round + 1}/{rounds} {name}: first index {result['index'][0]:.2f} s, "
                f"CPU {result['index'][1]:.2f} s ({result['counts']}); "
                f"restart {result['restart'][0]:.3f} s ({result['restart counts']}); "
                f"RSS {result['memory'][0] / 1024:.1f} MB; db {result['db'][0] / 1e6:.1f} MB; "
                f"list Album {q['list Album'][0] or q['list Album'][1]}")
    print_table(results, rounds, count, warmed, catalogue, loads)


def print_table(results, rounds, count, warmed, catalogue, loads):
    reel, mpd = results["Reel"], results["MPD"]

    def ratio(r, m):
        r, m = [v for v in r if v is not None], [v for v in m if v is not None]
        return f"{statistics.median(r) / statistics.median(m):.2f}×" if r and m and statistics.median(m) else "–"

    rows = []

    def row(figure, r, m, target="", met=None, digits=3, unit=""):
        verdict = "" if met is None else ("yes" if met else "**no**")
        rows.append((figure, spread(r, digits, unit), spread(m, digits, unit), ratio(r, m), target, verdict))

    def med(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    ri, mi = [x["index"][0] for x in reel], [x["index"][0] for x in mpd]
    row("first full index, s (Reel: process start to scan end; MPD: `update` to its end)", ri, mi,
        "≤ 1.0× MPD", med(ri) <= med(mi))
    row("  CPU time of it, s (the process CPU clock over the same span)", [x["index"][1] for x in reel],
        [x["index"][1] for x in mpd])
    row("  from the process's start (MPD: its start, then `update`), s", [x["index"][2] for x in reel],
        [x["index"][2] for x in mpd])
    rr, mr = [x["restart"][0] for x in reel], [x["restart"][0] for x in mpd]
    row("restart, nothing changed: start to ready, s", rr, mr, "≤ 1 s and ≤ MPD",
        med(rr) <= 1.0 and med(rr) <= med(mr))
    row("  MPD's `update` alone after its restart, s", [None], [x["restart"][1] for x in mpd])
    row("  CPU time from the start to ready, s", [x["restart"][2] for x in reel], [x["restart"][2] for x in mpd])
    rm = [x["memory"][0] / 1024 for x in reel]
    mm = [x["memory"][0] / 1024 for x in mpd]
    row("RSS (VmRSS) after indexing, MB", rm, mm, "≤ MPD", med(rm) <= med(mm), 1)
    row("  Pss after indexing, MB", [x["memory"][2] / 1024 for x in reel if x["memory"][2]],
        [x["memory"][2] / 1024 for x in mpd if x["memory"][2]], digits=1)
    row("  peak RSS (VmHWM) by then, MB", [x["memory"][1] / 1024 for x in reel], [x["memory"][1] / 1024 for x in mpd],
        digits=1)
    row("  RSS after the queries, MB", [x["memory after queries"][0] / 1024 for x in reel],
        [x["memory after queries"][0] / 1024 for x in mpd], digits=1)
    row("database size after indexing, MB (Reel: library.sqlite + -wal + -shm; MPD: db_file, gzip)",
        [x["db"][0] / 1e6 for x in reel], [x["db"][0] / 1e6 for x in mpd], digits=2)
    row("  Reel's files after the restart and a clean stop, MB", [x["db stopped"][0] / 1e6 for x in reel], [None],
        digits=2)
    for key, label in (("list Album", "`list Album`"), ("search artist", '`search artist "<artist>"`'),
                       ("find album", '`find album "<album>"`')):
        acks = [x["queries"][key][1] for x in reel if x["queries"][key][1]]
        # A reply without a song of the music folders is not the same query: not compared.
        empty = [x for x in reel if x["queries"][key][0] and x["queries"][key][2] == 0]
        if empty and not acks and any(x["queries"][key][2] for x in mpd):
            acks = ["answered with no song of the music folders"]
        for index, which in ((0, "p50"), (1, "p99")):
            r = [x["queries"][key][0][index] for x in reel if x["queries"][key][0] and x["queries"][key][2]]
            m = [x["queries"][key][0][index] for x in mpd if x["queries"][key][0]]
            target = "≤ 5 ms" if which == "p99" else ""
            met = (med(r) <= 5.0) if (which == "p99" and r) else None
            if acks and not r:
                rows.append((f"MPD protocol {label} {which}, ms", f"n/a ({acks[0][:60]})", spread(m), "–", target,
                             "" if which == "p50" else "not measured"))
            else:
                row(f"MPD protocol {label} {which}, ms", r, m, target, met)
        what = "albums listed" if key == "list Album" else "songs"
        rows.append((f"  {what} in the {count} timed replies, last round",
                     str(reel[-1]["queries"][key][2]), str(mpd[-1]["queries"][key][2]), "", "", ""))
    for key, label in (("music.albums", "JSON-RPC `music.albums` (all albums)"),
                       ("music.search", 'JSON-RPC `music.search {text: "<artist>"}`')):
        for index, which in ((0, "p50"), (1, "p99")):
            r = [x["queries"][key][0][index] for x in reel if x["queries"][key][0]]
            if not r:
                acks = [x["queries"][key][1] for x in reel]
                rows.append((f"{label} {which}, ms", f"n/a ({acks[0]})", "–", "–", "", ""))
            else:
                row(f"{label} {which}, ms", r, [None])
        rows.append((f"  {'albums' if key == 'music.albums' else 'tracks'} in the {count} timed replies, last round",
                     str(reel[-1]["queries"][key][2]), "", "", "", ""))

    albums = len(catalogue["albums"])
    artists = len({a["artist"] for a in catalogue["albums"]})
    print()
    print(f"Music index, {catalogue['files']} files ({albums} album folders, {artists} artists) on the same tree, "
          f"{rounds} round(s) A/B, median (min–max); {count} queries of each kind after 20 unmeasured")
    print(warmed)
    print(f"Reel's scan, last round: first {reel[-1]['counts']}; restart {reel[-1]['restart counts']}")
    print(f"MPD's stats, last round: {mpd[-1]['counts']}")
    print(f"database files after the first index, last round: Reel {reel[-1]['db'][1]} MB; "
          f"after the restart and a clean stop {reel[-1]['db stopped'][1]} MB; MPD db_file {mpd[-1]['db'][0] / 1e6:.2f} MB")
    print(f"MPD protocol: `list Album` replies: Reel {reel[-1]['queries']['list Album answer']}, "
          f"MPD {mpd[-1]['queries']['list Album answer']}")
    print(f"load average (1 min) at the start of each daemon's turn: {', '.join(loads)}")
    head = ("figure", "Reel", "MPD", "Reel/MPD", "target", "met")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(6)]
    for r in [head, tuple("-" * w for w in widths)] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("generate", "measure"):
        fail("usage: music.py generate|measure ...")
    {"generate": generate, "measure": measure}[sys.argv[1]](sys.argv[2:])
