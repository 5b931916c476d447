"""The Doom Cat card catalogue: 27 Goal Cards and 9 Familiars (our own texts and numbers).

The printed texts are not public, so the project ships its own catalogue as data files an
owner may edit (``companion/data/goals.json``, ``companion/data/familiars.json``, each checked
by the JSON Schema beside it). A goal's *data* (name, tier, text, point values, allowed and
not-allowed examples) lives in the file; its *rule* is the pure function registered here under
its number, built from the facts of :mod:`companion.doomcat.geometry`.

Python API
----------
- :func:`goals` ``() -> dict[int, Goal]``, :func:`goal` ``(number) -> Goal`` (BadInput when
  unknown), :func:`parse_goals` ``("1,2,3" or [1, 2, 3]) -> tuple[Goal, ...]``,
  :func:`game_goals` (the same, and 2 or 3 of them, as a game has).
- :func:`familiars` ``() -> dict[str, Familiar]``, :func:`familiar` ``("F03" or 3)``.
- :class:`Sigil` ``(layout, lines, crossed, top)``: one card's drawing with lazily computed
  facts; ``Goal.score(sigil) -> int``; :func:`score_sigil` ``(sigil, goals, familiar)``.
- ``SUGGESTED_SETS``: the rulebook's 18 suggested goal sets by name.

Convention: card geometry in mm, origin top-left, y down (see ``layouts``); candles are layout
indices 0-11; lines are pairs ``(a, b)`` with a < b.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import Any

from companion.datafiles import DATA_DIR, as_json, load_validated, repeats
from companion.doomcat.geometry import QUADRANTS, Drawing, longest_simple_loop, quadrant
from companion.doomcat.layouts import BUILTIN, Layout, load_layout
from companion.errors import BadInput, DataFileError
from vision.readings import TopBox

GOALS_FILE = DATA_DIR / "goals.json"
GOALS_PER_GAME = (2, 3)  # the rulebook: 2 Goal Cards for an easy game, otherwise 3
FAMILIARS_FILE = DATA_DIR / "familiars.json"

SUGGESTED_SETS: dict[str, tuple[int, int, int]] = {
    "Circle of Protection": (1, 2, 3), "Star Shepherd": (1, 4, 7),
    "Elemental Boon": (4, 5, 6), "Constellations": (2, 5, 8),
    "Building Bridges": (3, 6, 9), "Crossroads": (7, 8, 9),
    "Long Path": (10, 11, 12), "Pentacles": (13, 14, 15), "Brush Work": (16, 17, 18),
    "Web Weaving": (12, 15, 18), "Watchful Eye": (10, 13, 16), "Bones Caster": (11, 14, 17),
    "Seal of Life": (19, 20, 21), "Bounded Horizon": (19, 22, 25),
    "Cellular Synthesis": (22, 23, 24), "Astral Gate": (20, 23, 26),
    "Amber Gauntlet": (21, 24, 27), "Embrace Eternity": (25, 26, 27),
}


def write_limit(familiar_id: str | None) -> int:
    """How many times a number may be written on top of one card: twice ("Two of each"),
    three times for the player holding the Rat (F09)."""
    return 3 if familiar_id == "F09" else 2


def extra_lines(familiar_id: str | None) -> int:
    """Lines a card may hold beyond its turns' and the tie-break's: one for the player holding
    the Raven (F02, "draw one extra line")."""
    return 1 if familiar_id == "F02" else 0


class Sigil:
    """One Sigil Card as drawn: the lines, crossed candles and top boxes, with lazy facts.

    Convention: ``lines`` candle index pairs (a < b after normalising), ``crossed`` candle
    indices, ``top`` the 7 top boxes left to right (``None`` when empty).
    """

    def __init__(self, layout: Layout, lines: Iterable[Sequence[int]] = (),
                 crossed: Iterable[int] = (), top: Sequence[TopBox | None] = (),
                 drawing: Drawing | None = None) -> None:
        crossed = tuple(crossed)
        self.layout = layout
        self.drawing = drawing if drawing is not None else Drawing(layout, lines, crossed)
        self.lines = self.drawing.lines
        self.crossed = frozenset(crossed)
        self.top = tuple(top)

    @cached_property
    def degree(self) -> Counter[int]:
        return Counter(c for line in self.lines for c in line)

    @cached_property
    def crossings_per_line(self) -> dict[tuple[int, int], int]:
        out = dict.fromkeys(self.lines, 0)
        for lines in self.drawing.crossing_ids.values():
            for line in lines:
                out[line] += 1
        return out

    @cached_property
    def intersection_quadrants(self) -> Counter[str]:
        where = self.drawing.board.point_quadrant
        return Counter(where[p] for p in self.drawing.crossing_ids)

    @cached_property
    def piece_of(self) -> dict[int, int]:
        """Candle -> index of the connected piece of the drawing holding it."""
        out = {}
        for k, piece in enumerate(self.drawing.components):
            for line in piece:
                out[line[0]] = out[line[1]] = k
        return out

    @cached_property
    def longest_loop(self) -> int:
        """Lines in the longest closed loop of lines joined at candles (no candle twice)."""
        return longest_simple_loop(self.lines)

    @cached_property
    def wilds(self) -> int:
        """Circled (wild) numbers on top: a number counts once, also when the Rat (F09) has
        written it a third time, circled like the second."""
        return len({box.value for box in self.top if box is not None and box.circled})

    def length(self, line: tuple[int, int]) -> float:
        c = self.layout.candles
        return math.dist(c[line[0]].center, c[line[1]].center)

    def divider_crossings(self, line: tuple[int, int]) -> int:
        vx, hy = self.layout.dividers
        (xa, ya), (xb, yb) = (self.layout.candles[i].center for i in line)
        return ((xa < vx) != (xb < vx)) + ((ya < hy) != (yb < hy))


# ----------------------------------------------------------------------------- goal rules

Rule = Callable[[Sigil, dict[str, Any]], int]
RULES: dict[int, Rule] = {}
RULE_PARAMS: dict[int, tuple[str, ...]] = {}  # the point values each rule reads from its goal


def _rule(number: int, *params: str) -> Callable[[Rule], Rule]:
    def register(fn: Rule) -> Rule:
        RULES[number] = fn
        RULE_PARAMS[number] = params
        return fn
    return register


@_rule(1, "per_enclosure")
def _wards(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_enclosure"] * s.drawing.n_enclosures


@_rule(2, "per_intersection")
def _crossroads(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_intersection"] * s.drawing.intersections


@_rule(3, "per_candle")
def _candlelight(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_candle"] * len(s.drawing.used)


@_rule(4, "per_star")
def _starlight(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_star"] * len(s.drawing.stars_enclosed) if s.drawing.n_enclosures else 0


@_rule(5, "per_quadrant")
def _four_winds(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_quadrant"] * len(s.intersection_quadrants)


@_rule(6, "per_crossing")
def _bridges(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_crossing"] * sum(s.divider_crossings(line) for line in s.lines)


@_rule(7, "per_star")
def _star_shepherd(s: Sigil, p: dict[str, Any]) -> int:
    held = s.intersection_quadrants
    return p["per_star"] * sum(1 for star in s.layout.stars if quadrant(star, s.layout) in held)


@_rule(8, "per_triangle")
def _triangles(s: Sigil, p: dict[str, Any]) -> int:
    if not s.drawing.n_enclosures:
        return 0
    return p["per_triangle"] * sum(1 for c in s.drawing.face_corners if c == 3)


@_rule(9, "per_number")
def _twin_flames(s: Sigil, p: dict[str, Any]) -> int:
    piece = s.piece_of
    joined = 0
    for number in range(1, 7):
        a, b = s.layout.candles_numbered(number)[:2]
        if a in piece and piece.get(b) == piece[a]:
            joined += 1
    return p["per_number"] * joined


@_rule(10, "per_line")
def _long_path(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * s.drawing.longest_path_lines


@_rule(11, "per_candle")
def _scattered_bones(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_candle"] * sum(1 for c in s.crossed if s.degree[c] == 0)


@_rule(12, "per_line")
def _busy_lines(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * sum(1 for n in s.crossings_per_line.values() if n >= 2)


@_rule(13, "per_line")
def _watchful_eye(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * max(s.degree.values(), default=0)


@_rule(14, "per_candle")
def _offerings(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_candle"] * sum(1 for c in s.crossed if s.degree[c] > 0)


@_rule(15, "per_intersection")
def _spider_web(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_intersection"] * max(s.intersection_quadrants.values(), default=0)


@_rule(16, "mm_per_point")
def _long_strokes(s: Sigil, p: dict[str, Any]) -> int:
    return int(sum(s.length(line) for line in s.lines) // p["mm_per_point"])


@_rule(17, "per_line", "max_mm")
def _fine_brush(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * sum(1 for line in s.lines if s.length(line) < p["max_mm"])


@_rule(18, "per_wild")
def _wild_hand(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_wild"] * s.wilds


@_rule(19, "mm2_per_point")
def _great_seal(s: Sigil, p: dict[str, Any]) -> int:
    if not s.drawing.n_enclosures:
        return 0
    return int(max(area for _, area in s.drawing.faces) // p["mm2_per_point"])


@_rule(20, "per_line")
def _circle_of_life(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * s.longest_loop


@_rule(21, "per_candle")
def _eternal_flames(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_candle"] * sum(1 for n in s.degree.values() if n >= 3)


@_rule(22, "per_quadrant")
def _bounded_horizon(s: Sigil, p: dict[str, Any]) -> int:
    if not s.drawing.n_enclosures:
        return 0
    covered = {q for quads in s.drawing.face_quadrants for q in quads}
    return p["per_quadrant"] * len(covered)


@_rule(23, "per_enclosure")
def _cells(s: Sigil, p: dict[str, Any]) -> int:
    if s.drawing.n_enclosures < 2:
        return 0
    return p["per_enclosure"] * sum(1 for n in s.drawing.face_neighbors if n)


@_rule(24, "per_enclosure", "max_mm2")
def _small_cells(s: Sigil, p: dict[str, Any]) -> int:
    if not s.drawing.n_enclosures:
        return 0
    return p["per_enclosure"] * sum(1 for _, area in s.drawing.faces if area < p["max_mm2"])


@_rule(25, "per_line")
def _one_sigil(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_line"] * len(s.lines) if len(s.drawing.components) == 1 else 0


@_rule(26, "per_quadrant")
def _astral_gate(s: Sigil, p: dict[str, Any]) -> int:
    if not s.drawing.n_enclosures:
        return 0
    quads = {quadrant(s.layout.stars[star], s.layout) for star in s.drawing.star_faces}
    return p["per_quadrant"] * len(quads)


@_rule(27, "per_candle")
def _amber_gauntlet(s: Sigil, p: dict[str, Any]) -> int:
    return p["per_candle"] * sum(1 for c in s.crossed if s.degree[c] >= 2)


assert set(RULES) == set(range(1, 28)) and QUADRANTS

# Goals whose points depend on more than the drawn lines (everything else is a function of
# the lines alone, which lets a policy cache it).
NEEDS_CROSSED = frozenset({11, 14, 27})
NEEDS_TOP = frozenset({18})


# ----------------------------------------------------------------------------- catalogue

@dataclass(frozen=True)
class Goal:
    """One Goal Card: number 1-27, name, tier 1-3, the text a player reads, its points."""

    number: int
    name: str
    tier: int
    text: str
    params: dict[str, Any] = field(hash=False, compare=False)
    examples: tuple[dict[str, Any], ...] = field(default=(), hash=False, compare=False)

    @property
    def lines_only(self) -> bool:
        """Whether the points depend on the drawn lines alone (not crossed candles or top)."""
        return self.number not in NEEDS_CROSSED | NEEDS_TOP

    @property
    def key(self) -> str:
        """``"01"``..``"27"``: how scores name the goal."""
        return f"{self.number:02d}"

    def score(self, sigil: Sigil) -> int:
        """Points on one sigil (fractional point values are rounded down on the total)."""
        return math.floor(RULES[self.number](sigil, self.params))

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "key": self.key, "name": self.name, "tier": self.tier,
                "text": self.text, "params": dict(self.params)}


@dataclass(frozen=True)
class Familiar:
    """One Familiar card: id ``F01``..``F09``, name, VP cost per sigil, kind and power text.

    ``kind`` is ``"once"`` (a one-off ability, used once per game), ``"setup"`` (a choice made
    before the first turn) or ``"always"`` (a standing rule change).
    """

    id: str
    name: str
    cost: int
    kind: str
    text: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "cost": self.cost, "kind": self.kind,
                "text": self.text}


def _units(number: int, params: dict[str, Any], example: dict[str, Any]) -> int:
    """What goal ``number``'s rule counts on an example's drawing: its points with every point
    value (``per_*``, ``*_per_point``) set to 1, as the example's ``count`` says."""
    top = [None if b is None else TopBox(b["value"], b["circled"])
           for b in example.get("top", [None] * 7)]
    sigil = Sigil(load_layout(example["layout"]), example["lines"], example["crossed"], top)
    unit = {k: 1 if k.startswith("per_") or k.endswith("_per_point") else v
            for k, v in params.items()}
    return math.floor(RULES[number](sigil, unit))


