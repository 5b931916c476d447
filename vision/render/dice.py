"""Synthetic dice scenes: d6 cubes in perspective on tables, with labels.

Two entry points:

- :func:`render_scene` draws a whole labelled scene (background, dice, shadows, hands, lighting,
  blur, noise, JPEG) and returns ``(image, labels)``; ``doomcompanion render dice`` and the
  training script of ``models/dice`` use it.
- :func:`draw_dice` draws dice described by :class:`DieSpec` onto an existing BGR frame (in
  place) and returns their labels; the bundled demo video uses it to put dice on its table.

Each label is a dict ``{"value": 1-6 or None, "color": name, "bbox": [x0, y0, x1, y1],
"die_bbox": [...], "state": "flat" | "cocked" | "unreadable", "visible": fraction}`` where
``bbox`` is the box of the top face (``bbox_kind`` ``"top_face"``) and ``die_bbox`` the box of
the whole visible die (side faces included). A die drawn whole also has ``"quad"``: the top
face's four corners ``[[x, y], ...]`` in order round the face (of a cocked die, its upper-most
face), from which the face net's training target is computed
(:func:`vision.dice.lean.face_shape`).

Convention: images are BGR ``uint8`` arrays ``(H, W, 3)``; points are ``(x, y)`` in pixels,
origin top-left; boxes are ``[x0, y0, x1, y1]``. The camera looks down at the table with a tilt
from vertical of ``tilt_deg``; image "up" is away from the camera.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import cv2
import numpy as np

from vision.imageio import jpeg_round_trip

__all__ = ["CLOSEUP_TILT", "COCKED_RATE", "COLORS", "CUT_INSIDE", "DESK_KINDS", "DISTRACTOR_KINDS",
           "HAND_POSES", "READ_INSIDE", "DieSpec", "board_places", "clear_spec", "draw_board",
           "draw_dice", "draw_distractors", "draw_sheet", "random_background", "random_specs",
           "render_closeup", "render_scene", "sharp_spec", "stone_background", "vivid_spec"]

# a close-up's die with less than READ_INSIDE of its top face inside the frame is unreadable,
# and with less than CUT_INSIDE there is too little of it to learn from (render_closeup)
READ_INSIDE, CUT_INSIDE = 0.75, 0.4
# render_closeup's default range of the camera tilt from vertical, degrees
CLOSEUP_TILT = (0.0, 35.0)
# the table scenes' default share of dice drawn leaning (render_scene's cocked_rate)
COCKED_RATE = 0.06

# name -> (body BGR range centre, pip colours that contrast with it)
COLORS: dict[str, tuple[tuple[int, int, int], tuple[tuple[int, int, int], ...]]] = {
    "white": ((235, 240, 242), ((20, 20, 20), (30, 30, 160), (150, 60, 20), (20, 20, 20))),
    "ivory": ((200, 230, 238), ((25, 25, 25),)),
    "black": ((28, 28, 30), ((240, 240, 240), (60, 180, 220), (240, 240, 240))),
    "yellow": ((30, 205, 240), ((20, 20, 20), (30, 30, 170), (240, 240, 240))),
    "red": ((35, 35, 185), ((240, 240, 240), (20, 20, 20), (60, 200, 230))),
    "green": ((60, 150, 40), ((240, 240, 240), (20, 20, 20))),
    "blue": ((170, 80, 20), ((240, 240, 240), (20, 20, 20))),
    "orange": ((30, 120, 235), ((240, 240, 240), (20, 20, 20))),
    "purple": ((130, 40, 110), ((240, 240, 240),)),
    "grey": ((130, 130, 130), ((240, 240, 240), (20, 20, 20))),
}
# The name a reader should report for each rendered body colour.
REPORTED = {"ivory": "white", "orange": "orange", "purple": "purple", "grey": "grey"}

PIPS: dict[int, tuple[tuple[float, float], ...]] = {
    1: ((0.5, 0.5),),
    2: ((0.27, 0.27), (0.73, 0.73)),
    3: ((0.27, 0.27), (0.5, 0.5), (0.73, 0.73)),
    4: ((0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)),
    5: ((0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)),
    6: ((0.27, 0.25), (0.27, 0.5), (0.27, 0.75), (0.73, 0.25), (0.73, 0.5), (0.73, 0.75)),
}
_TEX = 96  # face texture side in pixels


@dataclass(frozen=True)
class DieSpec:
    """One die to draw.

    Convention: ``center`` is the die's footprint centre on the table in image pixels
    ``(x, y)``; ``size`` the edge length in pixels at that point; ``yaw_deg`` the turn about
    the vertical axis; ``cock_deg`` a lean (0 = flat; a cocked die has no readable top face).
    ``see_through`` in (0, 1) draws a clear die in 3-D: the far faces (bottom and hidden sides)
    are drawn first with their pips and the near faces over them at opacity
    ``1 - see_through``, so the bottom's pips and the hidden sides' pips (thin bars along the
    edges) show through the top face; 0 keeps the flat show-through of ``translucent``.
    ``through_pip`` sets how far the far faces' pips are from the body's colour towards the
    pips' (1 = as bright as the near pips; ``None`` draws 0.35-0.75). ``ring_letters`` prints
    the ring around a casino die's big 1 as letters (a casino's name) instead of marks.
    ``pip_spread`` moves the pips away from the face's centre by that factor (casino dice
    carry their pips near the corners); ``one_scale`` is the radius of a ``big_one`` 1 in
    pip radii. ``bold_print`` draws a casino die's printing large and bold
    (:func:`_bold_print`): a ring of letters tight around the 1's pip, sometimes on a dark
    band, and a big emblem between the 2's pips; it takes the place of ``logo``'s small
    printing on those faces, with or without ``logo``. ``flush_pips`` keeps the paint (pips and
    printing) as bright on every face as on a face turned to the light: only the body takes
    the face's shading, as with a casino die's flush white pips, whose side faces' pips look
    as bright as the top's. ``stamped`` prints a precision casino die's stamping in the pips'
    paint (:func:`_stamp`): a serial number between the 6's two columns of pips, and the
    casino's name as a fine ring of small letters tight around the 1's pip (which then has
    no body-coloured circle inside it); it takes the place of other printing on the 1.
    """

    value: int
    color: str
    center: tuple[float, float]
    size: float
    yaw_deg: float = 0.0
    cock_deg: float = 0.0
    body: tuple[int, int, int] | None = None
    pip: tuple[int, int, int] | None = None
    translucent: bool = False
    glossy: bool = True
    pip_radius: float = 0.095
    big_one: bool = False
    face_turn: int = 0
    rounding: float = 0.12
    logo: bool = False
    see_through: float = 0.0
    blank: bool = False
    through_pip: float | None = None
    ring_letters: bool = False
    pip_spread: float = 1.0
    one_scale: float = 2.0
    bold_print: bool = False
    flush_pips: bool = False
    stamped: bool = False


def _rot_z(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def _rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _inked(tex: np.ndarray, paint: np.ndarray | None,
           colour: tuple[float, ...]) -> list[tuple[np.ndarray, tuple[float, ...] | float]]:
    """Where a painted mark goes: the face texture in its colour, and the paint mask (if any)
    as 1."""
    return [(tex, colour)] + ([(paint, 1.0)] if paint is not None else [])


def _face_texture(value: int, body: np.ndarray, pip: np.ndarray, spec: DieSpec,
                  rng: np.random.Generator, show_through: int | None,
                  paint: np.ndarray | None = None) -> np.ndarray:
    """A face of the die as a float image ``(T, T, 3)`` in [0, 255]; ``paint`` ``(T, T)``, if
    given, receives 1 where pips and marks are painted (turned like the face)."""
    t = _TEX
    tex = np.empty((t, t, 3), np.float32)
    tex[:] = body
    # bevel: faces darken or lighten towards their rounded edges
    yy, xx = np.mgrid[0:t, 0:t].astype(np.float32) / (t - 1)
    edge = np.minimum(np.minimum(xx, 1 - xx), np.minimum(yy, 1 - yy))
    bevel = np.clip(edge / max(spec.rounding, 1e-3), 0, 1) ** 0.6
    tex *= (0.72 + 0.28 * bevel)[..., None]
    if spec.blank:  # a plain cube: a game piece, not a die
        return tex
    if show_through is not None:  # translucent die: pips of the far face shine through
        for (u, v) in PIPS[show_through]:
            cv2.circle(tex, (int((1 - u) * t), int(v * t)), int(spec.pip_radius * t),
                       tuple(float(0.6 * b + 0.4 * p) for b, p in zip(body, pip, strict=True)),
                       -1, cv2.LINE_AA)
    r = spec.pip_radius * t
    points = [(0.5 + (u - 0.5) * spec.pip_spread, 0.5 + (v - 0.5) * spec.pip_spread)
              for u, v in PIPS[value]]
    if value == 1 and spec.big_one:
        r *= spec.one_scale
    for (u, v) in points:
        cx, cy = u * t, v * t
        jitter = rng.normal(0, 0.004 * t, 2)
        center = (round((cx + jitter[0]) * 16), round((cy + jitter[1]) * 16))
        for target, colour in _inked(tex, paint, tuple(float(c) for c in pip)):
            cv2.circle(target, center, int(r * 16), colour, -1, cv2.LINE_AA, 4)
        if spec.glossy and rng.random() < 0.5:  # small highlight or engraved rim
            cv2.circle(tex, center, int(r * 16), tuple(float(c) * 0.7 for c in pip), 1,
                       cv2.LINE_AA, 4)
    if spec.big_one and value == 1 and not spec.stamped:
        cv2.circle(tex, (t // 2, t // 2), int(r * 0.55), tuple(float(c) for c in body), 1,
                   cv2.LINE_AA)
    if spec.stamped and value in (1, 6):
        _stamp(tex, paint, value, r, pip, rng)
    elif spec.bold_print and value in (1, 2):
        _bold_print(tex, paint, value, r, body, pip, rng)
    elif spec.logo and value == 1 and spec.big_one and rng.random() < 0.5:
        # casino dice: a ring of small printed marks around the big pip
        ink = tuple(float(c) for c in (pip if rng.random() < 0.7 else body * 0.4))
        n, rad = int(rng.integers(10, 18)), rng.uniform(0.27, 0.34) * t
        start = rng.uniform(0, 2 * math.pi)
        for k in range(n):
            a = start + 2 * math.pi * k / n
            mark = (int(t / 2 + rad * math.cos(a)), int(t / 2 + rad * math.sin(a)))
            if spec.ring_letters:
                letter = str(rng.choice(list("ABCDEGHILMNORSTUVW")))
                org = (mark[0] - int(0.035 * t), mark[1] + int(0.035 * t))
                for target, colour in _inked(tex, paint, ink):
                    cv2.putText(target, letter, org, cv2.FONT_HERSHEY_SIMPLEX,
                                0.0032 * t, colour, max(1, t // 64), cv2.LINE_AA)
                continue
            mr = max(1, int(rng.uniform(0.025, 0.045) * t))
            for target, colour in _inked(tex, paint, ink):
                cv2.circle(target, mark, mr, colour, -1, cv2.LINE_AA)
    elif spec.logo and value in (1, 2):  # a maker's name printed around the pips
        ink = tuple(float(c) for c in (pip if rng.random() < 0.6 else (40, 40, 170)))
        start = rng.uniform(0, 2 * math.pi)
        for k in range(int(rng.integers(4, 9))):
            a = start + k * 0.45
            rad = 0.3 if value == 1 else 0.2
            cx, cy = 0.5 + rad * math.cos(a), 0.5 + rad * math.sin(a)
            if value == 2:
                cx, cy = 0.5 + (cy - 0.5), 0.5 - (cx - 0.5) * 0.3
            cv2.putText(tex, str(rng.choice(list("BICYLEASNOR"))),
                        (int(cx * t) - 3, int(cy * t) + 3),
                        cv2.FONT_HERSHEY_SIMPLEX, 0.3, ink, 1, cv2.LINE_AA)
    if paint is not None:
        paint[:] = np.rot90(paint, spec.face_turn % 4)
    return np.rot90(tex, spec.face_turn % 4).copy()


def _ink_layer(tex: np.ndarray, paint: np.ndarray | None, layer: np.ndarray,
               ink: Sequence[float] | np.ndarray) -> None:
    """Paint ``ink`` onto the face texture ``tex`` where ``layer`` (``(T, T)`` in [0, 1], 1 =
    fully inked) says, and mark it in ``paint`` (if given)."""
    tex[:] = tex * (1 - layer[..., None]) + np.asarray(ink, np.float32) * layer[..., None]
    if paint is not None:
        np.maximum(paint, layer, out=paint)


def _bold_print(tex: np.ndarray, paint: np.ndarray | None, value: int, pip_r: float,
                body: np.ndarray, pip: np.ndarray, rng: np.random.Generator) -> None:
    """A casino die's printing, large and bold, on its face texture ``tex`` (and ``paint``):
    on the 1 a ring of 9-16 letters 0.06-0.1 faces tall just outside the pip (``pip_r``
    pixels), on a band darker than the body half the time; on the 2 one emblem (a letter or
    sign 0.22-0.38 faces tall, solid or outlined) at the centre, between the two pips."""
    t = tex.shape[0]
    ink = tuple(float(c) for c in pip)
    targets = _inked(tex, paint, ink)
    centre = (t // 2, t // 2)
    if value == 1:
        height = float(rng.uniform(0.06, 0.1)) * t
        rad = min(pip_r + float(rng.uniform(0.03, 0.08)) * t + height / 2, 0.36 * t)
        if rng.random() < 0.5:  # the letters printed on a dark ring
            band = tuple(float(c) * float(rng.uniform(0.2, 0.5)) for c in body)
            for target, colour in _inked(tex, paint, band):
                cv2.circle(target, centre, int(rad), colour, max(1, int(height * 1.5)),
                           cv2.LINE_AA)
        font = cv2.FONT_HERSHEY_SIMPLEX
        scale = height / 22.0  # Hershey simplex capitals are ~22 units tall at scale 1
        thick = max(1, round(height / 5))
        n = int(rng.integers(9, 17))
        start = rng.uniform(0, 2 * math.pi)
        for k in range(n):
            a = start + 2 * math.pi * k / n
            letter = str(rng.choice(list("ABCDEGHIKLMNOPRSTUVWY")))
            (w, h), _ = cv2.getTextSize(letter, font, scale, thick)
            org = (int(t / 2 + rad * math.cos(a) - w / 2), int(t / 2 + rad * math.sin(a) + h / 2))
            for target, colour in targets:
                cv2.putText(target, letter, org, font, scale, colour, thick, cv2.LINE_AA)
        return
    height = float(rng.uniform(0.22, 0.38)) * t
    font = int(rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX,
                           cv2.FONT_HERSHEY_SCRIPT_SIMPLEX]))
    glyph = str(rng.choice(list("S$&GZ")))
    thick = max(1, round(height * float(rng.uniform(0.08, 0.14))))
    scale = height / 22.0
    (w, h), _ = cv2.getTextSize(glyph, font, scale, thick)
    org = (int(t / 2 - w / 2), int(t / 2 + h / 2))
    layer = np.zeros((t, t), np.float32)
    cv2.putText(layer, glyph, org, font, scale, 1.0, thick, cv2.LINE_AA)
    if rng.random() < 0.4:  # an outlined emblem: the stroke's inside in the body's colour
        inner = np.zeros_like(layer)
        cv2.putText(inner, glyph, org, font, scale, 1.0, max(1, thick // 3), cv2.LINE_AA)
        layer = np.clip(layer - inner, 0, 1)
    turn = cv2.getRotationMatrix2D((t / 2, t / 2), float(rng.uniform(-60, 60)), 1.0)
    layer = cv2.warpAffine(layer, turn, (t, t))
    _ink_layer(tex, paint, layer, ink)


@functools.lru_cache(maxsize=4)
def _polar_maps(side: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """``cv2.remap``'s maps from a ``side x side`` image to polar coordinates round its centre:
    each pixel's radius in pixels (a column of the polar image) and its angle as a row of a
    polar image of ``rows`` rows per turn. Read-only: shared by every call."""
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float32) - np.float32(side / 2 - 0.5)
    angle = (np.arctan2(yy, xx) % (2 * math.pi)) * np.float32(rows / (2 * math.pi))
    radius = np.hypot(xx, yy)
    for m in (radius, angle):
        m.setflags(write=False)
    return radius, angle


def _stamp(tex: np.ndarray, paint: np.ndarray | None, value: int, pip_r: float,
           pip: np.ndarray, rng: np.random.Generator) -> None:
    """A precision casino die's stamping, in the pips' paint ``pip``, on its face texture
    ``tex`` (and ``paint``): on the 6 a serial number (3-4 digits 0.08-0.12 faces tall) along
    the middle, between the two columns of pips; on the 1 the casino's name (letters
    0.045-0.075 faces tall, as many as fill 80-97% of the ring, 8-32, a gap or two between its
    words) as a nearly closed ring tight around the pip (``pip_r`` pixels), the letters
    standing on the ring like printed text.
    Both are drawn at four times the texture's resolution and shrunk, so small letters stay
    letters rather than blots."""
    t = tex.shape[0]
    k = 4  # drawn at k times the texture's side
    big = t * k
    layer = np.zeros((big, big), np.float32)
    font = cv2.FONT_HERSHEY_SIMPLEX
    if value == 6:
        height = float(rng.uniform(0.08, 0.12)) * big
        text = "".join(str(d) for d in rng.integers(0, 10, int(rng.integers(3, 5))))
        scale, thick = height / 22.0, max(1, round(height / float(rng.uniform(5, 8))))
        (w, h), _ = cv2.getTextSize(text, font, scale, thick)
        cv2.putText(layer, text, (int(big / 2 - w / 2), int(big / 2 + h / 2)), font, scale,
                    1.0, thick, cv2.LINE_AA)
        turn = float(rng.choice([90.0, -90.0]) + rng.uniform(-4, 4))  # along the columns
        layer = cv2.warpAffine(layer, cv2.getRotationMatrix2D((big / 2, big / 2), turn, 1.0),
                               (big, big))
    else:
        height = float(rng.uniform(0.045, 0.075)) * big
        rad = min(pip_r * k + float(rng.uniform(0.015, 0.04)) * big + height / 2,
                  0.44 * big - height / 2)
        share = float(rng.uniform(0.8, 0.97))  # of the circle the name covers
        n = max(8, min(32, round(share * 2 * math.pi * rad / (height * rng.uniform(0.8, 1.1)))))
        letters = list(rng.choice(list("ABCDEGHIKLMNOPRSTUVWY"), n))
        for _ in range(int(rng.integers(1, 3))):  # the gaps between the name's words
            letters[int(rng.integers(1, n - 1))] = " "
        text = "".join(letters)
        scale, thick = height / 22.0, max(1, round(height / float(rng.uniform(4, 7))))
        (w, h), _ = cv2.getTextSize(text, font, scale, thick)
        strip = np.zeros((h + 2 * thick + 2, w + 2 * thick), np.float32)
        cv2.putText(strip, text, (thick, h + thick), font, scale, 1.0, thick, cv2.LINE_AA)
        # the ring unrolled: rows are angles (one turn), columns radii (one per pixel)
        rows, cols = 1440, big // 2
        arc, across = max(1, round(rows * share)), strip.shape[0]
        band = cv2.resize(np.ascontiguousarray(strip.T), (across, arc),
                          interpolation=cv2.INTER_AREA)[:, ::-1]  # the letters' tops outward
        polar = np.zeros((rows, cols), np.float32)
        c0 = max(0, min(cols - across, round(rad - across / 2)))
        polar[:arc, c0:c0 + across] = band
        polar = np.roll(polar, int(rng.integers(0, rows)), axis=0)
        radius, angle = _polar_maps(big, rows)
        layer = cv2.remap(polar, radius, angle, cv2.INTER_LINEAR,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    _ink_layer(tex, paint, np.clip(cv2.resize(layer, (t, t), interpolation=cv2.INTER_AREA), 0, 1),
               pip)


# Faces of the unit cube centred on the origin: (normal, 4 corners in order u0v0,u1v0,u1v1,u0v1)
def _cube_faces() -> list[tuple[np.ndarray, np.ndarray]]:
    faces = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            n = np.zeros(3)
            n[axis] = sign
            a, b = [i for i in range(3) if i != axis]
            corners = []
            for (u, v) in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis] = sign
                p[a] = u
                p[b] = v
                corners.append(p * 0.5)
            faces.append((n, np.array(corners)))
    return faces


_FACES = _cube_faces()


def _face_values(top: int, rng: np.random.Generator) -> dict[int, int]:
    """Values on the six cube faces (index into _FACES) with ``top`` on +z, opposites sum 7."""
    others = [v for v in range(1, 7) if v not in (top, 7 - top)]
    a = int(rng.choice(others))
    b = int(rng.choice([v for v in others if v not in (a, 7 - a)]))
    # _FACES order: -x, +x, -y, +y, -z, +z
    return {0: 7 - a, 1: a, 2: 7 - b, 3: b, 4: 7 - top, 5: top}


def _project(points: np.ndarray, spec: DieSpec, tilt: float, focal: float,
             off: tuple[float, float]) -> np.ndarray:
    """World points (die units, die-local, z up, y away from the camera) to image pixels.

    ``off`` is the die centre's offset from the lens axis in the image, over the lens's focal
    length (:func:`draw_dice`'s ``lens``): a point nearer the camera than the centre moves
    away from the axis, so a die off the axis shows the side faces that face the axis."""
    s = spec.size
    x = points[:, 0] * s
    y = points[:, 1] * s
    z = points[:, 2] * s
    depth = y * math.sin(tilt) - z * math.cos(tilt)
    scale = focal / (focal + depth)
    u = spec.center[0] + (x - depth * off[0]) * scale
    v = spec.center[1] - (y * math.cos(tilt) + z * math.sin(tilt) + depth * off[1]) * scale
    return np.stack([u, v], axis=1)


def _check_frame(frame: np.ndarray) -> None:
    """Refuse a frame the drawing functions cannot draw on in place: it must be BGR uint8."""
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.dtype != np.uint8:
        raise ValueError(f"frame must be BGR uint8 (H, W, 3), got {frame.shape} {frame.dtype}")


def _blend_region(frame: np.ndarray, patch: np.ndarray, alpha: np.ndarray,
                  x0: int, y0: int) -> None:
    h, w = alpha.shape
    region = frame[y0:y0 + h, x0:x0 + w].astype(np.float32)
    a = alpha[..., None]
    frame[y0:y0 + h, x0:x0 + w] = np.clip(region * (1 - a) + patch * a, 0, 255).astype(np.uint8)


def _quad_box(quad: np.ndarray, shape: tuple[int, ...], pad: int = 2) -> tuple[int, int, int, int]:
    h, w = shape[:2]
    x0 = max(math.floor(quad[:, 0].min()) - pad, 0)
    y0 = max(math.floor(quad[:, 1].min()) - pad, 0)
    x1 = min(math.ceil(quad[:, 0].max()) + pad, w)
    y1 = min(math.ceil(quad[:, 1].max()) + pad, h)
    return x0, y0, x1, y1


def _fill_rounded(img: np.ndarray, p0: tuple[int, int], p1: tuple[int, int], r: int,
                  value: float | tuple[float, ...]) -> None:
    """Fill the rectangle from pixel ``p0`` to ``p1`` with its corners rounded by ``r``."""
    (x0, y0), (x1, y1) = p0, p1
    cv2.rectangle(img, (x0 + r, y0), (x1 - r, y1), value, -1)
    cv2.rectangle(img, (x0, y0 + r), (x1, y1 - r), value, -1)
    for cx, cy in ((x0 + r, y0 + r), (x1 - r, y0 + r), (x0 + r, y1 - r), (x1 - r, y1 - r)):
        cv2.circle(img, (cx, cy), r, value, -1, cv2.LINE_AA)


@functools.lru_cache(maxsize=64)
def _rounded_alpha(rounding: float) -> np.ndarray:
    """A face's alpha texture: a square with rounded corners (a worn, rounded die)."""
    t = _TEX
    a = np.zeros((t, t), np.float32)
    _fill_rounded(a, (0, 0), (t - 1, t - 1), max(1, round(rounding * 0.8 * t)), 1.0)
    return a


def _warp_face(frame: np.ndarray, tex: np.ndarray, quad: np.ndarray, shade: float,
               opacity: float, tint: np.ndarray | None = None,
               rounding: float = 0.0, alpha_tex: np.ndarray | None = None) -> np.ndarray | None:
    """Warp a face texture onto ``quad`` of ``frame`` (in place); return the face mask.
    ``alpha_tex`` ``(T, T)``, if given, is a per-texel opacity (a clear body, solid pips)."""
    x0, y0, x1, y1 = _quad_box(quad, frame.shape)
    if x1 - x0 < 1 or y1 - y0 < 1:
        return None
    src = np.float32([[0, 0], [_TEX - 1, 0], [_TEX - 1, _TEX - 1], [0, _TEX - 1]])
    dst = (quad - [x0, y0]).astype(np.float32)
    m = cv2.getPerspectiveTransform(src, dst)
    size = (x1 - x0, y1 - y0)
    patch = cv2.warpPerspective(tex * shade, m, size, flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
    if rounding > 0.02:
        alpha = cv2.warpPerspective(_rounded_alpha(round(rounding, 2)), m, size,
                                    flags=cv2.INTER_LINEAR,
                                    borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    else:
        mask = np.zeros((size[1], size[0]), np.uint8)
        cv2.fillConvexPoly(mask, np.round(dst * 16).astype(np.int32), 255, cv2.LINE_AA, 4)
        alpha = mask.astype(np.float32) / 255.0
    if tint is not None:
        patch = patch * tint
    blend = alpha * opacity
    if alpha_tex is not None:
        blend = blend * cv2.warpPerspective(alpha_tex, m, size, flags=cv2.INTER_LINEAR,
                                            borderMode=cv2.BORDER_REPLICATE)
    _blend_region(frame, patch, blend, x0, y0)
    full = np.zeros(frame.shape[:2], np.float32)
    full[y0:y1, x0:x1] = alpha
    return full


def _shadow(frame: np.ndarray, spec: DieSpec, tilt: float, focal: float,
            light: np.ndarray, strength: float, off: tuple[float, float]) -> None:
    base = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]])
    base = base @ _rot_z(math.radians(spec.yaw_deg)).T
    cast = np.array([-light[0], -light[1], 0]) * 0.6
    pts = np.vstack([base + np.array([0, 0, 0.5]), base + cast + np.array([0, 0, 0.5])])
    pts[:, 2] = 0
    quad = _project(pts, spec, tilt, focal, off)
    hull = cv2.convexHull(quad.astype(np.float32))
    k = max(3, int(spec.size * 0.35) | 1)
    x0, y0, x1, y1 = _quad_box(hull.reshape(-1, 2), frame.shape, pad=k)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillConvexPoly(mask, np.round((hull.reshape(-1, 2) - [x0, y0]) * 16).astype(np.int32),
                       1.0, cv2.LINE_AA, 4)
    mask = cv2.GaussianBlur(mask, (k, k), 0)
    region = frame[y0:y1, x0:x1].astype(np.float32)
    frame[y0:y1, x0:x1] = np.clip(region * (1 - strength * mask[..., None]), 0, 255).astype(
        np.uint8)


