"""Render the bundled demo: a looping table scene of a Doom Cat turn and a Doom Machine round.

Run ``python -m companion.demo.make_demo [--out DIR] [--check]`` from the repository root; it
writes ``demo.mp4`` (960x540, 10 fps, MPEG-4 part 2 via ``cv2.VideoWriter`` 'mp4v') and
``demo.json`` (the scene's ground truth: per-frame true readings and the events a perfect
reader and tracker emit) into ``companion/demo/``. The output is deterministic for a seed (same
library versions), and both files are committed: running and testing never need this script.

The scene (times at 10 fps; the video loops seamlessly, the card is wiped at the end):

1. Doom Cat: three white dice tumble in and settle on 3 5 5. A hand writes 5 in top box 0 of the
   sigil card (layout A), draws a line between candle 2 (a 3) and candle 7 (a 5), and crosses
   out candle 4 (the other 5). The hand sweeps the dice away.
2. Doom Machine: the five black dice of a new run tumble in and settle on 1 2 3 4 6. The 1 is
   picked up (the re-roll slot) and rolled again: 5. The hand clears the dice and wipes the card.

Dice are drawn with :func:`vision.render.dice.draw_dice` and the card with
:func:`vision.render.sigil.render_card` when those renderers are present, else with the simple
fallbacks below (``demo.json`` records which were used).

Convention: frame points are ``(x, y)`` pixels, origin top-left; card points are millimetres,
origin at the card's top-left corner; boxes are ``[x0, y0, x1, y1]``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.datafiles import DATA_DIR, read_json
from vision.readings import SigilState, TopBox

OUT_DIR = Path(__file__).resolve().parent
SEED = 6
FPS = 10
W, H = 960, 540
CARD_ID = "A"
LAYOUT = "A"
# The card's corners in the frame: top-left, top-right, bottom-right, bottom-left.
CARD_QUAD = np.array([[600, 58], [905, 70], [893, 500], [583, 488]], np.float32)
PX_PER_MM = 8.0  # resolution of the rectified card before it is warped into the frame
DIE_SIZE = 46.0

# ------------------------------------------------------------------------------ the script
CAT_DICE = [(3, "white", (170.0, 250.0)), (5, "white", (290.0, 330.0)),
            (5, "white", (400.0, 235.0))]
MACHINE_DICE = [(6, "black", (130.0, 190.0)), (2, "black", (245.0, 290.0)),
                (4, "black", (365.0, 200.0)), (1, "black", (470.0, 320.0)),
                (3, "black", (215.0, 420.0))]
REROLL_INDEX = 3  # the black 1
REROLLED = (5, "black", (420.0, 430.0))

S_BLANK = SigilState.of(LAYOUT)
S_DIGIT = SigilState.of(LAYOUT, top=[TopBox(5, False)] + [None] * 6)
S_LINE = SigilState.of(LAYOUT, lines=[(2, 7)], top=[TopBox(5, False)] + [None] * 6)
S_CROSS = SigilState.of(LAYOUT, lines=[(2, 7)], crossed=[4], top=[TopBox(5, False)] + [None] * 6)

# The script is written in "take" frames; HOLDS then keeps the still table on screen a little
# longer after some takes (the first is the take frame, the second how many more times it is
# shown), so that a pipeline reading only a few frames a second sees each result long enough.
HOLDS = {46: 5, 67: 5, 84: 5, 179: 5}
TAKES = 180
N_FRAMES = TAKES + sum(HOLDS.values())


def _take(frame: int) -> int:
    """The take frame shown at video frame ``frame``."""
    extra = 0
    for take, n in sorted(HOLDS.items()):
        if frame <= take + extra:
            break
        if frame <= take + extra + n:
            return take
        extra += n
    return frame - extra


def _first_frame(take: int) -> int:
    """The video frame where take frame ``take`` is first shown."""
    return take + sum(n for t, n in HOLDS.items() if t < take)


# Segments in takes: (first take, last take, what happens).
_SEGMENTS = [
    (0, 4, "idle"),
    (5, 12, "cat dice tumble in"),
    (13, 27, "cat dice at rest"),
    (28, 41, "write 5 in top box 0"),
    (42, 46, "idle"),
    (47, 62, "draw line 2-7"),
    (63, 67, "idle"),
    (68, 79, "cross candle 4"),
    (80, 84, "idle"),
    (85, 92, "sweep the dice away"),
    (93, 96, "idle"),
    (97, 104, "machine dice tumble in"),
    (105, 124, "machine dice at rest"),
    (125, 130, "pick up the 1 for the re-roll slot"),
    (131, 136, "the re-rolled die tumbles in"),
    (137, 154, "machine dice at rest"),
    (155, 162, "clear the dice"),
    (163, 176, "wipe the card"),
    (177, 179, "idle"),
]
# In video frames (holds included).
TIMELINE = [(_first_frame(a), _first_frame(b) + HOLDS.get(b, 0), what)
            for a, b, what in _SEGMENTS]

# What a reader + tracker emit per loop: kind, text, and the window of frame times (seconds
# from the loop's start) in which it comes: from the start of the action (a reader may see a
# stroke before the hand has left) to a second after the next event's action starts (a slower
# pipeline votes later). The ground truth through the trackers lands inside; so does the real
# pipeline reading one frame in three.
EVENTS = [
    ("roll", "roll settled: 3 5 5", 0.5, 3.8),
    ("digit", "digit 5 written in top box 1 on card A", 2.8, 6.2),
    ("line", "new line left 3 – lower 5 on card A", 5.2, 8.8),
    ("crossed", "candle upper 5 crossed on card A", 7.8, 12.2),
    ("roll", "roll settled: 1 2 3 4 6", 11.2, 15.0),
    ("reroll", "re-roll settled: 5 (was 1); dice now 2 3 4 5 6", 14.0, 18.8),
    ("erased", "card A wiped", 17.8, 20.0),
]


@dataclass
class Hand:
    """A hand in the frame: the fingertip (pen tip) and the direction the arm comes from."""

    tip: tuple[float, float]
    arm_angle: float = 60.0  # degrees; the arm runs from the tip towards this direction
    pen: bool = True


@dataclass
class DieDraw:
    value: int
    color: str
    center: tuple[float, float]
    yaw: float
    ident: int = 0  # the same physical die keeps its look from frame to frame
    cock: float = 0.0  # lean in degrees (0: flat); a cocked die has no readable top face


@dataclass
class Shot:
    """Everything in one frame."""

    dice: list[DieDraw] = field(default_factory=list)
    base: SigilState = S_BLANK  # the card as drawn so far
    target: SigilState | None = None  # what is being drawn (revealed up to ``progress``)
    progress: float = 1.0
    stroke: str = ""  # "digit", "line", "cross", "wipe"
    hand: Hand | None = None


# ------------------------------------------------------------------------------ geometry
def card_homography() -> np.ndarray:
    """Card millimetres -> frame pixels."""
    size = _layout()["size_mm"]
    src = np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], np.float32)
    return cv2.getPerspectiveTransform(src, CARD_QUAD)


def card_point(x_mm: float, y_mm: float) -> tuple[float, float]:
    p = cv2.perspectiveTransform(np.array([[[x_mm, y_mm]]], np.float32), card_homography())
    return float(p[0, 0, 0]), float(p[0, 0, 1])


_LAYOUT_CACHE: dict[str, Any] = {}


def _layout() -> dict[str, Any]:
    if "A" not in _LAYOUT_CACHE:
        _LAYOUT_CACHE["A"] = read_json(DATA_DIR / "layouts" / f"{LAYOUT}.json")
    return _LAYOUT_CACHE["A"]


def _candle(i: int) -> tuple[float, float]:
    c = _layout()["candles"][i]["center"]
    return float(c[0]), float(c[1])


def _top_box_center(k: int) -> tuple[float, float]:
    x0, y0, x1, y1 = _layout()["top_boxes"][k]
    return (x0 + x1) / 2, (y0 + y1) / 2


# ------------------------------------------------------------------------------ the scene
def _ease(f: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * min(1.0, max(0.0, f)))


def _tumble(final: list[tuple[int, str, tuple[float, float]]], k: int, n: int,
            rng: np.random.Generator) -> list[DieDraw]:
    """Dice thrown in from the left: frame ``k`` of ``n``; the last two show the final face."""
    out = []
    for i, (value, color, (x, y)) in enumerate(final):
        left = 1.0 - (k + 1) / n
        dx = -(260 + 40 * i) * left ** 1.6
        dy = 55 * math.sin(3.0 * left + i) * left
        face = value if k >= n - 2 else int(rng.integers(1, 7))
        out.append(DieDraw(face, color, (x + dx, y + dy), float(rng.uniform(0, 90)),
                           int(x) * 1000 + int(y)))
    return out


def _rest(final: list[tuple[int, str, tuple[float, float]]], yaw_seed: int) -> list[DieDraw]:
    rng = np.random.default_rng(yaw_seed)
    return [DieDraw(v, c, p, float(rng.uniform(0, 90)), int(p[0]) * 1000 + int(p[1]))
            for v, c, p in final]


def _writing_hand(points_mm: list[tuple[float, float]], f: float) -> Hand:
    """The pen tip along a path of card points, ``f`` in [0, 1]."""
    n = len(points_mm) - 1
    s = min(n - 1e-9, max(0.0, f * n))
    i = int(s)
    a, b = points_mm[i], points_mm[i + 1]
    x = a[0] + (b[0] - a[0]) * (s - i)
    y = a[1] + (b[1] - a[1]) * (s - i)
    return Hand(card_point(x, y), arm_angle=65.0)


def _approach(target: tuple[float, float], f: float, angle: float = 65.0) -> Hand:
    """A hand coming in from (f=0: off-frame) towards ``target`` (f=1)."""
    far = (target[0] + 700 * math.cos(math.radians(angle)),
           target[1] + 700 * math.sin(math.radians(angle)))
    g = _ease(f)
    return Hand((far[0] + (target[0] - far[0]) * g, far[1] + (target[1] - far[1]) * g),
                arm_angle=angle)


def _stroke_segment(frame: int, start: int, end: int, path_mm: list[tuple[float, float]],
                    base: SigilState, target: SigilState, stroke: str,
                    dice: list[DieDraw]) -> Shot:
    """Approach (2 frames), draw (the middle), leave (2 frames)."""
    first = card_point(*path_mm[0])
    last = card_point(*path_mm[-1])
    draw_from, draw_to = start + 2, end - 2
    if frame < draw_from:
        return Shot(dice, base, hand=_approach(first, (frame - start + 1) / 3))
    if frame > draw_to:
        return Shot(dice, target, hand=_approach(last, 1 - (frame - draw_to) / 3))
    f = (frame - draw_from + 1) / (draw_to - draw_from + 1)
    if f >= 1.0:
        return Shot(dice, target, hand=_writing_hand(path_mm, 1.0))
    return Shot(dice, base, target, f, stroke, _writing_hand(path_mm, f))


def _digit_path(k: int) -> list[tuple[float, float]]:
    cx, cy = _top_box_center(k)
    return [(cx - 2, cy - 3), (cx + 2, cy - 3), (cx - 2, cy), (cx + 2, cy + 1), (cx - 2, cy + 3)]


def _cross_path(c: int) -> list[tuple[float, float]]:
    x, y = _candle(c)
    r = 4.5
    return [(x - r, y - r), (x + r, y + r), (x + r, y - r), (x - r, y + r)]


def shot(frame: int) -> Shot:
    """What video frame ``frame`` (0-based, one loop) shows."""
    if not 0 <= frame < N_FRAMES:
        raise ValueError(f"frame {frame} is outside the demo's {N_FRAMES} frames")
    frame = _take(frame)
    rng = np.random.default_rng([SEED, frame])
    cat_rest = _rest(CAT_DICE, SEED + 1)
    machine_final = list(MACHINE_DICE)
    machine_rest = _rest(machine_final, SEED + 2)
    after_rest = [d for i, d in enumerate(machine_rest) if i != REROLL_INDEX]
    rerolled_rest = _rest([REROLLED], SEED + 3)
    if frame <= 4:
        return Shot()
    if frame <= 12:
        return Shot(_tumble(CAT_DICE, frame - 5, 8, rng))
    if frame <= 27:
        return Shot(cat_rest)
    if frame <= 41:
        return _stroke_segment(frame, 28, 41, _digit_path(0), S_BLANK, S_DIGIT, "digit",
                               cat_rest)
    if frame <= 46:
        return Shot(cat_rest, S_DIGIT)
    if frame <= 62:
        return _stroke_segment(frame, 47, 62, [_candle(2), _candle(7)], S_DIGIT, S_LINE, "line",
                               cat_rest)
    if frame <= 67:
        return Shot(cat_rest, S_LINE)
    if frame <= 79:
        return _stroke_segment(frame, 68, 79, _cross_path(4), S_LINE, S_CROSS, "cross",
                               cat_rest)
    if frame <= 84:
        return Shot(cat_rest, S_CROSS)
    if frame <= 92:  # sweep: the hand passes over the dice, which are gone after it
        f = (frame - 85) / 7
        hand = Hand((120 + 360 * f, 300 - 20 * f), arm_angle=80.0, pen=False)
        dice = cat_rest if frame < 88 else []
        return Shot(dice, S_CROSS, hand=hand)
    if frame <= 96:
        return Shot([], S_CROSS)
    if frame <= 104:
        return Shot(_tumble(machine_final, frame - 97, 8, rng), S_CROSS)
    if frame <= 124:
        return Shot(machine_rest, S_CROSS)
    if frame <= 130:  # pick up the 1
        target = machine_final[REROLL_INDEX][2]
        f = (frame - 124) / 3 if frame <= 127 else 1 - (frame - 127) / 3
        hand = _approach(target, f, angle=75.0)
        hand.pen = False
        dice = machine_rest if frame < 127 else after_rest
        return Shot(dice, S_CROSS, hand=hand)
    if frame <= 136:
        return Shot(after_rest + _tumble([REROLLED], frame - 131, 6, rng), S_CROSS)
    if frame <= 154:
        return Shot(after_rest + rerolled_rest, S_CROSS)
    if frame <= 162:
        f = (frame - 155) / 7
        hand = Hand((100 + 420 * f, 330), arm_angle=85.0, pen=False)
        dice = (after_rest + rerolled_rest) if frame < 158 else []
        return Shot(dice, S_CROSS, hand=hand)
    if frame <= 176:  # wipe the card with the side of the hand
        f = (frame - 163) / 11
        size = _layout()["size_mm"]
        y = 10 + (size[1] - 20) * min(1.0, f)
        hand = Hand(card_point(size[0] / 2, y), arm_angle=20.0, pen=False)
        if f >= 1.0:
            return Shot([], S_BLANK, hand=hand)
        return Shot([], S_CROSS, S_BLANK, f, "wipe", hand)
    return Shot()


# ------------------------------------------------------------------------------ drawing
class Renderers:
    """The dice and card renderers: the project's own when present, else simple fallbacks."""

    def __init__(self) -> None:
        try:
            from vision.render import dice as dice_render
        except ImportError:
            dice_render = None
        try:
            from vision.render import sigil as sigil_render
        except ImportError:
            sigil_render = None
        self.dice = dice_render
        self.sigil = sigil_render
        self._cards: dict[str, np.ndarray] = {}

    def fingerprint(self) -> str:
        """A hash of what the renderers draw (a card and two dice): it changes when they do,
        which tells whether the committed video can still be re-made pixel for pixel."""
        import hashlib

        canvas = np.zeros((120, 200, 3), np.uint8)
        self.draw_dice(canvas, [DieDraw(5, "white", (50, 60), 20.0, 1),
                                DieDraw(2, "black", (140, 60), 70.0, 2)],
                       np.random.default_rng(SEED))
        card = cv2.resize(self.card(S_CROSS), (88, 126), interpolation=cv2.INTER_AREA)
        digest = hashlib.sha256(canvas.tobytes() + card.tobytes())
        return digest.hexdigest()[:16]

    def names(self) -> dict[str, str]:
        return {"dice": "vision.render.dice" if self.dice else "fallback",
                "sigil": "vision.render.sigil" if self.sigil else "fallback"}

    # -- table
    def background(self) -> np.ndarray:
        rng = np.random.default_rng(SEED)
        yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
        grain = np.sin((xx * 0.9 + yy * 0.12 + 7 * np.sin(yy / 97.0 + xx / 300.0)) / 4.0)
        grain = grain * 0.5 + 0.5
        base = np.array([95, 135, 175], np.float32)  # warm wood, BGR
        img = base[None, None, :] * (0.82 + 0.18 * grain[..., None])
        img += rng.normal(0, 2.0, (H, W, 1)).astype(np.float32)
        light = 0.9 + 0.12 * np.exp(-(((xx - 420) / 520) ** 2 + ((yy - 200) / 380) ** 2))
        return np.clip(img * light[..., None], 0, 255).astype(np.uint8)

    # -- card
    def card(self, state: SigilState) -> np.ndarray:
        """The rectified card (BGR) at PX_PER_MM with ``state`` drawn."""
        key = json.dumps(state.to_json(), sort_keys=True)
        if key not in self._cards:
            if self.sigil is None:
                self._cards[key] = _fallback_card(state)
            else:
                # Each element is drawn alone (its own seeded strokes) and the ink layers are
                # multiplied onto the blank card, so that a digit keeps its shape when a line is
                # added later.
                blank = self._element(S_BLANK).astype(np.float32)
                out = blank.copy()
                for element in _elements(state):
                    layer = self._element(element).astype(np.float32)
                    out *= np.minimum(1.0, layer / np.maximum(blank, 1.0))
                self._cards[key] = np.clip(out + 0.5, 0, 255).astype(np.uint8)
        return self._cards[key]

    def _element(self, state: SigilState) -> np.ndarray:
        key = "element " + json.dumps(state.to_json(), sort_keys=True)
        if key not in self._cards:
            assert self.sigil is not None
            style = self.sigil.CardStyle(px_per_mm=PX_PER_MM)
            ink = self.sigil.InkStyle(width_mm=1.0, wobble_mm=0.2, curve=0.02, hand=1)
            seed = [SEED, sum(ord(ch) * (i + 1) for i, ch in enumerate(key)) % 100_000]
            self._cards[key] = self.sigil.render_card(
                _layout(), state, style, np.random.default_rng(seed), ink).image
        return self._cards[key]

    # -- dice
    def draw_dice(self, frame: np.ndarray, dice: list[DieDraw],
                  rng: np.random.Generator) -> list[dict[str, Any]]:
        if not dice:
            return []
        if self.dice is not None:
            colors = self.dice.COLORS
            out = []
            for d in sorted(dice, key=lambda d: d.center[1]):  # farther dice first
                spec = self.dice.DieSpec(d.value, d.color, d.center, DIE_SIZE, yaw_deg=d.yaw,
                                         cock_deg=d.cock, body=colors[d.color][0],
                                         pip=colors[d.color][1][0])
                # one generator per physical die: its body tint stays put from frame to frame
                label = self.dice.draw_dice(frame, [spec], np.random.default_rng([SEED, d.ident]),
                                            tilt_deg=12.0, glare=0.0)[0]
                out.append({"value": label["value"], "color": d.color,
                            "bbox": list(label["bbox"]), "state": label["state"]})
            return out
        return [_fallback_die(frame, d) for d in dice]


