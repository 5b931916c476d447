"""How the four shipped layouts A-D were made (a development tool; nothing imports it).

Run ``python companion/data/layouts/design.py CANDLES.json`` where CANDLES.json maps each
letter to its 12 candle centres (found by :func:`anneal` from the letter's anchors); it writes
``A.json``..``D.json`` beside this file: numbers, stars (placed where they keep clear of every
chord), dividers, boxes, markers and the must-curve pairs.

Convention: millimetres on the card, origin top-left, x right, y down.

The designs
-----------
- A "Quadrants": three candles in each quadrant; twin numbers sit in diagonally opposite
  quadrants; one star per quadrant.
- B "Ring": twelve candles round an oval; twin numbers face each other across the ring; four
  stars inside the ring and two outside.
- C "Clusters": four tight triangles of candles; three numbers have both twins in one cluster;
  six stars in the gaps between clusters.
- D "Rows": four staggered rows of three; stars lie along the dotted dividers.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZE = (88.0, 126.0)
VX, HY = 44.0, 62.0
FIELD = (9.0, 79.0, 21.0, 104.0)  # x0, x1, y0, y1 of candle centres
RADIUS = 4.0
MARGIN = RADIUS + 1.5
MARKER_SIZE = 8.0
MARKER_IDS = {"A": 0, "B": 4, "C": 8, "D": 12}


def clearance(points: np.ndarray) -> np.ndarray:
    """``c[i, j]`` = distance from the chord i-j to the nearest other candle centre (i < j)."""
    n = len(points)
    a = points[:, None, None, :]
    b = points[None, :, None, :]
    c = points[None, None, :, :]
    ab = b - a
    length2 = (ab ** 2).sum(-1)
    length2[length2 == 0] = 1
    t = np.clip(((c - a) * ab).sum(-1) / length2, 0, 1)
    d = np.sqrt(((c - (a + t[..., None] * ab)) ** 2).sum(-1))
    idx = np.arange(n)
    mask = ((idx[:, None, None] == idx[None, None, :]) | (idx[None, :, None] == idx[None, None, :])
            | (idx[:, None, None] >= idx[None, :, None]))
    d[mask] = np.inf
    return d.min(axis=2)


def _cost(points: np.ndarray) -> float:
    iu = np.triu_indices(len(points), 1)
    v = clearance(points)[iu]
    spacing = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))[iu]
    return (10.0 * (v < MARGIN).sum() + (np.clip(MARGIN + 1 - v, 0, None) ** 2).sum()
            + 5.0 * np.clip(14 - spacing, 0, None).sum())


def _allowed(points: np.ndarray, anchors: np.ndarray, move: float) -> bool:
    x0, x1, y0, y1 = FIELD
    return bool((np.abs(points - anchors) <= move).all()
                and (points[:, 0] >= x0).all() and (points[:, 0] <= x1).all()
                and (points[:, 1] >= y0).all() and (points[:, 1] <= y1).all()
                and (np.abs(points[:, 0] - VX) >= 6).all()
                and (np.abs(points[:, 1] - HY) >= 6).all())


def anneal(anchors: np.ndarray, move: float, seed: int, iters: int = 60000) -> np.ndarray:
    """Move candles (0.5 mm grid, within ``move`` of their anchors) to clear the chords."""
    rng = np.random.default_rng(seed)
    points = anchors.copy()
    current = _cost(points)
    best = (current, points.copy())
    for it in range(iters):
        temperature = 5.0 * (1 - it / iters) + 0.01
        trial = points.copy()
        trial[rng.integers(len(points))] += rng.normal(0, 1.5, 2)
        trial = np.round(trial * 2) / 2
        if not _allowed(trial, anchors, move):
            continue
        cost = _cost(trial)
        if cost < current or rng.random() < math.exp((current - cost) / temperature):
            points, current = trial, cost
            if cost < best[0]:
                best = (cost, points.copy())
    return best[1]


def anchors(letter: str) -> tuple[np.ndarray, float]:
    """Starting positions that give each letter its character, and how far candles may move."""
    if letter == "A":
        pts = [(16, 28), (34, 34), (20, 50), (56, 27), (73, 38), (57, 52),
               (17, 74), (35, 80), (22, 98), (54, 72), (72, 86), (58, 100)]
        return np.array(pts, float), 11.0
    if letter == "B":
        pts = [(VX + 32 * math.cos(math.radians(15 + 30 * k)),
                HY - 39 * math.sin(math.radians(15 + 30 * k))) for k in range(12)]
        return np.array(pts, float), 5.0
    if letter == "C":
        pts = []
        for cx, cy in ((24, 36), (64, 36), (24, 88), (64, 88)):
            for k in range(3):
                a = math.radians(90 + 120 * k + (cx > VX) * 60)
                pts.append((cx + 10 * math.cos(a), cy - 10 * math.sin(a)))
        return np.array(pts, float), 11.0
    pts = []
    for r, y in enumerate((25, 46, 79, 100)):
        for x in ((12, 30, 60) if r % 2 == 0 else (28, 56, 76)):
            pts.append((x, y))
    return np.array(pts, float), 11.0


def quadrant(p: tuple[float, float]) -> int:
    return (p[0] > VX) + 2 * (p[1] > HY)


def numbers(letter: str, centers: list[tuple[float, float]]) -> list[int]:
    """The printed number of each candle, by the letter's rule."""
    out = [0] * 12
    if letter in ("A", "C"):
        plan = ({0: (1, 2, 3), 1: (4, 5, 6), 2: (4, 5, 6), 3: (3, 1, 2)} if letter == "A"
                else {0: (1, 1, 4), 1: (2, 2, 5), 2: (3, 3, 6), 3: (4, 5, 6)})
        for q, nums in plan.items():
            members = sorted((i for i, p in enumerate(centers) if quadrant(p) == q),
                             key=lambda i: (centers[i][1], centers[i][0]))
            assert len(members) == 3, f"{letter}: quadrant {q} holds {len(members)} candles"
            for i, n in zip(members, nums, strict=True):
                out[i] = n
    elif letter == "B":
        order = sorted(range(12), key=lambda i: math.atan2(HY - centers[i][1],
                                                           centers[i][0] - VX) % (2 * math.pi))
        for k, i in enumerate(order):
            out[i] = k % 6 + 1
    else:
        rows = sorted(range(12), key=lambda i: centers[i][1])
        plan = ((1, 2, 3), (4, 5, 6), (6, 5, 4), (3, 2, 1))
        for r in range(4):
            row = sorted(rows[3 * r:3 * r + 3], key=lambda i: centers[i][0])
            for i, n in zip(row, plan[r], strict=True):
                out[i] = n
    return out


