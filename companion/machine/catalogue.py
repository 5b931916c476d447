"""The Doom Machine part catalogue and player card, loaded from validated JSON data files.

The printed cards are not public, so the project ships its own catalogue
(``companion/data/machine/parts.json``) and player card (``player_card.json``), each checked
against the JSON Schema beside it. A mistake is refused with the file, the JSON path and the
rule broken (:class:`companion.errors.DataFileError`).

Roll conditions (the six kinds of the rulebook, with the number of dice each needs):

============== ====== ==============================================================
kind           dice   met when
============== ====== ==============================================================
sum            3      two of the dice add up to the third (2+4=6)
doubles        2      both dice show the same face
either_or      1      the die shows one of ``values`` (a 2 or a 3)
exact_pair     2      the dice are exactly ``values`` (a 4 and a 5)
exact_greater  2      one die is ``value``, the other is greater (a 3 and a 4-6)
all_match      2-5    every die shows ``value`` (three sixes)
============== ====== ==============================================================

Examples
--------
>>> cat = load_catalogue()
>>> cat.core.name
'Doom Core'
>>> cat.part("soul-harvester").condition.matches((2, 4, 6))
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from companion.datafiles import DATA_DIR, as_json, load_validated, repeats, validate
from companion.errors import DataFileError

MACHINE_DATA = DATA_DIR / "machine"
PARTS_FILE = MACHINE_DATA / "parts.json"
PARTS_SCHEMA = MACHINE_DATA / "parts.schema.json"
PLAYER_FILE = MACHINE_DATA / "player_card.json"
PLAYER_SCHEMA = MACHINE_DATA / "player_card.schema.json"

ICONS = ("damage", "power", "sentience", "broken_shield", "repair", "gear", "lock",
         "damage_parts")


@dataclass(frozen=True)
class Condition:
    """A roll condition: ``kind``, the number of ``dice`` it takes, and its faces."""

    kind: str
    dice: int
    values: tuple[int, ...] = ()
    value: int = 0

    def matches(self, faces: Sequence[int]) -> bool:
        """True when exactly these ``faces`` (one per die, any order) meet the condition."""
        if len(faces) != self.dice:
            return False
        s = sorted(faces)
        kind = self.kind
        if kind == "either_or":
            return s[0] in self.values
        if kind == "doubles":
            return s[0] == s[1]
        if kind == "sum":
            return s[0] + s[1] == s[2]
        if kind == "exact_pair":
            return tuple(s) == tuple(sorted(self.values))
        if kind == "exact_greater":
            return s[0] == self.value and s[1] > self.value
        if kind == "all_match":
            return s[0] == s[-1] == self.value
        return False

    def describe(self) -> str:
        """A short human-readable text, e.g. ``"2 dice: a 3 and one greater than 3"``."""
        n = f"{self.dice} {'die' if self.dice == 1 else 'dice'}"
        text = {
            "sum": "two add up to the third (a+b=c)",
            "doubles": "doubles",
            "either_or": " or ".join(f"a {v}" for v in self.values),
            "exact_pair": " and ".join(f"a {v}" for v in self.values),
            "exact_greater": f"a {self.value} and one greater than {self.value}",
            "all_match": f"all {self.value}s",
        }[self.kind]
        return f"{n}: {text}"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "dice": self.dice}
        if self.values:
            out["values"] = list(self.values)
        if self.value:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Part:
    """One machine part card.

    ``track`` holds the spaces of the cycle track: index 0 is ``"start"`` (the HP die slot),
    then ``"blank"``, ``"dead"`` (the die goes back to the start) or a tuple of effect dicts
    (the icon on that space). ``destroyed`` is the destroyed-card effect (may be empty).
    """

    id: str
    name: str
    hp: int
    condition: Condition
    track: tuple[Any, ...]
    destroyed: tuple[dict[str, Any], ...] = ()
    core: bool = False
    number: int = 0
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id, "name": self.name, "hp": self.hp,
            "condition": self.condition.to_json(),
            "track": [s if isinstance(s, str) else [dict(e) for e in s] for s in self.track]}
        if self.destroyed:
            out["destroyed"] = [dict(e) for e in self.destroyed]
        if self.core:
            out["core"] = True
        if self.number:
            out["number"] = self.number
        if self.text:
            out["text"] = self.text
        return out


@dataclass(frozen=True)
class Side:
    """One side of the player card: how many shield, re-roll and +/-1 slots it has."""

    shield_slots: int
    reroll_slots: int
    modifier_slots: int

    def to_json(self) -> dict[str, int]:
        return {"shield_slots": self.shield_slots, "reroll_slots": self.reroll_slots,
                "modifier_slots": self.modifier_slots}


@dataclass(frozen=True)
class PlayerCard:
    """The player card: starting HP, black dice, dice pool cap and sides A (normal), B (hard)."""

    hp: int = 10
    black_dice: int = 5
    max_dice: int = 10
    sides: dict[str, Side] = field(default_factory=lambda: {
        "A": Side(4, 2, 3), "B": Side(3, 1, 2)})

    def side(self, hard: bool) -> Side:
        return self.sides["B" if hard else "A"]


@dataclass(frozen=True)
class Catalogue:
    """All machine parts (exactly one of them the Doom Core) and the player card."""

    parts: tuple[Part, ...]
    player: PlayerCard
    source: str = ""
    by_id: dict[str, Part] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.by_id:
            self.by_id.update({p.id: p for p in self.parts})

    def part(self, part_id: str) -> Part:
        return self.by_id[part_id]

    @property
    def core(self) -> Part:
        return next(p for p in self.parts if p.core)

    @property
    def others(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if not p.core)


def _condition(doc: dict[str, Any]) -> Condition:
    return Condition(kind=doc["kind"], dice=doc["dice"], values=tuple(doc.get("values", ())),
                     value=doc.get("value", 0))


def parts_from_json(doc: Any, source: str = "parts.json") -> tuple[Part, ...]:
    """Check a parts document (schema, unique ids, names and numbers, exactly one Doom Core)
    and build the parts.

    Raises :class:`DataFileError` naming ``source``, the JSON path and the rule broken.
    """
    validate(doc, PARTS_SCHEMA, source=source)
    parts = []
    again = repeats(p["id"] for p in doc["parts"])
    for i, p in enumerate(doc["parts"]):
        if i in again:
            raise DataFileError(source, f"$.parts[{i}].id",
                                f"duplicate part id {p['id']!r} (also at $.parts[{again[i]}])")
        track = tuple(s if isinstance(s, str) else tuple(dict(e) for e in s) for s in p["track"])
        for j, effects in enumerate(track):
            if isinstance(effects, tuple) and any(e["icon"] == "damage_parts" for e in effects):
                raise DataFileError(source, f"$.parts[{i}].track[{j}]",
                                    "damage_parts (damage to machine parts) is a destroyed "
                                    "effect, not a cycle track icon")
        parts.append(Part(id=p["id"], name=p["name"], hp=p["hp"],
                          condition=_condition(p["condition"]), track=track,
                          destroyed=tuple(dict(e) for e in p.get("destroyed", ())),
                          core=bool(p.get("core", False)), number=p.get("number", 0),
                          text=p.get("text", "")))
    _check_one_of_each(parts, source)
    return tuple(parts)


def _check_one_of_each(parts: list[Part], source: str) -> None:
    """Exactly one Doom Core, no name or number used twice, and the numbers (a part may have
    none: a home-made card) running 1-N without a gap, a gap being what a part deleted by
    mistake leaves. How many parts there are is the owner's: the engine plays any number."""
    cores = [i for i, p in enumerate(parts) if p.core]
    if not cores:
        raise DataFileError(source, "$.parts",
                            'no part has "core": true: exactly one part must (the Doom Core)')
    if len(cores) > 1:
        raise DataFileError(source, f"$.parts[{cores[1]}].core",
                            f"a second Doom Core (the first is at $.parts[{cores[0]}]): "
                            'exactly one part has "core": true')
    names = repeats(part.name for part in parts)
    numbers = repeats(part.number for part in parts)
    for i, part in enumerate(parts):
        if i in names:
            raise DataFileError(source, f"$.parts[{i}].name",
                                f"{as_json(part.name)} is the name of two parts "
                                f"(also at $.parts[{names[i]}].name)")
        if part.number and i in numbers:
            raise DataFileError(source, f"$.parts[{i}].number",
                                f"{part.number} is used twice, also at $.parts[{numbers[i]}]")
    numbered = {part.number for part in parts} - {0}
    gaps = sorted(set(range(1, max(numbered, default=0) + 1)) - numbered)
    if gaps:
        raise DataFileError(source, "$.parts",
                            f"no part has number {gaps[0]}: the parts are numbered "
                            f"1-{max(numbered)} without a gap (a part left out by mistake? one "
                            "left out on purpose takes its number with it: renumber the parts "
                            "after it)")


