"""The web page in a real headless Chromium against a private reeld: every check reads the page's
DOM and the daemon itself (`reel` or its Unix socket), nothing is mocked."""

from __future__ import annotations

import json
import time

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

import pytest

import webtest
from conftest import needs_pacing
from webtest import DESKTOP, PHONE, paced, wait_for


def playing(page):
    return page.js("return document.getElementById('player').dataset.state") == "playing"


def shown(page, css) -> bool:
    """Whether the element takes room on the page (not hidden, not display: none)."""
    return page.js("const e = document.querySelector(arguments[0]); return !!e && e.getClientRects().length > 0", css)


def check_layout(page, what):
    """At a phone's size the page really is in the phone's layout (Chromium's mobile emulation:
    390×844 CSS px, 3 device pixels per px, a touch screen without hover); at either size
    nothing sticks out sideways."""
    if page.size == PHONE:
        assert tuple(page.viewport()) == PHONE
        assert page.js("return devicePixelRatio") == webtest.PHONE_PIXEL_RATIO
        assert page.js("return matchMedia('(hover: none)').matches && matchMedia('(pointer: coarse)').matches")
    else:
        assert tuple(page.viewport()) == page.size
    assert page.overflow() == [], f"{what} at {page.size}"
    assert page.cut_text() == [], f"{what} at {page.size}"


def test_screens(page, reel):
    """Each screen loads without an error, at a phone's size (emulated) and a desktop's, and
    fits; screenshots."""
    reel.reel("add", "/Meetings")
    reel.reel("play", "2")
    reel.reel("pause")
    for size in (PHONE, DESKTOP):
        page.open("#queue", size)
        wait_for(lambda: len(page.els("#queue-list > li")) == 4, what="the queue's four entries")
        wait_for(lambda: page.text("#np-title") == "Retro", what="the paused recording's title")
        page.screenshot("queue")
        check_layout(page, "the queue")
        page.tab("library")
        wait_for(lambda: page.item_names() == ["Meetings", "Notes"], what="the root folder's items")
        page.open_folder("/Meetings")
        assert page.item_names() == ["2025", "Planning", "Retro", "Standup"]
        page.screenshot("library")
        check_layout(page, "the library")
        page.action("Retro", "Rename")
        wait_for(lambda: page.js("return document.getElementById('dialog').open"), what="the dialog")
        page.screenshot("dialog")
        check_layout(page, "the rename dialog")
        page.answer_dialog(ok=False)
        page.tab("recorder")
        assert page.js("return document.getElementById('rec-folder').value") == "/Meetings"
        page.screenshot("recorder")
        check_layout(page, "the recorder")
    assert page.console_errors() == []


def test_long_names_fit_a_phone(page, reel, media):
    """Long names (with and without spaces) wrap inside the phone's width: now playing, the
    queue, the crumbs, a row with its actions open."""
    spaced = "A recording with a rather long name that cannot fit on one line of a phone"
    unbroken = "Arecordingnamewithoutanyspacesatallthatmuststillwrapsomewhere"
    folder = "A folder whose name is long as well, for the crumbs"
    reel.rpc("library.createFolder", {"parentPath": "/Notes", "name": folder})
    for name in (spaced, unbroken):
        reel.reel("import", str(media / "tone1.flac"), f"/Notes/{folder}", "--name", name)
    reel.reel("play", f"/Notes/{folder}/{unbroken}")
    reel.reel("pause")
    reel.reel("add", f"/Notes/{folder}/{spaced}")
    for size in (PHONE, DESKTOP):
        page.open("#queue", size)
        wait_for(lambda: len(page.els("#queue-list > li")) == 2, what="the two entries")
        wait_for(lambda: page.text("#np-title") == unbroken, what="the long title")
        page.screenshot("long-queue")
        check_layout(page, "the queue with long names")
        page.open_folder(f"/Notes/{folder}")
        page.row(spaced).find_element("css selector", ".more-button").click()
        page.screenshot("long-library")
        check_layout(page, "the library with long names")
    assert page.console_errors() == []


def test_the_bar_holds_when_a_push_is_a_little_behind_the_clock(page, reel):
    """A push whose position is a few hundred ms behind what the bar drew (the device ran late
    on a loaded machine) holds the bar until the audio catches up; a larger step back (a seek
    from another client) is drawn. The states are handed to the page's push handler directly,
    so the test does not depend on the machine's speed."""
    page.open("#queue")
    state = reel.status()
    state.update(state="playing", entry="held-entry", position=10.0, duration=60.0, timestamp=1000.0)
    # These timestamps are a clock of their own: the page learns its offset from them afresh.
    page.js("player.offset = null; onPlayer(arguments[0]);", state)
    time.sleep(0.4)
    before = page.progress_fraction()
    assert before > 10.2 / 60, before
    # 0.4 s later by the daemon's clock, but only 0.3 s more audio was heard.
    state.update(position=10.3, timestamp=1000.4)
    page.js("onPlayer(arguments[0]);", state)
    held = page.progress_fraction()
    assert held >= before, (before, held)
    state.update(position=5.0, timestamp=1000.5)
    page.js("onPlayer(arguments[0]);", state)
    assert page.progress_fraction() < 5.5 / 60
    page.js("onPlayer(arguments[0]);", dict(state, state="stopped"))


