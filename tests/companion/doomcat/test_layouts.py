from __future__ import annotations

import copy
import json
import math
from collections import Counter
from fractions import Fraction
from itertools import combinations

import pytest

from companion.cli import main
from companion.doomcat.layouts import (
    BUILTIN,
    LAYOUTS_DIR,
    Layout,
    all_layouts,
    layout_names,
    load_layout,
    registry_dir,
)
from companion.errors import BadInput, DataFileError

LETTERS = list(BUILTIN)


def _segment_distance(p, a, b) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


@pytest.fixture(autouse=True)
def empty_registry(tmp_path, monkeypatch):
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path / "home"))


@pytest.mark.parametrize("letter", LETTERS)
def test_shipped_layout_has_the_fixed_shape(letter):
    layout = load_layout(letter)
    assert layout.name == letter
    assert layout.size_mm == (88.0, 126.0)
    assert len(layout.candles) == 12
    assert Counter(layout.numbers) == {n: 2 for n in range(1, 7)}
    assert len(layout.top_boxes) == 7 and len(layout.score_boxes) == 4
    assert len(layout.markers) == 4 and layout.marker_dictionary == "DICT_4X4_50"
    assert layout.stars


@pytest.mark.parametrize("letter", LETTERS)
def test_every_straight_chord_clears_other_candles_unless_must_curve(letter):
    layout = load_layout(letter)
    must_curve = set(layout.must_curve)
    for i, j in combinations(range(12), 2):
        a, b = layout.candles[i], layout.candles[j]
        clear = min(_segment_distance(layout.candles[k].center, a.center, b.center)
                    for k in range(12) if k not in (i, j))
        margin = layout.candles[0].radius + 1.5
        if (i, j) in must_curve:
            assert clear < margin, f"{letter}: {i}-{j} is marked must-curve but clears {clear:.2f}"
        else:
            assert clear >= margin, f"{letter}: chord {i}-{j} passes {clear:.2f} mm from a candle"


@pytest.mark.parametrize("letter", LETTERS)
def test_no_three_candles_collinear_exactly(letter):
    centers = [tuple(Fraction(v) for v in c.center) for c in load_layout(letter).candles]
    for p, q, r in combinations(centers, 3):
        assert (q[0] - p[0]) * (r[1] - p[1]) - (q[1] - p[1]) * (r[0] - p[0]) != 0


@pytest.mark.parametrize("letter", LETTERS)
def test_elements_keep_clear_of_each_other(letter):
    layout = load_layout(letter)
    vx, hy = layout.dividers
    top_bottom = max(b[3] for b in layout.top_boxes)
    score_top = min(b[1] for b in layout.score_boxes)
    for c in layout.candles:
        x, y = c.center
        assert top_bottom < y - c.radius and y + c.radius < score_top
        assert abs(x - vx) > c.radius and abs(y - hy) > c.radius  # quadrant is unambiguous
    for s in layout.stars:
        assert all(math.dist(s, c.center) > c.radius + 1 for c in layout.candles)
        assert s[0] != vx and s[1] != hy
        for i, j in combinations(range(12), 2):
            assert _segment_distance(s, layout.centers[i], layout.centers[j]) >= 1.0
    boxes = [*layout.top_boxes, *layout.score_boxes]
    for m in layout.markers:
        quiet = m.size / 2 + 1.0
        x0, y0, x1, y1 = m.center[0] - quiet, m.center[1] - quiet, m.center[0] + quiet, \
            m.center[1] + quiet
        for bx0, by0, bx1, by1 in boxes:
            assert bx1 <= x0 or bx0 >= x1 or by1 <= y0 or by0 >= y1
        for c in layout.candles:
            cx, cy = c.center
            assert not (x0 - c.radius < cx < x1 + c.radius and y0 - c.radius < cy < y1 + c.radius)


def test_markers_sit_near_the_four_corners_with_distinct_ids_per_letter():
    ids: list[int] = []
    for layout in all_layouts():
        w, h = layout.size_mm
        corners = {(round(m.center[0] / w), round(m.center[1] / h)) for m in layout.markers}
        assert corners == {(0, 0), (1, 0), (0, 1), (1, 1)}
        ids += [m.id for m in layout.markers]
    assert len(ids) == len(set(ids)) == 16


def test_every_letter_plays_differently():
    layouts = [load_layout(x) for x in LETTERS]
    for a, b in combinations(layouts, 2):
        assert a.centers != b.centers
        assert (a.numbers, a.stars) != (b.numbers, b.stars)


@pytest.mark.parametrize("letter", LETTERS)
def test_candle_names_tell_the_twins_apart_by_the_side_they_lie_on(letter):
    layout = load_layout(letter)
    names = layout.candle_names
    assert len(set(names)) == len(names) == 12
    opposite = {"left": "right", "right": "left", "upper": "lower", "lower": "upper"}
    for number in range(1, 7):
        a, b = layout.candles_numbered(number)
        side_a, num_a = names[a].split()
        side_b, num_b = names[b].split()
        assert num_a == num_b == str(number) and opposite[side_a] == side_b
        (ax, ay), (bx, by) = layout.candles[a].center, layout.candles[b].center
        left_right = abs(bx - ax) >= abs(by - ay)
        assert (side_a in ("left", "right")) == left_right
        # the word is true of the candle: the left one lies left of its twin, the upper above
        first = {"left": ax < bx, "right": ax > bx, "upper": ay < by, "lower": ay > by}[side_a]
        assert first


