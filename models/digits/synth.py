"""Synthetic top-box crops for the digit model: digits 1-6 in varied hands, circled or not.

Three sources of digit shapes, so that no one hand dominates:

- scikit-learn's bundled handwritten digits (``load_digits``, 8x8 scans of 43 writers), upscaled;
- OpenCV's Hershey stroke fonts (plain, simplex, duplex, complex, triplex, two script fonts,
  upright or italic);
- this module's own stroke templates (several ways to write each digit), with jittered control
  points drawn as smooth polylines;
- the project's synthetic writers (:func:`vision.render.sigil.digit_strokes`: six glyph
  variants per digit, a slant and proportions per writer), the hands of the rendered photos.

Each sample is an ink crop as the reader sees it (``vision.sigil.digits``: the box plus margins,
``CROP`` square, 0 bare card, 1 full ink) after blur, resampling to a random camera resolution,
noise and faint leftovers of the printed box border. Pure: every random draw comes from the
``numpy.random.Generator`` passed in. No torch here (tests use it too).
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

from vision.sigil.digits import CROP, MARGIN

HR = 144  # high-resolution canvas side for drawing

# stroke templates, unit box (x right, y down); each digit has several hands, each a list of
# polylines given by control points (smoothed by Catmull-Rom)
TEMPLATES: dict[int, list[list[list[tuple[float, float]]]]] = {
    1: [[[(0.5, 0.0), (0.5, 1.0)]],
        [[(0.25, 0.25), (0.55, 0.0), (0.55, 1.0)]],
        [[(0.25, 0.22), (0.55, 0.0), (0.55, 1.0)], [(0.25, 1.0), (0.85, 1.0)]],
        [[(0.35, 0.12), (0.6, 0.0), (0.45, 1.0)]]],
    2: [[[(0.12, 0.28), (0.35, 0.02), (0.7, 0.02), (0.85, 0.3), (0.5, 0.65), (0.1, 1.0),
          (0.9, 1.0)]],
        [[(0.15, 0.2), (0.5, 0.0), (0.85, 0.25), (0.15, 0.95), (0.9, 0.98)]],
        [[(0.12, 0.3), (0.45, 0.0), (0.85, 0.2), (0.7, 0.55), (0.2, 0.85), (0.1, 1.0),
          (0.3, 0.88), (0.9, 1.0)]]],
    3: [[[(0.15, 0.12), (0.5, 0.0), (0.82, 0.18), (0.45, 0.47), (0.85, 0.7), (0.55, 1.0),
          (0.12, 0.88)]],
        [[(0.15, 0.0), (0.85, 0.0), (0.4, 0.42), (0.85, 0.62), (0.7, 0.98), (0.15, 0.88)]],
        [[(0.2, 0.15), (0.6, 0.0), (0.8, 0.25), (0.4, 0.5)], [(0.4, 0.5), (0.85, 0.72),
                                                             (0.5, 1.0), (0.15, 0.85)]]],
    4: [[[(0.65, 0.0), (0.1, 0.68), (0.92, 0.68)], [(0.68, 0.3), (0.68, 1.0)]],
        [[(0.25, 0.0), (0.15, 0.58), (0.88, 0.58)], [(0.72, 0.0), (0.72, 1.0)]],
        [[(0.6, 0.0), (0.1, 0.7), (0.9, 0.7)], [(0.6, 0.0), (0.6, 1.0)]],
        [[(0.3, 0.0), (0.12, 0.55), (0.6, 0.6), (0.9, 0.55)], [(0.75, 0.1), (0.65, 1.0)]]],
    5: [[[(0.85, 0.0), (0.25, 0.0), (0.2, 0.45), (0.55, 0.38), (0.85, 0.62), (0.72, 0.95),
          (0.35, 1.0), (0.12, 0.85)]],
        [[(0.25, 0.02), (0.18, 0.45), (0.6, 0.4), (0.85, 0.7), (0.55, 1.0), (0.12, 0.88)],
         [(0.25, 0.02), (0.85, 0.0)]],
        [[(0.8, 0.02), (0.3, 0.05), (0.25, 0.42), (0.75, 0.5), (0.75, 0.9), (0.15, 0.95)]]],
    6: [[[(0.75, 0.02), (0.4, 0.15), (0.18, 0.55), (0.22, 0.88), (0.5, 1.0), (0.8, 0.85),
          (0.78, 0.58), (0.5, 0.48), (0.22, 0.65)]],
        [[(0.65, 0.0), (0.25, 0.45), (0.2, 0.85), (0.5, 1.0), (0.8, 0.8), (0.55, 0.5),
          (0.25, 0.7)]],
        [[(0.7, 0.0), (0.3, 0.3), (0.2, 0.7), (0.45, 1.0), (0.78, 0.78), (0.6, 0.52),
          (0.3, 0.58)]]],
}

HERSHEY = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_DUPLEX,
           cv2.FONT_HERSHEY_COMPLEX, cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX,
           cv2.FONT_HERSHEY_SCRIPT_COMPLEX, cv2.FONT_HERSHEY_COMPLEX_SMALL)


def _catmull(points: np.ndarray, n: int = 12) -> np.ndarray:
    if len(points) < 3:
        return points
    p = np.vstack([points[0], points, points[-1]])
    out = []
    for i in range(1, len(p) - 2):
        p0, p1, p2, p3 = p[i - 1], p[i], p[i + 1], p[i + 2]
        for t in np.linspace(0, 1, n, endpoint=False):
            t2, t3 = t * t, t * t * t
            out.append(0.5 * ((2 * p1) + (-p0 + p2) * t + (2 * p0 - 5 * p1 + 4 * p2 - p3) * t2
                              + (-p0 + 3 * p1 - 3 * p2 + p3) * t3))
    out.append(p[-2])
    return np.array(out)


@lru_cache(maxsize=2)
def _sklearn_digits(part: str) -> dict[int, np.ndarray]:
    """scikit-learn's digits 1-6; ``part`` "train" (4 of every 5 scans) or "test" (the 5th)."""
    from sklearn.datasets import load_digits  # bundled with scikit-learn, no download

    data = load_digits()
    held = (np.arange(len(data.target)) % 5) == 0
    sel = held if part == "test" else ~held
    return {d: data.images[sel & (data.target == d)] / 16.0 for d in range(1, 7)}


