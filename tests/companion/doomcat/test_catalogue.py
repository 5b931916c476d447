from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from companion.cli import main
from companion.datafiles import DATA_DIR
from companion.doomcat.catalogue import (
    RULES,
    SUGGESTED_SETS,
    Sigil,
    _load_familiars,
    _load_goals,
    familiar,
    familiars,
    goal,
    goals,
    parse_goals,
    score_sigil,
)
from companion.doomcat.layouts import load_layout
from companion.errors import BadInput, DataFileError
from vision.readings import TopBox

EXAMPLES = [(g.number, i, ex) for g in goals().values() for i, ex in enumerate(g.examples)]


def test_27_goals_in_three_tiers_of_nine():
    catalogue = goals()
    assert sorted(catalogue) == list(range(1, 28)) == sorted(RULES)
    assert Counter(g.tier for g in catalogue.values()) == {1: 9, 2: 9, 3: 9}
    for g in catalogue.values():
        assert g.tier == (g.number - 1) // 9 + 1
        assert g.name and g.text and not re.search(r"[{}]", g.text)
    assert len({g.name for g in catalogue.values()}) == 27


def test_the_18_suggested_sets_use_each_goal_twice():
    assert len(SUGGESTED_SETS) == 18
    uses = Counter(n for s in SUGGESTED_SETS.values() for n in s)
    assert uses == dict.fromkeys(range(1, 28), 2)


def _expected(number: int, count: int) -> int:
    params = goal(number).params
    per = [v for k, v in params.items() if k.startswith("per_")]
    if per:
        return int(count * per[0])
    divisor = params.get("mm_per_point") or params["mm2_per_point"]
    return count // divisor


@pytest.mark.parametrize(("number", "index", "example"), EXAMPLES,
                         ids=[f"goal{n:02d}-{'allowed' if e['allowed'] else 'not'}-{i}"
                              for n, i, e in EXAMPLES])
def test_goal_examples_score_what_they_say(number, index, example):
    layout = load_layout(example["layout"])
    top = [None if b is None else TopBox(b["value"], b["circled"])
           for b in example.get("top", [None] * 7)]
    sigil = Sigil(layout, example["lines"], example["crossed"], top)
    assert goal(number).score(sigil) == _expected(number, example["count"]), example["why"]


@pytest.mark.parametrize("number", range(1, 28))
def test_every_goal_has_an_allowed_and_a_not_allowed_example(number):
    examples = goal(number).examples
    allowed = [e for e in examples if e["allowed"]]
    refused = [e for e in examples if not e["allowed"]]
    assert allowed and refused
    assert all(a["count"] > 0 for a in allowed)
    assert max(r["count"] for r in refused) < min(a["count"] for a in allowed)


def test_an_empty_sigil_scores_nothing_on_every_goal():
    sigil = Sigil(load_layout("A"))
    assert all(g.score(sigil) == 0 for g in goals().values())


@pytest.mark.parametrize(("text", "numbers"), [("1,2,3", [1, 2, 3]), ([27], [27]),
                                                ("4, 5", [4, 5])])
def test_parse_goals(text, numbers):
    assert [g.number for g in parse_goals(text)] == numbers


@pytest.mark.parametrize(("text", "match"), [
    ("1,28", "goal 28 does not exist"), ("0", "goal 0 does not exist"),
    ("1,1", "listed twice"), ("", "at least one"), ("a,b", "numbers separated"),
])
def test_parse_goals_refuses(text, match):
    with pytest.raises(BadInput, match=match):
        parse_goals(text)


@pytest.mark.parametrize("ident", ["F03", "f3", "3", 3, "F3"])
def test_familiar_lookup(ident):
    assert familiar(ident).name == "Toad"


@pytest.mark.parametrize("ident", ["F10", "F00", "cat", ""])
def test_unknown_familiar(ident):
    with pytest.raises(BadInput, match="F01-F09"):
        familiar(ident)


def test_nine_familiars_with_costs_and_kinds():
    cards = familiars()
    assert sorted(cards) == [f"F{n:02d}" for n in range(1, 10)]
    assert all(c.cost > 0 for c in cards.values())
    assert {c.kind for c in cards.values()} == {"once", "setup", "always"}