def player_from_json(doc: Any, source: str = "player_card.json") -> PlayerCard:
    """Check a player card document against its schema and build the :class:`PlayerCard`."""
    validate(doc, PLAYER_SCHEMA, source=source)
    if doc["black_dice"] > doc["max_dice"]:
        raise DataFileError(source, "$.black_dice",
                            f"{doc['black_dice']} black dice exceed max_dice {doc['max_dice']}")
    return PlayerCard(hp=doc["hp"], black_dice=doc["black_dice"], max_dice=doc["max_dice"],
                      sides={k: Side(**v) for k, v in doc["sides"].items()})


def load_catalogue(parts_path: str | Path | None = None,
                   player_path: str | Path | None = None) -> Catalogue:
    """Load and check the part catalogue and the player card (the shipped ones by default).

    The shipped files are read once and cached; an edited file given by path is read each call.
    """
    if parts_path is None and player_path is None:
        return _default()
    return _load(parts_path or PARTS_FILE, player_path or PLAYER_FILE)


def _load(parts_path: str | Path, player_path: str | Path) -> Catalogue:
    parts = parts_from_json(load_validated(parts_path, PARTS_SCHEMA), str(parts_path))
    player = player_from_json(load_validated(player_path, PLAYER_SCHEMA), str(player_path))
    return Catalogue(parts=parts, player=player, source=str(parts_path))


@cache
def _default() -> Catalogue:
    return _load(PARTS_FILE, PLAYER_FILE)
