"""Registering a printed sigil card design from a photo of a blank card.

``doomcompanion cards register PHOTO --layout LAYOUT.json --name NAME``:

1. the layout file (candle positions and numbers, boxes, in mm) is validated by the Doom Cat
   layout loader;
2. the card is found in the photo by the layout's ArUco markers when it has them and they are
   seen, else by its outline: the largest convex quadrilateral with the card's aspect ratio,
   its sides refitted as straight lines (so rounded corners do not pull the corners in), the
   orientation (which short side is the top) chosen by where the layout's boxes and candles
   show printed edges;
3. the card is rectified at ``px_per_mm`` and stored as ``reference.png``, the blank the sigil
   reader subtracts so that printed artwork is never read as ink; the layout (its ``name`` set
   to NAME) as ``layout.json``, and how it was found as ``reference.json``, all in
   ``registry_dir()/cards/NAME/``.

A photo without a card, a card too small to be useful or a layout that does not validate raises
:class:`companion.errors.BadInput` (exit 2 on the command line).

Convention: card geometry in mm, origin top-left of the card, x right, y down; image points
``(x, y)`` pixels, origin top-left; corners TL, TR, BR, BL of the card as printed; a homography
maps card mm to photo pixels.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from calibration.geometry import CardGeometry, card_geometry
from companion.doomcat.layouts import registry_dir
from companion.errors import BadInput
from vision.imageio import as_bgr, read_image

__all__ = ["CardNotFound", "FoundCard", "Registration", "find_card", "find_outline",
           "layout_match", "outline_candidates", "rectify", "register_card"]

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
BUILTIN = {"A", "B", "C", "D"}


class CardNotFound(BadInput):
    """No card of the layout's shape in the photo."""


@dataclass(frozen=True)
class FoundCard:
    """A card located in an image: ``homography`` (mm -> px), ``corners_px`` (TL, TR, BR, BL)
    and ``method`` (``"markers"`` or ``"outline"``)."""

    homography: np.ndarray
    corners_px: np.ndarray
    method: str
    markers_seen: int = 0


@dataclass(frozen=True)
class Registration:
    """What ``register_card`` stored."""

    folder: Path
    method: str
    corners_px: np.ndarray
    reference_shape: tuple[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "method": self.method,
                "corners_px": [[round(float(x), 2), round(float(y), 2)]
                               for x, y in self.corners_px],
                "reference_shape": list(self.reference_shape)}


# ------------------------------------------------------------------------------------ markers

def _corners_of(geom: CardGeometry, hom: np.ndarray) -> np.ndarray:
    w, h = geom.size_mm
    pts = np.array([[[0, 0]], [[w, 0]], [[w, h]], [[0, h]]], np.float64)
    return cv2.perspectiveTransform(pts, hom).reshape(4, 2)


