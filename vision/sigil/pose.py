"""Finding a sigil card in a photo: its pose, a homography from card millimetres to pixels.

One module for both users: the sigil reader (:func:`find_pose`, which has blank-card references
to check against) and card registration (:func:`find_card`, which makes that reference from a
photo of a blank card and so has only the layout to check against).

Two ways to find a card:

- fiducial markers (ArUco, ``cv2.aruco``) at known places on companion cards, searched at half
  resolution first; markers whose ids belong to another layout mean the wrong layout was given
  (:class:`WrongLayout`);
- the card's outline for cards without markers: convex quadrilaterals whose sides have a
  card-like ratio (from several binary masks of the photo; when a hand breaks the outline, the
  four longest straight runs of it), their sides refitted as straight lines (rounded corners),
  and the orientation (which corner is the top-left) chosen by matching the printed artwork:
  the blank card's reference image for the reader, the layout's printed boxes and candles for
  registration.

The reader then refines the pose with the blank card (:func:`refine_by_patches`: textured
patches of the reference found in the photo, a RANSAC homography through them; coarse, then
fine), for outlines and for markers alike (two or three blurred markers fix the far side of the
card only roughly). A poor best match, or candles not where the layout puts them
(:func:`candle_scores`: a card of another layout, another design with the same frame), raises
:class:`NoCard`: never a made-up pose.

Convention: card geometry in mm, origin at the card's top-left corner, x right, y down; image
points ``(x, y)`` pixels, origin top-left; corners are listed TL, TR, BR, BL of the card as
printed; a homography maps card mm to image px: ``[u, v, w]^T = H [x_mm, y_mm, 1]^T``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from typing import Any

import cv2
import numpy as np

from companion.errors import BadInput
from vision.cache import per_object
from vision.imageio import as_bgr
from vision.sigil.geometry import (
    CardGeometry,
    card_corners_mm,
    card_geometry,
    photo_px_per_mm,
    project,
)

__all__ = ["NoCard", "Pose", "PoseConfig", "WrongLayout", "candle_scores", "detect_markers",
           "find_card", "find_pose", "homographies_for_quad", "layout_match", "line_quads",
           "marker_ids_of", "outline_quads", "rectify", "rectify_card", "refine_by_patches",
           "shows_markers"]


class NoCard(BadInput):
    """No card of the expected shape (and printed artwork) is in view."""


class WrongLayout(BadInput):
    """The card in view carries the markers of another layout."""


@dataclass(frozen=True)
class Pose:
    """Where the card is: ``homography`` maps card mm to image px; ``method`` is "markers",
    "outline", "markers+outline" or "hint" (refined from where the caller said it was);
    ``markers`` the ids seen; ``corners`` the card's corners in the image (TL, TR, BR, BL),
    shape (4, 2)."""

    homography: np.ndarray
    method: str
    markers: tuple[int, ...]
    corners: np.ndarray

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "markers": list(self.markers),
                "homography": [[round(float(v), 6) for v in row] for row in self.homography],
                "corners": [[round(float(v), 1) for v in p] for p in self.corners]}


@dataclass(frozen=True)
class PoseConfig:
    """Thresholds of the reader's card finding. Match scores are correlations (-1..1) of the
    light-normalised photo with the blank card, both rectified at 2 px/mm."""

    min_match: float = 0.2          # below: NoCard
    min_candle_match: float = 0.3   # correlation over a candle's disc with the blank card
    candles_seen: int = 4           # candles that must reach min_candle_match, else NoCard
    refine_candidates: int = 2      # best-scoring outline poses refined
    good_match: float = 0.55        # a first candidate this good needs no rival
    turn_share: float = 0.75        # a doubtful one's half turn is refined if it fits this well
    fine_slack: float = 0.02        # the fine refinement may lower the match by this much
    marker_patches: int = 48        # blank-card patches that refine a marker pose
    min_inliers: int = 12           # patches agreeing, for a marker pose to be refined
    min_cover: float = 0.25         # share of the card their hull covers
    marker_agree_mm: float = 1.5    # the refined pose keeps the marker centres seen this close
    fine_first_move: float = 0.5    # a marker pose's fine pass alone is kept when it moves no
    #                                 corner by more than this share of its reach
    # when no outline's best-ranked rotations fit (a hand hides part of the outline, _recover;
    # off: such a photo is refused. It costs 0.2-1 s CPU on a frame with card-shaped clutter
    # and no card, so the live loop runs it only now and then while the card is not found):
    recover: bool = True
    recover_starts: int = 32        # rotations of candidate outlines given one coarse pass
    recover_candidates: int = 6     # those with the most patches agreeing, registered further
    recover_passes: int = 4         # coarse patch passes at most for each of them
    recover_completed: int = 6      # candidate outlines completed from three sides ...
    recover_completions: int = 18   # ... and the best-ranked completions given a coarse pass
    recover_inliers: int = 24       # patches agreeing, for a pose whose whole-card match the
    recover_min_match: float = 0.1  # hand spoils below min_match (but not below this)
    # when an outline runs along the frame's edge (a card partly out of view) the part in view
    # may fit the blank card turned half round nearly as well as the right way (the whole
    # card's correlation 0.20 against 0.198 on one photo): its candles must fit better
    cut_min_candle_match: float = 0.55
    # another card looked for (find_pose's exclude): the card found, grown by this share of
    # its size about its centre, is painted over in the table's colour
    exclude_grow: float = 0.03
    exclude_effort: int = 2     # ... and the search given this many times the candidates


def _pose_of(h: np.ndarray, geom: CardGeometry, method: str, markers: tuple[int, ...] = (),
             ) -> Pose:
    return Pose(h, method, markers, project(h, card_corners_mm(geom)).astype(np.float32))


# ------------------------------------------------------------------------------------ markers

_DETECTORS: dict[str, Any] = {}


def _detector(dictionary: str) -> Any:
    det = _DETECTORS.get(dictionary)
    if det is None:
        d = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary))
        params = cv2.aruco.DetectorParameters()
        params.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
        # two adaptive-threshold passes instead of three (speed); markers are large and crisp
        params.adaptiveThreshWinSizeMin = 5
        params.adaptiveThreshWinSizeMax = 15
        params.adaptiveThreshWinSizeStep = 10
        det = cv2.aruco.ArucoDetector(d, params)
        _DETECTORS[dictionary] = det
    return det


def detect_markers(gray: np.ndarray, dictionary: str) -> dict[int, np.ndarray]:
    """ArUco markers in a grey image: id -> (4, 2) corners in px. Images wider than 900 px are
    searched at half resolution (fast; corners refined at full resolution), and again at full
    resolution when one or two markers were found there (small markers, partly hidden)."""
    det = _detector(dictionary)
    found: dict[int, np.ndarray] = {}
    h, w = gray.shape
    if max(h, w) > 900:
        small = cv2.resize(gray, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        corners, ids, _ = det.detectMarkers(small)
        if ids is not None:
            for c, i in zip(corners, ids.ravel(), strict=True):
                found[int(i)] = c.reshape(4, 2) * 2.0 + 0.5
        if not found:
            # nothing at all at half resolution (a printed card, no card): the outline and the
            # blank card find a card whose markers are too small for this pass
            return found
        if len(found) >= 3:
            # refine the corners at full resolution
            pts = np.concatenate(list(found.values())).reshape(-1, 1, 2).astype(np.float32)
            crit = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 20, 0.05)
            cv2.cornerSubPix(gray, pts, (3, 3), (-1, -1), crit)
            pts = pts.reshape(-1, 4, 2)
            return {k: pts[n] for n, k in enumerate(found)}
    corners, ids, _ = det.detectMarkers(gray)
    if ids is not None:
        for c, i in zip(corners, ids.ravel(), strict=True):
            found[int(i)] = c.reshape(4, 2)
    return found


def _markers_in_view(gray: np.ndarray, geom: CardGeometry, other_ids: Mapping[int, str] | None,
                     ) -> dict[int, np.ndarray]:
    """The layout's markers seen (id -> corners px); raises :class:`WrongLayout` when fewer
    than 2 of them but some of another layout are seen."""
    if not geom.markers:
        return {}
    found = detect_markers(gray, geom.marker_dictionary)
    mine = {m.id for m in geom.markers}
    seen = {i: c for i, c in found.items() if i in mine}
    if other_ids:
        foreign = sorted({other_ids[i] for i in found if i not in mine and i in other_ids})
        if foreign and len(seen) < 2:
            raise WrongLayout(f"the card in view carries the markers of layout "
                              f"{', '.join(foreign)}, not {geom.name}")
    return seen


def _marker_homography(seen: Mapping[int, np.ndarray], geom: CardGeometry) -> np.ndarray | None:
    mine = {m.id: m for m in geom.markers}
    src = np.concatenate([mine[i].corners() for i in seen]).astype(np.float32)
    dst = np.concatenate([seen[i] for i in seen]).astype(np.float32)
    h, _inl = cv2.findHomography(src, dst, cv2.RANSAC if len(seen) >= 2 else 0, 3.0)
    return h


# what is made from a blank card (or from something made from one) once, per object (by
# identity); 512 entries, as the scale varies from photo to photo
@per_object(size=512, key=lambda ref, geom: (geom.name, geom.marker_dictionary,
                                          tuple(m.id for m in geom.markers)))
def shows_markers(ref: np.ndarray, geom: CardGeometry) -> bool:
    """Whether a blank card (a reference: grey float32, light-normalised, the bare card about
    1, the whole card at any resolution) carries any of the layout's markers: a printed
    design has none, so a card read against such blank cards alone is not searched for
    them. Cached by the array's identity."""
    if not geom.markers:
        return False
    grey = np.clip(np.asarray(ref, np.float32) * 255.0, 0, 255).astype(np.uint8)
    return bool(set(detect_markers(grey, geom.marker_dictionary))
                & {m.id for m in geom.markers})


def marker_ids_of(layouts: Iterable[Any]) -> dict[int, str]:
    """Marker id -> layout name over several layouts (for :class:`WrongLayout`)."""
    out: dict[int, str] = {}
    for lay in layouts:
        g = card_geometry(lay)
        for m in g.markers:
            out.setdefault(m.id, g.name)
    return out


# ------------------------------------------------------------------------------ outline: lines

Line = tuple[np.ndarray, np.ndarray]   # a point and a unit direction


def _cross(l1: Line, l2: Line) -> np.ndarray | None:
    (p1, d1), (p2, d2) = l1, l2
    det = float(d1[1] * d2[0] - d1[0] * d2[1])
    if abs(det) < 1e-9:
        return None
    rx, ry = float(p2[0] - p1[0]), float(p2[1] - p1[1])
    t = (ry * d2[0] - rx * d2[1]) / det
    return np.array([p1[0] + t * d1[0], p1[1] + t * d1[1]], np.float64)


