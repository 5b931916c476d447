"""Drawing the face of a blank sigil card: one display list, two back ends (raster and PDF).

Two art styles:

- ``"companion"``: the printable companion card. White, thin dark outlines, the layout's ArUco
  markers with their white quiet zone, and nothing that crosses a candle-pair band except the
  layout's own dotted dividers (which the reader subtracts with the blank reference).
- ``"printed"``: imitates a commercial printed card found by its outline: rounded corners, a
  dark frame with ornaments, a tinted and textured background, and decorative art (sky dots,
  moons, a cat) placed only outside the candle-pair bands. No markers. ``design`` picks one of a
  few palettes and art placements; one design is one printed card, the same in every photo.

:func:`face_items` builds the display list in millimetres, :func:`rasterize` paints it into an
image at ``px_per_mm`` and :func:`card_face` does both (cached). ``calibration.pdf`` writes the
same list as vector PDF.

Convention: every coordinate is in millimetres on the card, origin top-left, x right, y down;
points ``(x, y)``; boxes ``[x0, y0, x1, y1]``. Colours are RGB tuples 0-255. Raster images are
BGR ``uint8`` with pixel ``(i, j)`` covering the card area ``[j, j+1) x [i, i+1)`` / px_per_mm.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import cv2
import numpy as np

from vision.sigil.geometry import CardGeometry, card_geometry

__all__ = ["ART_STYLES", "CardFace", "Disc", "Poly", "Text", "band_mask", "card_face",
           "decoration_items", "face_items", "marker_bits", "rasterize"]

ART_STYLES = ("companion", "printed")
RGB = tuple[int, int, int]
INK_DARK: RGB = (35, 35, 40)


@dataclass(frozen=True)
class Poly:
    """A polyline or polygon in mm: stroked when ``width`` > 0, filled when ``fill`` is set.

    ``dash`` is ``(on_mm, off_mm)`` for dotted/dashed strokes.
    """

    points: tuple[tuple[float, float], ...]
    width: float = 0.0
    color: RGB = INK_DARK
    closed: bool = False
    fill: RGB | None = None
    dash: tuple[float, float] | None = None


@dataclass(frozen=True)
class Disc:
    """A circle in mm: filled with ``fill`` and/or outlined ``width`` mm in ``color``."""

    center: tuple[float, float]
    radius: float
    width: float = 0.0
    color: RGB = INK_DARK
    fill: RGB | None = None


@dataclass(frozen=True)
class Text:
    """A short text centred on ``center``; ``height`` is the cap height in mm."""

    center: tuple[float, float]
    text: str
    height: float
    color: RGB = INK_DARK
    bold: bool = True


Item = Poly | Disc | Text


@dataclass(frozen=True)
class CardFace:
    """A rendered blank card face.

    ``image`` is BGR uint8 of shape ``(round(h*ppm), round(w*ppm), 3)``; ``alpha`` is uint8
    (255 on the card, 0 outside its rounded corners).
    """

    image: np.ndarray
    alpha: np.ndarray
    px_per_mm: float


# --------------------------------------------------------------------------------- helpers

def _rect(box: tuple[float, float, float, float] | list[float]) -> tuple[tuple[float, float], ...]:
    x0, y0, x1, y1 = box
    return ((x0, y0), (x1, y0), (x1, y1), (x0, y1))


def _rounded_rect(x0: float, y0: float, x1: float, y1: float, r: float,
                  steps: int = 8) -> tuple[tuple[float, float], ...]:
    pts: list[tuple[float, float]] = []
    corners = ((x1 - r, y0 + r, -90), (x1 - r, y1 - r, 0), (x0 + r, y1 - r, 90),
               (x0 + r, y0 + r, 180))
    for cx, cy, start in corners:
        for k in range(steps + 1):
            a = math.radians(start + 90 * k / steps)
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    return tuple(pts)


def _star(cx: float, cy: float, r: float, points: int = 5,
          inner: float = 0.45) -> tuple[tuple[float, float], ...]:
    out = []
    for k in range(2 * points):
        a = -math.pi / 2 + k * math.pi / points
        rr = r if k % 2 == 0 else r * inner
        out.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
    return tuple(out)


def _crescent(cx: float, cy: float, r: float, turn: float) -> tuple[tuple[float, float], ...]:
    outer = [(cx + r * math.cos(a), cy + r * math.sin(a))
             for a in np.linspace(turn + 0.5, turn + 2 * math.pi - 0.5, 24)]
    inner_c = (cx + 0.45 * r * math.cos(turn), cy + 0.45 * r * math.sin(turn))
    inner = [(inner_c[0] + 0.8 * r * math.cos(a), inner_c[1] + 0.8 * r * math.sin(a))
             for a in np.linspace(turn + 2 * math.pi - 0.9, turn + 0.9, 24)]
    return tuple((float(x), float(y)) for x, y in outer + inner)


def _cat(cx: float, cy: float, s: float) -> tuple[tuple[float, float], ...]:
    """A sitting cat's silhouette, ``s`` mm tall, centred on (cx, cy)."""
    pts = [(-0.28, 0.5), (-0.3, 0.1), (-0.2, -0.12), (-0.24, -0.42), (-0.12, -0.3),
           (0.0, -0.33), (0.12, -0.3), (0.24, -0.42), (0.2, -0.12), (0.3, 0.1), (0.32, 0.5),
           (0.45, 0.45), (0.5, 0.3), (0.42, 0.38), (0.34, 0.42), (0.36, 0.5)]
    return tuple((cx + s * x, cy + s * y) for x, y in pts)