def _glyph_hand(rng: np.random.Generator, digit: int, size: int, thick: int,
                sk_part: str = "train", source: int | None = None) -> np.ndarray:
    """A digit on its own canvas (float 0..1), about ``size`` px tall."""
    canvas = np.zeros((2 * size, 2 * size), np.float32)
    src = rng.choice(4, p=[0.3, 0.25, 0.15, 0.3]) if source is None else source
    if src == 0:  # templates
        hand = TEMPLATES[digit][rng.integers(len(TEMPLATES[digit]))]
        aspect = rng.uniform(0.45, 0.85)
        for stroke in hand:
            pts = np.array(stroke, np.float64) + rng.normal(0, 0.04, (len(stroke), 2))
            pts = _catmull(pts)
            pts[:, 0] = pts[:, 0] * size * aspect + size * (1 - aspect / 2) * 0.5 + size * 0.5
            pts[:, 1] = pts[:, 1] * size + size * 0.5
            cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], False, 1.0, thick,
                          cv2.LINE_AA, shift=2)
    elif src == 1:  # Hershey fonts
        font = HERSHEY[rng.integers(len(HERSHEY))]
        if rng.random() < 0.3:
            font |= cv2.FONT_ITALIC
        (_tw, th), _ = cv2.getTextSize(str(digit), font, 1.0, 1)
        scale = size / max(th, 1)
        cv2.putText(canvas, str(digit), (int(size * 0.6), int(size * 1.5)), font, scale, 1.0,
                    max(1, thick), cv2.LINE_AA)
    elif src == 3:  # the project's synthetic writers
        from vision.render.sigil import digit_strokes

        hand = int(rng.integers(0, 1_000_000))
        for stroke in digit_strokes(digit, rng, hand):
            pts = stroke * size * np.array([0.62, 1.0]) + size * 0.5
            cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], False, 1.0, thick,
                          cv2.LINE_AA, shift=2)
    else:  # scikit-learn handwriting
        imgs = _sklearn_digits(sk_part)[digit]
        img = imgs[rng.integers(len(imgs))].astype(np.float32)
        big = cv2.resize(img, (size, size), interpolation=cv2.INTER_CUBIC)
        big = np.clip((big - 0.25) * 1.6, 0, 1)
        canvas[size // 2:size // 2 + size, size // 2:size // 2 + size] = big
    ys, xs = np.nonzero(canvas > 0.2)
    if len(xs) == 0:
        return canvas
    return canvas[ys.min():ys.max() + 1, xs.min():xs.max() + 1]


def sample(rng: np.random.Generator, digit: int, circled: bool, *, sk_part: str = "train",
           source: int | None = None) -> np.ndarray:
    """One ink crop (``CROP`` square, float32 0..1) with ``digit`` written in the box.

    ``source`` picks the hand (0 templates, 1 Hershey fonts, 2 scikit-learn scans, 3 the
    renderer's writers; random when ``None``); ``sk_part`` which scikit-learn scans ("train"
    or the held-out "test").
    """
    box = HR / (1 + 2 * MARGIN)
    canvas = np.zeros((HR, HR), np.float32)
    thick = int(rng.integers(2, 15))
    g = _glyph_hand(rng, digit, int(box * rng.uniform(0.45, 0.8)), thick, sk_part, source)
    # random rotation/shear of the glyph
    gh, gw = g.shape
    angle = rng.normal(0, 8)
    shear = rng.normal(0, 0.12)
    m = cv2.getRotationMatrix2D((gw / 2, gh / 2), angle, 1.0)
    m[0, 1] += shear
    side = int(max(gh, gw) * 1.6) + 2
    m[:, 2] += (side - gw) / 2, (side - gh) / 2
    g = cv2.warpAffine(g, m, (side, side))
    ys, xs = np.nonzero(g > 0.15)
    if len(xs):
        g = g[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
    gh, gw = g.shape
    if max(gh, gw) > 0.95 * box:
        f = 0.95 * box / max(gh, gw)
        g = cv2.resize(g, (max(1, int(gw * f)), max(1, int(gh * f))))
        gh, gw = g.shape
    cx = HR / 2 + rng.normal(0, 0.06) * box
    cy = HR / 2 + rng.normal(0, 0.06) * box
    x0 = int(np.clip(cx - gw / 2, 0, HR - gw))
    y0 = int(np.clip(cy - gh / 2, 0, HR - gh))
    canvas[y0:y0 + gh, x0:x0 + gw] = np.maximum(canvas[y0:y0 + gh, x0:x0 + gw], g)
    if circled:
        gx, gy = x0 + gw / 2, y0 + gh / 2
        rx = max(gw / 2 + thick + rng.uniform(2, 0.2 * box), rng.uniform(0.35, 0.62) * box)
        ry = max(gh / 2 + thick + rng.uniform(2, 0.2 * box), rng.uniform(0.35, 0.62) * box)
        start = rng.uniform(0, 2 * np.pi)
        sweep = rng.uniform(1.75, 2.25) * np.pi
        t = np.linspace(start, start + sweep, 90)
        wob = 1 + 0.05 * np.sin(t * rng.integers(2, 4) + rng.uniform(0, 6))
        grow = np.linspace(1.0, rng.uniform(0.9, 1.12), len(t))
        pts = np.stack([gx + rng.normal(0, 2) + rx * wob * grow * np.cos(t),
                        gy + rng.normal(0, 2) + ry * wob * grow * np.sin(t)], 1)
        cthick = int(np.clip(thick + rng.integers(-1, 2), 1, 8))
        cv2.polylines(canvas, [np.round(pts * 4).astype(np.int32)], False, 1.0, cthick,
                      cv2.LINE_AA, shift=2)
    if rng.random() < 0.3:  # leftover of the printed box border after subtraction
        o = int(HR * MARGIN / (1 + 2 * MARGIN))
        j = rng.integers(-3, 4, 4)
        cv2.rectangle(canvas, (o + j[0], o + j[1]), (HR - o + j[2], HR - o + j[3]),
                      float(rng.uniform(0.05, 0.25)), int(rng.integers(1, 4)))
    canvas *= rng.uniform(0.4, 1.0)
    if rng.random() < 0.5:
        canvas = cv2.GaussianBlur(canvas, (0, 0), rng.uniform(0.5, 2.5))
    eff = int(rng.integers(14, CROP + 1))
    small = cv2.resize(canvas, (eff, eff), interpolation=cv2.INTER_AREA)
    crop = cv2.resize(small, (CROP, CROP), interpolation=cv2.INTER_LINEAR)
    if rng.random() < 0.5:  # anisotropic stretch (non-square boxes, perspective leftovers)
        sx, sy = rng.uniform(0.8, 1.2, 2)
        m = np.array([[sx, 0, CROP / 2 * (1 - sx)], [0, sy, CROP / 2 * (1 - sy)]], np.float32)
        crop = cv2.warpAffine(crop, m, (CROP, CROP))
    crop = crop + rng.normal(0, rng.uniform(0, 0.05), crop.shape).astype(np.float32)
    return np.clip(crop, 0, 1).astype(np.float32)