def _elements(state: SigilState) -> list[SigilState]:
    """One state per drawn element of ``state`` (a line, a cross, a digit)."""
    out = [SigilState.of(state.layout, lines=[p]) for p in state.lines]
    out += [SigilState.of(state.layout, crossed=[c]) for c in state.crossed]
    for k, box in enumerate(state.top):
        if box is not None:
            top: list[TopBox | None] = [None] * 7
            top[k] = box
            out.append(SigilState.of(state.layout, top=top))
    return out


def _fallback_card(state: SigilState) -> np.ndarray:
    lay = _layout()
    s = PX_PER_MM
    w, h = round(lay["size_mm"][0] * s), round(lay["size_mm"][1] * s)
    img = np.full((h, w, 3), (236, 240, 242), np.uint8)

    def p(x: float, y: float) -> tuple[int, int]:
        return round(x * s), round(y * s)

    d = lay["dividers"]
    cv2.line(img, p(d["vertical_x"], 14), p(d["vertical_x"], 110), (150, 150, 150), 2)
    cv2.line(img, p(4, d["horizontal_y"]), p(84, d["horizontal_y"]), (150, 150, 150), 2)
    for box in lay["top_boxes"] + lay["score_boxes"]:
        cv2.rectangle(img, p(box[0], box[1]), p(box[2], box[3]), (60, 60, 60), 2)
    for c in lay["candles"]:
        cv2.circle(img, p(*c["center"]), round(c["radius"] * s), (40, 90, 150), 3)
        cv2.putText(img, str(c["number"]), p(c["center"][0] - 1.6, c["center"][1] + 1.6),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.0, (40, 60, 110), 3)
    for a, b in state.lines:
        cv2.line(img, p(*_candle(a)), p(*_candle(b)), (25, 25, 25), 7, cv2.LINE_AA)
    for c in state.crossed:
        x, y = _candle(c)
        cv2.line(img, p(x - 4.5, y - 4.5), p(x + 4.5, y + 4.5), (25, 25, 25), 7, cv2.LINE_AA)
        cv2.line(img, p(x + 4.5, y - 4.5), p(x - 4.5, y + 4.5), (25, 25, 25), 7, cv2.LINE_AA)
    for k, box in enumerate(state.top):
        if box is None:
            continue
        cx, cy = _top_box_center(k)
        cv2.putText(img, str(box.value), p(cx - 2.6, cy + 3), cv2.FONT_HERSHEY_SIMPLEX, 2.0,
                    (25, 25, 25), 6, cv2.LINE_AA)
        if box.circled:
            cv2.ellipse(img, p(cx, cy), (round(3.8 * s), round(4.3 * s)), 0, 0, 360,
                        (25, 25, 25), 4, cv2.LINE_AA)
    return img