def _intersect_lines(lines: Sequence[Line]) -> np.ndarray | None:
    """Corner k of a quadrilateral whose side k runs along ``lines[k]``: the crossing of sides
    k-1 and k; None when two neighbouring sides are parallel."""
    out = []
    for i in range(4):
        p = _cross(lines[i - 1], lines[i])
        if p is None:
            return None
        out.append(p)
    return np.array(out)


def _fit_line(pts: np.ndarray) -> Line:
    vx, vy, x0, y0 = cv2.fitLine(np.asarray(pts, np.float32), cv2.DIST_HUBER, 0, 0.01,
                                 0.01).ravel()
    return np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)


def _side_points(pts: np.ndarray, p: np.ndarray, q: np.ndarray, lo: float,
                 ) -> np.ndarray | None:
    """The contour points along the middle of side p-q (not near its ends), or None."""
    d = q - p
    length = float(np.hypot(*d))
    if length < 1:
        return None
    u = d / length
    rel = pts - p
    t = rel @ u
    dist = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
    sel = pts[(t > lo * length) & (t < (1 - lo) * length) & (dist < max(3.0, 0.03 * length))]
    return sel if len(sel) >= 5 else None


def _refine_quad(contour: np.ndarray, quad: np.ndarray, lo: float = 0.12,
                 max_move: float | None = None) -> np.ndarray:
    """Refit the 4 sides of a quadrilateral as straight lines through the contour's points
    (ignoring points near the corners, so that rounded corners do not pull them). Returns
    ``quad`` unchanged when a side has too few points or a corner moves more than
    ``max_move`` px (default: a tenth of the perimeter)."""
    pts = contour.reshape(-1, 2).astype(np.float64)
    quad = np.asarray(quad, np.float64)
    lines = []
    for k in range(4):
        sel = _side_points(pts, quad[k], quad[(k + 1) % 4], lo)
        if sel is None:
            return quad
        lines.append(_fit_line(sel))
    out = _intersect_lines(lines)
    if max_move is None:
        max_move = 0.1 * cv2.arcLength(quad.reshape(-1, 1, 2).astype(np.float32), True)
    if out is None or np.linalg.norm(out - quad, axis=1).max() > max_move:
        return quad
    return out


def _long_sides_quad(poly: np.ndarray) -> np.ndarray | None:
    """A quadrilateral from the four longest sides of a convex polygon (nearly collinear
    neighbouring sides merged first), or None."""
    n = len(poly)
    if not 5 <= n <= 12:
        return None
    edges = [(poly[k].astype(np.float64), poly[(k + 1) % n].astype(np.float64)) for k in range(n)]
    merged: list[tuple[np.ndarray, np.ndarray]] = []

    def cos(d0: np.ndarray, d1: np.ndarray) -> float:
        return float(d0 @ d1 / max(np.linalg.norm(d0) * np.linalg.norm(d1), 1e-9))

    for p, q in edges:
        if merged and cos(merged[-1][1] - merged[-1][0], q - p) > 0.99:
            merged[-1] = (merged[-1][0], q)
            continue
        merged.append((p, q))
    if len(merged) > 1:
        p0, q0 = merged[0]
        p1, q1 = merged[-1]
        if cos(q0 - p0, q1 - p1) > 0.99:
            merged[0] = (p1, q0)
            merged.pop()
    if len(merged) < 4:
        return None
    lengths = [float(np.linalg.norm(q - p)) for p, q in merged]
    keep = sorted(np.argsort(lengths)[-4:])
    lines = []
    for k in keep:
        p, q = merged[k]
        lines.append((p, (q - p) / max(float(np.linalg.norm(q - p)), 1e-9)))
    out = _intersect_lines(lines)
    if out is None:
        return None
    quad = out.astype(np.float32)
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.int32)):
        return None
    return quad


def _sides(quad: np.ndarray) -> list[float]:
    return [float(np.hypot(*(quad[(k + 1) % 4] - quad[k]))) for k in range(4)]


