"""The data contracts that the readers return and the rest of the program speaks (DESIGN.md).

- :class:`Die` / :class:`DiceReading`: what the dice reader returns for one image.
- :class:`SigilState`: what the sigil reader returns and the Doom Cat engine scores.

All are frozen dataclasses with ``to_json()``; ``from_json()`` checks a document and raises
:class:`companion.errors.DataFileError` naming the source, the JSON path and the rule broken.

Convention: boxes are ``[x0, y0, x1, y1]`` in pixels of the image, origin top-left. Candles are
the indices 0-11 of the layout file's ``candles`` list; a line is a pair ``(a, b)`` with a < b.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.errors import DataFileError

DIE_STATES = ("flat", "cocked", "unreadable")
# the body colours the dice reader names (vision.dice.die_color, or "translucent" from its
# classifier); "unknown" where a face gives nothing to measure
DIE_COLORS = ("black", "grey", "white", "red", "orange", "yellow", "green", "blue", "purple",
              "translucent", "unknown")
N_CANDLES = 12
N_TOP_BOXES = 7
_UNKNOWN = re.compile(r"^(line (\d+)-(\d+)|candle (\d+)|top (\d+))$")


def box_center(box: Sequence[float]) -> tuple[float, float]:
    """The centre ``(x, y)`` of a box ``[x0, y0, x1, y1]``."""
    return ((box[0] + box[2]) / 2.0, (box[1] + box[3]) / 2.0)


def _fail(source: str, path: str, rule: str) -> DataFileError:
    return DataFileError(source, path, rule)


def _check_misspelt(doc: Mapping[str, Any], keys: Sequence[str], what: str, source: str,
                    path: str) -> None:
    """Refuse a key of ``doc`` that looks like a misspelling of one of ``keys`` it lacks
    (``lnes`` for ``lines``): read as an absent key, its value would be lost without a word.
    Other keys are welcome (``sigil --json`` adds ``pose``, ``evidence``, ``notes``)."""
    missing = [k for k in keys if k not in doc]
    for key in doc:
        if key in keys or not isinstance(key, str) or not missing:
            continue
        close = difflib.get_close_matches(key.lower(), missing, n=1, cutoff=0.75)
        if close:
            raise _fail(source, f"{path}.{key}",
                        f"not a key of {what}: did you mean {close[0]!r}?")


@dataclass(frozen=True)
class Die:
    """One die seen in an image.

    ``value`` is 1-6 when the top face was read (``state == "flat"``), else ``None`` with
    ``state`` ``"cocked"`` or ``"unreadable"``: never a guess.
    """

    value: int | None
    color: str
    bbox: tuple[float, float, float, float]
    confidence: float
    state: str = "flat"

    def __post_init__(self) -> None:
        if self.state not in DIE_STATES:
            raise ValueError(f"die state must be one of {DIE_STATES}, got {self.state!r}")
        if self.state == "flat" and self.value not in range(1, 7):
            raise ValueError(f"a flat die has a value 1-6, got {self.value!r}")
        if self.state != "flat" and self.value is not None:
            raise ValueError(f"a {self.state} die has no value, got {self.value!r}")
        if len(self.bbox) != 4 or self.bbox[0] > self.bbox[2] or self.bbox[1] > self.bbox[3]:
            raise ValueError(f"bbox must be [x0, y0, x1, y1] with x0 <= x1, y0 <= y1: {self.bbox}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"confidence must lie in [0, 1], got {self.confidence}")

    @property
    def center(self) -> tuple[float, float]:
        return box_center(self.bbox)

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "color": self.color,
                "bbox": [round(float(v), 1) for v in self.bbox],
                "confidence": round(float(self.confidence), 4), "state": self.state}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, source: str = "<die>",
                  path: str = "$") -> Die:
        try:
            return cls(value=doc.get("value"), color=str(doc.get("color", "unknown")),
                       bbox=tuple(float(v) for v in doc["bbox"]),  # type: ignore[arg-type]
                       confidence=float(doc.get("confidence", 1.0)),
                       state=str(doc.get("state", "flat")))
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(source, path, str(exc)) from None


@dataclass(frozen=True)
class TablePlane:
    """The table's plane as the flat dice on it showed it in a frame of ``size``
    ``(width, height)`` pixels: its unit ``normal`` in the camera's frame (x right, y down in
    the image, z toward the camera), for a lens whose focal length is ``focal`` times the
    frame's longer side (0: a camera far away). A camera that stays put keeps it, so later
    frames of the same size with too few flat dice of their own can be judged against it
    (:func:`vision.dice.read_dice`'s ``table``, :class:`vision.dice.lean.TableMemory`)."""

    normal: tuple[float, float, float]
    focal: float
    size: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"normal": [round(float(v), 6) for v in self.normal],
                "focal": round(float(self.focal), 6), "size": list(self.size)}

    @classmethod
    def from_json(cls, doc: Any, *, source: str = "<table>", path: str = "$") -> TablePlane:
        rule = "expected {'normal': [x, y, z] of length 1, 'focal': f >= 0, 'size': [w, h]}"
        try:
            normal = tuple(float(v) for v in doc["normal"])
            focal = float(doc["focal"])
            size = tuple(int(v) for v in doc["size"])
        except (KeyError, TypeError, ValueError) as exc:
            raise _fail(source, path, f"{rule}: {exc}") from None
        if (len(normal) != 3 or abs(sum(v * v for v in normal) - 1.0) > 1e-3 or focal < 0
                or len(size) != 2 or min(size) <= 0):
            raise _fail(source, path, rule)
        return cls(normal, focal, size)  # type: ignore[arg-type]