_PIPS = {1: [(0.5, 0.5)], 2: [(0.27, 0.27), (0.73, 0.73)],
         3: [(0.27, 0.27), (0.5, 0.5), (0.73, 0.73)],
         4: [(0.27, 0.27), (0.73, 0.27), (0.27, 0.73), (0.73, 0.73)],
         5: [(0.27, 0.27), (0.73, 0.27), (0.5, 0.5), (0.27, 0.73), (0.73, 0.73)],
         6: [(0.27, 0.25), (0.27, 0.5), (0.27, 0.75), (0.73, 0.25), (0.73, 0.5), (0.73, 0.75)]}
_BODY = {"white": ((235, 238, 240), (25, 25, 25)), "black": ((30, 30, 32), (235, 235, 235)),
         "yellow": ((40, 205, 240), (25, 25, 25))}


def _fallback_die(frame: np.ndarray, d: DieDraw) -> dict[str, Any]:
    body, pip = _BODY[d.color]
    n = 96
    tex = np.full((n, n, 3), body, np.uint8)
    for u, v in _PIPS[d.value]:
        cv2.circle(tex, (round(u * n), round(v * n)), round(0.1 * n), pip, -1, cv2.LINE_AA)
    half = DIE_SIZE / 2
    ang = math.radians(d.yaw)
    corners = np.array([[-half, -half], [half, -half], [half, half], [-half, half]])
    rot = np.array([[math.cos(ang), -math.sin(ang)], [math.sin(ang), math.cos(ang)]])
    quad = (corners @ rot.T + np.array(d.center)).astype(np.float32)
    shadow = quad + np.array([6, 8], np.float32)
    cv2.fillConvexPoly(frame, shadow.round().astype(np.int32), (40, 55, 70), cv2.LINE_AA)
    m = cv2.getPerspectiveTransform(
        np.array([[0, 0], [n, 0], [n, n], [0, n]], np.float32), quad)
    warped = cv2.warpPerspective(tex, m, (frame.shape[1], frame.shape[0]))
    mask = cv2.warpPerspective(np.full((n, n), 255, np.uint8), m,
                               (frame.shape[1], frame.shape[0]))
    frame[mask > 127] = warped[mask > 127]
    x0, y0 = quad.min(axis=0)
    x1, y1 = quad.max(axis=0)
    return {"value": d.value, "color": d.color,
            "bbox": [float(x0), float(y0), float(x1), float(y1)], "state": "flat"}


