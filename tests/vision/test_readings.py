from __future__ import annotations

import pytest

from companion.errors import DataFileError
from vision.readings import DiceReading, Die, SigilState, TablePlane, TopBox, box_center

GOOD = {"layout": "A", "lines": [[0, 5], [2, 9]], "crossed": [3, 7],
        "top": [{"value": 4, "circled": False}, {"value": 4, "circled": True},
                None, None, None, None, None],
        "unknown": []}


def test_sigil_state_round_trip():
    state = SigilState.from_json(GOOD)
    assert state.to_json() == GOOD
    assert state.used == (0, 2, 5, 9)
    assert state.top[1] == TopBox(4, True)


def test_sigil_state_is_canonical_whatever_the_order():
    state = SigilState.of("B", lines=[(9, 2), (5, 0)], crossed=[7, 3],
                          unknown=["top 5", "line 2-9"])
    assert state.lines == ((0, 5), (2, 9))
    assert state.crossed == (3, 7)
    assert state.unknown == ("line 2-9", "top 5")
    assert SigilState("B", lines=((9, 2), (5, 0))) == SigilState.of("B", [(0, 5), (2, 9)])


@pytest.mark.parametrize(("change", "path", "rule"), [
    ({"lines": [[0, 12]]}, "$.lines[0]", "candle 12 is out of range 0-11"),
    ({"lines": [[0, 5], [5, 0]]}, "$.lines[1]", "line 0-5 is listed twice"),
    ({"lines": [[3, 3]]}, "$.lines[0]", "a line joins two different candles, got 3-3"),
    ({"lines": [[1, 2, 3]]}, "$.lines[0]", "a line is a pair of candle indices, got [1, 2, 3]"),
    ({"crossed": [3, 3]}, "$.crossed", "a candle is listed twice (it is crossed once)"),
    ({"crossed": [-1]}, "$.crossed[0]", "expected a candle index 0-11, got -1"),
    ({"top": [None] * 6}, "$.top", "expected a list of 7 top boxes"),
    ({"top": [{"value": 7}] + [None] * 6}, "$.top[0]",
     'expected null or {"value": 1-6, "circled": true/false}'),
    ({"unknown": ["the cat"]}, "$.unknown[0]",
     "expected \"line a-b\", \"candle c\" or \"top k\", got 'the cat'"),
    ({"unknown": ["top 7"]}, "$.unknown[0]", "'top 7' is out of range"),
    ({"layout": ""}, "$.layout", "expected the layout name (a non-empty string)"),
    ({"top": [{"value": 2, "circeld": True}] + [None] * 6}, "$.top[0].circeld",
     "not a key of a top box: did you mean 'circled'?"),
])
def test_sigil_state_refuses_malformed_documents(change, path, rule):
    with pytest.raises(DataFileError) as exc:
        SigilState.from_json({**GOOD, **change}, source="s.json")
    assert (exc.value.file, exc.value.json_path, exc.value.rule) == ("s.json", path, rule)


@pytest.mark.parametrize(("key", "typo"), [
    ("lines", "lnes"), ("crossed", "Crossed"), ("crossed", "crosed"), ("unknown", "unkown"),
    ("top", "tops"),
])
def test_sigil_state_refuses_a_misspelt_key(key, typo):
    """Read as an absent key, a misspelt one would leave the state without its lines, crossed
    candles, ... without a word (a label, a state given to score)."""
    doc = {k: v for k, v in GOOD.items() if k != key} | {typo: GOOD[key]}
    with pytest.raises(DataFileError) as exc:
        SigilState.from_json(doc, source="s.json")
    assert (exc.value.json_path, exc.value.rule) == (
        f"$.{typo}", f"not a key of a sigil state: did you mean {key!r}?")


def test_sigil_state_keeps_taking_keys_it_does_not_know():
    """More keys are welcome (``sigil --json`` adds pose, evidence and notes, which ``score -``
    reads): only a near miss of a key the document lacks is taken for a typo."""
    doc = {**GOOD, "pose": {}, "evidence": {}, "notes": [], "lnes": 1}
    assert SigilState.from_json(doc) == SigilState.from_json(GOOD)
    assert SigilState.from_json({"layout": "A", "notes": [], "title": "x"}).lines == ()


def test_die_contract():
    die = Die(5, "black", (412, 130, 470, 188), 0.99)
    assert die.to_json() == {"value": 5, "color": "black", "bbox": [412, 130, 470, 188],
                             "confidence": 0.99, "state": "flat"}
    assert die.center == (441.0, 159.0)
    reading = DiceReading((die, Die(None, "yellow", (0, 0, 9, 9), 0.4, "cocked")))
    assert DiceReading.from_json(reading.to_json()) == reading
    held = DiceReading((die,), hand=True)
    assert held.to_json()["hand"] is True and DiceReading.from_json(held.to_json()) == held
    assert DiceReading.from_json({"dice": []}).hand is False  # the key is optional


def test_a_reading_carries_the_table_plane_its_dice_showed():
    plane = TablePlane((0.0, -0.6, 0.8), 0.55, (1280, 720))
    reading = DiceReading((Die(5, "black", (412, 130, 470, 188), 0.99),), table=plane)
    doc = reading.to_json()
    assert doc["table"] == {"normal": [0.0, -0.6, 0.8], "focal": 0.55, "size": [1280, 720]}
    assert DiceReading.from_json(doc) == reading
    assert DiceReading().to_json()["table"] is None
    assert DiceReading.from_json({"dice": []}).table is None  # the key is optional


@pytest.mark.parametrize("table", [
    {"normal": [0, 0], "focal": 0, "size": [640, 480]},
    {"normal": [0, 0, 2], "focal": 0, "size": [640, 480]},
    {"normal": [0, 0, 1], "focal": -1, "size": [640, 480]},
    {"normal": [0, 0, 1], "focal": 0, "size": [640]},
    {"normal": [0, 0, 1], "focal": 0},
    "flat",
])
def test_a_malformed_table_plane_is_refused_where_it_is(table):
    with pytest.raises(DataFileError, match=r"\$\.table"):
        DiceReading.from_json({"dice": [], "table": table}, source="r.json")


def test_dice_reading_refuses_a_hand_that_is_not_a_bool():
    with pytest.raises(DataFileError, match=r"\$\.hand"):
        DiceReading.from_json({"dice": [], "hand": "yes"}, source="r.json")


@pytest.mark.parametrize("kwargs", [
    {"value": None, "state": "flat"},
    {"value": 7, "state": "flat"},
    {"value": 3, "state": "cocked"},
    {"value": None, "state": "tilted"},
    {"value": 3, "bbox": (10, 0, 5, 5)},
    {"value": 3, "confidence": 1.5},
])
def test_die_refuses_a_guess_or_a_malformed_value(kwargs):
    base = {"color": "white", "bbox": (0, 0, 5, 5), "confidence": 0.5}
    with pytest.raises(ValueError):
        Die(**{**base, **kwargs})


def test_dice_reading_from_json_names_the_bad_die():
    with pytest.raises(DataFileError, match=r"at \$\.dice\[1\]"):
        DiceReading.from_json({"dice": [{"value": 1, "bbox": [0, 0, 1, 1]},
                                        {"value": 9, "bbox": [0, 0, 1, 1]}]}, source="r.json")


def test_a_box_centre_is_the_same_for_a_die_and_its_box():
    assert box_center([10, 20, 30, 60]) == (20.0, 40.0)
    assert Die(3, "white", (10.0, 20.0, 30.0, 60.0), 0.9, "flat").center == (20.0, 40.0)
