"""Scoring dice readings against labelled images (``doomcompanion eval dice DIR``).

Matching (../shared/data/dice-real/README.md): a reading and a labelled die match when the
labelled box's centre lies inside the reading's box or the reading's centre lies inside the
labelled box; pairs are matched one-to-one, nearest centres first. This works for every
``bbox_kind`` (``pip_region``, ``whole_die``, ``crop``, ``top_face``).

Figures:

- ``accuracy``: matched dice read with the right value / matched dice (a ``null`` value on a
  labelled die counts as not right);
- ``recall``: matched dice / labelled dice;
- ``fp_per_image``: readings matched to no labelled die, per image;
- ``exact_rate``: images where every labelled die is matched and read right and there is no
  false positive;
- ``confusion``: ``{true value: {read value | "null" | "missed": count}}``;
- ``by_place``: the labelled dice inside the view and those cut by its edge (their top-face
  box within ``EDGE_PX`` of the image border: pips may lie outside the view, so ``null`` is a
  fair answer there), each ``{dice, right, wrong, null, missed}``.
- ``colour``: of the matched dice whose label names a body colour (:func:`label_colour`),
  how many the reader names so (``dice``, ``named``, ``share``) and ``confusion``,
  ``{labelled: {named: count}}``; null when no label names one.

Convention: boxes ``[x0, y0, x1, y1]`` in pixels, origin top-left.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.errors import DataFileError
from vision.readings import DIE_COLORS, DiceReading, box_center

__all__ = ["EDGE_PX", "DiceScore", "ImageResult", "check_labels", "colour_score",
           "label_colour", "match", "place", "point_inside", "score_image", "summarize"]

EDGE_PX = 1.0  # a labelled top face this close to the image border is cut by the edge


def point_inside(p: tuple[float, float], box: Sequence[float]) -> bool:
    """Whether the point ``p`` lies inside ``box`` (its edges included)."""
    return box[0] <= p[0] <= box[2] and box[1] <= p[1] <= box[3]


def label_colour(label: Mapping[str, Any]) -> str | None:
    """The body colour a labelled die's ``color`` names, as the reader names colours
    (:data:`vision.readings.DIE_COLORS`), in any case: the whole text, or its first word
    when a comma or a space follows it ("white die, black pips" is white); None when it
    names none of them or the label has no ``color`` (an estimate such as ``color_est`` is
    not read).

    Examples
    --------
    >>> label_colour({"color": "white die, black pips"}), label_colour({"color": "cream"})
    ('white', None)
    """
    text = label.get("color")
    if not isinstance(text, str):
        return None
    first = text.strip().lower().replace(",", " ").split(" ")[0]
    return first if first in DIE_COLORS and first != "unknown" else None


def match(read_boxes: Sequence[Sequence[float]],
          label_boxes: Sequence[Sequence[float]]) -> list[tuple[int, int]]:
    """One-to-one pairs ``(reading index, label index)``, nearest centres first.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels, origin top-left.

    Examples
    --------
    >>> match([[0, 0, 10, 10], [20, 0, 30, 10]], [[22, 2, 26, 6]])
    [(1, 0)]
    """
    pairs = []
    for i, rb in enumerate(read_boxes):
        rc = box_center(rb)
        for j, lb in enumerate(label_boxes):
            lc = box_center(lb)
            if point_inside(lc, rb) or point_inside(rc, lb):
                pairs.append((math.dist(rc, lc), i, j))
    pairs.sort()
    used_r: set[int] = set()
    used_l: set[int] = set()
    out = []
    for _, i, j in pairs:
        if i in used_r or j in used_l:
            continue
        used_r.add(i)
        used_l.add(j)
        out.append((i, j))
    return sorted(out)


@dataclass(frozen=True)
class ImageResult:
    image: str
    labelled: int
    matched: int
    correct: int
    pairs: tuple[tuple[int | None, int | None], ...]  # (true value, read value) per label
    unmatched: tuple[int, ...] = ()  # the readings matched to no label (by index)
    places: tuple[str, ...] = ()  # per label, "inside" or "edge" (empty: image size unknown)
    # (labelled, named) body colour of each matched die whose label names one (label_colour)
    colours: tuple[tuple[str, str], ...] = ()

    @property
    def false_positives(self) -> int:
        return len(self.unmatched)

    @property
    def exact(self) -> bool:
        return (self.matched == self.labelled and self.correct == self.labelled
                and self.false_positives == 0)


def place(box: Sequence[float], size: tuple[int, int]) -> str:
    """``"edge"`` for a labelled top face that touches the border of an image of ``size``
    (width, height), within ``EDGE_PX``: a die cut by the edge of the view, some of whose pips
    may lie outside it; ``"inside"`` otherwise."""
    x0, y0, x1, y1 = box
    width, height = size
    return "edge" if min(x0, y0, width - x1, height - y1) < EDGE_PX else "inside"


def score_image(name: str, reading: DiceReading, labels: Sequence[Mapping[str, Any]],
                size: tuple[int, int] | None = None) -> ImageResult:
    """Score one image's reading against its labelled dice; with the image's ``size``
    (width, height), each labelled die is also placed inside the view or on its edge."""
    pairs = match([d.bbox for d in reading.dice], [lb["bbox"] for lb in labels])
    got = {j: reading.dice[i].value for i, j in pairs}
    out: list[tuple[int | None, int | None]] = []
    correct = 0
    for j, lb in enumerate(labels):
        value = lb.get("value")
        read = got.get(j, "missed")
        out.append((value, read))  # type: ignore[arg-type]
        if j in got and read == value:
            correct += 1
    paired = {i for i, _ in pairs}
    places = tuple(place(lb["bbox"], size) for lb in labels) if size else ()
    colours = tuple((colour, reading.dice[i].color) for i, j in pairs
                    if (colour := label_colour(labels[j])) is not None)
    return ImageResult(name, len(labels), len(pairs), correct, tuple(out),
                       tuple(i for i in range(len(reading.dice)) if i not in paired), places,
                       colours)


@dataclass(frozen=True)
class DiceScore:
    images: int
    dice: int
    accuracy: float
    recall: float
    fp_per_image: float
    exact_rate: float
    confusion: dict[str, dict[str, int]] = field(default_factory=dict)
    read_rate: float = 0.0
    unreadable: int = 0
    # "inside" / "edge" (see :func:`place`) -> counts of dice, right, wrong, null, missed
    by_place: dict[str, dict[str, int]] = field(default_factory=dict)
    # {dice, named, share, confusion} of the matched dice whose label names a colour, or None
    colour: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"images": self.images, "dice": self.dice, "accuracy": self.accuracy,
                "recall": self.recall, "fp_per_image": self.fp_per_image,
                "exact_rate": self.exact_rate, "confusion": self.confusion,
                "read_rate": self.read_rate, "unreadable": self.unreadable,
                "by_place": self.by_place, "colour": self.colour}


def colour_score(pairs: Sequence[tuple[str, str]]) -> dict[str, Any] | None:
    """The ``colour`` figure of ``(labelled, named)`` pairs: ``{dice, named, share,
    confusion}`` with ``confusion`` ``{labelled: {named: count}}``; None without pairs.

    Examples
    --------
    >>> colour_score([("white", "white"), ("white", "grey"), ("black", "black")])["share"]
    0.6667
    """
    if not pairs:
        return None
    named = sum(labelled == read for labelled, read in pairs)
    return {"dice": len(pairs), "named": named, "share": round(named / len(pairs), 4),
            "confusion": _confusion(pairs)}


def _confusion(cells: Iterable[tuple[str, str]]) -> dict[str, dict[str, int]]:
    """``{row: {column: count}}`` of ``(row, column)`` cells, rows and columns sorted."""
    table: dict[str, Counter[str]] = {}
    for row, column in cells:
        table.setdefault(row, Counter())[column] += 1
    return {k: dict(sorted(v.items())) for k, v in sorted(table.items())}


def summarize(results: Sequence[ImageResult]) -> DiceScore:
    """The figures of a folder from its per-image results."""
    n = len(results)
    dice = sum(r.labelled for r in results)
    matched = sum(r.matched for r in results)
    correct = sum(r.correct for r in results)
    fp = sum(r.false_positives for r in results)
    cells: list[tuple[str, str]] = []  # (true, read) of every labelled die, for the confusion
    by_place: dict[str, dict[str, int]] = {}
    unreadable = 0
    for r in results:
        for k, (true, read) in enumerate(r.pairs):
            key = "null" if read is None else str(read)
            unreadable += read is None
            cells.append((str(true), key))
            if r.places:  # the image's size was given
                counts = by_place.setdefault(r.places[k], dict.fromkeys(
                    ("dice", "right", "wrong", "null", "missed"), 0))
                counts["dice"] += 1
                counts[key if key in ("null", "missed") else
                       "right" if read == true else "wrong"] += 1
    return DiceScore(images=n, dice=dice,
                     accuracy=round(correct / matched, 4) if matched else 0.0,
                     recall=round(matched / dice, 4) if dice else 1.0,
                     fp_per_image=round(fp / n, 4) if n else 0.0,
                     exact_rate=round(sum(r.exact for r in results) / n, 4) if n else 0.0,
                     confusion=_confusion(cells),
                     read_rate=round(correct / dice, 4) if dice else 1.0,
                     unreadable=unreadable, by_place=dict(sorted(by_place.items())),
                     colour=colour_score([c for r in results for c in r.colours]))


def check_boxes_inside(dice: Sequence[Mapping[str, Any]], size: tuple[int, int], source: str,
                       where: str) -> None:
    """Refuse a labelled box that does not overlap its image of ``size`` (width, height): it
    can match no reading (x and y swapped, another photo's box). ``where`` is the JSON path of
    the image's entry. Convention: boxes ``[x0, y0, x1, y1]`` in pixels, origin top-left."""
    width, height = size
    for k, die in enumerate(dice):
        x0, y0, x1, y1 = die["bbox"]
        if x1 < 0 or y1 < 0 or x0 > width or y0 > height:
            shown = ", ".join(f"{v:g}" for v in die["bbox"])
            raise DataFileError(source, f"{where}.dice[{k}].bbox",
                                f"[{shown}] lies outside the {width}x{height} image")


def check_labels(doc: Any, source: str) -> list[dict[str, Any]]:
    """Check a dice ``labels.json`` document; raise :class:`DataFileError` naming the place."""
    if not isinstance(doc, list):
        raise DataFileError(source, "$", "expected a list of {image, dice} entries")
    for i, entry in enumerate(doc):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("image"), str):
            raise DataFileError(source, f"$[{i}].image", "expected the image file name")
        dice = entry.get("dice")
        if not isinstance(dice, list):
            raise DataFileError(source, f"$[{i}].dice", "expected a list of dice")
        for k, die in enumerate(dice):
            where = f"$[{i}].dice[{k}]"
            if not isinstance(die, Mapping):
                raise DataFileError(source, where, "expected an object")
            box = die.get("bbox")
            if (not isinstance(box, list) or len(box) != 4
                    or not all(isinstance(v, (int, float)) and math.isfinite(v) for v in box)
                    or box[0] > box[2] or box[1] > box[3]):
                raise DataFileError(source, f"{where}.bbox", "expected [x0, y0, x1, y1]")
            if "value" not in die:  # a misspelt key would count the die as unreadable
                raise DataFileError(source, f"{where}.value", "missing: the top face's value, "
                                    "1-6, or null when it cannot be read")
            value = die["value"]
            if value is not None and (isinstance(value, bool) or value not in range(1, 7)):
                raise DataFileError(source, f"{where}.value", "expected 1-6 or null")
            if "color" in die and not isinstance(die["color"], str):
                raise DataFileError(source, f"{where}.color",
                                    'expected the body colour\'s name, e.g. "white"')
    return list(doc)
