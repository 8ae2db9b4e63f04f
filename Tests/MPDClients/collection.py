"""A generated music collection: sox tones encoded to FLAC, MP3, Ogg Vorbis and Opus, tagged with
mutagen, with a cover.jpg beside an album, embedded pictures, files without tags, non-ASCII
names and a broken file. Reusable: `make_collection(root)` writes it and returns the expected
songs; `write_song(root, Song(...))` writes any other song the same way (a benchmark's bigger
tree), and `fake_jpeg` makes picture bytes.

Tags are written in MPD's tag order (Artist, Album, AlbumArtist, Title, Track, Genre, Date, Disc)
so that MPD, which prints a file's tags in the file's order, prints them as Reel does. Track and
disc numbers are plain numbers ("3", not "03" or "3/12"): MPD prints them as tagged, Reel as the
number it read.
"""

from __future__ import annotations

import random
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

TAG_ORDER = ["Artist", "Album", "AlbumArtist", "Title", "Track", "Genre", "Date", "Disc"]


@dataclass(frozen=True)
class Song:
    path: str  # relative to the collection's root
    fmt: str  # flac, mp3, ogg, opus
    tags: dict = field(default_factory=dict, hash=False)
    seconds: int = 2
    picture: bool = False

    @property
    def album_dir(self) -> str:
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


def _t(artist=None, album=None, albumartist=None, title=None, track=None, genre=None, date=None, disc=None):
    values = dict(Artist=artist, Album=album, AlbumArtist=albumartist, Title=title, Track=track, Genre=genre,
                  Date=date, Disc=disc)
    return {k: str(v) for k, v in values.items() if v is not None}


SONGS = [
    Song("Alpha Band/First Light/01 Dawn.flac", "flac",
         _t("Alpha Band", "First Light", "Alpha Band", "Dawn", 1, "Rock", "2001", 1), picture=True),
    Song("Alpha Band/First Light/02 Noon.flac", "flac",
         _t("Alpha Band", "First Light", "Alpha Band", "Noon", 2, "Rock", "2001", 1)),
    Song("Alpha Band/First Light/03 Dusk.mp3", "mp3",
         _t("Alpha Band", "First Light", "Alpha Band", "Dusk", 3, "Rock", "2001", 1)),
    Song("Alpha Band/Second Wind/01 Gale.mp3", "mp3",
         _t("Alpha Band", "Second Wind", None, "Gale", 1, "Rock", "2004"), picture=True),
    Song("Alpha Band/Second Wind/02 Breeze.ogg", "ogg",
         _t("Alpha Band", "Second Wind", None, "Breeze", 2, "Ambient", "2004")),
    Song("Various/Compilation/01 Song.ogg", "ogg",
         _t("Beta Singer", "Compilation", "Various Artists", "Song", 1, "Pop", "2010")),
    Song("Various/Compilation/02 Other.opus", "opus",
         _t("Gamma", "Compilation", "Various Artists", "Other", 2, "Pop", "2010")),
    Song("Various/Compilation/03 Third.flac", "flac",
         _t("beta singer", "Compilation", "Various Artists", "Third", 3, "pop", "2010")),
    Song("Zoë Keating/Ünïcödé/01 Café.flac", "flac",
         _t("Zoë Keating", "Ünïcödé", None, "Café", 1, "Clàssical", "2015-03-12")),
    Song("Untagged/no tags.flac", "flac", {}),
    Song("Untagged/no tags.mp3", "mp3", {}),
    Song("loose.ogg", "ogg", _t(title="Loose")),
]

# A file that is not audio at all (listed by neither server) and a cover beside the first album.
BROKEN = "Untagged/broken.flac"
COVER_DIR = "Alpha Band/First Light"
COVER_SIZE = 20_000  # bytes: more than one binarylimit chunk


def fake_jpeg(size: int, seed: int) -> bytes:
    """The headers of a baseline JPEG (SOI, JFIF APP0, SOF0 8x8) and a comment filling it to `size`
    bytes, then EOI: every reader sniffs it as image/jpeg, and its bytes are deterministic."""
    soi = b"\xff\xd8"
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, 8, 8, 3) + bytes([1, 0x11, 0, 2, 0x11, 1, 3, 0x11, 1])
    eoi = b"\xff\xd9"
    rest = size - len(soi + app0 + sof0 + eoi) - 4
    body = random.Random(seed).randbytes(rest)
    return soi + app0 + sof0 + b"\xff\xfe" + struct.pack(">H", rest + 2) + body + eoi


