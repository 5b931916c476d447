"""The live loop: a real frame source (a folder), injected readers, the real tracker."""

from __future__ import annotations

import time

import cv2
import numpy as np
import pytest

from companion.session import Hub
from companion.session.camera import STORE_RETRY_S, Processor, rectify
from companion.session.hub import CameraCard
from companion.session.testing import CounterEngine
from companion.store import Store
from companion.web import WebConfig, create_app
from vision.readings import DiceReading, Die

from .browser import serve, shot

pytest.importorskip("companion.tracker", reason="the tracker is not on main yet")

VALUES = [3, 4, 5, 2, 6]


def fake_dice(image: np.ndarray) -> DiceReading:
    """Dice wherever a frame has a bright square (the frames say where), values fixed."""
    if image[5, 5, 0] < 128:      # frames marked empty carry a dark corner
        return DiceReading(())
    return DiceReading(tuple(Die(v, "black", (40 + 80 * i, 100, 90 + 80 * i, 150), 0.99)
                             for i, v in enumerate(VALUES)))


@pytest.fixture
def frames_dir(tmp_path):
    folder = tmp_path / "frames"
    folder.mkdir()
    for i in range(40):
        img = np.full((240, 480, 3), 90, np.uint8)
        img[:10, :10] = 0 if i < 4 else 255
        cv2.imwrite(str(folder / f"f{i:03d}.png"), img)
    return folder


def wait_until(bus, predicate, timeout=20.0):
    deadline = time.monotonic() + timeout
    seen = -1
    while time.monotonic() < deadline:
        if predicate():
            return True
        seen = bus.wait(seen, min(0.5, deadline - time.monotonic()))
    return predicate()


def test_a_settled_roll_from_the_camera_becomes_the_machine_roll(tmp_path, frames_dir):
    pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main")
    hub = Hub(Store(tmp_path / "g.sqlite"))
    processor = Processor(hub, read_dice=fake_dice, read_sigil=None)
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source=str(frames_dir)),
                     hub=hub, processor=processor)
    try:
        session = hub.create_game("machine", "m", {"seed": 3})
        ok = wait_until(hub.games_bus, lambda: session.view()["state"]["phase"] == "player")
        assert ok, processor.events
        stored = session.view()["log"][-1]["event"]
        assert stored["source"] == "camera"
        assert sorted(stored["dice"].values()) == sorted(VALUES)
        assert any("roll settled" in e["text"] for e in processor.events)
    finally:
        app.extensions["doom"].close()


@pytest.mark.browser
def test_a_die_read_unsurely_is_named_on_the_pages(tmp_path, frames_dir, page):
    pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main")

    def unsure_dice(image: np.ndarray) -> DiceReading:
        reading = fake_dice(image)
        return DiceReading(tuple(Die(d.value, d.color, d.bbox, 0.45 if i == 1 else 0.99)
                                 for i, d in enumerate(reading.dice)))

    hub = Hub(Store(tmp_path / "g.sqlite"))
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source=str(frames_dir)),
                     hub=hub, processor=Processor(hub, read_dice=unsure_dice, read_sigil=None))
    session = hub.create_game("machine", "m", {"seed": 3})
    with serve(app) as served:
        assert wait_until(hub.games_bus, lambda: session.view()["state"]["phase"] == "player")
        assert "check the black 4" in session.view()["warning"]  # the roll counts, the 4 is named
        live = app.extensions["doom"].live
        frame = live.wait_frame(0, 10.0)
        while not frame.readings.get("dice"):
            frame = live.wait_frame(frame.seq, 10.0)
        image = cv2.imdecode(np.frombuffer(frame.jpeg, np.uint8), cv2.IMREAD_COLOR)
        # the unsure 4's box is drawn yellow, the sure 3's green
        assert image[125, 120, 2] > 200 and image[125, 120, 0] < 100
        assert image[125, 40, 2] < 150 and image[125, 40, 1] > 150
        page.goto(served.url + "/machine", wait_until="domcontentloaded")
        page.wait_for_selector("#warning:has-text('check the black 4 (read at 45%)')")
        shot(page, "machine-check")
        page.goto(served.url + "/", wait_until="domcontentloaded")
        page.wait_for_selector(".events-now li.check:has-text('check the black 4')")
        # the die read now is marked too, and only that one
        page.wait_for_selector("#dice-now .die.check")
        assert page.locator("#dice-now .die.check").count() == 1
        assert page.locator("#dice-now .die.check").inner_text() == "4"
        shot(page, "live-check")