def _check_examples(examples: list[dict[str, Any]], number: int, params: dict[str, Any],
                    source: str, where: str) -> None:
    """What the schema cannot say of a goal's examples: each is drawn on a sigil design A-D,
    its lines join two different candles, its ``count`` is what the rule counts on it, and
    there is an allowed one that scores (count 1 at least) and a not-allowed one, counting
    less than every allowed one."""
    for k, example in enumerate(examples):
        if str(example["layout"]).upper() not in BUILTIN:
            raise DataFileError(source, f"{where}[{k}].layout",
                                f"unknown layout {as_json(example['layout'])}: an example is "
                                f"drawn on one of the sigil designs {', '.join(BUILTIN)}")
        for j, (a, b) in enumerate(example["lines"]):
            if a == b:
                raise DataFileError(source, f"{where}[{k}].lines[{j}]",
                                    f"a line joins two different candles, not {a} to itself")
        if example["allowed"] and example["count"] < 1:
            raise DataFileError(source, f"{where}[{k}].count",
                                "an allowed example scores: its count is at least 1")
        units = _units(number, params, example)
        if units != example["count"]:
            raise DataFileError(source, f"{where}[{k}].count",
                                f"goal {number}'s rule counts {units} on this drawing, the "
                                f"file says {example['count']}")
    for allowed, word in ((True, "allowed"), (False, "not-allowed")):
        if not any(e["allowed"] is allowed for e in examples):
            raise DataFileError(source, where,
                                f"goal {number} has no {word} example: give one of each")
    least = min((e["count"], k) for k, e in enumerate(examples) if e["allowed"])
    for k, example in enumerate(examples):
        if not example["allowed"] and example["count"] >= least[0]:
            raise DataFileError(source, f"{where}[{k}].count",
                                "a not-allowed example counts less than the allowed ones: "
                                f"{example['count']}, as much as {where}[{least[1]}]")


