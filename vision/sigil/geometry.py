"""Card geometry in millimetres and finding the card in a photo (its homography).

Convention: card geometry is in millimetres on the card, origin at the card's top-left corner,
x to the right, y down; image points are ``(x, y)`` pixels, origin top-left. A homography ``H``
maps card millimetres to image pixels: ``[u, v, w]^T = H [x_mm, y_mm, 1]^T``.

Two ways to find a card:

- fiducial markers (ArUco, ``cv2.aruco``) at known places on companion cards; markers whose ids
  belong to another layout mean the wrong layout was given (:class:`WrongLayout`);
- the card's outline for cards without markers: the largest convex quadrilateral whose sides
  have a card-like ratio, its sides refitted as straight lines (rounded corners), and the
  orientation (which corner is top-left) chosen by the caller by matching printed artwork.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np

from companion.errors import BadInput

__all__ = [
    "Candle",
    "CardGeometry",
    "MarkerSpec",
    "NoCard",
    "Pose",
    "WrongLayout",
    "find_by_markers",
    "find_by_outline",
    "geometry_of",
]


class NoCard(BadInput):
    """No card of the expected shape is in view."""


class WrongLayout(BadInput):
    """The card in view carries the markers of another layout."""


@dataclass(frozen=True)
class Candle:
    number: int
    center: tuple[float, float]
    radius: float


@dataclass(frozen=True)
class MarkerSpec:
    id: int
    center: tuple[float, float]
    size: float

    def corners(self) -> np.ndarray:
        """The 4 corners in mm, in ArUco order (top-left, top-right, bottom-right, bottom-left
        of the upright printed marker)."""
        h = self.size / 2.0
        cx, cy = self.center
        return np.array([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h],
                         [cx - h, cy + h]], np.float32)


@dataclass(frozen=True)
class CardGeometry:
    """What the reader needs of a layout, in mm (see the module's convention)."""

    name: str
    size_mm: tuple[float, float]
    candles: tuple[Candle, ...]
    stars: tuple[tuple[float, float], ...]
    dividers: tuple[float, float] | None
    top_boxes: tuple[tuple[float, float, float, float], ...]
    score_boxes: tuple[tuple[float, float, float, float], ...]
    dictionary: str | None
    markers: tuple[MarkerSpec, ...]
    must_curve: tuple[tuple[int, int], ...] = ()

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        n = len(self.candles)
        return tuple((a, b) for a in range(n) for b in range(a + 1, n))


def _get(obj: Any, key: str, default: Any = None) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key, default)
    return getattr(obj, key, default)


_GEOMS: dict[int, tuple[Any, CardGeometry]] = {}


def geometry_of(layout: Any) -> CardGeometry:
    """Read a layout (the Doom Cat ``Layout`` object, or its JSON document) into a
    :class:`CardGeometry`. Accepts attribute or mapping access so it does not depend on the
    layout class's internals."""
    if isinstance(layout, CardGeometry):
        return layout
    hit = _GEOMS.get(id(layout))
    if hit is not None and hit[0] is layout:
        return hit[1]
    geom = _geometry_of(layout)
    if not isinstance(layout, Mapping):  # documents may be edited in place: not cached
        if len(_GEOMS) > 64:
            _GEOMS.clear()
        _GEOMS[id(layout)] = (layout, geom)
    return geom


