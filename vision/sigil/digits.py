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
from functools import lru_cache
from pathlib import Path

import cv2
import numpy as np

from vision.onnxmodel import onnx_session

__all__ = ["CROP", "GLYPH", "MARGIN", "DigitModel", "Ring", "digit_glyphs", "find_ring", "glyph",
           "percentile", "remove_ring", "remove_ring_pieces"]

CROP = 48          # side of the square crop (box + margins) in pixels
MARGIN = 0.2       # margin around the box on each side, as a fraction of the box size
GLYPH = 28         # side of the normalised glyph
CIRCLE_IN = 32     # side of the crop given to the circle head
N_ANGLES = 36
RING_RAYS = 48     # rays along which the ring's stroke width is measured
RING_MAX_WIDTH = 0.3  # the ring's width never taken above this share of its smaller radius
MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "digits" / "digits.onnx"


def percentile(a: np.ndarray, q: float) -> float:
    """``np.percentile(a, q)`` (linear interpolation) over all of ``a``'s values, without NumPy's
    per-call overhead (a partition of the one or two order statistics needed: the box reader
    takes a dozen percentiles of small crops per frame). ``a`` must not be empty."""
    f = np.asarray(a).ravel()
    pos = q / 100.0 * (f.size - 1)
    lo = int(pos)
    hi = min(lo + 1, f.size - 1)
    part = np.partition(f, (lo, hi))
    return float(part[lo]) + (float(part[hi]) - float(part[lo])) * (pos - lo)


@dataclass(frozen=True)
class Ring:
    """A ring of ink around the centre of a crop (a circle drawn around a number).

    ``center`` is ``(x, y)`` in crop pixels; ``radii`` the outer ink radius per angle bin
    (``N_ANGLES`` bins from 0 rad, counter-clockwise in image coordinates; 0 where unknown: no
    ink, or the ink runs off the crop); ``coverage`` the
    share of angle bins where the ring has ink; ``gap`` the share of bins where bare card
    separates the ring from the ink inside.
    """

    center: tuple[float, float]
    radii: np.ndarray
    coverage: float
    gap: float
    width: float


