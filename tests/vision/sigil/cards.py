"""A small, self-contained card drawer for the sigil reader's tests.

Draws a layout's blank card (candle outlines and numbers, boxes, dividers, ArUco markers), a
sigil state on it (wobbly pen lines, crosses, digits, circles), and photographs it at an angle.
Deliberately simple and independent of the project's renderer, so that the reader's unit tests
do not depend on it.

Convention: card mm, origin top-left; a homography maps card mm to photo px.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.readings import SigilState

PPM = 8.0


def _pt(p: np.ndarray | tuple[float, float]) -> tuple[int, int]:
    return (round(p[0] * PPM * 16), round(p[1] * PPM * 16))


def blank_card(layout) -> np.ndarray:
    w, h = layout.size_mm
    img = np.full((round(h * PPM), round(w * PPM), 3), 255, np.uint8)
    dark = (40, 35, 35)
    for c in layout.candles:
        cv2.circle(img, _pt(c.center), round(c.radius * PPM * 16), dark, 4, cv2.LINE_AA, 4)
        cv2.putText(img, str(c.number), (round((c.center[0] - 1.3) * PPM),
                                         round((c.center[1] + 1.6) * PPM)),
                    cv2.FONT_HERSHEY_SIMPLEX, 0.85, dark, 2, cv2.LINE_AA)
    for box in (*layout.top_boxes, *layout.score_boxes):
        cv2.rectangle(img, _pt(box[:2]), _pt(box[2:]), dark, 3, cv2.LINE_AA, 4)
    vx, hy = layout.vertical_x, layout.horizontal_y
    for y in np.arange(2.0, h - 2, 2.0):
        cv2.circle(img, _pt((vx, y)), 6, (150, 150, 150), -1, cv2.LINE_AA, 4)
    for x in np.arange(2.0, w - 2, 2.0):
        cv2.circle(img, _pt((x, hy)), 6, (150, 150, 150), -1, cv2.LINE_AA, 4)
    d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, layout.marker_dictionary))
    for m in layout.markers:
        side = round(m.size * PPM)
        tile = cv2.aruco.generateImageMarker(d, m.id, side)
        x0, y0 = round((m.center[0] - m.size / 2) * PPM), round((m.center[1] - m.size / 2) * PPM)
        img[y0:y0 + side, x0:x0 + side] = tile[..., None]
    return img


def draw_state(layout, state: SigilState, rng: np.random.Generator, *,
               pen: tuple[int, int, int] = (150, 62, 24), ghosts=(), ghost_alpha: float = 0.12,
               pen_width: float = 1.0, ring_mm: tuple[float, float] = (3.6, 4.0),
               ) -> np.ndarray:
    """``pen_width`` scales every stroke (a thick or a fine tip); ``ring_mm`` is the radii of
    the ring round a circled digit."""
    img = blank_card(layout)
    cs = [np.array(c.center) for c in layout.candles]
    rs = [c.radius for c in layout.candles]

    def stroke(pts: np.ndarray, colour, width_mm: float, target: np.ndarray) -> None:
        cv2.polylines(target, [np.round(pts * PPM * 16).astype(np.int32)], False, colour,
                      max(1, round(width_mm * PPM)), cv2.LINE_AA, 4)

    def line_pts(a: int, b: int) -> np.ndarray:
        d = cs[b] - cs[a]
        length = float(np.hypot(*d))
        u, n = d / length, np.array([-d[1], d[0]]) / length
        t = np.linspace(rs[a] + 0.4, length - rs[b] - 0.4, 60)
        wob = 0.25 * np.sin(t / length * math.pi * 3 + rng.uniform(0, 6))
        return cs[a] + t[:, None] * u + wob[:, None] * n

    if ghosts:
        layer = img.copy()
        for a, b in ghosts:
            stroke(line_pts(a, b), (40, 40, 40), 0.8, layer)
        img = cv2.addWeighted(layer, ghost_alpha, img, 1 - ghost_alpha, 0)
    for a, b in state.lines:
        stroke(line_pts(a, b), pen, 0.8 * pen_width, img)
    for c in state.crossed:
        r = rs[c] * 1.05
        for d in ((-r, -r), (-r, r)):
            stroke(np.array([cs[c] + d, cs[c] - d]) * 0.7 + cs[c] * 0.3, pen, 0.7 * pen_width,
                   img)
    for k, t in enumerate(state.top):
        if t is None:
            continue
        x0, y0, x1, y1 = layout.top_boxes[k]
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        thick = max(1, round(4 * pen_width))
        (tw, th), _ = cv2.getTextSize(str(t.value), cv2.FONT_HERSHEY_SIMPLEX, 1.6, thick)
        cv2.putText(img, str(t.value), (round(cx * PPM - tw / 2), round(cy * PPM + th / 2)),
                    cv2.FONT_HERSHEY_SIMPLEX, 1.6, pen, thick, cv2.LINE_AA)
        if t.circled:
            a = np.linspace(0, 2 * math.pi * 1.05, 50)
            stroke(np.stack([cx + ring_mm[0] * np.cos(a), cy + ring_mm[1] * np.sin(a)], 1), pen,
                   0.6 * pen_width, img)
    return img


def photograph(card: np.ndarray, rng: np.random.Generator, *, tilt: float = 25.0,
               fill: float = 0.55, hand: bool = False, grey_blob: bool = False,
               ) -> tuple[np.ndarray, np.ndarray]:
    """The card on a grey table in a 1280x720 frame; returns (frame, homography mm->px)."""
    fw, fh = 1280, 720
    h, w = card.shape[:2]
    cw = fill * fh * w / h
    ax, ay = np.radians(rng.uniform(-tilt, tilt, 2))
    az = np.radians(rng.uniform(-25, 25))
    pts = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]]) * [cw, cw * h / w]
    rx = np.array([[1, 0, 0], [0, math.cos(ax), -math.sin(ax)], [0, math.sin(ax), math.cos(ax)]])
    ry = np.array([[math.cos(ay), 0, math.sin(ay)], [0, 1, 0], [-math.sin(ay), 0, math.cos(ay)]])
    rz = np.array([[math.cos(az), -math.sin(az), 0], [math.sin(az), math.cos(az), 0], [0, 0, 1]])
    p3 = np.c_[pts, np.zeros(4)] @ (rz @ ry @ rx).T
    z = p3[:, 2] + 1500.0
    proj = np.stack([p3[:, 0] * 1100 / z, p3[:, 1] * 1100 / z], 1) + np.array([fw / 2, fh / 2])
    hm = cv2.getPerspectiveTransform(np.float32([[0, 0], [w, 0], [w, h], [0, h]]),
                                     proj.astype(np.float32))
    frame = np.full((fh, fw, 3), (70, 95, 120), np.uint8)
    warped = cv2.warpPerspective(card, hm, (fw, fh), flags=cv2.INTER_AREA)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), hm, (fw, fh))
    frame[mask > 128] = warped[mask > 128]
    if hand:
        c = proj[2] * 0.6 + proj.mean(0) * 0.4
        cv2.ellipse(frame, (round(c[0]), round(c[1])), (150, 90), 30, 0, 360, (110, 140, 200), -1)
    if grey_blob:  # something dark and colourless (a sleeve, a phone) over the middle
        c = proj.mean(0)
        cv2.ellipse(frame, (round(c[0]), round(c[1])), (70, 45), 10, 0, 360, (60, 60, 60), -1)
    frame = cv2.GaussianBlur(frame, (0, 0), 0.7)
    noise = rng.normal(0, 2.5, frame.shape)
    frame = np.clip(frame + noise, 0, 255).astype(np.uint8)
    mm_to_px = hm @ np.diag([PPM, PPM, 1.0])
    return frame, mm_to_px