def _reveal_mask(shape: tuple[int, int], stroke: str, f: float,
                 path_mm: list[tuple[float, float]] | None) -> np.ndarray:
    """Which card pixels of the new drawing are shown at progress ``f`` (1 = shown)."""
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if stroke == "wipe":
        return (yy < (10 + (_layout()["size_mm"][1] - 20) * f) * PX_PER_MM).astype(np.float32)
    assert path_mm is not None
    a = np.array(path_mm[0], np.float32) * PX_PER_MM
    b = np.array(path_mm[-1], np.float32) * PX_PER_MM
    if stroke == "line":
        u = (b - a) / max(1e-6, float(np.linalg.norm(b - a)))
        along = (xx - a[0]) * u[0] + (yy - a[1]) * u[1]
        return (along < f * float(np.linalg.norm(b - a))).astype(np.float32)
    # digits and crosses: a sweep from the top-left of the element
    return ((xx - a[0]) + (yy - a[1]) * 1.5 < f * 2.5 * abs(float(b[1] - a[1]) + 1e-3)
            + f * 40).astype(np.float32)


def _stroke_path(s: Shot) -> list[tuple[float, float]] | None:
    if s.stroke == "digit":
        return _digit_path(0)
    if s.stroke == "line":
        return [_candle(2), _candle(7)]
    if s.stroke == "cross":
        return _cross_path(4)
    return None


