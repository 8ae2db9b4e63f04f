#!/usr/bin/env python3
"""A loopback HTTP(S) server of streams for Reel's tests: what Icecast will not do on command.

Paths (GET; HEAD answers the same headers):
  /live.mp3          an endless MP3 stream (the fixture looped), no Content-Length, paced at
                     `pace` times its bitrate after a first burst; `icy-name` is sent, and with
                     `Icy-MetaData: 1` ICY metadata every `metaint` bytes (`StreamTitle` from
                     `titles`, the next one every `title_every` blocks, or `set_title`).
  /file.mp3          the fixture as a finite file: Content-Length, Accept-Ranges: bytes, Range.
  /norange.mp3       the fixture with Content-Length but no ranges (a Range is ignored: 200).
  /drop/N/PATH       PATH, but the connection is closed after N bytes of body (each time).
  /stall/N/PATH      PATH, but after N bytes nothing more is sent (the socket stays open).
  /pause/N/S/PATH    a live PATH, but after N bytes of body nothing is sent for S seconds (the
                     socket stays open), then it goes on, sending at once what became due
                     meanwhile (as a server held up for S seconds does), then paced again.
  /trickle/PATH      PATH, one byte a second.
  /redirect/N/PATH   N redirects (302) before PATH; /redirect-to?url=U redirects to U.
  /hold/PATH         the connection is accepted and the request read, and nothing is ever
                     answered (until /control/drop, the server stops or the client closes):
                     a server that holds. /control/stats' "held" counts those held now.
  /list.m3u, /list.pls, /list.xspf
                     station playlists listing this server's /live.mp3 then /file.mp3 (with
                     titles "Live" and "File"; the M3U also a file:// line, skipped by readers).
  /list-typed        the PLS under a name without a suffix, as audio/x-scpls.
  /hls.m3u8          an HLS media playlist (#EXT-X-TARGETDURATION): a stream, not a list.
  /status/CODE       that status with a short text body (404, 500, ...).
  /html              a web page (text/html) with status 200.
  /text              a text/plain body of 64 KiB that is no audio.
  /live/NAME         an endless stream of the fixture NAME (`--fixture NAME=PATH=SECONDS`: AAC,
                     Ogg Vorbis/Opus, FLAC, MP4 made by ffmpeg, a silent HE-AAC made by hand,
                     see `make_fixture`), looped,
                     paced at its own bitrate after the first burst, with ICY as /live.mp3;
                     its Content-Type from its suffix (.aac audio/aac, .ogg/.opus audio/ogg,
                     .flac audio/flac, .m4a audio/mp4).
  /file/NAME         the fixture NAME as a finite file (Content-Length, Range).
  /as/TYPE/PATH      PATH, but sent with the Content-Type TYPE (URL-escaped: a lying server).
  /garbage           endless random bytes as audio/aac, unpaced (as fast as the client reads).
  /noise/N/PATH      PATH (a live stream), but after N bytes of body random bytes for ever, unpaced.
With `--shared-clock` the live streams keep one timeline, as a broadcast
does: each connection starts `burst` bytes (`--burst`, 64 KiB by default, as Icecast's
burst-on-connect) behind live, so one made after a short drop repeats the end of what the
last one sent.
Control (any client): /control/drop closes every body being sent now; /control/title?t=T sets
the title on air; /control/stats answers JSON counters (connections, ranges asked, and `late`:
each time a paced live stream fell more than a second behind its schedule, `[since, seconds]`
on the server's monotonic clock: a gap the server made, held up itself or by a client that
did not read).

Use it from Python (`StreamServer(...).start()`, `.port`, `.url(path)`, `.drop_all()`,
`.set_title(t)`, `.stop()`) or as a program: `stream_server.py --port 0 [--tls-cert C
--tls-key K] [--mp3 FILE]` prints `PORT <n>` on its first line and serves until killed.
`make_mp3(path, seconds)` makes a fixture with ffmpeg (a sine, 128 kbit/s, no tags);
`make_test_ca(directory)` makes a CA and a certificate for 127.0.0.1/localhost with openssl.
Loopback only: it binds 127.0.0.1.
"""

import argparse
import json
import os
import select
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


# A paced live stream more than this many seconds behind its schedule is noted as late
# (`stats["late"]`): a gap on the server's side (held up itself, or by a client not reading).
LATE_SECONDS = 1.0


