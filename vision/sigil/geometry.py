"""A sigil layout as plain geometry in millimetres, whatever form the layout arrives in.

The Doom Cat catalogue (``companion.doomcat.layouts``) owns the layout files and their schema.
The reader, the card drawing, the synthetic renderer and card registration only need the
geometry, so they accept a layout as a mapping (the JSON document), as an object with the same
attributes, or as an object with ``to_json()``; :func:`card_geometry` turns any of those into a
:class:`CardGeometry`. Nothing here knows a rule of the game. Finding the card in a photo is
:mod:`vision.sigil.pose`.

Convention: card geometry is in millimetres on the card, origin at the card's top-left corner,
x to the right, y down; points are ``(x, y)``; boxes are ``[x0, y0, x1, y1]``. Image points are
``(x, y)`` pixels, origin top-left. A homography ``H`` maps card millimetres to image pixels:
``[u, v, w]^T = H [x_mm, y_mm, 1]^T``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from companion.errors import BadInput
from vision.cache import per_object

__all__ = ["Candle", "CardGeometry", "MarkerSpec", "card_corners_mm", "card_geometry",
           "photo_px_per_mm", "project", "segment_distance"]


@dataclass(frozen=True)
class Candle:
    """One candle: its printed number, centre ``(x, y)`` in mm and radius in mm."""

    number: int
    center: tuple[float, float]
    radius: float


@dataclass(frozen=True)
class MarkerSpec:
    """One ArUco marker: its id, centre ``(x, y)`` in mm and side (black square) in mm."""

    id: int
    center: tuple[float, float]
    size: float

    def corners(self) -> np.ndarray:
        """The marker's 4 corners in mm, in OpenCV's order (top-left, top-right, bottom-right,
        bottom-left of the upright printed marker), shape (4, 2) float64."""
        cx, cy = self.center
        h = self.size / 2.0
        return np.array([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]],
                        np.float64)


@dataclass(frozen=True)
class CardGeometry:
    """The geometry of one sigil layout (see the module docstring for the convention).

    ``dividers`` is ``(vertical_x, horizontal_y)`` or None; ``must_curve`` lists the pairs
    ``(a, b)``, a < b, that must be drawn round a candle.
    """

    name: str
    size_mm: tuple[float, float]
    candles: tuple[Candle, ...]
    stars: tuple[tuple[float, float], ...] = ()
    dividers: tuple[float, float] | None = None
    top_boxes: tuple[tuple[float, float, float, float], ...] = ()
    score_boxes: tuple[tuple[float, float, float, float], ...] = ()
    marker_dictionary: str = "DICT_4X4_50"
    markers: tuple[MarkerSpec, ...] = ()
    must_curve: tuple[tuple[int, int], ...] = ()

    @property
    def width(self) -> float:
        return float(self.size_mm[0])

    @property
    def height(self) -> float:
        return float(self.size_mm[1])

    @property
    def aspect(self) -> float:
        """Width over height of the card."""
        return self.width / self.height

    @property
    def vertical_x(self) -> float | None:
        return None if self.dividers is None else self.dividers[0]

    @property
    def horizontal_y(self) -> float | None:
        return None if self.dividers is None else self.dividers[1]

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """Every candle pair ``(a, b)``, a < b (66 for 12 candles)."""
        return tuple(itertools.combinations(range(len(self.candles)), 2))

    def centers(self) -> np.ndarray:
        """Candle centres in mm, shape (12, 2)."""
        return np.array([c.center for c in self.candles], np.float64)

    def blocking_candle(self, a: int, b: int, clearance: float = 1.0) -> int | None:
        """The candle closest to the straight chord a-b if the chord passes within
        ``clearance`` mm of its outline, else ``None``."""
        pa, pb = np.array(self.candles[a].center), np.array(self.candles[b].center)
        best: tuple[float, int] | None = None
        for k, c in enumerate(self.candles):
            if k in (a, b):
                continue
            gap = segment_distance(np.array(c.center), pa, pb) - c.radius
            if gap < clearance and (best is None or gap < best[0]):
                best = (gap, k)
        return None if best is None else best[1]

    def detour(self, a: int, b: int, clearance: float = 2.0) -> float:
        """The bow of the gentlest single-arc line from candle a to candle b that passes every
        other candle at least ``clearance`` mm from its outline (or, if none can, the bow that
        keeps the most room). The bow is the signed peak offset in mm from the straight chord,
        positive towards the left normal ``(-dy, dx)`` of the direction a -> b; see
        :meth:`pair_path`. 0 for a chord that is already clear. Cached.
        """
        return _detour(self, a, b, float(clearance))

    def _detour(self, a: int, b: int, clearance: float) -> float:
        length = float(np.linalg.norm(np.subtract(self.candles[b].center,
                                                  self.candles[a].center)))
        t = np.linspace(0.05, 0.95, 40)
        best: tuple[float, float] | None = None
        for bow in sorted(np.linspace(-0.35 * length, 0.35 * length, 141), key=abs):
            room = self.room(a, b, self.arc(a, b, bow, t))
            if room >= clearance:
                return float(bow)
            if best is None or room > best[0]:
                best = (room, float(bow))
        return 0.0 if best is None else best[1]

    def arc(self, a: int, b: int, bow: float, t: np.ndarray) -> np.ndarray:
        """Points (mm, shape (len(t), 2)) of the single parabolic arc from candle a's centre
        (``t`` 0) to candle b's (``t`` 1) whose peak lies ``bow`` mm off the straight chord,
        positive towards the left normal ``(-dy, dx)`` of the direction a -> b."""
        pa, pb = np.array(self.candles[a].center), np.array(self.candles[b].center)
        d = pb - pa
        nrm = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
        t = np.asarray(t, np.float64)[:, None]
        return pa + t * d + (4 * t * (1 - t)) * bow * nrm

    def room(self, a: int, b: int, path: np.ndarray) -> float:
        """How far (mm) ``path`` (points, mm) keeps from the outline of every candle but a and
        b: negative when it runs over one."""
        return min(float(np.linalg.norm(path - np.array(c.center), axis=1).min()) - c.radius
                   for k, c in enumerate(self.candles) if k not in (a, b))

    def pair_path(self, a: int, b: int, n: int = 40, clearance: float = 2.0) -> np.ndarray:
        """Centre line (mm, shape (n, 2)) where a player draws the line a-b: the straight chord,
        or for the layout's ``must_curve`` pairs (and any chord grazing a candle) the gentlest
        arc around the candles in the way (:meth:`detour`)."""
        pair = (min(a, b), max(a, b))
        bow = 0.0
        if self.blocking_candle(a, b, 6.0 if pair in self.must_curve else 1.2) is not None:
            bow = self.detour(a, b, clearance)
        return self.arc(a, b, bow, np.linspace(0.0, 1.0, n))


@lru_cache(maxsize=4096)
def _detour(geom: CardGeometry, a: int, b: int, clearance: float) -> float:
    return geom._detour(a, b, clearance)


def segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Distance from point ``p`` to the segment ``a``-``b`` (any unit, all in the same)."""
    ab = b - a
    denom = float(np.dot(ab, ab))
    t = 0.0 if denom == 0 else float(np.clip(np.dot(p - a, ab) / denom, 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


def card_corners_mm(geom: CardGeometry) -> np.ndarray:
    """The card's corners TL, TR, BR, BL in mm, shape (4, 2) float32."""
    w, h = geom.size_mm
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)


def project(h: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    """Map ``(N, 2)`` card points (mm) to image points (px) through the homography ``h``."""
    pts = np.asarray(pts_mm, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, np.asarray(h, np.float64)).reshape(-1, 2)


def photo_px_per_mm(h: np.ndarray, geom: CardGeometry) -> float:
    """How many photo pixels one card mm spans at the card's centre through ``h`` (the square
    root of the homography's local area scale there)."""
    c = np.array(geom.size_mm) / 2.0
    jac = project(h, np.array([c, c + np.array([1.0, 0.0]), c + np.array([0.0, 1.0])]))
    d1, d2 = jac[1] - jac[0], jac[2] - jac[0]
    return float(np.sqrt(abs(d1[0] * d2[1] - d1[1] * d2[0])))


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


def _point(value: Any) -> tuple[float, float]:
    x, y = value
    return float(x), float(y)


def card_geometry(layout: Any) -> CardGeometry:
    """Return the geometry of a layout given as a mapping, an object, or a :class:`CardGeometry`.

    Parameters
    ----------
    layout
        The layout document of DESIGN.md (``name``, ``size_mm``, ``candles``, ``stars``,
        ``dividers``, ``top_boxes``, ``score_boxes``; optional ``markers`` and
        ``must_curve``), in any of the accepted forms. Objects (not mappings, which may be
        edited in place) are cached by identity.

    Raises
    ------
    BadInput
        When a required key is missing or malformed.

    Examples
    --------
    >>> g = card_geometry({"name": "X", "size_mm": [88, 126],
    ...                    "candles": [{"number": 1, "center": [10, 20], "radius": 4}]})
    >>> g.candles[0].center, g.aspect < 1
    ((10.0, 20.0), True)
    """
    if isinstance(layout, CardGeometry):
        return layout
    if isinstance(layout, Mapping):
        return _card_geometry(layout)
    return _object_geometry(layout)


@per_object(size=64)
def _object_geometry(layout: Any) -> CardGeometry:
    return _card_geometry(layout)


def _card_geometry(layout: Any) -> CardGeometry:
    doc = layout
    if not isinstance(layout, Mapping):
        to_json = getattr(layout, "to_json", None)
        if callable(to_json):
            doc = to_json()
    try:
        candles = tuple(
            Candle(int(_get(c, "number")), _point(_get(c, "center")),
                   float(_get(c, "radius", 4.0)))
            for c in _get(doc, "candles"))
        div = _get(doc, "dividers")
        dividers = None
        if div is not None:
            if isinstance(div, Mapping) or hasattr(div, "vertical_x"):
                dividers = (float(_get(div, "vertical_x")), float(_get(div, "horizontal_y")))
            else:
                dividers = _point(div)
        markers_doc = _get(doc, "markers") or {}
        markers = tuple(
            MarkerSpec(int(_get(m, "id")), _point(_get(m, "center")), float(_get(m, "size")))
            for m in (_get(markers_doc, "items") or ()))
        must = tuple(sorted({tuple(sorted((int(p[0]), int(p[1]))))
                             for p in (_get(doc, "must_curve") or ())}))
        return CardGeometry(
            name=str(_get(doc, "name", "?")),
            size_mm=_point(_get(doc, "size_mm", (88.0, 126.0))),
            candles=candles,
            stars=tuple(_point(s) for s in (_get(doc, "stars") or ())),
            dividers=dividers,
            top_boxes=tuple(tuple(float(v) for v in b) for b in (_get(doc, "top_boxes") or ())),
            score_boxes=tuple(tuple(float(v) for v in b)
                              for b in (_get(doc, "score_boxes") or ())),
            marker_dictionary=str(_get(markers_doc, "dictionary", None) or "DICT_4X4_50"),
            markers=markers,
            must_curve=must,
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise BadInput(f"layout {_get(doc, 'name', '?')!r}: malformed geometry: {exc}") from None