def _hand_mask(hand: Hand) -> np.ndarray:
    """The hand's (and arm's) silhouette in the frame, ``uint8`` 0/255."""
    mask = np.zeros((H, W), np.uint8)
    tx, ty = hand.tip
    ang = math.radians(hand.arm_angle)
    ux, uy = math.cos(ang), math.sin(ang)
    px, py = -uy, ux
    # the pen (or fingertip) reaches the tip; the fist sits behind it; the arm runs off-frame
    fist = (tx + ux * 70, ty + uy * 70)
    cv2.ellipse(mask, (round(fist[0]), round(fist[1])), (62, 46),
                hand.arm_angle, 0, 360, 255, -1, cv2.LINE_AA)
    finger = np.array([[tx + ux * 18 + px * 9, ty + uy * 18 + py * 9],
                       [tx + ux * 18 - px * 9, ty + uy * 18 - py * 9],
                       [fist[0] - px * 30, fist[1] - py * 30],
                       [fist[0] + px * 30, fist[1] + py * 30]])
    cv2.fillConvexPoly(mask, finger.round().astype(np.int32), 255, cv2.LINE_AA)
    arm = np.array([[fist[0] + px * 44, fist[1] + py * 44], [fist[0] - px * 44, fist[1] - py * 44],
                    [fist[0] - px * 52 + ux * 900, fist[1] - py * 52 + uy * 900],
                    [fist[0] + px * 52 + ux * 900, fist[1] + py * 52 + uy * 900]])
    cv2.fillConvexPoly(mask, arm.round().astype(np.int32), 255, cv2.LINE_AA)
    if not hand.pen:
        cv2.circle(mask, (round(tx + ux * 25), round(ty + uy * 25)), 24, 255, -1, cv2.LINE_AA)
    return mask