@lru_cache(maxsize=4)
def _load_goals(path: str) -> dict[int, Goal]:
    doc = load_validated(path, DATA_DIR / "goals.schema.json")
    out: dict[int, Goal] = {}
    numbers = repeats(entry["number"] for entry in doc)
    names = repeats(entry["name"] for entry in doc)
    for i, entry in enumerate(doc):
        number, params = entry["number"], entry["params"]
        if i in numbers:
            raise DataFileError(path, f"$[{i}].number", f"goal {number} is listed twice "
                                f"(also at $[{numbers[i]}].number)")
        needed = RULE_PARAMS[number]
        if sorted(params) != sorted(needed):
            raise DataFileError(path, f"$[{i}].params",
                                f"goal {number}'s rule reads {', '.join(needed)}; "
                                f"the file gives {', '.join(params) or 'none'}")
        try:
            text = entry["text"].format(**{k: f"{v:g}" for k, v in params.items()})
        except (KeyError, IndexError, AttributeError, ValueError) as exc:
            raise DataFileError(path, f"$[{i}].text",
                                f"goal {number}'s text cannot be filled in "
                                f"({type(exc).__name__}: {exc}): braces may only name its "
                                f"params ({', '.join(params)}); write {{{{ or }}}} for a brace"
                                ) from None
        tier = (number - 1) // 9 + 1
        if entry["tier"] != tier:
            raise DataFileError(path, f"$[{i}].tier",
                                f"goal {number} is a tier {tier} goal (tier {tier} holds goals "
                                f"{tier * 9 - 8}-{tier * 9}), the file says {entry['tier']}")
        if i in names:
            raise DataFileError(path, f"$[{i}].name",
                                f"{as_json(entry['name'])} is the name of two goals "
                                f"(also at $[{names[i]}].name)")
        _check_examples(entry["examples"], number, params, path, f"$[{i}].examples")
        if any(k.startswith("per_") and v != int(v) for k, v in params.items()):
            text += " Round the total down."
        out[number] = Goal(number, entry["name"], entry["tier"], text, dict(params),
                           tuple(entry.get("examples", ())))
    missing = set(range(1, 28)) - set(out)
    if missing:
        raise DataFileError(path, "$", f"goals {sorted(missing)} are missing")
    return out


