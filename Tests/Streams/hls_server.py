"""A small live HLS server on loopback for the stream tests (issue 26).

Importable from any test (put Tests/Streams on sys.path):

    from hls_server import HLSServer
    with HLSServer(workdir) as hls:            # makes the segments once (ffmpeg), serves on 127.0.0.1
        hls.url("master.m3u8")                 # master: the three audio variants below
        hls.url("ts/live.m3u8")                # live sliding window of MPEG-TS segments (AAC-LC)
        hls.url("fmp4/live.m3u8")              # fragmented MP4 segments with EXT-X-MAP init.mp4
        hls.url("adts/live.m3u8")              # raw ADTS AAC segments, each after an ID3 tag
                                               # whose TIT2 is "Segment N" (timed metadata)
        hls.url("ts/vod.m3u8")                 # every segment once, EXT-X-ENDLIST (finite)
        hls.url("tsid3/live.m3u8")             # the TS segments with a timed-ID3 stream: at each
                                               # segment's first PTS a TIT2 "Segment N", except
                                               # pool segment 3, whose tag is broken (even
                                               # segments' in metadata access units, odd bare)
                                               # (also tsid3/vod.m3u8; not in the master)
        hls.restart()                          # the encoder restarts: media sequence back to 0
        hls.freeze(True)                       # the playlist stops changing (a stalled packager)
        hls.jump(20)                           # 20 segments pass at once (they are never listed)
        hls.url("ts/live")                     # the TS playlist without the .m3u8 suffix (by its type)
        hls.url("encrypted.m3u8")              # a media playlist with EXT-X-KEY METHOD=AES-128
        hls.url("ts/vod-lost.m3u8")            # the VOD list and two more segments that are 404

As a program (`hls_server.py --dir D`) it prints `PORT <n>` and serves until killed; the controls
are then GET /control/restart, /control/freeze?on=1|0, /control/jump?n=N, and /control/requests
(the paths asked so far, one a line).

How it works: ffmpeg encodes SIGNAL (440 Hz left, 660 Hz right, as icecast.py) once into a pool
of `pool_seconds` of segments per variant (`-f hls` for TS and fMP4, `-f segment` for ADTS, all
`segment_seconds` long). The live playlists are a window of `window` segments whose edge moves
one segment per segment duration of wall time, from sequence `window - 1` at start; sequence N
plays pool segment N mod pool size, and an EXT-X-DISCONTINUITY marks each wrap (timestamps start
over). A segment is served while it is listed and for `window` more segments after (as a CDN keeps
it a while); later, or before it was listed, it is 404 (except the pool's own, sequence 0 to its
size - 1, which the VOD playlist lists: they are there from the start). Requests are counted in `requests` (path
strings, in order) so a test can see what a client fetched. Only loopback; `stop()` ends only
this server's thread.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from ts_timed_id3 import first_audio_pts, with_timed_id3

SIGNAL = "sine=frequency=440:sample_rate=44100[l];sine=frequency=660:sample_rate=44100[r];[l][r]amerge=inputs=2"

VARIANTS = {
    # name: (segment suffix, content type, codecs, bandwidth)
    "ts": ("ts", "video/mp2t", "mp4a.40.2", 80_000),
    "fmp4": ("m4s", "video/iso.segment", "mp4a.40.2", 72_000),
    "adts": ("aac", "audio/aac", "mp4a.40.2", 66_000),
}


def make_pool(root: Path, variant: str, pool_seconds: int, segment_seconds: int) -> list[tuple[Path, float]]:
    """Encodes the pool of one variant under root/variant; returns (file, duration) per segment."""
    out = root / variant
    out.mkdir(parents=True, exist_ok=True)
    base = ["ffmpeg", "-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-f", "lavfi", "-i", SIGNAL,
            "-t", str(pool_seconds), "-c:a", "aac", "-b:a", "64k"]
    if variant == "ts":
        args = base + ["-f", "hls", "-hls_time", str(segment_seconds), "-hls_playlist_type", "vod",
                       "-hls_segment_filename", str(out / "pool%03d.ts"), str(out / "pool.m3u8")]
    elif variant == "fmp4":
        args = base + ["-f", "hls", "-hls_time", str(segment_seconds), "-hls_playlist_type", "vod",
                       "-hls_segment_type", "fmp4", "-hls_fmp4_init_filename", "init.mp4",
                       "-hls_segment_filename", str(out / "pool%03d.m4s"), str(out / "pool.m3u8")]
    elif variant == "adts":
        args = base + ["-f", "segment", "-segment_time", str(segment_seconds), "-segment_format", "adts",
                       "-segment_list", str(out / "pool.m3u8"), "-segment_list_type", "m3u8",
                       str(out / "pool%03d.aac")]
    else:
        raise ValueError(variant)
    subprocess.run(args, check=True)
    segments = []
    duration = None
    for line in (out / "pool.m3u8").read_text().splitlines():
        if line.startswith("#EXTINF:"):
            duration = float(line[len("#EXTINF:"):].split(",")[0])
        elif line and not line.startswith("#") and duration is not None:
            segments.append((out / Path(line).name, duration))
            duration = None
    if not segments:
        raise RuntimeError(f"ffmpeg made no {variant} segments in {out}")
    return segments


def syncsafe(value: int) -> bytes:
    return bytes([(value >> 21) & 0x7F, (value >> 14) & 0x7F, (value >> 7) & 0x7F, value & 0x7F])


def id3_title(title: str, seconds: float) -> bytes:
    """A packed-audio segment's ID3v2.4 tag (RFC 8216, 3.4): the PRIV timestamp of its first
    sample (90 kHz) and a TIT2 frame (UTF-8), the title on air."""
    owner = b"com.apple.streaming.transportStreamTimestamp\x00"
    priv = owner + (round(seconds * 90000) & ((1 << 33) - 1)).to_bytes(8, "big")
    text = b"\x03" + title.encode()
    frames = (b"PRIV" + syncsafe(len(priv)) + b"\x00\x00" + priv
              + b"TIT2" + syncsafe(len(text)) + b"\x00\x00" + text)
    return b"ID3\x04\x00\x00" + syncsafe(len(frames)) + frames


def timed_id3_tag(sequence: int, pool_size: int) -> bytes:
    """The timed-ID3 tag of a tsid3 segment: TIT2 "Segment N"; pool segment 3's is broken (its
    TIT2 frame claims more bytes than the tag holds), for a client to skip."""
    if sequence % pool_size == 3:
        text = b"\x03Broken"
        return b"ID3\x04\x00\x00" + syncsafe(10 + len(text)) + b"TIT2" + syncsafe(0x3FFF) + b"\x00\x00" + text
    text = b"\x03" + f"Segment {sequence}".encode()
    return b"ID3\x04\x00\x00" + syncsafe(10 + len(text)) + b"TIT2" + syncsafe(len(text)) + b"\x00\x00" + text


class HLSServer:
    def __init__(self, workdir: Path, window: int = 6, segment_seconds: int = 2, pool_seconds: int = 20):
        self.dir = Path(workdir)
        self.window = window
        self.segment_seconds = segment_seconds
        self.pool_seconds = pool_seconds
        self.pools: dict[str, list[tuple[Path, float]]] = {}
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.httpd: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None
        self._origin = 0.0       # monotonic time at which sequence `_base` became the edge
        self._base = window - 1  # the edge sequence at _origin
        self._frozen_edge: int | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> "HLSServer":
        for variant in VARIANTS:
            self.pools[variant] = make_pool(self.dir, variant, self.pool_seconds, self.segment_seconds)
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self):
                server._serve(self)

            def do_HEAD(self):
                server._serve(self, head=True)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._origin = time.monotonic()
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="hls-server", daemon=True)
        self.thread.start()
        return self

    def stop(self):
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()
            self.httpd = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"

    # -- controls -------------------------------------------------------------------------------

    def edge(self) -> int:
        """The sequence number of the newest listed segment now."""
        with self.lock:
            if self._frozen_edge is not None:
                return self._frozen_edge
            return self._base + int((time.monotonic() - self._origin) // self.segment_seconds)

    def restart(self):
        """The packager restarts: the next playlist starts again at sequence 0 (window from 0)."""
        with self.lock:
            self._base = self.window - 1
            self._origin = time.monotonic()
            if self._frozen_edge is not None:
                self._frozen_edge = self._base

    def freeze(self, frozen: bool):
        """Stops (or resumes) the playlists' changes: a stalled packager."""
        edge = self.edge()
        with self.lock:
            if frozen:
                self._frozen_edge = edge
            else:
                self._frozen_edge = None
                self._base = edge
                self._origin = time.monotonic()

    def jump(self, segments: int):
        """`segments` segments pass at once: a client that reloads next has missed them."""
        with self.lock:
            self._base += segments
            if self._frozen_edge is not None:
                self._frozen_edge += segments

    # -- playlists ------------------------------------------------------------------------------

    def master(self) -> str:
        lines = ["#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-INDEPENDENT-SEGMENTS"]
        for name, (_, _, codecs, bandwidth) in VARIANTS.items():
            lines += [f'#EXT-X-STREAM-INF:BANDWIDTH={bandwidth},CODECS="{codecs}"', f"{name}/live.m3u8"]
        return "\n".join(lines) + "\n"

    def media(self, variant: str, live: bool, lost: bool = False) -> str:
        pool = self.pools["ts" if variant == "tsid3" else variant]
        suffix = "ts" if variant == "tsid3" else VARIANTS[variant][0]
        if live:
            last = self.edge()
            first = max(0, last - self.window + 1)
        else:
            first, last = 0, len(pool) - 1
        target = math.ceil(max(d for _, d in pool))
        lines = ["#EXTM3U", f"#EXT-X-VERSION:{7 if variant == 'fmp4' else 3}", f"#EXT-X-TARGETDURATION:{target}",
                 f"#EXT-X-MEDIA-SEQUENCE:{first}", f"#EXT-X-DISCONTINUITY-SEQUENCE:{first // len(pool)}"]
        if not live:
            lines.append("#EXT-X-PLAYLIST-TYPE:VOD")
        if variant == "fmp4":
            lines.append('#EXT-X-MAP:URI="init.mp4"')
        for sequence in range(first, last + 1):
            if sequence != first and sequence % len(pool) == 0:
                lines.append("#EXT-X-DISCONTINUITY")
            _, duration = pool[sequence % len(pool)]
            lines += [f"#EXTINF:{duration:.6f},", f"seg{sequence}.{suffix}"]
        if lost:
            for sequence in range(len(pool), len(pool) + 2):
                lines += [f"#EXTINF:{pool[0][1]:.6f},", f"seg{sequence + 1000}.{suffix}"]
        if not live:
            lines.append("#EXT-X-ENDLIST")
        return "\n".join(lines) + "\n"

    # -- HTTP -----------------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler, head: bool = False):
        path = handler.path.split("?", 1)[0]
        with self.lock:
            self.requests.append(path)
        body, content_type = None, None
        if path == "/master.m3u8":
            body, content_type = self.master().encode(), "application/vnd.apple.mpegurl"
        elif path.startswith("/control/"):
            query = dict(p.split("=", 1) for p in handler.path.partition("?")[2].split("&") if "=" in p)
            if path == "/control/requests":
                with self.lock:
                    body = "\n".join(self.requests).encode() + b"\n"
                content_type = "text/plain"
            elif path == "/control/restart":
                self.restart()
            elif path == "/control/freeze":
                self.freeze(query.get("on", "1") == "1")
            elif path == "/control/jump":
                self.jump(int(query.get("n", "1")))
            if body is None:
                body, content_type = b"ok\n", "text/plain"
        elif path == "/encrypted.m3u8":
            text = self.media("ts", live=True).replace(
                "#EXT-X-DISCONTINUITY-SEQUENCE", '#EXT-X-KEY:METHOD=AES-128,URI="key.bin"\n#EXT-X-DISCONTINUITY-SEQUENCE', 1)
            body, content_type = text.replace("seg", "ts/seg").encode(), "application/vnd.apple.mpegurl"
        else:
            match = re.fullmatch(r"/(ts|tsid3|fmp4|adts)/(live\.m3u8|live|vod\.m3u8|vod-lost\.m3u8|init\.mp4|seg(\d+)\.(ts|m4s|aac))", path)
            if match:
                variant, name, number = match.group(1), match.group(2), match.group(3)
                if name in ("live.m3u8", "live", "vod.m3u8", "vod-lost.m3u8"):
                    body = self.media(variant, live=name.startswith("live"), lost=name == "vod-lost.m3u8").encode()
                    content_type = "application/vnd.apple.mpegurl"
                elif name == "init.mp4" and variant == "fmp4":
                    body, content_type = (self.dir / "fmp4" / "init.mp4").read_bytes(), "video/mp4"
                elif number is not None and match.group(4) == VARIANTS["ts" if variant == "tsid3" else variant][0]:
                    sequence = int(number)
                    edge = self.edge()
                    pool = self.pools["ts" if variant == "tsid3" else variant]
                    # Listed now, or expired less than a window ago; or any of the VOD list (all
                    # of it exists from the start).
                    if sequence < len(pool) or edge - 2 * self.window < sequence <= edge:
                        body = pool[sequence % len(pool)][0].read_bytes()
                        if variant == "adts":
                            # Packed audio starts with its timed metadata: the title on air.
                            start = sum(d for _, d in pool) * (sequence // len(pool)) + sum(
                                d for _, d in pool[:sequence % len(pool)])
                            body = id3_title(f"Segment {sequence}", start) + body
                        elif variant == "tsid3":
                            # Timed metadata in a stream of its own: the title from the
                            # segment's first audio on.
                            # Even segments' tags in H.222.0's metadata access units, odd ones bare.
                            tag = timed_id3_tag(sequence, len(pool))
                            body = with_timed_id3(body, [(first_audio_pts(body), tag, sequence % 2 == 0)])
                        content_type = VARIANTS["ts" if variant == "tsid3" else variant][1]
        if body is None:
            handler.send_response(404)
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        handler.send_header("Cache-Control", "no-cache")
        handler.end_headers()
        if not head:
            handler.wfile.write(body)


def main():
    import argparse
    import sys
    parser = argparse.ArgumentParser(description="A live HLS server on loopback for the stream tests.")
    parser.add_argument("--dir", required=True, help="where the segments are made")
    parser.add_argument("--window", type=int, default=6)
    parser.add_argument("--segment-seconds", type=int, default=2)
    parser.add_argument("--pool-seconds", type=int, default=20)
    arguments = parser.parse_args()
    server = HLSServer(Path(arguments.dir), window=arguments.window, segment_seconds=arguments.segment_seconds,
                       pool_seconds=arguments.pool_seconds).start()
    print(f"PORT {server.port}", flush=True)
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.stop()
    sys.exit(0)


if __name__ == "__main__":
    main()