def make_mp3(path, seconds=5, frequency=440, bitrate="128k", rate=44100):
    """An MP3 of a sine, CBR, without ID3 or Xing tags (it loops cleanly)."""
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"sine=frequency={frequency}:duration={seconds}:sample_rate={rate}",
         "-ac", "2", "-c:a", "libmp3lame", "-b:a", bitrate, "-id3v2_version", "0",
         "-write_xing", "0", "-f", "mp3", path],
        check=True)
    return path


FIXTURE_TYPES = {".aac": "audio/aac", ".ogg": "audio/ogg", ".opus": "audio/ogg", ".flac": "audio/flac",
                 ".m4a": "audio/mp4", ".mp3": "audio/mpeg"}

FIXTURE_CODECS = {
    # kind: (suffix, ffmpeg arguments after the input)
    "aac": (".aac", ["-c:a", "aac", "-b:a", "128k", "-f", "adts"]),
    "vorbis": (".ogg", ["-c:a", "libvorbis", "-b:a", "128k", "-f", "ogg"]),
    "opus": (".opus", ["-c:a", "libopus", "-b:a", "96k", "-f", "ogg"]),
    "flac": (".flac", ["-c:a", "flac", "-f", "flac"]),
    "m4a": (".m4a", ["-c:a", "aac", "-b:a", "128k", "-movflags", "+faststart", "-f", "mp4"]),
}


def make_implicit_he_aac(path, seconds):
    """A silent HE-AAC v2 stream made by hand (Debian's ffmpeg has no HE-AAC encoder): every
    ADTS header says AAC-LC, 22,050 Hz, mono; every frame holds a silent channel element and an
    SBR extension (implicit signalling, no SBR header), so a decoder puts out 44,100 Hz stereo
    (SBR doubles the rate, parametric stereo the channels), 2048 frames per ADTS frame."""
    def bits(value, width):
        return format(value, f"0{width}b")

    def packed(text):
        text += "0" * (-len(text) % 8)
        return bytes(int(text[i:i + 8], 2) for i in range(0, len(text), 8))

    # SCE 0: global gain 100, long window, max_sfb 0, no pulse/TNS/gain control: silence.
    sce = bits(0, 3) + bits(0, 4) + bits(100, 8) + "0" + bits(0, 2) + "0" + bits(0, 6) + "0" + "000"
    # FIL with one byte: extension type EXT_SBR_DATA (13), bs_header_flag 0, fill.
    fil = bits(6, 3) + bits(1, 4) + bits(13, 4) + "0000"
    payload = packed(sce + fil + bits(7, 3))
    length = 7 + len(payload)
    header = (bits(0xFFF, 12) + "0" + "00" + "1" + bits(1, 2) + bits(7, 4) + "0" + bits(1, 3) + "0000"
              + bits(length, 13) + bits(0x7FF, 11) + bits(0, 2))
    frames = max(1, round(seconds * 44100 / 2048))
    with open(path, "wb") as f:
        f.write((packed(header) + payload) * frames)
    return path


def make_fixture(directory, kind, seconds=5, frequency=440, rate=44100):
    """A sine of `seconds` encoded by ffmpeg as `kind` (FIXTURE_CODECS), or for `heaac` the
    silent stream of `make_implicit_he_aac`; returns its path."""
    if kind == "heaac":
        return make_implicit_he_aac(os.path.join(directory, "fixture-heaac.aac"), seconds)
    suffix, codec = FIXTURE_CODECS[kind]
    path = os.path.join(directory, f"fixture-{kind}{suffix}")
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
         f"sine=frequency={frequency}:duration={seconds}:sample_rate={rate}", "-ac", "2"] + codec + [path],
        check=True)
    return path


