"""A small test catalogue with one part per condition kind and icon, and state helpers.

The rule tests use this catalogue rather than the shipped one, so that tuning the shipped
catalogue never changes what a rule test checks.
"""

from __future__ import annotations

from typing import Any

import pytest

from companion.machine.catalogue import Catalogue, PlayerCard, parts_from_json
from companion.machine.game import apply, replay


def _part(pid: str, hp: int, condition: dict[str, Any], track: list[Any],
          destroyed: list[dict[str, Any]] | None = None, core: bool = False) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": pid, "name": pid.upper(), "hp": hp, "condition": condition,
                           "track": track}
    if destroyed:
        doc["destroyed"] = destroyed
    if core:
        doc["core"] = True
    return doc


BLANK = ["start", "blank", "dead"]

TEST_PARTS = {"version": 1, "parts": [
    _part("core", 2, {"kind": "exact_greater", "dice": 2, "value": 5},
          ["start", [{"icon": "damage", "amount": 2}], "dead"], core=True),
    _part("sum", 3, {"kind": "sum", "dice": 3}, BLANK),
    _part("dbl", 3, {"kind": "doubles", "dice": 2},
          ["start", [{"icon": "power", "amount": 2}], [{"icon": "sentience", "amount": -1}],
           "dead"]),
    _part("eo", 2, {"kind": "either_or", "dice": 1, "values": [2, 3]},
          ["start", [{"icon": "damage", "amount": 3}], "dead"],
          destroyed=[{"icon": "damage_parts", "amount": 1, "target": "all"}]),
    _part("pair", 3, {"kind": "exact_pair", "dice": 2, "values": [4, 5]},
          ["start", [{"icon": "repair", "amount": 2, "target": "self"}], "dead"]),
    _part("gt", 3, {"kind": "exact_greater", "dice": 2, "value": 3},
          ["start", [{"icon": "gear"}], "dead"]),
    _part("all", 1, {"kind": "all_match", "dice": 3, "value": 6},
          ["start", [{"icon": "lock", "amount": 1,
                      "remove_if": {"stat": "sentience", "gt": 6}}], "dead"]),
    _part("brk", 2, {"kind": "either_or", "dice": 1, "values": [1, 6]},
          ["start", [{"icon": "broken_shield"}], "dead"],
          destroyed=[{"icon": "damage_parts", "amount": 2, "target": "left"}]),
    _part("rep", 4, {"kind": "either_or", "dice": 1, "values": [4, 5]},
          ["start", [{"icon": "repair", "amount": 2, "target": "adjacent"}], "dead"]),
    _part("dmg", 4, {"kind": "doubles", "dice": 2},
          ["start", "blank", [{"icon": "damage", "amount": 1, "plus": ["power", "sentience"]},
                              {"icon": "damage", "amount": 3,
                               "if": {"stat": "sentience", "gt": 5}}], "dead"]),
    _part("f1", 1, {"kind": "either_or", "dice": 1, "values": [1, 2]}, BLANK),
]}


@pytest.fixture(scope="session")
def cat() -> Catalogue:
    return Catalogue(parts=parts_from_json(TEST_PARTS, "test-parts.json"), player=PlayerCard())


def setup_event(row: list[str], hard: bool = False) -> dict[str, Any]:
    """A setup whose top cards are ``row`` (revealed left to right), the rest in order."""
    others = [p["id"] for p in TEST_PARTS["parts"] if not p.get("core")]
    rest = [p for p in others if p not in row]
    order = row + rest
    keep = len(others) if hard else 9
    return {"type": "setup", "hard": hard, "deck": [*order[:keep], "core"],
            "aside": order[keep:]}


def started(cat: Catalogue, row: list[str] | None = None, faces: list[int] | None = None,
            hard: bool = False, **changes: Any) -> dict[str, Any]:
    """A state in the player phase of turn 1: ``row`` revealed, the black dice rolled to
    ``faces`` (more faces than black dice add yellow dice); ``changes`` override state keys.
    """
    row = row or ["sum", "dbl", "eo"]
    state = replay([setup_event([p for p in row if p != "core"][:3], hard)], cat)
    state["row"] = [{"part": p, "hp": cat.part(p).hp, "pos": 0} for p in row]
    state["deck"] = [p for p in state["deck"] if p not in row]
    state["aside"] = [p for p in state["aside"] if p not in row]
    faces = faces if faces is not None else [1, 2, 3, 4, 5]
    while len(state["dice"]) < len(faces):
        state["dice"].append({"id": len(state["dice"]), "color": "yellow", "value": None,
                              "at": "ready", "rerolled": False})
    state = apply(state, {"type": "roll", "dice": {str(i): f for i, f in enumerate(faces)}},
                  cat)
    state.update(changes)
    return state


def parts_accounted(state: dict[str, Any], cat: Catalogue) -> bool:
    """Every part is in exactly one of deck, aside, row, destroyed."""
    places = state["deck"] + state["aside"] + [s["part"] for s in state["row"]] \
        + state["destroyed"]
    return sorted(places) == sorted(p.id for p in cat.parts)