def cover_bytes() -> bytes:
    return fake_jpeg(COVER_SIZE, 1)


def picture_bytes(song: Song) -> bytes:
    return fake_jpeg(3000 + len(song.path), len(song.path))


def _encode(song: Song, path: Path, freq: int):
    path.parent.mkdir(parents=True, exist_ok=True)
    rate = 48000 if song.fmt == "opus" else 44100
    wav = path.with_name(path.name + ".tmp.wav")
    subprocess.run(["sox", "-n", "-r", str(rate), "-c", "2", "-b", "16", str(wav),
                    "synth", str(song.seconds), "sine", str(freq), "vol", "0.3"], check=True)
    if song.fmt == "flac":
        subprocess.run(["sox", str(wav), str(path)], check=True)
    elif song.fmt == "mp3":
        subprocess.run(["lame", "--quiet", "-b", "64", str(wav), str(path)], check=True)
    elif song.fmt == "ogg":
        subprocess.run(["oggenc", "--quiet", "-o", str(path), str(wav)], check=True)
    elif song.fmt == "opus":
        subprocess.run(["opusenc", "--quiet", str(wav), str(path)], check=True)
    wav.unlink()


def _tag(song: Song, path: Path):
    from mutagen.flac import FLAC, Picture
    from mutagen.id3 import APIC, ID3, TALB, TCON, TDRC, TIT2, TPE1, TPE2, TPOS, TRCK
    from mutagen.oggopus import OggOpus
    from mutagen.oggvorbis import OggVorbis

    names = {"Artist": "ARTIST", "Album": "ALBUM", "AlbumArtist": "ALBUMARTIST", "Title": "TITLE",
             "Track": "TRACKNUMBER", "Genre": "GENRE", "Date": "DATE", "Disc": "DISCNUMBER"}
    if song.fmt in ("flac", "ogg", "opus"):
        f = {"flac": FLAC, "ogg": OggVorbis, "opus": OggOpus}[song.fmt](str(path))
        if f.tags is None:
            f.add_tags()
        f.tags.clear()
        for key in TAG_ORDER:
            if key in song.tags:
                f.tags.append((names[key], song.tags[key]))
        if song.picture and song.fmt == "flac":
            picture = Picture()
            picture.type = 3
            picture.mime = "image/jpeg"
            picture.width = picture.height = 8
            picture.depth = 24
            picture.data = picture_bytes(song)
            f.add_picture(picture)
        f.save()
    elif song.fmt == "mp3":
        if not song.tags and not song.picture:
            return
        frames = {"Artist": TPE1, "Album": TALB, "AlbumArtist": TPE2, "Title": TIT2, "Track": TRCK,
                  "Genre": TCON, "Date": TDRC, "Disc": TPOS}
        tags = ID3()
        for key in TAG_ORDER:
            if key in song.tags:
                tags.add(frames[key](encoding=3, text=song.tags[key]))
        if song.picture:
            tags.add(APIC(encoding=3, mime="image/jpeg", type=3, desc="", data=picture_bytes(song)))
        tags.save(str(path), v2_version=4)


def write_song(root: Path, song: Song, freq: int = 440):
    """Encodes a tone of `song.seconds` at `freq` Hz to `root / song.path` and tags it."""
    path = root / song.path
    _encode(song, path, freq)
    _tag(song, path)


def make_collection(root: Path) -> list[Song]:
    """Writes the collection under `root` (created) and returns its songs (not the broken file)."""
    for tool in ("sox", "lame", "oggenc", "opusenc"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"{tool} is missing: run scripts/install-deps --test")
    root.mkdir(parents=True, exist_ok=True)
    for index, song in enumerate(SONGS):
        write_song(root, song, 300 + 40 * index)
    (root / COVER_DIR / "cover.jpg").write_bytes(cover_bytes())
    broken = root / BROKEN
    broken.write_bytes(b"fLaC" + random.Random(7).randbytes(4000))
    return list(SONGS)