def _geometry_of(layout: Any) -> CardGeometry:
    to_json = getattr(layout, "to_json", None)
    doc = to_json() if callable(to_json) and not isinstance(layout, Mapping) else layout
    name = str(_get(doc, "name"))
    w, h = (float(v) for v in _get(doc, "size_mm"))
    candles = tuple(Candle(int(_get(c, "number")), tuple(float(v) for v in _get(c, "center")),
                           float(_get(c, "radius"))) for c in _get(doc, "candles"))
    div = _get(doc, "dividers")
    dividers = None if div is None else (float(_get(div, "vertical_x")),
                                         float(_get(div, "horizontal_y")))
    markers_doc = _get(doc, "markers") or {}
    items = _get(markers_doc, "items") or []
    markers = tuple(MarkerSpec(int(_get(m, "id")), tuple(float(v) for v in _get(m, "center")),
                               float(_get(m, "size"))) for m in items)
    return CardGeometry(
        name=name, size_mm=(w, h), candles=candles,
        stars=tuple(tuple(float(v) for v in s) for s in (_get(doc, "stars") or [])),
        dividers=dividers,
        top_boxes=tuple(tuple(float(v) for v in b) for b in _get(doc, "top_boxes")),
        score_boxes=tuple(tuple(float(v) for v in b) for b in (_get(doc, "score_boxes") or [])),
        dictionary=_get(markers_doc, "dictionary") if markers else None,
        markers=markers,
        must_curve=tuple(tuple(sorted(int(v) for v in p)) for p in (_get(doc, "must_curve")
                                                                   or [])))


@dataclass(frozen=True)
class Pose:
    """Where the card is: ``homography`` maps card mm to image px; ``method`` is "markers" or
    "outline"; ``markers`` the ids seen; ``corners`` the card's corners in the image (TL, TR,
    BR, BL)."""

    homography: np.ndarray
    method: str
    markers: tuple[int, ...]
    corners: np.ndarray

    def to_json(self) -> dict[str, Any]:
        return {"method": self.method, "markers": list(self.markers),
                "homography": [[round(float(v), 6) for v in row] for row in self.homography],
                "corners": [[round(float(v), 1) for v in p] for p in self.corners]}


def card_corners_mm(geom: CardGeometry) -> np.ndarray:
    w, h = geom.size_mm
    return np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)