def goals() -> dict[int, Goal]:
    """All 27 goals by number."""
    return _load_goals(str(GOALS_FILE))


def goal(number: int) -> Goal:
    """The goal with this number; :class:`BadInput` when there is none."""
    found = goals().get(number)
    if found is None:
        raise BadInput(f"goal {number} does not exist: goals are numbered 1-27")
    return found


def parse_goals(numbers: str | Iterable[int]) -> tuple[Goal, ...]:
    """``"1,2,3"`` or ``[1, 2, 3]`` -> goals; refuses unknown numbers and repeats."""
    if isinstance(numbers, str):
        try:
            numbers = [int(x) for x in numbers.split(",") if x.strip()]
        except ValueError:
            raise BadInput(f"goals: expected numbers separated by commas, got {numbers!r}") \
                from None
    numbers = list(numbers)
    if not numbers:
        raise BadInput("goals: give at least one goal number (1-27)")
    if len(set(numbers)) != len(numbers):
        raise BadInput(f"goals: a goal is listed twice in {numbers}")
    return tuple(goal(n) for n in numbers)


def game_goals(numbers: str | Iterable[int]) -> tuple[Goal, ...]:
    """The goals of a game: :func:`parse_goals`, and 2 or 3 of them (``GOALS_PER_GAME``).

    The rulebook's Setup: "For an easy game, use 2 Goal Cards" / "Otherwise use 3 Goal Cards".
    The command line, the web form and the game engine all ask this one function.
    """
    chosen = parse_goals(numbers) if numbers else ()
    if len(chosen) not in GOALS_PER_GAME:
        easy, full = GOALS_PER_GAME
        listed = ",".join(str(g.number) for g in chosen)
        raise BadInput(f"goals: a game is played with {easy} goals (an easy game) or {full}, "
                       f"got {len(chosen)}" + (f": {listed}" if listed else ""))
    return chosen


