"""Sigil Card layouts: where the candles, stars, dividers, boxes and markers are on a card.

Four designs ship with the program (letters ``A``-``D``, ``companion/data/layouts/<L>.json``,
validated by ``layout.schema.json`` beside them). A card registered from a photo
(``doomcompanion cards register``) lives in the user's registry as
``<registry_dir()>/cards/<NAME>/layout.json`` (with its ``reference.png``); its layout name is
``NAME``.

Python API
----------
- :class:`Layout` (frozen; ``to_json()``), :class:`Candle`, :class:`Marker`.
- :func:`load_layout` ``(name_or_path) -> Layout``: a letter ``A``-``D``, a registered card's
  name, or the path of a layout ``.json`` file. Unknown names raise
  :class:`companion.errors.BadInput` listing the known names; a broken file raises
  :class:`companion.errors.DataFileError` naming the file, the JSON path and the rule broken.
- :func:`layout_names`, :func:`all_layouts`, :func:`registry_dir`.
- ``Layout.candle_names`` and ``Layout.element_name(element)``: what a player calls a candle
  ("left 3", "lower 5": the printed number and the side that tells it from its twin) and an
  element of a reading ("line left 3 – lower 5", "top box 1"); the page, the game log and the
  tracker's events say candles this way, the data keep the indices.

Convention: card geometry is in millimetres on the card, origin at the card's top-left corner,
x to the right, y down; points are ``(x, y)``; boxes are ``(x0, y0, x1, y1)``. Candles are the
indices 0-11 of ``Layout.candles``.

Examples
--------
>>> from companion.doomcat.layouts import load_layout
>>> layout = load_layout("A")
>>> layout.size_mm, len(layout.candles), sorted(c.number for c in layout.candles)[:4]
((88.0, 126.0), 12, [1, 1, 2, 2])
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property, lru_cache
from itertools import combinations
from pathlib import Path
from typing import Any

from companion.datafiles import DATA_DIR, as_json, file_stamp, load_validated, repeats
from companion.errors import BadInput, DataFileError

LAYOUTS_DIR = DATA_DIR / "layouts"
SCHEMA = LAYOUTS_DIR / "layout.schema.json"
BUILTIN = ("A", "B", "C", "D")
N_CANDLES = 12
N_TOP_BOXES = 7
N_SCORE_BOXES = 4

Point = tuple[float, float]
Box = tuple[float, float, float, float]


@dataclass(frozen=True)
class Candle:
    """One candle: its printed number (1-6), its centre and radius in mm."""

    number: int
    center: Point
    radius: float

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "center": list(self.center), "radius": self.radius}


@dataclass(frozen=True)
class Marker:
    """One fiducial (ArUco) marker printed on the companion card: id, centre and side in mm."""

    id: int
    center: Point
    size: float

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "center": list(self.center), "size": self.size}


@dataclass(frozen=True)
class Layout:
    """The geometry of one Sigil Card design.

    Convention: millimetres, origin top-left of the card, x right, y down; boxes are
    ``(x0, y0, x1, y1)``. ``dividers`` is ``(vertical_x, horizontal_y)``. ``must_curve`` lists
    the candle pairs ``(a, b)``, a < b, whose straight chord passes too close to another candle:
    the player draws them with a slight curve and they stay legal.
    """

    name: str
    size_mm: tuple[float, float]
    candles: tuple[Candle, ...]
    stars: tuple[Point, ...]
    dividers: tuple[float, float]
    top_boxes: tuple[Box, ...]
    score_boxes: tuple[Box, ...]
    markers: tuple[Marker, ...] = ()
    marker_dictionary: str = "DICT_4X4_50"
    must_curve: tuple[tuple[int, int], ...] = ()
    title: str = ""
    description: str = ""
    source: str = field(default="", compare=False)

    @property
    def vertical_x(self) -> float:
        return self.dividers[0]

    @property
    def horizontal_y(self) -> float:
        return self.dividers[1]

    @property
    def centers(self) -> tuple[Point, ...]:
        """Candle centres in index order."""
        return tuple(c.center for c in self.candles)

    @property
    def numbers(self) -> tuple[int, ...]:
        """Printed candle numbers in index order."""
        return tuple(c.number for c in self.candles)

    @cached_property
    def candle_names(self) -> tuple[str, ...]:
        """What a player calls each candle, in index order: its printed number, and the side
        that tells it from the other candle of that number ("left 3" and "right 3" when the
        twins lie more side by side than one above the other, else "upper 3" and "lower 3")."""
        names = [str(c.number) for c in self.candles]
        for number in set(self.numbers):
            twins = self.candles_numbered(number)
            if len(twins) != 2:
                continue
            (ax, ay), (bx, by) = (self.candles[i].center for i in twins)
            across = abs(bx - ax) >= abs(by - ay)
            first_is_low = ax <= bx if across else ay <= by
            words = ("left", "right") if across else ("upper", "lower")
            for i, word in zip(twins, words if first_is_low else words[::-1], strict=True):
                names[i] = f"{word} {number}"
        return tuple(names)

    def line_name(self, a: int, b: int) -> str:
        """The line between candles ``a`` and ``b`` in a player's words: "left 3 – lower 5"."""
        return f"{self.candle_names[a]} – {self.candle_names[b]}"

    def element_name(self, element: str) -> str:
        """An element of a reading (``"line a-b"``, ``"candle c"``, ``"top k"``, 0-based as in
        DESIGN.md) in a player's words: "line left 3 – lower 5", "candle right 5", "top box 1".
        Anything else is returned as it is."""
        kind, _, rest = element.partition(" ")
        try:
            if kind == "line":
                a, b = (int(v) for v in rest.split("-"))
                return f"line {self.line_name(a, b)}"
            if kind == "candle":
                return f"candle {self.candle_names[int(rest)]}"
            if kind == "top":
                return f"top box {int(rest) + 1}"
        except (ValueError, IndexError):
            pass
        return element

    def candles_numbered(self, number: int) -> tuple[int, ...]:
        """Indices of the candles printed with ``number``."""
        return tuple(i for i, c in enumerate(self.candles) if c.number == number)

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "name": self.name,
            "size_mm": list(self.size_mm),
            "candles": [c.to_json() for c in self.candles],
            "stars": [list(s) for s in self.stars],
            "dividers": {"vertical_x": self.dividers[0], "horizontal_y": self.dividers[1]},
            "top_boxes": [list(b) for b in self.top_boxes],
            "score_boxes": [list(b) for b in self.score_boxes],
            "markers": {"dictionary": self.marker_dictionary,
                        "items": [m.to_json() for m in self.markers]},
            "must_curve": [list(p) for p in self.must_curve],
        }
        if self.title:
            doc["title"] = self.title
        if self.description:
            doc["description"] = self.description
        return doc

    @classmethod
    def from_json(cls, doc: dict[str, Any], *, source: str = "<layout>",
                  name: str | None = None) -> Layout:
        """Check a layout document (schema and geometry rules) and build the layout.

        ``name`` overrides the document's name (registered cards are named by their folder).
        """
        from companion.datafiles import validate

        validate(doc, SCHEMA, source=source)
        markers = doc.get("markers", {"dictionary": "DICT_4X4_50", "items": []})
        layout = cls(
            name=name or doc["name"],
            size_mm=_point(doc["size_mm"]),
            candles=tuple(Candle(int(c["number"]), _point(c["center"]), float(c["radius"]))
                          for c in doc["candles"]),
            stars=tuple(_point(s) for s in doc["stars"]),
            dividers=(float(doc["dividers"]["vertical_x"]),
                      float(doc["dividers"]["horizontal_y"])),
            top_boxes=tuple(_box(b) for b in doc["top_boxes"]),
            score_boxes=tuple(_box(b) for b in doc["score_boxes"]),
            markers=tuple(Marker(int(m["id"]), _point(m["center"]), float(m["size"]))
                          for m in markers["items"]),
            marker_dictionary=markers["dictionary"],
            must_curve=tuple(sorted({tuple(sorted(p)) for p in doc.get("must_curve", [])})),
            title=str(doc.get("title", "")),
            description=str(doc.get("description", "")),
            source=source,
        )
        _check_geometry(layout, doc, source)
        return layout


