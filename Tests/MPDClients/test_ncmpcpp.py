"""ncmpcpp under a private tmux server: its playlist screen shows the queue, its browser shows
the Recordings tree, and keys sent to it control the server. Screens are read with
`tmux capture-pane` and polled against a deadline."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from mpdtest import DEADLINE, LISTALL_ORDER, wait_for

TITLES = [u.rsplit("/", 1)[-1].rsplit(".", 1)[0] for u in LISTALL_ORDER[:3]]  # Recordings/Meetings


class Tmux:
    """A tmux server of our own (its own socket, no config): killing it touches nothing else."""

    def __init__(self, directory):
        self.socket = directory / "tmux.sock"
        self.session = "ncmpcpp"

    def run(self, *args) -> str:
        p = subprocess.run(["tmux", "-S", str(self.socket), "-f", "/dev/null", *args],
                           capture_output=True, text=True, timeout=DEADLINE)
        assert p.returncode == 0, f"tmux {args}: {p.stderr}"
        return p.stdout

    def start(self, command: list[str]):
        self.run("new-session", "-d", "-s", self.session, "-x", "120", "-y", "30", *command)

    def screen(self) -> list[str]:
        return self.run("capture-pane", "-p", "-t", self.session).splitlines()

    def keys(self, *keys):
        self.run("send-keys", "-t", self.session, *keys)

    def wait(self, predicate, what):
        def check():
            screen = self.screen()
            return predicate(screen) and screen
        try:
            return wait_for(check, interval=0.1, what=what)
        except AssertionError as error:
            raise AssertionError(f"{error}\nscreen:\n" + "\n".join(self.screen())) from None

    def stop(self):
        subprocess.run(["tmux", "-S", str(self.socket), "kill-server"], capture_output=True,
                       timeout=DEADLINE)


def rows_with(screen, text):
    return [i for i, line in enumerate(screen) if text in line]


def titles_in_order(screen, titles):
    rows = [rows_with(screen, t) for t in titles]
    return all(rows) and [r[0] for r in rows] == sorted(r[0] for r in rows)


@pytest.fixture
def ncmpcpp(server, tmp_path):
    with server.authed() as c:
        c.ok("add Recordings/Meetings")
    yield from run_ncmpcpp(server, tmp_path)


def run_ncmpcpp(server, tmp_path):
    for tool in ("ncmpcpp", "tmux"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: run scripts/install-deps --test")
    home = tmp_path / "ncmpcpp-home"
    (home / ".config" / "ncmpcpp").mkdir(parents=True)
    # A private HOME: ncmpcpp reads and writes nothing of the user's.
    (home / ".config" / "ncmpcpp" / "config").write_text(
        f'ncmpcpp_directory = "{home}/.config/ncmpcpp"\n'
        f'lyrics_directory = "{home}/lyrics"\n'
        'connected_message_on_startup = yes\n')
    tmux = Tmux(tmp_path)
    host = f"{server.password}@{server.host}" if server.password else server.host
    command = ["env", "-i", f"HOME={home}", "TERM=screen", "LANG=C.UTF-8", "PATH=/usr/bin:/bin",
               "ncmpcpp", "-h", host, "-p", str(server.port)]
    tmux.start(command)
    try:
        yield tmux
    finally:
        tmux.stop()


def test_playlist_and_browser(server, ncmpcpp):
    tmux = ncmpcpp
    # The playlist screen (the start screen, and key 1) lists the queue in order, with lengths.
    screen = tmux.wait(lambda s: rows_with(s, "Playlist (3 items") and titles_in_order(s, TITLES),
                       "the playlist screen with the three titles")
    assert rows_with(screen, "10:00") and rows_with(screen, "Meetings")

    # Paused by another client: ncmpcpp follows the server (idle) and shows it.
    with server.authed() as c:
        c.send("command_list_begin\nplay 1\npause 1\ncommand_list_end\n")
        assert c.reply() == ["OK"]
    tmux.wait(lambda s: rows_with(s, "Paused: Standup"), "ncmpcpp to show Standup paused")
    with server.authed() as c:
        c.ok("setvol 55")
    tmux.wait(lambda s: rows_with(s, "Volume: 55%"), "the new volume on ncmpcpp's screen")

    # Keys control the server. Only transitions that do not depend on how fast the output plays
    # (Reel's null device is not paced): `-` lowers the volume by ncmpcpp's step (2), `s` stops,
    # and Enter on an entry plays, which an idle client sees as a player change.
    with server.authed() as c, server.authed() as idler:
        tmux.keys("-")
        wait_for(lambda: c.status()["volume"] == "53", what="volume 53 after ncmpcpp's `-`")
        tmux.keys("s")
        wait_for(lambda: c.status()["state"] == "stop", what="stopped by ncmpcpp's `s`")
        tmux.wait(lambda s: not rows_with(s, "Paused: "), "ncmpcpp to show it stopped")
        idler.send("idle player\n")
        tmux.keys("Down", "Enter")
        assert idler.reply() == ["changed: player", "OK"]
        c.ok("stop")

    # The browser (key 2) shows the Recordings tree.
    tmux.keys("2")
    tmux.wait(lambda s: rows_with(s, "Browse: /") and rows_with(s, "[Recordings]"),
              "the browser with [Recordings]")
    tmux.keys("Enter")
    screen = tmux.wait(lambda s: rows_with(s, "Browse: Recordings") and rows_with(s, "[Notes]"),
                       "Recordings/ with its folders")
    assert rows_with(screen, "[Meetings]") and rows_with(screen, "[..]")
    down = rows_with(screen, "[Notes]")[0] - rows_with(screen, "[..]")[0]
    tmux.keys(*["Down"] * down, "Enter")
    screen = tmux.wait(lambda s: rows_with(s, "Browse: Recordings/Notes") and rows_with(s, "idea")
                       and rows_with(s, "Memo"), "Recordings/Notes with its recordings")

    # Queue a recording from the browser (Space adds the selected item; on an item already in
    # the queue it would remove it, so this one is not queued yet).
    down = rows_with(screen, "idea")[-1] - rows_with(screen, "[..]")[0]
    tmux.keys(*["Down"] * down, "Space")
    with server.authed() as c:
        wait_for(lambda: c.ok("playlist")[-1:] == ["3:file: Recordings/Notes/idea.flac"],
                 what="the recording queued from ncmpcpp's browser")

    # Back on the playlist screen, the new entry is listed.
    tmux.keys("1")
    tmux.wait(lambda s: rows_with(s, "Playlist (4 items") and titles_in_order(s, TITLES + ["idea"]),
              "the playlist with four entries")


def test_media_library_browses_the_music_folder_by_artist_and_album(make_server, music, tmp_path):
    server = make_server(music=music)
    session = run_ncmpcpp(server, tmp_path)
    tmux = next(session)
    try:
        # The media library (key 4): artists (ncmpcpp's order: files without an artist first,
        # as <empty>), the selected artist's albums with their dates, its songs.
        tmux.keys("4")
        tmux.wait(lambda s: rows_with(s, "<empty>") and rows_with(s, "Alpha Band") and rows_with(s, "Zoë Keating"),
                  "the media library's artists")
        tmux.keys("Down")
        screen = tmux.wait(lambda s: rows_with(s, "(2001) First Light") and rows_with(s, "(2004) Second Wind"),
                           "Alpha Band's albums")
        assert rows_with(screen, "01 - Dawn") and rows_with(screen, "03 - Dusk")
    finally:
        session.close()


def test_playlist_editor_saves_opens_and_edits_a_playlist(server, ncmpcpp):
    """ncmpcpp's playlist editor on the stored playlists: `S` on the playlist screen saves the
    queue (save), key 5 opens the editor (listplaylists, listplaylistinfo), Delete on an entry
    edits the playlist (playlistdelete), and another client's change shows (idle
    stored_playlist)."""
    tmux = ncmpcpp
    tmux.wait(lambda s: rows_with(s, "Playlist (3 items") and titles_in_order(s, TITLES), "the playlist screen")
    tmux.keys("S")
    tmux.wait(lambda s: rows_with(s, "Save playlist as"), "the save prompt")
    tmux.keys("Evening", "Enter")
    with server.authed() as c:
        wait_for(lambda: c.cmd("listplaylist Evening") == [f"file: {u}" for u in LISTALL_ORDER[:3]] + ["OK"],
                 what="the queue saved as Evening")

    # The playlist editor lists the playlists, and the selected one's entries.
    tmux.keys("5")
    screen = tmux.wait(lambda s: rows_with(s, "Evening") and titles_in_order(s, TITLES), "the playlist editor")

    # To the entries column, then Delete removes the selected (first) entry from the file.
    tmux.keys("Right")
    tmux.keys("DC")
    with server.authed() as c:
        wait_for(lambda: c.cmd("listplaylist Evening") == [f"file: {u}" for u in LISTALL_ORDER[1:3]] + ["OK"],
                 what="the first entry deleted by ncmpcpp")
    tmux.wait(lambda s: not rows_with(s, TITLES[0]) and titles_in_order(s, TITLES[1:]), "the editor after the delete")

    # Another client adds to it: the editor follows (idle stored_playlist).
    with server.authed() as c:
        c.ok("playlistadd Evening Recordings/Notes/idea.flac")
    tmux.wait(lambda s: titles_in_order(s, TITLES[1:] + ["idea"]), "the entry another client added")

    # Opening it: back to the playlists column, Enter adds it to the queue.
    with server.authed() as c:
        c.ok("clear")
    tmux.keys("Left", "Enter")
    with server.authed() as c:
        wait_for(lambda: [l.split(":", 1)[1] for l in c.ok("playlist")] ==
                 [f"file: {u}" for u in LISTALL_ORDER[1:3]] + ["file: Recordings/Notes/idea.flac"],
                 what="the playlist loaded into the queue by ncmpcpp")