def _draw_hand(frame: np.ndarray, hand: Hand, mask: np.ndarray) -> None:
    skin = np.array([130, 165, 215], np.float32)  # BGR
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    ang = math.radians(hand.arm_angle)
    side = (xx - hand.tip[0]) * -math.sin(ang) + (yy - hand.tip[1]) * math.cos(ang)
    shade = 0.85 + 0.15 * np.cos(np.clip(side / 60.0, -1.5, 1.5))
    color = skin[None, None, :] * shade[..., None]
    alpha = cv2.GaussianBlur(mask, (0, 0), 1.6).astype(np.float32)[..., None] / 255.0
    # the hand's soft shadow on the table
    shadow = cv2.GaussianBlur(np.roll(mask, (14, 10), (0, 1)), (0, 0), 9).astype(np.float32)
    out = frame.astype(np.float32) * (1 - 0.35 * shadow[..., None] / 255.0)
    out = out * (1 - alpha) + color * alpha
    frame[:] = np.clip(out, 0, 255).astype(np.uint8)
    if hand.pen:
        ux, uy = math.cos(ang), math.sin(ang)
        tx, ty = hand.tip
        cv2.line(frame, (round(tx), round(ty)), (round(tx + ux * 60), round(ty + uy * 60)),
                 (35, 30, 30), 7, cv2.LINE_AA)
        cv2.line(frame, (round(tx + ux * 60), round(ty + uy * 60)),
                 (round(tx + ux * 110), round(ty + uy * 110)), (200, 60, 30), 9, cv2.LINE_AA)