def draw_dice(frame: np.ndarray, specs: Sequence[DieSpec], rng: np.random.Generator, *,
              tilt_deg: float = 30.0, focal: float | None = None,
              light: Sequence[float] = (0.4, -0.5, 0.77), shadows: float = 0.45,
              glare: float = 0.5, lens: tuple[float, float, float] | None = None,
              ) -> list[dict[str, Any]]:
    """Draw dice onto ``frame`` in place and return one label per die, in ``specs`` order.

    Parameters
    ----------
    frame : BGR ``uint8`` array ``(H, W, 3)``, modified in place.
    specs : the dice; farther dice (smaller ``center[1]``) are drawn first so nearer ones
        overlap them.
    rng : seeded generator (texture jitter, glare spots).
    tilt_deg : camera tilt from looking straight down (0) towards the horizon (90).
    focal : perspective strength in pixels: the camera's distance from a die (default 12 die
        sizes: mild perspective).
    lens : ``(focal, cx, cy)``, a pinhole camera's focal length and principal point in pixels
        of ``frame``: each die is seen along its own ray from the lens, so one off the axis
        shows the side faces that face the axis, as dice near the edges of a wide-angle
        photo do (the die's own perspective is still ``focal``'s). ``None``: every die is
        seen along the lens axis.
    light : direction towards the light in world coordinates (x right, y away, z up).
    shadows : darkening of the cast shadows, 0-1.
    glare : probability that a glossy die shows a specular spot on its top face.

    Returns
    -------
    labels : dicts ``{"value", "color", "bbox", "die_bbox", "state", "visible", "inside",
        "quad"}``; ``bbox`` is the box of the top face, ``quad`` its corners; a die whose
        top face is covered by more than 40% by a nearer die gets ``state "unreadable"`` and
        ``value None``; a cocked die ``state "cocked"``.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels of ``frame``, origin top-left.

    Examples
    --------
    >>> import numpy as np
    >>> frame = np.full((120, 160, 3), 128, np.uint8)
    >>> labels = draw_dice(frame, [DieSpec(5, "red", (80, 70), 40)], np.random.default_rng(0))
    >>> labels[0]["value"], labels[0]["state"]
    (5, 'flat')
    """
    _check_frame(frame)
    tilt = math.radians(float(tilt_deg))
    lvec = np.asarray(light, float)
    lvec = lvec / np.linalg.norm(lvec)
    right = np.array([1.0, 0.0, 0.0])
    cam_up = np.array([0.0, math.cos(tilt), math.sin(tilt)])
    toward = np.array([0.0, -math.sin(tilt), math.cos(tilt)])  # from the table to the lens
    h, w = frame.shape[:2]
    owner = np.full((h, w), -1, np.int16)
    order = sorted(range(len(specs)), key=lambda i: specs[i].center[1])
    labels: list[dict[str, Any]] = [{} for _ in specs]
    top_area = np.zeros(len(specs))
    for i in order:
        spec = specs[i]
        f = focal if focal is not None else spec.size * 12.0
        off = ((spec.center[0] - lens[1]) / lens[0], (spec.center[1] - lens[2]) / lens[0]
               ) if lens else (0.0, 0.0)
        view = toward - off[0] * right + off[1] * cam_up
        view = view / np.linalg.norm(view)
        base_body = spec.body if spec.body is not None else COLORS[spec.color][0]
        body = np.clip(np.asarray(base_body, np.float32) + rng.normal(0, 8, 3), 0, 255)
        pip_c = spec.pip if spec.pip is not None else COLORS[spec.color][1][0]
        pip = np.asarray(pip_c, np.float32)
        if shadows > 0 and not spec.translucent:
            _shadow(frame, spec, tilt, f, lvec, shadows, off)
        elif shadows > 0:
            _shadow(frame, spec, tilt, f, lvec, shadows * 0.4, off)
        rot = _rot_z(math.radians(spec.yaw_deg)) @ _rot_x(math.radians(spec.cock_deg))
        values = _face_values(spec.value, rng)
        lift = np.array([0, 0, 0.5])
        if spec.cock_deg:
            # resting on an edge: raise so that the lowest corner touches the table
            corners = np.array([c for _, q in _FACES for c in q]) @ rot.T
            lift = np.array([0, 0, -corners[:, 2].min()])
        drawn = []
        far = []
        for k, (n, quad) in enumerate(_FACES):
            nw = rot @ n
            facing = float(nw @ view)
            pts = quad @ rot.T + lift
            if facing <= 0.02:
                far.append((facing, k, nw, pts))
                continue
            drawn.append((facing, k, nw, pts))
        drawn.sort(key=lambda d: d[0])
        if spec.see_through > 0:
            f_pip = (float(rng.uniform(0.35, 0.75)) if spec.through_pip is None
                     else spec.through_pip)
            for _facing, k, _nw, pts in sorted(far, key=lambda d: d[0]):
                tex = _face_texture(values[k], body, body + f_pip * (pip - body), spec, rng,
                                    None)
                _warp_face(frame, tex, _project(pts, spec, tilt, f, off), 0.55 + 0.3 * rng.random(),
                           1.0, rounding=spec.rounding)
        top_mask = None
        top_quad = None
        all_pts = []
        paint_of: dict[int, np.ndarray] = {}
        for _facing, k, nw, pts in drawn:
            img_quad = _project(pts, spec, tilt, f, off)
            all_pts.append(img_quad)
            shade = 0.55 + 0.5 * max(0.0, float(nw @ lvec))
            through = 7 - values[k] if spec.translucent and not spec.see_through else None
            paint_of[k] = np.zeros((_TEX, _TEX), np.float32)
            tex = _face_texture(values[k], body, pip, spec, rng, through, paint_of[k])
            if spec.flush_pips:  # the paint keeps its brightness: only the body is shaded
                tex = tex * (shade + (1.0 - shade) * paint_of[k])[..., None]
                shade = 1.0
            opacity = 0.82 if spec.translucent else 1.0
            paint = None
            if spec.see_through > 0:  # clear body, solid paint (pips, marks)
                opacity = 1.0
                paint = (1.0 - spec.see_through) + spec.see_through * paint_of[k]
            mask = _warp_face(frame, tex, img_quad, shade, opacity, rounding=spec.rounding,
                              alpha_tex=paint)
            if mask is None:
                continue
            owner[mask > 0.5] = i
            if nw[2] > 0.9:
                top_mask, top_quad = mask, img_quad
        if not all_pts:
            labels[i] = {"value": None, "color": REPORTED.get(spec.color, spec.color),
                         "bbox": [0.0, 0.0, 0.0, 0.0], "die_bbox": [0.0, 0.0, 0.0, 0.0],
                         "state": "unreadable", "visible": 0.0}
            continue
        every = np.vstack(all_pts)
        die_box = [float(every[:, 0].min()), float(every[:, 1].min()),
                   float(every[:, 0].max()), float(every[:, 1].max())]
        if top_quad is None:  # cocked: no face points up; the box is the upper-most face
            up = max(drawn, key=lambda d: d[2][2])
            top_quad = _project(up[3], spec, tilt, f, off)
        elif spec.glossy and rng.random() < glare:
            _glare(frame, top_quad, rng)
        if top_mask is not None:
            top_area[i] = float((top_mask > 0.5).sum())
        box = [float(top_quad[:, 0].min()), float(top_quad[:, 1].min()),
               float(top_quad[:, 0].max()), float(top_quad[:, 1].max())]
        area = max((box[2] - box[0]) * (box[3] - box[1]), 1e-6)
        box = _clip_box(box, w, h)
        inside = round(min(1.0, (box[2] - box[0]) * (box[3] - box[1]) / area), 3)
        state = "cocked" if spec.cock_deg and top_mask is None else "flat"
        labels[i] = {"value": spec.value if state == "flat" else None,
                     "color": REPORTED.get(spec.color, spec.color) if not spec.translucent
                     else "translucent",
                     "bbox": box, "die_bbox": _clip_box(die_box, w, h), "state": state,
                     "visible": 1.0, "inside": inside,
                     "quad": [[round(float(x), 2), round(float(y), 2)] for x, y in top_quad]}
    # top faces covered by nearer dice
    for i in range(len(specs)):
        if top_area[i] > 0:
            x0, y0, x1, y1 = (int(v) for v in labels[i]["bbox"])
            seen = float((owner[y0:y1 + 1, x0:x1 + 1] == i).sum())
            labels[i]["visible"] = round(min(1.0, seen / top_area[i]), 3)
            if labels[i]["visible"] < 0.6 and labels[i]["state"] == "flat":
                labels[i]["state"], labels[i]["value"] = "unreadable", None
    return labels