def test_score_sigil_subtracts_the_familiar_cost():
    sigil = Sigil(load_layout("B"), [(0, 4), (4, 8), (0, 8)])
    result = score_sigil(sigil, parse_goals("1,3"), familiar("F01"))
    wards = int(goal(1).params["per_enclosure"])
    light = int(3 * goal(3).params["per_candle"])
    assert result == {"goals": {"01": wards, "03": light}, "familiar_cost": 5,
                      "total": wards + light - 5}


@pytest.mark.parametrize(("mutate", "path", "rule"), [
    (lambda d: d.pop(), "$", "too short"),
    (lambda d: d[3].update(tier=4), "$[3].tier", "maximum"),
    (lambda d: d[0]["params"].update(per_enclosure=-1), "$[0].params.per_enclosure",
     "less than or equal"),
    (lambda d: d[5].update(number=1), "$[5].number",
     "goal 1 is listed twice (also at $[0].number)"),
    (lambda d: d[0].update(text="{per_foo} VP"), "$[0].text", "goal 1's text cannot be filled "
     "in (KeyError: 'per_foo'): braces may only name its params (per_enclosure)"),
    (lambda d: d[2].update(text="5 { VP"), "$[2].text", "goal 3's text cannot be filled in "
     "(ValueError: expected '}' before end of string)"),
    (lambda d: d[0].update(params={"per_ward": 5}), "$[0].params",
     "goal 1's rule reads per_enclosure; the file gives per_ward"),
    (lambda d: d[16]["params"].pop("max_mm"), "$[16].params",
     "goal 17's rule reads per_line, max_mm; the file gives per_line"),
    (lambda d: d[11].update(tier=3), "$[11].tier",
     "goal 12 is a tier 2 goal (tier 2 holds goals 10-18), the file says 3"),
    (lambda d: d[7].update(name="Candlelight"), "$[7].name",
     '"Candlelight" is the name of two goals (also at $[2].name)'),
    (lambda d: d[4]["examples"][1].update(layout="E"), "$[4].examples[1].layout",
     "unknown layout \"E\": an example is drawn on one of the sigil designs A, B, C, D"),
    (lambda d: d[6]["examples"][0].update(lines=[[0, 4], [3, 3]]), "$[6].examples[0].lines[1]",
     "a line joins two different candles, not 3 to itself"),
    (lambda d: d[9].update(examples=[e for e in d[9]["examples"] if e["allowed"]] * 2),
     "$[9].examples", "goal 10 has no not-allowed example: give one of each"),
    (lambda d: d[9].update(examples=[e for e in d[9]["examples"] if not e["allowed"]] * 2),
     "$[9].examples", "goal 10 has no allowed example: give one of each"),
    (lambda d: [e.update(count=0) for e in d[13]["examples"] if e["allowed"]],
     "$[13].examples[0].count", "an allowed example scores: its count is at least 1"),
    (lambda d: d[0]["examples"][0].update(count=2), "$[0].examples[0].count",
     "goal 1's rule counts 1 on this drawing, the file says 2"),
    (lambda d: d[15]["examples"][1].update(lines=d[15]["examples"][0]["lines"]),
     "$[15].examples[1].count", "goal 16's rule counts 73 on this drawing, the file says 22"),
    (lambda d: d[18]["examples"][1].update(lines=d[18]["examples"][0]["lines"], count=2018),
     "$[18].examples[1].count",
     "a not-allowed example counts less than the allowed ones: 2018, as much as "
     "$[18].examples[0]"),
])
def test_a_broken_goals_file_names_file_path_and_rule(tmp_path, mutate, path, rule):
    doc = json.loads((DATA_DIR / "goals.json").read_text())
    mutate(doc)
    broken = tmp_path / "goals.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(DataFileError) as exc:
        _load_goals(str(broken))
    assert exc.value.file == str(broken)
    assert exc.value.json_path == path and rule in exc.value.rule


def test_a_goals_file_edited_in_place_is_refused_by_the_command_line(tmp_path, monkeypatch,
                                                                     capsys):
    doc = json.loads((DATA_DIR / "goals.json").read_text())
    doc[0]["params"] = {"per_ward": 5}
    edited = tmp_path / "goals.json"
    edited.write_text(json.dumps(doc))
    monkeypatch.setattr("companion.doomcat.catalogue.GOALS_FILE", edited)
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"layout": "A", "lines": [], "crossed": [], "top": [None] * 7}))
    assert main(["score", str(state), "--goals", "1"]) == 2
    err = capsys.readouterr().err
    assert err == (f"doomcompanion: error: {edited}: at $[0].params: goal 1's rule reads "
                   "per_enclosure; the file gives per_ward\n")