def marker_bits(dictionary: str, marker_id: int) -> np.ndarray:
    """The ``(n+2) x (n+2)`` cell grid (1 = black) of an ArUco marker, border included."""
    aruco = cv2.aruco
    d = aruco.getPredefinedDictionary(getattr(aruco, dictionary))
    cells = d.markerSize + 2
    img = aruco.generateImageMarker(d, int(marker_id), cells)
    return (img < 128).astype(np.uint8)


def band_mask(geom: CardGeometry, px_per_mm: float, margin_mm: float = 3.0) -> np.ndarray:
    """Mask (uint8 0/255) of every candle-pair band (chord +- margin) and candle disc (+margin).

    This is where a pen line may go; decoration must stay outside it.
    """
    h, w = round(geom.height * px_per_mm), round(geom.width * px_per_mm)
    mask = np.zeros((h, w), np.uint8)
    pts = geom.centers() * px_per_mm
    thick = max(1, round(2 * margin_mm * px_per_mm))
    for a, b in geom.pairs:
        cv2.line(mask, tuple(np.round(pts[a]).astype(int)), tuple(np.round(pts[b]).astype(int)),
                 255, thick)
    for c, p in zip(geom.candles, pts, strict=True):
        cv2.circle(mask, tuple(np.round(p).astype(int)),
                   round((c.radius + margin_mm) * px_per_mm), 255, -1)
    return mask


# ------------------------------------------------------------------------------- display list

_PALETTES: tuple[dict[str, RGB], ...] = (
    {"bg": (244, 236, 220), "frame": (58, 36, 82), "accent": (201, 160, 72),
     "candle": (252, 246, 232), "deco": (214, 200, 178), "text": (58, 36, 82)},
    {"bg": (228, 236, 240), "frame": (64, 104, 150), "accent": (226, 196, 120),
     "candle": (250, 250, 246), "deco": (196, 210, 222), "text": (28, 44, 66)},
    {"bg": (236, 226, 236), "frame": (84, 30, 52), "accent": (214, 176, 96),
     "candle": (252, 244, 246), "deco": (216, 196, 214), "text": (84, 30, 52)},
    {"bg": (232, 238, 224), "frame": (150, 70, 60), "accent": (232, 200, 120),
     "candle": (250, 252, 244), "deco": (204, 216, 192), "text": (30, 54, 40)},
)


def face_items(layout: Any, art: str = "companion", design: int = 0) -> list[Item]:
    """The display list of a blank card face (see the module docstring for the styles).

    Parameters
    ----------
    layout
        A layout in any form :func:`vision.sigil.geometry.card_geometry` accepts.
    art
        ``"companion"`` or ``"printed"``.
    design
        For ``"printed"``: which palette and art placement (any int).
    """
    if art not in ART_STYLES:
        raise ValueError(f"art must be one of {ART_STYLES}, got {art!r}")
    geom = card_geometry(layout)
    if art == "companion":
        return _companion_items(geom)
    return _printed_items(geom, design)