def _clip_box(box: list[float], w: int, h: int) -> list[float]:
    return [round(min(max(box[0], 0.0), w), 1), round(min(max(box[1], 0.0), h), 1),
            round(min(max(box[2], 0.0), w), 1), round(min(max(box[3], 0.0), h), 1)]


def _glare(frame: np.ndarray, quad: np.ndarray, rng: np.random.Generator) -> None:
    x0, y0, x1, y1 = _quad_box(quad, frame.shape, pad=0)
    if x1 - x0 < 4 or y1 - y0 < 4:
        return
    cx = rng.uniform(x0 + 0.2 * (x1 - x0), x1 - 0.2 * (x1 - x0))
    cy = rng.uniform(y0 + 0.2 * (y1 - y0), y1 - 0.2 * (y1 - y0))
    r = rng.uniform(0.08, 0.3) * (x1 - x0)
    yy, xx = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    spot = np.exp(-(((xx - cx) / r) ** 2 + ((yy - cy) / (r * rng.uniform(0.4, 1.0))) ** 2))
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    cv2.fillConvexPoly(mask, np.round((quad - [x0, y0]) * 16).astype(np.int32), 1.0,
                       cv2.LINE_AA, 4)
    a = (spot * mask * rng.uniform(0.4, 0.95))[..., None]
    region = frame[y0:y1, x0:x1].astype(np.float32)
    frame[y0:y1, x0:x1] = np.clip(region * (1 - a) + 255 * a, 0, 255).astype(np.uint8)


# ----------------------------------------------------------------------------- backgrounds
def _noise_field(rng: np.random.Generator, h: int, w: int, scale: float) -> np.ndarray:
    sh, sw = max(2, int(h / scale)), max(2, int(w / scale))
    small = rng.normal(0, 1, (sh, sw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def random_background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A table surface: wood, felt, cloth, paper or a busy printed board (BGR ``uint8``)."""
    kind = rng.choice(["wood", "felt", "paper", "busy", "cloth", "hexes"],
                      p=[0.25, 0.15, 0.2, 0.2, 0.1, 0.1])
    img: np.ndarray
    if kind == "wood":
        base = np.array(rng.choice([[120, 170, 210], [70, 110, 160], [160, 200, 225],
                                    [40, 70, 110], [150, 190, 215]]), np.float32)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, math.pi)
        coord = xx * math.cos(ang) + yy * math.sin(ang)
        warp = _noise_field(rng, h, w, rng.uniform(30, 120)) * rng.uniform(5, 20)
        grain = np.sin((coord + warp) / rng.uniform(2.0, 8.0)) * 0.5 + 0.5
        grain = grain ** rng.uniform(1, 4)
        img = base * (1 - rng.uniform(0.05, 0.25) * grain[..., None])
        img *= (1 + 0.05 * _noise_field(rng, h, w, 60))[..., None]
    elif kind in ("felt", "cloth"):
        base = rng.uniform(20, 200, 3).astype(np.float32)
        if rng.random() < 0.5:
            base = np.array(rng.choice([[40, 110, 30], [40, 80, 20], [120, 60, 90],
                                        [100, 40, 30], [30, 30, 90]]), np.float32)
        img = np.broadcast_to(base, (h, w, 3)).astype(np.float32).copy()
        img *= (1 + 0.08 * rng.normal(0, 1, (h, w)).astype(np.float32))[..., None]
        img *= (1 + 0.06 * _noise_field(rng, h, w, 40))[..., None]
    elif kind == "paper":
        v = rng.uniform(170, 250)
        base = np.array([v, v, v], np.float32) + rng.normal(0, 6, 3)
        img = np.broadcast_to(base, (h, w, 3)).astype(np.float32).copy()
        img += rng.normal(0, 2.5, (h, w, 1)).astype(np.float32)
    else:
        img = np.empty((h, w, 3), np.float32)
        img[:] = rng.uniform(60, 230, 3)
        if kind == "hexes":
            r = rng.uniform(30, 90)
            for cy in np.arange(-r, h + r, r * 1.5):
                for cx in np.arange(-r, w + r, r * 1.732):
                    off = (r * 0.866) if int(cy / (r * 1.5)) % 2 else 0
                    pts = np.array([[cx + off + r * math.cos(a), cy + r * math.sin(a)]
                                    for a in np.arange(6) * math.pi / 3 + math.pi / 6])
                    cv2.fillConvexPoly(img, pts.astype(np.int32),
                                       tuple(float(c) for c in rng.uniform(30, 220, 3)))
                    cv2.polylines(img, [pts.astype(np.int32)], True, (40, 60, 70), 2)
            img *= (1 + 0.15 * _noise_field(rng, h, w, 6))[..., None]
        else:
            for _ in range(int(rng.integers(8, 30))):
                color = tuple(float(c) for c in rng.uniform(0, 255, 3))
                shape = rng.integers(0, 4)
                p = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
                size = int(rng.uniform(5, max(w, h) / 3))
                if shape == 0:
                    cv2.rectangle(img, p, (p[0] + size, p[1] + int(size * rng.uniform(.3, 2))),
                                  color, -1)
                elif shape == 1:
                    cv2.circle(img, p, size // 2, color, int(rng.choice([-1, 2, 4])))
                elif shape == 2:
                    q = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
                    cv2.line(img, p, q, color, int(rng.integers(1, 6)))
                else:
                    cv2.putText(img, "".join(rng.choice(list("ABCDEFGHKMNOPRSTUVXYZ0123456789"),
                                                        int(rng.integers(2, 8)))),
                                p, cv2.FONT_HERSHEY_SIMPLEX, rng.uniform(0.4, 2.0), color,
                                int(rng.integers(1, 4)))
            for _ in range(int(rng.integers(0, 25))):  # small round spots (dice-pip look-alikes)
                cv2.circle(img, (int(rng.uniform(0, w)), int(rng.uniform(0, h))),
                           int(rng.uniform(1, 6)),
                           tuple(float(c) for c in rng.uniform(0, 255, 3)), -1, cv2.LINE_AA)
            img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.5))
    return np.clip(img, 0, 255).astype(np.uint8)


def stone_background(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A stone table top (BGR ``uint8``): granite (dense grains of two to four colours, 1-4 px,
    some of them as big and as round as a small die's pips) or terrazzo (sparse chips in a
    plain ground), with cloudy shading and veins.

    Examples
    --------
    >>> stone_background(np.random.default_rng(0), 30, 40).shape
    (30, 40, 3)
    """
    ground = np.array(rng.choice([[60, 60, 62], [150, 150, 155], [200, 205, 210],
                                  [120, 140, 170], [30, 30, 35], [170, 180, 195]]),
                      np.float32) + rng.normal(0, 12, 3).astype(np.float32)
    img = np.broadcast_to(ground, (h, w, 3)).astype(np.float32).copy()
    img *= (1 + 0.12 * _noise_field(rng, h, w, rng.uniform(20, 80)))[..., None]
    granite = rng.random() < 0.7
    for _ in range(int(rng.integers(2, 5))):  # layers of grains, each of one colour
        color = np.clip(ground * rng.uniform(0.2, 1.8) + rng.normal(0, 25, 3), 0, 255)
        if granite:  # a thresholded fine noise field: irregular blobs of 1-4 px
            field = _noise_field(rng, h, w, rng.uniform(1.0, 3.5))
            grains = field > rng.uniform(0.8, 1.8)
            img[grains] = color.astype(np.float32)
        else:  # terrazzo: sparse round or angular chips
            n = int(h * w * rng.uniform(2e-4, 2e-3))
            for _ in range(n):
                c = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
                r = int(rng.uniform(1, 5))
                if rng.random() < 0.5:
                    cv2.circle(img, c, r, tuple(float(v) for v in color), -1, cv2.LINE_AA)
                else:
                    pts = cv2.boxPoints(((c[0], c[1]), (2 * r, r * rng.uniform(1, 2.5)),
                                         rng.uniform(0, 180)))
                    cv2.fillConvexPoly(img, pts.astype(np.int32),
                                       tuple(float(v) for v in color), cv2.LINE_AA)
    if rng.random() < 0.4:  # veins
        vein = np.abs(_noise_field(rng, h, w, rng.uniform(30, 90))) < rng.uniform(0.02, 0.06)
        img[vein] = img[vein] * rng.uniform(0.5, 1.5)
    img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.0))
    return np.clip(img, 0, 255).astype(np.uint8)


