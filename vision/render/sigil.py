"""Synthetic photos of Doom Cat sigil cards with a known state, for training, tests and ``eval``.

Two steps, each usable alone (the demo video and the reader's tests reuse them):

1. :func:`render_card` draws a :class:`vision.readings.SigilState` on a blank card face the way a
   person does with a dry-erase pen: wobbly strokes of varied width starting at the candle
   outlines, slight curves (a real detour around a candle for the layout's ``must_curve``
   pairs), crosses and slashes of varied style over crossed candles, digits 1-6 in a hand of
   its own in the top boxes, circled ones ringed; and, if asked, faint ghost lines and smudges
   of an erased earlier game. The result is the rectified card (:class:`CardImage`) at
   ``px_per_mm``.
2. :func:`photograph` puts that card on a table in front of a camera: perspective (up to 50
   degrees off the normal), in-plane rotation, distance, uneven light and colour cast, a shadow,
   a specular glare blob on the laminate, a hand over part of the card, defocus and motion blur
   and sensor noise, over a varied background. It returns the 1280x720 frame and a
   :class:`PhotoInfo` (card corners, homography, what is hidden).

:func:`hidden_elements` turns what is hidden into the ``unknown`` notation of DESIGN.md
(``"line a-b"``, ``"candle c"``, ``"top k"``) and :func:`render_photo` runs the whole chain.

This module knows no rule of the game: the caller supplies a state (legal or not).

Convention: card geometry in millimetres, origin at the card's top-left corner, x right, y down;
image points ``(x, y)`` in pixels, origin top-left; a homography maps card mm to frame pixels,
``[u, v, w]^T = H [x_mm, y_mm, 1]^T``; corners are listed top-left, top-right, bottom-right,
bottom-left of the card as printed. Images are BGR ``uint8``.

Examples
--------
>>> import numpy as np
>>> from vision.readings import SigilState
>>> layout = {"name": "X", "size_mm": [88, 126], "candles": [
...     {"number": 1 + i % 6, "center": [14 + 20 * (i % 4), 30 + 22 * (i // 4)], "radius": 4}
...     for i in range(12)]}
>>> card = render_card(layout, SigilState.of("X", lines=[(0, 5)], crossed=[3]),
...                    CardStyle(px_per_mm=4), np.random.default_rng(0))
>>> card.image.shape
(504, 352, 3)
>>> frame, info = photograph(card, np.random.default_rng(1))
>>> frame.shape, len(info.card_corners_px)
((720, 1280, 3), 4)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any

import cv2
import numpy as np

from vision.options import parse_fields
from vision.readings import SigilState
from vision.render.cardface import card_face
from vision.sigil.geometry import CardGeometry, card_geometry

__all__ = ["BACKGROUNDS", "PEN_COLORS", "CardImage", "CardStyle", "InkStyle", "PhotoConditions",
           "PhotoInfo", "RandomPhoto", "digit_strokes", "fixed_fields", "hidden_elements",
           "photograph", "random_ink_style", "random_photo", "render_card", "render_photo",
           "sample_conditions"]

FRAME_W, FRAME_H = 1280, 720
#: How a pen crosses a candle out (``InkStyle.cross_style`` may also be "mixed": one per candle).
CROSS_STYLES = ("x", "slash", "double", "scribble")

#: Dry-erase pen colours (BGR).
PEN_COLORS: dict[str, tuple[int, int, int]] = {
    "black": (38, 34, 32), "blue": (150, 62, 24), "red": (40, 36, 196),
    "green": (64, 128, 30), "purple": (124, 40, 110), "orange": (22, 112, 236),
}
BACKGROUNDS = ("wood", "cloth", "paper", "clutter", "dark", "felt")


# ------------------------------------------------------------------------------------ styles

@dataclass(frozen=True)
class CardStyle:
    """How the blank card looks: ``art`` ``"companion"`` (ArUco markers) or ``"printed"``
    (marker-less commercial look, palette/art picked by ``design``), at ``px_per_mm``."""

    art: str = "companion"
    design: int = 0
    px_per_mm: float = 8.0


@dataclass(frozen=True)
class InkStyle:
    """How the player writes.

    ``width_mm`` is the pen's stroke width; ``wobble_mm`` the amplitude of the hand's slow
    wander; ``curve`` the largest bow of a line as a share of its length; ``hand`` picks the
    digit shapes, slant and proportions; ``cross_style`` is ``"x"``, ``"slash"``,
    ``"double"``, ``"scribble"`` or ``"mixed"``. ``ghost_lines`` are pairs drawn and erased in an
    earlier game (faint, at ``ghost_opacity``), ``ghost_marks`` adds erased crosses and digits,
    ``smudges`` the number of erasure smudges.
    """

    pen_color: str = "black"
    width_mm: float = 0.8
    opacity: float = 0.92
    wobble_mm: float = 0.25
    curve: float = 0.03
    hand: int = 0
    cross_style: str = "x"
    ghost_lines: tuple[tuple[int, int], ...] = ()
    ghost_opacity: float = 0.12
    ghost_color: str = "black"
    ghost_marks: bool = False
    smudges: int = 0


@dataclass(frozen=True)
class CardImage:
    """A rectified card: ``image`` BGR of the whole card, ``alpha`` (255 on the card),
    ``px_per_mm``, the layout's geometry, the style, and the centre line (in mm) of every pen
    line drawn, by candle pair."""

    image: np.ndarray
    alpha: np.ndarray
    px_per_mm: float
    geometry: CardGeometry
    style: CardStyle
    paths: dict[tuple[int, int], np.ndarray] = field(default_factory=dict)

    @property
    def markers(self) -> bool:
        return self.style.art == "companion" and bool(self.geometry.markers)


@dataclass(frozen=True)
class PhotoConditions:
    """The camera and the scene. Every field has a value; :func:`sample_conditions` draws them.

    ``tilt_deg``: angle between the camera axis and the card's normal (0-50);
    ``tilt_dir_deg``: direction of that tilt; ``rotation_deg``: in-plane rotation of the card;
    ``fill``: share of the frame's area the card covers (reduced if the card cannot fit);
    ``focal_px``: focal length; ``light``: strength of the uneven light (0-1); ``warmth``:
    colour cast (-1 cold .. 1 warm); ``exposure``: gain; ``glare``: peak strength of the
    specular blob (0 = none); ``shadow``: darkness of a cast shadow (0 = none); ``hand``: a hand
    over part of the card; ``defocus_px``: Gaussian sigma; ``motion_px``: motion-blur length;
    ``noise``: sensor noise sigma (grey levels); ``jpeg_quality``: for the saved file;
    ``background``: one of :data:`BACKGROUNDS`; ``keep_in_view``: the card is moved (and
    shrunk) until it is wholly in the frame (the default); when False it is put at ``center``
    with ``fill`` as given, so that part of it may lie outside the frame (labelled hidden);
    ``second_card``: another blank card (a printed face of the same layout, the next design)
    lying over this one, shifted by that many of the card's widths and heights along its
    sides ((0, 0): none); what it covers is labelled hidden.
    """

    tilt_deg: float = 0.0
    tilt_dir_deg: float = 0.0
    rotation_deg: float = 0.0
    fill: float = 0.35
    center: tuple[float, float] = (0.5, 0.5)
    focal_px: float = 1100.0
    light: float = 0.0
    warmth: float = 0.0
    exposure: float = 1.0
    glare: float = 0.0
    shadow: float = 0.0
    hand: bool = False
    defocus_px: float = 0.0
    motion_px: float = 0.0
    noise: float = 0.0
    jpeg_quality: int = 90
    background: str = "wood"
    keep_in_view: bool = True
    second_card: tuple[float, float] = (0.0, 0.0)

    def to_json(self) -> dict[str, Any]:
        doc = asdict(self)
        return {k: (round(v, 3) if isinstance(v, float) else
                    [round(x, 3) for x in v] if isinstance(v, tuple) else v)
                for k, v in doc.items()}


@dataclass(frozen=True)
class PhotoInfo:
    """Where the card is in the frame and what is hidden.

    ``card_corners_px``: the card's corners (TL, TR, BR, BL as printed) in frame pixels;
    ``homography``: card mm -> frame px; ``hidden``: uint8 mask in rectified-card pixels
    (same shape as the card image) of what a hand or glare hides; ``conditions`` as used.
    """

    card_corners_px: np.ndarray
    homography: np.ndarray
    hidden: np.ndarray
    conditions: PhotoConditions


# -------------------------------------------------------------------------------- ink helpers

def _smooth_noise(rng: np.random.Generator, n: int, waves: int = 3) -> np.ndarray:
    """A smooth random function on ``n`` samples of [0, 1], amplitude about 1."""
    t = np.linspace(0.0, 1.0, n)
    out = np.zeros(n)
    for k in range(1, waves + 1):
        out += rng.normal(0, 1.0 / k) * np.sin(math.pi * k * t + rng.uniform(0, 2 * math.pi))
    return out


class _Ink:
    """Accumulates strokes as an alpha layer in card pixels."""

    def __init__(self, shape: tuple[int, int], ppm: float) -> None:
        self.alpha = np.zeros(shape, np.float32)
        self.ppm = ppm

    def stroke(self, pts_mm: np.ndarray, width_mm: float, rng: np.random.Generator,
               pressure: float = 0.25, value: float = 1.0) -> None:
        """Draw a polyline with a width that varies a little along it (pen pressure)."""
        pts = np.round(np.asarray(pts_mm, np.float64) * self.ppm * 16).astype(np.int32)
        n = len(pts)
        if n < 2:
            return
        chunk = max(2, n // 6)
        start = 0
        while start < n - 1:
            end = min(n, start + chunk + 1)
            w = width_mm * (1.0 + pressure * rng.uniform(-1, 1))
            thick = max(1, round(w * self.ppm))
            cv2.polylines(self.alpha, [pts[start:end]], False, value, thick, cv2.LINE_AA, 4)
            start = end - 1


def _bezier(p0: np.ndarray, c: np.ndarray, p1: np.ndarray, n: int) -> np.ndarray:
    t = np.linspace(0, 1, n)[:, None]
    return (1 - t) ** 2 * p0 + 2 * (1 - t) * t * c + t ** 2 * p1


def _bow_clear_of_candles(geom: CardGeometry, a: int, b: int, bulge: float,
                          clearance: float) -> float:
    """``bulge`` (the arc's peak offset from chord a-b, mm), flattened in quarters until the
    arc passes every other candle at least ``clearance`` mm from its outline (0 at worst: the
    straight chord, which the caller has checked clears them)."""
    t = np.linspace(0.0, 1.0, 60)
    for share in (1.0, 0.75, 0.5, 0.25):
        if geom.room(a, b, geom.arc(a, b, share * bulge, t)) >= clearance:
            return share * bulge
    return 0.0


def _line_path(geom: CardGeometry, a: int, b: int, ink: InkStyle,
               rng: np.random.Generator) -> np.ndarray:
    """Centre line (mm) of a hand-drawn line from candle ``a`` to candle ``b``."""
    ca, cb = geom.candles[a], geom.candles[b]
    pa, pb = np.array(ca.center), np.array(cb.center)
    d = pb - pa
    length = float(np.linalg.norm(d))
    u = d / length
    nrm = np.array([-u[1], u[0]])
    bulge = rng.uniform(-ink.curve, ink.curve) * length
    if geom.blocking_candle(a, b, 6.0 if (min(a, b), max(a, b)) in geom.must_curve else 1.2) \
            is not None:
        bulge = geom.detour(a, b, round(float(rng.uniform(1.6, 2.6)), 1))
    else:
        # the hand's bow never carries the line over another candle (the rulebook: "never draw
        # lines through other ... candles"): it is flattened until the arc keeps the room the
        # straight chord is drawn with
        bulge = _bow_clear_of_candles(geom, a, b, bulge, 1.2)
    # The arc through the centres, cut where it leaves and reaches the candle outlines (give or
    # take a little: people start on the outline, a bit outside or a bit over it).
    arc = geom.arc(a, b, bulge, np.linspace(0.0, 1.0, 400))
    gap_a = ca.radius + rng.uniform(-0.2, 1.1)
    gap_b = cb.radius + rng.uniform(-0.2, 1.1)
    keep = ((np.linalg.norm(arc - pa, axis=1) > gap_a)
            & (np.linalg.norm(arc - pb, axis=1) > gap_b))
    idx = np.nonzero(keep)[0]
    arc = arc[idx[0]:idx[-1] + 1] if len(idx) >= 2 else arc
    n = max(12, int(length / 0.4))
    seg = np.linalg.norm(np.diff(arc, axis=0), axis=1)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    s_new = np.linspace(0.0, cum[-1], n)
    path = np.stack([np.interp(s_new, cum, arc[:, 0]), np.interp(s_new, cum, arc[:, 1])], 1)
    end = path[-1]
    # The hand's slow wander and a faint tremor, perpendicular to the line, zero at the ends.
    taper = np.sin(np.linspace(0, math.pi, n)) ** 0.5
    wander = ink.wobble_mm * _smooth_noise(rng, n, 3) * taper
    tremor = rng.normal(0, 0.04, n)
    tremor = np.convolve(tremor, np.ones(3) / 3, mode="same")
    path = path + (wander + tremor)[:, None] * nrm
    # Occasionally an overshoot hook at the end.
    if rng.random() < 0.15:
        hook = end + u * rng.uniform(0.3, 1.0) + nrm * rng.uniform(-0.8, 0.8)
        path = np.vstack([path, hook])
    return path


def _cross_strokes(center: tuple[float, float], r: float, style: str,
                   rng: np.random.Generator) -> list[np.ndarray]:
    cx, cy = center
    out: list[np.ndarray] = []

    def seg(angle: float, half: float, off: float = 0.0) -> np.ndarray:
        u = np.array([math.cos(angle), math.sin(angle)])
        nrm = np.array([-u[1], u[0]])
        c = np.array([cx, cy]) + nrm * off + rng.normal(0, 0.25 * r / 4, 2)
        n = 14
        t = np.linspace(-half, half, n)
        bow = rng.uniform(-0.06, 0.06) * half * (1 - (t / half) ** 2)
        return c + t[:, None] * u + (bow + rng.normal(0, 0.05, n))[:, None] * nrm

    if style == "x":
        a = rng.uniform(0.6, 0.95)
        out.append(seg(a, r * rng.uniform(1.05, 1.5)))
        out.append(seg(math.pi - a + rng.normal(0, 0.12), r * rng.uniform(1.05, 1.5)))
    elif style == "slash":
        out.append(seg(rng.choice([-1, 1]) * rng.uniform(0.6, 1.1), r * rng.uniform(1.1, 1.6)))
    elif style == "double":
        a = rng.uniform(-1.1, -0.6) if rng.random() < 0.5 else rng.uniform(0.6, 1.1)
        gap = r * rng.uniform(0.22, 0.35)
        out.append(seg(a, r * rng.uniform(1.05, 1.4), gap))
        out.append(seg(a + rng.normal(0, 0.05), r * rng.uniform(1.05, 1.4), -gap))
    else:  # scribble: a zig-zag across the candle
        a = rng.uniform(0, math.pi)
        u = np.array([math.cos(a), math.sin(a)])
        nrm = np.array([-u[1], u[0]])
        k = int(rng.integers(4, 7))
        pts = [np.array(center) + u * (-r * 1.1 + 2.2 * r * i / (k - 1))
               + nrm * (r * 1.1 * (1 if i % 2 else -1)) + rng.normal(0, 0.3, 2)
               for i in range(k)]
        dense = [pts[0]]
        for p, q in itertools.pairwise(pts):
            dense += [p + (q - p) * s for s in np.linspace(0, 1, 8)[1:]]
        out.append(np.array(dense))
    return out


def _arc(cx: float, cy: float, rx: float, ry: float, a0: float, a1: float,
         n: int = 16) -> list[tuple[float, float]]:
    return [(cx + rx * math.cos(math.radians(a)), cy + ry * math.sin(math.radians(a)))
            for a in np.linspace(a0, a1, n)]


def _glyphs(value: int, variant: int) -> list[list[tuple[float, float]]]:
    """Stroke skeletons of the digits in a unit box (x 0-1, y 0-1 downwards)."""
    v = variant
    if value == 1:
        base = [[(0.27, 0.24), (0.55, 0.0), (0.55, 1.0)], [(0.5, 0.0), (0.5, 1.0)],
                [(0.3, 0.2), (0.55, 0.0), (0.55, 1.0)]][v % 3]
        strokes = [base]
        if v % 3 == 2:
            strokes.append([(0.28, 1.0), (0.82, 1.0)])
        return strokes
    if value == 2:
        if v % 2 == 0:
            return [[*_arc(0.5, 0.29, 0.34, 0.28, 195, 385), (0.12, 1.0), (0.9, 1.0)]]
        # A 2 with a small loop where the diagonal meets the base.
        return [[*_arc(0.48, 0.3, 0.34, 0.3, 200, 370), (0.55, 0.68), (0.18, 0.98),
                 (0.13, 0.9), (0.24, 0.86), (0.5, 0.96), (0.9, 0.97)]]
    if value == 3:
        if v % 2 == 0:
            return [_arc(0.48, 0.26, 0.32, 0.25, 200, 450) + _arc(0.48, 0.75, 0.36, 0.25,
                                                                   270, 505)]
        return [[(0.15, 0.02), (0.82, 0.02), (0.42, 0.42),
                 *_arc(0.46, 0.72, 0.38, 0.28, 260, 500)]]
    if value == 4:
        if v % 3 == 0:
            return [[(0.58, 0.0), (0.1, 0.66), (0.92, 0.66)], [(0.66, 0.3), (0.66, 1.0)]]
        if v % 3 == 1:
            return [[(0.22, 0.0), (0.16, 0.6), (0.88, 0.6)], [(0.7, 0.05), (0.7, 1.0)]]
        return [[(0.68, 1.0), (0.68, 0.0), (0.1, 0.68), (0.92, 0.68)]]
    if value == 5:
        bowl = _arc(0.47, 0.68, 0.36, 0.31, 215, 520)
        if v % 2 == 0:
            return [[(0.22, 0.02), (0.19, 0.44), *bowl], [(0.22, 0.02), (0.84, 0.02)]]
        return [[(0.84, 0.02), (0.24, 0.02), (0.2, 0.44), *bowl]]
    if value == 6:
        if v % 2 == 0:
            lead = [(0.74, 0.03), (0.45, 0.12), (0.22, 0.38), (0.14, 0.68)]
        else:
            lead = [(0.6, 0.0), (0.3, 0.35), (0.15, 0.66)]
        return [lead + _arc(0.48, 0.72, 0.34, 0.27, 180, -170)]
    raise ValueError(f"a top-box digit is 1-6, got {value}")


def digit_strokes(value: int, rng: np.random.Generator, hand: int = 0) -> list[np.ndarray]:
    """Strokes of a handwritten digit 1-6 in a unit box (x about 0-1, y 0-1 downwards).

    ``hand`` fixes the writer's habits (shapes, slant, proportions); ``rng`` adds the
    write-to-write variation. Useful to render digit training data too.
    """
    hrng = np.random.default_rng(10_000 + hand)
    variant = int(hrng.integers(0, 6))
    slant = hrng.uniform(-0.25, 0.3) + rng.normal(0, 0.05)
    xscale = hrng.uniform(0.7, 1.1) * (1 + rng.normal(0, 0.05))
    strokes = []
    for s in _glyphs(value, variant):
        pts = np.array(s, np.float64)
        # Resample densely so that the jitter is smooth.
        seglen = np.linalg.norm(np.diff(pts, axis=0), axis=1)
        cum = np.concatenate([[0], np.cumsum(seglen)])
        if cum[-1] > 0:
            t = np.linspace(0, cum[-1], max(8, int(cum[-1] / 0.05)))
            pts = np.stack([np.interp(t, cum, pts[:, 0]), np.interp(t, cum, pts[:, 1])], 1)
        n = len(pts)
        pts[:, 0] += 0.03 * _smooth_noise(rng, n, 2)
        pts[:, 1] += 0.03 * _smooth_noise(rng, n, 2)
        x = 0.5 + (pts[:, 0] - 0.5) * xscale + slant * (0.5 - pts[:, 1])
        strokes.append(np.stack([x, pts[:, 1]], 1))
    return strokes


def _circle_stroke(cx: float, cy: float, rx: float, ry: float,
                   rng: np.random.Generator) -> np.ndarray:
    a0 = rng.uniform(0, 2 * math.pi)
    sweep = 2 * math.pi + rng.uniform(0.15, 0.7)
    n = 60
    a = a0 + np.linspace(0, sweep, n) * rng.choice([-1, 1])
    drift = 1 + np.linspace(0, rng.uniform(-0.12, 0.12), n) + 0.04 * _smooth_noise(rng, n, 2)
    tilt = rng.normal(0, 0.2)
    x = rx * np.cos(a) * drift
    y = ry * np.sin(a) * drift
    xr = x * math.cos(tilt) - y * math.sin(tilt)
    yr = x * math.sin(tilt) + y * math.cos(tilt)
    return np.stack([cx + xr, cy + yr], 1)


def _digit_into(ink: _Ink, box: tuple[float, float, float, float], value: int, circled: bool,
                style: InkStyle, rng: np.random.Generator, width_mm: float) -> None:
    x0, y0, x1, y1 = box
    bw, bh = x1 - x0, y1 - y0
    h = bh * rng.uniform(0.5, 0.72)
    if circled:
        h *= 0.85
    w = h * 0.62
    cx = (x0 + x1) / 2 + rng.normal(0, 0.06 * bw)
    cy = (y0 + y1) / 2 + rng.normal(0, 0.05 * bh)
    hrng = np.random.default_rng(20_000 + style.hand)
    use_font = hrng.random() < 0.35
    if use_font:
        _font_digit(ink, value, (cx, cy), h, style, rng, width_mm)
    else:
        for s in digit_strokes(value, rng, style.hand):
            pts = np.stack([cx + (s[:, 0] - 0.5) * w, cy + (s[:, 1] - 0.5) * h], 1)
            ink.stroke(pts, width_mm, rng, pressure=0.15)
    if circled:
        rx = max(w, h) * rng.uniform(0.62, 0.8)
        ry = h * rng.uniform(0.62, 0.78)
        ink.stroke(_circle_stroke(cx, cy, min(rx, bw * 0.62), ry, rng), width_mm * 0.9, rng,
                   pressure=0.15)


_FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_DUPLEX,
          cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_TRIPLEX)


def _font_digit(ink: _Ink, value: int, center: tuple[float, float], h_mm: float,
                style: InkStyle, rng: np.random.Generator, width_mm: float) -> None:
    """A digit in one of OpenCV's Hershey fonts, slanted and jittered, drawn as ink."""
    hrng = np.random.default_rng(30_000 + style.hand)
    font = _FONTS[int(hrng.integers(len(_FONTS)))]
    italic = cv2.FONT_ITALIC if hrng.random() < 0.3 else 0
    ppm = ink.ppm
    size = round(h_mm * ppm * 2.2)
    patch = np.zeros((size, size), np.float32)
    (tw, th), _ = cv2.getTextSize(str(value), font | italic, 1.0, 1)
    scale = h_mm * ppm / th
    thick = max(1, round(width_mm * ppm))
    (tw, th), _ = cv2.getTextSize(str(value), font | italic, scale, thick)
    cv2.putText(patch, str(value), (round((size - tw) / 2), round((size + th) / 2)),
                font | italic, scale, 1.0, thick, cv2.LINE_AA)
    ang = rng.normal(0, 6) + hrng.normal(0, 4)
    m = cv2.getRotationMatrix2D((size / 2, size / 2), ang, 1 + rng.normal(0, 0.04))
    m[0, 1] += hrng.uniform(-0.2, 0.25)
    # Place the patch centre on the digit centre, clipped to the card.
    cx, cy = center[0] * ppm, center[1] * ppm
    m[0, 2] += cx - size / 2
    m[1, 2] += cy - size / 2
    x0, y0 = max(0, int(cx - size)), max(0, int(cy - size))
    x1 = min(ink.alpha.shape[1], int(cx + size))
    y1 = min(ink.alpha.shape[0], int(cy + size))
    m[0, 2] -= x0
    m[1, 2] -= y0
    roi = cv2.warpAffine(patch, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
    np.maximum(ink.alpha[y0:y1, x0:x1], roi, out=ink.alpha[y0:y1, x0:x1])


def _composite(img: np.ndarray, alpha: np.ndarray, color: tuple[int, int, int],
               opacity: float, rng: np.random.Generator, blur: float = 0.0) -> None:
    """Lay ink of ``color`` with coverage ``alpha`` (0-1) over ``img`` in place."""
    a = alpha
    if blur > 0:
        a = cv2.GaussianBlur(a, (0, 0), blur)
    if not a.any():
        return
    h, w = a.shape
    # Dry-erase ink is streaky: modulate its opacity with a low-frequency texture.
    tex = cv2.resize(rng.uniform(0.82, 1.0, (max(2, h // 24), max(2, w // 24)))
                     .astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    a = np.clip(a, 0, 1) * (opacity * tex)
    a3 = a[..., None]
    out = img.astype(np.float32) * (1 - a3) + np.array(color, np.float32) * a3
    img[:] = np.clip(out, 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------------- render

def random_ink_style(rng: np.random.Generator, *, ghosts: bool = False,
                     ghost_pairs: tuple[tuple[int, int], ...] = ()) -> InkStyle:
    """A random writer and pen (and erased ghosts of ``ghost_pairs`` when ``ghosts``)."""
    pen = str(rng.choice(list(PEN_COLORS)))
    return InkStyle(
        pen_color=pen,
        width_mm=float(rng.uniform(0.45, 1.3)),
        opacity=float(rng.uniform(0.75, 0.97)),
        wobble_mm=float(rng.uniform(0.05, 0.45)),
        curve=float(rng.uniform(0.0, 0.06)),
        hand=int(rng.integers(0, 1_000_000)),
        cross_style=str(rng.choice(["x", *CROSS_STYLES, "mixed"])),  # "x" twice as often
        ghost_lines=tuple(ghost_pairs) if ghosts else (),
        ghost_opacity=float(rng.uniform(0.05, 0.2)),
        ghost_color=str(rng.choice([pen, pen, *PEN_COLORS])),
        ghost_marks=bool(ghosts and rng.random() < 0.5),
        smudges=int(rng.integers(1, 5)) if ghosts else 0,
    )


def render_card(layout: Any, state: SigilState | None, style: CardStyle | None = None,
                rng: np.random.Generator | None = None, ink: InkStyle | None = None,
                ) -> CardImage:
    """Draw ``state`` on a blank card face, as a player with ``ink`` would.

    Parameters
    ----------
    layout
        The sigil layout (mapping, layout object or :class:`vision.sigil.geometry.CardGeometry`).
    state
        What to draw; ``None`` for a blank card. Its ``unknown`` is ignored.
    style
        The card's art and resolution (default: companion card at 8 px/mm).
    rng
        Randomness for the strokes (default: seed 0).
    ink
        The writer and pen (default: a random one from ``rng``).

    Returns
    -------
    CardImage
        The rectified card; ``paths`` holds the centre line of every line drawn.
    """
    style = style or CardStyle()
    rng = rng if rng is not None else np.random.default_rng(0)
    geom = card_geometry(layout)
    ink = ink or random_ink_style(rng)
    face = card_face(geom, style.art, style.design, style.px_per_mm)
    img = face.image.copy()
    ppm = style.px_per_mm
    shape = img.shape[:2]
    paths: dict[tuple[int, int], np.ndarray] = {}

    # An erased earlier game first: smudges, ghost lines (and maybe crosses and digits).
    if ink.smudges or ink.ghost_lines:
        ghost = _Ink(shape, ppm)
        for a, b in ink.ghost_lines:
            path = _line_path(geom, a, b, ink, rng)
            keep = np.ones(len(path), bool)
            for _ in range(int(rng.integers(0, 3))):   # erased in patches
                i = int(rng.integers(len(path)))
                keep[i:i + int(rng.integers(3, max(4, len(path) // 3)))] = False
            for run in np.split(np.arange(len(path)), np.nonzero(np.diff(keep.astype(int)))[0] + 1):
                if keep[run[0]] and len(run) > 1:
                    ghost.stroke(path[run], ink.width_mm * rng.uniform(1.0, 2.0), rng,
                                 value=float(rng.uniform(0.5, 1.0)))
        if ink.ghost_marks:
            for c in rng.choice(len(geom.candles), int(rng.integers(1, 4)), replace=False):
                cg = geom.candles[int(c)]
                for s in _cross_strokes(cg.center, cg.radius, "x", rng):
                    ghost.stroke(s, ink.width_mm * 1.5, rng, value=0.7)
            for k in rng.choice(len(geom.top_boxes), int(rng.integers(1, 4)), replace=False):
                _digit_into(ghost, geom.top_boxes[int(k)], int(rng.integers(1, 7)), False,
                            ink, rng, ink.width_mm * 1.5)
        for _ in range(ink.smudges):
            cx, cy = rng.uniform(0, shape[1]), rng.uniform(0, shape[0])
            ax, ay = rng.uniform(4, 16) * ppm, rng.uniform(2, 8) * ppm
            cv2.ellipse(ghost.alpha, (int(cx), int(cy)), (int(ax), int(ay)),
                        float(rng.uniform(0, 180)), 0, 360, float(rng.uniform(0.2, 0.5)), -1)
        _composite(img, ghost.alpha, PEN_COLORS.get(ink.ghost_color, PEN_COLORS["black"]),
                   ink.ghost_opacity, rng, blur=float(rng.uniform(0.8, 2.5)) * ppm / 4)

    if state is not None:
        pen = _Ink(shape, ppm)
        for a, b in state.lines:
            path = _line_path(geom, a, b, ink, rng)
            paths[(a, b)] = path
            pen.stroke(path, ink.width_mm, rng)
        for c in state.crossed:
            cg = geom.candles[c]
            cs = ink.cross_style
            if cs == "mixed":
                cs = str(rng.choice(list(CROSS_STYLES)))
            for s in _cross_strokes(cg.center, cg.radius, cs, rng):
                pen.stroke(s, ink.width_mm, rng)
        for k, box in enumerate(state.top):
            if box is not None and k < len(geom.top_boxes):
                _digit_into(pen, geom.top_boxes[k], box.value, box.circled, ink, rng,
                            ink.width_mm * rng.uniform(0.7, 1.0))
        np.minimum(pen.alpha, 1.0, out=pen.alpha)
        _composite(img, pen.alpha, PEN_COLORS[ink.pen_color], ink.opacity, rng,
                   blur=0.35 * ppm / 8)
    img[face.alpha == 0] = 0
    return CardImage(img, face.alpha.copy(), ppm, geom, style, paths)


# ------------------------------------------------------------------------------- photograph

def sample_conditions(rng: np.random.Generator, **fixed: Any) -> PhotoConditions:
    """Random camera and scene conditions over the ranges the reader must handle.

    Keyword arguments fix fields (e.g. ``hand=True``, ``tilt_deg=0``).
    """
    c = PhotoConditions(
        tilt_deg=float(50 * math.sqrt(rng.uniform(0, 1))),
        tilt_dir_deg=float(rng.uniform(0, 360)),
        rotation_deg=float(rng.uniform(-180, 180)),
        fill=float(rng.uniform(0.15, 0.8)),
        center=(float(rng.uniform(0.3, 0.7)), float(rng.uniform(0.35, 0.65))),
        focal_px=float(rng.uniform(850, 1500)),
        light=float(rng.uniform(0, 0.6)),
        warmth=float(rng.uniform(-0.6, 0.8)),
        exposure=float(rng.uniform(0.8, 1.15)),
        glare=float(rng.uniform(0.5, 1.0)) if rng.random() < 0.45 else 0.0,
        shadow=float(rng.uniform(0.2, 0.55)) if rng.random() < 0.35 else 0.0,
        hand=bool(rng.random() < 0.25),
        defocus_px=float(rng.uniform(0, 1.3)) if rng.random() < 0.6 else 0.0,
        motion_px=float(rng.uniform(1, 5)) if rng.random() < 0.2 else 0.0,
        noise=float(rng.uniform(1, 6)),
        jpeg_quality=int(rng.integers(60, 96)),
        background=str(rng.choice(BACKGROUNDS)),
    )
    return replace(c, **fixed)


def _rotation(tilt_deg: float, tilt_dir_deg: float, rotation_deg: float) -> np.ndarray:
    r, d, t = (math.radians(v) for v in (rotation_deg, tilt_dir_deg, tilt_deg))
    rz = np.array([[math.cos(r), -math.sin(r), 0], [math.sin(r), math.cos(r), 0], [0, 0, 1]])
    axis = np.array([math.cos(d), math.sin(d), 0.0])
    rt, _ = cv2.Rodrigues(axis * t)
    return rt @ rz


def _project(corners3: np.ndarray, f: float, tvec: np.ndarray) -> np.ndarray:
    p = corners3 + tvec
    return np.stack([f * p[:, 0] / p[:, 2] + FRAME_W / 2, f * p[:, 1] / p[:, 2] + FRAME_H / 2], 1)


def _pose(geom: CardGeometry, c: PhotoConditions) -> np.ndarray:
    """Frame pixels of the card corners (TL, TR, BR, BL) for the conditions."""
    w, h = geom.size_mm
    local = np.array([[-w / 2, -h / 2, 0], [w / 2, -h / 2, 0], [w / 2, h / 2, 0],
                      [-w / 2, h / 2, 0]], np.float64)
    pts3 = local @ _rotation(c.tilt_deg, c.tilt_dir_deg, c.rotation_deg).T
    f = c.focal_px
    fill = c.fill
    if not c.keep_in_view:
        # the card's centre at ``center``, its area ``fill`` of the frame's: it may run out
        z = 1000.0
        area = cv2.contourArea(_project(pts3, f, np.array([0, 0, z])).astype(np.float32))
        z *= math.sqrt(area / (fill * FRAME_W * FRAME_H))
        want = (np.array(c.center) - 0.5) * np.array([FRAME_W, FRAME_H])
        return _project(pts3, f, np.array([want[0] * z / f, want[1] * z / f, z]))
    margin = 8.0
    for _ in range(60):
        # Distance for the wanted area share (area scales as 1/z^2).
        z = 1000.0
        quad = _project(pts3, f, np.array([0, 0, z]))
        area = cv2.contourArea(quad.astype(np.float32))
        z *= math.sqrt(area / (fill * FRAME_W * FRAME_H))
        # Where the centre may go so that the whole card stays in view.
        quad0 = _project(pts3, f, np.array([0, 0, z]))
        lo = margin - quad0.min(0)
        hi = np.array([FRAME_W, FRAME_H]) - margin - quad0.max(0)
        if np.all(lo <= hi):
            want = (np.array(c.center) - 0.5) * np.array([FRAME_W, FRAME_H])
            shift = np.clip(want, lo, hi)
            tvec = np.array([shift[0] * z / f, shift[1] * z / f, z])
            quad = _project(pts3, f, tvec)
            if quad.min() >= 0 and np.all(quad.max(0) <= [FRAME_W, FRAME_H]):
                return quad
        fill *= 0.93
    raise RuntimeError("could not fit the card in the frame")  # pragma: no cover


def _background(rng: np.random.Generator, kind: str) -> np.ndarray:
    h, w = FRAME_H, FRAME_W
    if kind == "wood":
        base = np.array(rng.choice([(40, 80, 130), (60, 105, 150), (30, 55, 90), (90, 140, 180)]),
                        np.float32)
        yy = np.arange(h, dtype=np.float32)[:, None]
        xx = np.arange(w, dtype=np.float32)[None, :]
        ang = rng.uniform(-0.3, 0.3)
        v = yy * math.cos(ang) + xx * math.sin(ang)
        warp = cv2.resize(rng.normal(0, 1, (8, 14)).astype(np.float32), (w, h),
                          interpolation=cv2.INTER_CUBIC) * 25
        grain = np.sin((v + warp) / rng.uniform(3, 9)) * 0.5 + 0.5
        streak = cv2.resize(rng.normal(0, 1, (h // 4, 4)).astype(np.float32), (w, h),
                            interpolation=cv2.INTER_LINEAR)
        tone = 1 + 0.12 * (grain - 0.5) + 0.06 * streak
        img = base[None, None, :] * tone[..., None]
    elif kind == "cloth" or kind == "felt":
        base = np.array(rng.uniform(30, 200, 3), np.float32)
        if kind == "felt":
            base = np.array(rng.choice([(40, 90, 30), (90, 40, 30), (60, 30, 80), (35, 35, 35)]),
                            np.float32)
        img = np.repeat(np.repeat(base[None, None, :], h, 0), w, 1)
        if kind == "cloth" and rng.random() < 0.5:
            period = int(rng.integers(20, 80))
            yy, xx = np.mgrid[0:h, 0:w]
            check = (((yy // period) + (xx // period)) % 2).astype(np.float32)
            img *= (0.85 + 0.3 * check)[..., None]
        img += rng.normal(0, 6, (h, w, 1)).astype(np.float32)
    elif kind == "paper":
        img = np.full((h, w, 3), rng.uniform(170, 235), np.float32)
        img += rng.normal(0, 2, (h, w, 1)).astype(np.float32)
    elif kind == "dark":
        img = np.full((h, w, 3), rng.uniform(10, 45), np.float32)
        img += rng.normal(0, 3, (h, w, 1)).astype(np.float32)
    else:  # clutter: a table with objects
        img = _background(rng, str(rng.choice(["wood", "cloth", "felt"]))).astype(np.float32)
        for _ in range(int(rng.integers(3, 9))):
            color = tuple(float(v) for v in rng.uniform(0, 255, 3))
            cx, cy = int(rng.integers(0, w)), int(rng.integers(0, h))
            shape = rng.integers(0, 3)
            if shape == 0:   # a die
                s = int(rng.integers(20, 60))
                box = cv2.boxPoints(((cx, cy), (s, s), float(rng.uniform(0, 90))))
                cv2.fillPoly(img, [box.astype(np.int32)], color, cv2.LINE_AA)
            elif shape == 1:  # a paper sheet or card
                box = cv2.boxPoints(((cx, cy), (float(rng.integers(80, 300)),
                                                float(rng.integers(80, 300))),
                                     float(rng.uniform(0, 90))))
                cv2.fillPoly(img, [box.astype(np.int32)], (230, 230, 225), cv2.LINE_AA)
            else:  # a pen
                ang = rng.uniform(0, math.pi)
                length = rng.integers(100, 250)
                p2 = (int(cx + length * math.cos(ang)), int(cy + length * math.sin(ang)))
                cv2.line(img, (cx, cy), p2, color, int(rng.integers(8, 16)), cv2.LINE_AA)
        return np.clip(img, 0, 255)
    return np.clip(img, 0, 255)


def _hand_mask(rng: np.random.Generator, quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A hand and forearm reaching from a frame edge onto the card: (hand mask, sleeve mask),
    float 0-1, frame size; the sleeve (empty for a bare arm) covers part of the forearm."""
    mask = np.zeros((FRAME_H, FRAME_W), np.float32)
    # Fingertips somewhere over the card, near its middle or an edge.
    weights = rng.dirichlet(np.ones(4) * 0.7)
    tip = weights @ quad
    center = quad.mean(0)
    tip = center + (tip - center) * rng.uniform(0.5, 1.1)
    edge = int(rng.integers(4))
    entry = [np.array([rng.uniform(0, FRAME_W), FRAME_H + 60]),
             np.array([rng.uniform(0, FRAME_W), -60]),
             np.array([-60, rng.uniform(0, FRAME_H)]),
             np.array([FRAME_W + 60, rng.uniform(0, FRAME_H)])][edge]
    d = tip - entry
    d /= np.linalg.norm(d) + 1e-9
    nrm = np.array([-d[1], d[0]])
    scale = math.sqrt(cv2.contourArea(quad.astype(np.float32))) / 4.2
    palm = tip - d * scale * 1.6
    cv2.line(mask, tuple(entry.astype(int)), tuple(palm.astype(int)), 1.0,
             max(2, int(scale * 1.3)), cv2.LINE_AA)
    cv2.ellipse(mask, tuple(palm.astype(int)), (int(scale * 0.9), int(scale * 0.75)),
                math.degrees(math.atan2(d[1], d[0])), 0, 360, 1.0, -1, cv2.LINE_AA)
    n_fingers = int(rng.integers(1, 5))
    for i in range(n_fingers):
        off = (i - (n_fingers - 1) / 2) * scale * 0.38
        base = palm + nrm * off + d * scale * 0.5
        length = scale * rng.uniform(0.8, 1.3) * (1 - 0.15 * abs(i - (n_fingers - 1) / 2))
        bend = rng.normal(0, 0.15)
        dd = d * math.cos(bend) + nrm * math.sin(bend)
        end = base + dd * length
        cv2.line(mask, tuple(base.astype(int)), tuple(end.astype(int)), 1.0,
                 max(2, int(scale * 0.3)), cv2.LINE_AA)
    if rng.random() < 0.6:   # a thumb
        side = rng.choice([-1, 1])
        base = palm + nrm * side * scale * 0.6
        end = base + (d * 0.6 + nrm * side * 0.8) * scale
        cv2.line(mask, tuple(base.astype(int)), tuple(end.astype(int)), 1.0,
                 max(2, int(scale * 0.33)), cv2.LINE_AA)
    sleeve = np.zeros_like(mask)
    if rng.random() < 0.6:
        cuff = palm - d * scale * rng.uniform(1.6, 3.0)
        cv2.line(sleeve, tuple(entry.astype(int)), tuple(cuff.astype(int)), 1.0,
                 max(2, int(scale * 1.6)), cv2.LINE_AA)
        sleeve = cv2.GaussianBlur(sleeve, (0, 0), 1.2)
    return cv2.GaussianBlur(mask, (0, 0), 1.2), sleeve


def _light_field(rng: np.random.Generator, strength: float) -> np.ndarray:
    low = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    field_ = cv2.resize(low, (FRAME_W, FRAME_H), interpolation=cv2.INTER_CUBIC)
    yy, xx = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    grad = ((xx / FRAME_W - 0.5) * math.cos(ang) + (yy / FRAME_H - 0.5) * math.sin(ang))
    return 1.0 + strength * (0.25 * field_ + 0.6 * grad)


def _lay(frame: np.ndarray, image: np.ndarray, alpha: np.ndarray, to_px: np.ndarray,
         ratio: float, shadow_sigma: float, shadow_shift: tuple[int, int],
         ) -> tuple[np.ndarray, np.ndarray]:
    """Lay a card's ``image`` (``alpha``: its 0-255 mask) on ``frame`` (float) through the
    homography ``to_px``, pre-filtered against aliasing when ``ratio`` (card px per frame px)
    is over 1.2, over its thin shadow on what lies below (blurred by ``shadow_sigma``, shifted
    by ``shadow_shift`` rows and columns). Returns the frame and the card's mask in the frame
    (0-1)."""
    if ratio > 1.2:
        image = cv2.GaussianBlur(image, (0, 0), 0.42 * ratio)
    warped = cv2.warpPerspective(image, to_px, (FRAME_W, FRAME_H), flags=cv2.INTER_LINEAR)
    walpha = cv2.warpPerspective(alpha.astype(np.float32) / 255.0, to_px, (FRAME_W, FRAME_H),
                                 flags=cv2.INTER_LINEAR)
    drop = np.roll(cv2.GaussianBlur(walpha, (0, 0), shadow_sigma), shadow_shift, (0, 1))
    frame *= (1 - 0.45 * drop * (1 - walpha))[..., None]
    a3 = walpha[..., None]
    return frame * (1 - a3) + warped.astype(np.float32) * a3, walpha


def photograph(card: CardImage, rng: np.random.Generator,
               conditions: PhotoConditions | None = None) -> tuple[np.ndarray, PhotoInfo]:
    """Photograph a rectified card on a table.

    Parameters
    ----------
    card
        The card from :func:`render_card`.
    rng
        Randomness for the scene (background, light field, glare position, hand shape, noise).
    conditions
        The camera and scene; default: :func:`sample_conditions` from ``rng``.

    Returns
    -------
    frame, info
        The 1280x720 BGR frame (not yet JPEG-compressed: save it with
        ``conditions.jpeg_quality``) and :class:`PhotoInfo`.
    """
    c = conditions if conditions is not None else sample_conditions(rng)
    geom = card.geometry
    ppm = card.px_per_mm
    quad = _pose(geom, c)
    w, h = geom.size_mm
    src_mm = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    hom = cv2.getPerspectiveTransform(src_mm, quad.astype(np.float32))
    to_px = hom @ np.diag([1 / ppm, 1 / ppm, 1.0])

    frame = _background(rng, c.background)
    # Pre-filter the card against aliasing when it is reduced.
    frame_ppm = math.sqrt(cv2.contourArea(quad.astype(np.float32)) / (w * h))
    ratio = ppm / max(frame_ppm, 1e-6)
    # The card, with its own thin shadow on the table.
    frame, walpha = _lay(frame, card.image, card.alpha, to_px, ratio,
                         3.0 + 0.01 * frame_ppm * 20,
                         (int(rng.integers(1, 5)), int(rng.integers(-3, 4))))

    # Another card lying over this one (no random draws: the seed's other draws stay as they are).
    over = np.zeros((FRAME_H, FRAME_W), np.float32)
    if any(c.second_card):
        face = card_face(geom, "printed", (card.style.design + 1) % 4, ppm)
        shift = c.second_card[0] * (quad[1] - quad[0]) + c.second_card[1] * (quad[3] - quad[0])
        hom2 = cv2.getPerspectiveTransform(src_mm, (quad + shift).astype(np.float32))
        to_px2 = hom2 @ np.diag([1 / ppm, 1 / ppm, 1.0])
        frame, over = _lay(frame, np.asarray(face.image), np.asarray(face.alpha), to_px2, ratio,
                           3.0 + 0.2 * frame_ppm, (3, 1))
        walpha = np.maximum(walpha, over)

    # Glare: a soft elongated specular blob on the laminate (screen blend).
    glare_map = np.zeros((FRAME_H, FRAME_W), np.float32)
    if c.glare > 0:
        wts = rng.dirichlet(np.ones(4))
        gc = wts @ quad
        size = frame_ppm * rng.uniform(5, 18)
        glare_map = np.zeros((FRAME_H, FRAME_W), np.float32)
        cv2.ellipse(glare_map, (int(gc[0]), int(gc[1])),
                    (int(size * rng.uniform(1, 2.5)), int(size * rng.uniform(0.4, 1))),
                    float(rng.uniform(0, 180)), 0, 360, 1.0, -1, cv2.LINE_AA)
        glare_map = cv2.GaussianBlur(glare_map, (0, 0), size * 0.5)
        glare_map = glare_map / max(float(glare_map.max()), 1e-6) * c.glare * walpha
        frame = 255 - (255 - frame) * (1 - glare_map[..., None])

    # The laminate always reflects a little of the room: a broad, faint sheen.
    sheen = cv2.resize(rng.uniform(0, 1, (2, 3)).astype(np.float32), (FRAME_W, FRAME_H),
                       interpolation=cv2.INTER_CUBIC)
    sheen = np.clip(sheen, 0, 1) * float(rng.uniform(0.0, 0.12)) * walpha
    frame = 255 - (255 - frame) * (1 - sheen[..., None])

    hand = np.zeros((FRAME_H, FRAME_W), np.float32)
    if c.hand:
        hand, sleeve = _hand_mask(rng, quad)
        skin = np.array(rng.choice([(150, 180, 225), (120, 150, 200), (80, 110, 160),
                                    (50, 75, 115), (170, 195, 235)]), np.float32)
        # Rounded look: darker towards the silhouette's edges, a soft highlight, skin texture.
        solid = (hand > 0.5).astype(np.uint8)
        depth = cv2.distanceTransform(solid, cv2.DIST_L2, 5)
        scale = max(4.0, float(np.percentile(depth[solid > 0], 90)) if solid.any() else 4.0)
        roundness = np.clip(depth / scale, 0, 1) ** 0.6
        shade = (0.62 + 0.38 * roundness) * _light_field(rng, 0.5)
        shade += 0.04 * cv2.resize(rng.normal(0, 1, (FRAME_H // 8, FRAME_W // 8))
                                   .astype(np.float32), (FRAME_W, FRAME_H))
        hand_img = skin[None, None, :] * shade[..., None]
        cloth = np.array(rng.uniform(20, 200, 3), np.float32)
        hand_img = hand_img * (1 - sleeve[..., None]) + cloth * shade[..., None] * \
            sleeve[..., None]
        hand = np.maximum(hand, sleeve)
        # The hand's shadow falls beside it.
        hs = cv2.GaussianBlur(hand, (0, 0), 12)
        hs = np.roll(hs, (int(rng.integers(8, 30)), int(rng.integers(-30, 30))), (0, 1))
        frame *= (1 - 0.35 * hs)[..., None]
        frame = frame * (1 - hand[..., None]) + hand_img * hand[..., None]

    if c.shadow > 0:
        pts = (rng.uniform(0, 1, (5, 2)) * [FRAME_W, FRAME_H]).astype(np.int32)
        sh = np.zeros((FRAME_H, FRAME_W), np.float32)
        cv2.fillPoly(sh, [cv2.convexHull(pts)], 1.0)
        sh = cv2.GaussianBlur(sh, (0, 0), float(rng.uniform(15, 50)))
        frame *= (1 - c.shadow * sh)[..., None]

    yy, xx = np.ogrid[0:FRAME_H, 0:FRAME_W]
    r2 = ((xx - FRAME_W / 2) / (FRAME_W / 2)) ** 2 + ((yy - FRAME_H / 2) / (FRAME_W / 2)) ** 2
    vignette = (1 - float(rng.uniform(0.0, 0.25)) * r2).astype(np.float32)
    light = _light_field(rng, c.light) * c.exposure * vignette
    cast = np.array([1 - 0.12 * c.warmth, 1.0, 1 + 0.12 * c.warmth], np.float32)
    frame = frame * light[..., None] * cast[None, None, :]

    if c.defocus_px > 0.2:
        frame = cv2.GaussianBlur(frame, (0, 0), c.defocus_px)
    if c.motion_px >= 1:
        n = round(c.motion_px) * 2 + 1
        k = np.zeros((n, n), np.float32)
        ang = rng.uniform(0, math.pi)
        cx = n // 2
        cv2.line(k, (int(cx - c.motion_px * math.cos(ang)), int(cx - c.motion_px * math.sin(ang))),
                 (int(cx + c.motion_px * math.cos(ang)), int(cx + c.motion_px * math.sin(ang))),
                 1.0, 1, cv2.LINE_AA)
        frame = cv2.filter2D(frame, -1, k / k.sum())
    if c.noise > 0:
        shot = np.sqrt(np.clip(frame, 0, 255) / 255.0)
        frame = frame + rng.normal(0, 1, frame.shape).astype(np.float32) * c.noise * \
            (0.5 + shot)
    out = np.clip(frame, 0, 255).astype(np.uint8)

    # What is hidden, in rectified-card pixels: the hand, glare strong enough to wash ink out,
    # and whatever lies outside the frame (a card wholly in view keeps 8 px from its edges).
    hidden_frame = np.maximum((np.maximum(hand, over) > 0.3).astype(np.float32),
                              (glare_map > 0.8).astype(np.float32))
    ch, cw = card.image.shape[:2]
    hidden = cv2.warpPerspective(hidden_frame, np.linalg.inv(to_px), (cw, ch),
                                 flags=cv2.INTER_NEAREST, borderMode=cv2.BORDER_CONSTANT,
                                 borderValue=1.0)
    info = PhotoInfo(card_corners_px=quad, homography=hom,
                     hidden=(hidden > 0.5).astype(np.uint8) * 255, conditions=c)
    return out, info


# ------------------------------------------------------------------------------ hidden elements

def hidden_elements(card: CardImage, hidden: np.ndarray, *, line_share: float = 0.2,
                    candle_share: float = 0.25, top_share: float = 0.1) -> list[str]:
    """Elements (DESIGN.md notation) that ``hidden`` (a mask over the rectified card) covers.

    A candle pair's band (the drawn path, else :meth:`CardGeometry.pair_path` between the
    outlines, with a 1.5 mm margin) is hidden when more than ``line_share`` of its length is
    covered; a candle when more than ``candle_share`` of its disc (1.5 radii, where crosses go)
    is; a top box when more than ``top_share`` of it (1 mm margin) is. Lines count whether drawn
    or not: a reader cannot tell "no line" under a hand.
    """
    geom = card.geometry
    ppm = card.px_per_mm
    if not hidden.any():
        return []
    cover = cv2.dilate((hidden > 0).astype(np.uint8),
                       cv2.getStructuringElement(cv2.MORPH_ELLIPSE,
                                                 (2 * round(1.5 * ppm) + 1,) * 2))
    hh, ww = cover.shape
    out: list[str] = []

    def share(pts_mm: np.ndarray) -> float:
        p = np.round(pts_mm * ppm).astype(int)
        p[:, 0] = np.clip(p[:, 0], 0, ww - 1)
        p[:, 1] = np.clip(p[:, 1], 0, hh - 1)
        return float(cover[p[:, 1], p[:, 0]].mean())

    for a, b in geom.pairs:
        path = card.paths.get((a, b))
        if path is None:
            path = geom.pair_path(a, b, 60)
            ra, rb = geom.candles[a].radius, geom.candles[b].radius
            keep = ((np.linalg.norm(path - geom.candles[a].center, axis=1) > ra)
                    & (np.linalg.norm(path - geom.candles[b].center, axis=1) > rb))
            path = path[keep] if keep.any() else path
        if share(path) > line_share:
            out.append(f"line {a}-{b}")
    raw = (hidden > 0).astype(np.uint8)
    for i, cg in enumerate(geom.candles):
        m = np.zeros_like(raw)
        cv2.circle(m, (round(cg.center[0] * ppm), round(cg.center[1] * ppm)),
                   round(1.5 * cg.radius * ppm), 1, -1)
        if (raw & m).sum() > candle_share * max(1, m.sum()):
            out.append(f"candle {i}")
    for k, (x0, y0, x1, y1) in enumerate(geom.top_boxes):
        sl = raw[max(0, round((y0 - 1) * ppm)):round((y1 + 1) * ppm),
                 max(0, round((x0 - 1) * ppm)):round((x1 + 1) * ppm)]
        if sl.size and sl.mean() > top_share:
            out.append(f"top {k}")
    return out


def render_photo(layout: Any, state: SigilState, rng: np.random.Generator, *,
                 style: CardStyle | None = None, ink: InkStyle | None = None,
                 conditions: PhotoConditions | None = None,
                 ) -> tuple[np.ndarray, SigilState, PhotoInfo, CardImage]:
    """The whole chain: draw ``state``, photograph it, and return the frame, the labelled state
    (``state`` with ``unknown`` set to what is hidden), the photo info and the card image."""
    card = render_card(layout, state, style, rng, ink)
    frame, info = photograph(card, rng, conditions)
    unknown = hidden_elements(card, info.hidden)
    label = SigilState.from_json({**state.to_json(), "unknown": unknown})
    return frame, label, info, card


@dataclass(frozen=True)
class RandomPhoto:
    """One random labelled photo of :func:`random_photo` (``frame`` BGR, before any JPEG)."""

    frame: np.ndarray
    label: SigilState
    info: PhotoInfo
    card: CardImage
    ink: InkStyle
    ghosts: list[tuple[int, int]]


def random_photo(geom: CardGeometry, state: SigilState, rng: np.random.Generator, *,
                 px_per_mm: float = 8.0, marker_share: float = 0.5, ghost_share: float = 0.3,
                 hand_share: float | None = None, ink_fixed: dict[str, Any] | None = None,
                 **fixed: Any) -> RandomPhoto:
    """``state`` drawn and photographed as ``render sigil`` does: with ``ghost_share``
    probability 1-6 ghost lines of an earlier game (pairs not in the state), a random pen,
    a companion card (markers) with ``marker_share`` probability else a printed one, one of four
    designs, random conditions (``fixed`` fixes fields, as :func:`sample_conditions`; a hand
    with ``hand_share`` probability when given, else as the conditions draw it).
    ``ink_fixed`` fixes fields of the pen (:class:`InkStyle`) after it is drawn: the same
    draws are made, so that everything else in the photo is as without it."""
    ghosts: list[tuple[int, int]] = []
    if rng.random() < ghost_share:
        free = [p for p in geom.pairs if p not in state.lines and p not in geom.must_curve]
        n = int(rng.integers(1, 7))
        ghosts = [(int(free[j][0]), int(free[j][1]))
                  for j in rng.choice(len(free), min(n, len(free)), replace=False)]
    ink = random_ink_style(rng, ghosts=bool(ghosts), ghost_pairs=tuple(ghosts))
    if ink_fixed:
        ink = replace(ink, **ink_fixed)
    markers = rng.random() < marker_share
    style = CardStyle("companion" if markers else "printed", int(rng.integers(4)), px_per_mm)
    if hand_share is not None:
        fixed["hand"] = bool(rng.random() < hand_share)
    conditions = sample_conditions(rng, **fixed)
    frame, label, info, card = render_photo(geom, state, rng, style=style, ink=ink,
                                            conditions=conditions)
    return RandomPhoto(frame, label, info, card, ink, ghosts)


#: The fields ``fixed_fields`` may fix, and the values a str field may take.
_CHOICES: dict[str, tuple[str, ...]] = {
    "pen_color": tuple(PEN_COLORS), "ghost_color": tuple(PEN_COLORS),
    "cross_style": (*CROSS_STYLES, "mixed"), "background": BACKGROUNDS}
#: Every field of the scene conditions; of the pen, all but its hand's seed and the ghost
#: lines (which are the photo's state, drawn with it).
_FIXABLE = {kind: tuple(f.name for f in fields(kind) if f.name not in left_out)
            for kind, left_out in ((PhotoConditions, ()), (InkStyle, ("hand", "ghost_lines")))}


def fixed_fields(kind: type, items: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """``FIELD=VALUE`` texts to the fields of ``kind`` (:class:`PhotoConditions` or
    :class:`InkStyle`) they fix, each VALUE read as its field's type (``center=0.4,0.6``;
    booleans ``true``/``false``; a pen colour, cross style or background by name): the
    project's one ``FIELD=VALUE`` parser, :func:`vision.options.parse_fields`.

    Raises ``ValueError`` with one line naming the item that is not ``FIELD=VALUE``, names no
    field that can be fixed, or holds a value that field cannot take.

    >>> fixed_fields(PhotoConditions, ["tilt_deg=12.5", "hand=false"])
    {'tilt_deg': 12.5, 'hand': False}
    """
    return parse_fields(kind, items, names=_FIXABLE[kind], choices=_CHOICES)