def _common_items(geom: CardGeometry, *, line: RGB, candle_fill: RGB | None, text: RGB,
                  star: RGB, divider: RGB, box_fill: RGB | None) -> list[Item]:
    items: list[Item] = []
    w, h = geom.size_mm
    if geom.vertical_x is not None:
        # The vertical divider splits the candle area: it stops short of the boxes, so that no
        # dotted line runs through a digit.
        x = geom.vertical_x
        top = max([2.0] + [b[3] + 1.5 for b in geom.top_boxes if b[0] - 1 <= x <= b[2] + 1])
        bottom = min([h - 2.0] + [b[1] - 1.5 for b in geom.score_boxes
                                  if b[0] - 1 <= x <= b[2] + 1])
        items.append(Poly(((x, top), (x, bottom)), 0.35, divider, dash=(0.35, 1.6)))
    if geom.horizontal_y is not None:
        items.append(Poly(((2.0, geom.horizontal_y), (w - 2.0, geom.horizontal_y)), 0.35,
                          divider, dash=(0.35, 1.6)))
    for sx, sy in geom.stars:
        items.append(Poly(_star(sx, sy, 2.2), 0.25, star, closed=True, fill=star))
    for box in geom.top_boxes:
        items.append(Poly(_rect(box), 0.4, line, closed=True, fill=box_fill))
    for box in geom.score_boxes:
        items.append(Poly(_rect(box), 0.4, line, closed=True, fill=box_fill))
    for c in geom.candles:
        items.append(Disc(c.center, c.radius, 0.45, line, fill=candle_fill))
        items.append(Text(c.center, str(c.number), 0.95 * c.radius, text))
    return items


def _companion_items(geom: CardGeometry) -> list[Item]:
    w, h = geom.size_mm
    items: list[Item] = [Poly(_rect((0, 0, w, h)), 0.0, fill=(255, 255, 255)),
                         Poly(_rect((0.4, 0.4, w - 0.4, h - 0.4)), 0.3, (150, 150, 150),
                              closed=True)]
    items += _common_items(geom, line=INK_DARK, candle_fill=None, text=INK_DARK,
                           star=(150, 150, 150), divider=(150, 150, 150), box_fill=None)
    for m in geom.markers:
        items += _marker_items(geom.marker_dictionary, m.id, m.center, m.size)
    return items


def _marker_items(dictionary: str, marker_id: int, center: tuple[float, float],
                  size: float) -> list[Item]:
    bits = marker_bits(dictionary, marker_id)
    n = bits.shape[0]
    cell = size / n
    x0, y0 = center[0] - size / 2, center[1] - size / 2
    quiet = cell
    items: list[Item] = [Poly(_rect((x0 - quiet, y0 - quiet, x0 + size + quiet,
                                     y0 + size + quiet)), fill=(255, 255, 255))]
    for i in range(n):
        for j in range(n):
            if bits[i, j]:
                # Slightly overlap neighbours so that no hairline gap shows between cells.
                items.append(Poly(_rect((x0 + j * cell, y0 + i * cell,
                                         x0 + (j + 1) * cell + 0.01, y0 + (i + 1) * cell + 0.01)),
                                  fill=(0, 0, 0)))
    return items


