"""The "charge the sigils" share image: every sigil, the goals and the scores, as one PNG.

Drawn with OpenCV from the game's view (layouts and sigil states), with the camera's rectified
photo of a card beside its drawing when the camera saw it.

Convention: card geometry is in mm on the card (origin top-left); it is drawn at
``PX_PER_MM`` pixels per mm; images are BGR uint8.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import cv2
import numpy as np

PX_PER_MM = 3.2
BG = (36, 20, 27)
PANEL = (48, 30, 38)
PAPER = (216, 234, 243)
INK = (154, 27, 106)
TEXT = (243, 230, 236)
MUTED = (173, 145, 157)
ACCENT = (60, 157, 255)
GOLD = (92, 207, 255)
FONT = cv2.FONT_HERSHEY_SIMPLEX


def _text(img: np.ndarray, text: str, org: tuple[int, int], scale: float = 0.6,
          colour: tuple[int, int, int] = TEXT, thick: int = 1, center: bool = False) -> None:
    if center:
        (w, h), _ = cv2.getTextSize(text, FONT, scale, thick)
        org = (org[0] - w // 2, org[1] + h // 2)
    cv2.putText(img, text, org, FONT, scale, colour, thick, cv2.LINE_AA)


def line_path(layout: Mapping[str, Any], a: int, b: int, n: int = 32) -> np.ndarray:
    """Points (mm, shape (k, 2)) of the line between candles a and b as drawn: the straight
    chord, or for a layout's ``must_curve`` pair the quadratic curve through its control point
    (``layout["curves"]``, see :func:`companion.session.cat.curve_controls`)."""
    pa, pb = (np.array(layout["candles"][i]["center"], np.float64) for i in (a, b))
    control = (layout.get("curves") or {}).get(f"{a}-{b}")
    if control is None:
        return np.array([pa, pb])
    t = np.linspace(0.0, 1.0, n)[:, None]
    return (1 - t) ** 2 * pa + 2 * t * (1 - t) * np.array(control, np.float64) + t ** 2 * pb


def draw_sigil(card: Mapping[str, Any], px_per_mm: float = PX_PER_MM) -> np.ndarray:
    """A sigil card drawn from its layout and state (``view["players"][p]["cards"][c]``)."""
    layout, sigil = card["layout"], card["sigil"]
    w_mm, h_mm = layout["size_mm"]
    s = px_per_mm
    img = np.full((round(h_mm * s), round(w_mm * s), 3), PAPER, np.uint8)

    def pt(p: Any) -> tuple[int, int]:
        return round(float(p[0]) * s), round(float(p[1]) * s)

    d = layout["dividers"]
    for y in np.arange(14, h_mm - 15, 2.6):
        cv2.line(img, pt((d["vertical_x"], y)), pt((d["vertical_x"], y + 1.2)), (120, 142, 156), 1)
    for x in np.arange(3, w_mm - 3, 2.6):
        cv2.line(img, pt((x, d["horizontal_y"])), pt((x + 1.2, d["horizontal_y"])),
                 (120, 142, 156), 1)
    for star in layout.get("stars", []):
        c = pt(star)
        r = round(2.2 * s)
        pts = []
        for k in range(10):
            ang = -np.pi / 2 + k * np.pi / 5
            rad = r if k % 2 == 0 else r * 0.45
            pts.append((c[0] + rad * np.cos(ang), c[1] + rad * np.sin(ang)))
        cv2.fillPoly(img, [np.array(pts, np.int32)], (44, 155, 197), cv2.LINE_AA)
    for a, b in sigil["lines"]:
        path = np.round(line_path(layout, a, b) * s).astype(np.int32)
        cv2.polylines(img, [path], False, INK, max(2, round(0.9 * s)), cv2.LINE_AA)
    crossed = set(sigil["crossed"])
    for i, k in enumerate(layout["candles"]):
        c, r = pt(k["center"]), round(k["radius"] * s)
        cv2.circle(img, c, r, (240, 250, 255) if i not in crossed else (198, 214, 224), -1,
                   cv2.LINE_AA)
        cv2.circle(img, c, r, (42, 59, 74), 2, cv2.LINE_AA)
        _text(img, str(k["number"]), c, 0.5, (24, 33, 43), 2, center=True)
        if i in crossed:
            q = round(r * 1.1)
            cv2.line(img, (c[0] - q, c[1] - q), (c[0] + q, c[1] + q), (40, 40, 198), 3,
                     cv2.LINE_AA)
            cv2.line(img, (c[0] + q, c[1] - q), (c[0] - q, c[1] + q), (40, 40, 198), 3,
                     cv2.LINE_AA)
    for k, (x0, y0, x1, y1) in enumerate(layout["top_boxes"]):
        cv2.rectangle(img, pt((x0, y0)), pt((x1, y1)), (98, 122, 138), 1, cv2.LINE_AA)
        top = sigil["top"][k] if k < len(sigil["top"]) else None
        if top:
            centre = pt(((x0 + x1) / 2, (y0 + y1) / 2))
            _text(img, str(top["value"]), centre, 0.7, INK, 2, center=True)
            if top.get("circled"):
                cv2.circle(img, centre, round(4.2 * s), INK, 2, cv2.LINE_AA)
    goals = list((card.get("score") or {}).get("goals", {}).values())
    boxes = layout["score_boxes"]
    for k, (x0, y0, x1, y1) in enumerate(boxes):
        cv2.rectangle(img, pt((x0, y0)), pt((x1, y1)), (98, 122, 138), 1, cv2.LINE_AA)
        value = (card.get("score") or {}).get("total") if k == len(boxes) - 1 else (
            goals[k] if k < len(goals) else None)
        if value is not None:
            _text(img, str(value), pt(((x0 + x1) / 2, (y0 + y1) / 2)), 0.6,
                  (30, 38, 179) if k == len(boxes) - 1 else (24, 33, 43), 2, center=True)
    return img


def share_image(view: Mapping[str, Any], *, title: str = "Doom Cat",
                photos: Mapping[tuple[int, int], np.ndarray] | None = None) -> np.ndarray:
    """The share image as a BGR array (see :func:`share_png`)."""
    photos = photos or {}
    players = view["players"]
    cards = [[draw_sigil(c) for c in p["cards"]] for p in players]
    card_h = max(c.shape[0] for row in cards for c in row)
    card_w = max(c.shape[1] for row in cards for c in row)
    photo_w = round(card_w * 0.75) if photos else 0
    gap = 24
    row_w = 2 * (card_w + (photo_w + 10 if photo_w else 0)) + gap
    width = max(900, row_w + 2 * gap)
    goals = view.get("goals", [])
    head = 150 + 26 * len(goals)
    row_h = card_h + 80
    height = head + row_h * len(players) + 60
    img = np.full((height, width, 3), BG, np.uint8)
    _text(img, "CHARGE THE SIGILS", (gap, 50), 1.2, ACCENT, 3)
    _text(img, title, (gap, 88), 0.8, TEXT, 2)
    verdict = (view.get("verdict") or {}).get("text")
    _text(img, verdict or f"turn {view.get('turn')} of {view.get('turns', 14)}", (gap, 120),
          0.6, GOLD, 2)
    for i, g in enumerate(goals):
        _text(img, f"#{g['label']}  {g['name']}", (gap, 150 + 26 * i), 0.6, MUTED, 1)
    y = head
    for p, player in enumerate(players):
        cv2.rectangle(img, (gap // 2, y - 10), (width - gap // 2, y + row_h - 30), PANEL, -1)
        _text(img, player["name"], (gap, y + 22), 0.8, TEXT, 2)
        _text(img, f"{player['total']} VP", (width - gap - 130, y + 22), 0.8, GOLD, 2)
        x = gap
        for c, drawing in enumerate(cards[p]):
            top = y + 40
            img[top:top + drawing.shape[0], x:x + drawing.shape[1]] = drawing
            x += drawing.shape[1] + 10
            photo = photos.get((p, c))
            if photo is not None and photo_w:
                scale = photo_w / photo.shape[1]
                small = cv2.resize(photo, (photo_w, min(card_h, round(photo.shape[0] * scale))),
                                   interpolation=cv2.INTER_AREA)
                img[top:top + small.shape[0], x:x + small.shape[1]] = small
                x += photo_w + 10
            x += gap - 10
        y += row_h
    _text(img, "#doomcat  -  made with Doom Companion", (gap, height - 24), 0.55, MUTED, 1)
    return img


def share_png(view: Mapping[str, Any], *, title: str = "Doom Cat",
              photos: Mapping[tuple[int, int], np.ndarray] | None = None) -> bytes:
    """The "charge the sigils" PNG of a Doom Cat game's view."""
    ok, buf = cv2.imencode(".png", share_image(view, title=title, photos=photos))
    if not ok:
        raise RuntimeError("PNG encoding failed")
    return buf.tobytes()