def draw_board(frame: np.ndarray, rng: np.random.Generator, size: float,
               tilt_deg: float = 0.0, *, cover: bool = False,
               layout: dict[str, Any] | None = None) -> list[list[float]]:
    """Draw a game board of land tiles in place and return the boxes of its number tokens.

    Hexagonal (or square) tiles 1.5-4 die edges across, tessellated at a random angle over part
    of the frame, each with a printed texture (noise, strokes, fields) in its own colour and
    edge lines, most of them carrying a round number token (a cream or pale disc, 0.7-1.5 die
    edges across, with a printed number, often with dots under it, or a letter or a ring of
    dots), sometimes a sea frame around the board; foreshortened vertically by the camera tilt
    ``tilt_deg`` like the table. ``size`` is the scene's die edge in pixels.

    ``cover`` centres the board near the middle of the frame and makes it reach (nearly) every
    corner, for scenes whose dice lie on it; it draws the same numbers from ``rng``. ``layout``,
    if given, is filled with where things lie in ``frame``'s pixels, for placing dice on the
    board: ``"mask"`` the board's coverage ``(H, W)`` in [0, 1], ``"tiles"`` the tile centres
    ``(x, y)``, ``"tile_radius"`` the tiles' radius across (times ``"squash"`` down), and
    ``"tokens"`` ``(x, y, rx, ry)``: each token's centre and half-axes.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels of ``frame``, origin top-left.

    Examples
    --------
    >>> frame = np.full((120, 160, 3), 128, np.uint8)
    >>> boxes = draw_board(frame, np.random.default_rng(0), 20.0, tilt_deg=30.0)
    >>> all(0 <= x0 < x1 <= 160 and 0 <= y0 < y1 <= 120 for x0, y0, x1, y1 in boxes)
    True
    """
    _check_frame(frame)
    h, w = frame.shape[:2]
    squash = max(0.25, math.cos(math.radians(float(tilt_deg))))
    ch = math.ceil(h / squash)  # the board drawn flat, then foreshortened
    canvas = np.empty((ch, w, 3), np.float32)
    canvas[:] = rng.uniform(40, 220, 3)
    alpha = np.zeros((ch, w), np.float32)
    r = size * rng.uniform(0.75, 2.0)  # tile radius
    hexes = rng.random() < 0.8
    turn = rng.uniform(0, math.pi)
    u = np.array([math.cos(turn), math.sin(turn)])
    v = np.array([-math.sin(turn), math.cos(turn)])
    if hexes:
        a1, a2 = u * r * math.sqrt(3), (u * 0.5 + v * math.sqrt(3) / 2) * r * math.sqrt(3)
    else:
        a1, a2 = u * 2 * r * 0.72, v * 2 * r * 0.72
    # the board covers an ellipse around a random point (part of the frame, or all of it)
    cx0, cy0 = rng.uniform(0, w), rng.uniform(0, ch)
    extent = max(w, ch) * rng.uniform(0.3, 1.0)
    if cover:  # near the middle, reaching the corners (the same draws from rng)
        cx0, cy0 = w / 2 + (cx0 - w / 2) * 0.2, ch / 2 + (cy0 - ch / 2) * 0.2
        extent = max(extent, math.hypot(w, ch) * 0.5)
    if rng.random() < 0.4:  # a sea frame around the tiles
        sea = tuple(float(c) for c in np.clip(np.array([170, 110, 30]) + rng.normal(0, 30, 3),
                                              0, 255))
        cv2.circle(canvas, (int(cx0), int(cy0)), int(extent + 1.2 * r), sea, -1)
        cv2.circle(alpha, (int(cx0), int(cy0)), int(extent + 1.2 * r), 1.0, -1)
    n = int(extent / (r * 1.2)) + 2
    palette = [rng.uniform(20, 230, 3) for _ in range(int(rng.integers(3, 7)))]
    line = tuple(float(c) for c in rng.uniform(20, 230, 3))
    tokens = []
    centres = []
    for i in range(-n, n + 1):
        for j in range(-n, n + 1):
            c = np.array([cx0, cy0]) + i * a1 + j * a2
            if math.hypot(c[0] - cx0, c[1] - cy0) > extent:
                continue
            if not (-r < c[0] < w + r and -r < c[1] < ch + r):
                continue
            pts = (_polygon(c[0], c[1], r * 0.98, 6, turn + math.pi / 6) if hexes else
                   _polygon(c[0], c[1], r * 0.72 * math.sqrt(2) * 0.98, 4, turn + math.pi / 4))
            x0, y0 = (int(max(0, m)) for m in pts.min(axis=0))
            x1, y1 = int(min(w, pts[:, 0].max() + 1)), int(min(ch, pts[:, 1].max() + 1))
            if x1 <= x0 or y1 <= y0:
                continue
            tile = np.zeros((ch, w), np.uint8)
            cv2.fillConvexPoly(tile, pts.astype(np.int32), 1)
            sel = tile[y0:y1, x0:x1] > 0
            base = palette[int(rng.integers(len(palette)))] + rng.normal(0, 10, 3)
            tex = base * (1 + 0.3 * _noise_field(rng, y1 - y0, x1 - x0,
                                                 rng.uniform(1.5, 6)))[..., None]
            region = canvas[y0:y1, x0:x1]
            region[sel] = tex[sel]
            for _ in range(int(rng.integers(0, 10))):  # printed strokes: fields, trees, rocks
                q = c + rng.normal(0, r / 2.5, 2)
                cv2.line(canvas, (int(q[0]), int(q[1])),
                         (int(q[0] + rng.normal(0, r / 3)), int(q[1] + rng.normal(0, r / 3))),
                         tuple(float(x) for x in base * rng.uniform(0.4, 1.6)),
                         max(1, int(r * rng.uniform(0.03, 0.1))), cv2.LINE_AA)
            cv2.polylines(canvas, [pts.astype(np.int32)], True, line, max(1, int(r * 0.05)),
                          cv2.LINE_AA)
            alpha[y0:y1, x0:x1][sel] = 1.0
            centres.append((float(c[0]), float(c[1]) * squash))
            if rng.random() < 0.8:
                tr = size * rng.uniform(0.35, 0.75)
                ink = _ink(rng, True)
                cream = tuple(float(x) for x in rng.uniform(180, 245) + rng.normal(0, 10, 3))
                cv2.circle(canvas, (int(c[0]), int(c[1])), int(tr), cream, -1, cv2.LINE_AA)
                _print_marks(canvas, rng, float(c[0]), float(c[1]), tr, ink)
                tokens.append((float(c[0]), float(c[1]), tr))
    flat = cv2.resize(canvas, (w, h), interpolation=cv2.INTER_AREA)
    a = cv2.resize(alpha, (w, h), interpolation=cv2.INTER_AREA)[..., None]
    _blend_region(frame, flat, a[..., 0], 0, 0)
    if layout is not None:
        layout.update(mask=a[..., 0], tiles=centres, tile_radius=float(r), squash=squash,
                      tokens=[(x, y * squash, tr, tr * squash) for x, y, tr in tokens])
    boxes = []
    for x, y, tr in tokens:
        box = [max(0.0, x - tr), max(0.0, (y - tr) * squash), min(float(w), x + tr),
               min(float(h), (y + tr) * squash)]
        if box[2] - box[0] >= 3 and box[3] - box[1] >= 3:
            boxes.append(box)
    return boxes