def decoration_items(layout: Any, design: int = 0) -> list[Item]:
    """The printed style's decorative art (a cat, moons, a sky of dots), placed only where no
    candle-pair band (4 mm margin), box or star lies."""
    geom = card_geometry(layout)
    pal = _PALETTES[design % len(_PALETTES)]
    rng = np.random.default_rng(1000 + design)
    w, h = geom.size_mm
    items: list[Item] = []
    # Decoration only where no candle-pair band, box or star lies.
    ppm = 2.0
    free = cv2.bitwise_not(band_mask(geom, ppm, margin_mm=4.0))
    for box in (*geom.top_boxes, *geom.score_boxes):
        x0, y0, x1, y1 = (round(v * ppm) for v in box)
        cv2.rectangle(free, (x0 - 3, y0 - 3), (x1 + 3, y1 + 3), 0, -1)
    for sx, sy in geom.stars:
        cv2.circle(free, (round(sx * ppm), round(sy * ppm)), round(4 * ppm), 0, -1)
    inset = round(4.5 * ppm)
    free[:inset] = 0
    free[-inset:] = 0
    free[:, :inset] = 0
    free[:, -inset:] = 0
    dist = cv2.distanceTransform((free > 0).astype(np.uint8), cv2.DIST_L2, 5) / ppm
    placed: list[tuple[float, float, float]] = []

    def room(x: float, y: float, rad: float) -> bool:
        i, j = int(y * ppm), int(x * ppm)
        if not (0 <= i < dist.shape[0] and 0 <= j < dist.shape[1]) or dist[i, j] < rad:
            return False
        return all(math.hypot(x - px, y - py) > rad + pr + 0.8 for px, py, pr in placed)

    # A cat and crescent moons where the widest free spaces are.
    for kind, rad in (("cat", 5.5), ("moon", 3.2), ("moon", 2.6)):
        ys, xs = np.nonzero(dist >= rad)
        if len(xs) == 0:
            continue
        for _ in range(40):
            k = int(rng.integers(len(xs)))
            x, y = xs[k] / ppm, ys[k] / ppm
            if room(x, y, rad):
                placed.append((x, y, rad))
                if kind == "cat":
                    items.append(Poly(_cat(x, y, 1.8 * rad), fill=pal["deco"]))
                else:
                    items.append(Poly(_crescent(x, y, rad, float(rng.uniform(0, 6.28))),
                                      fill=pal["deco"]))
                break
    # A sky of small dots and sparkles.
    for _ in range(160):
        x, y = float(rng.uniform(4, w - 4)), float(rng.uniform(4, h - 4))
        rad = float(rng.uniform(0.3, 0.9))
        if room(x, y, 1.6 * rad + 0.6):
            placed.append((x, y, rad))
            if rng.random() < 0.3:
                items.append(Poly(_star(x, y, 1.6 * rad, 4, 0.3), fill=pal["deco"]))
            else:
                items.append(Disc((x, y), rad * 0.6, fill=pal["deco"]))
    return items


def _printed_items(geom: CardGeometry, design: int) -> list[Item]:
    pal = _PALETTES[design % len(_PALETTES)]
    w, h = geom.size_mm
    r = 3.2
    # Half the designs have a white cut margin around the dark frame, half bleed to the edge.
    rim = 0.9 if design % 2 == 0 else 0.0
    items: list[Item] = [Poly(_rounded_rect(0, 0, w, h, r), fill=(246, 244, 240))]
    items += [
        Poly(_rounded_rect(rim, rim, w - rim, h - rim, r - rim), fill=pal["frame"]),
        Poly(_rounded_rect(1.9, 1.9, w - 1.9, h - 1.9, 2.0), fill=pal["bg"]),
        Poly(_rounded_rect(2.5, 2.5, w - 2.5, h - 2.5, 1.6), 0.25, pal["accent"], closed=True),
    ]
    items += decoration_items(geom, design)
    # Corner ornaments on the frame (outside every band by construction of the frame).
    for cx, cy in ((2.5, 2.5), (w - 2.5, 2.5), (w - 2.5, h - 2.5), (2.5, h - 2.5)):
        items.append(Disc((cx, cy), 0.9, 0.25, pal["accent"], fill=pal["frame"]))
    items += _common_items(geom, line=pal["frame"], candle_fill=pal["candle"], text=pal["text"],
                           star=pal["accent"], divider=pal["frame"], box_fill=(252, 252, 250))
    return items


# ----------------------------------------------------------------------------------- raster

_SHIFT = 4
_ONE = 1 << _SHIFT


def _px(points: Any, ppm: float) -> np.ndarray:
    return np.round(np.asarray(points, np.float64) * ppm * _ONE).astype(np.int32)


def _dashes(points: tuple[tuple[float, float], ...], on: float,
            off: float) -> list[list[tuple[float, float]]]:
    out: list[list[tuple[float, float]]] = []
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        length = math.hypot(x1 - x0, y1 - y0)
        s = 0.0
        while s < length:
            e = min(length, s + on)
            t0, t1 = s / length, e / length
            out.append([(x0 + t0 * (x1 - x0), y0 + t0 * (y1 - y0)),
                        (x0 + t1 * (x1 - x0), y0 + t1 * (y1 - y0))])
            s += on + off
    return out


def _bgr(rgb: RGB) -> tuple[int, int, int]:
    return (int(rgb[2]), int(rgb[1]), int(rgb[0]))


def _thick(width_mm: float, ppm: float) -> int:
    return max(1, round(width_mm * ppm))