def find_by_markers(image: np.ndarray, geom: CardGeometry) -> FoundCard | None:
    """The card's homography from the layout's ArUco markers seen in ``image`` (None if none)."""
    if not geom.markers:
        return None
    aruco = cv2.aruco
    dictionary = aruco.getPredefinedDictionary(getattr(aruco, geom.marker_dictionary))
    params = aruco.DetectorParameters()
    params.cornerRefinementMethod = aruco.CORNER_REFINE_SUBPIX
    corners, ids, _ = aruco.ArucoDetector(dictionary, params).detectMarkers(
        cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    if ids is None:
        return None
    by_id = {m.id: m for m in geom.markers}
    src, dst = [], []
    for quad, mid in zip(corners, ids.ravel(), strict=True):
        m = by_id.get(int(mid))
        if m is not None:
            src.append(m.corners())
            dst.append(quad.reshape(4, 2))
    if not src:
        return None
    src_a = np.concatenate(src).astype(np.float64)
    dst_a = np.concatenate(dst).astype(np.float64)
    hom, _ = cv2.findHomography(src_a, dst_a, 0)
    if hom is None:
        return None
    return FoundCard(hom, _corners_of(geom, hom), "markers", len(src))


# ------------------------------------------------------------------------------------ outline

def _order_clockwise(quad: np.ndarray) -> np.ndarray:
    c = quad.mean(0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    q = quad[np.argsort(ang)]          # clockwise in image coordinates (y down)
    start = int(np.argmin(q.sum(1)))
    return np.roll(q, -start, 0)


def _refine_sides(quad: np.ndarray, contour: np.ndarray) -> np.ndarray:
    """Refit each side of ``quad`` as a line through the contour points along its middle."""
    pts = contour.reshape(-1, 2).astype(np.float64)
    lines = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        d = q - p
        length = np.linalg.norm(d)
        if length < 1:
            return quad
        u = d / length
        rel = pts - p
        t = rel @ u
        dist = np.abs(rel @ np.array([-u[1], u[0]]))
        sel = pts[(t > 0.15 * length) & (t < 0.85 * length) & (dist < max(3.0, 0.03 * length))]
        if len(sel) < 5:
            return quad
        vx, vy, x0, y0 = cv2.fitLine(sel.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01
                                     ).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        a = np.array([d1, -d2]).T
        if abs(np.linalg.det(a)) < 1e-9:
            return quad
        s = np.linalg.solve(a, p2 - p1)
        out.append(p1 + s[0] * d1)
    refined = np.array(out)
    if np.abs(refined - quad).max() > 0.1 * np.linalg.norm(quad[2] - quad[0]):
        return quad
    return refined


def _grow(quad: np.ndarray, edges: np.ndarray, reach: float = 0.06) -> np.ndarray:
    """Move each side outwards onto the outermost parallel edge within ``reach`` of the short
    side (a printed frame inside the card's edge can look like the card's outline)."""
    h, w = edges.shape
    center = quad.mean(0)
    sides = [np.linalg.norm(quad[(i + 1) % 4] - quad[i]) for i in range(4)]
    maxd = max(2, int(reach * min(sides)))
    t = np.linspace(0.2, 0.8, 48)[:, None]
    lines = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        u = (q - p) / max(sides[i], 1e-9)
        n = np.array([-u[1], u[0]])
        if np.dot(n, (p + q) / 2 - center) < 0:
            n = -n
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


def _intersect_lines(lines: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray | None:
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        a = np.array([d1, -d2]).T
        if abs(np.linalg.det(a)) < 1e-9:
            return None
        s = np.linalg.solve(a, p2 - p1)
        out.append(p1 + s[0] * d1)
    return np.array(out)


def _snap(quad: np.ndarray, image: np.ndarray, reach: float = 0.02) -> np.ndarray:
    """Sub-pixel sides: along profiles across each side, the outermost strong step in colour
    (the card's edge against the table), a robust line through those points. ``image`` is
    float32, grey or BGR."""
    sides = [np.linalg.norm(quad[(i + 1) % 4] - quad[i]) for i in range(4)]
    r = max(4.0, reach * min(sides))
    steps = np.arange(-r, r + 0.25, 0.5, dtype=np.float32)
    center = quad.mean(0)
    lines = []
    for i in range(4):
        p, q = quad[i], quad[(i + 1) % 4]
        u = (q - p) / max(sides[i], 1e-9)
        n = np.array([-u[1], u[0]])
        if np.dot(n, (p + q) / 2 - center) < 0:
            n = -n
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
        vx, vy, x0, y0 = cv2.fitLine(np.array(pts, np.float32), cv2.DIST_HUBER, 0, 0.01,
                                     0.01).ravel()
        lines.append((np.array([x0, y0], np.float64), np.array([vx, vy], np.float64)))
    out = _intersect_lines(lines)
    if out is None or np.abs(out - quad).max() > 2 * r:
        return quad
    return out


def _aspect_ok(quad: np.ndarray, aspect: float, tolerance: float) -> bool:
    sides = [np.linalg.norm(quad[(i + 1) % 4] - quad[i]) for i in range(4)]
    a, b = (sides[0] + sides[2]) / 2, (sides[1] + sides[3]) / 2
    if min(a, b) < 1:
        return False
    ratio = min(a, b) / max(a, b)
    want = min(aspect, 1 / aspect)
    return abs(ratio - want) <= tolerance * want


def outline_candidates(image: np.ndarray, aspect: float, *, tolerance: float = 0.3,
                       min_area: float = 0.02, limit: int = 6) -> list[np.ndarray]:
    """Convex quadrilaterals with a card-like aspect ratio, largest first.

    Each is 4 corners (clockwise from the top-left-most, image pixels), its sides refitted as
    lines and moved out onto the outermost parallel edge. ``aspect`` is width/height of the
    card; ``tolerance`` the relative slack allowed on the ratio of the side lengths
    (perspective changes it); ``min_area`` the smallest share of the image the card may cover.
    """
    image = as_bgr(image)
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
            found.append((area, _refine_sides(quad, hull if binary is not edges else cnt)))
    found.sort(key=lambda f: -f[0])
    wide = cv2.dilate(thin, np.ones((5, 5), np.uint8))
    fine = cv2.GaussianBlur(image, (0, 0), 1.0).astype(np.float32)
    out: list[np.ndarray] = []
    for _, quad in found:
        grown = _snap(_grow(quad, wide), fine)
        if all(np.abs(grown - q).max() > 4 for q in out):
            out.append(grown)
        if len(out) >= limit:
            break
    return out


def find_outline(image: np.ndarray, aspect: float, *, tolerance: float = 0.3,
                 min_area: float = 0.02) -> np.ndarray | None:
    """The largest convex quadrilateral with a card-like aspect ratio, or None
    (see :func:`outline_candidates`)."""
    quads = outline_candidates(image, aspect, tolerance=tolerance, min_area=min_area, limit=1)
    return quads[0] if quads else None


def _edge_score(image: np.ndarray, geom: CardGeometry, hom: np.ndarray) -> float:
    """How strongly the layout's printed outlines (boxes, candles) show under ``hom``."""
    ppm = 4.0
    size = (round(geom.width * ppm), round(geom.height * ppm))
    rect = cv2.warpPerspective(image, np.linalg.inv(hom @ np.diag([1 / ppm, 1 / ppm, 1])),
                               size, flags=cv2.INTER_LINEAR)
    grey = cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    mask = np.zeros(grey.shape, np.uint8)
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
    size = (round(geom.width * ppm), round(geom.height * ppm))
    rect = cv2.warpPerspective(as_bgr(image), np.linalg.inv(hom @ np.diag([1 / ppm, 1 / ppm, 1])),
                               size, flags=cv2.INTER_LINEAR)
    grey = cv2.cvtColor(rect, cv2.COLOR_BGR2GRAY).astype(np.float32)
    mag = cv2.magnitude(cv2.Sobel(grey, cv2.CV_32F, 1, 0), cv2.Sobel(grey, cv2.CV_32F, 0, 1))
    on = np.zeros(grey.shape, np.uint8)
    around = np.zeros(grey.shape, np.uint8)
    centers = [(round(c.center[0] * ppm), round(c.center[1] * ppm)) for c in geom.candles]
    for c, ctr in zip(geom.candles, centers, strict=True):
        cv2.circle(around, ctr, round((c.radius + 3.5) * ppm), 1, -1)
    for c, ctr in zip(geom.candles, centers, strict=True):
        cv2.circle(around, ctr, round((c.radius + 1.5) * ppm), 0, -1)
        cv2.circle(on, ctr, round((c.radius + 0.5) * ppm), 1, -1)
    if not on.any() or not around.any():
        return 0.0
    return float(mag[on > 0].mean() / (mag[around > 0].mean() + 1e-6))


def find_by_outline(image: np.ndarray, geom: CardGeometry) -> FoundCard | None:
    """The card's homography from its outline (None if none).

    Among the card-shaped quadrilaterals and their two orientations (which short side is the
    top), the one where the layout's printed boxes and candle outlines show strongest wins.
    """
    w, h = geom.size_mm
    card = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    found = []
    for quad in outline_candidates(image, geom.aspect):
        sides = [np.linalg.norm(quad[(i + 1) % 4] - quad[i]) for i in range(4)]
        portrait_img = (sides[1] + sides[3]) >= (sides[0] + sides[2])
        # Start from a corner such that the image quad's long sides map to the card's long sides.
        starts = [0, 2] if portrait_img == (h >= w) else [1, 3]
        for s in starts:
            q = np.roll(quad, -s, 0).astype(np.float32)
            hom = cv2.getPerspectiveTransform(card, q)
            found.append((_edge_score(image, geom, hom), hom, q))
    if not found:
        return None
    _, hom, q = max(found, key=lambda f: f[0])
    return FoundCard(hom, q.astype(np.float64), "outline")


def find_card(image: np.ndarray, layout: Any) -> FoundCard:
    """Find the card: by markers when the layout has them and they are seen, else by outline.

    Raises
    ------
    CardNotFound
        When neither way finds the card.
    """
    geom = card_geometry(layout)
    image = as_bgr(image)
    found = find_by_markers(image, geom)
    if found is not None and found.markers_seen < 2:
        # One marker fixes the card only roughly: take the outline that agrees with it.
        w, h = geom.size_mm
        card = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
        tol = 0.06 * float(np.linalg.norm(found.corners_px[2] - found.corners_px[0]))
        for quad in outline_candidates(image, geom.aspect):
            for s in range(4):
                q = np.roll(quad, -s, 0)
                if np.abs(q - found.corners_px).max() < tol:
                    hom = cv2.getPerspectiveTransform(card, q.astype(np.float32))
                    return FoundCard(hom, q, "markers+outline", found.markers_seen)
    if found is None:
        found = find_by_outline(image, geom)
    if found is None:
        raise CardNotFound(
            "no card found: no marker of the layout and no card-shaped outline "
            f"(a {geom.width:g}x{geom.height:g} mm card, held flat, whole in view)")
    return found


def rectify(image: np.ndarray, found: FoundCard, geom: CardGeometry,
            px_per_mm: float = 8.0) -> np.ndarray:
    """The card straightened: ``round(h*ppm) x round(w*ppm)`` BGR, origin at the card's TL."""
    size = (round(geom.width * px_per_mm), round(geom.height * px_per_mm))
    m = np.linalg.inv(found.homography @ np.diag([1 / px_per_mm, 1 / px_per_mm, 1.0]))
    return cv2.warpPerspective(as_bgr(image), m, size, flags=cv2.INTER_CUBIC,
                               borderMode=cv2.BORDER_REPLICATE)


# ----------------------------------------------------------------------------------- register

def _validated_layout(path: str | Path) -> dict[str, Any]:
    from companion.datafiles import read_json

    path = Path(path)
    try:
        from companion.doomcat.layouts import load_layout
    except ImportError:  # pragma: no cover - until the Doom Cat catalogue is present
        load_layout = None
    if load_layout is not None:
        if not path.is_file():
            raise BadInput(f"{path}: no such layout file")
        load_layout(str(path))   # raises DataFileError naming file, path and rule
    doc = read_json(path)
    if not isinstance(doc, dict):
        raise BadInput(f"{path}: a layout file holds one JSON object")
    card_geometry(doc)
    return doc


def register_card(photo: str | Path | np.ndarray, layout_path: str | Path, name: str, *,
                  px_per_mm: float = 8.0, min_px_per_mm: float = 2.5, min_match: float = 2.5,
                  registry: str | Path | None = None) -> Registration:
    """Register a card design (see the module docstring).

    Parameters
    ----------
    photo
        Path of the photo of the blank card (or the image itself).
    layout_path
        The layout JSON file of the design.
    name
        Registry name (letters, digits, ``_ . -``; not one of the built-in letters A-D).
    px_per_mm
        Resolution of the stored reference.
    min_px_per_mm
        Refuse cards seen at a lower resolution than this (too far to be a useful reference).
    min_match
        Refuse when :func:`layout_match` is lower: the layout does not fit the card.
    registry
        The registry folder (default: ``registry_dir()`` of the layouts module).
    """
    if not NAME_RE.match(name or ""):
        raise BadInput(f"--name {name!r}: use letters, digits, '_', '.' or '-', "
                       "starting with a letter or digit")
    if name.upper() in BUILTIN:
        raise BadInput(f"--name {name!r}: the sigil letters A-D are built in; choose another name")
    doc = _validated_layout(layout_path)
    geom = card_geometry(doc)
    if isinstance(photo, np.ndarray):
        image, where = as_bgr(photo), "photo"
    else:
        image, where = read_image(photo), str(photo)
    try:
        found = find_card(image, geom)
    except CardNotFound as exc:
        raise CardNotFound(f"{where}: {exc}") from None
    match = layout_match(image, geom, found.homography)
    if match < min_match:
        raise BadInput(f"{where}: the card does not match {layout_path}: nothing is printed where "
                       f"the layout puts the candles (match {match:.1f}, at least {min_match:g} "
                       "needed); wrong layout file, or candle positions off by millimetres")
    seen = np.sqrt(cv2.contourArea(found.corners_px.astype(np.float32))
                   / (geom.width * geom.height))
    if seen < min_px_per_mm:
        raise BadInput(f"{where}: the card is too small in the photo ({seen:.1f} px per mm, "
                       f"at least {min_px_per_mm:g} needed): move the camera closer")
    reference = rectify(image, found, geom, px_per_mm)
    folder = Path(registry) if registry is not None else registry_dir()
    folder = folder / "cards" / name
    folder.mkdir(parents=True, exist_ok=True)
    stored = dict(doc)
    stored["name"] = name
    (folder / "layout.json").write_text(json.dumps(stored, indent=1) + "\n", encoding="utf-8")
    if not cv2.imwrite(str(folder / "reference.png"), reference):  # pragma: no cover
        raise BadInput(f"{folder / 'reference.png'}: cannot write")
    result = Registration(folder, found.method, found.corners_px, reference.shape[:2])
    meta = {**result.to_json(), "px_per_mm": px_per_mm, "photo": where,
            "layout_match": round(match, 2),
            "seen_px_per_mm": round(float(seen), 2)}
    (folder / "reference.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return result
