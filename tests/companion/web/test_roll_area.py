"""The camera's dice into Doom Machine: the roll area (the HP dice on the part cards never join
the player's roll), and a die read with little confidence named for the player to check."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.session.camera import Processor
from vision.readings import DiceReading, Die

pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main")

W, H = 640, 480
S = 40


def black(values, y=360):
    return [Die(v, "black", (60 + 90 * i, y, 60 + 90 * i + S, y + S), 0.99)
            for i, v in enumerate(values)]


def hp(values):
    # yellow HP dice resting on the part cards, in the back row of the table
    return [Die(v, "yellow", (100 + 160 * i, 40, 100 + 160 * i + S, 40 + S), 0.99)
            for i, v in enumerate(values)]


class Script:
    """A dice reader reading what the test says the table holds now."""

    def __init__(self) -> None:
        self.dice: list[Die] = []

    def __call__(self, image):
        return DiceReading(tuple(self.dice))


def play(processor, reader, frames, t0):
    """Feed ``frames`` (lists of dice) at 10 fps from time ``t0``; the last overlay."""
    overlay = None
    for i, dice in enumerate(frames):
        reader.dice = dice
        readings, overlay = processor(np.full((H, W, 3), 90, np.uint8), t0 + i / 10)
    return readings, overlay


def turn_hp_die():
    """The player picks up the first part's HP die and sets it back one pip lower (3 -> 2)."""
    pool = black([1, 2, 3, 4, 5])
    return [hp([3, 4, 2]) + pool] * 3 + [hp([3, 4, 2])[1:] + pool] * 5 \
        + [hp([2, 4, 2]) + pool] * 10


def thrown(final):
    """Dice tumbling in from the left (moving several die sizes a frame) then ``final``."""
    out = []
    for k in range(4, 0, -1):
        out.append([Die((d.value or 1) % 6 + 1, d.color,
                        (d.bbox[0] - 60 * k, d.bbox[1], d.bbox[2] - 60 * k, d.bbox[3]), 0.99)
                    for d in final])
    return out + [final] * 8


@pytest.fixture
def machine_hub(make_hub):
    from companion.session.machine import MachineAdapter
    hub = make_hub(machine=MachineAdapter())
    session = hub.create_game("machine", "m", {"seed": 3})
    return hub, session


def test_without_a_roll_area_the_hp_dice_spoil_the_game(machine_hub):
    hub, session = machine_hub
    reader = Script()
    processor = Processor(hub, read_dice=reader, read_sigil=None)
    play(processor, reader, [hp([3, 4, 2])] * 8
         + [hp([3, 4, 2]) + d for d in thrown(black([1, 2, 3, 4, 5]))], 0.0)
    # the HP dice settle first and are refused as a roll of 3 dice
    assert any("3 dice but 5" in (e.get("refused") or "") for e in processor.events)
    assert session.view()["state"]["phase"] == "player"
    # a part losing 1 HP (its die 3 -> 2) passes for the +/-1 slot used on a die of the pool
    play(processor, reader, turn_hp_die(), 3.0)
    assert session.view()["log"][-1]["event"]["type"] == "modify", processor.events