@dataclass(frozen=True)
class DiceReading:
    """Every d6 in view in one image.

    ``hand`` tells that a hand (or an arm) is in view: dice may be being picked up, set down or
    turned, so a tracker should not take the table as settled (an extra key of the contract).
    ``table`` is the table's plane the dice showed (:class:`TablePlane`: at least the
    reader's ``lean_support`` of them share it), or None (another extra key).
    """

    dice: tuple[Die, ...] = ()
    hand: bool = False
    table: TablePlane | None = None

    def to_json(self) -> dict[str, Any]:
        return {"dice": [d.to_json() for d in self.dice], "hand": self.hand,
                "table": None if self.table is None else self.table.to_json()}

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, source: str = "<dice>") -> DiceReading:
        if not isinstance(doc, Mapping) or not isinstance(doc.get("dice"), list):
            raise _fail(source, "$.dice", "expected a list of dice")
        hand = doc.get("hand", False)
        if not isinstance(hand, bool):
            raise _fail(source, "$.hand", f"expected true or false, got {hand!r}")
        table = doc.get("table")
        return cls(tuple(Die.from_json(d, source=source, path=f"$.dice[{i}]")
                         for i, d in enumerate(doc["dice"])), hand,
                   None if table is None else TablePlane.from_json(table, source=source,
                                                                    path="$.table"))


@dataclass(frozen=True)
class TopBox:
    """A digit written in a top box, and whether it is circled (wild on that card)."""

    value: int
    circled: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "circled": self.circled}