def draw_sheet(frame: np.ndarray, rng: np.random.Generator, tilt_deg: float = 0.0,
               ) -> Callable[[np.random.Generator, float], tuple[float, float]]:
    """Draw a sheet of paper lying on the table (a score sheet, a page of notes, a pale card
    the dice are rolled onto) in place, and return where a die of edge ``s`` lies on it (as
    :func:`board_places`: a centre in ``frame``'s pixels).

    The sheet is white, cream or pale grey, 0.45-1 times the frame's longer side by 0.6-0.8
    times that, turned any way and foreshortened vertically by the camera tilt ``tilt_deg``
    like the table; half the sheets are ruled (faint blue or grey lines, sometimes a red
    margin) and half carry handwriting (rows of small dark strokes). The dice lie anywhere on
    it, clear of its edges by most of a die where the sheet has room.

    Examples
    --------
    >>> frame = np.full((120, 160, 3), 60, np.uint8)
    >>> place = draw_sheet(frame, np.random.default_rng(0), tilt_deg=20.0)
    >>> x, y = place(np.random.default_rng(1), 10.0)
    >>> bool(frame[int(y), int(x)].mean() > 150)
    True
    """
    _check_frame(frame)
    h, w = frame.shape[:2]
    squash = max(0.25, math.cos(math.radians(float(tilt_deg))))
    long = max(w, h) * float(rng.uniform(0.45, 1.0))
    short = long * float(rng.uniform(0.6, 0.8))
    tw, th = max(8, int(long)), max(8, int(short))
    paper = rng.uniform(205, 250) + rng.normal(0, 5, 3)
    if rng.random() < 0.3:  # cream
        paper = paper + np.array([-18.0, -4.0, 2.0])
    tex = np.empty((th, tw, 3), np.float32)
    tex[:] = paper
    tex *= (1 + 0.03 * _noise_field(rng, th, tw, rng.uniform(20, 80)))[..., None]
    if rng.random() < 0.5:  # ruled: lines along the sheet's long side
        gap = short / rng.uniform(18, 34)
        ink = (tuple(float(c) for c in paper * rng.uniform(0.6, 0.85)) if rng.random() < 0.4
               else (float(rng.uniform(190, 230)), float(rng.uniform(150, 190)), 120.0))
        for k in range(1, int(short / gap)):
            y = int(k * gap)
            cv2.line(tex, (0, y), (tw, y), ink, 1, cv2.LINE_AA)
        if rng.random() < 0.4:  # a margin
            x = int(long * rng.uniform(0.06, 0.12))
            cv2.line(tex, (x, 0), (x, th), (110.0, 110.0, 215.0), 1, cv2.LINE_AA)
    if rng.random() < 0.5:  # handwriting: rows of small strokes
        ink = rng.choice([[130, 60, 40], [40, 40, 40], [110, 110, 110], [160, 90, 50]])
        ink = tuple(float(c) for c in np.asarray(ink, np.float64) + rng.normal(0, 10, 3))
        row = short / rng.uniform(12, 26)
        for y in np.arange(row, short - row / 2, row):
            if rng.random() < 0.35:
                continue
            x, end = long * rng.uniform(0.05, 0.2), long * rng.uniform(0.4, 0.95)
            while x < end:
                n = int(rng.integers(2, 6))
                pts = np.column_stack([x + np.cumsum(rng.uniform(0.5, 2.0, n)) * row * 0.15,
                                       y + rng.normal(0, row * 0.15, n)])
                cv2.polylines(tex, [pts.astype(np.int32)], False, ink, 1, cv2.LINE_AA)
                x = float(pts[-1, 0]) + row * rng.uniform(0.2, 0.8)
    turn = float(rng.uniform(0, math.pi))
    cx, cy = w * rng.uniform(0.3, 0.7), h * rng.uniform(0.3, 0.7)
    c, s = math.cos(turn), math.sin(turn)
    # the sheet's pixels to the frame's: turned about its centre, put at (cx, cy), squashed
    m = np.float32([[c, -s, cx - c * tw / 2 + s * th / 2],
                    [s * squash, c * squash, cy - (s * tw / 2 + c * th / 2) * squash]])
    flat = cv2.warpAffine(tex, m, (w, h), flags=cv2.INTER_LINEAR)
    a = cv2.warpAffine(np.ones((th, tw), np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    _blend_region(frame, flat, a, 0, 0)

    def place(rng: np.random.Generator, edge: float) -> tuple[float, float]:
        mx, my = min(0.7 * edge, tw / 2), min(0.7 * edge, th / 2)
        x, y = m @ np.array([rng.uniform(mx, tw - mx), rng.uniform(my, th - my), 1.0])
        return float(x), float(y)

    return place


# ----------------------------------------------------------------------------- hands
_SKIN = ((140, 170, 220), (110, 150, 200), (80, 110, 160), (60, 80, 120), (170, 190, 230))


def _draw_hand(frame: np.ndarray, rng: np.random.Generator, scale: float) -> np.ndarray:
    """Draw a hand (arm, palm, fingers) entering from an edge; return its mask in [0, 1]."""
    h, w = frame.shape[:2]
    scale = min(scale, 0.22 * min(h, w))
    side = rng.integers(0, 4)
    t = rng.uniform(0.1, 0.9)
    entry = [(t * w, 0), (t * w, h), (0, t * h), (w, t * h)][side]
    inward = np.array([(0, 1), (0, -1), (1, 0), (-1, 0)][side], float)
    inward = inward + rng.normal(0, 0.3, 2)
    inward /= np.linalg.norm(inward)
    reach = rng.uniform(1.5, 4.0) * scale
    palm = np.array(entry) + inward * reach
    color = np.array(_SKIN[int(rng.integers(len(_SKIN)))], float) + rng.normal(0, 10, 3)
    layer = frame.astype(np.float32)
    mask = np.zeros((h, w), np.float32)
    arm_w = int(scale * rng.uniform(1.2, 1.8))
    cv2.line(mask, (int(entry[0] - inward[0] * scale * 3), int(entry[1] - inward[1] * scale * 3)),
             (int(palm[0]), int(palm[1])), 1.0, arm_w)
    cv2.ellipse(mask, (int(palm[0]), int(palm[1])), (int(scale * 1.1), int(scale * 0.9)),
                float(np.degrees(math.atan2(inward[1], inward[0]))), 0, 360, 1.0, -1)
    perp = np.array([-inward[1], inward[0]])
    for k in range(int(rng.integers(2, 6))):
        base = palm + perp * (k - 1.5) * scale * 0.45 + inward * scale * 0.6
        d = inward + perp * rng.normal(0, 0.25)
        tip = base + d * scale * rng.uniform(0.8, 1.6)
        cv2.line(mask, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 1.0,
                 max(2, int(scale * 0.32)))
    mask = cv2.GaussianBlur(mask, (0, 0), max(1.0, scale * 0.05))
    shade = (1 + 0.12 * _noise_field(rng, h, w, max(4.0, scale / 2)))[..., None]
    skin = color * shade
    a = mask[..., None]
    layer = layer * (1 - a) + skin * a
    frame[:] = np.clip(layer, 0, 255).astype(np.uint8)
    return mask


# the new hand styles (render_scene's hand_variety): how a hand holds itself
HAND_POSES = ("open", "fist", "point", "pen", "edge")


def _skin_tone(rng: np.random.Generator) -> np.ndarray:
    """A skin colour (BGR) anywhere from very pale to very dark, warm or olive."""
    stops = np.array([(245, 225, 212), (226, 186, 160), (196, 148, 112), (150, 100, 70),
                      (100, 64, 44), (58, 38, 28)], float)  # RGB, pale to dark
    t = rng.uniform(0, len(stops) - 1)
    k = min(int(t), len(stops) - 2)
    rgb = stops[k] + (stops[k + 1] - stops[k]) * (t - k)
    rgb = rgb + rng.normal(0, 1, 3) * np.array([7.0, 7.0, 9.0])
    rgb[1] += rng.normal(0, 5)  # olive or rosy
    return np.clip(rgb[::-1], 10, 255)


def _cloth(rng: np.random.Generator, h: int, w: int) -> np.ndarray:
    """A sleeve's cloth ``(h, w, 3)`` float BGR: any colour, knit noise, maybe stripes."""
    base = rng.uniform(20, 235, 3)
    img = np.broadcast_to(base, (h, w, 3)).astype(np.float32).copy()
    img *= (1 + 0.08 * _noise_field(rng, h, w, 2.0))[..., None]
    if rng.random() < 0.3:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, math.pi)
        stripes = np.sin((xx * math.cos(ang) + yy * math.sin(ang)) / rng.uniform(2, 8)) > 0.3
        img[stripes] = rng.uniform(20, 235, 3)
    return img


def _draw_varied_hand(frame: np.ndarray, rng: np.random.Generator, scale: float) -> np.ndarray:
    """Draw a hand in one of :data:`HAND_POSES` entering from an edge, in place; return its
    mask in [0, 1]: the skin (not a sleeve, which alone is no hand, nor the pen it holds).

    Open hand, fist, one pointing finger, a hand holding a pen or pencil (a thin rod of any
    colour), or only fingertips reaching in from the frame's edge; a bare arm or a sleeve with a
    cuff; a skin tone from very pale to very dark; side lighting (shading across the limbs,
    darker outlines and creases); sometimes motion blur.
    """
    h, w = frame.shape[:2]
    # a finger is about as wide as a die or wider (16-20 mm against 16 mm), more when the hand
    # is above the table, nearer the camera: 0.3-1.3 times ``scale`` (render_scene's 1.5-3
    # die edges) for a finger's width
    scale = min(scale * rng.uniform(1.0, 2.2), 0.3 * min(h, w))
    pose = HAND_POSES[int(rng.integers(len(HAND_POSES)))]
    side = int(rng.integers(0, 4))
    t = rng.uniform(0.05, 0.95)
    entry = np.array([(t * w, 0), (t * w, h), (0, t * h), (w, t * h)][side], float)
    inward = np.array([(0, 1), (0, -1), (1, 0), (-1, 0)][side], float) + rng.normal(0, 0.35, 2)
    inward /= np.linalg.norm(inward)
    perp = np.array([-inward[1], inward[0]]) * (1 if rng.random() < 0.5 else -1)  # which hand
    reach = (rng.uniform(-1.6, 0.2) if pose == "edge" else rng.uniform(1.0, 4.0)) * scale
    palm = entry + inward * reach

    def at(u: float, v: float) -> tuple[int, int]:  # hand-local (along, across) in scales
        p = palm + inward * u * scale + perp * v * scale
        return round(float(p[0])), round(float(p[1]))

    def rot(d: np.ndarray, deg: float) -> np.ndarray:
        a = math.radians(deg)
        return np.array([d[0] * math.cos(a) - d[1] * math.sin(a),
                         d[0] * math.sin(a) + d[1] * math.cos(a)])

    skin = _skin_tone(rng)
    colour = np.zeros((h, w, 3), np.float32)
    drawn = np.zeros((h, w), np.float32)  # everything drawn (the pen too)
    hand = np.zeros((h, w), np.float32)  # the mask returned
    crease = rng.uniform(0.55, 1.0)  # 1: no darker outline (diffuse light)

    def paint(part: np.ndarray, fill: np.ndarray, is_hand: bool = True) -> None:
        on = part > 0
        colour[on] = fill[on] if fill.ndim == 3 else fill
        edge = on & ~(cv2.erode(part, np.ones((3, 3), np.uint8)) > 0)
        colour[edge] *= crease
        drawn[on] = 1.0
        hand[on] = 1.0 if is_hand else 0.0  # a sleeve or pen over skin hides it

    def blank() -> np.ndarray:
        return np.zeros((h, w), np.uint8)

    fw = max(2, round(scale * rng.uniform(0.26, 0.38)))  # finger width
    # the arm: bare, or a sleeve ending in a cuff short of the wrist
    arm_w = max(3, int(scale * rng.uniform(1.1, 1.7)))
    arm = blank()
    cv2.line(arm, at(-8, 0), at(-0.6, 0), 1, arm_w)
    paint(arm, skin)
    if rng.random() < 0.5:
        sleeve = blank()
        end = -rng.uniform(1.0, 2.5)
        cv2.line(sleeve, at(-8, 0), at(end, 0), 1, int(arm_w * rng.uniform(1.15, 1.5)))
        cloth = _cloth(rng, h, w)
        paint(sleeve, cloth, is_hand=False)
        if rng.random() < 0.6:  # a cuff of another shade
            cuff = blank()
            cv2.line(cuff, at(end - 0.35, 0), at(end, 0), 1, int(arm_w * 1.5))
            paint(cuff, cloth * rng.uniform(0.6, 1.3), is_hand=False)
    palm_mask = blank()
    cv2.ellipse(palm_mask, at(0, 0), (int(scale * rng.uniform(0.9, 1.1)),
                                      int(scale * rng.uniform(0.8, 0.95))),
                float(np.degrees(math.atan2(inward[1], inward[0]))), 0, 360, 1, -1)
    paint(palm_mask, skin * rng.uniform(0.9, 1.05))

    def finger(u0: float, v0: float, direction: np.ndarray, length: float, width: int,
               tint: float = 1.0) -> np.ndarray:
        m = blank()
        base = np.array(at(u0, v0), float)
        tip = base + direction * length * scale
        cv2.line(m, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 1, width)
        paint(m, skin * tint)
        if rng.random() < 0.5 and width >= 4:  # a nail
            nail = blank()
            nb = base + direction * (length * scale - width * 0.55)
            cv2.ellipse(nail, (int(nb[0]), int(nb[1])), (max(1, width // 3), max(1, width // 4)),
                        float(np.degrees(math.atan2(direction[1], direction[0]))), 0, 360, 1, -1)
            paint(nail, np.clip(skin * 1.12 + 25, 0, 255))
        return tip

    thumb_dir = rot(inward, -np.sign(perp @ rot(inward, 90)) * rng.uniform(35, 70))
    if pose in ("open", "edge"):
        n = int(rng.integers(1, 5)) if pose == "edge" else 4
        spread = rng.uniform(3, 15)
        for k in range(n):
            v = (k - 1.5) * 0.45
            finger(0.6, v, rot(inward, (k - 1.5) * spread + rng.normal(0, 4)),
                   rng.uniform(0.9, 1.6) * (0.85 if k in (0, 3) else 1.0), fw)
        if pose == "open" or rng.random() < 0.3:
            finger(-0.1, -0.85, thumb_dir, rng.uniform(0.8, 1.1), int(fw * 1.15))
    else:  # fist, point, pen: curled fingers as a row of knuckles
        pen_tip = None
        if pose == "pen":
            pen_dir = rot(inward, rng.uniform(-35, 35))
            pen = blank()
            p0 = np.array(at(0.2, -0.3), float)
            p1 = p0 + pen_dir * scale * rng.uniform(2.0, 3.5)
            cv2.line(pen, (int(p0[0]), int(p0[1])), (int(p1[0]), int(p1[1])), 1,
                     max(2, int(scale * rng.uniform(0.09, 0.2))))
            paint(pen, rng.uniform(0, 255, 3), is_hand=False)
            pen_tip = p1
        for k in range(4):
            m = blank()
            cv2.circle(m, at(0.75, (k - 1.5) * 0.42), max(2, int(fw * 0.75)), 1, -1)
            paint(m, skin * rng.uniform(0.92, 1.03))
        if pose == "point":
            finger(0.7, -0.65, rot(inward, rng.normal(0, 12)), rng.uniform(1.3, 2.1), fw)
        if pose == "pen":
            d = (pen_tip - np.array(at(0.6, -0.6), float)) / scale
            finger(0.6, -0.6, d / np.linalg.norm(d), float(np.linalg.norm(d)) * 0.6, fw)
        finger(0.0, -0.85, rot(inward, -np.sign(perp @ rot(inward, 90)) * rng.uniform(10, 45)),
               rng.uniform(0.7, 1.1), int(fw * 1.15))
    # light from one side (or none: diffuse light, flat skin): shading across the limbs and a
    # darker rim, skin texture
    soft = cv2.GaussianBlur(drawn, (0, 0), max(1.0, scale * 0.35))
    gy, gx = np.gradient(soft)
    az = rng.uniform(0, 2 * math.pi)
    side_light = gx * math.cos(az) + gy * math.sin(az)
    side_light /= max(float(np.abs(side_light).max()), 1e-6)
    inner = cv2.distanceTransform((drawn > 0).astype(np.uint8), cv2.DIST_L2, 3)
    rim = 1 - rng.uniform(0.0, 0.4) * (1 - np.clip(inner / max(1.0, 0.3 * scale), 0, 1)) ** 2
    shade = (1 + rng.uniform(0.0, 0.7) * side_light) * rim
    shade *= 1 + rng.uniform(0.02, 0.12) * _noise_field(rng, h, w, max(3.0, scale / 3))
    colour *= shade[..., None]
    alpha = cv2.GaussianBlur(drawn, (0, 0), max(0.6, scale * 0.03))
    hand = cv2.GaussianBlur(hand, (0, 0), max(0.6, scale * 0.03))
    if rng.random() < 0.3:  # the hand moving
        kern = _motion_kernel(rng, int(rng.integers(5, max(6, min(26, int(scale * 0.6))))))
        premul = cv2.filter2D(colour * alpha[..., None], -1, kern)
        alpha = cv2.filter2D(alpha, -1, kern)
        hand = cv2.filter2D(hand, -1, kern)
        colour = premul / np.maximum(alpha, 1e-3)[..., None]
    a = np.clip(alpha, 0, 1)[..., None]
    frame[:] = np.clip(frame.astype(np.float32) * (1 - a) + colour * a, 0, 255).astype(np.uint8)
    return np.clip(hand, 0, 1)


# ----------------------------------------------------------------------------- scenes
def random_specs(rng: np.random.Generator, h: int, w: int, *, count: int,
                 size_px: float, cocked_rate: float = COCKED_RATE,
                 colors: Sequence[str] | None = None,
                 translucent_rate: float = 0.1, clear_rate: float = 0.0,
                 place: Callable[[np.random.Generator, float], tuple[float, float]] | None = None,
                 ) -> list[DieSpec]:
    """``count`` dice placed on a ``w x h`` frame, touching allowed, not overlapping;
    ``clear_rate`` of them casino-style see-through dice (:func:`clear_spec`). ``place(rng,
    edge)``, if given, chooses the centre of each die that does not touch a previous one
    (:func:`board_places`: on the tiles and tokens of a board) instead of anywhere."""
    names = list(colors) if colors else list(COLORS)
    specs: list[DieSpec] = []
    tries = 0
    while len(specs) < count and tries < count * 40:
        tries += 1
        s = size_px * rng.uniform(0.85, 1.15)
        if specs and rng.random() < 0.35:  # touch a previous die
            other = specs[int(rng.integers(len(specs)))]
            ang = rng.uniform(0, 2 * math.pi)
            c = (other.center[0] + math.cos(ang) * (other.size + s) * 0.55,
                 other.center[1] + math.sin(ang) * (other.size + s) * 0.55)
        elif place is not None:
            c = place(rng, s)
        else:
            c = (rng.uniform(-0.2 * s, w + 0.2 * s), rng.uniform(0, h + 0.3 * s))
        if any(math.hypot(c[0] - o.center[0], c[1] - o.center[1]) < 0.75 * (s + o.size) * 0.72
               for o in specs):
            continue
        name = str(rng.choice(names))
        body, pips = COLORS[name]
        pip = pips[int(rng.integers(len(pips)))]
        body_j = tuple(int(np.clip(b + rng.normal(0, 12), 0, 255)) for b in body)
        cocked = rng.random() < cocked_rate
        specs.append(DieSpec(
            value=int(rng.integers(1, 7)), color=name, center=c, size=s,
            yaw_deg=float(rng.uniform(0, 90)),
            cock_deg=float(rng.uniform(18, 40) * rng.choice([-1, 1])) if cocked else 0.0,
            body=body_j, pip=pip, translucent=bool(rng.random() < translucent_rate
                                                   and name not in ("white", "ivory", "black")),
            glossy=bool(rng.random() < 0.6), pip_radius=float(rng.uniform(0.07, 0.145)),
            big_one=bool(rng.random() < 0.15), face_turn=int(rng.integers(0, 4)),
            rounding=float(rng.choice([0.0, rng.uniform(0.04, 0.2)], p=[0.15, 0.85])),
            logo=bool(rng.random() < 0.2)))
        if clear_rate > 0 and rng.random() < clear_rate:
            specs[-1] = replace(clear_spec(rng, c, s), cock_deg=specs[-1].cock_deg)
    return specs


def board_places(layout: dict[str, Any],
                 ) -> Callable[[np.random.Generator, float], tuple[float, float]]:
    """Where a die of edge ``s`` lies on a board drawn by :func:`draw_board` (its ``layout``):
    beside a number token, touching it or nearly (40%), partly over a token (15%), across a
    tile's edge or corner (25%), or anywhere on the board (20%); in the frame's pixels, the
    board foreshortened by the camera tilt (``layout["squash"]``)."""
    mask, r, squash = layout["mask"], layout["tile_radius"], layout["squash"]
    h, w = mask.shape
    tokens = [t for t in layout["tokens"] if 0 <= t[0] < w and 0 <= t[1] < h]  # in view
    tiles = [t for t in layout["tiles"] if 0 <= t[0] < w and 0 <= t[1] < h]

    def place(rng: np.random.Generator, s: float) -> tuple[float, float]:
        kind = rng.random()
        ang = rng.uniform(0, 2 * math.pi)
        if tokens and kind < 0.55:
            x, y, rx, ry = tokens[int(rng.integers(len(tokens)))]
            d = (rx + 0.5 * s) * rng.uniform(0.95, 1.4) if kind < 0.4 else rx * rng.uniform(0.2, 1)
            return x + math.cos(ang) * d, y + math.sin(ang) * d * ry / rx
        if tiles and kind < 0.8:
            x, y = tiles[int(rng.integers(len(tiles)))]
            d = r * rng.uniform(0.8, 1.02)
            return x + math.cos(ang) * d, y + math.sin(ang) * d * squash
        for _ in range(8):
            x, y = rng.uniform(0, w), rng.uniform(0, h)
            if mask[min(h - 1, int(y)), min(w - 1, int(x))] > 0.5:
                break
        return float(x), float(y)

    return place


# dark clear bodies of casino-style dice (BGR): red, blue, green, purple, smoke, amber
_CLEAR_BODIES = ((30, 30, 150), (140, 50, 15), (50, 110, 20), (110, 30, 90), (45, 40, 40),
                 (20, 90, 170))
_CLEAR_NAMES = ("red", "blue", "green", "purple", "black", "orange")


def clear_spec(rng: np.random.Generator, center: tuple[float, float], size: float) -> DieSpec:
    """A casino-style die: a dark see-through body (the far faces' pips show through), large
    flush white pips, sharp edges, often a ring of marks around the 1."""
    k = int(rng.integers(len(_CLEAR_BODIES)))
    body = np.asarray(_CLEAR_BODIES[k], float) * rng.uniform(0.45, 1.1) + rng.normal(0, 8, 3)
    pip = np.clip(rng.uniform(215, 250) + rng.normal(0, 6, 3), 0, 255)
    return DieSpec(
        value=int(rng.integers(1, 7)), color=_CLEAR_NAMES[k], center=center, size=size,
        yaw_deg=float(rng.uniform(0, 90)),
        body=tuple(int(v) for v in np.clip(body, 0, 255)),  # type: ignore[arg-type]
        pip=tuple(int(v) for v in pip),  # type: ignore[arg-type]
        translucent=True, glossy=bool(rng.random() < 0.8),
        pip_radius=float(rng.uniform(0.1, 0.15)), big_one=bool(rng.random() < 0.6),
        face_turn=int(rng.integers(0, 4)),
        rounding=float(rng.choice([0.0, rng.uniform(0.02, 0.07)])),
        logo=bool(rng.random() < 0.7), see_through=float(rng.uniform(0.3, 0.7)))


def vivid_spec(rng: np.random.Generator, base: DieSpec) -> DieSpec:
    """A casino-style die (``base``, from :func:`clear_spec`) in a brighter look: a vivid,
    saturated clear body, pure white pips, the far faces' pips showing through nearly as
    bright as the near ones, a ring of letters around a big 1 and a maker's mark on the 2."""
    body = np.asarray(base.body, float)
    body = body * rng.uniform(90, 190) / max(float(body.max()), 1.0)
    return replace(base, body=tuple(int(v) for v in np.clip(body, 0, 255)),  # type: ignore[arg-type]
                   pip=tuple(int(v) for v in rng.uniform(238, 255, 3)),  # type: ignore[arg-type]
                   through_pip=float(rng.uniform(0.6, 0.95)),
                   see_through=float(rng.uniform(0.4, 0.75)),
                   pip_radius=float(rng.uniform(0.12, 0.18)),
                   pip_spread=float(rng.uniform(1.0, 1.22)), big_one=bool(rng.random() < 0.8),
                   one_scale=float(rng.uniform(1.1, 1.6)),
                   logo=bool(rng.random() < 0.85), ring_letters=bool(rng.random() < 0.7),
                   glossy=True)


def sharp_spec(rng: np.random.Generator, base: DieSpec) -> DieSpec:
    """A casino-style die (``base``, from :func:`clear_spec`) as a sharp, well-exposed photo
    shows it: a deep, fully saturated clear body (a dark smoke one stays dark and grey), pure
    white pips, the far faces' pips showing through only faintly, sharp edges, a big 1 inside
    a ring of letters or marks and a maker's mark on the 2. :func:`render_closeup` gives the
    close-up of such a die a photo's finish (:func:`_sharp_finish`) instead of the usual
    degradations."""
    hue = int(cv2.cvtColor(np.uint8([[base.body]]), cv2.COLOR_BGR2HSV)[0, 0, 0])
    if base.color == "black":
        sat, val = rng.uniform(0, 80), rng.uniform(12, 45)
    else:
        sat, val = rng.uniform(215, 255), rng.uniform(70, 180)
    body = cv2.cvtColor(np.uint8([[[hue, int(sat), int(val)]]]), cv2.COLOR_HSV2BGR)[0, 0]
    return replace(base, body=tuple(int(v) for v in body),  # type: ignore[arg-type]
                   pip=tuple(int(v) for v in rng.uniform(246, 255, 3)),  # type: ignore[arg-type]
                   through_pip=float(rng.uniform(0.15, 0.55)),
                   see_through=float(rng.uniform(0.45, 0.8)),
                   pip_radius=float(rng.uniform(0.12, 0.17)),
                   pip_spread=float(rng.uniform(1.0, 1.2)), big_one=bool(rng.random() < 0.8),
                   one_scale=float(rng.uniform(1.1, 1.8)), rounding=float(rng.uniform(0, 0.03)),
                   logo=bool(rng.random() < 0.85), ring_letters=bool(rng.random() < 0.7),
                   glossy=True)


def _sharp_finish(frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A sharp, well-exposed photo's finish (for :func:`sharp_spec`'s close-ups): a slight
    colour cast, an exposure that clips the white pips, more contrast, sometimes the camera's
    sharpening, little sensor noise and JPEG compression; no blur."""
    img = frame.astype(np.float32) * rng.uniform(0.92, 1.08, 3).astype(np.float32)
    img = img * rng.uniform(1.05, 1.5) + rng.uniform(-25, 5)
    img = (img - 128) * rng.uniform(1.0, 1.25) + 128
    if rng.random() < 0.3:
        img += rng.uniform(0.3, 0.8) * (img - cv2.GaussianBlur(img, (0, 0), 1.0))
    img += rng.normal(0, rng.uniform(0.5, 3.5), img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.7:
        out = jpeg_round_trip(out, int(rng.integers(55, 96)))
    return out


def render_closeup(rng: np.random.Generator, side: int, *, clear_rate: float = 0.5,
                   tilt_deg: tuple[float, float] = CLOSEUP_TILT, supersample: int = 1,
                   degrade: bool = True, vivid_rate: float = 0.0, print_rate: float = 0.0,
                   sharp_rate: float = 0.0, flush_rate: float = 0.0,
                   off_axis_rate: float = 0.0, stamp_rate: float = 0.0,
                   ) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """A ``side x side`` close-up of one die, with neighbours cut by the border.

    Two framings, drawn at random: a detector's crop (the square around the whole visible die,
    side faces included, 0.95-1.3 times its longer side: the die fills the frame, turned any
    way) or a photographer's close-up (1.4-2.4 die edges around the top face). ``clear_rate``
    of the main dice are casino-style see-through dice (:func:`clear_spec`), the others like
    :func:`random_specs`; up to four neighbours lie around it, often touching.
    Labels as :func:`render_scene`, each with ``"inside"``, the share of its top face inside the
    frame; a flat die less than ``READ_INSIDE`` (75%) inside is ``"unreadable"``: a reading
    of it is neither right nor wrong. Under ``CUT_INSIDE`` (40%) there is too little of it
    to learn from; the training script leaves those out. ``supersample`` k > 1
    draws the table at k times the resolution and shrinks the framed close-up (crisp edges,
    like a crop of a large photo). ``vivid_rate`` of the casino dice (the main die and its
    casino neighbours) take :func:`vivid_spec`'s brighter look; 0 (the default) draws nothing
    more from ``rng``, so close-ups rendered without it are the same as before it existed.
    ``print_rate`` of the casino dice (the main die and its casino neighbours) carry their
    maker's printing large and bold (``DieSpec.bold_print``); 0 (the default) likewise draws
    nothing. ``sharp_rate`` of the close-ups whose main die is a casino die show it and its
    casino neighbours as a sharp, well-exposed photo does (:func:`sharp_spec`, and the photo's
    finish instead of the usual degradations); 0 (the default) likewise draws nothing.
    ``flush_rate`` of the close-ups whose main die is a casino die draw it and its casino
    neighbours with flush pips (``DieSpec.flush_pips``: the side faces' pips as bright as the
    top's); 0 (the default) likewise draws nothing. ``off_axis_rate`` of the close-ups are
    crops of a photo taken close over the table, their die away from the lens axis
    (:func:`draw_dice`'s ``lens``, the axis 0.3-0.8 focal lengths off in any direction): it
    shows the side faces that face the axis, which can lie along any edge of its top face in
    the crop; 0 (the default) likewise draws nothing. ``stamp_rate`` of the close-ups whose
    main die is a casino die draw it and its casino neighbours stamped as precision casino dice
    are (``DieSpec.stamped``: a serial number on the 6, the casino's name in a fine ring round
    the 1); 0 (the default) likewise draws nothing.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels, origin top-left.

    Examples
    --------
    >>> image, labels = render_closeup(np.random.default_rng(0), 64)
    >>> image.shape, labels[0]["state"]
    ((64, 64, 3), 'flat')
    """
    k = max(1, int(supersample))
    big = 4 * side if k == 1 else 3 * side * k  # drawn on a larger table, then framed
    frame = random_background(rng, big, big)
    size = side * k * float(rng.uniform(0.6, 1.0))
    tilt = float(rng.uniform(*tilt_deg))
    centre = (big / 2, big / 2 + size * math.sin(math.radians(tilt)) * 0.9)
    vivid = sharp = False
    carried: dict[str, bool] = {}  # flags of the main die that its casino neighbours share
    if rng.random() < clear_rate:
        main = clear_spec(rng, centre, size)
        vivid = vivid_rate > 0 and rng.random() < vivid_rate
        if vivid:
            main = vivid_spec(rng, main)
        sharp = sharp_rate > 0 and rng.random() < sharp_rate
        if sharp:
            main = sharp_spec(rng, main)
        carried = {flag: True for flag, rate in (("bold_print", print_rate),
                                                 ("flush_pips", flush_rate),
                                                 ("stamped", stamp_rate))
                   if rate > 0 and rng.random() < rate}
        main = replace(main, **carried)
    else:
        main = replace(random_specs(rng, big, big, count=1, size_px=size, cocked_rate=0.03,
                                    translucent_rate=0.2)[0], center=centre, size=size)
    specs = [main]
    for _ in range(int(rng.integers(0, 5))):
        ang = rng.uniform(0, 2 * math.pi)
        s = size * rng.uniform(0.85, 1.15)
        dist = (size + s) * rng.uniform(0.55, 0.85)
        c = (centre[0] + math.cos(ang) * dist, centre[1] + math.sin(ang) * dist)
        if any(math.hypot(c[0] - o.center[0], c[1] - o.center[1]) < 0.5 * (s + o.size) * 1.1
               for o in specs):
            continue
        other = clear_spec(rng, c, s) if main.see_through and rng.random() < 0.8 else replace(
            random_specs(rng, big, big, count=1, size_px=s)[0], center=c, size=s)
        if vivid and other.see_through:
            other = vivid_spec(rng, other)
        if sharp and other.see_through:
            other = sharp_spec(rng, other)
        if other.see_through:
            other = replace(other, **carried)
        specs.append(other)
    az = rng.uniform(0, 2 * math.pi)
    light = (math.cos(az) * 0.6, math.sin(az) * 0.6, rng.uniform(0.5, 1.0))
    lens = None
    if off_axis_rate > 0 and rng.random() < off_axis_rate:
        focal = size * float(rng.uniform(6.0, 14.0))
        ang, dist = rng.uniform(0, 2 * math.pi), focal * float(rng.uniform(0.3, 0.8))
        lens = (focal, centre[0] - math.cos(ang) * dist, centre[1] - math.sin(ang) * dist)
    labels = draw_dice(frame, specs, rng, tilt_deg=tilt, light=light,
                       shadows=float(rng.uniform(0.15, 0.6)), glare=float(rng.uniform(0, 0.5)),
                       lens=lens)
    if rng.random() < 0.6:  # a detector's crop around the whole die
        x0, y0, x1, y1 = labels[0]["die_bbox"]
        span = max(x1 - x0, y1 - y0) * float(rng.uniform(0.95, 1.3))
    else:
        x0, y0, x1, y1 = labels[0]["bbox"]
        span = size * float(rng.uniform(1.4, 2.4))
    cx = (x0 + x1) / 2 + rng.normal(0, 0.04) * span
    cy = (y0 + y1) / 2 + rng.normal(0, 0.04) * span
    f = side * k / span
    m = np.float32([[f, 0, side * k / 2 - f * cx], [0, f, side * k / 2 - f * cy]])
    out = cv2.warpAffine(frame, m, (side * k, side * k), flags=cv2.INTER_AREA if f < 1
                         else cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    if k > 1:
        out = cv2.resize(out, (side, side), interpolation=cv2.INTER_AREA)
    f /= k

    def framed(b: list[float]) -> list[float]:   # a table box in the close-up's pixels
        return [(v - cx) * f + side / 2 if j % 2 == 0 else (v - cy) * f + side / 2
                for j, v in enumerate(b)]

    kept = []
    for lb in labels:
        if lb["state"] == "flat" and lb.get("visible", 1.0) < 0.6:
            continue
        box = framed(lb["bbox"])
        area = max((box[2] - box[0]) * (box[3] - box[1]), 1e-6)
        lb["bbox"] = _clip_box(box, side, side)
        b = lb["bbox"]
        inside = (b[2] - b[0]) * (b[3] - b[1]) / area
        lb["inside"] = round(min(1.0, inside * lb.get("inside", 1.0)), 3)
        lb["die_bbox"] = _clip_box(framed(lb["die_bbox"]), side, side)
        if "quad" in lb:
            lb["quad"] = [[round((x - cx) * f + side / 2, 2), round((y - cy) * f + side / 2, 2)]
                          for x, y in lb["quad"]]
        if b[2] - b[0] < 3 or b[3] - b[1] < 3:
            continue
        if lb["inside"] < READ_INSIDE and lb["state"] == "flat":
            lb["state"], lb["value"] = "unreadable", None
        lb["hand"] = False
        kept.append(lb)
    if degrade:
        out = _sharp_finish(out, rng) if sharp else _degrade(out, rng)
    return out, kept


WIDE_FOV_DEG = (50.0, 85.0)  # horizontal field of view of webcams and phone cameras


def wide_lens(rng: np.random.Generator, width: int, height: int,
              ) -> tuple[float, float, float]:
    """A wide-angle lens for a ``width x height`` scene: ``(focal, cx, cy)`` in pixels.

    The scene is the whole photo or a part of it (a photo 1-2 times as wide): the lens's
    horizontal field of view over the whole photo is drawn from :data:`WIDE_FOV_DEG`, and its
    axis, the photo's centre, from anywhere that keeps the scene inside the photo."""
    k = float(rng.uniform(1.0, 2.0))
    fov = math.radians(float(rng.uniform(*WIDE_FOV_DEG)))
    focal = k * width / 2 / math.tan(fov / 2)
    cx = width / 2 + float(rng.uniform(-0.5, 0.5)) * (k - 1) * width
    cy = height / 2 + float(rng.uniform(-0.5, 0.5)) * (k - 1) * height
    return focal, cx, cy


def render_scene(rng: np.random.Generator, *, width: int = 640, height: int = 480,
                 count: tuple[int, int] = (1, 10), size_px: tuple[float, float] = (14.0, 90.0),
                 tilt_deg: tuple[float, float] = (0.0, 65.0), hand_rate: float = 0.15,
                 colors: Sequence[str] | None = None, cocked_rate: float = COCKED_RATE,
                 translucent_rate: float = 0.1, stretch: tuple[float, float] = (1.0, 1.0),
                 distractor_rate: float = 0.0, extras: dict[str, Any] | None = None,
                 degrade: bool = True, clear_rate: float = 0.0,
                 stone_rate: float = 0.0, board_rate: float = 0.0,
                 board_dice_rate: float = 0.0, desk_rate: float = 0.0,
                 wide_rate: float = 0.0, sheet_rate: float = 0.0, hand_variety: float = 0.0,
                 ) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Render one labelled table scene.

    Parameters
    ----------
    rng : seeded generator; the same seed gives the same scene.
    width, height : image size in pixels.
    count : inclusive range of the number of dice.
    size_px : range of the die edge length in pixels.
    tilt_deg : range of the camera tilt from vertical.
    hand_rate : probability of a hand entering the frame.
    hand_variety : share of those hands drawn in the varied styles of :func:`_draw_varied_hand`
        (open hand, fist, pointing finger, holding a pen, fingertips at the edge; sleeves,
        pale to very dark skin, side lighting, motion blur) instead of the one flat style. At
        its default 0 it draws nothing from ``rng``: scenes are the same as before it existed.
    colors : body colour names to draw from (default: all of :data:`COLORS`).
    cocked_rate, translucent_rate : share of cocked and translucent dice.
    clear_rate : share of casino-style see-through dice (:func:`clear_spec`).
    stretch : range of a horizontal stretch of the finished image (exporters that squash
        photos to a square); ``(1, 1)`` keeps the camera's aspect.
    distractor_rate : probability of look-alikes on the table that are not dice
        (:func:`draw_distractors`): round and hexagonal number tokens, board tiles carrying a
        token, small printed square tiles, plain cubes, meeples, coins, buttons, dark blocks.
    stone_rate : probability of a stone table top (:func:`stone_background`: granite or
        terrazzo, grains of the size of a small die's pips) instead of :func:`random_background`.
    board_rate : probability of a game board of land tiles with number tokens under the dice
        (:func:`draw_board`); its tokens count among the look-alikes in ``extras``.
    board_dice_rate : probability of a scene whose dice lie ON a game board: the board
        (:func:`draw_board`, tiles 1.2-2.4 times the usual size) reaches the frame's corners and
        the dice are placed beside and partly over its number tokens and across its tiles'
        edges (:func:`board_places`); its tokens count among the look-alikes in ``extras``.
    desk_rate : probability that the scene's look-alikes also include desk clutter
        (:data:`DESK_KINDS`: cables, keyboard keys).
    wide_rate : probability that the dice are seen through a wide-angle lens
        (:func:`wide_lens`): each die along its own ray, so dice away from the lens axis show
        the side faces that face it, as in webcam and phone photos.
    sheet_rate : probability of a scene (not on a board) whose dice lie on a sheet of paper on
        the table (:func:`draw_sheet`: a score sheet, notes, a pale card), a pale field
        around them all.
        The six rates default to 0, and then draw nothing from ``rng``: scenes rendered
        without them are the same as before they existed.
    extras : if given, filled with ``{"distractors": [boxes], "hand_mask": mask}``: the boxes
        of the look-alikes and the hand's coverage ``(height, width)`` in [0, 1] (``None``
        without a hand).
    degrade : add lighting gradients, blur, sensor noise and JPEG artefacts.

    Returns
    -------
    image : BGR ``uint8`` ``(height, width, 3)``.
    labels : one dict per die, as :func:`draw_dice` returns them, plus ``"hand": bool`` in
        each label telling whether a hand was drawn in the scene.

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels, origin top-left.

    Examples
    --------
    >>> import numpy as np
    >>> image, labels = render_scene(np.random.default_rng(1), width=160, height=120,
    ...                              count=(2, 2), size_px=(30, 30))
    >>> image.shape, len(labels)
    ((120, 160, 3), 2)
    """
    sx = float(math.exp(rng.uniform(math.log(stretch[0]), math.log(stretch[1]))))
    out_width = width
    width = max(8, round(width / sx))
    if stone_rate > 0 and rng.random() < stone_rate:
        frame = stone_background(rng, height, width)
    else:
        frame = random_background(rng, height, width)
    n = int(rng.integers(count[0], count[1] + 1))
    size = float(math.exp(rng.uniform(math.log(size_px[0]), math.log(size_px[1]))))
    on_board = board_dice_rate > 0 and rng.random() < board_dice_rate
    boxes = []
    place = None
    if on_board:  # the board first, then the dice on it
        tilt = float(rng.uniform(*tilt_deg))
        layout: dict[str, Any] = {}
        boxes = draw_board(frame, rng, size * rng.uniform(1.2, 2.4), tilt, cover=True,
                           layout=layout)
        place = board_places(layout)
    elif sheet_rate > 0 and rng.random() < sheet_rate:  # the sheet first, the dice on it
        tilt = float(rng.uniform(*tilt_deg))
        place = draw_sheet(frame, rng, tilt)
    specs = random_specs(rng, height, width, count=n, size_px=size, colors=colors,
                         cocked_rate=cocked_rate, translucent_rate=translucent_rate,
                         clear_rate=clear_rate, place=place)
    if place is None:  # drawn after the dice, as before boards and sheets existed
        tilt = float(rng.uniform(*tilt_deg))
    az = rng.uniform(0, 2 * math.pi)
    light = (math.cos(az) * 0.6, math.sin(az) * 0.6, rng.uniform(0.5, 1.0))
    if rng.random() < 0.3:  # one die's yaw shared by all (dice pushed into a row)
        yaw = float(rng.uniform(0, 90))
        specs = [replace(s, yaw_deg=yaw + float(rng.normal(0, 4))) for s in specs]
    board = on_board
    if not on_board and board_rate > 0 and rng.random() < board_rate:
        boxes = draw_board(frame, rng, size, tilt)
        board = True
    if board:
        order = rng.permutation(len(boxes))
        boxes = [boxes[k] for k in order]
    kinds = DISTRACTOR_KINDS
    if desk_rate > 0 and rng.random() < desk_rate:
        kinds = DISTRACTOR_KINDS + DESK_KINDS
    boxes = (draw_distractors(frame, rng, size, tilt, kinds=kinds)
             if rng.random() < distractor_rate else []) + boxes
    if extras is not None:
        extras["distractors"] = boxes
    lens = wide_lens(rng, width, height) if wide_rate > 0 and rng.random() < wide_rate else None
    labels = draw_dice(frame, specs, rng, tilt_deg=tilt, light=light,
                       shadows=float(rng.uniform(0.15, 0.6)), glare=float(rng.uniform(0, 0.7)),
                       lens=lens)
    hand = bool(rng.random() < hand_rate)
    mask = None
    if hand:
        scale = size * rng.uniform(1.5, 3.0)
        if hand_variety > 0 and rng.random() < hand_variety:
            mask = _draw_varied_hand(frame, rng, scale)
        else:
            mask = _draw_hand(frame, rng, scale=scale)
        labels = _mark_covered(mask, labels)
    for label in labels:
        label["hand"] = hand
    if out_width != width:
        frame = cv2.resize(frame, (out_width, height), interpolation=cv2.INTER_AREA)
        if mask is not None:
            mask = cv2.resize(mask, (out_width, height), interpolation=cv2.INTER_AREA)
        f = out_width / width
        for lb in labels:
            for key in ("bbox", "die_bbox"):
                b = lb[key]
                lb[key] = [round(b[0] * f, 1), b[1], round(b[2] * f, 1), b[3]]
            if "quad" in lb:
                lb["quad"] = [[round(x * f, 2), y] for x, y in lb["quad"]]
    if extras is not None:
        extras["hand_mask"] = mask
    if degrade:
        frame = _degrade(frame, rng)
    keep = [lb for lb in labels if lb["bbox"][2] - lb["bbox"][0] >= 3
            and lb["bbox"][3] - lb["bbox"][1] >= 3]
    return frame, keep


DISTRACTOR_KINDS = ("token", "board_tile", "square_tile", "cube", "meeple", "coin", "button",
                    "block")
# desk clutter beside a game, drawn only when asked for (render_scene's desk_rate)
DESK_KINDS = ("cable", "keys")


def _ink(rng: np.random.Generator, light: bool) -> tuple[float, float, float]:
    """A printing colour that contrasts with a light (``light``) or dark ground."""
    if light:
        dark = rng.uniform(0, 70, 3)
        if rng.random() < 0.35:  # red or blue print
            dark[int(rng.choice([0, 2]))] = rng.uniform(120, 200)
        return tuple(float(v) for v in dark)
    return tuple(float(v) for v in rng.uniform(180, 255, 3))


def _print_marks(patch: np.ndarray, rng: np.random.Generator, cx: float, cy: float,
                 r: float, ink: tuple[float, float, float]) -> None:
    """Print a number (often with a row of dots under it), a letter, a symbol or a ring of
    dots inside the radius ``r`` around ``(cx, cy)``: markings that are no die's pips."""
    kind = rng.choice(["number", "letter", "ring", "none"], p=[0.55, 0.2, 0.15, 0.1])
    if kind in ("number", "letter"):
        text = (str(int(rng.integers(1, 13))) if kind == "number"
                else str(rng.choice(list("ABCDEGHKMPRSTXYZ#%&@*+?"))))
        font = int(rng.choice([cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX,
                               cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX]))
        scale = r * rng.uniform(0.7, 1.2) / 22.0
        thick = max(1, int(r * rng.uniform(0.08, 0.18)))
        (tw, th), _ = cv2.getTextSize(text, font, scale, thick)
        dots = int(rng.integers(0, 6)) if kind == "number" and rng.random() < 0.7 else 0
        ty = cy + th / 2 - (r * 0.15 if dots else 0)
        cv2.putText(patch, text, (int(cx - tw / 2), int(ty)), font, scale, ink, thick,
                    cv2.LINE_AA)
        gap, dr = r * rng.uniform(0.14, 0.22), max(1.0, r * rng.uniform(0.05, 0.09))
        for k in range(dots):
            cv2.circle(patch, (int(cx + (k - (dots - 1) / 2) * gap), int(ty + r * 0.3)),
                       round(dr), ink, -1, cv2.LINE_AA)
    elif kind == "ring":
        n, rad = int(rng.integers(7, 13)), r * rng.uniform(0.45, 0.7)
        dr = max(1, int(r * rng.uniform(0.06, 0.12)))
        a0 = rng.uniform(0, 2 * math.pi)
        for k in range(n):
            a = a0 + 2 * math.pi * k / n
            cv2.circle(patch, (int(cx + rad * math.cos(a)), int(cy + rad * math.sin(a))), dr,
                       ink, -1, cv2.LINE_AA)


def _polygon(cx: float, cy: float, r: float, sides: int, turn: float) -> np.ndarray:
    a = turn + np.arange(sides) * 2 * math.pi / sides
    return np.stack([cx + r * np.cos(a), cy + r * np.sin(a)], 1)


def _paste(frame: np.ndarray, patch: np.ndarray, alpha: np.ndarray, cx: float, cy: float,
           squash: float, turn: float, shadow: float) -> list[float] | None:
    """Lay a flat ``patch`` (float BGR, ``alpha`` in [0, 1]) on the table around ``(cx, cy)``:
    turned by ``turn`` degrees, foreshortened vertically by ``squash`` (the camera's tilt),
    with a soft shadow of strength ``shadow``; return its box in the frame."""
    h, w = frame.shape[:2]
    ps = patch.shape[0]
    rot = cv2.getRotationMatrix2D((ps / 2, ps / 2), turn, 1.0)
    m = np.array([[1.0, 0, 0], [0, squash, 0]]) @ np.vstack([rot, [0, 0, 1]])
    m[0, 2] += cx - ps / 2
    m[1, 2] += cy - ps * squash / 2
    a = cv2.warpAffine(alpha.astype(np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    ys, xs = np.nonzero(a > 0.5)
    if len(xs) == 0:
        return None
    img = frame.astype(np.float32)
    if shadow > 0:
        shift = np.float32([[1, 0, max(1, int(ps * 0.03))], [0, 1, max(1, int(ps * 0.04))]])
        sm = cv2.GaussianBlur(cv2.warpAffine(a, shift, (w, h)), (0, 0), max(1.0, ps * 0.03))
        img *= (1 - shadow * sm)[..., None]
    p = cv2.warpAffine(patch.astype(np.float32), m, (w, h), flags=cv2.INTER_LINEAR)
    img = img * (1 - a[..., None]) + p * a[..., None]
    frame[:] = np.clip(img, 0, 255).astype(np.uint8)
    return [float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)]


def _flat_piece(rng: np.random.Generator, kind: str, s: float,
                ) -> tuple[np.ndarray, np.ndarray]:
    """A flat look-alike seen from above, about ``s`` pixels across, in a square patch:
    ``(patch (P, P, 3) float, alpha (P, P))``."""
    ps = max(8, math.ceil(s * 1.2))
    c, r = ps / 2, s / 2
    patch = np.empty((ps, ps, 3), np.float32)
    alpha = np.zeros((ps, ps), np.float32)
    ground = rng.uniform(20, 250, 3)
    if kind in ("token", "board_tile") and rng.random() < 0.6:
        ground = rng.uniform(175, 245) + rng.normal(0, 12, 3)  # cream / pale card
    patch[:] = ground
    if kind == "board_tile":  # a printed land tile: a textured hexagon or square
        sides = 6 if rng.random() < 0.75 else 4
        pts = _polygon(c, c, r, sides, rng.uniform(0, math.pi))
        tex = rng.uniform(30, 220, 3)
        patch[:] = tex
        patch *= (1 + 0.25 * _noise_field(rng, ps, ps, rng.uniform(2, 8)))[..., None]
        for _ in range(int(rng.integers(0, 12))):  # printed strokes, fields, trees
            q = rng.uniform(0, ps, 2)
            cv2.line(patch, (int(q[0]), int(q[1])),
                     (int(q[0] + rng.normal(0, r / 3)), int(q[1] + rng.normal(0, r / 3))),
                     tuple(float(v) for v in rng.uniform(0, 255, 3)),
                     max(1, int(r * rng.uniform(0.02, 0.08))), cv2.LINE_AA)
        cv2.fillConvexPoly(alpha, pts.astype(np.int32), 1.0, cv2.LINE_AA)
        cv2.polylines(patch, [pts.astype(np.int32)], True,
                      tuple(float(v) for v in rng.uniform(20, 230, 3)),
                      max(1, int(r * 0.06)), cv2.LINE_AA)
        if rng.random() < 0.8:  # a number token in its middle
            tr = r * rng.uniform(0.3, 0.5)
            cv2.circle(patch, (int(c), int(c)), int(tr),
                       tuple(float(v) for v in rng.uniform(180, 245) + rng.normal(0, 10, 3)),
                       -1, cv2.LINE_AA)
            _print_marks(patch, rng, c, c, tr, _ink(rng, True))
        return patch, alpha
    if kind == "token":  # a round or hexagonal number token
        if rng.random() < 0.65:
            cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        else:
            pts = _polygon(c, c, r, 6, rng.uniform(0, math.pi))
            cv2.fillConvexPoly(alpha, pts.astype(np.int32), 1.0, cv2.LINE_AA)
        if rng.random() < 0.5:
            cv2.circle(patch, (int(c), int(c)), int(r * rng.uniform(0.8, 0.92)),
                       _ink(rng, float(ground.mean()) > 120), max(1, int(r * 0.05)),
                       cv2.LINE_AA)
        _print_marks(patch, rng, c, c, r * 0.8, _ink(rng, float(ground.mean()) > 120))
    elif kind == "square_tile":  # a small printed square tile, corners often rounded
        half = r * 0.9
        rr = half * rng.uniform(0, 0.35)
        cv2.rectangle(alpha, (int(c - half + rr), int(c - half)),
                      (int(c + half - rr), int(c + half)), 1.0, -1)
        cv2.rectangle(alpha, (int(c - half), int(c - half + rr)),
                      (int(c + half), int(c + half - rr)), 1.0, -1)
        for dx in (-1, 1):
            for dy in (-1, 1):
                cv2.circle(alpha, (int(c + dx * (half - rr)), int(c + dy * (half - rr))),
                           int(rr), 1.0, -1, cv2.LINE_AA)
        _print_marks(patch, rng, c, c, half, _ink(rng, float(ground.mean()) > 120))
    elif kind == "coin":  # metal disc, rim, embossed mark, light from one side
        metal = np.array(rng.choice([[60, 160, 200], [180, 180, 185], [70, 110, 170],
                                     [40, 120, 160]]), np.float32) * rng.uniform(0.7, 1.15)
        yy, xx = np.mgrid[0:ps, 0:ps].astype(np.float32)
        ang = rng.uniform(0, 2 * math.pi)
        grad = ((xx - c) * math.cos(ang) + (yy - c) * math.sin(ang)) / max(r, 1.0)
        patch[:] = metal * (1 + 0.25 * grad)[..., None]
        cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        cv2.circle(patch, (int(c), int(c)), int(r * 0.85), tuple(float(v) for v in metal * 0.7),
                   max(1, int(r * 0.05)), cv2.LINE_AA)
        _print_marks(patch, rng, c, c, r * 0.7, tuple(float(v) for v in metal * 0.6))
    else:  # "button": a disc with a rim and two or four holes
        cv2.circle(alpha, (int(c), int(c)), int(r), 1.0, -1, cv2.LINE_AA)
        cv2.circle(patch, (int(c), int(c)), int(r * 0.75),
                   tuple(float(v) for v in ground * 0.75), max(1, int(r * 0.08)), cv2.LINE_AA)
        holes = int(rng.choice([2, 4]))
        gap, hr = r * rng.uniform(0.15, 0.25), max(1, int(r * rng.uniform(0.07, 0.12)))
        a0 = rng.uniform(0, math.pi)
        for k in range(holes):
            a = a0 + 2 * math.pi * k / holes
            cv2.circle(patch, (int(c + gap * math.cos(a)), int(c + gap * math.sin(a))), hr,
                       tuple(float(v) for v in ground * 0.25), -1, cv2.LINE_AA)
    return patch, alpha


def _meeple(rng: np.random.Generator, s: float) -> tuple[np.ndarray, np.ndarray]:
    """A flat game figure (head, arms, legs) in one colour with a darker outline."""
    ps = max(8, math.ceil(s * 1.2))
    c = ps / 2
    alpha = np.zeros((ps, ps), np.float32)
    u = s / 2
    body = np.array([[c - u * 0.9, c - u * 0.1], [c - u * 0.35, c - u * 0.35],
                     [c + u * 0.35, c - u * 0.35], [c + u * 0.9, c - u * 0.1],
                     [c + u * 0.35, c + u * 0.15], [c + u * 0.7, c + u * 0.95],
                     [c + u * 0.1, c + u * 0.95], [c, c + u * 0.55], [c - u * 0.1, c + u * 0.95],
                     [c - u * 0.7, c + u * 0.95], [c - u * 0.35, c + u * 0.15]], np.float32)
    cv2.fillPoly(alpha, [body.astype(np.int32)], 1.0, cv2.LINE_AA)
    cv2.circle(alpha, (int(c), int(c - u * 0.6)), int(u * 0.35), 1.0, -1, cv2.LINE_AA)
    color = rng.uniform(20, 240, 3)
    patch = np.empty((ps, ps, 3), np.float32)
    patch[:] = color
    edge = cv2.morphologyEx((alpha > 0.5).astype(np.uint8), cv2.MORPH_GRADIENT,
                            np.ones((3, 3), np.uint8)) > 0
    patch[edge] *= 0.6
    return patch, alpha


def draw_distractors(frame: np.ndarray, rng: np.random.Generator, size: float,
                     tilt_deg: float = 0.0, count: tuple[int, int] = (1, 9),
                     kinds: Sequence[str] = DISTRACTOR_KINDS) -> list[list[float]]:
    """Draw things on a table that are not dice, in place; return their boxes.

    The kinds (:data:`DISTRACTOR_KINDS`) are look-alikes with random shapes, colours and
    markings: round and hexagonal number tokens (a printed number, often with a row of dots),
    board tiles (a textured hexagon or square, usually with a token in the middle), small
    printed square tiles, plain cubes without pips (:attr:`DieSpec.blank`), flat meeples, coins,
    buttons with two or four holes, dark blocks (plugs, game pieces). :data:`DESK_KINDS` are
    desk clutter, drawn only when ``kinds`` names them: a cable (a thick curve, often with a
    ferrite bead) and a patch of keyboard keys (rounded squares printed with letters); each
    gives the boxes of up to three die-sized parts of it (a bead, a stretch, single keys). Flat
    pieces are foreshortened by the camera tilt ``tilt_deg`` like the table. ``size`` is the
    scene's die edge in pixels; pieces are 0.6-1.4 times it (board tiles 1.6-3 times).

    Convention: boxes ``[x0, y0, x1, y1]`` in pixels of ``frame``, origin top-left.

    Examples
    --------
    >>> frame = np.full((120, 160, 3), 128, np.uint8)
    >>> boxes = draw_distractors(frame, np.random.default_rng(0), 30.0, kinds=["coin"])
    >>> all(x0 < x1 and y0 < y1 for x0, y0, x1, y1 in boxes)
    True
    """
    _check_frame(frame)
    unknown = set(kinds) - set(DISTRACTOR_KINDS) - set(DESK_KINDS)
    if unknown or not kinds:
        raise ValueError(f"kinds must be among {DISTRACTOR_KINDS + DESK_KINDS}, "
                         f"got {list(kinds)}")
    h, w = frame.shape[:2]
    squash = math.cos(math.radians(float(tilt_deg)))
    boxes = []
    for _ in range(int(rng.integers(count[0], count[1] + 1))):
        kind = str(rng.choice(list(kinds)))
        s = size * rng.uniform(0.6, 1.4) * (rng.uniform(1.6, 3.0) if kind == "board_tile" else 1)
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        box: list[float] | None
        if kind in DESK_KINDS:
            draw = _cable if kind == "cable" else _keys
            boxes.extend(b for b in draw(frame, rng, s, cx, cy, squash)
                         if b[0] < b[2] and b[1] < b[3])
            continue
        if kind == "block":  # a dark block, e.g. a plug or a game piece
            pts = cv2.boxPoints(((cx, cy), (s * rng.uniform(0.5, 1.2), s * rng.uniform(0.5, 1.5)),
                                 rng.uniform(0, 90)))
            v = rng.uniform(10, 70)
            cv2.fillConvexPoly(frame, pts.astype(np.int32), (v, v, v + rng.uniform(0, 15)),
                               cv2.LINE_AA)
            box = [float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()),
                   float(pts[:, 1].max())]
        elif kind == "cube":  # a wooden or plastic cube without pips
            body = tuple(int(v) for v in rng.uniform(20, 240, 3))
            spec = DieSpec(value=1, color="grey", center=(cx, cy), size=s * 0.8,
                           yaw_deg=float(rng.uniform(0, 90)), body=body,  # type: ignore[arg-type]
                           glossy=bool(rng.random() < 0.3),
                           rounding=float(rng.uniform(0.0, 0.15)), blank=True)
            lb = draw_dice(frame, [spec], rng, tilt_deg=tilt_deg,
                           shadows=float(rng.uniform(0.1, 0.5)), glare=0.2)[0]
            box = lb["die_bbox"]
        else:
            patch, alpha = (_meeple(rng, s) if kind == "meeple" else _flat_piece(rng, kind, s))
            box = _paste(frame, patch, alpha, cx, cy, squash * rng.uniform(0.9, 1.1),
                         float(rng.uniform(0, 360)), float(rng.uniform(0.0, 0.4)))
        if box is not None and box[0] < box[2] and box[1] < box[3]:
            boxes.append([float(v) for v in box])
    return boxes


def _cable(frame: np.ndarray, rng: np.random.Generator, s: float, cx: float, cy: float,
           squash: float) -> list[list[float]]:
    """A cable across the table through ``(cx, cy)``: a smooth thick curve (0.12-0.4 die
    edges), dark, grey or white, with a highlight along it, often a ferrite bead; the boxes
    of the bead and of a die-sized stretch of the curve."""
    h, w = frame.shape[:2]
    n = int(rng.integers(3, 6))
    ang = rng.uniform(0, 2 * math.pi)
    length = s * rng.uniform(4, 12)
    t = np.linspace(-0.5, 0.5, n)
    knots = np.stack([cx + np.cos(ang) * t * length + rng.normal(0, s, n),
                      cy + (np.sin(ang) * t * length + rng.normal(0, s, n)) * squash], 1)
    u = np.linspace(0, n - 1, 24 * n)
    pts = np.stack([np.interp(u, np.arange(n), knots[:, k]) for k in (0, 1)], 1)
    kernel = np.exp(-np.linspace(-2, 2, 25) ** 2)  # round the corners of the polyline
    padded = np.pad(pts, ((12, 12), (0, 0)), mode="edge")
    pts = np.stack([np.convolve(padded[:, k], kernel / kernel.sum(), "valid") for k in (0, 1)],
                   1).astype(np.float32)
    v = float(rng.choice([rng.uniform(10, 60), rng.uniform(120, 235)], p=[0.75, 0.25]))
    colour = (v, v, v + rng.uniform(-8, 8))
    thick = max(2, int(s * rng.uniform(0.12, 0.4)))
    poly = np.round(pts * 16).astype(np.int32)
    cv2.polylines(frame, [poly], False, tuple(c * 0.6 for c in colour), thick + 2,
                  cv2.LINE_AA, 4)
    cv2.polylines(frame, [poly], False, colour, thick, cv2.LINE_AA, 4)
    cv2.polylines(frame, [poly], False, tuple(min(255.0, c * 1.6 + 30) for c in colour),
                  max(1, thick // 5), cv2.LINE_AA, 4)
    boxes = []
    k = int(rng.integers(len(pts)))
    px, py = float(pts[k, 0]), float(pts[k, 1])
    if rng.random() < 0.6:  # a ferrite bead: a thicker block on the cable
        d = pts[min(k + 3, len(pts) - 1)] - pts[max(k - 3, 0)]
        turn = math.degrees(math.atan2(float(d[1]), float(d[0])))
        blen, bw = s * rng.uniform(0.6, 1.2), thick * rng.uniform(1.8, 2.8)
        bead = cv2.boxPoints(((px, py), (blen, bw), turn))
        cv2.fillConvexPoly(frame, bead.astype(np.int32), tuple(c * 0.8 for c in colour),
                           cv2.LINE_AA)
        cv2.polylines(frame, [bead.astype(np.int32)], True, tuple(c * 0.5 for c in colour),
                      1, cv2.LINE_AA)
        boxes.append([float(bead[:, 0].min()), float(bead[:, 1].min()),
                      float(bead[:, 0].max()), float(bead[:, 1].max())])
    k = int(rng.integers(len(pts)))
    boxes.append([float(pts[k, 0] - s / 2), float(pts[k, 1] - s / 2),
                  float(pts[k, 0] + s / 2), float(pts[k, 1] + s / 2)])
    return [_clip_box(b, w, h) for b in boxes]


def _keys(frame: np.ndarray, rng: np.random.Generator, s: float, cx: float, cy: float,
          squash: float) -> list[list[float]]:
    """A patch of keyboard around ``(cx, cy)``: rows of rounded keys (0.35-0.8 die edges)
    printed with a letter or a symbol, dark on a silver deck or light on a dark one, turned
    and foreshortened like the table; the boxes of up to three single keys."""
    key = s * rng.uniform(0.35, 0.8)
    gap = key * rng.uniform(0.12, 0.35)
    cols, rows = int(rng.integers(4, 12)), int(rng.integers(2, 5))
    ps = int(max(cols, rows) * (key + gap) + 2 * gap) + 2
    dark_keys = rng.random() < 0.7
    deck = rng.uniform(120, 200) if dark_keys else rng.uniform(15, 60)
    patch = np.full((ps, ps, 3), deck, np.float32) + rng.normal(0, 5, 3).astype(np.float32)
    alpha = np.zeros((ps, ps), np.float32)
    face = rng.uniform(15, 55) if dark_keys else rng.uniform(190, 240)
    ink = rng.uniform(170, 240) if dark_keys else rng.uniform(20, 70)
    x0 = y0 = (ps - max(cols, rows) * (key + gap)) / 2
    y0 += (cols - rows) * (key + gap) / 2 if cols > rows else 0
    x0 += (rows - cols) * (key + gap) / 2 if rows > cols else 0
    rad = max(1, int(key * rng.uniform(0.08, 0.25)))
    centres = []
    for r in range(rows):
        shift = (r % 2) * key * rng.uniform(0, 0.5)
        for c in range(cols):
            kx, ky = x0 + c * (key + gap) + shift, y0 + r * (key + gap)
            if kx + key > ps:
                continue
            _fill_rounded(patch, (int(kx), int(ky)), (int(kx + key), int(ky + key)), rad,
                          (face,) * 3)
            glyph = str(rng.choice(list("QWERTYASDFGHZXCVBNM1234567890.,;/")))
            cv2.putText(patch, glyph, (int(kx + key * 0.2), int(ky + key * 0.55)),
                        cv2.FONT_HERSHEY_SIMPLEX, max(0.2, key / 60), (ink,) * 3,
                        1, cv2.LINE_AA)
            centres.append((kx + key / 2, ky + key / 2))
    deck_w = min(ps, int(x0 + cols * (key + gap) + key))
    deck_h = min(ps, int(y0 + rows * (key + gap)))
    cv2.rectangle(alpha, (max(0, int(x0 - gap)), max(0, int(y0 - gap))), (deck_w, deck_h),
                  1.0, -1)
    turn = float(rng.uniform(-25, 25) + rng.choice([0, 90]))
    box = _paste(frame, patch, alpha, cx, cy, squash, turn, float(rng.uniform(0, 0.3)))
    if box is None or not centres:
        return []
    # the chosen keys' boxes: their centres turned and foreshortened as _paste lays the patch
    rot = cv2.getRotationMatrix2D((ps / 2, ps / 2), turn, 1.0)
    h, w = frame.shape[:2]
    out = []
    for i in rng.choice(len(centres), size=min(3, len(centres)), replace=False):
        x, y = rot @ np.array([centres[i][0], centres[i][1], 1.0])
        x, y = x + cx - ps / 2, (y - ps / 2) * squash + cy
        out.append(_clip_box([x - key / 2, y - key * squash / 2, x + key / 2,
                              y + key * squash / 2], w, h))
    return out


def _mark_covered(mask: np.ndarray, labels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Dice a hand hides: mostly hidden ones are dropped, partly hidden ones are unreadable."""
    kept = []
    for lb in labels:
        x0, y0, x1, y1 = (int(v) for v in lb["bbox"])
        if x1 <= x0 or y1 <= y0:
            continue
        covered = float(mask[y0:y1, x0:x1].mean())
        if covered > 0.6:
            continue
        if covered > 0.15:
            lb["state"], lb["value"] = "unreadable", None
        kept.append(lb)
    return kept


def _motion_kernel(rng: np.random.Generator, k: int) -> np.ndarray:
    """A ``k`` x ``k`` motion-blur kernel: a line across its middle at a random angle, summing
    to 1."""
    kern = np.zeros((k, k), np.float32)
    kern[k // 2, :] = 1.0 / k
    m = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
    kern = cv2.warpAffine(kern, m, (k, k))
    kern /= max(float(kern.sum()), 1e-6)
    return kern


def _degrade(frame: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    h, w = frame.shape[:2]
    img = frame.astype(np.float32)
    # lighting: gradient, vignette, colour cast, exposure
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    grad = (xx * math.cos(ang) + yy * math.sin(ang)) / max(h, w)
    img *= (1 + rng.uniform(-0.35, 0.35) * (grad - grad.mean()))[..., None]
    img *= rng.uniform(0.85, 1.12, 3).astype(np.float32)
    img = img * rng.uniform(0.6, 1.25) + rng.uniform(-20, 20)
    img = np.clip(img, 0, 255)
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.4))
    if rng.random() < 0.15:  # motion blur
        img = cv2.filter2D(img, -1, _motion_kernel(rng, int(rng.integers(3, 8))))
    img += rng.normal(0, rng.uniform(0.5, 7.0), img.shape).astype(np.float32)
    out = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.6:
        out = jpeg_round_trip(out, int(rng.integers(35, 95)))
    return out