def _point(values: Any) -> tuple[float, float]:
    return (float(values[0]), float(values[1]))


def _box(values: Any) -> Box:
    return (float(values[0]), float(values[1]), float(values[2]), float(values[3]))


def _orientation(p: Point, q: Point, r: Point) -> int:
    """Sign of the cross product (q - p) x (r - p), computed exactly."""
    px, py, qx, qy, rx, ry = (Fraction(v) for v in (*p, *q, *r))
    cross = (qx - px) * (ry - py) - (qy - py) * (rx - px)
    return (cross > 0) - (cross < 0)


def _check_geometry(layout: Layout, doc: dict[str, Any], source: str) -> None:
    """The rules a JSON Schema cannot say; each failure names the file, path and rule."""
    width, height = layout.size_mm

    def inside(point: Point) -> bool:
        return 0 <= point[0] <= width and 0 <= point[1] <= height

    counts = Counter(layout.numbers)
    for number in range(1, 7):
        if counts[number] != 2:
            raise DataFileError(source, "$.candles",
                                f"each number 1-6 is printed on exactly two candles; "
                                f"{number} is on {counts[number]}")
    for i, candle in enumerate(layout.candles):
        x, y = candle.center
        r = candle.radius
        if not (r <= x <= width - r and r <= y <= height - r):
            raise DataFileError(source, f"$.candles[{i}].center",
                                f"candle {i} does not fit on the {width:g} x {height:g} mm card")
    for i, j in combinations(range(len(layout.candles)), 2):
        (xi, yi), (xj, yj) = layout.candles[i].center, layout.candles[j].center
        gap = layout.candles[i].radius + layout.candles[j].radius
        if (xi - xj) ** 2 + (yi - yj) ** 2 < gap * gap:
            raise DataFileError(source, f"$.candles[{j}].center",
                                f"candles {i} and {j} overlap")
    for i, j, k in combinations(range(len(layout.candles)), 3):
        if _orientation(*(layout.candles[n].center for n in (i, j, k))) == 0:
            raise DataFileError(source, f"$.candles[{k}].center",
                                f"candles {i}, {j} and {k} lie on one straight line")
    vx, hy = layout.dividers
    if not 0 < vx < width:
        raise DataFileError(source, "$.dividers.vertical_x", f"{vx:g} is off the card")
    if not 0 < hy < height:
        raise DataFileError(source, "$.dividers.horizontal_y", f"{hy:g} is off the card")
    for i, candle in enumerate(layout.candles):
        x, y = candle.center
        if x == vx or y == hy:
            raise DataFileError(source, f"$.candles[{i}].center",
                                f"candle {i} sits on a divider (its quadrant is undefined)")
    for i, star in enumerate(layout.stars):
        if not inside(star):
            raise DataFileError(source, f"$.stars[{i}]", "star is off the card")
    for key, boxes in (("top_boxes", layout.top_boxes), ("score_boxes", layout.score_boxes)):
        for i, (x0, y0, x1, y1) in enumerate(boxes):
            if not (x0 < x1 and y0 < y1 and inside((x0, y0)) and inside((x1, y1))):
                raise DataFileError(source, f"$.{key}[{i}]",
                                    "a box is [x0, y0, x1, y1] with x0 < x1, y0 < y1, on the card")
    ids = repeats(marker.id for marker in layout.markers)
    for i, marker in enumerate(layout.markers):
        if i in ids:
            raise DataFileError(source, f"$.markers.items[{i}].id",
                                f"marker id {marker.id} is used twice "
                                f"(also at $.markers.items[{ids[i]}].id)")
        half = marker.size / 2
        x, y = marker.center
        if not (inside((x - half, y - half)) and inside((x + half, y + half))):
            raise DataFileError(source, f"$.markers.items[{i}]", "marker is off the card")
    for i, pair in enumerate(doc.get("must_curve", [])):
        if pair[0] == pair[1]:
            raise DataFileError(source, f"$.must_curve[{i}]",
                                "a must-curve pair joins two different candles")