@needs_pacing()
def test_progress_bar_moves_between_pushes(page, reel):
    page.open("#library:/Meetings")
    page.row("Standup").find_element("css selector", ".row-main").click()
    wait_for(lambda: playing(page), what="the page to show playing")
    assert reel.status()["source"]["name"] == "Standup"
    wait_for(lambda: page.progress_fraction() > 0, what="the bar to leave 0")
    # The player pushes every 0.5 s; sampled every 0.1 s the bar still moves each time, and
    # between two pushes it moves at the page's clock's pace, never faster (the bar drawn for the
    # instant it is read; a bar held back by a push that said the audio is behind moves slower).
    samples = []
    for _ in range(8):
        samples.append(page.js("drawProgress(); return [player.shown.pos, now(), player.state.timestamp]"))
        time.sleep(0.1)
    assert all(b[0] > a[0] for a, b in zip(samples, samples[1:])), samples
    between = [(b[0] - a[0], b[1] - a[1]) for a, b in zip(samples, samples[1:]) if a[2] == b[2]]
    assert all(moved <= elapsed + 0.02 for moved, elapsed in between), between
    assert sum(m for m, _ in between) >= 0.5 * sum(e for _, e in between), between
    # Over 1.5 s the bar moves as far as reeld's position does (what the device has played, which
    # a loaded machine may hold back: the bar must follow the audio, not the wall clock). Each end
    # is read as a push arrives: between pushes the page can only extrapolate, and when the audio
    # stalls (a loaded machine's sound server starting a stream) it learns so at the next push,
    # up to 0.5 s later; at a push the bar must agree with reeld. The bar is drawn for the instant
    # it is read, and reeld's position is asked just before and just after and averaged.
    def at_next_push():
        last = page.js("return player.state.timestamp")
        wait_for(lambda: page.js("return player.state.timestamp") != last, what="the next push", interval=0.005)
        before = reel.rpc("player.status")
        shown = page.progress_fraction(redraw=True) * 120
        after = reel.rpc("player.status")
        return (before["position"] + after["position"]) / 2, shown, after["underruns"], time.monotonic()
    heard0, shown0, underruns0, t0 = at_next_push()
    time.sleep(1.2)
    heard1, shown1, underruns1, t1 = at_next_push()
    heard, moved = heard1 - heard0, shown1 - shown0
    assert heard > 0.5, f"reeld played {heard:.2f} s in {t1 - t0:.2f} s"
    assert abs(moved - heard) < 0.3, (
        f"the bar moved {moved:.2f} s while reeld played {heard:.2f} s in {t1 - t0:.2f} s"
        f" (underruns {underruns0} → {underruns1})")
    page.screenshot("playing")


@needs_pacing()
def test_seek_by_dragging(page, reel):
    reel.reel("play", "/Meetings/Standup")
    page.open()
    wait_for(lambda: playing(page), what="playing")
    page.el("#playpause").click()
    wait_for(lambda: reel.status()["state"] == "paused", what="reeld to pause")
    bar = page.el("#progress")
    width = bar.size["width"]
    ActionChains(page.d).move_to_element_with_offset(bar, int(-width * 0.45), 0).click_and_hold() \
        .move_by_offset(int(width * 0.2), 0).move_by_offset(int(width * 0.25), 0).release().perform()
    wait_for(lambda: abs(reel.status()["position"] - 60) < 2.5, what="reeld to seek to about 1:00")
    assert reel.status()["state"] == "paused"
    wait_for(lambda: abs(page.progress_fraction() - 0.5) < 0.03, what="the bar at the middle")
    assert page.text("#elapsed") in ("0:58", "0:59", "1:00", "1:01", "1:02")


def test_add_folder_to_queue_and_reorder(page, reel):
    page.open("#library:/Meetings")
    page.el("#folder-add").click()
    wait_for(lambda: reel.rpc("queue.list")["length"] == 4, what="four entries in the queue")
    page.tab("queue")
    names = lambda: page.js("return [...document.querySelectorAll('#queue-list .name')].map(e => e.textContent)")
    wait_for(lambda: names() == ["Planning", "Retro", "Standup", "Kickoff"], what="the queue on the page")
    # Drag the last entry by its handle to the top, in small steps as a finger does.
    rows = page.els("#queue-list > li")
    handle = rows[3].find_element("css selector", ".handle")
    step = rows[1].location["y"] - rows[0].location["y"]
    chain = ActionChains(page.d).click_and_hold(handle)
    for _ in range(7):
        chain.move_by_offset(0, -step / 2)
    chain.release().perform()
    order = lambda: [e["source"]["name"] for e in reel.rpc("queue.list")["entries"]]
    wait_for(lambda: order() == ["Kickoff", "Planning", "Retro", "Standup"], what="reeld's queue reordered")
    wait_for(lambda: names() == order(), what="the page's queue to match")
    # Tap to play; the entry is marked.
    page.els("#queue-list .row-main")[2].click()
    wait_for(lambda: reel.rpc("queue.list")["current"] is not None, what="a current entry")
    current = reel.rpc("queue.list")["current"]
    wait_for(lambda: page.js("return document.querySelector('#queue-list li.current')?.dataset.id") == str(current),
             what="the current entry marked")
    # Options, remove, clear (with its confirmation).
    page.el("#opt-repeat").click()
    wait_for(lambda: reel.rpc("queue.list")["options"]["repeat"] is True, what="repeat on")
    wait_for(lambda: page.el("#opt-repeat").get_attribute("aria-pressed") == "true", what="repeat shown on")
    page.els("#queue-list .remove")[0].click()
    wait_for(lambda: reel.rpc("queue.list")["length"] == 3, what="an entry removed")
    page.el("#queue-clear").click()
    page.answer_dialog()
    wait_for(lambda: reel.rpc("queue.list")["length"] == 0, what="the queue cleared")
    wait_for(lambda: len(page.els("#queue-list > li")) == 0, what="the page's queue empty")