def test_with_a_roll_area_only_the_thrown_dice_make_the_roll(machine_hub):
    hub, session = machine_hub
    hub.set_roll_area((0.0, 0.5, 1.0, 1.0))      # the front half of the table
    reader = Script()
    processor = Processor(hub, read_dice=reader, read_sigil=None)
    readings, overlay = play(processor, reader, [hp([3, 4, 2])] * 8
                             + [hp([3, 4, 2]) + d for d in thrown(black([1, 2, 3, 4, 5]))],
                             0.0)
    state = session.view()["state"]
    assert state["phase"] == "player", processor.events
    stored = session.view()["log"][-1]["event"]
    assert stored["source"] == "camera" and sorted(stored["dice"].values()) == [1, 2, 3, 4, 5]
    assert len(readings["dice"]) == 5 and len(readings["ignored"]) == 3
    assert {d["color"] for d in readings["ignored"]} == {"yellow"}
    # the HP dice are drawn grey, the player's dice green, the area's edge in cyan
    x0, y0 = (int(v) for v in hp([3])[0].bbox[:2])
    assert tuple(overlay[y0, x0 + 10]) == (150, 150, 150)
    bx, by = (int(v) for v in black([1])[0].bbox[:2])
    assert overlay[by, bx + 10][1] > 200 and overlay[by, bx + 10][0] < 100
    assert tuple(overlay[H // 2, W // 2]) == (255, 255, 0)

    # the player damages a part: its HP die turns 3 -> 2 on the card; no die of the pool moves
    before = len(session.view()["log"])
    play(processor, reader, turn_hp_die(), 3.0)
    assert len(session.view()["log"]) == before
    assert not any(e["kind"] == "nudged" for e in processor.events)


def test_dice_left_still_on_the_table_do_not_join_the_next_roll(machine_hub):
    # a die left lying in the roll area (not picked up) while the others are thrown: the
    # tracker calls it a re-roll; in the roll phase the thrown dice are the roll
    from companion.session.machine import MachineAdapter
    _, session = machine_hub
    adapter = MachineAdapter()
    doc = {"kind": "reroll", "rerolled": [2, 3, 4, 5, 6],
           "dice": [{"id": i, "value": v, "color": "black", "state": "flat"}
                    for i, v in zip(range(1, 7), [6, 1, 2, 3, 4, 5], strict=True)],
           "replaced": []}
    doc["dice"][0]["id"] = 9      # the die that stayed still
    event = adapter.from_tracker(session.state, doc)
    assert event["type"] == "roll" and sorted(event["dice"].values()) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("area", "status", "message"), [
    ([0.1, 0.5, 0.9, 1.0], 200, None),
    (None, 200, None),
    ([0.5, 0.5, 0.2, 1.0], 400, "x0 < x1"),
    ([0.1, 0.5, 0.12, 1.0], 400, "too small"),
    ([0.1, 0.5, 0.9, 1.5], 400, "$.area"),
    ([0.1, 0.5, 0.9], 400, "$.area"),
    ("front", 400, "$.area"),
])
def test_the_roll_area_api_checks_its_input(client, area, status, message):
    res = client.post("/api/live/roll-area", json={"area": area})
    assert res.status_code == status, res.get_json()
    if message:
        assert message in res.get_json()["error"]
    else:
        assert res.get_json()["area"] == area


def test_the_roll_area_is_kept_in_the_store(make_hub, tmp_path):
    hub = make_hub()
    hub.set_roll_area((0.1, 0.4, 0.9, 0.95))
    again = make_hub(path=tmp_path / "g.sqlite")
    assert again.roll_area() == pytest.approx((0.1, 0.4, 0.9, 0.95))
    again.set_roll_area(None)
    assert hub.roll_area() is None


def test_cv2_is_the_reader_of_the_overlay_colour():
    # the overlay's cyan edge is BGR (255, 255, 0): the test above reads raw pixels
    img = np.zeros((10, 10, 3), np.uint8)
    cv2.line(img, (0, 5), (9, 5), (255, 255, 0), 1)
    assert tuple(img[5, 5]) == (255, 255, 0)


def test_a_few_dice_moved_about_before_the_roll_say_nothing(machine_hub):
    from companion.session.machine import MachineAdapter
    _, session = machine_hub
    doc = {"kind": "reroll", "rerolled": [2],
           "dice": [{"id": 1, "value": 6, "color": "black", "state": "flat"},
                    {"id": 2, "value": 3, "color": "black", "state": "flat"}], "replaced": []}
    assert MachineAdapter().from_tracker(session.state, doc) is None


@pytest.mark.browser
def test_the_machine_page_asks_for_a_roll_area_while_the_camera_feeds_it(tmp_path, page):
    from companion.session import Hub
    from companion.store import Store
    from companion.web import WebConfig, create_app

    from .browser import serve, shot
    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(3):
        cv2.imwrite(str(frames / f"f{i}.png"), np.full((240, 480, 3), 90, np.uint8))
    hub = Hub(Store(tmp_path / "m.sqlite"))
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source=str(frames)), hub=hub,
                     processor=Processor(hub, read_dice=Script(), read_sigil=None))
    with serve(app) as served:
        hub.create_game("machine", "m", {"seed": 3})     # the camera now feeds it
        page.goto(served.url + "/machine", wait_until="domcontentloaded")
        page.wait_for_selector("#roll-area-hint", state="visible")
        assert "HP dice" in page.locator("#roll-area-hint").inner_text()
        shot(page, "machine-roll-area-hint")
        hub.set_roll_area((0.0, 0.5, 1.0, 1.0))
        page.wait_for_selector("#roll-area-hint", state="hidden")
        assert page.errors == []


@pytest.mark.browser
def test_without_a_camera_the_machine_page_does_not_ask(tmp_path, page):
    from companion.session import Hub
    from companion.store import Store
    from companion.web import WebConfig, create_app

    from .browser import serve
    hub = Hub(Store(tmp_path / "m.sqlite"))
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        hub.create_game("machine", "m", {"seed": 3})
        page.goto(served.url + "/machine", wait_until="domcontentloaded")
        page.wait_for_selector("#roll-manual")
        assert page.locator("#roll-area-hint").is_hidden()


def test_a_die_read_unsurely_is_taken_and_named_to_check(machine_hub):
    hub, session = machine_hub
    reader = Script()
    processor = Processor(hub, read_dice=reader, read_sigil=None)
    pool = black([1, 2, 3, 4, 5])
    pool[3] = Die(4, "black", pool[3].bbox, 0.5)  # the reader is unsure of this 4
    play(processor, reader, thrown(pool), 0.0)
    roll = session.view()["log"][-1]["event"]
    assert roll["type"] == "roll" and sorted(roll["dice"].values()) == [1, 2, 3, 4, 5]
    [event] = [e for e in processor.events if e["kind"] == "roll"]
    assert event["check"] and event["text"].endswith("check the black 4 (read at 50%)")
    assert session.view()["warning"] == "camera: " + event["text"]
