"""Top-box digits: circle detection and removal, glyph normalisation, and the ONNX digit model.

A top box is read from an *ink map*: a float32 array in ``[0, 1]`` where 0 is bare card and 1 is
full ink (see :mod:`vision.sigil.ink`). The box is resampled to a square crop of
:data:`CROP` pixels that holds the box and a margin of :data:`MARGIN` box-sizes on each side
(circles are often drawn over the printed border). From that crop:

1. :func:`find_ring` looks for a closed-ish ring around the ink (a circled number) with a polar
   profile of the outermost ink, and :func:`remove_ring` wipes it;
2. :func:`glyph` normalises the remaining ink to a 28x28 MNIST-style glyph;
3. :class:`DigitModel` classifies the glyph into 1-6 (``models/digits/digits.onnx``), and gives
   a second opinion on the circle from the whole crop.

Convention: arrays are indexed ``[row, col]``; points are ``(x, y)`` in pixels of the crop,
origin top-left.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.onnxmodel import onnx_session

__all__ = ["CROP", "GLYPH", "MARGIN", "DigitModel", "Ring", "find_ring", "glyph",
           "remove_ring"]

CROP = 48          # side of the square crop (box + margins) in pixels
MARGIN = 0.2       # margin around the box on each side, as a fraction of the box size
GLYPH = 28         # side of the normalised glyph
CIRCLE_IN = 32     # side of the crop given to the circle head
N_ANGLES = 36
MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "digits" / "digits.onnx"


@dataclass(frozen=True)
class Ring:
    """A ring of ink around the centre of a crop (a circle drawn around a number).

    ``center`` is ``(x, y)`` in crop pixels; ``radii`` the outer ink radius per angle bin
    (``N_ANGLES`` bins from 0 rad, counter-clockwise in image coordinates); ``coverage`` the
    share of angle bins where the ring has ink; ``gap`` the share of bins where bare card
    separates the ring from the ink inside.
    """

    center: tuple[float, float]
    radii: np.ndarray
    coverage: float
    gap: float
    width: float


def _polar(shape: tuple[int, int], center: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    h, w = shape
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    dx, dy = xx - center[0], yy - center[1]
    r = np.sqrt(dx * dx + dy * dy)
    a = (np.arctan2(dy, dx) + np.pi) / (2 * np.pi) * N_ANGLES
    return r, np.clip(a.astype(np.int32), 0, N_ANGLES - 1)


def _stroke_width(mask: np.ndarray) -> float:
    area = float(mask.sum())
    if area == 0:
        return 1.0
    dist = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
    return float(max(1.0, 2.0 * np.percentile(dist[mask], 90)))


def find_ring(ink: np.ndarray, *, level: float = 0.3) -> Ring | None:
    """Look for a ring of ink around the rest of the ink in a crop.

    Parameters
    ----------
    ink : ndarray, float32, shape (H, W)
        Ink map of the crop, 0 bare card, 1 full ink.
    level : float
        Ink above this level (relative to the crop's strong ink) counts as a stroke pixel.

    Returns
    -------
    Ring or None
        ``None`` when there is too little ink to say.
    """
    top = float(np.percentile(ink, 99.5))
    if top <= 0.05:
        return None
    mask = ink > level * top
    ys, xs = np.nonzero(mask)
    if len(xs) < 8:
        return None
    h, w = ink.shape
    center = (float((xs.min() + xs.max()) / 2.0), float((ys.min() + ys.max()) / 2.0))
    r, a = _polar((h, w), center)
    rr, aa = r[mask], a[mask]
    radii = np.zeros(N_ANGLES, np.float32)
    np.maximum.at(radii, aa, rr)
    present = radii > 0
    # smooth the outer profile over neighbouring angles (a ring's radius changes slowly)
    ring_r = np.where(present, radii, np.nan)
    width = _stroke_width(mask)
    # a bin has a "gap" when, inside the outermost stroke, there is bare card then more ink
    gap_bins = 0
    for k in range(N_ANGLES):
        if not present[k]:
            continue
        sel = aa == k
        rk = np.sort(rr[sel])
        outer = rk[-1]
        # pixels of the ring stroke: within about a stroke width of the outer radius
        inner = rk[rk < outer - 1.5 * width - 1.0]
        if len(inner) and (outer - width - inner.max()) > max(2.0, 0.6 * width):
            gap_bins += 1
    med = float(np.nanmedian(ring_r)) if present.any() else 0.0
    near = present & (np.abs(np.nan_to_num(ring_r) - med) < 0.35 * med)
    return Ring(center=center, radii=radii, coverage=float(near.mean()),
                gap=float(gap_bins / N_ANGLES), width=width)


def remove_ring(ink: np.ndarray, ring: Ring) -> np.ndarray:
    """Wipe the ring's stroke: an ellipse is fitted to the outermost ink of the angle bins
    that agree with the ring's typical radius (so a gap in the ring, or a digit reaching out
    where the ring is missing, does not bend it), and the ink within about a stroke width of
    it, or outside it, is removed."""
    radii = ring.radii.astype(np.float32)
    valid = radii > 0
    if valid.sum() < 6:
        return ink.copy()
    med = float(np.median(radii[valid]))
    ok = valid & (np.abs(radii - med) < 0.25 * med)
    if ok.sum() < 6:
        return ink.copy()
    ang = (np.arange(N_ANGLES)[ok] + 0.5) / N_ANGLES * 2 * np.pi - np.pi
    pts = np.stack([ring.center[0] + radii[ok] * np.cos(ang),
                    ring.center[1] + radii[ok] * np.sin(ang)], 1).astype(np.float32)
    (cx, cy), (w, h), theta = cv2.fitEllipse(pts)
    a, b = w / 2.0, h / 2.0
    if not (np.isfinite([cx, cy, a, b]).all() and min(a, b) > 2.0):
        return ink.copy()
    hh, ww = ink.shape
    yy, xx = np.mgrid[0:hh, 0:ww].astype(np.float32)
    t = np.deg2rad(theta)
    dx, dy = xx - cx, yy - cy
    xr = dx * np.cos(t) + dy * np.sin(t)
    yr = -dx * np.sin(t) + dy * np.cos(t)
    rho = np.sqrt((xr / a) ** 2 + (yr / b) ** 2)
    inside = float(ink[rho < 1.0].sum())
    # the ring's stroke (about a stroke width inside the ellipse, fitted to its outer edge) and
    # what lies outside; a tight ring touching the digit: a thinner band, not the digit
    for reach in (1.1 * ring.width + 0.5, 0.7 * ring.width + 0.5):
        band = reach / min(a, b)
        out = ink.copy()
        out[rho >= 1.0 - band] = 0.0
        if float(out.sum()) >= 0.3 * inside:
            return out
    return out


def glyph(ink: np.ndarray, *, level: float = 0.3) -> np.ndarray | None:
    """Normalise the ink of a crop to a ``GLYPH x GLYPH`` float32 image (MNIST-style: the ink's
    bounding box scaled to fit 20 px, centred by its centre of mass), or ``None`` without ink."""
    top = float(np.percentile(ink, 99.8))
    if top <= 0.05:
        return None
    norm = np.clip(ink / top, 0.0, 1.0).astype(np.float32)
    mask = norm > level
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    if n <= 1:
        return None
    # drop specks (noise, leftovers of a wiped ring) far smaller than the main stroke
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = np.zeros(n, bool)
    keep[1:] = areas >= max(3, 0.08 * areas.max())
    mask = keep[labels]
    ys, xs = np.nonzero(mask)
    if len(xs) == 0:
        return None
    x0, x1, y0, y1 = xs.min(), xs.max() + 1, ys.min(), ys.max() + 1
    sub = norm[y0:y1, x0:x1] * mask[y0:y1, x0:x1]
    hh, ww = sub.shape
    scale = 20.0 / max(hh, ww)
    nh, nw = max(1, round(hh * scale)), max(1, round(ww * scale))
    sub = cv2.resize(sub, (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.zeros((GLYPH, GLYPH), np.float32)
    tot = float(sub.sum())
    if tot <= 0:
        return None
    cy = float((sub.sum(axis=1) * np.arange(nh)).sum() / tot)
    cx = float((sub.sum(axis=0) * np.arange(nw)).sum() / tot)
    oy = round(GLYPH / 2 - cy)
    ox = round(GLYPH / 2 - cx)
    oy = min(max(oy, 0), GLYPH - nh)
    ox = min(max(ox, 0), GLYPH - nw)
    out[oy:oy + nh, ox:ox + nw] = sub
    return out


def circle_input(ink: np.ndarray) -> np.ndarray:
    """The crop as the circle head sees it: ``CIRCLE_IN`` square, scaled to its strong ink."""
    top = max(float(np.percentile(ink, 99.8)), 0.05)
    small = cv2.resize(np.clip(ink / top, 0, 1).astype(np.float32), (CIRCLE_IN, CIRCLE_IN),
                       interpolation=cv2.INTER_AREA)
    return small


class DigitModel:
    """The ONNX digit model: ``glyph`` (N,1,28,28) -> digit logits (N,6) for 1-6, and
    ``crop`` (N,1,32,32) -> circle logit (N,1). Loaded once, lazily."""

    def __init__(self, path: str | Path = MODEL_PATH) -> None:
        self.path = str(path)

    def _session(self):
        return onnx_session(self.path, "digit model")

    def predict(self, glyphs: np.ndarray, crops: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Digit probabilities (N, 6) for 1..6 and circle probabilities (N,)."""
        if len(glyphs) == 0:
            return np.zeros((0, 6), np.float32), np.zeros((0,), np.float32)
        sess = self._session()
        logits, circ = sess.run(None, {
            "glyph": glyphs.reshape(-1, 1, GLYPH, GLYPH).astype(np.float32),
            "crop": crops.reshape(-1, 1, CIRCLE_IN, CIRCLE_IN).astype(np.float32)})
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return p, 1.0 / (1.0 + np.exp(-circ.reshape(-1)))