STAR_TARGETS = {
    "A": [(27, 40), (62, 40), (27, 84), (64, 86)],
    "B": [(35, 50), (54, 52), (34, 74), (53, 74), (12, 106), (76, 18)],
    "C": [(24, 56), (64, 68), (38, 36), (50, 88), (12, 69), (76, 55)],
    "D": [(41, 30), (47, 52), (41, 76), (47, 98), (20, 65), (68, 59)],
}


def _segment_distance(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    t = float(np.clip(np.dot(p - a, ab) / np.dot(ab, ab), 0, 1))
    return float(np.linalg.norm(p - (a + t * ab)))


def place_stars(letter: str, centers: np.ndarray) -> list[tuple[float, float]]:
    """Each star goes near its target where it keeps clearest of every chord."""
    chords = [(centers[i], centers[j]) for i in range(12) for j in range(i + 1, 12)]
    stars: list[tuple[float, float]] = []
    for tx, ty in STAR_TARGETS[letter]:
        best = None
        for dx in np.arange(-7, 7.5, 0.5):
            for dy in np.arange(-7, 7.5, 0.5):
                p = np.array([tx + dx, ty + dy])
                off_v, off_h = abs(p[0] - VX), abs(p[1] - HY)
                if letter == "D":
                    near = min(off_v, off_h)
                    if not 2.0 <= near <= 4.0 or min(off_v, off_h) < 2.0:
                        continue
                elif off_v < 3 or off_h < 3:
                    continue
                if not (6 <= p[0] <= 82 and 17 <= p[1] <= 109):
                    continue
                if np.min(np.linalg.norm(centers - p, axis=1)) < RADIUS + 3:
                    continue
                if any(np.hypot(*(p - np.array(s))) < 10 for s in stars):
                    continue
                score = min(_segment_distance(p, a, b) for a, b in chords)
                if best is None or score > best[0]:
                    best = (score, (float(p[0]), float(p[1])))
        assert best is not None, f"{letter}: no room for a star near {(tx, ty)}"
        stars.append(best[1])
    return stars


def layout_document(letter: str, centers: np.ndarray) -> dict:
    pts = [(float(x), float(y)) for x, y in centers]
    nums = numbers(letter, pts)
    clear = clearance(centers)
    must_curve = [[i, j] for i in range(12) for j in range(i + 1, 12) if clear[i, j] < MARGIN]
    w, h = SIZE
    half = MARKER_SIZE / 2
    corners = [(3 + half, 3 + half), (w - 3 - half, 3 + half),
               (3 + half, h - 3 - half), (w - 3 - half, h - 3 - half)]
    titles = {"A": "Quadrants", "B": "Ring", "C": "Clusters", "D": "Rows"}
    return {
        "name": letter,
        "title": titles[letter],
        "description": (__doc__ or "").split(f'"{titles[letter]}": ')[1].split("\n- ")[0]
        .replace("\n  ", " ").strip(),
        "size_mm": [w, h],
        "candles": [{"number": n, "center": [x, y], "radius": RADIUS}
                    for n, (x, y) in zip(nums, pts, strict=True)],
        "stars": [[round(x, 1), round(y, 1)] for x, y in place_stars(letter, centers)],
        "dividers": {"vertical_x": VX, "horizontal_y": HY},
        "top_boxes": [[13.0 + 9 * i, 3.0, 21.0 + 9 * i, 12.0] for i in range(7)],
        "score_boxes": [[13.0 + 16 * i, 113.0, 27.0 + 16 * i, 123.0] for i in range(4)],
        "markers": {"dictionary": "DICT_4X4_50",
                    "items": [{"id": MARKER_IDS[letter] + k, "center": [x, y],
                               "size": MARKER_SIZE} for k, (x, y) in enumerate(corners)]},
        "must_curve": must_curve,
    }


def dumps(doc: dict) -> str:
    """JSON with one top-level key per line and one list item (candle, box, ...) per line."""
    lines = []
    for key, value in doc.items():
        if isinstance(value, list) and value and isinstance(value[0], (dict, list)):
            items = ",\n    ".join(json.dumps(v) for v in value)
            lines.append(f"  {json.dumps(key)}: [\n    {items}]")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv: list[str]) -> None:
    chosen = json.loads(Path(argv[1]).read_text())
    for letter, centers in chosen.items():
        doc = layout_document(letter, np.array(centers, float))
        (HERE / f"{letter}.json").write_text(dumps(doc))
        print(letter, "must_curve", len(doc["must_curve"]))


if __name__ == "__main__":
    main(sys.argv)