def project(h: np.ndarray, pts_mm: np.ndarray) -> np.ndarray:
    """Map ``(N, 2)`` card points (mm) to image points (px) through ``h``."""
    pts = np.asarray(pts_mm, np.float64).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, h).reshape(-1, 2)


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
    """ArUco markers in a grey image: id -> (4, 2) corners in px. Tries half resolution first
    (fast) and full resolution when fewer than 3 markers are found."""
    det = _detector(dictionary)
    found: dict[int, np.ndarray] = {}
    h, w = gray.shape
    if max(h, w) > 900:
        small = cv2.resize(gray, (w // 2, h // 2), interpolation=cv2.INTER_AREA)
        corners, ids, _ = det.detectMarkers(small)
        if ids is not None:
            for c, i in zip(corners, ids.ravel(), strict=True):
                found[int(i)] = c.reshape(4, 2) * 2.0 + 0.5
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


def find_by_markers(gray: np.ndarray, geom: CardGeometry,
                    other_ids: Mapping[int, str] | None = None) -> Pose | None:
    """The pose from the layout's markers, or ``None`` when fewer than 2 of them are seen.

    Raises :class:`WrongLayout` when the markers in view belong to another layout
    (``other_ids`` maps marker ids to the names of the layouts that print them).
    """
    if not geom.markers or geom.dictionary is None:
        return None
    found = detect_markers(gray, geom.dictionary)
    mine = {m.id: m for m in geom.markers}
    seen = [i for i in found if i in mine]
    if other_ids:
        foreign = sorted({other_ids[i] for i in found if i not in mine and i in other_ids})
        if foreign and len(seen) < 2:
            raise WrongLayout(f"the card in view carries the markers of layout "
                              f"{', '.join(foreign)}, not {geom.name}")
    if len(seen) < 2:
        return None
    src = np.concatenate([mine[i].corners() for i in seen])
    dst = np.concatenate([found[i] for i in seen]).astype(np.float32)
    h, _inl = cv2.findHomography(src, dst, cv2.RANSAC, 3.0)
    if h is None:
        return None
    corners = project(h, card_corners_mm(geom))
    return Pose(h, "markers", tuple(sorted(seen)), corners)


def _intersect(l1: np.ndarray, l2: np.ndarray) -> np.ndarray | None:
    (vx1, vy1, x1, y1), (vx2, vy2, x2, y2) = l1, l2
    den = vx1 * vy2 - vy1 * vx2
    if abs(den) < 1e-6:
        return None
    t = ((x2 - x1) * vy2 - (y2 - y1) * vx2) / den
    return np.array([x1 + t * vx1, y1 + t * vy1], np.float32)


def _refine_quad(contour: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Refit the 4 sides of a quadrilateral as straight lines through the contour's points
    (ignoring points near the corners, so that rounded corners do not pull them)."""
    pts = contour.reshape(-1, 2).astype(np.float32)
    out_lines = []
    for k in range(4):
        p, q = quad[k], quad[(k + 1) % 4]
        d = q - p
        length = float(np.hypot(*d))
        if length < 1:
            return quad
        u = d / length
        rel = pts - p
        t = rel @ u
        dist = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        sel = (t > 0.12 * length) & (t < 0.88 * length) & (dist < max(3.0, 0.03 * length))
        if sel.sum() < 5:
            return quad
        out_lines.append(cv2.fitLine(pts[sel], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel())
    out = []
    for k in range(4):
        p = _intersect(out_lines[k - 1], out_lines[k])
        if p is None or np.hypot(*(p - quad[k])) > 0.1 * cv2.arcLength(quad.reshape(-1, 1, 2),
                                                                          True):
            return quad
        out.append(p)
    return np.array(out, np.float32)


def _long_sides_quad(poly: np.ndarray) -> np.ndarray | None:
    """A quadrilateral from the four longest sides of a convex polygon (nearly collinear
    neighbouring sides merged first), or None."""
    n = len(poly)
    if not 5 <= n <= 12:
        return None
    edges = [(poly[k].astype(np.float64), poly[(k + 1) % n].astype(np.float64)) for k in range(n)]
    merged: list[tuple[np.ndarray, np.ndarray]] = []
    for p, q in edges:
        if merged:
            p0, q0 = merged[-1]
            d0, d1 = q0 - p0, q - p
            cos = float(d0 @ d1 / max(np.linalg.norm(d0) * np.linalg.norm(d1), 1e-9))
            if cos > 0.99:
                merged[-1] = (p0, q)
                continue
        merged.append((p, q))
    if len(merged) > 1:
        p0, q0 = merged[0]
        p1, q1 = merged[-1]
        d0, d1 = q0 - p0, q1 - p1
        if float(d0 @ d1 / max(np.linalg.norm(d0) * np.linalg.norm(d1), 1e-9)) > 0.99:
            merged[0] = (p1, q0)
            merged.pop()
    if len(merged) < 4:
        return None
    lengths = [float(np.linalg.norm(q - p)) for p, q in merged]
    keep = sorted(np.argsort(lengths)[-4:])
    lines = []
    for k in keep:
        p, q = merged[k]
        d = (q - p) / max(np.linalg.norm(q - p), 1e-9)
        lines.append(np.array([d[0], d[1], p[0], p[1]]))
    out = []
    for k in range(4):
        pt = _intersect(lines[k - 1], lines[k])
        if pt is None:
            return None
        out.append(pt)
    quad = np.array(out, np.float32)
    if not cv2.isContourConvex(quad.reshape(-1, 1, 2).astype(np.int32)):
        return None
    return quad


def _masks(small: np.ndarray) -> list[np.ndarray]:
    """Binary images in which a card may stand out as one blob or one closed outline."""
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    out = []
    _, otsu = cv2.threshold(blur, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    out.append(otsu)
    # bright and colourless (the card) against coloured backgrounds
    hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
    pale = (hsv[..., 2].astype(np.float32) * (1.0 - hsv[..., 1].astype(np.float32) / 255.0))
    pale = cv2.GaussianBlur(pale.astype(np.uint8), (5, 5), 0)
    _, p2 = cv2.threshold(pale, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    out.append(p2)
    k = np.ones((5, 5), np.uint8)
    out.append(cv2.morphologyEx(p2, cv2.MORPH_OPEN, k))
    edges = cv2.Canny(blur, 40, 120)
    out.append(cv2.dilate(edges, np.ones((3, 3), np.uint8)))
    return out


def find_by_outline(image: np.ndarray, geom: CardGeometry, *, min_area: float = 0.02,
                    max_area: float = 0.9, limit: int = 5) -> list[np.ndarray]:
    """Candidate card outlines in a BGR image: quadrilaterals (4, 2) px in clockwise order
    starting at the top-most corner, largest first, convex, not the frame of the image, whose
    long/short side ratio fits the card seen at up to ~55 degrees off the normal.
    ``min_area`` and ``max_area`` bound their share of the image."""
    h, w = image.shape[:2]
    scale = 640.0 / max(h, w) if max(h, w) > 640 else 1.0
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale != 1.0 else image
    sh, sw = small.shape[:2]
    ratio_card = max(geom.size_mm) / min(geom.size_mm)
    area_img = sh * sw
    cands: list[tuple[float, np.ndarray]] = []
    for m in _masks(small):
        contours, _ = cv2.findContours(m, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
        for c in contours:
            area = cv2.contourArea(c)
            if not min_area * area_img <= area <= max_area * area_img:
                continue
            hull = cv2.convexHull(c)
            peri = cv2.arcLength(hull, True)
            quad = None
            for eps in (0.02, 0.035, 0.05):
                approx = cv2.approxPolyDP(hull, eps * peri, True)
                if len(approx) == 4:
                    quad = approx.reshape(4, 2).astype(np.float32)
                    break
            if quad is None:
                # something over an edge (a hand) adds corners: the card's sides are still the
                # four longest straight runs of the outline
                quad = _long_sides_quad(cv2.approxPolyDP(hull, 0.01 * peri, True).reshape(-1, 2))
                if quad is None:
                    continue
                if not min_area * area_img <= cv2.contourArea(quad) <= max_area * area_img:
                    continue
                sides = [float(np.hypot(*(quad[(k + 1) % 4] - quad[k]))) for k in range(4)]
                a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
                if max(a, b) / max(min(a, b), 1e-6) > ratio_card * 1.9:
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
                continue
            sides = [float(np.hypot(*(quad[(k + 1) % 4] - quad[k]))) for k in range(4)]
            a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
            r = max(a, b) / max(min(a, b), 1e-6)
            if not r <= ratio_card * 1.9:
                continue
            cands.append((cv2.contourArea(quad), (c, quad)))
    cands.sort(key=lambda x: -x[0])
    # refine the sides of the largest few only (the others are not looked at)
    cands = [(a, (_refine_quad(*cq) if isinstance(cq, tuple) else cq) / scale)
             for a, cq in cands[:3 * limit]]
    out: list[np.ndarray] = []
    for _, q in cands:
        centre = q.mean(axis=0)
        ang = np.arctan2(q[:, 1] - centre[1], q[:, 0] - centre[0])
        q = q[np.argsort(ang)]
        q = np.roll(q, -int(np.argmin(q[:, 1])), axis=0)
        if not any(np.abs(q - o).max() < 8 for o in out):
            out.append(q)
    return out[:limit]


def homographies_for_quad(quad: np.ndarray, geom: CardGeometry) -> list[np.ndarray]:
    """The 4 ways to lay the card's corners (mm) on a quadrilateral (px): one per rotation."""
    src = card_corners_mm(geom)
    out = []
    for k in range(4):
        dst = np.roll(quad, k, axis=0).astype(np.float32)
        out.append(cv2.getPerspectiveTransform(src, dst))
    return out


def marker_ids_of(layouts: Iterable[Any]) -> dict[int, str]:
    """Marker id -> layout name over several layouts (for :class:`WrongLayout`)."""
    out: dict[int, str] = {}
    for lay in layouts:
        g = geometry_of(lay)
        for m in g.markers:
            out.setdefault(m.id, g.name)
    return out