@pytest.mark.parametrize(("mutate", "path", "rule"), [
    (lambda d: d[4].update(id="F03"), "$[4].id",
     '"F03" is listed twice (also at $[2].id): familiars F01-F09 each appear once'),
    (lambda d: d[6].update(name=d[1]["name"]), "$[6].name", "is the name of two familiars "
     "(also at $[1].name)"),
])
def test_a_familiars_file_naming_a_card_twice_says_where(tmp_path, mutate, path, rule):
    doc = json.loads((DATA_DIR / "familiars.json").read_text())
    mutate(doc)
    broken = tmp_path / "familiars.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(DataFileError) as exc:
        _load_familiars(str(broken))
    assert (exc.value.file, exc.value.json_path) == (str(broken), path)
    assert rule in exc.value.rule


def test_a_broken_familiars_file_is_refused(tmp_path):
    doc = json.loads((DATA_DIR / "familiars.json").read_text())
    doc[2]["kind"] = "sometimes"
    broken = tmp_path / "familiars.json"
    broken.write_text(json.dumps(doc))
    with pytest.raises(DataFileError, match=r"\$\[2\]\.kind"):
        _load_familiars(str(broken))


def test_great_seal_measures_a_ring_without_the_enclosure_inside_it():
    # Goal 19: "1 VP for each full 76 mm² of your largest enclosure"; the Goal Glossary:
    # "Enclosure: An area completely enclosed by lines". Layout A: the triangle 1-5-9 drawn
    # inside the triangle 0-4-11 without touching it leaves a ring and a small triangle.
    from itertools import combinations

    from companion.doomcat.geometry import polygon_area
    layout = load_layout("A")
    lines = [*combinations((0, 4, 11), 2), *combinations((1, 5, 9), 2)]
    outer = abs(polygon_area([layout.candles[i].center for i in (0, 4, 11)]))
    inner = abs(polygon_area([layout.candles[i].center for i in (1, 5, 9)]))
    per = goal(19).params["mm2_per_point"]
    largest = max(outer - inner, inner)
    assert int(outer // per) != int(largest // per)   # the case tells the readings apart
    assert goal(19).score(Sigil(layout, lines)) == int(largest // per)
    # Small Cells (24) counts each enclosure by its own area too
    small = goal(24).params["max_mm2"]
    count = sum(1 for a in (outer - inner, inner) if a < small)
    assert goal(24).score(Sigil(layout, lines)) == int(count * goal(24).params["per_enclosure"])


def test_triangles_do_not_count_a_ring_around_a_hole():
    # Goal 8: "7.5 VP for each enclosure with exactly three corners". Layout A: the triangle
    # 1-5-9 inside the triangle 0-4-11, touching none of its lines. The small triangle is an
    # enclosure with three corners; the ring around it is bounded by both triangles: six
    # corners, no triangle.
    from itertools import combinations

    from companion.doomcat.geometry import Drawing
    layout = load_layout("A")
    lines = [*combinations((0, 4, 11), 2), *combinations((1, 5, 9), 2)]
    corners = sorted(e.corners for e in Drawing(layout, lines).enclosures)
    assert corners == [3, 6]
    assert goal(8).score(Sigil(layout, lines)) == int(1 * goal(8).params["per_triangle"])
    # each triangle alone is one
    for tri in ((0, 4, 11), (1, 5, 9)):
        alone = list(combinations(tri, 2))
        assert goal(8).score(Sigil(layout, alone)) == int(goal(8).params["per_triangle"])


def test_cells_a_ring_shares_its_inner_sides_with_the_enclosure_in_its_hole():
    # Goal 23: "2 VP for each enclosure that shares a side with another enclosure". Layout A:
    # the triangle 1-5-9 inside the triangle 0-4-11. The lines 1-5, 5-9 and 1-9 bound both
    # the small triangle and the ring around it: the two enclosures share three sides.
    from itertools import combinations

    from companion.doomcat.geometry import Drawing
    layout = load_layout("A")
    lines = [*combinations((0, 4, 11), 2), *combinations((1, 5, 9), 2)]
    assert [e.neighbors for e in Drawing(layout, lines).enclosures] == [(1,), (0,)]
    assert goal(23).score(Sigil(layout, lines)) == int(2 * goal(23).params["per_enclosure"])