@lru_cache(maxsize=8)
def _grid(h: int, w: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of an (h, w) crop as float32 (made once per shape, read-only)."""
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    yy.flags.writeable = False
    xx.flags.writeable = False
    return yy, xx


def _polar(shape: tuple[int, int], center: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    h, w = shape
    yy, xx = _grid(h, w)
    dx, dy = xx - center[0], yy - center[1]
    r = np.sqrt(dx * dx + dy * dy)
    a = (np.arctan2(dy, dx) + np.pi) / (2 * np.pi) * N_ANGLES
    return r, np.clip(a.astype(np.int32), 0, N_ANGLES - 1)


def _stroke_width(mask: np.ndarray) -> float:
    area = float(mask.sum())
    if area == 0:
        return 1.0
    dist = cv2.distanceTransform(mask.astype(np.uint8), cv2.DIST_L2, 3)
    return float(max(1.0, 2.0 * percentile(dist[mask], 90)))


def find_ring(ink: np.ndarray, *, level: float = 0.3, edge_share: float = 0.25) -> Ring | None:
    """Look for a ring of ink around the rest of the ink in a crop.

    The ring's centre is the middle of the ink's bounding box, leaving out small pieces that
    only enter the crop across its border (a neighbouring box's ring, printed residue). Angle
    bins whose outermost ink lies on the crop's border (a ring drawn past the crop) get radius
    0: their true radius is unknown, so :func:`remove_ring` does not fit the ellipse to them.

    Parameters
    ----------
    ink : ndarray, float32, shape (H, W)
        Ink map of the crop, 0 bare card, 1 full ink.
    level : float
        Ink above this level (relative to the crop's strong ink) counts as a stroke pixel.
    edge_share : float
        A piece touching the crop's border and smaller than this share of the largest piece is
        left out.

    Returns
    -------
    Ring or None
        ``None`` when there is too little ink to say.
    """
    top = percentile(ink, 99.5)
    if top <= 0.05:
        return None
    mask = ink > level * top
    h, w = ink.shape
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    if n > 2:
        x, y = stats[:, cv2.CC_STAT_LEFT], stats[:, cv2.CC_STAT_TOP]
        bw, bh = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
        area = stats[:, cv2.CC_STAT_AREA]
        edge = (x == 0) | (y == 0) | (x + bw == w) | (y + bh == h)
        keep = ~(edge & (area < edge_share * area[1:].max()))
        keep[0] = False
        mask = keep[labels]
    ys, xs = np.nonzero(mask)
    if len(xs) < 8:
        return None
    center = (float((xs.min() + xs.max()) / 2.0), float((ys.min() + ys.max()) / 2.0))
    r, a = _polar((h, w), center)
    rr, aa = r[mask], a[mask]
    radii = np.zeros(N_ANGLES, np.float32)
    np.maximum.at(radii, aa, rr)
    present = radii > 0
    # smooth the outer profile over neighbouring angles (a ring's radius changes slowly)
    ring_r = np.where(present, radii, np.nan)
    width = _stroke_width(mask)
    # a bin has a "gap" when, inside the outermost stroke, there is bare card then more ink:
    # the farthest ink short of the ring's stroke (about a stroke width inside the outer
    # radius) lies well inside it
    below = rr < radii[aa] - 1.5 * width - 1.0
    inner = np.full(N_ANGLES, -np.inf, np.float32)
    np.maximum.at(inner, aa[below], rr[below])
    gap_bins = int((present & np.isfinite(inner)
                    & (radii - width - inner > max(2.0, 0.6 * width))).sum())
    med = percentile(radii[present], 50) if present.any() else 0.0
    near = present & (np.abs(np.nan_to_num(ring_r) - med) < 0.35 * med)
    # bins cut off by the crop's border: radius unknown
    border = np.zeros((h, w), bool)
    border[0, :] = border[-1, :] = border[:, 0] = border[:, -1] = True
    cut = np.zeros(N_ANGLES, bool)
    cut[np.unique(aa[border[mask]])] = True
    radii[cut] = 0.0
    return Ring(center=center, radii=radii, coverage=float(near.mean()),
                gap=float(gap_bins / N_ANGLES), width=width)


def _ellipse(ring: Ring) -> tuple[float, float, float, float, float] | None:
    """``(cx, cy, a, b, theta)`` of an ellipse fitted to the outermost ink of the angle bins
    that agree with the ring's typical radius (so a gap in the ring, or a digit reaching out
    where the ring is missing, does not bend it); ``theta`` in radians. ``None`` without
    enough such bins."""
    radii = ring.radii.astype(np.float32)
    valid = radii > 0
    if valid.sum() < 6:
        return None
    med = percentile(radii[valid], 50)
    ok = valid & (np.abs(radii - med) < 0.25 * med)
    if ok.sum() < 6:
        return None
    ang = (np.arange(N_ANGLES)[ok] + 0.5) / N_ANGLES * 2 * np.pi - np.pi
    pts = np.stack([ring.center[0] + radii[ok] * np.cos(ang),
                    ring.center[1] + radii[ok] * np.sin(ang)], 1).astype(np.float32)
    (cx, cy), (w, h), theta = cv2.fitEllipse(pts)
    a, b = w / 2.0, h / 2.0
    if not (np.isfinite([cx, cy, a, b]).all() and min(a, b) > 2.0):
        return None
    return float(cx), float(cy), float(a), float(b), float(np.deg2rad(theta))


def _elliptic(shape: tuple[int, int], el: tuple[float, float, float, float, float],
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per pixel: the normalised elliptic radius ``rho`` (1 on the ellipse), the depth inside
    the ellipse in pixels along the ray from its centre, and the angle bin (``N_ANGLES``)."""
    cx, cy, a, b, t = el
    yy, xx = _grid(*shape)
    dx, dy = xx - cx, yy - cy
    xr = (dx * np.cos(t) + dy * np.sin(t)) / a
    yr = (-dx * np.sin(t) + dy * np.cos(t)) / b
    rho = np.sqrt(xr * xr + yr * yr)
    dist = np.sqrt(dx * dx + dy * dy)
    depth = dist / np.maximum(rho, 1e-3) - dist
    ang = ((np.arctan2(yr, xr) + np.pi) / (2 * np.pi) * N_ANGLES).astype(np.int32) % N_ANGLES
    return rho, depth, ang


def remove_ring(ink: np.ndarray, ring: Ring) -> np.ndarray:
    """Wipe the ring's stroke as a band: an ellipse is fitted to the ring's outer edge
    (:func:`_ellipse`), and the ink within about a stroke width of it, or outside it, is
    removed."""
    el = _ellipse(ring)
    if el is None:
        return ink.copy()
    return _remove_band(ink, ring, el, _elliptic(ink.shape, el)[0])


def _remove_band(ink: np.ndarray, ring: Ring, el: tuple[float, float, float, float, float],
                 rho: np.ndarray) -> np.ndarray:
    a, b = el[2], el[3]
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


def _ring_width(ink: np.ndarray, el: tuple[float, float, float, float, float],
                thr: float) -> float | None:
    """Median length in pixels of the outermost run of ink along ``RING_RAYS`` rays from the
    ellipse's centre, over the rays whose outermost ink reaches the fitted outer edge (a digit
    touching the ring lengthens a few runs, not the median). ``None`` if too few rays do."""
    cx, cy, a, b, t = el
    u = (np.arange(RING_RAYS) + 0.5) / RING_RAYS * 2 * np.pi
    ex = a * np.cos(u) * np.cos(t) - b * np.sin(u) * np.sin(t)
    ey = a * np.cos(u) * np.sin(t) + b * np.sin(u) * np.cos(t)
    step_len = np.hypot(ex, ey)
    rho = np.linspace(0, 1.2, 64, dtype=np.float32)
    mx = (cx + rho[None, :] * ex[:, None]).astype(np.float32)
    my = (cy + rho[None, :] * ey[:, None]).astype(np.float32)
    on = cv2.remap(ink.astype(np.float32, copy=False), mx, my, cv2.INTER_LINEAR,
                   borderMode=cv2.BORDER_CONSTANT, borderValue=0) >= thr
    n = on.shape[1]
    j = np.arange(n)
    outer = n - 1 - np.argmax(on[:, ::-1], axis=1)              # outermost ink per ray
    ok = on.any(axis=1) & (rho[outer] >= 0.85)
    # the run's first pixel: one past the last bare sample inside the outermost ink
    start = np.where(~on & (j[None, :] <= outer[:, None]), j[None, :], -1).max(axis=1) + 1
    start = np.minimum(start, n - 1)                          # (rays without ink)
    runs = ((rho[outer] - rho[start] + rho[1]) * step_len)[ok]
    return percentile(runs, 50) if len(runs) >= RING_RAYS // 4 else None


def remove_ring_pieces(ink: np.ndarray, ring: Ring, *, level: float = 0.3) -> np.ndarray:
    """Wipe the ring piece by piece: the crop's strokes (ink above ``level`` of its strong ink,
    8-connected) that lie within the ring's zone (about 1.6 ring widths inside the fitted outer
    edge) are the ring and go whole, with a 2 px halo; a stroke that runs round the ring and
    also reaches well inside (the digit touching the ring) loses only a band one ring width
    deep (measured along rays, :func:`_ring_width`); a stroke inside that only dips into the
    zone here and there is the digit and stays whole. Ink outside the ellipse goes too. Unlike
    :func:`remove_ring`, a digit close to the ring keeps its strokes."""
    el = _ellipse(ring)
    if el is None:
        return ink.copy()
    return _remove_pieces(ink, ring, el, *_elliptic(ink.shape, el), level=level)


def _remove_pieces(ink: np.ndarray, ring: Ring, el: tuple[float, float, float, float, float],
                   rho: np.ndarray, depth: np.ndarray, ang: np.ndarray, *,
                   level: float = 0.3) -> np.ndarray:
    thr = level * percentile(ink, 99.5)
    width = _ring_width(ink, el, thr)
    width = min(ring.width if width is None else width, RING_MAX_WIDTH * min(el[2], el[3]))
    zone = depth <= 1.6 * width + 1.0
    band = depth <= width + 0.5
    mask = ink > thr
    n, labels = cv2.connectedComponents(mask.astype(np.uint8), connectivity=8)
    drop = np.zeros_like(mask)
    keep = np.zeros_like(mask)
    for c in range(1, n):
        m = labels == c
        inz = m & zone
        inside = int(m.sum()) - int(inz.sum())
        if inside <= 3:
            drop |= m                                   # a piece of the ring
        elif len(np.unique(ang[inz])) >= 0.2 * N_ANGLES:
            drop |= m & band                            # ring and digit joined: a band only
            keep |= m & ~band
        else:
            keep |= m                                   # the digit
    k3 = np.ones((3, 3), np.uint8)
    halo = cv2.dilate(drop.astype(np.uint8), k3, iterations=2).astype(bool) & \
        ~cv2.dilate(keep.astype(np.uint8), k3).astype(bool)
    out = ink.copy()
    out[drop | halo | ((rho >= 1.0) & ~keep)] = 0.0
    return out


def digit_glyphs(crop: np.ndarray, circled: bool) -> list[np.ndarray]:
    """The glyphs the digit head reads for one crop (their probabilities are averaged): the
    crop's ink as it is when not circled; when circled, the rest after each way of removing the
    ring (:func:`remove_ring`, :func:`remove_ring_pieces`: each fails on some crops where the
    other does not). A crop without readable ink gives an all-zero glyph."""
    rests = [crop]
    if circled:
        ring = find_ring(crop)
        el = None if ring is None else _ellipse(ring)
        if ring is not None and el is not None:
            rho, depth, ang = _elliptic(crop.shape, el)
            rests = [_remove_band(crop, ring, el, rho),
                     _remove_pieces(crop, ring, el, rho, depth, ang)]
    out = []
    for rest in rests:
        g = glyph(rest)
        out.append(np.zeros((GLYPH, GLYPH), np.float32) if g is None else g)
    return out


def glyph(ink: np.ndarray, *, level: float = 0.3) -> np.ndarray | None:
    """Normalise the ink of a crop to a ``GLYPH x GLYPH`` float32 image (MNIST-style: the ink's
    bounding box scaled to fit 20 px, centred by its centre of mass), or ``None`` without ink."""
    top = percentile(ink, 99.8)
    if top <= 0.05:
        return None
    norm = np.clip(ink / top, 0.0, 1.0).astype(np.float32, copy=False)
    mask = norm > level
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), 8)
    if n <= 1:
        return None
    # drop specks (noise, leftovers of a wiped ring) far smaller than the main stroke
    areas = stats[1:, cv2.CC_STAT_AREA]
    keep = np.zeros(n, bool)
    keep[1:] = areas >= max(3, 0.08 * areas.max())
    if not keep.any():
        return None
    # the kept pieces' bounding box, from their own boxes
    box = stats[keep]
    x0, y0 = box[:, cv2.CC_STAT_LEFT].min(), box[:, cv2.CC_STAT_TOP].min()
    x1 = (box[:, cv2.CC_STAT_LEFT] + box[:, cv2.CC_STAT_WIDTH]).max()
    y1 = (box[:, cv2.CC_STAT_TOP] + box[:, cv2.CC_STAT_HEIGHT]).max()
    sub = norm[y0:y1, x0:x1] * keep[labels[y0:y1, x0:x1]]
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
    top = max(percentile(ink, 99.8), 0.05)
    small = cv2.resize(np.clip(ink / top, 0, 1).astype(np.float32, copy=False),
                       (CIRCLE_IN, CIRCLE_IN), interpolation=cv2.INTER_AREA)
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
            "glyph": glyphs.reshape(-1, 1, GLYPH, GLYPH).astype(np.float32, copy=False),
            "crop": crops.reshape(-1, 1, CIRCLE_IN, CIRCLE_IN).astype(np.float32, copy=False)})
        z = logits - logits.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        return p, 1.0 / (1.0 + np.exp(-circ.reshape(-1)))

    def read(self, crops: np.ndarray, circle_prob: float = 0.5,
             ) -> tuple[np.ndarray, np.ndarray]:
        """Digit probabilities (N, 6) for 1..6 and circle probabilities (N,) of ink crops
        (N, CROP, CROP), as :meth:`predict_digits` gives them with ``circled`` from the circle
        head (``>= circle_prob``), in at most two runs of the model: the first reads every crop
        as it is (the digit of an uncircled crop, and every circle), the second only the rests
        of the circled ones."""
        if len(crops) == 0:
            return np.zeros((0, 6), np.float32), np.zeros((0,), np.float32)
        circle_in = np.stack([circle_input(c) for c in crops])
        plain = np.stack([digit_glyphs(c, False)[0] for c in crops])
        pd, pc = self.predict(plain, circle_in)
        ringed = np.nonzero(pc >= circle_prob)[0]
        if len(ringed):
            pd[ringed] = self.predict_digits(crops[ringed], np.ones(len(ringed), bool),
                                             circle_in[ringed])
        return pd, pc

    def predict_digits(self, crops: np.ndarray, circled: np.ndarray,
                       circle_in: np.ndarray | None = None) -> np.ndarray:
        """Digit probabilities (N, 6) for 1..6 of ink crops (N, CROP, CROP), each the mean over
        its :func:`digit_glyphs` (``circled``: whether the circle head saw a ring)."""
        if len(crops) == 0:
            return np.zeros((0, 6), np.float32)
        if circle_in is None:
            circle_in = np.stack([circle_input(c) for c in crops])
        glyphs, owner = [], []
        for j, (c, ring) in enumerate(zip(crops, circled, strict=True)):
            g = digit_glyphs(c, bool(ring))
            glyphs.extend(g)
            owner.extend([j] * len(g))
        own = np.array(owner)
        p, _ = self.predict(np.stack(glyphs), circle_in[own])
        out = np.zeros((len(crops), 6), np.float32)
        np.add.at(out, own, p)
        return out / np.bincount(own, minlength=len(crops))[:, None]