@lru_cache(maxsize=4)
def _load_familiars(path: str) -> dict[str, Familiar]:
    doc = load_validated(path, DATA_DIR / "familiars.schema.json")
    out: dict[str, Familiar] = {}
    ids = repeats(e["id"] for e in doc)
    names = repeats(e["name"] for e in doc)
    for i, e in enumerate(doc):
        if i in ids:
            raise DataFileError(path, f"$[{i}].id",
                                f"{as_json(e['id'])} is listed twice (also at $[{ids[i]}].id): "
                                "familiars F01-F09 each appear once")
        if i in names:
            raise DataFileError(path, f"$[{i}].name",
                                f"{as_json(e['name'])} is the name of two familiars "
                                f"(also at $[{names[i]}].name)")
        out[e["id"]] = Familiar(e["id"], e["name"], e["cost"], e["kind"], e["text"])
    return out


def familiars() -> dict[str, Familiar]:
    """All 9 familiars by id."""
    return _load_familiars(str(FAMILIARS_FILE))


def familiar(ident: str | int) -> Familiar:
    """``"F03"``, ``"f3"``, ``"3"`` or ``3`` -> the familiar; :class:`BadInput` when unknown."""
    text = str(ident).strip().upper().lstrip("F")
    try:
        key = f"F{int(text):02d}"
    except ValueError:
        key = str(ident)
    found = familiars().get(key)
    if found is None:
        raise BadInput(f"familiar {ident!r} does not exist: familiars are F01-F09")
    return found


def score_sigil(sigil: Sigil, chosen: Sequence[Goal],
                familiar_card: Familiar | None = None) -> dict[str, Any]:
    """Each goal's points, the familiar cost and the total for one sigil."""
    points = {g.key: g.score(sigil) for g in chosen}
    cost = familiar_card.cost if familiar_card else 0
    return {"goals": points, "familiar_cost": cost, "total": sum(points.values()) - cost}