def test_volume_and_mute(page, reel):
    page.open()
    slider = page.el("#volume")
    wait_for(lambda: slider.get_attribute("value") == "100" or slider.get_property("value") == "100", what="the volume")
    slider.send_keys(Keys.HOME)
    for _ in range(30):
        slider.send_keys(Keys.ARROW_RIGHT)
    wait_for(lambda: reel.reel("vol").strip() == "volume: 30%", what="reel vol to say 30%")
    page.el("#mute").click()
    wait_for(lambda: reel.reel("vol").strip() == "volume: 30% (muted)", what="muted")
    wait_for(lambda: page.el("#mute").get_attribute("aria-pressed") == "true", what="the mute button pressed")
    # A change made elsewhere shows on the page.
    reel.reel("vol", "55")
    wait_for(lambda: slider.get_property("value") == "55", what="the slider to follow reel vol 55")
    assert page.text("#volume-value") == "55%"


def test_replaygain_settings(page, reel):
    page.open()
    mode = page.el("#replaygain-mode")
    wait_for(lambda: mode.get_property("value") == "off", what="ReplayGain off")
    Select(mode).select_by_value("album")
    wait_for(lambda: reel.reel("replaygain").startswith("replaygain: album"), what="reel replaygain to say album")
    limit = page.el("#replaygain-limit")
    limit.click()
    wait_for(lambda: "limit off" in reel.reel("replaygain"), what="the limit off")
    # A change made elsewhere shows on the page.
    reel.reel("replaygain", "track", "--preamp=-3")
    wait_for(lambda: mode.get_property("value") == "track", what="the mode to follow reel replaygain track")
    wait_for(lambda: page.el("#replaygain-preamp").get_property("value") == "-3", what="the preamp to follow")
    reel.reel("replaygain", "off", "--preamp=0", "--limit", "on")


def test_record_two_seconds(page, reel, media):
    if reel.status()["state"] != "playing":
        reel.reel("play", "/Meetings/Standup")  # a tone for the capture to hear (PulseAudio's monitor)
    page.open("#library:/Notes")
    page.tab("recorder")
    assert page.js("return document.getElementById('rec-folder').value") == "/Notes"
    page.el("#rec-name").send_keys("take")
    page.el("#rec-format").send_keys("wav")
    page.el("#rec-start").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "recording", what="reeld to record")
    # While it records: the meter and the clock move, and the recording is in the open folder.
    peaks, elapsed = set(), []
    end = time.monotonic() + 2.2
    while time.monotonic() < end:
        peak = page.js("return document.getElementById('meter').dataset.peak")
        if peak:
            peaks.add(float(peak))
        elapsed.append(page.text("#rec-elapsed"))
        time.sleep(0.05)
    assert "take" in page.item_names(), page.item_names()
    meter_left = page.js("return parseFloat(document.getElementById('meter-peak').style.left) / 100")
    page.screenshot("recording")
    page.el("#rec-stop").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "idle", what="the recording to stop")
    assert len(set(elapsed)) >= 5, elapsed
    assert peaks, "the meter never showed a level"
    if paced():
        assert max(peaks) > -40, f"the tone played to the sink should reach the meter: {sorted(peaks)}"
        assert meter_left > 0.5, meter_left
    item = reel.rpc("library.get", {"path": "/Notes/take"})
    assert item["format"]["codec"] == "wav" and item["duration"] >= 1.5, item
    wait_for(lambda: "Saved /Notes/take" in " ".join(page.toasts()), what="the saved message")


def test_alarms_and_the_sleep_timer(page, reel):
    """The Alarms view adds, turns off and deletes a schedule and shows its next run; a bad time
    is an error naming it; the sleep timer in the now-playing card sets and cancels player.sleep."""
    page.open("#schedules")
    page.el("#sch-when").send_keys("Mon..Fri 07:00")
    page.el("#sch-kind").send_keys("stop")
    page.el("#sch-add").click()
    wait_for(lambda: len(page.els("#schedule-list > li")) == 1, what="the new schedule")
    [added] = reel.rpc("schedules.list")["schedules"]
    assert added["when"] == "Mon..Fri 07:00" and added["action"] == {"stop": {}} and added["next"], added
    assert page.text("#schedule-list .sch-next").startswith("next "), page.text("#schedule-list .sch-next")
    page.screenshot("alarms")
    check_layout(page, "the alarms")
    page.el("#schedule-list .sch-enabled").click()
    wait_for(lambda: reel.rpc("schedules.list")["schedules"][0]["enabled"] is False, what="the schedule to be off")
    wait_for(lambda: page.text("#schedule-list .sch-next") == "off", what="the row to say off")
    page.el("#sch-when").send_keys("Mon..Fry 07:00")
    page.el("#sch-add").click()
    wait_for(lambda: any("Fry" in t for t in page.toasts()), what="the error naming the bad weekday")
    assert len(reel.rpc("schedules.list")["schedules"]) == 1
    page.el("#schedule-list button.danger-text").click()
    wait_for(lambda: reel.rpc("schedules.list")["schedules"] == [], what="the schedule to be deleted")
    wait_for(lambda: page.els("#schedule-list > li") == [], what="the list to empty")

    from selenium.webdriver.support.ui import Select
    Select(page.el("#sleep")).select_by_visible_text("30 min")
    wait_for(lambda: reel.status().get("sleepAt"), what="a sleep timer in reeld")
    wait_for(lambda: page.text("#sleep-at").startswith("stops at"), what="the card to show when it stops")
    Select(page.el("#sleep")).select_by_visible_text("off")
    wait_for(lambda: reel.status().get("sleepAt") is None, what="the sleep timer to be cancelled")
    wait_for(lambda: page.text("#sleep-at") == "", what="the card to show no timer")