def make_test_ca(directory):
    """A test CA and a server certificate for 127.0.0.1 and localhost; returns (ca, cert, key)."""
    ca_key, ca = os.path.join(directory, "ca.key"), os.path.join(directory, "ca.pem")
    key, csr, cert = (os.path.join(directory, n) for n in ("server.key", "server.csr", "server.pem"))
    ext = os.path.join(directory, "server.ext")
    run = lambda *a: subprocess.run(a, check=True, capture_output=True)
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca,
        "-days", "2", "-subj", "/CN=Reel test CA")
    run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr,
        "-subj", "/CN=127.0.0.1")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n")
    run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
        "-out", cert, "-days", "2", "-extfile", ext)
    return ca, cert, key


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    @property
    def streams(self):
        return self.server.owner

    def do_HEAD(self):
        self.handle_request(head=True)

    def do_GET(self):
        self.handle_request(head=False)

    def handle_request(self, head):
        owner = self.streams
        parsed = urllib.parse.urlsplit(self.path)
        path, query = parsed.path, urllib.parse.parse_qs(parsed.query)
        with owner.lock:
            owner.stats["requests"] += 1
            owner.stats["paths"].append(self.path)
        try:
            self.route(path, query, head, drop_after=None, stall_after=None, trickle=False)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            pass

    def route(self, path, query, head, drop_after, stall_after, trickle):
        owner = self.streams
        parts = path.strip("/").split("/")
        if parts[0] == "control":
            if parts[1:] == ["drop"]:
                owner.drop_all()
                return self.small(200, "text/plain", b"dropped\n")
            if parts[1:] == ["title"]:
                owner.set_title(query.get("t", [""])[0])
                return self.small(200, "text/plain", b"ok\n")
            if parts[1:] == ["stats"]:
                with owner.lock:
                    body = json.dumps(owner.stats).encode()
                return self.small(200, "application/json", body)
        if parts[0] == "drop" and len(parts) >= 3:
            return self.route("/" + "/".join(parts[2:]), query, head, int(parts[1]), stall_after, trickle)
        if parts[0] == "stall" and len(parts) >= 3:
            return self.route("/" + "/".join(parts[2:]), query, head, drop_after, int(parts[1]), trickle)
        if parts[0] == "pause" and len(parts) >= 4:
            self.pause_after = (int(parts[1]), float(parts[2]))
            return self.route("/" + "/".join(parts[3:]), query, head, drop_after, stall_after, trickle)
        if parts[0] == "trickle" and len(parts) >= 2:
            return self.route("/" + "/".join(parts[1:]), query, head, drop_after, stall_after, True)
        if parts[0] == "redirect" and len(parts) >= 3:
            left = int(parts[1])
            target = "/" + "/".join(parts[2:]) if left <= 1 else f"/redirect/{left - 1}/" + "/".join(parts[2:])
            return self.redirect(target)
        if parts[0] == "redirect-to":
            return self.redirect(query.get("url", ["/"])[0])
        if parts[0] == "hold" and len(parts) >= 2:
            return self.hold()
        if path in ("/list.m3u", "/list.pls", "/list.xspf", "/list-typed", "/hls.m3u8"):
            return self.playlist(path)
        if parts[0] == "status" and len(parts) == 2:
            return self.small(int(parts[1]), "text/plain", b"no such stream\n")
        if path == "/html":
            return self.small(200, "text/html; charset=utf-8",
                              b"<!DOCTYPE html><html><body>Not a stream</body></html>\n")
        if path == "/text":
            return self.small(200, "text/plain", b"x" * 65536)
        if parts[0] == "noise" and len(parts) >= 3:
            self.noise_after = int(parts[1])
            return self.route("/" + "/".join(parts[2:]), query, head, drop_after, stall_after, trickle)
        if parts[0] == "as" and len(parts) >= 3:
            self.content_type = urllib.parse.unquote(parts[1])
            return self.route("/" + "/".join(parts[2:]), query, head, drop_after, stall_after, trickle)
        if path == "/garbage":
            return self.live(head, drop_after, stall_after, trickle, data=None, content_type="audio/aac")
        if parts[0] == "live" and len(parts) == 2 and parts[1] in owner.fixtures:
            data, seconds = owner.fixtures[parts[1]]
            kbps = len(data) * 8 / 1000 / seconds
            kind = FIXTURE_TYPES.get(os.path.splitext(parts[1])[1], "application/octet-stream")
            return self.live(head, drop_after, stall_after, trickle, data=data, content_type=kind, kbps=kbps)
        if parts[0] == "file" and len(parts) == 2 and parts[1] in owner.fixtures:
            data = owner.fixtures[parts[1]][0]
            kind = FIXTURE_TYPES.get(os.path.splitext(parts[1])[1], "application/octet-stream")
            return self.finite(head, True, drop_after, stall_after, trickle, data=data, content_type=kind)
        if path == "/live.mp3":
            return self.live(head, drop_after, stall_after, trickle)
        if path in ("/file.mp3", "/norange.mp3"):
            return self.finite(head, path == "/file.mp3", drop_after, stall_after, trickle)
        return self.small(404, "text/plain", b"not found\n")

    def hold(self):
        """Reads the request and never answers, until dropped or stopped, or the client closes
        the connection (`stats["held"]` counts the connections held now)."""
        owner = self.streams
        token = owner.register(self.connection)
        with owner.lock:
            owner.stats["held"] = owner.stats.get("held", 0) + 1
        try:
            while not owner.stopping.is_set() and token in owner.active:
                readable, _, _ = select.select([self.connection], [], [], 0.05)
                if readable and not self.connection.recv(1, socket.MSG_PEEK):
                    return  # the client closed it
        finally:
            owner.unregister(token)
            with owner.lock:
                owner.stats["held"] -= 1
            self.close_connection = True

    def playlist(self, path):
        live, file = self.streams.url("/live.mp3"), self.streams.url("/file.mp3")
        if path == "/list.m3u":
            body = f"#EXTM3U\n#EXTINF:-1,Live\n{live}\nfile:///etc/passwd\n#EXTINF:5,File\n{file}\n"
            kind = "audio/x-mpegurl"
        elif path in ("/list.pls", "/list-typed"):
            body = (f"[playlist]\nNumberOfEntries=2\nFile1={live}\nTitle1=Live\nLength1=-1\n"
                    f"File2={file}\nTitle2=File\nVersion=2\n")
            kind = "audio/x-scpls"
        elif path == "/list.xspf":
            body = ('<?xml version="1.0" encoding="UTF-8"?>\n<playlist version="1" xmlns="http://xspf.org/ns/0/">'
                    f"<trackList><track><location>{live}</location><title>Live</title></track>"
                    f"<track><location>{file}</location><title>File</title></track></trackList></playlist>\n")
            kind = "application/xspf+xml"
        else:
            body = ("#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:6\n#EXT-X-MEDIA-SEQUENCE:1\n"
                    "#EXTINF:6.0,\nsegment1.ts\n")
            kind = "application/vnd.apple.mpegurl"
        return self.small(200, kind, body.encode())

    def small(self, status, content_type, body):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    content_type = None
    noise_after = None
    # (bytes, seconds): a live body pauses once after that many bytes (`/pause/N/S/PATH`).
    pause_after = None

    def finite(self, head, ranges, drop_after, stall_after, trickle, data=None, content_type="audio/mpeg"):
        data = self.streams.mp3 if data is None else data
        start = 0
        header = self.headers.get("Range")
        if ranges and header and header.startswith("bytes="):
            first = header[6:].split("-")[0]
            start = int(first) if first else 0
            with self.streams.lock:
                self.streams.stats["ranges"].append(start)
            if start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                return self.end_headers()
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        self.send_header("Content-Type", self.content_type or content_type)
        self.send_header("Content-Length", str(len(data) - start))
        if ranges:
            self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        if head:
            return
        self.send_body(data, start, drop_after=drop_after, stall_after=stall_after, trickle=trickle)

    def live(self, head, drop_after, stall_after, trickle, data=b"", content_type="audio/mpeg", kbps=None):
        owner = self.streams
        icy = self.headers.get("Icy-MetaData") == "1" and owner.metaint > 0
        self.send_response(200)
        self.send_header("Content-Type", self.content_type or content_type)
        self.send_header("icy-name", owner.station)
        if kbps is None and data == b"":
            self.send_header("icy-br", str(owner.bitrate_kbps))
        if icy:
            self.send_header("icy-metaint", str(owner.metaint))
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if head:
            return
        self.send_live(icy, drop_after, stall_after, trickle, data, kbps)

    def send_live(self, icy, drop_after, stall_after, trickle, data=b"", kbps=None):
        """`data` looped (the MP3 fixture when empty, random bytes when None), paced at `kbps`."""
        owner = self.streams
        garbage = data is None
        if garbage:
            data = os.urandom(1 << 20)
        elif not data:
            data = owner.mp3
        position = 0
        since_meta = 0
        blocks = 0
        sent = 0
        started = time.monotonic()
        burst = owner.burst
        bytes_per_second = (kbps or owner.bitrate_kbps) * 1000 / 8
        if owner.shared_clock and not garbage and owner.pace > 0:
            # On air since before the server started: live is a burst ahead of the bytes the
            # timeline has reached, and this listener starts that burst behind live.
            position = int((started - owner.started) * bytes_per_second * owner.pace) % len(data)
        token = owner.register(self.connection)
        late_since = None
        try:
            while not owner.stopping.is_set() and token in owner.active:
                chunk_size = 1 if trickle else 4096
                if drop_after is not None:
                    chunk_size = min(chunk_size, drop_after - sent)
                    if chunk_size <= 0:
                        return
                if stall_after is not None and sent >= stall_after:
                    while not owner.stopping.is_set() and token in owner.active:
                        time.sleep(0.05)
                    return
                if stall_after is not None:
                    chunk_size = min(chunk_size, stall_after - sent)
                if self.pause_after is not None:
                    if sent >= self.pause_after[0]:
                        resume = time.monotonic() + self.pause_after[1]
                        self.pause_after = None
                        while not owner.stopping.is_set() and token in owner.active and time.monotonic() < resume:
                            time.sleep(0.05)
                        continue
                    chunk_size = min(chunk_size, self.pause_after[0] - sent)
                if icy:
                    chunk_size = min(chunk_size, owner.metaint - since_meta)
                chunk = bytearray()
                if self.noise_after is not None and sent >= self.noise_after and not garbage:
                    garbage, data, position = True, os.urandom(1 << 20), 0
                while len(chunk) < chunk_size:
                    piece = data[position:position + chunk_size - len(chunk)]
                    chunk += piece
                    position = (position + len(piece)) % len(data)
                out = bytes(chunk)
                since_meta += len(chunk)
                if icy and since_meta == owner.metaint:
                    blocks += 1
                    out += owner.metadata_block(blocks)
                    since_meta = 0
                self.wfile.write(out)
                self.wfile.flush()
                sent += len(chunk)
                if trickle:
                    time.sleep(1)
                elif owner.pace > 0 and sent > burst and not garbage:
                    # Paced by the audio sent, not by the time between writes: a server held up
                    # (starved of the CPU) sends what is due at once and is on time again.
                    due = started + (sent - burst) / (bytes_per_second * owner.pace)
                    delay = due - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                        late_since = None
                    elif -delay > LATE_SECONDS:
                        late_since = due if late_since is None else late_since
                        owner.note_late(late_since, -delay)
        finally:
            owner.unregister(token)

    def send_body(self, data, start, drop_after, stall_after, trickle):
        """`data` from byte `start` to its end, dropped, stalled or trickled as asked."""
        owner = self.streams
        finite_length = len(data) - start
        token = owner.register(self.connection)
        sent = 0
        try:
            while sent < finite_length and not owner.stopping.is_set() and token in owner.active:
                size = 1 if trickle else 16384
                if drop_after is not None:
                    size = min(size, drop_after - sent)
                    if size <= 0:
                        self.close_connection = True
                        return
                if stall_after is not None:
                    if sent >= stall_after:
                        while not owner.stopping.is_set() and token in owner.active:
                            time.sleep(0.05)
                        return
                    size = min(size, stall_after - sent)
                piece = data[start + sent:start + sent + size]
                if not piece:
                    return
                self.wfile.write(piece)
                self.wfile.flush()
                sent += len(piece)
                if trickle:
                    time.sleep(1)
        finally:
            owner.unregister(token)
            if sent < finite_length:
                self.close_connection = True


