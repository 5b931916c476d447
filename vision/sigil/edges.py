"""Another card's edge across the card: what lies beyond it is covered.

A card lying over the one being read (a player's second card, a goal card) hides the print
beyond its straight edge, and shows its own print there instead; the learned cover map
(:mod:`vision.sigil.cover`, trained on hands, sleeves and glare) does not take a pale printed
card for a cover. Two cues together, neither tied to a design: a long straight step in the
photo that the blank card does not have (Hough segments of the photo's edges away from the
blank card's own print), and, on one side of it, the blank card's print missing where the
other side shows it. The covered region is that side as far along the edge as it runs
(where two such edges meet inside the card, a corner of the card on top, the side of both),
kept only where the blank card's print hardly shows (:func:`edge_cover`).

Convention: arrays are ``[row, col]`` = ``[y * s, x * s]`` on the rectified card, ``x, y`` in
card mm, ``s`` px/mm.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision.cache import per_object

__all__ = ["Edge", "EdgeConfig", "edge_cover", "print_shown"]


@dataclass(frozen=True)
class EdgeConfig:
    """Thresholds of :func:`edge_cover` (``SigilConfig.edges``)."""

    use: bool = True
    min_len_mm: float = 20.0   # a straight run at least this long (no printed element is)
    piece_mm: float = 8.0      # ... of pieces at least this long
    join_deg: float = 2.0      # pieces this close in direction ...
    join_mm: float = 1.5       # ... and off each other's line are one run
    gap_mm: float = 8.0        # pieces of a run this far apart are joined
    band_mm: float = 20.0      # the print on each side is measured this far from the run
    skip_mm: float = 1.0       # ... from this far (the edge's own shadow left out)
    reach_mm: float = 10.0     # an edge covers this far beyond the ends of its run
    margin_mm: float = 1.5     # ... and this far on its near side (its shadow, the rim)
    local_mm: float = 1.5      # the print measured against the paper this close to it
    print_strength: float = 0.4  # ... where the blank card prints this much darker than it
    missing_level: float = 0.25  # print shown less than this is missing; when less than
    min_missing: float = 0.02    # ... this share of it is, nothing is looked for
    typical_quantile: float = 0.75  # the print shown is measured against this quantile of
    #                                  the card's (how well it shows where it is not covered)
    shown_max: float = 0.35    # the covered side shows at most this much of the print
    shown_min: float = 0.5     # ... and the other side at least this much
    shown_gap: float = 0.3     # ... and this much more than the covered side
    print_off_mm: float = 3.0  # a run within this of a straight printed line, on the print
    print_along: float = 0.5   # ... for this share of its length, is that line off register
    min_print_mm2: float = 8.0  # print needed on each side to tell
    corner_cos: float = 0.9     # two edges meet at a corner when less parallel than this
    region_quantile: float = 0.5  # a region is covered when this share of the print in it
    region_shown_max: float = 0.25  # ... shows at most this much
    cell_mm: float = 5.0       # within a covered region, a cell this wide whose print
    cell_min_mm2: float = 2.0  # (at least this much of it)
    cell_shown: float = 0.7    # shows this much on average is not covered
    border_mm: float = 1.5     # edges this close to the card's own outline are left out
    frame_mm: float = 4.0      # ... and runs along it this close (a design's printed frame)
    print_level: float = 0.8   # the blank card's print (its straight frame and dividers)


@dataclass(frozen=True)
class Edge:
    """A straight edge found across the card, in rectified px: its ends, its unit normal
    pointing to the covered side, and how much of the blank card's print shows on each side
    (covered side first)."""

    p0: tuple[float, float]
    p1: tuple[float, float]
    normal: tuple[float, float]
    shown: tuple[float, float]


@per_object(size=32)
def _strength(ref_grey: np.ndarray, local_px: int) -> np.ndarray:
    """How much darker the blank card prints than its paper within ``local_px`` (a square
    window: six times cheaper than a disc, the same readings), cached per blank card."""
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * local_px + 1, 2 * local_px + 1))
    return cv2.dilate(ref_grey, k) - ref_grey


@per_object(size=32)
def _print_zone(ref_grey: np.ndarray, level: float, grow: int) -> np.ndarray:
    """The blank card's print (darker than ``level``) grown by ``grow`` px, bool, cached per
    blank card."""
    return cv2.dilate((ref_grey < level).astype(np.uint8),
                      np.ones((2 * grow + 1, 2 * grow + 1), np.uint8)) > 0


def print_shown(norm_grey: np.ndarray, ref_grey: np.ndarray, spread_px: int,
                local_px: int) -> tuple[np.ndarray, np.ndarray]:
    """How much of the blank card's print the photo shows at each pixel, and how strongly the
    blank card prints there, float32 (H, W) each. Both are local: the darkest pixel within
    ``spread_px`` (a pixel of misregistration) below the brightest within ``local_px`` (the
    paper beside a stroke), so that a card of another colour lying over the print shows none
    of it and a shadow over it all of it; the first is over the second (1: the print as dark
    as on the blank card)."""
    k = cv2.getStructuringElement(cv2.MORPH_RECT, (2 * local_px + 1, 2 * local_px + 1))
    strength = _strength(ref_grey, local_px)
    s = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * spread_px + 1, 2 * spread_px + 1))
    dark = cv2.dilate(norm_grey, k) - cv2.erode(norm_grey, s)
    shown = np.clip(dark / np.maximum(strength, 0.2), 0.0, 1.5).astype(np.float32)
    return shown, strength


def _segments(norm_grey: np.ndarray, ref_grey: np.ndarray, *, px_per_mm: float,
              min_len_mm: float, gap_mm: float, border_mm: float, print_level: float,
              frame_mm: float, unseen: np.ndarray | None = None) -> np.ndarray:
    """Long straight segments of the photo's edges that the blank card does not have,
    (n, 4) x0, y0, x1, y1 in rectified px."""
    h, w = norm_grey.shape
    img = np.clip(norm_grey * 200.0, 0, 255).astype(np.uint8)
    img = cv2.GaussianBlur(img, (0, 0), 1.0)
    edges = cv2.Canny(img, 30, 80)
    # the blank card's own print (its outlines, frame and dividers are straight too), and the
    # card's border (the card's own outline)
    grow = max(1, round(1.0 * px_per_mm))
    edges[_print_zone(ref_grey, print_level, grow)] = 0
    if unseen is not None and unseen.any():
        # (within what is already hidden: a hand's folds and shading)
        inner = cv2.erode(unseen.astype(np.uint8), np.ones((2 * grow + 1, 2 * grow + 1), np.uint8))
        edges[inner > 0] = 0
    b = max(1, round(border_mm * px_per_mm))
    edges[:b] = 0
    edges[-b:] = 0
    edges[:, :b] = 0
    edges[:, -b:] = 0
    min_len = min_len_mm * px_per_mm
    seg = cv2.HoughLinesP(edges, 1, np.pi / 180, threshold=max(10, round(0.5 * min_len)),
                          minLineLength=min_len, maxLineGap=gap_mm * px_per_mm)
    if seg is None:
        return np.zeros((0, 4))
    seg = seg.reshape(-1, 4).astype(np.float64)
    # along the card's own outline, within frame_mm of it: the card's own edge a little off,
    # or a printed frame the blank card given does not have (another design)
    near = frame_mm * px_per_mm
    x0, y0, x1, y1 = seg.T
    along_x = np.abs(y1 - y0) <= 0.1 * np.abs(x1 - x0)   # (within about 6 degrees)
    along_y = np.abs(x1 - x0) <= 0.1 * np.abs(y1 - y0)
    top = np.maximum(y0, y1) <= near
    bottom = np.minimum(y0, y1) >= h - 1 - near
    left = np.maximum(x0, x1) <= near
    right = np.minimum(x0, x1) >= w - 1 - near
    keep = ~((along_x & (top | bottom)) | (along_y & (left | right)))
    return seg[keep]


def _band_values(shown: np.ndarray, printed: np.ndarray, p0: np.ndarray, p1: np.ndarray,
                 normal: np.ndarray, width: float, skip: float) -> list[np.ndarray]:
    """The values of ``shown`` at the ``printed`` pixels of the two bands along the segment
    ``p0``-``p1``: ``skip`` to ``width`` px from its line on the side ``normal`` points to,
    then on the other side (each band drawn within its own bounding box only)."""
    h, w = shown.shape
    out = []
    for sgn in (1.0, -1.0):
        n = sgn * normal
        quad = np.array([p0 + n * skip, p1 + n * skip, p1 + n * width, p0 + n * width])
        x0, y0 = np.maximum(np.floor(quad.min(axis=0)).astype(int), 0)
        x1, y1 = np.minimum(np.ceil(quad.max(axis=0)).astype(int) + 1, (w, h))
        if x1 <= x0 or y1 <= y0:
            out.append(np.zeros(0, np.float32))
            continue
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(m, np.round(quad - (x0, y0)).astype(np.int32), 1)
        sel = (m > 0) & printed[y0:y1, x0:x1]
        out.append(shown[y0:y1, x0:x1][sel])
    return out


def _along_print(strong: np.ndarray, p0: np.ndarray, p1: np.ndarray, normal: np.ndarray,
                 off: float) -> float:
    """The largest share of the line ``p0``-``p1``, moved by up to ``off`` px along
    ``normal``, that runs on the blank card's print (``strong``, 0/1): a printed straight line
    (a box's side, a frame) a little off register in a blurred photo is not another card."""
    h, w = strong.shape
    k = max(2, int(np.hypot(*(p1 - p0))))
    t = np.linspace(0.0, 1.0, k)[:, None]
    pts = p0[None] + t * (p1 - p0)[None]
    best = 0.0
    for o in np.arange(-off, off + 0.5, 1.0):
        q = np.round(pts + o * normal[None]).astype(int)
        ok = (q[:, 0] >= 0) & (q[:, 0] < w) & (q[:, 1] >= 0) & (q[:, 1] < h)
        if ok.any():
            best = max(best, float(strong[q[ok, 1], q[ok, 0]].sum()) / k)
    return best


def _join(segs: np.ndarray, *, angle_deg: float, off_px: float,
          ) -> list[tuple[np.ndarray, np.ndarray, float]]:
    """Segments (n, 4) along one line joined: for each group, the ends of its extent along
    the longest one's line and the length its pieces cover (px). Two segments are on one
    line when their directions differ by at most ``angle_deg`` and every end of each lies
    within ``off_px`` of the other's line."""
    n = len(segs)
    p0, p1 = segs[:, :2], segs[:, 2:]
    d = p1 - p0
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.maximum(length, 1e-6)[:, None]
    nrm = np.stack([-u[:, 1], u[:, 0]], axis=1)
    group = list(range(n))

    def root(k: int) -> int:
        while group[k] != k:
            group[k] = group[group[k]]
            k = group[k]
        return k

    # pairs along one line: directions within angle_deg, every end of each within off_px of
    # the other's line
    cos = np.abs(u @ u.T)
    ends = np.stack([p0, p1], axis=1)                              # (n, 2 ends, 2)
    rel = ends[None, :, :, :] - p0[:, None, None, :]               # [a, b, end]: b's end - a's p0
    off = np.abs((rel * nrm[:, None, None, :]).sum(axis=3)).max(axis=2)   # b's ends off a's line
    near = (cos >= np.cos(np.radians(angle_deg))) & (np.maximum(off, off.T) <= off_px)
    for a, b in zip(*np.nonzero(np.triu(near, 1)), strict=True):
        group[root(int(b))] = root(int(a))
    out = []
    for g in {root(k) for k in range(n)}:
        members = [k for k in range(n) if root(k) == g]
        k = max(members, key=lambda m: length[m])
        ts = [float((q - p0[k]) @ u[k]) for m in members for q in (p0[m], p1[m])]
        out.append((p0[k] + u[k] * min(ts), p0[k] + u[k] * max(ts),
                    float(sum(length[m] for m in members))))
    return out


def edge_cover(norm_grey: np.ndarray, ref_grey: np.ndarray, unseen: np.ndarray, *,
               px_per_mm: float, spread_px: int, cfg: EdgeConfig | None = None,
               ) -> tuple[np.ndarray, list[Edge]]:
    """What another card lying over this one covers, bool (H, W), and the edges that say so.

    ``norm_grey``: the light-normalised photo's darkest channel (bare card about 1);
    ``ref_grey``: the blank card's, the same size; ``unseen``: pixels already hidden or washed
    out (they count on neither side). Straight runs of the photo's edges, away from the
    blank card's print (darker than ``print_level``) and the card's border, pieces of at
    least ``piece_mm`` along one line joined, are an edge when they cover ``min_len_mm`` and,
    in bands ``skip_mm`` to ``band_mm`` from the line along its extent (and ``reach_mm``
    beyond), the blank card's print (at least ``min_print_mm2`` of it on each side) shows at
    most ``shown_max`` on one side (median of :func:`print_shown`) and at least
    ``shown_min`` on the other. What an edge covers: beyond it as far along it as it runs
    (and ``reach_mm`` more), or, where two edges meet inside the card (a corner of the card
    on top; each one's middle beyond the other), beyond both; a region counts only when the
    blank card's print in it hardly shows anywhere (at most ``region_shown_max`` at its
    ``region_quantile``: the card on top's own print falls on a little of it). Thresholds in
    ``cfg``."""
    c = cfg or EdgeConfig()
    h, w = norm_grey.shape
    hidden = np.zeros((h, w), bool)
    shown, strength = print_shown(norm_grey, ref_grey, spread_px,
                                  max(1, round(c.local_mm * px_per_mm)))
    printed = (strength > c.print_strength) & ~unseen
    least = c.min_print_mm2 * px_per_mm ** 2
    if printed.sum() < least:
        return hidden, []
    # relative to how well the print shows where it shows (a blurred or faint photo shows
    # less of it everywhere): the typical_quantile of the card's printed pixels
    shown /= max(float(np.quantile(shown[printed], c.typical_quantile)), 0.2)
    if float((shown[printed] < c.missing_level).mean()) < c.min_missing:
        return hidden, []   # (nearly all the print in view shows: nothing lies over it)
    segs = _segments(norm_grey, ref_grey, px_per_mm=px_per_mm, min_len_mm=c.piece_mm,
                     gap_mm=c.gap_mm, border_mm=c.border_mm, print_level=c.print_level,
                     frame_mm=c.frame_mm, unseen=unseen)
    if not len(segs):
        return hidden, []
    runs = [r for r in _join(segs, angle_deg=c.join_deg, off_px=c.join_mm * px_per_mm)
            if r[2] >= c.min_len_mm * px_per_mm]
    if not runs:
        return hidden, []
    reach = c.reach_mm * px_per_mm
    margin = c.margin_mm * px_per_mm
    found: list[Edge] = []
    strong = (strength > c.print_strength).astype(np.float32)
    for p0, p1, _ in runs:
        d = p1 - p0
        n = np.array([-d[1], d[0]]) / max(float(np.hypot(*d)), 1e-6)
        va, vb = _band_values(shown, printed, p0, p1, n, c.band_mm * px_per_mm,
                              c.skip_mm * px_per_mm)
        if len(va) < least or len(vb) < least:
            continue
        sa, sb = float(np.median(va)), float(np.median(vb))
        if abs(sa - sb) < c.shown_gap or min(sa, sb) > c.shown_max \
                or _along_print(strong, p0, p1, n, c.print_off_mm * px_per_mm) >= c.print_along:
            continue
        ends = (float(p0[0]), float(p0[1])), (float(p1[0]), float(p1[1]))
        if sa <= c.shown_max and sb >= c.shown_min:
            found.append(Edge(*ends, (float(n[0]), float(n[1])), (sa, sb)))
        elif sb <= c.shown_max and sa >= c.shown_min:
            found.append(Edge(*ends, (float(-n[0]), float(-n[1])), (sb, sa)))
    if not found:
        return hidden, []
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)

    def side(e: Edge) -> np.ndarray:
        """Beyond ``e``, and ``margin`` px short of it (its shadow, the card's rim)."""
        return (xx - e.p0[0]) * e.normal[0] + (yy - e.p0[1]) * e.normal[1] > -margin

    def sweep(e: Edge) -> np.ndarray:
        """Beyond ``e`` as far along it as it runs, and ``reach`` more."""
        ux, uy = e.normal[1], -e.normal[0]
        t = (xx - e.p0[0]) * ux + (yy - e.p0[1]) * uy
        t1 = (e.p1[0] - e.p0[0]) * ux + (e.p1[1] - e.p0[1]) * uy
        lo, hi = min(0.0, t1) - reach, max(0.0, t1) + reach
        return side(e) & (t >= lo) & (t <= hi)

    def beyond(e: Edge, f: Edge) -> bool:
        """Whether ``f``'s middle lies on ``e``'s covered side."""
        mx, my = (f.p0[0] + f.p1[0]) / 2, (f.p0[1] + f.p1[1]) / 2
        return (mx - e.p0[0]) * e.normal[0] + (my - e.p0[1]) * e.normal[1] > 0

    def covered(region: np.ndarray) -> bool:
        at = printed & region
        return bool(at.sum() >= least and float(np.quantile(shown[at], c.region_quantile))
                    <= c.region_shown_max)

    # two edges meeting inside the card first (the corner of the card on top): then what
    # lies beyond both is covered, not all that lies beyond either
    cornered: set[int] = set()
    for i, e in enumerate(found):
        for j in range(i + 1, len(found)):
            f = found[j]
            if abs(e.normal[0] * f.normal[0] + e.normal[1] * f.normal[1]) < c.corner_cos \
                    and beyond(e, f) and beyond(f, e):
                region = side(e) & side(f)
                if covered(region):
                    hidden |= region
                    cornered |= {i, j}
    for i, e in enumerate(found):
        if i not in cornered:
            region = sweep(e)
            if covered(region):
                hidden |= region
    if not hidden.any():
        return hidden, []
    # the regions are straight-sided guesses: a cell within them where the print plainly
    # shows (a corner of the card on top that ends before the card's edge, an edge longer
    # than the run seen) is not covered
    f = max(1, round(c.cell_mm * px_per_mm))
    ch, cw = -(-h // f), -(-w // f)
    pad = ((0, ch * f - h), (0, cw * f - w))
    num = np.pad(shown * printed, pad).reshape(ch, f, cw, f).sum(axis=(1, 3))
    den = np.pad(printed.astype(np.float32), pad).reshape(ch, f, cw, f).sum(axis=(1, 3))
    plain = (den >= c.cell_min_mm2 * px_per_mm ** 2) & (num >= c.cell_shown * den)
    if plain.any():
        hidden &= ~np.repeat(np.repeat(plain, f, axis=0), f, axis=1)[:h, :w]
    if not hidden.any():
        return hidden, []
    return hidden, found