# ------------------------------------------------------------------------------ truth
def _hidden_elements(mask_frame: np.ndarray) -> list[str]:
    """Elements of the card (DESIGN.md notation) a frame mask covers."""
    if not mask_frame.any():
        return []
    lay = _layout()
    inv = np.linalg.inv(card_homography())
    sw, sh = lay["size_mm"]
    scale = 4.0  # px per mm of the check raster
    to_raster = np.diag([scale, scale, 1.0]) @ inv
    cover = cv2.warpPerspective(mask_frame, to_raster, (round(sw * scale), round(sh * scale)))
    cover = (cover > 127).astype(np.uint8)
    hh, ww = cover.shape

    def share(points: np.ndarray) -> float:
        p = np.clip(np.round(points * scale).astype(int), 0, [ww - 1, hh - 1])
        return float(cover[p[:, 1], p[:, 0]].mean())

    out: list[str] = []
    candles = [np.array(c["center"], float) for c in lay["candles"]]
    radii = [float(c.get("radius", 4.0)) for c in lay["candles"]]
    for a in range(len(candles)):
        for b in range(a + 1, len(candles)):
            u = (candles[b] - candles[a]) / np.linalg.norm(candles[b] - candles[a])
            s, e = candles[a] + u * radii[a], candles[b] - u * radii[b]
            if share(s + np.linspace(0, 1, 40)[:, None] * (e - s)) > 0.06:
                out.append(f"line {a}-{b}")
    ring = np.stack([np.cos(np.linspace(0, 2 * np.pi, 24)),
                     np.sin(np.linspace(0, 2 * np.pi, 24))], 1)
    for i, c in enumerate(candles):
        pts = np.concatenate([c[None], c + ring * radii[i], c + ring * radii[i] * 0.5])
        if share(pts) > 0.15:
            out.append(f"candle {i}")
    for k, (x0, y0, x1, y1) in enumerate(lay["top_boxes"]):
        gx, gy = np.meshgrid(np.linspace(x0, x1, 6), np.linspace(y0, y1, 6))
        if share(np.stack([gx.ravel(), gy.ravel()], 1)) > 0.08:
            out.append(f"top {k}")
    return out


def _drawing_element(s: Shot) -> list[str]:
    if s.target is None:
        return []
    if s.stroke == "wipe":
        assert s.base is not None
        base = s.base
        return ([f"line {a}-{b}" for a, b in base.lines] + [f"candle {c}" for c in base.crossed]
                + [f"top {k}" for k, t in enumerate(base.top) if t is not None])
    new = s.target
    out = [f"line {a}-{b}" for a, b in set(new.lines) - set(s.base.lines)]
    out += [f"candle {c}" for c in set(new.crossed) - set(s.base.crossed)]
    out += [f"top {k}" for k in range(7) if new.top[k] != s.base.top[k]]
    return out