def test_candle_names_of_card_a_as_a_player_sees_them():
    layout = load_layout("A")
    # the 3 at the far left edge and the 3 right of the centre; the 5 at the top right, the
    # 5 in the lower left quarter
    assert layout.candle_names[2] == "left 3" and layout.candle_names[9] == "right 3"
    assert layout.candle_names[4] == "upper 5" and layout.candle_names[7] == "lower 5"
    assert layout.element_name("line 2-7") == "line left 3 – lower 5"
    assert layout.element_name("candle 4") == "candle upper 5"
    assert layout.element_name("top 0") == "top box 1"
    for odd in ("line 2-12", "candle x", "smudge 3", "top"):
        assert layout.element_name(odd) == odd


@pytest.mark.parametrize("letter", LETTERS)
def test_json_round_trip(letter):
    layout = load_layout(letter)
    assert Layout.from_json(layout.to_json(), source="x") == layout
    on_disk = json.loads((LAYOUTS_DIR / f"{letter}.json").read_text())
    assert layout.to_json() == on_disk


def _mutated(mutate):
    doc = json.loads((LAYOUTS_DIR / "A.json").read_text())
    doc = copy.deepcopy(doc)
    mutate(doc)
    return doc


def _set(path, value):
    def mutate(doc):
        target = doc
        for part in path[:-1]:
            target = target[part]
        target[path[-1]] = value
    return mutate


@pytest.mark.parametrize(("mutate", "json_path", "rule"), [
    (_set(["candles", 0, "number"], 7), "$.candles[0].number", "greater than the maximum"),
    (_set(["candles", 1, "number"], 1), "$.candles", "1 is on 3"),
    (lambda d: d["candles"].pop(), "$.candles", "too short"),
    (_set(["candles", 2, "center"], [87.0, 60.0]), "$.candles[2].center", "does not fit"),
    (_set(["candles", 2, "center"], [17.0, 27.0]), "$.candles[2].center", "overlap"),
    (_set(["candles", 2, "center"], [48.0, 33.0]), "$.candles", "one straight line"),
    (_set(["candles", 2, "center"], [44.0, 90.0]), "$.candles[2].center", "on a divider"),
    (_set(["dividers", "vertical_x"], 95.0), "$.dividers.vertical_x", "off the card"),
    (_set(["top_boxes", 3], [30.0, 3.0, 20.0, 12.0]), "$.top_boxes[3]", "x0 < x1"),
    (lambda d: d["top_boxes"].pop(), "$.top_boxes", "too short"),
    (_set(["markers", "items", 1, "id"], 0), "$.markers.items[1].id",
     "marker id 0 is used twice (also at $.markers.items[0].id)"),
    (_set(["must_curve"], [[3, 3]]), "$.must_curve[0]", "two different candles"),
    (_set(["must_curve"], [[3, 12]]), "$.must_curve[0][1]", "greater than the maximum"),
    (_set(["name"], 5), "$.name", "not of type 'string'"),
    (_set(["size_mm"], [2000.0, 3000.0]), "$.size_mm", "greater than the maximum of 200"),
    (_set(["size_mm"], [1e308, 1e308]), "$.size_mm", "greater than the maximum of 200"),
    (_set(["stars", 0], [1e300, 5.0]), "$.stars[0][0]", "greater than the maximum of 200"),
])
def test_broken_layouts_name_file_path_and_rule(tmp_path, mutate, json_path, rule):
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(_mutated(mutate)))
    with pytest.raises(DataFileError) as exc:
        load_layout(str(path))
    assert exc.value.file == str(path)
    assert exc.value.json_path.startswith(json_path), exc.value
    assert rule in exc.value.rule


def test_a_shipped_design_whose_file_names_another_is_refused(tmp_path, monkeypatch):
    """A.json is design A: a file naming itself B (a copy edited from B.json) would make
    'layouts' list B twice and games on card A be drawn on B's name."""
    (tmp_path / "A.json").write_text(json.dumps(_mutated(_set(["name"], "B"))))
    monkeypatch.setattr("companion.doomcat.layouts.LAYOUTS_DIR", tmp_path)
    with pytest.raises(DataFileError) as exc:
        load_layout("a")
    assert (exc.value.file, exc.value.json_path) == (str(tmp_path / "A.json"), "$.name")
    assert exc.value.rule == '"B" is another design\'s name: this file is sigil design "A"'