def registry_dir() -> Path:
    """Where registered cards live: ``$DOOMCOMPANION_HOME`` or ``~/.local/share/doomcompanion``."""
    home = os.environ.get("DOOMCOMPANION_HOME")
    return Path(home) if home else Path.home() / ".local" / "share" / "doomcompanion"


def _registered() -> dict[str, Path]:
    cards = registry_dir() / "cards"
    if not cards.is_dir():
        return {}
    return {p.parent.name: p for p in sorted(cards.glob("*/layout.json"))
            if p.parent.name not in BUILTIN}


def layout_names() -> list[str]:
    """``A``-``D`` then the registered cards' names, sorted."""
    return [*BUILTIN, *sorted(_registered())]


@lru_cache(maxsize=64)
def _load_file(path: str, name: str | None, stamp: tuple[int, int]) -> Layout:
    del stamp  # part of the cache key only: an edited file is read again
    doc = load_validated(path, SCHEMA)
    return Layout.from_json(doc, source=path, name=name)


def load_layout(name_or_path: str | os.PathLike[str]) -> Layout:
    """Load a layout by letter (``A``-``D``), registered card name, or layout file path.

    Raises
    ------
    BadInput
        The name is unknown (the message lists the known names).
    DataFileError
        The file breaks the schema or a geometry rule (file, JSON path and rule).
    """
    text = os.fspath(name_or_path)
    if text.upper() in BUILTIN:
        path = LAYOUTS_DIR / f"{text.upper()}.json"
        layout = _load_file(str(path), None, file_stamp(path))
        if layout.name != text.upper():
            raise DataFileError(str(path), "$.name",
                                f"{as_json(layout.name)} is another design's name: this file "
                                f"is sigil design {as_json(text.upper())}")
        return layout
    registered = _registered()
    if text in registered:
        path = registered[text]
        return _load_file(str(path), text, file_stamp(path))
    path = Path(text)
    if text.endswith(".json") or os.sep in text or path.exists():
        if not path.exists():
            raise BadInput(f"{text}: no such layout file")
        return _load_file(str(path), None, file_stamp(path))
    raise BadInput(f"unknown layout {text!r}: known layouts are {', '.join(layout_names())} "
                   "(or give the path of a layout .json file)")


def all_layouts(broken: list[BadInput] | None = None) -> list[Layout]:
    """Every known layout: ``A``-``D`` and the registered cards.

    A registered card whose file cannot be loaded is left out (its error appended to
    ``broken`` when given), so that one bad file does not stop the others being read.
    """
    out = []
    for name in layout_names():
        try:
            out.append(load_layout(name))
        except BadInput as exc:
            if name in BUILTIN:   # the cards shipped with the program: a bug, said loudly
                raise
            if broken is not None:
                broken.append(exc)
    return out