def test_playlists_save_open_play_add_rename_and_delete(page, reel):
    """The Playlists view: "Save queue as" makes a stored playlist of the queue; opening it lists
    its entries (one made missing shows as such); Play loads it and plays; Add appends it to the
    queue; a change made by another client shows (the playlists stream); Rename and Delete."""
    reel.reel("add", "/Meetings")
    queued = reel.rpc("queue.list")["length"]
    page.open("#playlists")
    wait_for(lambda: shown(page, "#pl-empty"), what="no playlists yet")
    check_layout(page, "the empty playlists")
    page.el("#pl-save").click()
    page.answer_dialog("Evening")
    wait_for(lambda: [p["name"] for p in reel.rpc("playlists.list")["playlists"]] == ["Evening"], what="the playlist saved")
    wait_for(lambda: len(page.els("#pl-list > li.playlist")) == 1, what="the playlist listed")
    assert reel.rpc("playlists.list")["playlists"][0]["length"] == queued
    check_layout(page, "the playlists")
    page.screenshot("playlists")

    # Another client adds to it: the row follows.
    reel.rpc("playlists.add", {"name": "Evening", "url": "http://radio.example/live"})
    wait_for(lambda: f"{queued + 1} entries" in page.text("#pl-list .playlist .sub"), what="the new length")

    page.el("#pl-list .pl-open").click()
    wait_for(lambda: len(page.els("#pl-list > li.pl-entry")) == queued + 1, what="the playlist's entries")
    assert "Standup" in page.text("#pl-list")
    page.screenshot("playlist-open")
    # Remove the URL (the last entry) from the open playlist.
    page.els("#pl-list .pl-remove")[-1].click()
    wait_for(lambda: reel.rpc("playlists.get", {"name": "Evening"})["length"] == queued, what="the entry removed")
    wait_for(lambda: len(page.els("#pl-list > li.pl-entry")) == queued, what="the open playlist to follow")
    page.el("#pl-back").click()
    wait_for(lambda: len(page.els("#pl-list > li.playlist")) == 1, what="back to the list")

    # Play: the queue gets it, and it plays; Add appends it once more.
    reel.reel("clear")
    page.el("#pl-list .pl-play").click()
    wait_for(lambda: reel.rpc("queue.list")["length"] == queued, what="the playlist loaded")
    wait_for(lambda: reel.status()["state"] in ("playing", "paused"), what="it to play")
    page.el("#pl-list .pl-add").click()
    wait_for(lambda: reel.rpc("queue.list")["length"] == 2 * queued, what="the playlist added again")

    page.el("#pl-list .pl-rename").click()
    page.answer_dialog("Night")
    # Read in one go: the row is replaced as the pushes come.
    wait_for(lambda: page.js("const e = document.querySelector('#pl-list > li.playlist'); return e && e.dataset.name") == "Night",
             what="the renamed row")
    page.el("#pl-list .pl-delete").click()
    page.answer_dialog()
    wait_for(lambda: reel.rpc("playlists.list")["playlists"] == [], what="the playlist deleted")
    wait_for(lambda: shown(page, "#pl-empty"), what="the empty list again")


def test_recorder_idle_shows_the_last_take(page, reel):
    """Idle, the recorder shows no running clock: before any take nothing, after one its name
    and length as the last take."""
    page.open("#recorder")
    assert page.text("#rec-state") == "Not recording"
    assert not shown(page, "#rec-elapsed") and not shown(page, "#rec-last")
    reel.rpc("recorder.start", {"folderPath": "/Notes", "name": "take", "format": "wav"})
    wait_for(lambda: page.text("#rec-state") == "Recording" and shown(page, "#rec-elapsed"), what="the recording shown")
    assert not shown(page, "#rec-last")
    wait_for(lambda: reel.rpc("recorder.status")["elapsed"] >= 0.5, what="half a second recorded")
    reel.rpc("recorder.stop")
    status = reel.rpc("recorder.status")
    assert status["state"] == "idle" and status["item"]["name"] == "take"
    wait_for(lambda: page.text("#rec-state") == "Not recording", what="the page to show idle")
    assert not shown(page, "#rec-elapsed"), "no stopped counter left beside Not recording"
    assert shown(page, "#rec-last")
    whole = int(status["elapsed"])
    length = f"{whole // 60}:{whole % 60:02}.{int((status['elapsed'] - whole) * 10)}"
    assert page.text("#rec-last .name") == "take"
    assert page.text("#rec-last .meta") == length
    assert page.text("#rec-last .sub") == "/Notes/take"
    assert page.text("#rec-last").startswith("Last take: take")
    page.screenshot("recorder-last-take")
    check_layout(page, "the recorder after a take")


def test_player_error_from_another_client_shows_and_is_dismissed(page, reel, media, tmp_path):
    """Another client starts the queue and its entry cannot play: the player state's error is
    on the page; its dismiss button clears it in reeld (player.clearError), for every client."""
    broken = tmp_path / "broken.flac"
    broken.write_bytes((media / "tone0.flac").read_bytes())
    reel.rpc("queue.add", {"file": str(broken)})
    broken.write_text("no longer audio\n")
    page.open()
    assert not shown(page, "#player-error")
    with pytest.raises(AssertionError, match="not an audio file"):
        reel.rpc("player.play")
    error = reel.rpc("player.status")["error"]
    assert error and "not an audio file" in error["message"], error
    wait_for(lambda: shown(page, "#player-error"), what="the error on the page")
    assert page.text("#player-error-text") == error["message"]
    assert page.text("#np-title") == "Nothing playing"
    page.screenshot("player-error")
    check_layout(page, "the player's error")
    page.el("#player-error-clear").click()
    wait_for(lambda: reel.rpc("player.status")["error"] is None, what="reeld to clear the error")
    wait_for(lambda: not shown(page, "#player-error"), what="the error gone from the page")
    assert page.toasts("error") == []