# ------------------------------------------------------------------------------ render
def render_frame(index: int, renderers: Renderers, background: np.ndarray,
                 ) -> tuple[np.ndarray, dict[str, Any]]:
    """Draw frame ``index``; return it with its ground truth."""
    s = shot(index)
    frame = background.copy()
    rng = np.random.default_rng([SEED, 1000 + _take(index)])
    # the card
    card = renderers.card(s.base).astype(np.float32)
    if s.target is not None:
        new = renderers.card(s.target).astype(np.float32)
        reveal = _reveal_mask(card.shape[:2], s.stroke, s.progress, _stroke_path(s))
        card = card * (1 - reveal[..., None]) + new * reveal[..., None]
    card8 = np.clip(card, 0, 255).astype(np.uint8)
    ch, cw = card8.shape[:2]
    m = card_homography() @ np.diag([1 / PX_PER_MM, 1 / PX_PER_MM, 1.0])
    warped = cv2.warpPerspective(card8, m, (W, H), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(np.full((ch, cw), 255, np.uint8), m, (W, H),
                                flags=cv2.INTER_LINEAR).astype(np.float32)[..., None] / 255
    shadow = cv2.GaussianBlur(np.roll(alpha[..., 0], (6, 5), (0, 1)), (0, 0), 5)[..., None]
    base = frame.astype(np.float32) * (1 - 0.3 * shadow)
    frame[:] = np.clip(base * (1 - alpha) + warped.astype(np.float32) * alpha, 0, 255)
    # the dice
    dice_labels = renderers.draw_dice(frame, s.dice, rng)
    # the hand
    hidden_dice: list[dict[str, Any]] = []
    unknown: list[str] = _drawing_element(s)
    if s.hand is not None:
        mask = _hand_mask(s.hand)
        _draw_hand(frame, s.hand, mask)
        unknown += _hidden_elements(mask)
        for lb in dice_labels:
            x0, y0, x1, y1 = (round(v) for v in lb["bbox"])
            box = mask[max(0, y0):max(0, y1), max(0, x0):max(0, x1)]
            if box.size and (box > 127).mean() > 0.3:
                hidden_dice.append(lb)
    shown = s.base if s.target is None or s.progress < 1.0 else s.target
    sigil = SigilState.of(LAYOUT, shown.lines, shown.crossed, shown.top, sorted(set(unknown)))
    truth = {"dice": [lb for lb in dice_labels if lb not in hidden_dice],
             "hand": s.hand is not None, "sigil": sigil.to_json()}
    return frame, truth


def build(out_dir: Path = OUT_DIR, *, frames: int = N_FRAMES) -> dict[str, Any]:
    """Render the video and write ``demo.mp4`` and ``demo.json`` into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    renderers = Renderers()
    background = renderers.background()
    video = out_dir / "demo.mp4"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (W, H))
    if not writer.isOpened():
        raise RuntimeError(f"{video}: OpenCV cannot write mp4v video here")
    truths = []
    try:
        for i in range(frames):
            frame, truth = render_frame(i, renderers, background)
            writer.write(frame)
            truths.append(truth)
    finally:
        writer.release()
    doc = {
        "video": video.name, "fps": FPS, "size": [W, H], "frames": frames,
        "duration_s": frames / FPS, "loop": True, "seed": SEED,
        "renderers": renderers.names(), "renderers_fingerprint": renderers.fingerprint(),
        "card": {"id": CARD_ID, "layout": LAYOUT,
                 "corners_px": CARD_QUAD.round(1).tolist()},
        "timeline": [{"from": a / FPS, "until": (b + 1) / FPS, "what": what}
                     for a, b, what in TIMELINE],
        "events": [{"kind": k, "text": text, "t_from": a, "t_until": b}
                   for k, text, a, b in EVENTS],
        "truth": truths,
    }
    (out_dir / "demo.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    return doc


def check(out_dir: Path = OUT_DIR) -> int:
    """Decode the video with cv2.VideoCapture and count its frames."""
    cap = cv2.VideoCapture(str(out_dir / "demo.mp4"), cv2.CAP_FFMPEG)
    n = 0
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                break
            assert frame.shape == (H, W, 3)
            n += 1
    finally:
        cap.release()
    return n


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT_DIR)
    parser.add_argument("--frames", type=int, default=N_FRAMES, help="render only the first N")
    parser.add_argument("--stills", type=str, default="",
                        help="also write these frames as PNG (comma-separated indices)")
    args = parser.parse_args(argv)
    doc = build(args.out, frames=args.frames)
    if args.stills:
        renderers = Renderers()
        background = renderers.background()
        for i in (int(v) for v in args.stills.split(",")):
            cv2.imwrite(str(args.out / f"still_{i:03d}.png"),
                        render_frame(i, renderers, background)[0])
    n = check(args.out)
    size = (args.out / "demo.mp4").stat().st_size
    print(f"demo.mp4: {n} frames decoded, {size / 1e6:.2f} MB; renderers {doc['renderers']}")
    return 0 if n == args.frames else 1


if __name__ == "__main__":
    sys.exit(main())
