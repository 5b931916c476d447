"""The shipped part catalogue and player card, and refusing malformed ones."""

from __future__ import annotations

import copy
import doctest
import json
import re

import pytest

import companion.machine.catalogue as catalogue_module
from companion.errors import DataFileError
from companion.machine.catalogue import (
    PARTS_FILE,
    PLAYER_FILE,
    Condition,
    load_catalogue,
    parts_from_json,
    player_from_json,
)

SHIPPED = json.loads(PARTS_FILE.read_text(encoding="utf-8"))
PLAYER = json.loads(PLAYER_FILE.read_text(encoding="utf-8"))


def test_doctests():
    assert doctest.testmod(catalogue_module).failed == 0


def test_shipped_catalogue_has_sixteen_parts_and_one_doom_core():
    cat = load_catalogue()
    assert len(cat.parts) == 16 and len(cat.others) == 15
    assert cat.core.name == "Doom Core"
    assert sorted(p.number for p in cat.parts) == list(range(1, 17))
    assert all(1 <= p.hp <= 6 for p in cat.parts)


def test_soul_harvester_deals_five_damage():
    harvester = load_catalogue().part("soul-harvester")
    assert harvester.name == "Soul Harvester"
    damage = [e for s in harvester.track if isinstance(s, tuple) for e in s
              if e["icon"] == "damage"]
    assert [e["amount"] for e in damage] == [5]


def test_fixed_damage_is_the_amount_the_card_text_gives():
    """The effect texts are what the print-and-play sheet gives (issue 3): a part whose text
    says "deal 3 dmg" deals 3 at the table, so the icons of its track deal 3 too (the
    balance comes from the knobs the sheet leaves open: HP, conditions, tracks)."""
    for part in load_catalogue().parts:
        said = sorted(int(n) for n in re.findall(r"deal (\d+) (?:more )?dmg(?! to| for)",
                                                 part.text))
        fixed = sorted({e["amount"] for s in part.track if isinstance(s, tuple) for e in s
                        if e["icon"] == "damage" and not e.get("plus")})
        assert fixed == sorted(set(said)), f"{part.name}: {fixed} vs the text {part.text!r}"


def test_every_condition_kind_appears():
    kinds = {p.condition.kind for p in load_catalogue().parts}
    assert kinds == {"sum", "doubles", "either_or", "exact_pair", "exact_greater", "all_match"}


def test_every_icon_kind_appears():
    icons = set()
    for p in load_catalogue().parts:
        for space in p.track:
            if isinstance(space, tuple):
                for e in space:
                    sign = "" if "amount" not in e or e["icon"] not in ("power", "sentience") \
                        else ("+" if e["amount"] > 0 else "-")
                    icons.add(e["icon"] + sign)
        icons |= {"destroyed:" + e["icon"] for e in p.destroyed}
    assert icons >= {"damage", "power+", "power-", "sentience+", "sentience-",
                     "broken_shield", "repair", "gear", "lock", "destroyed:damage_parts"}
    assert all(p.track[-1] == "dead" for p in load_catalogue().parts)


def test_player_card_sides():
    player = load_catalogue().player
    assert (player.hp, player.black_dice, player.max_dice) == (10, 5, 10)
    a, b = player.side(False), player.side(True)
    assert (a.shield_slots, a.reroll_slots, a.modifier_slots) == (4, 2, 3)
    assert (b.shield_slots, b.reroll_slots, b.modifier_slots) == (3, 1, 2)


def test_an_owner_can_change_the_numbers(tmp_path):
    doc = copy.deepcopy(PLAYER)
    doc["sides"]["A"]["shield_slots"] = 5
    path = tmp_path / "card.json"
    path.write_text(json.dumps(doc))
    parts = tmp_path / "parts.json"
    parts.write_text(json.dumps(SHIPPED))
    assert load_catalogue(parts, path).player.side(False).shield_slots == 5


@pytest.mark.parametrize(("faces", "kind", "extra", "ok"), [
    ((2, 4, 6), "sum", {}, True), ((6, 2, 4), "sum", {}, True), ((2, 4, 5), "sum", {}, False),
    ((3, 3), "doubles", {}, True), ((3, 4), "doubles", {}, False),
    ((2,), "either_or", {"values": (2, 3)}, True), ((4,), "either_or", {"values": (2, 3)}, False),
    ((5, 4), "exact_pair", {"values": (4, 5)}, True),
    ((5, 5), "exact_pair", {"values": (4, 5)}, False),
    ((3, 5), "exact_greater", {"value": 3}, True), ((3, 3), "exact_greater", {"value": 3}, False),
    ((2, 5), "exact_greater", {"value": 3}, False),
    ((6, 6, 6), "all_match", {"value": 6}, True), ((6, 6, 5), "all_match", {"value": 6}, False),
    ((6, 6), "all_match", {"value": 6}, False),
])
def test_condition_matching(faces, kind, extra, ok):
    dice = {"sum": 3, "doubles": 2, "either_or": 1, "exact_pair": 2, "exact_greater": 2,
            "all_match": 3}[kind]
    assert Condition(kind=kind, dice=dice, **extra).matches(faces) is ok