def test_open_folder_deleted_closes(page, reel):
    page.open("#library:/Meetings/2025")
    wait_for(lambda: page.item_names() == ["Kickoff"], what="/Meetings/2025")
    reel.reel("rm", "/Meetings/2025")
    wait_for(lambda: page.folder() == "/Meetings", what="the page to go to the parent")
    assert page.item_names() == ["Planning", "Retro", "Standup"]
    assert any("was deleted" in t for t in page.toasts()), page.toasts()
    # Deleting from the page asks first; its folder stream then updates the list.
    page.action("Retro", "Delete")
    page.answer_dialog()
    wait_for(lambda: page.item_names() == ["Planning", "Standup"], what="Retro gone from the page")
    assert [i["name"] for i in reel.rpc("library.list", {"path": "/Meetings"})["items"]] == ["Planning", "Standup"]


def test_library_changes_rename_and_errors(page, reel):
    page.open("#library:/Meetings")
    # Another client's change shows by itself.
    reel.reel("mkdir", "/Meetings/Archive")
    wait_for(lambda: "Archive" in page.item_names(), what="a folder made elsewhere to appear")
    # A new folder from the page.
    page.el("#folder-new").click()
    page.answer_dialog("Drafts")
    wait_for(lambda: "Drafts" in page.item_names(), what="the new folder")
    # Rename to a taken name: the daemon's message, as a person reads it.
    page.action("Retro", "Rename")
    page.answer_dialog("Standup")
    wait_for(lambda: any("already" in t for t in page.toasts()), what="the name_taken message")
    page.action("Retro", "Move")
    page.answer_dialog("/Meetings/Archive")
    wait_for(lambda: "Retro" not in page.item_names(), what="Retro moved away")
    assert reel.rpc("library.get", {"path": "/Meetings/Archive/Retro"})["kind"] == "recording"


def test_names_are_text_not_html(page, reel):
    name = '<img src=x onerror="window.pwned=1">'
    reel.rpc("library.createFolder", {"parentPath": "/", "name": name})
    page.open("#library")
    wait_for(lambda: name in page.item_names(), what="the folder with markup in its name")
    assert page.js("return document.querySelectorAll('#items img').length") == 0
    assert page.js("return window.pwned === undefined")
    assert page.row(name).find_element("css selector", ".name").text == name


def test_search_with_paging(page, reel):
    for i in range(55):
        reel.rpc("library.createFolder", {"parentPath": "/Notes", "name": f"Idea {i:02}"})
    page.open("#library")
    page.el("#search").send_keys("idea" + Keys.ENTER)
    wait_for(lambda: len(page.els("#search-results > li")) == 50, what="the first page of results")
    assert not page.js("return document.getElementById('search-more').hidden")
    page.el("#search-more").click()
    wait_for(lambda: len(page.els("#search-results > li")) == 55, what="the second page")
    assert page.js("return document.getElementById('search-more').hidden")
    assert page.item_names("#search-results")[:2] == ["Idea 00", "Idea 01"]


def test_audio_links(page, reel):
    item = reel.rpc("library.get", {"path": "/Meetings/Standup"})
    page.open("#library:/Meetings")
    page.row("Standup").find_element("css selector", ".more-button").click()
    href = page.row("Standup").find_element("css selector", ".actions a").get_attribute("href")
    assert href.endswith(f"/audio/{item['id']}?download=1")
    got = page.d.execute_async_script("""const done = arguments[arguments.length - 1];
        Promise.all([fetch(arguments[0]), fetch(arguments[1], {headers: {Range: 'bytes=0-3'}})])
          .then(async ([a, b]) => done([a.status, a.headers.get('content-disposition') || '',
                                        b.status, b.headers.get('content-type') || '', (await b.arrayBuffer()).byteLength]))""",
        href, href.replace("?download=1", ""))
    assert got[0] == 200 and "attachment" in got[1], got
    assert got[2] == 206 and got[3].startswith("audio/") and got[4] == 4, got


def test_reconnects_after_reeld_restarts(page, reel):
    page.open("#library:/Meetings")
    reel.stop()
    wait_for(lambda: page.js("return !document.getElementById('conn').hidden"), what="the page to say it lost reeld")
    assert page.text("#conn") == "Reconnecting…"
    page.screenshot("reconnecting")
    reel.start(populate=False)
    wait_for(lambda: page.js("return document.getElementById('conn').hidden"), what="the page to reconnect")
    # Resubscribed: the player, the queue and the open folder follow changes again.
    reel.reel("play", "/Meetings/Planning")
    wait_for(lambda: page.text("#np-title") == "Planning", what="the player stream after the restart")
    reel.reel("mkdir", "/Meetings/After")
    wait_for(lambda: "After" in page.item_names(), what="the folder stream after the restart")
    wait_for(lambda: len(page.els("#queue-list > li")) == 1, what="the queue after the restart")


def test_upload(page, reel, media, tmp_path):
    page.open("#library:/Notes")
    page.js("document.getElementById('upload').hidden = false")
    page.el("#upload").send_keys(str(media / "tone1.flac"))
    wait_for(lambda: "tone1" in page.item_names(), what="the uploaded file in /Notes")
    item = reel.rpc("library.get", {"path": "/Notes/tone1"})
    assert item["format"]["codec"] == "flac" and abs(item["duration"] - 120) < 0.1
    # Not audio: the daemon's refusal is shown, nothing is added.
    text = tmp_path / "notes.txt"
    text.write_text("not audio\n")
    page.el("#upload").send_keys(str(text))
    wait_for(lambda: page.toasts("error"), what="the refusal of a text file")
    assert "notes" not in page.item_names()


# ---------------------------------------------------------------------------------------------
# Music folders: albums with covers, an album's tracks, artists, search, and the index changing.