def test_the_live_loop_publishes_frames_with_the_dice_drawn(tmp_path, frames_dir):
    hub = Hub(Store(tmp_path / "g.sqlite"), {"cat": CounterEngine("cat")})
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source=str(frames_dir)),
                     hub=hub, processor=Processor(hub, read_dice=fake_dice, read_sigil=None))
    live = app.extensions["doom"].live
    try:
        frame = live.wait_frame(0, 10.0)
        while not frame.readings.get("dice"):
            frame = live.wait_frame(frame.seq, 10.0)
        image = cv2.imdecode(np.frombuffer(frame.jpeg, np.uint8), cv2.IMREAD_COLOR)
        # the first die's box is drawn in green over the grey frame
        assert image[100, 60, 1] > 150 and image[100, 60, 0] < 150
        assert frame.captured_at > 0
        assert live.status()["source"]["state"] in ("live", "ended")
    finally:
        app.extensions["doom"].close()


def test_a_bad_source_is_bad_input(tmp_path):
    from companion.errors import BadInput
    with pytest.raises(BadInput, match="no such file"):
        create_app(WebConfig(db_path=tmp_path / "g.sqlite", source=str(tmp_path / "nope.mp4")))


def test_rectify_straightens_a_card():
    image = np.zeros((200, 300, 3), np.uint8)
    cv2.rectangle(image, (50, 40), (250, 160), (255, 255, 255), -1)
    # card of 100 x 60 mm mapped to the white rectangle: 2 px per mm, offset (50, 40)
    h = np.array([[2.0, 0, 50], [0, 2.0, 40], [0, 0, 1]])
    rect = rectify(image, h, (100.0, 60.0), px_per_mm=1.0)
    assert rect.shape == (60, 100, 3)
    assert rect[2:-2, 2:-2].min() == 255


def test_a_hand_in_the_reading_holds_the_dice_in_handling(tmp_path):
    hub = Hub(Store(tmp_path / "g.sqlite"), {"cat": CounterEngine("cat")})
    hand = {"on": False}

    def dice_with_hand(image: np.ndarray) -> DiceReading:
        return DiceReading(fake_dice(image).dice, hand=hand["on"])

    processor = Processor(hub, read_dice=dice_with_hand, read_sigil=None)
    frame = np.full((240, 480, 3), 200, np.uint8)
    for i in range(12):
        readings, _ = processor(frame, i / 10)
    assert readings["hand"] is False and readings["settled"]
    hand["on"] = True
    readings, _ = processor(frame, 1.3)
    assert readings["hand"] is True
    assert {d["state"] for d in readings["tracked"]} == {"handling"}


def test_the_dice_reader_gets_the_table_plane_its_readings_agreed_on(tmp_path):
    """Once three readings have shown the same table plane, the dice reader is given it
    (``table``) with every frame; a reader whose readings show none gets the image alone."""
    from vision.readings import TablePlane

    hub = Hub(Store(tmp_path / "g.sqlite"), {"cat": CounterEngine("cat")})
    plane = TablePlane((0.0, -0.6, 0.8), 0.55, (480, 240))
    given = []

    def dice_with_plane(image: np.ndarray, **kwargs) -> DiceReading:
        given.append(kwargs.get("table"))
        return DiceReading(fake_dice(image).dice, table=plane if len(given) <= 3 else None)

    processor = Processor(hub, read_dice=dice_with_plane, read_sigil=None)
    frame = np.full((240, 480, 3), 200, np.uint8)
    for i in range(6):
        processor(frame, i / 10)
    assert given[:3] == [None, None, None]
    assert [t is not None and t.focal == 0.55 for t in given[3:]] == [True] * 3
    assert given[3].normal == pytest.approx(plane.normal)

    plain = Processor(hub, read_dice=fake_dice, read_sigil=None)   # takes the image alone
    for i in range(4):
        readings, _ = plain(frame, i / 10)
    assert len(readings["dice"]) == len(VALUES)


def test_the_sigil_reader_gets_the_cards_last_pose_as_a_hint(tmp_path):
    """A steady card is found where it was (the reader's hint); after a frame where the card
    was not found, the reader searches afresh."""
    from companion.doomcat.layouts import load_layout
    from vision.readings import SigilState
    from vision.sigil.geometry import card_corners_mm, card_geometry
    from vision.sigil.pose import NoCard, Pose

    geom = card_geometry(load_layout("A"))
    h = cv2.getPerspectiveTransform(card_corners_mm(geom), np.float32(
        [[100, 40], [190, 45], [185, 170], [95, 165]])).astype(np.float64)
    hints: list = []

    def fake_sigil(image, layout, reference=None, *, hint=None):
        hints.append(None if hint is None else np.array(hint))
        if len(hints) == 3:
            raise NoCard("no card")
        pose = Pose(h, "outline", (), np.float32([[100, 40], [190, 45], [185, 170], [95, 165]]))
        return type("Reading", (), {"state": SigilState.of("A", [], [], [None] * 7, []),
                                    "pose": pose})()

    hub = Hub(Store(tmp_path / "g.sqlite"))
    hub.camera_card = lambda: CameraCard("p1c1", "A", "player 2, card 2")
    processor = Processor(hub, read_dice=lambda image: DiceReading(()), read_sigil=fake_sigil)
    frame = np.full((240, 320, 3), 90, np.uint8)
    for t in range(4):
        processor(frame, float(t))
    assert hints[0] is None and hints[2] is not None and hints[3] is None
    assert np.allclose(hints[1], h)