@dataclass(frozen=True)
class SigilState:
    """What is drawn on one Sigil Card.

    ``lines`` are sorted pairs ``(a, b)``, a < b; ``crossed`` sorted candle indices; ``top`` the
    7 top boxes left to right (``None`` when empty); ``unknown`` the elements a reader could not
    see, in the notation ``"line a-b"``, ``"candle c"``, ``"top k"`` (k 0-based).
    """

    layout: str
    lines: tuple[tuple[int, int], ...] = ()
    crossed: tuple[int, ...] = ()
    top: tuple[TopBox | None, ...] = (None,) * N_TOP_BOXES
    unknown: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        # Check, then store the canonical form (pairs a < b, sorted lists), so that direct
        # construction is as safe as from_json().
        SigilState._check(self.to_json(), "<sigil state>")
        object.__setattr__(self, "lines", tuple(sorted(tuple(sorted(p)) for p in self.lines)))
        object.__setattr__(self, "crossed", tuple(sorted(self.crossed)))
        object.__setattr__(self, "top", tuple(self.top))
        object.__setattr__(self, "unknown", tuple(sorted(set(self.unknown), key=_unknown_key)))

    @property
    def used(self) -> tuple[int, ...]:
        """Candles a line touches (crossed or not)."""
        return tuple(sorted({c for pair in self.lines for c in pair}))

    def to_json(self) -> dict[str, Any]:
        return {"layout": self.layout,
                "lines": [list(p) for p in self.lines],
                "crossed": list(self.crossed),
                "top": [None if t is None else t.to_json() for t in self.top],
                "unknown": list(self.unknown)}

    @staticmethod
    def _check(doc: Mapping[str, Any], source: str) -> None:
        if not isinstance(doc, Mapping):
            raise _fail(source, "$", "a sigil state is a JSON object")
        _check_misspelt(doc, ("layout", "lines", "crossed", "top", "unknown"),
                        "a sigil state", source, "$")
        if not isinstance(doc.get("layout"), str) or not doc["layout"]:
            raise _fail(source, "$.layout", "expected the layout name (a non-empty string)")
        lines = doc.get("lines", [])
        if not isinstance(lines, list):
            raise _fail(source, "$.lines", "expected a list of candle pairs")
        seen: set[tuple[int, int]] = set()
        for i, pair in enumerate(lines):
            where = f"$.lines[{i}]"
            if (not isinstance(pair, (list, tuple)) or len(pair) != 2
                    or not all(isinstance(c, int) and not isinstance(c, bool) for c in pair)):
                raise _fail(source, where, f"a line is a pair of candle indices, got {pair!r}")
            for c in pair:
                if not 0 <= c < N_CANDLES:
                    raise _fail(source, where, f"candle {c} is out of range 0-{N_CANDLES - 1}")
            a, b = sorted(pair)
            if a == b:
                raise _fail(source, where, f"a line joins two different candles, got {a}-{b}")
            if (a, b) in seen:
                raise _fail(source, where, f"line {a}-{b} is listed twice")
            seen.add((a, b))
        crossed = doc.get("crossed", [])
        if not isinstance(crossed, list):
            raise _fail(source, "$.crossed", "expected a list of candle indices")
        for i, c in enumerate(crossed):
            if not isinstance(c, int) or isinstance(c, bool) or not 0 <= c < N_CANDLES:
                raise _fail(source, f"$.crossed[{i}]",
                            f"expected a candle index 0-{N_CANDLES - 1}, got {c!r}")
        if len(set(crossed)) != len(crossed):
            raise _fail(source, "$.crossed", "a candle is listed twice (it is crossed once)")
        top = doc.get("top", [None] * N_TOP_BOXES)
        if not isinstance(top, list) or len(top) != N_TOP_BOXES:
            raise _fail(source, "$.top", f"expected a list of {N_TOP_BOXES} top boxes")
        for i, box in enumerate(top):
            if box is None:
                continue
            if (not isinstance(box, Mapping) or box.get("value") not in range(1, 7)
                    or isinstance(box.get("value"), bool)
                    or not isinstance(box.get("circled", False), bool)):
                raise _fail(source, f"$.top[{i}]",
                            'expected null or {"value": 1-6, "circled": true/false}')
            _check_misspelt(box, ("value", "circled"), "a top box", source, f"$.top[{i}]")
        unknown = doc.get("unknown", [])
        if not isinstance(unknown, list):
            raise _fail(source, "$.unknown", "expected a list of element names")
        for i, name in enumerate(unknown):
            m = _UNKNOWN.match(name) if isinstance(name, str) else None
            if m is None:
                raise _fail(source, f"$.unknown[{i}]",
                            f'expected "line a-b", "candle c" or "top k", got {name!r}')
            numbers = [int(g) for g in m.groups()[1:] if g is not None]
            limit = N_TOP_BOXES if name.startswith("top") else N_CANDLES
            if any(not 0 <= n < limit for n in numbers):
                raise _fail(source, f"$.unknown[{i}]", f"{name!r} is out of range")

    @classmethod
    def from_json(cls, doc: Mapping[str, Any], *, source: str = "<sigil state>") -> SigilState:
        """Check a sigil state document and return it in canonical (sorted) form."""
        cls._check(doc, source)
        return cls(
            layout=doc["layout"],
            lines=tuple(tuple(p) for p in doc.get("lines", [])),
            crossed=tuple(doc.get("crossed", [])),
            top=tuple(None if b is None else TopBox(b["value"], bool(b.get("circled", False)))
                      for b in doc.get("top", [None] * N_TOP_BOXES)),
            unknown=tuple(doc.get("unknown", [])),
        )

    @classmethod
    def of(cls, layout: str, lines: Iterable[Iterable[int]] = (), crossed: Iterable[int] = (),
           top: Iterable[TopBox | None] | None = None, unknown: Iterable[str] = ()) -> SigilState:
        """Build a canonical state from loose Python values (pairs in any order)."""
        return cls.from_json({
            "layout": layout, "lines": [list(p) for p in lines], "crossed": list(crossed),
            "top": [None if t is None else t.to_json() for t in top] if top is not None
            else [None] * N_TOP_BOXES,
            "unknown": list(unknown)})


def _unknown_key(name: str) -> tuple[int, ...]:
    kind = ("line", "candle", "top").index(name.split()[0])
    return (kind, *(int(n) for n in re.findall(r"\d+", name)))