def png(rgb: tuple[int, int, int], size: int = 8) -> bytes:
    """A small solid PNG, written by hand (no image library needed)."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * size for _ in range(size))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def tagged_album(folder, artist, album, titles, date="1958"):
    """FLAC files tagged with metaflac; track numbers in reverse of the file names."""
    import subprocess

    folder.mkdir(parents=True, exist_ok=True)
    for i, title in enumerate(titles):
        path = folder / f"{i + 1:02} {title}.flac"
        subprocess.run(["sox", "-n", "-r", "22050", "-c", "1", "-b", "16", str(path), "synth", "20", "sine", "440",
                        "vol", "0.3", "pad", "0", "40"], check=True)
        subprocess.run(["metaflac", f"--set-tag=TITLE={title}", f"--set-tag=ARTIST={artist}", f"--set-tag=ALBUM={album}",
                        f"--set-tag=TRACKNUMBER={len(titles) - i}", f"--set-tag=DATE={date}", str(path)], check=True)
    return folder


@pytest.fixture
def music_reel(media, tmp_path):
    """A reeld with a music folder: an album with cover.png beside it, one with a picture embedded,
    one without art (named with markup), and nothing else."""
    import subprocess

    root = tmp_path / "Music"
    blue = tagged_album(root / "Trane" / "Blue Train", "Trane", "Blue Train", ["Moment", "Locomotion", "Lazy Bird"])
    (blue / "cover.png").write_bytes(png((30, 60, 200)))
    ete = tagged_album(root / "Zoë" / "Été", "Zoë", "Été", ["Première"], date="2001")
    art = tmp_path / "embedded.png"
    art.write_bytes(png((200, 60, 30)))
    subprocess.run(["metaflac", f"--import-picture-from=3||||{art}", str(ete / "01 Première.flac")], check=True)
    tagged_album(root / "Nobody" / "Bare", "Nobody", '<img src=x onerror="window.pwned=1">', ["Plain"])
    server = webtest.Reel(tmp_path / "reel", media)
    server.music_dirs = [root]
    try:
        server.start(populate=False)
        # The first scan runs after reeld answers: wait until it has indexed the three albums.
        wait_for(lambda: len(server.rpc("music.albums")["albums"]) == 3, what="the first scan's three albums")
        yield server, root
    finally:
        server.close()


def cover_errors(page) -> list[str]:
    """Console errors other than an album without art answering 404 at /cover."""
    return [e for e in page.console_errors() if not ("/cover?" in e and "404" in e)]


def test_music_albums_with_covers_tracks_artists_and_search(driver, music_reel):
    reel, root = music_reel
    page = webtest.Page(driver, reel)
    page.console_errors()  # drains what earlier tests left in the browser's log
    try:
        page.open("#music")
        card_names = "return [...document.querySelectorAll('#music-grid .card .name')].map(e => e.textContent)"
        wait_for(lambda: page.js(card_names) == ['<img src=x onerror="window.pwned=1">', "Blue Train", "Été"],
                 what="three albums, by name")
        # Art: cover.png beside the files, the picture embedded in a file; none for the third.
        loaded = """return [...document.querySelectorAll('#music-grid .cover')].map(i =>
                      i.complete ? (i.classList.contains('none') ? 'none' : i.naturalWidth) : 'loading')"""
        wait_for(lambda: page.js(loaded) == ["none", 8, 8], what="two covers loaded and one without")
        assert page.js("return window.pwned === undefined")

        # An album: its tracks in tag order; a click plays that track (queued next), by title.
        page.els("#music-grid .card")[1].click()
        rows = "return [...document.querySelectorAll('#music-list > li .name')].map(e => e.textContent)"
        wait_for(lambda: page.js(rows) == ["Lazy Bird", "Locomotion", "Moment"], what="Blue Train's tracks")
        assert page.text("#album-name") == "Blue Train"
        assert "Trane" in page.text("#album-sub") and "1958" in page.text("#album-sub")
        page.els("#music-list > li .row-main")[1].click()
        wait_for(lambda: (reel.status().get("source") or {}).get("path", "").endswith("02 Locomotion.flac"),
                 what="the clicked track to play")
        wait_for(lambda: page.text("#np-title") == "Locomotion", what="the title, not the file name")
        # Add the whole album: three more entries, titled.
        page.el("#album-add").click()
        wait_for(lambda: reel.rpc("queue.list")["length"] == 4, what="the album added")
        assert [e.get("title") for e in reel.rpc("queue.list")["entries"]] == ["Locomotion", "Lazy Bird", "Locomotion", "Moment"]

        # Artists, then one artist's albums.
        page.el("#music-artists").click()
        artists = "return [...document.querySelectorAll('#music-list > li .name')].map(e => e.textContent)"
        wait_for(lambda: page.js(artists) == ["Nobody", "Trane", "Zoë"], what="the artists")
        page.els("#music-list > li .row-main")[2].click()
        wait_for(lambda: page.js(card_names) == ["Été"], what="Zoë's albums")

        # Search over titles, artists and albums.
        page.el("#music-search").send_keys("locom" + Keys.ENTER)
        wait_for(lambda: page.js(rows) == ["Locomotion"], what="the search's one result")

        # An album copied in appears once the index has it (the page follows the scan stream).
        page.el("#music-albums").click()
        wait_for(lambda: len(page.js(card_names)) == 3, what="the albums again")
        tagged_album(root / "Trane" / "Giant Steps", "Trane", "Giant Steps", ["Naima"], date="1960")
        reel.reel("scan")
        wait_for(lambda: "Giant Steps" in page.js(card_names), what="the new album on the page")
        assert cover_errors(page) == []
    finally:
        driver.get("about:blank")


MUSIC_ROWS = "return [...document.querySelectorAll('#music-list > li .name')].map(e => e.textContent)"
CARD_NAMES = "return [...document.querySelectorAll('#music-grid .card .name')].map(e => e.textContent)"
COVERS = """return [...document.querySelectorAll('#music-grid .cover')].map(i =>
              i.complete ? (i.classList.contains('none') ? 'none' : i.naturalWidth) : 'loading')"""


def test_music_screens_and_search_in_track_order(driver, music_reel):
    """The music screens at both sizes, fitting; a search lists an album's tracks in track
    order (the files' names are in the reverse order), and no view button stays marked while
    the results show (on a touch screen a tapped button keeps :hover)."""
    reel, root = music_reel
    page = webtest.Page(driver, reel)
    try:
        for size in (PHONE, DESKTOP):
            page.open("#music", size)
            wait_for(lambda: page.js(COVERS) == ["none", 8, 8], what="two covers loaded and one without")
            page.screenshot("music-albums")
            check_layout(page, "the albums")
            page.els("#music-grid .card")[1].click()
            wait_for(lambda: page.js(MUSIC_ROWS) == ["Lazy Bird", "Locomotion", "Moment"], what="Blue Train's tracks")
            wait_for(lambda: page.js("return document.getElementById('album-cover').naturalWidth") == 8, what="its cover")
            page.screenshot("music-album")
            check_layout(page, "an album")
            page.el("#music-artists").click()
            wait_for(lambda: page.js(MUSIC_ROWS) == ["Nobody", "Trane", "Zoë"], what="the artists")
            page.screenshot("music-artists")
            check_layout(page, "the artists")
            page.el("#music-search").send_keys("blue train" + Keys.ENTER)
            wait_for(lambda: page.js(MUSIC_ROWS) == ["Lazy Bird", "Locomotion", "Moment"], what="the search in track order")
            toggles = """return ['music-albums', 'music-artists'].map(id => { const b = document.getElementById(id), s = getComputedStyle(b);
                                  return [b.getAttribute('aria-pressed'), s.borderColor, s.backgroundColor, s.color] })"""
            albums, artists = page.js(toggles)
            assert albums[0] == artists[0] == "false"
            if size == PHONE:
                assert artists == albums, "Artists looks marked while the results show"
            page.screenshot("music-search")
            check_layout(page, "the search results")
        assert cover_errors(page) == []
    finally:
        driver.get("about:blank")


def test_a_cover_is_drawn_only_once_it_has_loaded(driver, music_reel):
    """No broken image and no other album's art is ever drawn over an album's square: every
    frame, an album cover that is drawn has loaded (an album without art answers 404)."""
    reel, root = music_reel
    page = webtest.Page(driver, reel)
    try:
        page.open("#queue")
        page.js("""window.coverFrames = []; window.coverFlashes = [];
            const look = () => {
              for (const i of document.querySelectorAll('img.cover')) {
                const s = getComputedStyle(i);
                if (i.getClientRects().length && s.visibility === 'visible' && !(i.complete && i.naturalWidth > 0))
                  coverFlashes.push((i.id || i.closest('li').textContent) + ' ' + i.src);
              }
              coverFrames.push(1);
              requestAnimationFrame(look);
            };
            requestAnimationFrame(look);""")
        page.tab("music")
        wait_for(lambda: page.js(COVERS) == ["none", 8, 8], what="two covers loaded and one without")
        # The album without art after one with art, and after itself: the head's image each time.
        settled = """const i = document.getElementById('album-cover');
                     return i.complete && i.src.endsWith(arguments[0]) && (i.naturalWidth > 0 || i.classList.contains('none'))"""
        for card, artist in ((1, "Trane"), (0, "Nobody"), (0, "Nobody"), (2, "Zo%C3%AB")):
            page.els("#music-grid .card")[card].click()
            wait_for(lambda: page.js(settled, "&artist=" + artist), what=f"the cover of {artist}'s album loaded or known absent")
            page.el("#music-back").click()
            wait_for(lambda: page.js(COVERS) == ["none", 8, 8], what="the albums again")
        assert len(page.js("return coverFrames")) > 10, "frames were drawn while the covers loaded"
        assert page.js("return coverFlashes") == []
        failed = "return [...document.querySelectorAll('img')].filter(i => i.complete && i.naturalWidth === 0 && i.getClientRects().length && getComputedStyle(i).visibility !== 'hidden').length"
        assert page.js(failed) == 0
    finally:
        driver.get("about:blank")


def test_cover_route(music_reel):
    """/cover serves an album's art from the index: by album (and artist), never a file outside
    the music folders, 404 without art, 400 without an album."""
    import os
    import urllib.error
    import urllib.request

    reel, root = music_reel

    def get(query):
        try:
            with urllib.request.urlopen(reel.url + "/cover" + query, timeout=10) as r:
                return r.status, r.headers.get("content-type"), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("content-type"), e.read()

    status, kind, body = get("?album=Blue+Train&artist=Trane")
    assert (status, kind) == (200, "image/png") and body == png((30, 60, 200))
    status, kind, body = get("?album=%C3%89t%C3%A9")
    assert (status, kind) == (200, "image/png") and body == png((200, 60, 30))
    assert get("?album=Bare")[0] == 404
    assert get("?album=" + urllib.request.quote('<img src=x onerror="window.pwned=1">'))[0] == 404
    assert get("")[0] == 400
    # A cover.png that links out of the music folder is not followed.
    os.symlink("/etc/passwd", root / "Nobody" / "Bare" / "cover.png")
    assert get("?album=" + urllib.request.quote('<img src=x onerror="window.pwned=1">'))[0] == 404


def test_music_branch_in_the_library(driver, music_reel):
    """The music folders are the read-only /Music folder of the library: browsed and played like
    recordings, with no rename, move, delete or upload."""
    reel, root = music_reel
    page = webtest.Page(driver, reel)
    try:
        page.open("#library")
        wait_for(lambda: page.item_names() == ["Music"], what="the music folders' branch at the root")
        page.open_folder("/Music/Trane/Blue Train")
        assert page.item_names() == ["01 Moment.flac", "02 Locomotion.flac", "03 Lazy Bird.flac"]
        assert page.js("return document.getElementById('folder-upload').disabled")
        page.row("02 Locomotion.flac").find_element("css selector", ".more-button").click()
        labels = [b.text for b in page.row("02 Locomotion.flac").find_elements("css selector", ".actions > *")]
        assert labels == ["Play", "Play next"], labels
        page.action("02 Locomotion.flac", "Play")
        wait_for(lambda: (reel.status().get("source") or {}).get("path", "").endswith("02 Locomotion.flac"),
                 what="the track to play")
        wait_for(lambda: page.text("#np-title") == "Locomotion", what="its title")
    finally:
        driver.get("about:blank")


def test_a_station_shows_its_name_and_title(page, reel, tmp_path):
    """A stream from the project's loopback stream server: the now-playing card shows the title
    on air and, under it, the station's name (both from the player state, as they change)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Streams"))
    import stream_server

    mp3 = stream_server.make_mp3(str(tmp_path / "tone.mp3"), seconds=3)
    server = stream_server.StreamServer(Path(mp3).read_bytes(), station="Page Radio", titles=("On Air Now",)).start()
    try:
        reel.rpc("player.play", {"url": server.url("/live.mp3")})
        page.open("#queue")
        wait_for(lambda: page.text("#np-title") == "On Air Now", what="the title on air")
        assert "Page Radio" in page.text("#np-sub")
        check_layout(page, "a station playing")
        reel.rpc("player.stop")
    finally:
        server.stop()


def test_recorder_modes_marks_and_the_series_takes(page, reel):
    """The recorder tab's modes: voice-activated arms with the threshold line on the meter;
    continuous records segments, listed as they land, with a Mark button while a take is made;
    the marks show on the playing recording and a click seeks to one."""
    page.console_errors()  # the browser's log so far is the earlier tests' (it is read once)
    page.open("#recorder")
    # (The fieldsets lay their fields out in the form's grid: their fields are what is shown.)
    assert not shown(page, "#rec-level") and not shown(page, "#rec-segment")
    Select(page.el("#rec-mode")).select_by_value("vox")
    assert shown(page, "#rec-level") and shown(page, "#rec-preroll") and not shown(page, "#rec-segment")
    level = page.el("#rec-level")
    level.clear()
    level.send_keys("-30")
    page.el("#rec-name").send_keys("vox")
    page.el("#rec-start").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "armed", what="reeld to arm")
    assert reel.rpc("recorder.status")["threshold"] == -30
    wait_for(lambda: page.text("#rec-state") == "Armed, listening", what="the page to show armed")
    assert shown(page, "#meter-threshold")
    # -30 dB is half way along the meter's -60…0 dB.
    assert page.js("return parseFloat(document.getElementById('meter-threshold').style.left)") == 50
    assert not page.el("#rec-mark").is_enabled(), "no Mark while armed with no take"
    page.screenshot("recorder-armed")
    check_layout(page, "the recorder armed")
    page.el("#rec-stop").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "idle", what="the session to end")
    wait_for(lambda: not shown(page, "#meter-threshold"), what="the threshold line to go")

    Select(page.el("#rec-mode")).select_by_value("continuous")
    assert shown(page, "#rec-segment") and shown(page, "#rec-keep") and not shown(page, "#rec-level")
    segment = page.el("#rec-segment")
    segment.clear()
    segment.send_keys("0.05")  # 3 s
    name = page.el("#rec-name")
    name.clear()
    name.send_keys("log")
    page.el("#rec-format").send_keys("wav")
    page.el("#rec-start").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "recording", what=f"reeld to record (toasts: {page.toasts()})")
    status = reel.rpc("recorder.status")
    assert status["series"] is not None and status["item"]["name"] == "log 001", status
    wait_for(lambda: page.el("#rec-mark").is_enabled(), what="the Mark button")
    wait_for(lambda: reel.rpc("recorder.status")["elapsed"] >= 0.5, what="half a second recorded")
    page.el("#rec-mark").click()
    wait_for(lambda: any(t.startswith("Marked ") for t in page.toasts()), what="the mark's message")
    marked = reel.rpc("library.get", {"path": "/log 001"})["marks"]
    assert len(marked) == 1 and marked[0]["at"] > 0, marked
    # The first segment lands (3 s) while the second is being made: both listed.
    wait_for(lambda: len(page.els("#rec-takes > li")) >= 2, timeout=30, what="two takes listed")
    names = [li.get_attribute("data-name") for li in page.els("#rec-takes > li")]
    assert names[:2] == ["log 001", "log 002"], names
    assert page.text("#rec-takes > li:first-child .meta") == "0:03", page.text("#rec-takes > li:first-child .meta")
    page.screenshot("recorder-series")
    check_layout(page, "the recorder's series")
    page.el("#rec-stop").click()
    wait_for(lambda: reel.rpc("recorder.status")["state"] == "idle", what="the series to stop")

    # The marked take, playing (paused): its mark is a button that seeks there.
    first = reel.rpc("library.get", {"path": "/log 001"})
    reel.rpc("player.play", {"item": first["id"]})
    reel.rpc("player.pause")
    wait_for(lambda: len(page.els("#np-mark-list button")) == 1, what="the mark on the playing recording")
    reel.rpc("player.seek", {"position": 2.9})
    page.el("#np-mark-list button").click()
    wait_for(lambda: abs(reel.status()["position"] - marked[0]["at"]) < 1e-6, what="the seek to the mark")
    page.el("#np-mark").click()
    wait_for(lambda: len(page.els("#np-mark-list button")) == 2, what="the new mark listed")
    assert page.console_errors() == []