class StreamServer:
    """The server, on its own threads. `mp3` is the fixture's bytes (looped for /live.mp3)."""

    def __init__(self, mp3, port=0, station="Reel Test Radio", titles=("First title", "Second title"),
                 metaint=16000, title_every=4, pace=1.0, bitrate_kbps=128, tls_cert=None, tls_key=None,
                 fixtures=None, shared_clock=False, burst=64 * 1024):
        self.mp3 = mp3
        self.shared_clock = shared_clock
        self.burst = burst
        self.started = time.monotonic()
        # name: (bytes, seconds)
        self.fixtures = dict(fixtures or {})
        self.station = station
        self.titles = list(titles)
        self.metaint = metaint
        self.title_every = title_every
        self.pace = pace
        self.bitrate_kbps = bitrate_kbps
        self.lock = threading.Lock()
        self.stats = {"requests": 0, "paths": [], "ranges": [], "dropped": 0, "held": 0, "late": []}
        self.active = {}
        self.next_token = 0
        self.fixed_title = None
        self.stopping = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        if tls_cert:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(tls_cert, tls_key)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.scheme = "https" if tls_cert else "http"
        self.thread = None

    def url(self, path):
        return f"{self.scheme}://127.0.0.1:{self.port}{path}"

    def start(self):
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self.stopping.set()
        self.drop_all()
        self.httpd.shutdown()
        self.httpd.server_close()

    def register(self, connection):
        with self.lock:
            self.next_token += 1
            self.active[self.next_token] = connection
            return self.next_token

    def unregister(self, token):
        with self.lock:
            self.active.pop(token, None)

    def drop_all(self):
        """Closes every body being sent now (the clients see the connection end)."""
        with self.lock:
            connections = list(self.active.items())
            self.active.clear()
            self.stats["dropped"] += len(connections)
        for _, connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def note_late(self, since, seconds):
        """A paced stream is behind its schedule by `seconds`, since `since` (monotonic): one
        entry per episode in `stats["late"]`, `[since, most seconds behind]` (at most 100 kept)."""
        with self.lock:
            late = self.stats["late"]
            if late and late[-1][0] == since:
                late[-1][1] = max(late[-1][1], seconds)
            elif len(late) < 100:
                late.append([since, seconds])

    def set_title(self, title):
        with self.lock:
            self.fixed_title = title

    def title_for(self, block):
        with self.lock:
            if self.fixed_title is not None:
                return self.fixed_title
        if not self.titles:
            return None
        return self.titles[((block - 1) // max(self.title_every, 1)) % len(self.titles)]

    def metadata_block(self, block):
        """The ICY block after the `block`th interval: the title each `title_every` blocks
        (and on the first), else an empty block (length byte 0)."""
        if (block - 1) % max(self.title_every, 1) != 0 and self.fixed_title is None:
            return b"\x00"
        title = self.title_for(block)
        if title is None:
            return b"\x00"
        text = f"StreamTitle='{title}';".encode()
        length = (len(text) + 15) // 16
        return bytes([length]) + text.ljust(length * 16, b"\x00")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--mp3", help="the MP3 to serve (made with ffmpeg if absent)")
    parser.add_argument("--seconds", type=float, default=5, help="length of a fixture made here")
    parser.add_argument("--station", default="Reel Test Radio")
    parser.add_argument("--title", action="append", dest="titles", help="a title on air (repeat)")
    parser.add_argument("--metaint", type=int, default=16000)
    parser.add_argument("--title-every", type=int, default=4, help="metadata blocks between titles")
    parser.add_argument("--pace", type=float, default=1.0, help="live pace as a multiple of the bitrate (0: unpaced)")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--shared-clock", action="store_true",
                        help="live streams follow one timeline from the server's start (a reconnect repeats the burst)")
    parser.add_argument("--burst", type=int, default=64 * 1024, help="bytes sent at once to a new live listener")
    parser.add_argument("--fixture", action="append", default=[],
                        help="NAME=PATH=SECONDS: served as /live/NAME and /file/NAME (repeat)")
    arguments = parser.parse_args()
    fixtures = {}
    for spec in arguments.fixture:
        name, fixture_path, seconds = spec.rsplit("=", 2)
        with open(fixture_path, "rb") as f:
            fixtures[name] = (f.read(), float(seconds))
    path = arguments.mp3
    if path is None or not os.path.exists(path):
        path = make_mp3(path or f"/tmp/reel-stream-{os.getpid()}.mp3", arguments.seconds)
    with open(path, "rb") as f:
        mp3 = f.read()
    server = StreamServer(
        mp3, port=arguments.port, station=arguments.station,
        titles=arguments.titles or ("First title", "Second title"), metaint=arguments.metaint,
        title_every=arguments.title_every, pace=arguments.pace, tls_cert=arguments.tls_cert,
        tls_key=arguments.tls_key, fixtures=fixtures, shared_clock=arguments.shared_clock, burst=arguments.burst)
    print(f"PORT {server.port}", flush=True)
    try:
        server.httpd.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