def rasterize(items: list[Item], size_mm: tuple[float, float], px_per_mm: float,
              ) -> np.ndarray:
    """Paint a display list into a BGR uint8 image (white where nothing is drawn)."""
    w, h = round(size_mm[0] * px_per_mm), round(size_mm[1] * px_per_mm)
    img = np.full((h, w, 3), 255, np.uint8)
    aa = cv2.LINE_AA
    for it in items:
        if isinstance(it, Poly):
            pts = _px(it.points, px_per_mm)
            if it.fill is not None:
                cv2.fillPoly(img, [pts], _bgr(it.fill), aa, _SHIFT)
            if it.width > 0:
                if it.dash is not None:
                    for seg in _dashes(it.points, *it.dash):
                        p = _px(seg, px_per_mm)
                        cv2.line(img, tuple(p[0]), tuple(p[1]), _bgr(it.color),
                                 _thick(it.width, px_per_mm), aa, _SHIFT)
                else:
                    cv2.polylines(img, [pts], it.closed, _bgr(it.color),
                                  _thick(it.width, px_per_mm), aa, _SHIFT)
        elif isinstance(it, Disc):
            c = tuple(_px(it.center, px_per_mm))
            r = round(it.radius * px_per_mm * _ONE)
            if it.fill is not None:
                cv2.circle(img, c, r, _bgr(it.fill), -1, aa, _SHIFT)
            if it.width > 0:
                cv2.circle(img, c, r, _bgr(it.color), _thick(it.width, px_per_mm), aa, _SHIFT)
        else:
            _raster_text(img, it, px_per_mm)
    return img


def _raster_text(img: np.ndarray, it: Text, ppm: float) -> None:
    font = cv2.FONT_HERSHEY_DUPLEX
    (tw, th), _ = cv2.getTextSize(it.text, font, 1.0, 1)
    scale = it.height * ppm / th
    thick = max(1, round(scale * (2.2 if it.bold else 1.2)))
    (tw, th), _ = cv2.getTextSize(it.text, font, scale, thick)
    x = it.center[0] * ppm - tw / 2
    y = it.center[1] * ppm + th / 2
    cv2.putText(img, it.text, (round(x), round(y)), font, scale, _bgr(it.color), thick,
                cv2.LINE_AA)


def _alpha(geom: CardGeometry, art: str, ppm: float) -> np.ndarray:
    h, w = round(geom.height * ppm), round(geom.width * ppm)
    if art == "companion":
        return np.full((h, w), 255, np.uint8)
    a = np.zeros((h, w), np.uint8)
    cv2.fillPoly(a, [_px(_rounded_rect(0, 0, geom.width, geom.height, 3.2), ppm)], 255,
                 cv2.LINE_AA, _SHIFT)
    return a


@lru_cache(maxsize=16)
def _cached_face(geom: CardGeometry, art: str, design: int, ppm: float) -> CardFace:
    items = face_items(geom, art, design)
    # Paint at twice the resolution and reduce, for clean anti-aliased edges.
    img = rasterize(items, geom.size_mm, 2 * ppm)
    h, w = round(geom.height * ppm), round(geom.width * ppm)
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_AREA)
    if art == "printed":
        rng = np.random.default_rng(7 + design)
        grain = rng.normal(0.0, 3.0, (h, w)).astype(np.float32)
        mottle = cv2.resize(rng.normal(0.0, 1.0, (max(2, h // 40), max(2, w // 40)))
                            .astype(np.float32), (w, h), interpolation=cv2.INTER_CUBIC) * 4.0
        img = np.clip(img.astype(np.float32) + (grain + mottle)[..., None], 0, 255
                      ).astype(np.uint8)
    img.setflags(write=False)
    alpha = _alpha(geom, art, ppm)
    alpha.setflags(write=False)
    return CardFace(img, alpha, ppm)


def card_face(layout: Any, art: str = "companion", design: int = 0,
              px_per_mm: float = 8.0) -> CardFace:
    """The blank card face as an image (cached; the arrays are read-only, copy to draw).

    Examples
    --------
    >>> face = card_face({"name": "X", "size_mm": [88, 126],
    ...                   "candles": [{"number": 1, "center": [44, 63], "radius": 4}]},
    ...                  px_per_mm=4)
    >>> face.image.shape
    (504, 352, 3)
    """
    if art not in ART_STYLES:
        raise ValueError(f"art must be one of {ART_STYLES}, got {art!r}")
    if px_per_mm <= 0:
        raise ValueError(f"px_per_mm must be positive, got {px_per_mm}")
    return _cached_face(card_geometry(layout), art, int(design), float(px_per_mm))