@pytest.mark.parametrize(("familiar", "counts"), [(None, True), ("F01", True), ("F04", False),
                                                  ("F02", False)])
def test_the_sigil_readers_bookkeeping_is_off_for_familiars_that_break_it(
        tmp_path, familiar, counts):
    """The Owl, Raven, Toad and Rat break "a number written, a candle crossed and a line drawn
    each turn": the reader is told not to hold their cards to it."""
    from vision.sigil.pose import NoCard

    seen: list = []

    def fake_sigil(image, layout, reference=None, *, hint=None, config=None):
        seen.append(config)
        raise NoCard("no card")

    processor = _watching_card_a(tmp_path, familiar, fake_sigil)
    processor(np.full((240, 320, 3), 90, np.uint8), 0.0)
    assert seen[0].match_written_crossed == counts


def _watching_card_a(tmp_path, familiar, read_sigil) -> Processor:
    """A live processor watching card A of a player with ``familiar``: its own sigil reader
    configurations (as installed), ``read_sigil`` called in the reader's place, no dice."""
    hub = Hub(Store(tmp_path / "g.sqlite"))
    hub.camera_card = lambda: CameraCard("p1c1", "A", "player 2, card 2")
    hub.camera_familiar = lambda: familiar
    processor = Processor(hub, read_dice=lambda image: DiceReading(()))
    processor.read_sigil = read_sigil
    return processor


def test_the_costly_outline_recovery_runs_now_and_then_while_the_card_is_missing(tmp_path):
    """The reader's recovery of a card whose outline a hand hides costs up to a second on a
    frame with card-shaped clutter and no card: the live loop asks for it on the first frame
    that misses the card and then on every tenth, and again on the first miss after a read."""
    from types import SimpleNamespace

    from vision.readings import SigilState
    from vision.sigil.pose import NoCard

    asked: list[bool] = []
    found = {"now": False}

    def fake_sigil(image, layout, reference=None, *, hint=None, config=None):
        asked.append(config.pose.recover)
        if found["now"]:   # a blank card read (no pose to draw)
            return SimpleNamespace(state=SigilState.of("A"), pose=None)
        raise NoCard("no card")

    processor = _watching_card_a(tmp_path, None, fake_sigil)
    frame = np.full((240, 320, 3), 90, np.uint8)
    for i in range(12):
        readings, _ = processor(frame, i / 10)
        assert "error" in readings["sigil"]
    assert asked == [True] + [False] * 9 + [True, False]
    # a card read resets the count: the next miss tries the recovery again
    found["now"] = True
    assert "error" not in processor(frame, 1.2)[0]["sigil"]
    found["now"] = False
    processor(frame, 1.3)
    assert asked[-1] is True


# ---------------------------------------------------------------- the source drops or ends
WAIT = 20.0   # generous bound of every wait: the machine is shared