@pytest.mark.parametrize(("size", "rule"), [
    ("[Infinity, Infinity]", "Infinity is not a number JSON allows"),
    ("[88, NaN]", "NaN is not a number JSON allows"),
    ("[1e400, 126]", "1e400 is too large a number"),
])
def test_non_finite_numbers_in_a_layout_are_refused(tmp_path, size, rule):
    path = tmp_path / "inf.json"
    path.write_text(json.dumps(_mutated(lambda d: None)).replace(
        '"size_mm": [88.0, 126.0]', f'"size_mm": {size}'))
    with pytest.raises(DataFileError) as exc:
        load_layout(str(path))
    assert exc.value.json_path.startswith("$.size_mm[") and exc.value.rule == rule


@pytest.mark.parametrize("argv", [
    ["cards", "print", "--layout", "{layout}", "--out", "{tmp}/x.png"],
    ["cards", "print", "--layout", "{layout}", "--out", "{tmp}/x.pdf"],
    ["cards", "register", str(LAYOUTS_DIR / "A.json"), "--layout", "{layout}", "--name", "X3"],
    ["score", "{tmp}/state.json", "--goals", "1"],
])
@pytest.mark.parametrize("size", ["[Infinity, Infinity]", "[2000, 3000]"])
def test_commands_refuse_a_layout_of_no_physical_size(tmp_path, capsys, argv, size):
    layout = tmp_path / "big.json"
    layout.write_text(json.dumps(_mutated(lambda d: None)).replace(
        '"size_mm": [88.0, 126.0]', f'"size_mm": {size}'))
    (tmp_path / "state.json").write_text(json.dumps(
        {"layout": str(layout), "lines": [], "crossed": [], "top": [None] * 7}))
    argv = [a.format(layout=layout, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"doomcompanion: error: {layout}: at $.size_mm[") and err.count("\n") == 1
    assert not list(tmp_path.glob("x.*"))


def test_unknown_layout_lists_the_known_names():
    with pytest.raises(BadInput, match=r"unknown layout 'Z'.*A, B, C, D"):
        load_layout("Z")


def test_missing_layout_file():
    with pytest.raises(BadInput, match="no such layout file"):
        load_layout("nowhere/x.json")


def test_a_folder_given_as_a_layout_is_named_a_folder(tmp_path, monkeypatch, capsys):
    (tmp_path / "adir").mkdir()
    monkeypatch.chdir(tmp_path)
    for given in (str(tmp_path / "adir"), "adir"):
        with pytest.raises(BadInput, match=f"^{given}: is a folder, not a file$"):
            load_layout(given)
    photo = LAYOUTS_DIR / "A.json"  # not read: the layout is checked first
    assert main(["cards", "register", str(photo), "--layout", "adir", "--name", "X4"]) == 2
    assert capsys.readouterr().err == "doomcompanion: error: adir: is a folder, not a file\n"


def test_malformed_json_names_line(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"name": "A",\n "candles": [}')
    with pytest.raises(DataFileError, match="line 2"):
        load_layout(str(path))


def test_lowercase_letter_and_path_both_load():
    assert load_layout("b") == load_layout("B") == load_layout(str(LAYOUTS_DIR / "B.json"))


def _register(name: str, doc: dict) -> None:
    folder = registry_dir() / "cards" / name
    folder.mkdir(parents=True)
    (folder / "layout.json").write_text(json.dumps(doc))


def test_registered_cards_are_found_by_name():
    doc = _mutated(_set(["name"], "whatever"))
    _register("kitchen-table", doc)
    assert layout_names() == ["A", "B", "C", "D", "kitchen-table"]
    layout = load_layout("kitchen-table")
    assert layout.name == "kitchen-table"
    assert layout.centers == load_layout("A").centers
    assert [x.name for x in all_layouts()] == layout_names()


def test_registry_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path))
    assert registry_dir() == tmp_path
    monkeypatch.delenv("DOOMCOMPANION_HOME")
    assert registry_dir().parts[-3:] == (".local", "share", "doomcompanion")


def test_layouts_command_prints_every_layout(capsys):
    assert main(["layouts", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [d["name"] for d in printed] == LETTERS
    assert all(len(d["candles"]) == 12 and "markers" in d and "must_curve" in d for d in printed)
    assert main(["layouts"]) == 0
    assert "Ring" in capsys.readouterr().out


def test_layouts_command_lists_the_good_cards_and_warns_of_a_broken_one(capsys):
    _register("bad", _mutated(_set(["candles", 0, "number"], 9)))
    _register("good", _mutated(_set(["name"], "good")))
    assert main(["layouts", "--json"]) == 0
    out, err = capsys.readouterr()
    assert [d["name"] for d in json.loads(out)] == [*LETTERS, "good"]
    assert err == (f"doomcompanion: warning: {registry_dir() / 'cards' / 'bad' / 'layout.json'}"
                   ": at $.candles[0].number: 9 is greater than the maximum of 6\n")


def test_a_broken_registered_card_does_not_block_reading_another(capsys):
    _register("bad", _mutated(_set(["candles", 0, "number"], 9)))
    assert [x.name for x in all_layouts()] == LETTERS
    assert load_layout("A").name == "A"
    with pytest.raises(DataFileError, match=r"bad/layout\.json: at"):
        load_layout("bad")