def _broken(edit):
    doc = copy.deepcopy(SHIPPED)
    edit(doc)
    return doc


def _set(path, value):
    def edit(doc):
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return edit


@pytest.mark.parametrize(("edit", "json_path", "rule"), [
    (_set(["parts", 3, "hp"], 7), "$.parts[3].hp", "greater than the maximum of 6"),
    (_set(["parts", 0, "condition", "dice"], 2), "$.parts[0].condition.dice", "1 was expected"),
    (_set(["parts", 2, "condition"], {"kind": "triples", "dice": 3}), "$.parts[2].condition.kind",
     "is not one of"),
    (_set(["parts", 1, "track", 0], "blank"), "$.parts[1].track[0]", "'start' was expected"),
    (_set(["parts", 1, "track", 1], [{"icon": "laser"}]), "$.parts[1].track[1][0].icon",
     "is not one of"),
    (_set(["parts", 1, "track", 1], [{"icon": "damage"}]), "$.parts[1].track[1][0]",
     "'amount' is a required property"),
    (_set(["parts", 4, "name"], ""), "$.parts[4].name", "should be non-empty"),
    (_set(["parts", 5, "id"], SHIPPED["parts"][0]["id"]), "$.parts[5].id", "duplicate part id"),
    (_set(["parts", 0, "core"], True), "$.parts[11].core",
     'a second Doom Core (the first is at $.parts[0]): exactly one part has "core": true'),
    (lambda doc: doc["parts"][11].pop("core"), "$.parts",
     'no part has "core": true: exactly one part must (the Doom Core)'),
    (_set(["parts", 7, "number"], 5), "$.parts[7].number", "5 is used twice, also at $.parts[4]"),
    (_set(["parts", 9, "name"], "Pulse Cannon"), "$.parts[9].name",
     '"Pulse Cannon" is the name of two parts (also at $.parts[2].name)'),
    (lambda doc: doc["parts"].pop(4), "$.parts",
     "no part has number 5: the parts are numbered 1-16 without a gap (a part left out by "
     "mistake? one left out on purpose takes its number with it: renumber the parts after it)"),
    (_set(["parts", 0, "track", 1], [{"icon": "damage_parts", "amount": 1, "target": "all"}]),
     "$.parts[0].track[1]", "destroyed effect, not a cycle track icon"),
])
def test_a_malformed_catalogue_names_file_path_and_rule(edit, json_path, rule):
    with pytest.raises(DataFileError) as exc:
        parts_from_json(_broken(edit), "my-parts.json")
    assert exc.value.file == "my-parts.json"
    assert exc.value.json_path == json_path
    assert rule in exc.value.rule


@pytest.mark.parametrize("edit", [
    lambda doc: doc["parts"].append({**copy.deepcopy(doc["parts"][2]), "id": "pulse-cannon-2",
                                     "name": "Pulse Cannon Mk II", "number": 17}),
    lambda doc: [doc["parts"].pop(i) for i in (15, 14)],
    lambda doc: doc["parts"].insert(3, {k: v for k, v in doc["parts"][2].items() if k not in
                                        ("number", "text")} | {"id": "home-made",
                                                               "name": "Home-made Cannon"}),
])
def test_an_owner_may_add_or_leave_out_parts_and_numbers(edit):
    """The rulebook's deck has 16 cards, but the engine plays any catalogue with a Doom Core
    and one other part: an added card, the last ones left out, an unnumbered home-made card."""
    doc = _broken(edit)
    parts = parts_from_json(doc, "my-parts.json")
    assert [p.id for p in parts] == [p["id"] for p in doc["parts"]]
    assert sum(p.core for p in parts) == 1


def test_a_malformed_file_on_disk_is_refused_with_its_path(tmp_path):
    path = tmp_path / "parts.json"
    path.write_text(json.dumps(_broken(_set(["parts", 2, "hp"], 0))))
    with pytest.raises(DataFileError, match=r"parts.json: at \$.parts\[2\].hp"):
        load_catalogue(path)
    path.write_text("{ not json")
    with pytest.raises(DataFileError, match="not valid JSON"):
        load_catalogue(path)


@pytest.mark.parametrize(("change", "json_path"), [
    ({"black_dice": 11}, "$.black_dice"),
    ({"sides": {"A": {"shield_slots": 4, "reroll_slots": 2, "modifier_slots": 3}}}, "$.sides"),
    ({"hp": 0}, "$.hp"),
])
def test_a_malformed_player_card_is_refused(change, json_path):
    with pytest.raises(DataFileError) as exc:
        player_from_json({**PLAYER, **change}, "card.json")
    assert (exc.value.file, exc.value.json_path) == ("card.json", json_path)
