"""The measuring half of bench/playlists (the shell half installs, builds and starts nothing
else): a stored playlist of N entries (default 10,000) in MPD's format, in the playlist
directory of an MPD and of a reeld that share one music folder of short generated FLAC files.
Over the MPD protocol (a Unix socket, one connection, the same client for both), each round:
`clear`, then `load big` timed from the request to its OK (Reel answers once the queue it left
is saved: `load` includes saving the queue state), then `listplaylistinfo big` timed to the
whole reply. The rounds run twice: with the same file every round ("again": Reel keeps what it
read of the last playlist while the file and the library are unchanged), then with the file
written again just before each command ("just written": every entry looked up, the first time
a playlist is read). Prints the median and best of the rounds for each and Reel's time as a
share of MPD's. Every process started here is stopped by its PID on the way out.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from measuring import MPDClient, load_average, start_mpd, stop_process, wait_for, write_mpd_config


def log(text):
    print(f"[bench/playlists {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


def fail(message):
    log(message)
    sys.exit(1)


def flac_with_tags(template, tags):
    """The FLAC file `template` (STREAMINFO first) with its other metadata blocks replaced by one
    Vorbis comment block holding `tags` (name, value pairs)."""
    assert template[:4] == b"fLaC"
    streaminfo_length = int.from_bytes(template[5:8], "big")
    streaminfo = template[4:8 + streaminfo_length]
    position = 4
    while True:
        header = template[position]
        position += 4 + int.from_bytes(template[position + 1:position + 4], "big")
        if header & 0x80:
            break
    vendor = b"reel bench"
    comments = [f"{name}={value}".encode() for name, value in tags]
    body = (len(vendor).to_bytes(4, "little") + vendor + len(comments).to_bytes(4, "little")
            + b"".join(len(c).to_bytes(4, "little") + c for c in comments))
    return (b"fLaC" + bytes([streaminfo[0] & 0x7f]) + streaminfo[1:]
            + bytes([0x80 | 4]) + len(body).to_bytes(3, "big") + body + template[position:])


def make_flac_files(music, paths):
    """One second of sine from sox, written under each of `paths` (relative to `music`) with its
    own TITLE, ARTIST and ALBUM (from the path's numbers): thousands of files in seconds. A file
    already there with the same bytes is left alone (a --work folder can be reused)."""
    template_path = os.path.join(music, ".template.flac")
    os.makedirs(music, exist_ok=True)
    subprocess.run(["sox", "-n", "-r", "44100", "-c", "2", "-b", "16", template_path, "synth", "1", "sine", "440"],
                   check=True)
    with open(template_path, "rb") as f:
        template = f.read()
    os.unlink(template_path)
    for index, relative in enumerate(paths):
        data = flac_with_tags(template, [("TITLE", f"Track {index}"), ("ARTIST", f"Artist {index // 20}"),
                                         ("ALBUM", f"Album {index // 10}")])
        path = os.path.join(music, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, "rb") as f:
                if f.read() == data:
                    continue
        except FileNotFoundError:
            pass
        with open(path, "wb") as f:
            f.write(data)


class Server:
    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)
        self.playlists = os.path.join(directory, "playlists")
        os.makedirs(self.playlists, exist_ok=True)
        self.socket = os.path.join(directory, "mpd.sock")
        self.process = None

    def connect(self):
        if self.process.poll() is not None:
            fail(f"{self.name} exited: see {self.dir}")
        try:
            return MPDClient(self.socket, fail=fail)
        except OSError:
            return None

    def songs(self):
        stats = dict(l.decode().split(": ", 1) for l in self.client.ok("stats"))
        status = dict(l.decode().split(": ", 1) for l in self.client.ok("status"))
        return int(stats["songs"]) if "updating_db" not in status else -1

    def cpu_seconds(self):
        """CPU time the server has used so far (utime + stime from /proc/PID/stat)."""
        with open(f"/proc/{self.process.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stop(self):
        stop_process(self.process)


class MPD(Server):
    name = "MPD"

    def start(self, music):
        conf = write_mpd_config(self.dir, music, self.playlists, self.socket)
        self.process = start_mpd(conf, self.dir)
        self.client = wait_for(self.connect, 60, "MPD to answer", fail, interval=0.05)
        self.client.ok("update")


class Reel(Server):
    name = "Reel"

    def __init__(self, directory, name="Reel"):
        super().__init__(directory)
        self.name = name

    def start(self, music, binary):
        conf = os.path.join(self.dir, "reeld.toml")
        with open(conf, "w") as f:
            f.write(f"music_dirs = [{json.dumps(music)}]\nplaylist_dir = {json.dumps(self.playlists)}\n")
        # Through a link of another name: a `pkill reeld` elsewhere cannot stop it mid-run.
        link = os.path.join(self.dir, "reel-daemon")
        os.symlink(binary, link)
        self.process = subprocess.Popen(
            [link, "--config", conf, "--socket", os.path.join(self.dir, "reel.sock"),
             "--data-dir", os.path.join(self.dir, "data"), "--device", "null", "--mpd-listen", self.socket,
             "--http-listen", "none", "--log-level", "warning"],
            stdin=subprocess.DEVNULL, stdout=open(os.path.join(self.dir, "log"), "ab"), stderr=subprocess.STDOUT)
        self.client = wait_for(self.connect, 60, "reeld to answer", fail, interval=0.05)


def main():
    parser = argparse.ArgumentParser()
    # Given more than once: each reeld in turn against the same MPD in one run (before/after).
    parser.add_argument("--reeld", required=True, action="append")
    parser.add_argument("--work", required=True)
    parser.add_argument("--entries", type=int, default=10000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    # Each round starts with a rescan (`update`, waited out, outside the timing and the CPU
    # counts): nothing a server kept from the index before it (Reel's listing of the last
    # playlist read) is taken.
    parser.add_argument("--rescan", action="store_true")
    args = parser.parse_args()

    music = os.path.join(args.work, "music")
    log(f"making {args.files} short FLAC files")
    paths = [f"Artist {index // 20:02d}/Album {index // 10:03d}/{index % 10 + 1:02d} Track {index}.flac"
             for index in range(args.files)]
    make_flac_files(music, paths)
    playlist = "".join(paths[i % len(paths)] + "\n" for i in range(args.entries)).encode()

    reels = [Reel(os.path.join(args.work, "reel" if index == 0 else f"reel{index + 1}"),
                  "Reel" if len(args.reeld) == 1 else f"Reel {index + 1}")
             for index in range(len(args.reeld))]
    servers = [MPD(os.path.join(args.work, "mpd"))] + reels
    try:
        servers[0].start(music)
        for reel, binary in zip(reels, args.reeld):
            reel.start(music, binary)
        for server in servers:
            wait_for(lambda: server.songs() == args.files, 300, f"{server.name} to index the {args.files} files", fail, interval=0.05)
            with open(os.path.join(server.playlists, "big.m3u"), "wb") as f:
                f.write(playlist)
        results = {}
        for server in servers:
            big = os.path.join(server.playlists, "big.m3u")
            # A connection of its own, opened now: one left idle through the other servers'
            # rounds would be closed by the 60 s timeout (MPD's `connection_timeout`, Reel's).
            server.client.close()
            server.client = wait_for(server.connect, 60, f"{server.name} to answer", fail, interval=0.05)

            def rewrite():
                # The same bytes written again: a file changed this instant, which Reel reads
                # whole and looks up in its index again (nothing kept from a last read is taken).
                with open(big, "wb") as f:
                    f.write(playlist)

            results[server.name] = {}
            # "again": the same playlist, unchanged, each round (what a client that lists or
            # loads one playlist over and over sees); "new": the file written just before each
            # command (the first time a playlist is read: every entry looked up).
            for mode in ("again", "new"):
                loads, lists = [], []
                cpu = {"load": 0.0, "listplaylistinfo": 0.0}
                for _ in range(args.rounds):
                    if args.rescan:
                        server.client.ok("update")
                        wait_for(lambda: "updating_db" not in dict(l.decode().split(": ", 1) for l in server.client.ok("status")),
                                 120, f"{server.name}'s rescan to end", fail, interval=0.02)
                    if mode == "new":
                        rewrite()
                    before = server.cpu_seconds()
                    server.client.ok("clear")
                    ms, _ = server.client.timed("load big")
                    length = int(dict(l.decode().split(": ", 1) for l in server.client.ok("status"))["playlistlength"])
                    if length != args.entries:
                        fail(f"{server.name}: load big left {length} entries, not {args.entries}")
                    loads.append(ms)
                    middle = server.cpu_seconds()
                    cpu["load"] += middle - before
                    if mode == "new":
                        rewrite()
                        middle = server.cpu_seconds()
                    ms, lines = server.client.timed("listplaylistinfo big")
                    files = sum(1 for l in lines if l.startswith(b"file: "))
                    if files != args.entries:
                        fail(f"{server.name}: listplaylistinfo big listed {files} songs, not {args.entries}")
                    lists.append(ms)
                    cpu["listplaylistinfo"] += server.cpu_seconds() - middle
                server.client.ok("clear")
                # The server's CPU time over `clear`, `load` and `status`, then over
                # `listplaylistinfo`, per round (in clock ticks: summed over the rounds; work after
                # a reply, as Reel's compaction, counts where it ran).
                results[server.name][mode] = {"load": loads, "listplaylistinfo": lists,
                                              "cpu": {k: v * 1000 / args.rounds for k, v in cpu.items()}}
                log(f"{server.name} ({mode}): load {[round(v, 1) for v in loads]} ms, "
                    f"listplaylistinfo {[round(v, 1) for v in lists]} ms")
    finally:
        for server in servers:
            server.stop()

    print(f"\nA stored playlist of {args.entries} entries ({args.files} distinct FLAC files of the music folder, in turn), "
          f"{args.rounds} rounds{', each after a rescan' if args.rescan else ''}; "
          f"ms from request to the whole reply, one MPD-protocol connection on a Unix socket")
    print(f"{'':32}{'MPD p50':>10}{'MPD best':>10}{'Reel p50':>10}{'Reel best':>11}{'Reel/MPD':>10}")
    labels = {"again": "the same file again", "new": "the file just written"}
    for reel_server, binary in zip(reels, args.reeld):
        if len(reels) > 1:
            print(f"{reel_server.name}: {binary}")
        for mode in ("new", "again"):
            for operation in ("load", "listplaylistinfo"):
                mpd, reel = results["MPD"][mode][operation], results[reel_server.name][mode][operation]
                ratio = statistics.median(reel) / statistics.median(mpd)
                label = f"{operation}, {labels[mode]}"
                print(f"{label:32}{statistics.median(mpd):10.1f}{min(mpd):10.1f}{statistics.median(reel):10.1f}"
                      f"{min(reel):11.1f}{ratio:9.2f}x")
    for mode in ("new", "again"):
        print(f"CPU per round ({labels[mode]}), clear + load + status / listplaylistinfo: "
              + ", ".join(f"{name} {result[mode]['cpu']['load']:.1f} / {result[mode]['cpu']['listplaylistinfo']:.1f} ms"
                          for name, result in results.items()))
    print(f"(load includes Reel saving the queue's state before it answers; load average {load_average()})")


if __name__ == "__main__":
    main()
