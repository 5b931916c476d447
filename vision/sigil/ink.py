"""From a photo and a card pose to maps on the rectified card: ink, hidden, glare.

The card is rectified to ``px_per_mm`` pixels per millimetre (card mm -> pixel ``(x * s, y * s)``).
Light is normalised by an estimate of the bare card's brightness (a max filter over a coarse
grid: ink strokes are thinner than its cells), so that shade and uneven light cancel. The
printed artwork is removed by comparing with the blank card's reference image (normalised the
same way, darkened a little around its strokes so that a pixel of misregistration leaves no
trace); without a reference, the layout's printed elements are masked instead.

- ``ink``: float32 in [0, 1], how much darker than the blank card each pixel is, the darkest
  colour channel (so pens of any colour count);
- ``hidden``: bool, covered by something opaque that is not the card (a hand, a sleeve: its
  colour or darkness differs from the bare card's) or outside the photo;
- ``glare``: bool, washed out by a specular reflection on the laminate.

Convention: arrays are indexed ``[row, col]`` = ``[y * s, x * s]`` with ``x, y`` in card mm.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property, reduce

import cv2
import numpy as np

from vision.cache import per_object
from vision.sigil.bands import stack_maps
from vision.sigil.edges import Edge, EdgeConfig, edge_cover
from vision.sigil.geometry import CardGeometry

__all__ = ["COVER_CHANNELS", "CardMaps", "card_maps", "cover_input", "element_mask",
           "prepare_reference", "print_fade", "print_mask"]

COARSE = 8  # the light-estimate grid cell, in rectified pixels
MIN_CONTRAST = 0.05  # the print contrast is never taken as fainter than this
COVER_PX_PER_MM = 1.0  # resolution of the learned cover map's input and output
COVER_CHANNELS = 9


@dataclass(frozen=True)
class Reference:
    """A blank card prepared for subtraction: light-normalised, darkened around its strokes,
    and its coarse paper colour (for telling a hand from the card)."""

    floor: np.ndarray      # (H, W, 3) float32: the blank card, light-normalised
    grey: np.ndarray       # (H, W) float32: its darkest channel
    paper: np.ndarray      # (h, w, 3) float32 coarse paper colour, normalised to its median
    dark: np.ndarray       # (H, W) bool: printed artwork (for the contrast estimate)
    contrast: float = 0.0  # darkness of that artwork in the reference itself (0: unknown)
    stand_in: bool = False  # no blank card given: the layout's printed elements masked


@dataclass(frozen=True)
class CardMaps:
    ink: np.ndarray
    hidden: np.ndarray
    glare: np.ndarray
    blind: np.ndarray      # printed artwork dark enough that ink cannot be measured on it
    contrast: float        # darkness of the printed artwork in this photo (0..1)
    rectified: np.ndarray  # BGR uint8 rectified card
    cover_in: np.ndarray | None = None  # what the cover model saw (None: not used)
    ref: Reference | None = None  # the blank card subtracted (for ``fade``)
    spread_px: int = 1
    px_per_mm: float = 4.0
    norm: np.ndarray | None = None  # the light-normalised photo (float32 BGR), when kept
    outside: np.ndarray | None = None  # card pixels outside the photo (None: none are)
    edges: tuple[Edge, ...] = ()  # another card's edges across this one (what they cover hidden)

    @property
    def level(self) -> float:
        """The print contrast that ink is measured against (never below ``MIN_CONTRAST``)."""
        return max(self.contrast, MIN_CONTRAST)

    @cached_property
    def relative_ink(self) -> np.ndarray:
        """Ink over the print contrast of this photo (1: as dark as the printed artwork)."""
        return self.ink / self.level

    @cached_property
    def stack(self) -> np.ndarray:
        """The maps as one image, the strips and the discs of this frame sample it
        (:func:`vision.sigil.bands.stack_maps`)."""
        return stack_maps(self.relative_ink, self.hidden, self.glare, self.blind)

    @cached_property
    def fade(self) -> np.ndarray | None:
        """How many times fainter the printed artwork prints around each pixel than on the
        card as a whole (:func:`print_fade`; glare washes print and pen out alike), or None
        when it prints evenly, or without a blank card or the light-normalised photo (both
        kept by :func:`card_maps`). Computed on first use."""
        if self.ref is None or self.ref.stand_in or self.norm is None:
            return None
        return print_fade(_min3(self.norm), self.ref, self.hidden, px_per_mm=self.px_per_mm,
                          spread_px=self.spread_px)


def _paper(img: np.ndarray) -> np.ndarray:
    """Coarse estimate of the bare card's colour: area-mean over COARSE cells, then a 3x3 max
    filter (drops the strokes), then a light blur. Returns the coarse (h, w, 3) float32 image."""
    h, w = img.shape[:2]
    small = cv2.resize(img, (max(2, w // COARSE), max(2, h // COARSE)),
                       interpolation=cv2.INTER_AREA).astype(np.float32)
    small = cv2.dilate(small, np.ones((3, 3), np.uint8))
    return cv2.blur(small, (3, 3))


def _up(small: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    return cv2.resize(small, (shape[1], shape[0]), interpolation=cv2.INTER_LINEAR)


def element_mask(geom: CardGeometry, px_per_mm: float, *, margin_mm: float = 0.4) -> np.ndarray:
    """Float32 (H, W) map, 0 on the layout's printed elements (candle outlines and numbers,
    stars, dividers, box borders, markers) grown by ``margin_mm``, 1 elsewhere. Stands in for
    a reference image when none is given."""
    s = px_per_mm
    w, h = geom.size_mm
    out = np.ones((round(h * s), round(w * s)), np.float32)
    t = max(1, round((0.5 + 2 * margin_mm) * s))
    for c in geom.candles:
        cx, cy = c.center
        cv2.circle(out, (round(cx * s), round(cy * s)), round(c.radius * s), 0.0, t)
        cv2.circle(out, (round(cx * s), round(cy * s)), round(0.6 * c.radius * s), 0.0, -1)
    for x, y in geom.stars:
        cv2.circle(out, (round(x * s), round(y * s)), round((2.4 + margin_mm) * s), 0.0, -1)
    if geom.dividers is not None:
        vx, hy = geom.dividers
        cv2.line(out, (round(vx * s), 0), (round(vx * s), out.shape[0]), 0.0, t)
        cv2.line(out, (0, round(hy * s)), (out.shape[1], round(hy * s)), 0.0, t)
    for box in (*geom.top_boxes, *geom.score_boxes):
        x0, y0, x1, y1 = (round(v * s) for v in box)
        cv2.rectangle(out, (x0, y0), (x1, y1), 0.0, t)
    for m in geom.markers:
        (cx, cy), half = m.center, m.size / 2 * 1.4 + margin_mm
        cv2.rectangle(out, (round((cx - half) * s), round((cy - half) * s)),
                      (round((cx + half) * s), round((cy + half) * s)), 0.0, -1)
    border = round(2.5 * s)
    out[:border], out[-border:], out[:, :border], out[:, -border:] = 0, 0, 0, 0
    return out


def _min3(a: np.ndarray) -> np.ndarray:
    return np.minimum(np.minimum(a[..., 0], a[..., 1]), a[..., 2])


def _max3(a: np.ndarray) -> np.ndarray:
    return np.maximum(np.maximum(a[..., 0], a[..., 1]), a[..., 2])


def _outlines(geom: CardGeometry, px_per_mm: float) -> np.ndarray:
    """Bool map of the candle outlines (printed on every card, thin like a pen stroke): the
    yardstick of ink contrast."""
    w, h = geom.size_mm
    dark = np.zeros((round(h * px_per_mm), round(w * px_per_mm)), np.uint8)
    for c in geom.candles:
        cx, cy = c.center
        cv2.circle(dark, (round(cx * px_per_mm), round(cy * px_per_mm)),
                   round(c.radius * px_per_mm), 1, max(1, round(0.3 * px_per_mm)))
    return dark.astype(bool)


def prepare_reference(reference: np.ndarray | None, geom: CardGeometry,
                      px_per_mm: float) -> Reference:
    """Resize and normalise a blank card image (BGR, the whole card, any resolution) or, with
    ``None``, build the stand-in from the layout's printed elements."""
    w, h = geom.size_mm
    size = (round(w * px_per_mm), round(h * px_per_mm))
    if reference is None:
        mask = element_mask(geom, px_per_mm)
        floor = np.repeat(mask[..., None], 3, axis=2)
        paper = np.ones((max(2, size[1] // COARSE), max(2, size[0] // COARSE), 3), np.float32)
        return Reference(floor, mask, paper, _outlines(geom, px_per_mm), stand_in=True)
    ref = cv2.resize(reference, size, interpolation=cv2.INTER_AREA).astype(np.float32)
    paper_small = _paper(ref)
    norm = ref / np.maximum(_up(paper_small, ref.shape[:2]), 1.0)
    floor = np.clip(norm, 0, 1).astype(np.float32)
    dark = _outlines(geom, px_per_mm) & (_min3(norm) < 0.7)
    paper_small = cv2.dilate(paper_small, np.ones((3, 3), np.uint8))
    med = np.median(paper_small.reshape(-1, 3), axis=0)
    grey = _min3(floor)
    own = float(np.percentile(1.0 - grey[dark], 80)) if dark.sum() > 50 else 0.0
    return Reference(floor, grey, paper_small / np.maximum(med, 1.0), dark, own)


@per_object(size=32)
def _floor(ref: Reference, radius: int) -> np.ndarray:
    """The reference darkened around its strokes by ``radius`` px (a min filter): a stroke
    blurred or shifted by that much in the photo leaves no ink behind."""
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
    return cv2.erode(ref.floor, k) if radius > 0 else ref.floor


def _erfinv(y: float) -> float:
    """Inverse error function on (0, 1) by bisection (no scipy at run time)."""
    import math

    lo, hi = 0.0, 6.0
    for _ in range(40):
        mid = (lo + hi) / 2
        if math.erf(mid) < y:
            lo = mid
        else:
            hi = mid
    return max((lo + hi) / 2, 1e-3)


@per_object(size=32)
def _blurred_floor(ref: Reference, sigma: float, radius: int) -> np.ndarray:
    """The lower of :func:`_floor` and the reference blurred by ``sigma`` then darkened the
    same way, cached per reference (a blurred photo's floor; the minimum made once, not at
    every photo)."""
    out = cv2.GaussianBlur(ref.floor, (0, 0), sigma)
    if radius > 0:
        k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        out = cv2.erode(out, k)
    return np.minimum(_floor(ref, radius), out)


@per_object(size=32)
def _blind(ref: Reference, radius: int) -> np.ndarray:
    """Where the (spread) printed artwork is too dark to measure ink on."""
    return _min3(_floor(ref, radius)) < 0.5


@per_object(size=32)
def print_mask(ref: Reference, radius: int, level: float = 0.9) -> np.ndarray:
    """Where the blank card, darkened around its strokes by ``radius`` px as the ink map's
    floor is, is printed (darker than ``level`` of its paper in some channel): the ink map is
    0 there under a shadow as on bare paper, since the floor is darker than both. float32
    0/1 (H, W)."""
    return (_min3(_floor(ref, radius)) < level).astype(np.float32)


def _block_reduce(a: np.ndarray, f: int, h: int, w: int, op: Callable[..., np.ndarray],
                  ) -> np.ndarray:
    """``op`` (``np.minimum`` or ``np.maximum``) of ``a`` (2-D) over each f x f block, (h, w):
    the f rows of each block reduced, then the f columns (the same values as an f x f erosion
    or dilation read at every f-th pixel, at about half its cost for f = 4)."""
    rows = reduce(op, (a[k:h * f:f] for k in range(f)))
    return reduce(op, (rows[:, k:w * f:f] for k in range(f)))


@per_object(size=32)
def _ref_cover(ref: Reference, f: int, h: int, w: int) -> np.ndarray:
    """The blank card's channels of :func:`cover_input`, (h, w, 4), cached per reference."""
    return np.concatenate([
        cv2.resize(ref.floor[:h * f, :w * f], (w, h), interpolation=cv2.INTER_AREA),
        _block_reduce(ref.grey, f, h, w, np.minimum)[..., None]], axis=2).astype(np.float32)


def cover_input(rect: np.ndarray, ref: Reference, white: np.ndarray,
                px_per_mm: float) -> np.ndarray:
    """What the learned cover model sees, float32 ``(COVER_CHANNELS, h, w)`` at
    ``COVER_PX_PER_MM``: the photo's colour (balanced by the bare card's ``white``) and the
    blank card's (light-normalised), each the block mean and the darkest channel's block
    minimum (thin printed strokes, which a hand hides and a shadow does not), and the photo's
    brightest pixel of each block (the bare card showing between pen strokes: writing in a
    colour like skin's is not a hand)."""
    f = max(1, round(px_per_mm / COVER_PX_PER_MM))
    h, w = rect.shape[0] // f, rect.shape[1] // f
    # the balanced colour, min(value / white, 1.5) per channel, by a table of the 256 values
    # (the same float32 products as converting and scaling the whole photo, a fifth the work)
    scale = (1.0 / np.maximum(white, 1.0)).astype(np.float32)
    table = np.minimum(np.arange(256, dtype=np.float32)[:, None] * scale[None, :],
                       np.float32(1.5))
    b, g, r = (cv2.LUT(c, table[:, k].reshape(1, 256))
               for k, c in enumerate(cv2.split(rect[:h * f, :w * f])))
    bright = cv2.add(cv2.add(b, g), r)
    np.multiply(bright, np.float32(1 / 3), out=bright)
    out = np.empty((COVER_CHANNELS, h, w), np.float32)
    for k, c in enumerate((b, g, r)):
        out[k] = cv2.resize(c, (w, h), interpolation=cv2.INTER_AREA)
    out[3] = _block_reduce(cv2.min(cv2.min(b, g), r), f, h, w, np.minimum)
    out[4:8] = _ref_cover(ref, f, h, w).transpose(2, 0, 1)
    out[8] = _block_reduce(bright, f, h, w, np.maximum)
    return out


def print_fade(norm_grey: np.ndarray, ref: Reference, hidden: np.ndarray, *,
               px_per_mm: float, spread_px: int, window_mm: float = 10.0,
               most: float = 4.0) -> np.ndarray | None:
    """How many times fainter (>= 1, at most ``most``) the printed artwork prints around each
    pixel than on the card as a whole: glare washes print and pen out alike. None when nothing
    prints fainter.

    ``norm_grey`` is the light-normalised photo's darkest channel. Per printed pixel of the
    blank card, the photo's darkness (its darkest pixel within ``spread_px``) over the blank
    card's, averaged over ``window_mm`` squares (three times as wide where too little print
    lies within them), against the card's median. Where no print lies near enough, ``most``."""
    printed = (ref.grey < 0.6) & ~hidden
    if printed.sum() < 200:
        return None
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * spread_px + 1, 2 * spread_px + 1))
    dark = 1.0 - cv2.erode(norm_grey, k)
    r = np.clip(dark / np.maximum(1.0 - ref.grey, 0.2), 0.0, 1.5) * printed
    w = printed.astype(np.float32)
    # at a quarter of the resolution: the fading is smooth (a glare spot spans centimetres)
    small = (w.shape[1] // 4, w.shape[0] // 4)
    rs = cv2.resize(r.astype(np.float32), small, interpolation=cv2.INTER_AREA)
    ws = cv2.resize(w, small, interpolation=cv2.INTER_AREA)
    # the window, and where it holds too little print, one three times as wide
    local = np.full(rs.shape, np.nan, np.float32)
    for scale, least in ((1, 0.02), (3, 0.01)):
        win = max(3, round(scale * window_mm * px_per_mm / 4) | 1)
        num = cv2.blur(rs, (win, win))
        den = cv2.blur(ws, (win, win))
        todo = np.isnan(local) & (den > least)
        local[todo] = num[todo] / den[todo]
    if np.isnan(local).all():
        return None
    typical = float(np.nanmedian(local))
    # no print near enough to tell: as if washed out (nothing there says it is not)
    gain = np.where(np.isnan(local), most, typical / np.maximum(np.nan_to_num(local),
                                                                 typical / most))
    gain = np.clip(gain, 1.0, most).astype(np.float32)
    if float(gain.max()) < 1.15:
        return None
    return cv2.resize(cv2.blur(gain, (3, 3)), (w.shape[1], w.shape[0]),
                      interpolation=cv2.INTER_LINEAR)


def card_maps(rect: np.ndarray, valid: np.ndarray, ref: Reference, *,
              hand_chroma: float = 0.10, hand_dark: float = 0.45, glare_gain: float = 1.22,
              hidden_grow_mm: float = 1.5, px_per_mm: float = 5.0,
              spread_px: int = 2, blob_mm: float = 4.0, blur_match: bool = True,
              cover: Callable[[np.ndarray], np.ndarray] | None = None,
              cover_level: float = 0.5, cover_min_mm: float = 3.0,
              cover_island_mm2: float = 120.0, keep_cover_input: bool = False,
              edges: EdgeConfig | None = None, also_hidden: np.ndarray | None = None,
              ) -> CardMaps:
    """Ink, hidden and glare maps of a rectified card photo (see the module docstring).

    ``rect`` is the BGR uint8 rectified photo, ``valid`` a bool map of pixels inside the photo.
    ``hand_chroma`` is the change of colour (L1 of normalised rgb) and ``hand_dark`` the
    brightness ratio to the bare card below which the card is taken to be covered;
    ``glare_gain`` the brightness ratio above which it is washed out. Dark areas wider than
    ``blob_mm`` (no pen stroke is) are hidden too (0 turns this off).

    ``cover``, when given (and a blank card is), replaces the colour and darkness rule: a
    function from :func:`cover_input` to the probability (h, w) that each cell is covered
    (the learned cover model); cells above ``cover_level`` are hidden, at their own size,
    where they are at least ``cover_min_mm`` wide (no pen stroke is), and, away from the
    card's edge, ``cover_island_mm2`` large (no hand lies on a card without reaching it).
    ``keep_cover_input`` keeps its input in the maps (for training it).

    ``edges``, when given (and a blank card is): another card lying over this one is found by
    its straight edge and the print missing beyond it (:func:`vision.sigil.edges.edge_cover`)
    and what it covers is hidden too. ``also_hidden`` (bool, as ``rect``): what the caller knows
    to be covered (another card found lying over this one), hidden too.
    """
    H, W = rect.shape[:2]
    img = rect.astype(np.float32)
    paper_small = _paper(img)
    paper = _up(paper_small, (H, W))
    norm = np.divide(img, np.maximum(paper, 1.0, out=paper), out=paper)

    # what covers the card: colour or brightness of the coarse paper estimate vs the blank card
    vs = valid[::COARSE, ::COARSE][:paper_small.shape[0], :paper_small.shape[1]]
    # a wider max filter for what covers the card: dense writing must not look like a hand
    paper_small = cv2.dilate(paper_small, np.ones((3, 3), np.uint8))
    bright = paper_small.mean(axis=2)
    level = float(np.percentile(bright[vs], 70)) if vs.any() else 1.0
    white = np.median(paper_small[vs & (bright > 0.8 * level)], axis=0) if vs.any() else \
        np.ones(3, np.float32)
    p = paper_small / np.maximum(white, 1.0)
    r = ref.paper
    if r.shape != p.shape:
        r = cv2.resize(r, (p.shape[1], p.shape[0]), interpolation=cv2.INTER_LINEAR)
    chroma = np.abs(p / np.maximum(p.sum(axis=2, keepdims=True), 1e-3)
                    - r / np.maximum(r.sum(axis=2, keepdims=True), 1e-3)).sum(axis=2)
    ratio = p.mean(axis=2) / np.maximum(r.mean(axis=2), 1e-3)
    glare_small = ratio > glare_gain
    grow = max(1, round(hidden_grow_mm * px_per_mm))
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * grow + 1, 2 * grow + 1))
    learned = cover is not None and not ref.stand_in
    cover_in = None
    if learned or keep_cover_input:
        cover_in = cover_input(rect, ref, white, px_per_mm)
    if learned and cover is not None and cover_in is not None:
        # the learned cover map: what a hand, a sleeve or strong glare hides, cell by cell
        prob = cover(cover_in)
        full = np.zeros((H, W), np.float32)
        f = max(1, round(px_per_mm / COVER_PX_PER_MM))
        full[:prob.shape[0] * f, :prob.shape[1] * f] = cv2.resize(
            prob.astype(np.float32), (prob.shape[1] * f, prob.shape[0] * f),
            interpolation=cv2.INTER_LINEAR)
        hidden = full > cover_level
        if cover_min_mm > 0 and hidden.any():
            # what covers the card is wider than any pen stroke: dense writing in a colour
            # like skin's is not a hand
            rad = max(1, round(cover_min_mm * px_per_mm / 2))
            disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * rad + 1, 2 * rad + 1))
            hidden = cv2.morphologyEx(hidden.astype(np.uint8), cv2.MORPH_OPEN, disk).astype(bool)
        if cover_island_mm2 > 0 and hidden.any():
            # a hand or a sleeve reaches onto the card from beyond its edge: a small patch
            # inside the card is dense writing (a filled circle, a scribbled cross)
            _, lab, stats, _ = cv2.connectedComponentsWithStats(hidden.astype(np.uint8), 8)
            edge = max(1, round(px_per_mm))
            x0, y0, w0, h0 = (stats[:, k] for k in range(4))
            inner = (x0 >= edge) & (y0 >= edge) & (x0 + w0 <= W - edge) & (h0 + y0 <= H - edge)
            small = stats[:, cv2.CC_STAT_AREA] < cover_island_mm2 * px_per_mm ** 2
            drop = np.nonzero(inner & small)[0]
            drop = drop[drop > 0]
            if len(drop):
                keep = np.ones(len(stats), bool)
                keep[drop] = False
                hidden &= keep[lab]
    else:
        covered = (chroma > hand_chroma) | (ratio < hand_dark)
        # the max filter shrank covered areas by about a cell: grow them back and a margin more
        hidden = _up(covered.astype(np.float32), (H, W)) > 0.25
        hidden = cv2.dilate(hidden.astype(np.uint8), k, iterations=2).astype(bool)
    hidden |= ~valid
    if also_hidden is not None:
        hidden |= also_hidden
    if glare_small.any():
        glare = _up(glare_small.astype(np.float32), (H, W)) > 0.25
        glare = cv2.dilate(glare.astype(np.uint8), k).astype(bool)
    else:  # (nothing to grow: the common case)
        glare = np.zeros((H, W), bool)
    covering: list[Edge] = []
    if edges is not None and edges.use and not ref.stand_in:
        over, covering = edge_cover(_min3(norm), ref.grey, hidden | glare, px_per_mm=px_per_mm,
                                    spread_px=spread_px, cfg=edges)
        hidden |= over

    # contrast of the printed artwork in this photo, the yardstick of every ink level
    dark_px = ref.dark & ~hidden & ~glare
    at = np.flatnonzero(dark_px)
    contrast = float(np.percentile(1.0 - _min3(norm.reshape(-1, 3)[at]), 80)) \
        if len(at) > 50 else 0.6
    floor = _floor(ref, spread_px)
    # a blurred photo smears the artwork wider (and fainter) than a pixel's spread covers: when
    # the outlines print fainter than in the reference, also subtract the reference blurred to
    # match (a line of width w blurred by sigma keeps erf(w / (2 sqrt(2) sigma)) of its peak)
    if ref.contrast > 0 and blur_match:
        ratio = min(max(contrast / ref.contrast, 0.2), 1.0)
        if ratio < 0.85:
            sigma = 0.45 * px_per_mm / (2 * np.sqrt(2) * _erfinv(ratio))
            sigma = float(min(max(round(sigma * 2) / 2, 0.5), 4.0))
            floor = _blurred_floor(ref, sigma, spread_px)
    ink = _max3(np.subtract(floor, norm, out=img))     # (the photo's float copy is done with)
    np.clip(ink, 0.0, 1.0, out=ink)
    ink[hidden] = 0.0
    # a dark area far wider than any pen stroke (a hand's shadow, a sleeve, a smudge of dirt) is
    # not writing: what lies under it cannot be read
    if blob_mm > 0:
        dark = ink > 0.3 * max(contrast, MIN_CONTRAST)
        if not learned:
            # (the old rule's covered areas come out a cell short: the blob's margin grows them)
            dark |= hidden
        dark = dark.astype(np.uint8)
        # opened at half resolution (a blob is millimetres wide: the same blobs, a quarter
        # of the work), a half-resolution pixel dark when half or more of its four are
        half = cv2.resize(dark * np.uint8(255), (max(1, W // 2), max(1, H // 2)),
                          interpolation=cv2.INTER_AREA)
        rad = max(1, round(blob_mm * px_per_mm / 4))
        disk = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * rad + 1, 2 * rad + 1))
        blob = cv2.morphologyEx((half >= 128).astype(np.uint8), cv2.MORPH_OPEN, disk)
        if blob.any():
            blob = cv2.resize(blob, (W, H), interpolation=cv2.INTER_NEAREST) & dark
            blob = cv2.dilate(blob, k).astype(bool)
            hidden |= blob
            ink[blob] = 0.0
    blind = _blind(ref, spread_px)
    return CardMaps(ink=ink, hidden=hidden, glare=glare, blind=blind, contrast=contrast,
                    rectified=rect, cover_in=cover_in if keep_cover_input else None,
                    ref=ref, spread_px=spread_px, px_per_mm=px_per_mm, norm=norm,
                    outside=None if valid.all() else ~valid, edges=tuple(covering))