def _outward_sides(quad: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
    """Each side of ``quad`` as (start, end, unit direction, unit normal pointing away from the
    quad's centre). Convention: pixel coordinates, corners in order round the quad."""
    center = quad.mean(0)
    out = []
    for i, length in enumerate(_sides(quad)):
        p, q = quad[i], quad[(i + 1) % 4]
        u = (q - p) / max(length, 1e-9)
        n = np.array([-u[1], u[0]])
        if np.dot(n, (p + q) / 2 - center) < 0:
            n = -n
        out.append((p, q, u, n))
    return out


def _opposite_means(quad: np.ndarray) -> tuple[float, float]:
    """The mean lengths of the two pairs of opposite sides: (sides 0 and 2, sides 1 and 3)."""
    s = _sides(quad)
    return (s[0] + s[2]) / 2, (s[1] + s[3]) / 2


def _short_side_turns(quad: np.ndarray) -> tuple[int, ...]:
    """The rotations of :func:`homographies_for_quad` that put the card's short sides on the
    quad's shorter pair of sides, or all four when strong perspective makes the pairs about
    equal."""
    even, odd = _opposite_means(quad)
    return (0, 2) if even < 0.87 * odd else (1, 3) if odd < 0.87 * even else (0, 1, 2, 3)


def _ratio(quad: np.ndarray) -> float:
    """Long over short of the mean opposite sides."""
    a, b = _opposite_means(quad)
    return max(a, b) / max(min(a, b), 1e-6)


_ROLLS = (np.arange(4)[None, :] - np.arange(4)[:, None]) % 4   # row k: np.roll(quad, k, 0)


def _order_clockwise(quad: np.ndarray) -> np.ndarray:
    """The corners of a convex quadrilateral clockwise in the image (y down), starting at the
    top-left-most one (smallest x + y). Convention: pixel coordinates, (4, 2)."""
    c = quad.mean(0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(ang)]          # clockwise in image coordinates (y down)
    return q[_ROLLS[-int(np.argmin(q.sum(1))) % 4]]


def _same_quad(a: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """Whether two quadrilaterals (corners in the same turning order) have every corner within
    ``tol`` px of the other's, whichever corner each list starts at."""
    return bool((np.abs(a[_ROLLS] - b).max(axis=(1, 2)) < tol).any())


# ------------------------------------------------------------------------- outline: the reader

_UNSATURATED = (1.0 - np.arange(256, dtype=np.float32) / 255.0).reshape(1, 256)


def _masks(small: np.ndarray) -> list[np.ndarray]:
    """Binary images in which a card may stand out as one blob or one closed outline."""
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    out = []
    _, otsu = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    out.append(otsu)
    # bright and colourless (the card) against coloured backgrounds
    _, sat, val = cv2.split(cv2.cvtColor(small, cv2.COLOR_BGR2HSV))
    # value * (1 - saturation / 255) in float32, the second factor by a table of its 256 values
    pale = val.astype(np.float32)
    np.multiply(pale, cv2.LUT(sat, _UNSATURATED), out=pale)
    pale = cv2.GaussianBlur(pale.astype(np.uint8), (5, 5), 0)
    _, p2 = cv2.threshold(pale, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    out.append(p2)
    k = np.ones((5, 5), np.uint8)
    out.append(cv2.morphologyEx(p2, cv2.MORPH_OPEN, k))
    edges = cv2.Canny(blur, 40, 120)
    out.append(cv2.dilate(edges, np.ones((3, 3), np.uint8)))
    return out


def _segment_quads(contour: np.ndarray, frame: tuple[int, int], ratio_card: float,
                   area_range: tuple[float, float], most: int = 8,
                   ) -> list[tuple[float, np.ndarray]]:
    """Card-shaped quadrilaterals from the straight runs of an outline that something breaks
    or joins (a hand over an edge, a sheet of paper touching the card): every choice of four
    of its ``most`` longest runs whose lines cross in a convex, card-shaped quadrilateral
    whose sides hold the runs. Returns ``(support, quad)``: support is the share of the
    quad's perimeter the runs cover."""
    peri = cv2.arcLength(contour, True)
    poly = cv2.approxPolyDP(contour, 0.008 * peri, True).reshape(-1, 2).astype(np.float64)
    n = len(poly)
    if n < 4:
        return []
    sw, sh = frame
    nxt = np.roll(poly, -1, axis=0)
    dd = nxt - poly
    length = np.sqrt((dd * dd).sum(axis=1))                  # run k: poly[k] -> poly[k + 1]
    # a run with both ends within 3 px of the photo's border is the border, not the card
    near = np.minimum(np.minimum(poly[:, 0], poly[:, 1]),
                      np.minimum(sw - 1 - poly[:, 0], sh - 1 - poly[:, 1])) < 3
    keep = np.nonzero((length >= 0.06 * peri) & ~(near & np.roll(near, -1)))[0]
    order = keep[np.argsort(-length[keep], kind="stable")][:most]      # longest first
    return _quads_from_runs([(float(length[k]), poly[k], nxt[k]) for k in order], ratio_card,
                            area_range)


_PREV = np.array([3, 0, 1, 2])   # x[:, _PREV] is np.roll(x, 1, axis=1): side k - 1
_NEXT = np.array([1, 2, 3, 0])   # x[:, _NEXT] is np.roll(x, -1, axis=1): side k + 1


@lru_cache(maxsize=32)
def _fours(n: int) -> np.ndarray:
    """Every choice of 4 of ``n`` indices, increasing, shape (n choose 4, 4) (read-only)."""
    out = np.array(list(itertools.combinations(range(n), 4)))
    out.flags.writeable = False
    return out


def _quads_from_runs(runs: Sequence[tuple[float, np.ndarray, np.ndarray]], ratio_card: float,
                     area_range: tuple[float, float]) -> list[tuple[float, np.ndarray]]:
    """Every choice of four straight runs ``(covered length, start, end)`` (pixels) whose lines
    cross in a convex quadrilateral of card-like area and side ratio whose sides hold the
    runs (no run reaches beyond a corner). Returns ``(support, quad)``: support is the share of
    the quad's perimeter the runs cover; corners ordered round the quad, float32 (4, 2).
    Vectorised over the choices."""
    if len(runs) < 4:
        return []
    cov = np.array([r[0] for r in runs], np.float64)
    p = np.array([r[1] for r in runs], np.float64)
    q = np.array([r[2] for r in runs], np.float64)
    d = q - p
    d /= np.maximum(np.sqrt((d * d).sum(axis=1, keepdims=True)), 1e-9)
    mid = (p + q) / 2
    comb = _fours(len(runs))                                             # (K, 4)
    m = mid[comb]
    c = m.mean(axis=1, keepdims=True)
    ang = np.arctan2(m[..., 1] - c[..., 1], m[..., 0] - c[..., 0])
    idx = np.take_along_axis(comb, np.argsort(ang, axis=1), axis=1)      # run of side k
    pk, dk = p[idx], d[idx]
    pk1, dk1 = pk[:, _PREV], dk[:, _PREV]                                # side k - 1
    det = dk1[..., 1] * dk[..., 0] - dk1[..., 0] * dk[..., 1]
    apart = np.abs(det) > 1e-9
    ok = apart.all(axis=1)
    det = np.where(apart, det, 1.0)
    rel = pk - pk1
    t = (rel[..., 1] * dk[..., 0] - rel[..., 0] * dk[..., 1]) / det
    quad = pk1 + t[..., None] * dk1                     # corner k: where sides k - 1 and k cross
    nxt = quad[:, _NEXT]
    e = nxt - quad                                      # side k: corner k -> corner k + 1
    e1 = e[:, _NEXT]
    turn = e[..., 0] * e1[..., 1] - e[..., 1] * e1[..., 0]
    ok &= (turn > 0).all(axis=1) | (turn < 0).all(axis=1)
    area = 0.5 * np.abs((quad[..., 0] * nxt[..., 1] - nxt[..., 0] * quad[..., 1]).sum(axis=1))
    ok &= (area >= area_range[0]) & (area <= area_range[1])
    side = np.sqrt((e * e).sum(axis=2))
    a, b = (side[:, 0] + side[:, 2]) / 2, (side[:, 1] + side[:, 3]) / 2
    ok &= np.maximum(a, b) / np.maximum(np.minimum(a, b), 1e-6) <= ratio_card * 1.9
    den = np.maximum(side * side, 1e-9)
    for end in (p, q):      # each run lies within its side, not beyond a corner
        tt = ((end[idx] - quad) * e).sum(axis=2) / den
        ok &= ((tt >= -0.05) & (tt <= 1.05)).all(axis=1)
    support = cov[idx].sum(axis=1) / np.maximum(side.sum(axis=1), 1e-9)
    return [(float(support[k]), quad[k].astype(np.float32)) for k in np.nonzero(ok)[0]]


def _straight_runs(edges: np.ndarray, min_len: float, most: int, angle_deg: float = 2.5,
                   dist_px: float = 3.0) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """The ``most`` longest straight runs of an edge image: Hough segments
    (``cv2.HoughLinesP``, at least ``min_len`` px) joined when they lie on one line (within
    ``angle_deg`` and ``dist_px``), so that an edge a hand breaks in two is one run. Returns
    ``(covered length, start, end)`` in pixels, longest covered first."""
    segs = cv2.HoughLinesP(edges, 1, np.pi / 180, threshold=max(2, int(min_len)),
                           minLineLength=min_len, maxLineGap=3)
    if segs is None:
        return []
    segs = segs.reshape(-1, 4).astype(np.float64)
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    cos_tol = float(np.cos(np.radians(angle_deg)))
    groups: list[tuple[np.ndarray, np.ndarray, list[tuple[float, float]]]] = []
    for k in np.argsort(-lengths):
        p, q = segs[k, :2], segs[k, 2:]
        u = (q - p) / max(float(lengths[k]), 1e-9)
        for o, v, spans in groups:
            nrm = np.array([-v[1], v[0]])
            if abs(float(u @ v)) >= cos_tol and abs(float((p - o) @ nrm)) <= dist_px \
                    and abs(float((q - o) @ nrm)) <= dist_px:
                t0, t1 = sorted((float((p - o) @ v), float((q - o) @ v)))
                spans.append((t0, t1))
                break
        else:
            groups.append((p, u, [(0.0, float(lengths[k]))]))
    runs = []
    for o, v, spans in groups:
        spans.sort()
        covered, lo, hi = 0.0, spans[0][0], spans[0][1]
        for t0, t1 in spans[1:]:
            if t0 > hi:
                covered += hi - lo
                lo = t0
            hi = max(hi, t1)
        covered += hi - lo
        first = spans[0][0]
        last = max(t1 for _, t1 in spans)
        runs.append((covered, o + first * v, o + last * v))
    runs.sort(key=lambda r: -r[0])
    return runs[:most]


def _work_copy(image: np.ndarray, work_px: int) -> tuple[np.ndarray, float]:
    """The image shrunk so that its longer side is at most ``work_px`` (itself when it already
    is), and the scale from the image to the copy."""
    h, w = image.shape[:2]
    scale = work_px / max(h, w) if max(h, w) > work_px else 1.0
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale != 1.0 else image
    return small, scale


def line_quads(image: np.ndarray, geom: CardGeometry, *, min_area: float = 0.02,
               max_area: float = 0.9, limit: int = 4, min_support: float = 0.45,
               most: int = 14) -> list[np.ndarray]:
    """Candidate card outlines from the straight edges in view, for a card whose outline no
    mask shows whole (a hand or a sleeve across it, joined to it in every mask): every
    card-shaped convex quadrilateral whose sides hold four of the ``most`` longest straight
    runs of the image's edges (:func:`_straight_runs`; a side broken by a hand is one run),
    at least ``min_support`` of its perimeter seen, the best supported ``limit`` of them.
    Quadrilaterals (4, 2) px in the order of :func:`outline_quads`; works on a copy at most
    640 px wide."""
    small, scale = _work_copy(image, 640)
    sh, sw = small.shape[:2]
    grey = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    runs = _straight_runs(cv2.Canny(grey, 40, 120), 0.02 * max(sh, sw), most)
    ratio_card = max(geom.size_mm) / min(geom.size_mm)
    quads = _quads_from_runs(runs, ratio_card, (min_area * sh * sw, max_area * sh * sw))
    out: list[np.ndarray] = []
    _add_supported(out, quads, scale, min_support, limit)
    return out


def _add_supported(out: list[np.ndarray], quads: Sequence[tuple[float, np.ndarray]],
                   scale: float, min_support: float, limit: int) -> None:
    """Append to ``out`` the best supported of ``quads`` (``(support, quad)`` found on a copy
    ``scale`` times the photo's size): at most ``limit`` of them, each with at least
    ``min_support``, back at the photo's size in :func:`_order_clockwise` order, and none the
    same quad (within 8 px) as one already in ``out``."""
    added = 0
    for support, q in sorted(quads, key=lambda x: -x[0]):
        if support < min_support or added >= limit:
            break
        q = _order_clockwise(q / scale)
        if not any(_same_quad(q, o, 8) for o in out):
            out.append(q)
            added += 1


def _clean_quad(contour: np.ndarray, hull: np.ndarray) -> bool:
    """The hull is close to a quadrilateral (a card alone, nothing joined to it)."""
    approx = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
    return len(approx) == 4


class _Outline:
    """A candidate card outline: ``rough``, a quadrilateral (4, 2) px in the order of
    :func:`_order_clockwise`, and :attr:`quad`, the same with its sides refitted as lines
    through the contour it was found on (:func:`_refine_quad`; ``rough`` itself when it was
    not found as one). The refit costs about a millisecond an outline and moves its corners
    by a pixel or two: ranking an outline's rotations needs only the rough quad, so only the
    outlines registered with the blank card are refitted."""

    def __init__(self, rough: np.ndarray, found: tuple[np.ndarray, np.ndarray] | None = None,
                 scale: float = 1.0) -> None:
        self.rough = rough
        self._found = found     # (contour, quadrilateral) on a copy ``scale`` times the photo
        self._scale = scale

    @cached_property
    def quad(self) -> np.ndarray:
        if self._found is None:
            return self.rough
        q = _order_clockwise(np.asarray(_refine_quad(*self._found) / self._scale, np.float32))
        # the corner the rough quad starts at first (the refit may move which is top-left-most),
        # so that a rotation ranked on the rough quad is the same rotation of this one
        return q[_ROLLS[int(np.argmin(np.abs(q[_ROLLS] - self.rough).max(axis=(1, 2))))]]


def outline_quads(image: np.ndarray, geom: CardGeometry, *, min_area: float = 0.02,
                  max_area: float = 0.9, limit: int = 5, limit_broken: int = 3,
                  min_support: float = 0.5, work_px: int = 640,
                  cut: list[np.ndarray] | None = None) -> list[_Outline]:
    """Candidate card outlines in a BGR image (:class:`_Outline`: quadrilaterals (4, 2) px in
    clockwise order starting at the top-left-most corner, :func:`_order_clockwise`), largest
    first, convex, not the frame of the image, whose long/short side ratio fits the card seen
    at up to ~55 degrees off the normal.
    ``min_area`` and ``max_area`` bound their share of the image. Then up to ``limit_broken``
    quadrilaterals pieced from the straight runs of broken outlines (:func:`_segment_quads`,
    at least ``min_support`` of their perimeter seen). Works on a copy at most 640 px wide
    (speed); the orientation is left to the caller.
    ``cut``: a list that receives (up to ``limit``) the quadrilaterals left out because two of
    their corners lie on the image's border: a card running out of the frame, whose outline
    runs along the frame's edge on that side (full-image px, clockwise)."""
    small, scale = _work_copy(image, work_px)
    sh, sw = small.shape[:2]
    ratio_card = max(geom.size_mm) / min(geom.size_mm)
    area_img = sh * sw
    cands: list[tuple[float, Any]] = []
    broken: list[tuple[float, np.ndarray]] = []
    # a closed contour of n points (steps of at most sqrt(2) px) encloses at most
    # (sqrt(2) n)^2 / (4 pi) px: the shorter ones (most of an edge mask's) cannot hold min_area
    least = int(np.sqrt(4 * np.pi * min_area * area_img) / np.sqrt(2))
    for m in _masks(small):
        contours, _ = cv2.findContours(m, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        for c in contours:
            if len(c) < least:
                continue
            area = cv2.contourArea(c)
            if not min_area * area_img <= area <= max_area * area_img:
                continue
            hull = cv2.convexHull(c)
            if area < 0.93 * cv2.contourArea(hull) or not _clean_quad(c, hull):
                # something over an edge (a hand) or touching it (a sheet) bends or joins
                # the outline: the card's sides are still straight runs of it
                broken += _segment_quads(c, (sw, sh), ratio_card,
                                         (min_area * area_img, max_area * area_img))
            peri = cv2.arcLength(hull, True)
            quad = None
            for eps in (0.02, 0.035, 0.05):
                approx = cv2.approxPolyDP(hull, eps * peri, True)
                if len(approx) == 4:
                    quad = approx.reshape(4, 2).astype(np.float32)
                    break
            if quad is None:
                quad = _long_sides_quad(cv2.approxPolyDP(hull, 0.01 * peri, True).reshape(-1, 2))
                if quad is None:
                    continue
                if not min_area * area_img <= cv2.contourArea(quad) <= max_area * area_img:
                    continue
                if _ratio(quad) > ratio_card * 1.9:
                    continue
                cands.append((cv2.contourArea(quad) * 0.9, quad))
                continue
            if not cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.int32)):
                continue
            if cv2.contourArea(quad) < 0.85 * cv2.contourArea(hull):
                continue
            on_edge = ((quad[:, 0] < 3) | (quad[:, 0] > sw - 4) | (quad[:, 1] < 3)
                       | (quad[:, 1] > sh - 4)).sum()
            if on_edge >= 2:
                if cut is not None and len(cut) < limit:
                    q = _order_clockwise(np.asarray(quad / scale, np.float32))
                    if not any(_same_quad(q, o, 8) for o in cut):
                        cut.append(q.astype(np.float64))
                continue
            if not _ratio(quad) <= ratio_card * 1.9:
                continue
            cands.append((cv2.contourArea(quad), (c, quad)))
    cands.sort(key=lambda x: -x[0])
    out: list[_Outline] = []
    for _, cq in cands[:3 * limit]:
        if len(out) >= limit:
            break
        # the same outline from another mask is kept once
        rough = _order_clockwise(np.asarray((cq[1] if isinstance(cq, tuple) else cq) / scale,
                                               np.float32))
        if not any(_same_quad(rough, o.rough, 8) for o in out):
            out.append(_Outline(rough, cq if isinstance(cq, tuple) else None, scale))
    pieced = [o.rough for o in out]
    _add_supported(pieced, broken, scale, min_support, limit_broken)
    return out + [_Outline(q) for q in pieced[len(out):]]


def homographies_for_quad(quad: np.ndarray, geom: CardGeometry) -> list[np.ndarray]:
    """The 4 ways to lay the card's corners (mm) on a quadrilateral (px): one per rotation."""
    src = card_corners_mm(geom)
    corners = np.asarray(quad, np.float32)[_ROLLS]
    return [cv2.getPerspectiveTransform(src, c) for c in corners]


# ------------------------------------------------------------------- outline: registration

def _grow(quad: np.ndarray, edges: np.ndarray, reach: float = 0.06) -> np.ndarray:
    """Move each side outwards onto the outermost parallel edge within ``reach`` of the short
    side (a printed frame inside the card's edge can look like the card's outline)."""
    h, w = edges.shape
    sides = _sides(quad)
    maxd = max(2, int(reach * min(sides)))
    t = np.linspace(0.2, 0.8, 48)[:, None]
    lines = []
    for p, q, u, n in _outward_sides(quad):
        base = p + t * (q - p)
        best = 0
        for d in range(2, maxd + 1):
            pts = np.round(base + n * d).astype(int)
            inside = (pts[:, 0] >= 0) & (pts[:, 0] < w) & (pts[:, 1] >= 0) & (pts[:, 1] < h)
            if inside.mean() < 0.9:
                break
            pts = pts[inside]
            if (edges[pts[:, 1], pts[:, 0]] > 0).mean() >= 0.5:
                best = d
        lines.append((p + n * best, u))
    grown = _intersect_lines(lines)
    return quad if grown is None else grown


def _snap(quad: np.ndarray, image: np.ndarray, reach: float = 0.02) -> np.ndarray:
    """Sub-pixel sides: along profiles across each side, the outermost strong step in colour
    (the card's edge against the table), a robust line through those points. ``image`` is
    float32, grey or BGR."""
    sides = _sides(quad)
    r = max(4.0, reach * min(sides))
    steps = np.arange(-r, r + 0.25, 0.5, dtype=np.float32)
    lines = []
    for p, q, _u, n in _outward_sides(quad):
        base = p + np.linspace(0.12, 0.88, 60)[:, None] * (q - p)
        xs = (base[:, 0:1] + n[0] * steps[None, :]).astype(np.float32)
        ys = (base[:, 1:2] + n[1] * steps[None, :]).astype(np.float32)
        prof = cv2.remap(image, xs, ys, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
        grad = np.abs(np.gradient(prof, axis=1))
        if grad.ndim == 3:
            grad = grad.sum(axis=2)
        pts = []
        for k in range(len(base)):
            g = grad[k]
            top = float(g.max())
            if top < 4.0:
                continue
            strong = np.nonzero(g >= 0.5 * top)[0]
            j = int(strong[-1])
            while j + 1 < len(g) and g[j + 1] > g[j]:
                j += 1
            while j > 0 and g[j - 1] > g[j]:
                j -= 1
            off = 0.0
            if 0 < j < len(g) - 1:
                den = g[j - 1] - 2 * g[j] + g[j + 1]
                off = 0.0 if den == 0 else 0.5 * (g[j - 1] - g[j + 1]) / den
            pts.append(base[k] + n * (steps[j] + 0.5 * off))
        if len(pts) < 12:
            return quad
        lines.append(_fit_line(np.array(pts)))
    out = _intersect_lines(lines)
    if out is None or np.abs(out - quad).max() > 2 * r:
        return quad
    return out


def _aspect_ok(quad: np.ndarray, aspect: float, tolerance: float) -> bool:
    a, b = _opposite_means(quad)
    if min(a, b) < 1:
        return False
    ratio = min(a, b) / max(a, b)
    want = min(aspect, 1 / aspect)
    return abs(ratio - want) <= tolerance * want


def edge_quads(image: np.ndarray, aspect: float, *, tolerance: float = 0.3,
               min_area: float = 0.02, limit: int = 6) -> list[np.ndarray]:
    """Convex quadrilaterals with a card-like aspect ratio, largest first, for a card held
    flat and whole in view (registration).

    Each is 4 corners (clockwise from the top-left-most, image pixels), its sides refitted as
    lines and moved out onto the outermost parallel edge, then to sub-pixel colour steps.
    ``aspect`` is width/height of the card; ``tolerance`` the relative slack allowed on the
    ratio of the side lengths (perspective changes it); ``min_area`` the smallest share of the
    image the card may cover.
    """
    h, w = image.shape[:2]
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    grey = cv2.GaussianBlur(grey, (5, 5), 0)
    # Edges in each colour channel: a blue frame on a grey table differs in hue, not in grey.
    thin = np.zeros_like(grey)
    for channel in cv2.split(cv2.GaussianBlur(image, (5, 5), 0)):
        med = float(np.median(channel))
        thin |= cv2.Canny(channel, max(10, 0.5 * med), min(255, 1.2 * med + 30))
    edges = cv2.dilate(thin, np.ones((3, 3), np.uint8))
    _, otsu = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    found: list[tuple[float, np.ndarray]] = []
    for binary in (edges, otsu, cv2.bitwise_not(otsu)):
        contours, _ = cv2.findContours(binary, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        for cnt in contours:
            area = cv2.contourArea(cnt)
            if area < min_area * h * w:
                continue
            hull = cv2.convexHull(cnt)
            peri = cv2.arcLength(hull, True)
            for eps in (0.01, 0.02, 0.03, 0.05):
                approx = cv2.approxPolyDP(hull, eps * peri, True)
                if len(approx) == 4:
                    break
            if len(approx) != 4 or not cv2.isContourConvex(approx):
                continue
            quad = _order_clockwise(approx.reshape(4, 2).astype(np.float64))
            # A card wholly in view: no corner on the image's border (that is the frame).
            if (quad.min() < 2 or np.any(quad[:, 0] > w - 3) or np.any(quad[:, 1] > h - 3)):
                continue
            # The contour must hug the quad (a card, not a random blob).
            if cv2.contourArea(hull) < 0.9 * cv2.contourArea(quad.astype(np.float32)):
                continue
            if not _aspect_ok(quad, aspect, tolerance):
                continue
            contour = hull if binary is not edges else cnt
            found.append((area, _refine_quad(contour, quad, 0.15,
                                             0.1 * float(np.linalg.norm(quad[2] - quad[0])))))
    found.sort(key=lambda f: -f[0])
    wide = cv2.dilate(thin, np.ones((5, 5), np.uint8))
    fine = cv2.GaussianBlur(image, (0, 0), 1.0).astype(np.float32)
    out: list[np.ndarray] = []
    for _, quad in found:
        grown = _snap(_grow(quad, wide), fine)
        if not any(_same_quad(grown, q, 4) for q in out):
            out.append(grown)
        if len(out) >= limit:
            break
    return out


# ------------------------------------------------------------ checking a pose with the layout

def _layout_edges(image: np.ndarray, geom: CardGeometry, hom: np.ndarray, ppm: float,
                  ) -> np.ndarray:
    size = (round(geom.width * ppm), round(geom.height * ppm))
    rect = cv2.warpPerspective(image, np.linalg.inv(hom @ np.diag([1 / ppm, 1 / ppm, 1])),
                               size, flags=cv2.INTER_LINEAR)
    grey = cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))


def _edge_score(image: np.ndarray, geom: CardGeometry, hom: np.ndarray) -> float:
    """How strongly the layout's printed outlines (boxes, candles) show under ``hom``."""
    ppm = 4.0
    mag = _layout_edges(image, geom, hom, ppm)
    mask = np.zeros(mag.shape, np.uint8)
    for x0, y0, x1, y1 in (*geom.top_boxes, *geom.score_boxes):
        cv2.rectangle(mask, (round(x0 * ppm), round(y0 * ppm)), (round(x1 * ppm), round(y1 * ppm)),
                      1, 2)
    for c in geom.candles:
        cv2.circle(mask, (round(c.center[0] * ppm), round(c.center[1] * ppm)),
                   round(c.radius * ppm), 1, 2)
    on = mag[mask > 0].mean() if mask.any() else 0.0
    return float(on / (mag.mean() + 1e-6))


def layout_match(image: np.ndarray, geom: CardGeometry, hom: np.ndarray) -> float:
    """How well the layout fits the card in view: the mean edge strength on the candle discs
    (where every card prints something: an outline, a number, a candle) over that in the free
    space around them. About 10 or more when the layout is right, about 1 when the candles are
    elsewhere (a wrong layout file, or positions off by several millimetres)."""
    ppm = 4.0
    mag = _layout_edges(image, geom, hom, ppm)
    on = np.zeros(mag.shape, np.uint8)
    around = np.zeros(mag.shape, np.uint8)
    centers = [(round(c.center[0] * ppm), round(c.center[1] * ppm)) for c in geom.candles]
    for c, ctr in zip(geom.candles, centers, strict=True):
        cv2.circle(around, ctr, round((c.radius + 3.5) * ppm), 1, -1)
    for c, ctr in zip(geom.candles, centers, strict=True):
        cv2.circle(around, ctr, round((c.radius + 1.5) * ppm), 0, -1)
        cv2.circle(on, ctr, round((c.radius + 0.5) * ppm), 1, -1)
    if not on.any() or not around.any():
        return 0.0
    return float(mag[on > 0].mean() / (mag[around > 0].mean() + 1e-6))


# --------------------------------------------------------- checking a pose with a reference

def rectify(image: np.ndarray, h: np.ndarray, geom: CardGeometry, s: float,
            ) -> tuple[np.ndarray, np.ndarray]:
    """The card straightened at ``s`` px/mm (pixel ``(i, j)`` at card mm ``(j / s, i / s)``)
    and a bool map of the pixels that lie inside the photo."""
    w, hh = geom.size_mm
    size = (round(w * s), round(hh * s))
    m = h @ np.diag([1.0 / s, 1.0 / s, 1.0])
    rect = cv2.warpPerspective(image, m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    # the photo's frame seen from the card (pixels outside it are not in the photo)
    ih, iw = image.shape[:2]
    frame = np.array([[0, 0], [iw - 1, 0], [iw - 1, ih - 1], [0, ih - 1]], np.float64)
    inv = np.linalg.inv(m)
    pts = cv2.perspectiveTransform(frame.reshape(-1, 1, 2), inv).reshape(-1, 2)
    valid = np.zeros((size[1], size[0]), np.uint8)
    if np.all(np.isfinite(pts)) and np.abs(pts).max() < 1e6:
        cv2.fillConvexPoly(valid, np.round(pts).astype(np.int32), 1)
    else:  # the horizon crosses the card: fall back to warping
        ones = np.full((ih, iw), 1, np.uint8)
        valid = cv2.warpPerspective(ones, m, size, flags=cv2.INTER_NEAREST
                                    | cv2.WARP_INVERSE_MAP, borderValue=0)
    return rect, valid.astype(bool)


def rectify_card(image: np.ndarray, pose: Pose, geom: CardGeometry, px_per_mm: float = 8.0,
                 ) -> np.ndarray:
    """The card straightened for keeping (a registered reference): ``round(h*ppm) x
    round(w*ppm)`` BGR, cubic interpolation, origin at the card's TL."""
    size = (round(geom.width * px_per_mm), round(geom.height * px_per_mm))
    m = np.linalg.inv(pose.homography @ np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0]))
    return cv2.warpPerspective(image, m, size, flags=cv2.INTER_CUBIC,
                               borderMode=cv2.BORDER_REPLICATE)


MATCH_PPM = 2.0
RANK_PPM = 1.0   # candidate outlines are ranked this coarsely (a quarter of the pixels)


def _normalised(image: np.ndarray, h: np.ndarray, geom: CardGeometry, s: float) -> np.ndarray:
    """The photo (BGR, or grey already) rectified at ``s`` px/mm, grey, divided by a coarse
    estimate of the bare card's brightness (shade and uneven light cancel)."""
    size = (round(geom.width * s), round(geom.height * s))
    rect = cv2.warpPerspective(image, h @ np.diag([1.0 / s, 1.0 / s, 1.0]), size,
                               flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
    g = (rect if rect.ndim == 2 else cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY)).astype(np.float32)
    small = cv2.resize(g, (max(2, g.shape[1] // 4), max(2, g.shape[0] // 4)),
                       interpolation=cv2.INTER_AREA)
    paper = cv2.resize(cv2.dilate(small, np.ones((3, 3), np.uint8)), (g.shape[1], g.shape[0]))
    return g / np.maximum(paper, 1.0)


def _match_image(image: np.ndarray, h: np.ndarray, geom: CardGeometry) -> np.ndarray:
    """The photo rectified at MATCH_PPM, light-normalised, zero-mean (for correlation)."""
    return _zero_mean(_normalised(image, h, geom, MATCH_PPM))


def _zero_mean(g: np.ndarray) -> np.ndarray:
    b = 6
    g = cv2.blur(g[b:-b, b:-b], (3, 3))
    g = g - g.mean()
    return g / max(float(np.sqrt((g * g).sum())), 1e-6)


@per_object(size=512, key=lambda ref, geom, s, zero_mean: (geom.size_mm, s, zero_mean))
def _ref_at(ref: np.ndarray, geom: CardGeometry, s: float, zero_mean: bool) -> np.ndarray:
    """A reference (grey, light-normalised, whole card) resized to ``s`` px/mm, cached by the
    array's identity (kept alive in the cache)."""
    size = (round(geom.width * s), round(geom.height * s))
    out = cv2.resize(ref, size, interpolation=cv2.INTER_AREA)
    return _zero_mean(out) if zero_mean else out


# ------------------------------------------------------------------------------ finding

class _Photo:
    """The photo as the pose search reads it: BGR (the outline masks), grey (the whole-card
    and candle matches, :func:`_normalised`) and its darkest channel (the patch refinement,
    :func:`_min_channel_normalised`), made once on first use: warping one channel instead of
    three and reducing it afterwards."""

    def __init__(self, bgr: np.ndarray, grey: np.ndarray,
                 exclude: np.ndarray | None = None) -> None:
        self.bgr = bgr
        self.grey = grey
        # a card already read (its corners, px): the search looks for another one
        self.exclude = None if exclude is None else np.asarray(exclude, np.float64)

    def excluded(self, corners: np.ndarray, tol: float = 0.1) -> bool:
        """Whether a card with these corners (px, any rotation) is the card excluded: every
        corner within ``tol`` of its shorter side (the card turned half round is the same
        card)."""
        if self.exclude is None:
            return False
        side = min(_sides(self.exclude))
        return _same_quad(np.asarray(corners, np.float64), self.exclude, tol * side)

    @cached_property
    def darkest(self) -> np.ndarray:
        # the least of each pixel's three values: a 1x3 minimum filter over the interleaved
        # channels, read at each pixel's middle value (a third less work than splitting the
        # channels and taking two minima)
        h, w = self.bgr.shape[:2]
        least = cv2.erode(np.ascontiguousarray(self.bgr).reshape(h, w * 3),
                          np.ones((1, 3), np.uint8))
        return np.ascontiguousarray(least[:, 1::3])


def find_pose(image: np.ndarray, gray: np.ndarray, geom: CardGeometry,
              refs: Sequence[np.ndarray], config: PoseConfig | None = None,
              others: Mapping[int, str] | None = None, hint: np.ndarray | None = None,
              markers: bool = True, exclude: np.ndarray | None = None,
              ) -> tuple[Pose, int, list[str]]:
    """The card's pose in a photo for the reader, the index of the reference that fits it, and
    notes.

    Parameters
    ----------
    image, gray
        The photo, BGR uint8, and its grey version.
    geom
        The layout's geometry.
    refs
        Blank-card references: grey float32 images of the whole card (any resolution),
        light-normalised (the bare card about 1). At least one.
    config
        Thresholds (:class:`PoseConfig`).
    others
        Marker id -> name of other layouts (their markers in view raise :class:`WrongLayout`).
    hint
        Where the card was a moment ago (a homography card mm -> image px, e.g. the previous
        frame's pose). Without two markers in view, the hint is refined first
        (:func:`_from_hint`; a card moved by a few millimetres at most); only when that fails
        is the card searched for by its outline.
    markers
        Whether to look for the layout's markers; False when the card in view cannot carry
        them (every blank card given is a printed design without them,
        :func:`shows_markers`): the marker search is then skipped, and with it the check
        for another layout's markers (:class:`WrongLayout`).
    exclude
        The corners (px, (4, 2)) of a card of the layout already found: another card of it
        is searched for by its outline (markers and the hint left out), every pose within a
        tenth of a side of those corners rejected.

    Raises
    ------
    NoCard
        No markers and no outline whose rectified image matches a reference well enough.
    WrongLayout
        Another layout's markers and not this one's.
    """
    cfg = config or PoseConfig()
    notes: list[str] = []
    if exclude is not None:
        # the card already found painted over in the table's colour (the median of the
        # photo's border), its edge and shadow too: the other card's outline is then its own
        # (a card under it shows as one with a side or a corner hidden, as under a hand)
        quad = np.asarray(exclude, np.float64)
        mid = quad.mean(axis=0)
        grown = mid + (quad - mid) * (1.0 + cfg.exclude_grow)
        border = np.concatenate([image[0], image[-1], image[:, 0], image[:, -1]])
        painted = image.copy()
        cv2.fillConvexPoly(painted, np.round(grown).astype(np.int32),
                           [int(v) for v in np.median(border, axis=0)])
        photo = _Photo(painted, cv2.cvtColor(painted, cv2.COLOR_BGR2GRAY), exclude)
        wider = replace(cfg, refine_candidates=cfg.refine_candidates * cfg.exclude_effort,
                        recover_starts=cfg.recover_starts * cfg.exclude_effort,
                        recover_candidates=cfg.recover_candidates * cfg.exclude_effort,
                        recover_completed=cfg.recover_completed * cfg.exclude_effort,
                        recover_completions=cfg.recover_completions * cfg.exclude_effort)
        pose, which, more = _find_by_outline(photo, geom, refs, wider)
        return pose, which, notes + more
    photo = _Photo(image, gray)
    seen = _markers_in_view(gray, geom, others) if markers else {}
    hm = _marker_homography(seen, geom) if len(seen) >= 2 else None
    if hm is not None:
        which = 0
        if len(refs) > 1:
            g = _match_image(photo.grey, hm, geom)
            which = int(np.argmax([float((g * _ref_at(r, geom, MATCH_PPM, True)).sum())
                                   for r in refs]))
        # corners of two or three small markers, blurred, fix the far side of the card only
        # roughly: the printed artwork pins it down, if it agrees with the markers seen
        if len(seen) < 4:
            mine = {m.id: m for m in geom.markers}
            ppm = photo_px_per_mm(hm, geom)
            tol = cfg.marker_agree_mm * ppm

            def agrees(r: tuple[np.ndarray, int, float] | None) -> bool:
                """Enough patches agree over enough of the card, and the refined pose keeps
                the marker centres seen (blur moves a marker's corners inwards, not its
                centre) within ``marker_agree_mm``."""
                if r is None or r[1] < cfg.min_inliers or r[2] < cfg.min_cover:
                    return False
                off = max(float(np.linalg.norm(project(r[0], np.array([mine[i].center]))[0]
                                               - c.mean(axis=0)))
                          for i, c in seen.items())
                return off <= tol

            # the fine pass alone first: when it moves no corner of the card by more than
            # half its reach, the markers put the card well within that reach, and coarse
            # then fine finds the same pose (at 0.1-0.4 px on the dev photos, at twice the
            # cost); otherwise coarse then fine, as for any pose further off
            corners = card_corners_mm(geom)
            start = project(hm, corners)
            for coarse in (False, True):
                r = _refine(photo, hm, geom, refs[which], coarse, cfg.marker_patches)
                if r is None or not agrees(r):
                    continue
                moved = float(np.abs(project(r[0], corners) - start).max()) / ppm
                if coarse or moved <= cfg.fine_first_move * _FINE[1]:
                    hm = r[0]
                    break
        if len(seen) < 4:
            # two or three markers (a homography through eight blurred corners of two small
            # squares can put the far side of the card anywhere): the pose must also fit the
            # printed card, else the outline decides
            s1, candles = _fit(photo.grey, hm, geom, refs[which], cfg)
            if s1 < cfg.min_match or candles < cfg.min_candle_match:
                notes.append("markers seen but the card does not fit them: found by its outline")
                pose, which2, more = _find_by_outline(photo, geom, refs, cfg)
                return pose, which2, notes + more
        return _pose_of(hm, geom, "markers", tuple(sorted(seen))), which, notes
    if hint is not None:
        found = _from_hint(photo, np.asarray(hint, np.float64), geom, refs, cfg)
        if found is not None:
            return found[0], found[1], [*notes, "card found where it was (the pose hint)"]
        notes.append("the card is not where the hint puts it")
    if geom.markers and markers:
        notes.append("markers not found: card found by its outline")
    pose, which, more = _find_by_outline(photo, geom, refs, cfg)
    return pose, which, notes + more


def _from_hint(photo: _Photo, hint: np.ndarray, geom: CardGeometry,
               refs: Sequence[np.ndarray], cfg: PoseConfig) -> tuple[Pose, int] | None:
    """The card near a pose given by the caller (the last frame's): the fine patch pass from
    it (4 px/mm within 1.5 mm: a card that has not moved), else coarse then fine (within 6 mm:
    one nudged); kept when enough patches agree over enough of the card and the pose fits the
    blank card and its candles as well as any outline pose must; else None."""
    if hint.shape != (3, 3) or not np.all(np.isfinite(hint)):
        return None
    for coarse in (False, True):
        for i, ref in enumerate(refs):
            r = _refine(photo, hint, geom, ref, coarse=coarse)
            if r is None or r[1] < cfg.min_inliers or r[2] < cfg.min_cover:
                continue
            score, candles = _fit(photo.grey, r[0], geom, ref, cfg)
            if score >= cfg.min_match and candles >= cfg.min_candle_match:
                return _pose_of(r[0], geom, "hint"), i
    return None


def _fit(grey: np.ndarray, h: np.ndarray, geom: CardGeometry, ref: np.ndarray,
         cfg: PoseConfig) -> tuple[float, float]:
    """How well a pose fits the blank card: the correlation of the whole card (at MATCH_PPM)
    and the ``candles_seen``-th best candle correlation (:func:`candle_scores`)."""
    n1 = _normalised(grey, h, geom, MATCH_PPM)
    score = float((_zero_mean(n1) * _ref_at(ref, geom, MATCH_PPM, True)).sum())
    cs = candle_scores(grey, h, geom, ref, MATCH_PPM, n1)
    return score, float(np.sort(np.nan_to_num(cs, nan=-1.0))[-cfg.candles_seen])


def _find_by_outline(photo: _Photo, geom: CardGeometry, refs: Sequence[np.ndarray],
                     cfg: PoseConfig) -> tuple[Pose, int, list[str]]:
    """The card by its outline (:func:`outline_quads`, :func:`_pose_from_quads`); when no
    outline fits the blank card, the quadrilaterals of the straight edges in view
    (:func:`line_quads`: a hand across the card joins it in every mask) and the outlines
    again, every rotation of each tried; when none fits either, the card is recovered from
    them (:func:`_recover`: a hand hides part of the outline) or the photo refused."""
    cut: list[np.ndarray] = []
    outlines = outline_quads(photo.bgr, geom, cut=cut)
    try:
        return _pose_from_quads(photo, geom, refs, cfg, outlines)
    except NoCard as exc:
        first = exc
    more = line_quads(photo.bgr, geom)
    if more:
        try:
            pose, which, notes = _pose_from_quads(photo, geom, refs, cfg,
                                                  [*map(_Outline, more), *outlines], True)
        except NoCard:
            pass
        else:
            return pose, which, [*notes,
                                 "card found by the straight runs of its edges (outline broken)"]
    if not (cfg.recover and (more or outlines or cut)):
        raise first
    found = _recover(photo, geom, refs, cfg, more + [o.quad for o in outlines], cut)
    if found is None:
        raise NoCard(f"{first}; nor does any candidate outline with a side or corner hidden "
                     "register with the blank card") from None
    return found[0], found[1], ["card recovered from a partly hidden outline (every rotation "
                                "of every candidate outline registered with the blank card)"]


def _completions(quad: np.ndarray, geom: CardGeometry,
                 stretch: Sequence[float] = (0.75, 1.0)) -> list[np.ndarray]:
    """Quadrilaterals a card may have when one side of ``quad`` (a candidate outline, px, corners
    in order round it) is not the card's (a hand hides that side, and the outline found runs
    along the hand instead): for each side, its two neighbours and the opposite side kept and
    the side moved along the neighbours to where the card's aspect ratio puts it, the opposite
    side taken as the card's short side and as its long one, each at ``stretch`` times the
    length the ratio gives (foreshortening: the card tilts away or across). Where the
    neighbours converge, the distance along them is foreshortened as a line in perspective is
    (its vanishing point where they meet). Convention: pixel coordinates, (4, 2) float64 each,
    in the corner order of ``quad``."""
    q = np.asarray(quad, np.float64)
    short, long_ = sorted(geom.size_mm)
    out = []
    for k in range(4):
        # side k (corners k, k + 1) hidden; the base is side k + 2 (corners k + 2, k + 3)
        b1, b0 = q[(k + 2) % 4], q[(k + 3) % 4]        # b1 under corner k + 1, b0 under k
        u1, u0 = q[(k + 1) % 4] - b1, q[k] - b0
        n1, n0 = float(np.hypot(*u1)), float(np.hypot(*u0))
        base = float(np.hypot(*(b1 - b0)))
        if min(n1, n0, base) < 1.0:
            continue
        u1, u0 = u1 / n1, u0 / n0
        meet = _cross((b1, u1), (b0, u0))
        # signed distance to the vanishing point along each neighbour (None: parallel)
        v1 = None if meet is None else float((meet - b1) @ u1)
        v0 = None if meet is None else float((meet - b0) @ u0)
        for base_mm, side_mm in ((short, long_), (long_, short)):
            for f in stretch:
                a = f * base / base_mm                    # px per mm along the sides at the base
                pts = []
                for b, u, v in ((b0, u0, v0), (b1, u1, v1)):
                    den = 1.0 if v is None or abs(v) < 1.0 else 1.0 + side_mm * a / v
                    pts.append(b + u * side_mm * a / max(den, 0.3))
                c = np.empty((4, 2))
                c[k], c[(k + 1) % 4] = pts
                c[(k + 2) % 4], c[(k + 3) % 4] = b1, b0
                out.append(c)
    return out


def _recover(photo: _Photo, geom: CardGeometry, refs: Sequence[np.ndarray], cfg: PoseConfig,
             quads: Sequence[np.ndarray], cut: Sequence[np.ndarray] = (),
             ) -> tuple[Pose, int] | None:
    """The card when no candidate outline's best-ranked rotations fit the blank card: a hand
    hides part of its outline, so the outlines found are a corner or a side off (the coarse
    pass from there fails), and the ranking by correlation, which the hand spoils too, puts
    the right rotation low.

    Every rotation of every quad (at most ``recover_starts`` distinct ones) gets one coarse
    patch pass (:func:`_refine`, 6 mm reach); the ``recover_candidates`` with the most patches
    agreeing go on with coarse passes from where the last one put them (each reaches 6 mm
    further), at most ``recover_passes`` in all, until one moves no corner by more than half
    a millimetre, then the fine pass. A pose is verified by the patches (at least
    ``min_inliers`` agreeing over ``min_cover`` of the card after the fine pass) and the
    candles (``min_candle_match``, as any outline pose), and by the whole card's correlation
    (``min_match``) or, when the hand hides so much that it spoils that, by many more patches
    (``recover_inliers``) and a correlation of at least ``recover_min_match``. The best
    verified pose (by the whole card's correlation) and its reference, or None."""
    corners = card_corners_mm(geom)
    starts: list[tuple[np.ndarray, int, np.ndarray]] = []

    def add(h: np.ndarray, i: int) -> None:
        """``h`` as a start, unless one already given puts every corner within 2 mm of it
        (the coarse pass, reaching 6 mm, takes both to the same pose)."""
        at = project(h, corners)
        tol = max(4.0, 2.0 * photo_px_per_mm(h, geom))
        if not any(j == i and np.abs(at - a).max() < tol for _, j, a in starts):
            starts.append((h, i, at))

    for quad in quads:
        # the card's short sides on the quad's shorter pair, as _pose_from_quads (a side the
        # hand hides is the completions' case)
        hs = homographies_for_quad(quad, geom)
        for k in _short_side_turns(quad):
            for i in range(len(refs)):
                add(hs[k], i)
    del starts[cfg.recover_starts:]
    # a side the hand hides entirely: the quads completed from the other three, the
    # best-ranked of them by correlation with the blank card
    ranked: list[tuple[float, np.ndarray, int]] = []
    # (and the outlines cut by the frame's edge: the card runs out of view on that side)
    for quad in [*quads[:cfg.recover_completed], *cut]:
        for c in _completions(quad, geom):
            if not cv2.isContourConvex(np.round(c).astype(np.int32).reshape(-1, 1, 2)):
                continue
            hs = homographies_for_quad(c.astype(np.float32), geom)
            ranked += [(score, hs[k], i) for score, k, i
                       in _ranked_turns(photo, geom, refs, hs, (0, 1, 2, 3))]
    ranked.sort(key=lambda x: -x[0])
    n = len(starts)
    for _, h, i in ranked:
        if len(starts) >= n + cfg.recover_completions:
            break
        add(h, i)
    need_candles = max(cfg.min_candle_match, cfg.cut_min_candle_match) if cut \
        else cfg.min_candle_match
    first: list[tuple[int, np.ndarray, int]] = []
    for h, i, _ in starts:
        r = _refine(photo, h, geom, refs[i], fine=False)
        if r is not None:
            first.append((r[1], r[0], i))
    first.sort(key=lambda x: -x[0])
    best: tuple[float, np.ndarray, int] | None = None
    for _, h, i in first[:cfg.recover_candidates]:
        for _ in range(cfg.recover_passes - 1):
            r = _refine(photo, h, geom, refs[i], fine=False)
            if r is None:
                break
            moved = float(np.abs(project(r[0], corners) - project(h, corners)).max())
            h = r[0]
            if moved < 0.5 * photo_px_per_mm(h, geom):
                break
        r = _refine(photo, h, geom, refs[i], coarse=False)
        if r is None or r[1] < cfg.min_inliers or r[2] < cfg.min_cover \
                or photo.excluded(project(r[0], corners)):
            continue
        score, candles = _fit(photo.grey, r[0], geom, refs[i], cfg)
        if candles < need_candles or score < cfg.recover_min_match \
                or (score < cfg.min_match and r[1] < cfg.recover_inliers):
            continue
        if best is None or score > best[0]:
            best = (score, r[0], i)
        if score >= cfg.good_match:
            break
    if best is None:
        return None
    return _pose_of(best[1], geom, "outline"), best[2]


def _ranked_turns(photo: _Photo, geom: CardGeometry, refs: Sequence[np.ndarray],
                  hs: Sequence[np.ndarray], turns: Sequence[int],
                  ) -> list[tuple[float, int, int]]:
    """``(score, k, reference index)`` for each rotation ``k`` in ``turns`` of the
    homographies ``hs`` (:func:`homographies_for_quad`) and each reference: the correlation of
    the rectified photo with the blank card at RANK_PPM (only the order counts: refined poses
    are checked at MATCH_PPM). The card turned half round is the same rectified image turned
    half round, so each pair of opposite rotations is rectified once."""
    out: list[tuple[float, int, int]] = []
    for k in (0, 1):
        if k not in turns and k + 2 not in turns:
            continue
        g = _zero_mean(_normalised(photo.grey, hs[k], geom, RANK_PPM))
        for kk, gg in ((k, g), (k + 2, g[::-1, ::-1])):
            if kk in turns:
                for i, r in enumerate(refs):
                    out.append((float((gg * _ref_at(r, geom, RANK_PPM, True)).sum()), kk,
                                i))
    return out


def _pose_from_quads(photo: _Photo, geom: CardGeometry, refs: Sequence[np.ndarray],
                     cfg: PoseConfig, outlines: Sequence[_Outline], every_turn: bool = False,
                     ) -> tuple[Pose, int, list[str]]:
    """The card on one of ``outlines``: every rough quad and rotation scored by correlation
    with the blank card; the best few, on their refitted quads, refined coarsely (2 px/mm,
    6 mm reach) and checked (score and candles); the winner refined finely once (4 px/mm,
    1.5 mm reach). ``every_turn``: all four rotations of each quad, else those that put the
    card's short sides on the quad's shorter pair (steep tilt can foreshorten the long sides
    below the short ones)."""
    notes: list[str] = []
    scored: list[tuple[float, _Outline, int, int]] = []    # score, outline, rotation, reference
    for o in outlines:
        if photo.excluded(o.rough):
            continue
        turns = (0, 1, 2, 3) if every_turn else _short_side_turns(o.rough)
        scored += [(score, o, k, i) for score, k, i
                   in _ranked_turns(photo, geom, refs, homographies_for_quad(o.rough, geom),
                                    turns)]
    if not scored:
        raise NoCard("no sigil card in view (no card-shaped outline or markers found)")
    scored.sort(key=lambda x: -x[0])
    best: tuple[float, np.ndarray, int] | None = None
    top = (-1.0, -1.0)

    def consider(h0: np.ndarray, i: int) -> None:
        """Refine ``h0`` coarsely; keep it (or the unrefined pose, when the refined one fails
        and it fits better) as the best if it fits the blank card and its candles."""
        nonlocal best, top
        r = _refine(photo, h0, geom, refs[i], fine=False)
        score, candles = -1.0, -1.0
        if r is not None:
            score, candles = _fit(photo.grey, r[0], geom, refs[i], cfg)
            if score < cfg.min_match or candles < cfg.min_candle_match:
                # a start far off: the coarse pass alone may leave the candles a little off
                r2 = _refine(photo, r[0], geom, refs[i], coarse=False)
                if r2 is not None:
                    s2, c2 = _fit(photo.grey, r2[0], geom, refs[i], cfg)
                    if (s2, c2) > (score, candles):
                        r, score, candles = r2, s2, c2
        if r is None or score < cfg.min_match or candles < cfg.min_candle_match:
            s0, c0 = _fit(photo.grey, h0, geom, refs[i], cfg)
            if r is None or (s0, c0) > (score, candles):
                score, candles = s0, c0
            else:
                h0 = r[0]
        else:
            h0 = r[0]
        if photo.excluded(project(h0, card_corners_mm(geom))):
            return
        # the candles must be where the layout puts them: a card of another layout, or of
        # another design with the same frame, matches the rest of the card well
        top = max(top, (score, candles))
        if score >= cfg.min_match and candles >= cfg.min_candle_match \
                and (best is None or score > best[0]):
            best = (score, h0, i)

    for (_, o, k, i) in scored[:cfg.refine_candidates]:
        if best is not None and best[0] >= cfg.good_match:
            break  # the first candidate is clearly the card: no need to look further
        consider(homographies_for_quad(o.quad, geom)[k], i)
    if best is not None and best[0] < cfg.good_match:
        # a doubtful best: the card turned half round (its quad is the same) competes with it,
        # when it fits the blank card, unrefined, nearly as well (the printed frame alone
        # gives it about half the score)
        w, hh = geom.size_mm
        half = np.array([[-1.0, 0.0, w], [0.0, -1.0, hh], [0.0, 0.0, 1.0]])
        turned = best[1] @ half
        if _fit(photo.grey, turned, geom, refs[best[2]], cfg)[0] >= cfg.turn_share * best[0]:
            consider(turned, best[2])
    if best is None:
        raise NoCard(f"no card matching layout {geom.name!r} in view (best match "
                     f"{top[0]:.2f}, candles {top[1]:.2f}; {cfg.min_match} and "
                     f"{cfg.min_candle_match} needed): wrong layout, or no card")
    h = best[1]
    r = _refine(photo, h, geom, refs[best[2]], coarse=False)
    if r is not None and not photo.excluded(project(r[0], card_corners_mm(geom))):
        # kept unless it fits the blank card worse (too few patches of a hidden card matched)
        s2, candles = _fit(photo.grey, r[0], geom, refs[best[2]], cfg)
        if s2 >= best[0] - cfg.fine_slack and candles >= cfg.min_candle_match:
            h = r[0]
    return _pose_of(h, geom, "outline"), best[2], notes


def find_card(image: np.ndarray, layout: Any) -> Pose:
    """Find a card held flat and whole in view, without a reference (registration): by its
    markers when the layout has them and at least two are seen; with one marker, the outline
    that agrees with it; else by its outline, the orientation where the layout's printed boxes
    and candle outlines show strongest.

    Raises
    ------
    NoCard
        When neither way finds the card.
    """
    geom = card_geometry(layout)
    image = as_bgr(image)
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    seen = _markers_in_view(gray, geom, None)
    if len(seen) >= 2:
        h = _marker_homography(seen, geom)
        if h is not None:
            return _pose_of(h, geom, "markers", tuple(sorted(seen)))
    card = card_corners_mm(geom)
    quads = edge_quads(image, geom.aspect)
    if len(seen) == 1:
        # One marker fixes the card only roughly: take the outline that agrees with it.
        h = _marker_homography(seen, geom)
        if h is not None:
            rough = project(h, card)
            tol = 0.06 * float(np.linalg.norm(rough[2] - rough[0]))
            for quad in quads:
                for s in range(4):
                    q = np.roll(quad, -s, 0)
                    if np.abs(q - rough).max() < tol:
                        hom = cv2.getPerspectiveTransform(card, q.astype(np.float32))
                        return Pose(hom, "markers+outline", tuple(seen), q.astype(np.float32))
    found = []
    w, h_mm = geom.size_mm
    for quad in quads:
        even, odd = _opposite_means(quad)
        portrait_img = odd >= even
        # Start from a corner such that the image quad's long sides map to the card's long sides.
        starts = [0, 2] if portrait_img == (h_mm >= w) else [1, 3]
        for s in starts:
            q = np.roll(quad, -s, 0).astype(np.float32)
            hom = cv2.getPerspectiveTransform(card, q)
            found.append((_edge_score(image, geom, hom), hom, q))
    if not found:
        raise NoCard("no card found: no marker of the layout and no card-shaped outline "
                     f"(a {geom.width:g}x{geom.height:g} mm card, held flat, whole in view)")
    _, hom, q = max(found, key=lambda f: f[0])
    return Pose(hom, "outline", (), q)


# ------------------------------------------------------------------ refinement by patches

@dataclass(frozen=True)
class _Patches:
    """Textured patches of a reference at ``s`` px/mm: centres (mm) and images."""

    centres: np.ndarray          # (N, 2) mm
    images: list[np.ndarray]     # (p, p) float32 each
    half: int                    # patch half size, px


@per_object(size=512, key=lambda ref, geom, s, patch_mm, cell_mm, most:
            (geom.size_mm, s, patch_mm, cell_mm, most))
def _patches(ref: np.ndarray, geom: CardGeometry, s: float, patch_mm: float,
             cell_mm: float, most: int) -> _Patches:
    """The reference's most textured patch in each ``cell_mm`` cell of a grid over the card
    (two-dimensional texture: the smaller eigenvalue of the structure tensor, so that a
    straight edge, which only fixes one direction, is not chosen), the ``most`` best of them.
    Cached per reference."""
    r = _ref_at(ref, geom, s, False)
    half = max(3, round(patch_mm * s / 2))
    gx = cv2.Sobel(r, cv2.CV_32F, 1, 0)
    gy = cv2.Sobel(r, cv2.CV_32F, 0, 1)
    k = (2 * half + 1, 2 * half + 1)
    jxx, jyy, jxy = (cv2.boxFilter(a, -1, k) for a in (gx * gx, gy * gy, gx * gy))
    lam = (jxx + jyy) / 2 - np.sqrt(((jxx - jyy) / 2) ** 2 + jxy ** 2)
    hh, ww = r.shape
    cell = max(2, round(cell_mm * s))
    margin = half + 1
    centres, images, scores = [], [], []
    for y0 in range(margin, hh - margin, cell):
        for x0 in range(margin, ww - margin, cell):
            block = lam[y0:min(y0 + cell, hh - margin), x0:min(x0 + cell, ww - margin)]
            if block.size == 0:
                continue
            j = int(np.argmax(block))
            y, x = y0 + j // block.shape[1], x0 + j % block.shape[1]
            scores.append(float(block.flat[j]))
            centres.append(((x + 0.5) / s, (y + 0.5) / s))   # pixel x covers [x, x+1) / s
            images.append(r[y - half:y + half + 1, x - half:x + half + 1].copy())
    keep = np.zeros(len(scores), bool)
    if scores:
        sc = np.array(scores)
        keep[np.argsort(-sc)[:most]] = True
        keep &= sc > 0.25 * np.percentile(sc, 90)
    return _Patches(np.array(centres, np.float64)[keep].reshape(-1, 2),
                    [im for im, k2 in zip(images, keep, strict=True) if k2], half)


def _min_channel_normalised(image: np.ndarray | _Photo, h: np.ndarray, geom: CardGeometry,
                            s: float, pad_mm: float) -> np.ndarray:
    """The photo (BGR, its darkest channel already, or a :class:`_Photo`, whose darkest
    channel is made once) rectified at ``s`` px/mm with ``pad_mm`` around the card, darkest
    channel, uint8."""
    w, hh = geom.size_mm
    size = (round((w + 2 * pad_mm) * s), round((hh + 2 * pad_mm) * s))
    m = h @ np.array([[1 / s, 0, -pad_mm], [0, 1 / s, -pad_mm], [0, 0, 1]])
    if isinstance(image, _Photo):
        image = image.darkest
    rect = cv2.warpPerspective(image, m, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                               borderMode=cv2.BORDER_REPLICATE)
    if rect.ndim == 2:  # the photo's darkest channel already
        return rect
    b, g, r = cv2.split(rect)
    return cv2.min(cv2.min(b, g), r)


@per_object(size=512, key=lambda pt, s, pad, rad, shape: (s, pad, rad, shape))
def _windows(pt: _Patches, s: float, pad: float, rad: int, shape: tuple[int, ...],
             ) -> list[tuple[Any, Any, np.ndarray, int, int, tuple[slice, slice]]]:
    """Where :func:`refine_by_patches` searches each patch in a rectified photo of ``shape``
    (``pad`` px around the card, ``rad`` px of reach): ``(cx, cy, template, x, y, window)``
    per patch whose window lies wholly inside, ``(x, y)`` the patch's centre px and
    ``window`` the slices of its search window. Cached per patches."""
    blank = np.empty(shape[:2], np.uint8)
    out = []
    for (cx, cy), tpl in zip(pt.centres, pt.images, strict=True):
        x, y = round(cx * s + pad), round(cy * s + pad)
        at = (slice(y - pt.half - rad, y + pt.half + rad + 1),
              slice(x - pt.half - rad, x + pt.half + rad + 1))
        if blank[at].shape == (tpl.shape[0] + 2 * rad, tpl.shape[1] + 2 * rad):
            out.append((cx, cy, tpl, x, y, at))
    return out


_SD_SLACK = 1e-3   # the box sums' standard deviation trusted this far from a limit


def _window_sds(g: np.ndarray, windows: list[tuple[Any, ...]]) -> np.ndarray:
    """The standard deviation of ``g`` (uint8) over each window of :func:`_windows`, from
    box sums of ``g`` and its square (exact integers: within float rounding of
    ``cv2.meanStdDev``)."""
    if not windows:
        return np.zeros(0)
    total, squares = cv2.integral2(g, sdepth=cv2.CV_32S, sqdepth=cv2.CV_64F)
    y0 = np.array([w[5][0].start for w in windows])
    y1 = np.array([w[5][0].stop for w in windows])
    x0 = np.array([w[5][1].start for w in windows])
    x1 = np.array([w[5][1].stop for w in windows])
    n = (y1 - y0) * (x1 - x0)
    mean = (total[y1, x1] - total[y0, x1] - total[y1, x0] + total[y0, x0]).astype(np.float64) / n
    sq = (squares[y1, x1] - squares[y0, x1] - squares[y1, x0] + squares[y0, x0]) / n
    return np.sqrt(np.maximum(sq - mean * mean, 0.0))


def _peaks(res: np.ndarray, min_ncc: float) -> tuple[np.ndarray, np.ndarray]:
    """Per correlation map of ``res`` (n, h, w), float32: whether its peak (the first largest
    value) reaches ``min_ncc`` away from the map's border, and ``(x, y, dx, dy)``: the peak's
    column and row and its sub-pixel offset (a parabola through the peak and its neighbours
    in each direction, 0 where they do not curve down), float32 as the maps."""
    n, rh, rw = res.shape
    flat = res.reshape(n, -1)
    j = flat.argmax(axis=1)
    py, px = np.divmod(j, rw)
    found = (flat[np.arange(n), j].astype(np.float64) >= min_ncc) \
        & (px > 0) & (px < rw - 1) & (py > 0) & (py < rh - 1)
    k = np.nonzero(found)[0]
    y, x = py[k], px[k]
    peak2 = 2 * res[k, y, x]
    left, right, up, down = res[k, y, x - 1], res[k, y, x + 1], res[k, y - 1, x], res[k, y + 1, x]
    dx = left - peak2 + right
    dy = up - peak2 + down
    off = np.zeros((n, 4), np.float32)
    off[k, 0], off[k, 1] = x, y
    with np.errstate(divide="ignore", invalid="ignore"):
        off[k, 2] = np.where(dx >= 0, np.float32(0), np.float32(0.5) * (left - right) / dx)
        off[k, 3] = np.where(dy >= 0, np.float32(0), np.float32(0.5) * (up - down) / dy)
    return found, off


def refine_by_patches(image: np.ndarray | _Photo, h: np.ndarray, geom: CardGeometry,
                      ref: np.ndarray, *, s: float, reach_mm: float, patch_mm: float = 7.0,
                      cell_mm: float = 10.0, most: int = 40, min_ncc: float = 0.5,
                      ) -> tuple[np.ndarray, int, float] | None:
    """Refine a pose by matching textured patches of the blank card (``ref``) in the photo.

    The photo (BGR, its darkest channel, or the pose search's :class:`_Photo`) is rectified
    with ``h`` at ``s`` px/mm; each patch is searched within
    ``reach_mm`` of where ``h`` puts it (normalised cross-correlation, sub-pixel peak); a
    homography through the matches (RANSAC: a hand, ink or glare spoils some of them) replaces
    ``h``. Returns ``(homography, inliers, share of the card's area their hull covers)``, or
    None when too few patches match.
    """
    pt = _patches(ref, geom, s, patch_mm, cell_mm, most)
    if len(pt.centres) < 6:
        return None
    g8 = _min_channel_normalised(image, h, geom, s, reach_mm)
    g = g8.astype(np.float32)
    pad = reach_mm * s
    rad = max(1, round(reach_mm * s))
    windows = _windows(pt, s, pad, rad, g.shape)
    # a flat window (glare, a hand) holds nothing to match; near the limit, OpenCV's own
    # figure decides, as before the box sums
    live = [w for w, sd in zip(windows, _window_sds(g8, windows), strict=True)
            if not (sd < 2.0 - _SD_SLACK or (sd < 2.0 + _SD_SLACK
                                             and float(cv2.meanStdDev(g[w[5]])[1][0, 0]) < 2.0))]
    if len(live) < 6:
        return None
    res = np.stack([cv2.matchTemplate(g[at], tpl, cv2.TM_CCOEFF_NORMED)
                    for _, _, tpl, _, _, at in live])
    found, off = _peaks(res, min_ncc)
    if found.sum() < 6:
        return None
    src_a = np.array([(w[0], w[1]) for w in live], np.float64)[found]
    # the patch's centre where it matched (card mm), computed in float32 as the matches are
    pos = np.array([(w[3], w[4]) for w in live])[found] - rad + off[found, :2].astype(np.int64)
    dst = ((pos.astype(np.float32) + off[found, 2:]) - np.float32(pad)) / np.float32(s)
    dst_px = project(h, dst.astype(np.float64))
    tol = max(1.0, 0.35 * photo_px_per_mm(h, geom))     # 0.35 mm
    h2, inl = cv2.findHomography(src_a, dst_px, cv2.RANSAC, tol)
    if h2 is None or inl is None:
        return None
    mask = inl.ravel().astype(bool)
    n = int(mask.sum())
    if n < 6:
        return None
    hull = cv2.convexHull(src_a[mask].astype(np.float32))
    cover = float(cv2.contourArea(hull)) / (geom.width * geom.height)
    return h2, n, cover


_COARSE = (2.0, 6.0, 8.0, 9.0, 64)   # px/mm, reach mm, patch mm, cell mm, most patches
_FINE = (4.0, 1.5, 6.0, 7.0, 64)


def _refine(image: np.ndarray | _Photo, h: np.ndarray, geom: CardGeometry, ref: np.ndarray,
            coarse: bool = True, most: int | None = None, fine: bool = True,
            ) -> tuple[np.ndarray, int, float] | None:
    """Coarse (2 px/mm, 6 mm reach) then fine (4 px/mm, 1.5 mm) patch refinement, either
    pass alone with ``fine`` or ``coarse`` False; the last pass's result
    (:func:`refine_by_patches`), None when the first pass fails."""
    out = None
    passes = ((_COARSE,) if coarse else ()) + ((_FINE,) if fine else ())
    for s, reach, patch, cell, n in passes:
        r = refine_by_patches(image, h, geom, ref, s=s, reach_mm=reach, patch_mm=patch,
                              cell_mm=cell, most=n if most is None else most)
        if r is None:
            return out
        h, out = r[0], r
    return out


@per_object(size=512, key=lambda ref, geom, s: (geom.size_mm, tuple(geom.candles), s))
def _candle_boxes(ref: np.ndarray, geom: CardGeometry, s: float,
                  ) -> list[tuple[int, slice, slice, np.ndarray, np.floating]]:
    """Per candle of the layout inside the card: its index, the rows and columns of its disc
    (and 1 mm around) at ``s`` px/mm, and the reference there minus its mean with that
    difference's sum of squares (the reference's half of :func:`candle_scores`). Cached per
    reference."""
    r = _ref_at(ref, geom, s, False)
    out = []
    for k, c in enumerate(geom.candles):
        rad = (c.radius + 1.0) * s
        x0, y0 = int(c.center[0] * s - rad), int(c.center[1] * s - rad)
        x1, y1 = int(np.ceil(c.center[0] * s + rad)) + 1, int(np.ceil(c.center[1] * s + rad)) + 1
        if x0 < 0 or y0 < 0 or y1 > r.shape[0] or x1 > r.shape[1]:
            continue
        b = r[y0:y1, x0:x1] - r[y0:y1, x0:x1].mean()
        out.append((k, slice(y0, y1), slice(x0, x1), b, (b * b).sum()))
    return out


def candle_scores(image: np.ndarray, h: np.ndarray, geom: CardGeometry, ref: np.ndarray,
                  s: float = 2.0, normalised: np.ndarray | None = None) -> np.ndarray:
    """Per candle, the correlation of the photo with the blank card over its disc (and 1 mm
    around): where layouts differ, so a card of another layout, or a pose off by a candle,
    scores low. NaN where the disc is flat in the reference or the photo. ``normalised``: the
    photo already rectified with ``h`` at ``s`` px/mm (:func:`_normalised`)."""
    g = _normalised(image, h, geom, s) if normalised is None else normalised
    out = np.full(len(geom.candles), np.nan)
    for k, rows, cols, b, bb in _candle_boxes(ref, geom, s):
        a = g[rows, cols] - g[rows, cols].mean()
        den = float(np.sqrt((a * a).sum() * bb))
        if den > 1e-6:
            out[k] = float((a * b).sum()) / den
    return out