def _clip(path, n: int = 4):
    """A real MJPG video of ``n`` bright grey frames (``fake_dice`` sees dice in them)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (480, 240))
    assert writer.isOpened()
    for _ in range(n):
        writer.write(np.full((240, 480, 3), 200, np.uint8))
    writer.release()
    return path


def _live_over(path, hub, **config):
    from companion.session.camera import SourceAdapter
    from companion.session.live import LiveLoop
    from vision.sources import SourceConfig, open_source

    source = open_source(str(path), SourceConfig(realtime=False, **config))
    processor = Processor(hub, read_dice=fake_dice, read_sigil=None)
    return LiveLoop(SourceAdapter(source), processor, hub.live_bus)


def _told(live, bus, seen, state):
    """Wait for the bus's publications (what wakes the pages) until one publishes the notice
    that the source is in ``state``; fail when the pages are not woken any more."""
    while True:
        version = bus.wait(seen, WAIT)
        assert version != seen, f"the pages were never told the source is {state}: " \
                                f"{live.status()['source']}"
        seen = version
        if live.frame().readings.get("source_state") == state:
            assert live.status()["source"]["state"] == state
            return seen


def test_the_pages_are_told_when_the_camera_drops_and_when_it_comes_back(tmp_path):
    path = _clip(tmp_path / "table.avi")
    hub = Hub(Store(tmp_path / "g.sqlite"), {"cat": CounterEngine("cat")})
    live = _live_over(path, hub, loop=True, backoff_initial=0.05, backoff_max=0.2)
    live.start()
    try:
        frame = live.wait_frame(0, WAIT)
        while not frame.readings.get("dice") or not live.status()["fps"]:
            frame = live.wait_frame(frame.seq, WAIT)   # the frame rate is measured each second
        seen = hub.live_bus.version
        away = path.rename(tmp_path / "away.avi")   # the camera drops out
        seen = _told(live, hub.live_bus, seen, "retrying")
        shown = live.frame()
        # the page says what is wrong and shows no dice as in view any more
        assert "no such file" in live.status()["source"]["last_error"]
        assert shown.readings["dice"] == [] and "events" in shown.readings
        assert live.status()["fps"] == 0   # no frame rate is shown for a camera that is gone
        image = cv2.imdecode(np.frombuffer(shown.jpeg, np.uint8), cv2.IMREAD_COLOR)
        assert image.mean() < 150   # the last view, dimmed, with the notice over it
        away.rename(path)   # and comes back
        while True:
            frame = live.wait_frame(shown.seq, WAIT)
            assert frame.seq != shown.seq, "the camera was not picked up again"
            shown = frame
            if frame.readings.get("dice"):
                break
        assert live.status()["source"]["state"] == "live"
    finally:
        live.stop()


def test_the_pages_are_told_when_the_video_ends_and_the_loop_stops_there(tmp_path):
    hub = Hub(Store(tmp_path / "g.sqlite"), {"cat": CounterEngine("cat")})
    live = _live_over(_clip(tmp_path / "table.avi"), hub)
    live.start()
    try:
        _told(live, hub.live_bus, -1, "ended")
        # nothing more will come: the loop's thread ends instead of asking the source again
        # and again (it spun a CPU at 100% after the end of a video)
        live._thread.join(WAIT)
        assert not live._thread.is_alive()
        assert live.frame().readings["dice"] == []
    finally:
        live.stop()


def test_a_roll_read_while_another_program_locks_the_database_is_stored_once_it_can_be(
        tmp_path):
    pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main")
    import sqlite3

    path = tmp_path / "g.sqlite"
    store = Store(path)
    store._db.execute("PRAGMA busy_timeout = 50")   # not the 10 s a page waits for a lock
    hub = Hub(store)
    session = hub.create_game("machine", "m", {"seed": 3})
    processor = Processor(hub, read_dice=fake_dice, read_sigil=None)
    frame = np.full((240, 480, 3), 200, np.uint8)
    other = sqlite3.connect(path, isolation_level=None)   # a program holding a write lock
    other.execute("BEGIN EXCLUSIVE")
    try:
        for i in range(8):
            readings, _ = processor(frame, i / 10)
    finally:
        other.execute("ROLLBACK")
        other.close()
    roll = [e for e in readings["events"] if "roll settled" in e["text"]]
    assert len(roll) == 1 and "database" in roll[0]["refused"]   # said, and kept
    assert session.view()["state"]["phase"] == "roll"   # the game as it was
    # the lock is gone: the roll is stored with the next try (not on every frame: each try
    # may wait for the lock's timeout)
    t = 0.8
    while t < 0.7 + STORE_RETRY_S:
        readings, _ = processor(frame, t)
        t += 0.1
    assert session.view()["state"]["phase"] == "player"
    stored = session.view()["log"][-1]["event"]
    assert stored["source"] == "camera" and sorted(stored["dice"].values()) == sorted(VALUES)
    assert [e.get("refused") for e in readings["events"]] == [None]
    processor(frame, t)
    assert len(session.view()["log"]) == 1   # once


def test_the_video_stream_of_a_source_that_has_ended_shows_its_notice_and_ends(tmp_path):
    # a browser shows a multipart part only when the next one starts: after the video's end
    # the stream sends the notice twice and closes, as for no camera, instead of holding the
    # page loading (and the notice unseen) for ever
    import threading

    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite",
                               source=str(_clip(tmp_path / "table.avi"))))
    rt = app.extensions["doom"]
    try:
        rt.live._thread.join(WAIT)
        assert not rt.live._thread.is_alive()
        assert rt.live.frame().readings.get("source_state") == "ended"
        # a stream that never ends is ended by closing the app after WAIT: the test fails
        fired = threading.Event()
        watchdog = threading.Timer(WAIT, lambda: (fired.set(), rt.close()))
        watchdog.start()
        for _ in range(2):   # a page opened after the end, and again on reload
            res = app.test_client().get("/video.mjpg", buffered=False)
            body = b"".join(res.response)
            res.close()
            assert not fired.is_set(), "the stream of an ended video never ends"
            assert body.count(b"--frame\r\nContent-Type: image/jpeg") == 2
            assert body.endswith(b"--frame--\r\n")
        watchdog.cancel()
    finally:
        rt.close()
