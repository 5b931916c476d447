"""Geometry and facts of a drawn sigil: intersections, enclosures, paths, quadrants, legality.

Lines are straight segments between candle centres (a line the layout marks "must curve" is
drawn with a slight curve round the candle in its way; it crosses the same lines as its chord,
so the chord stands for it). Everything that decides "do these cross", "are these concurrent",
"where is this crossing" or "is this point inside" uses exact rational arithmetic
(:class:`fractions.Fraction` of the layout's coordinates), so no rulebook case flips on float
noise. Areas, centroids and angles used only to order edges round a vertex are floats.

Python API
----------
- :func:`board` ``(layout) -> Board``: per-layout tables (exact centres, every chord pair's
  crossing point, the candles each chord passes through), cached.
- :class:`Drawing` ``(layout, lines, crossed=())``: the analysis of one set of lines, lazily
  computed: ``intersections``, ``n_enclosures`` (E - V + C), ``enclosures`` (face polygons with
  their stars and quadrants), ``used``/``unused``, ``components``, ``longest_path``, ...
- :func:`facts` ``(layout, state) -> Facts``: the frozen, JSON-able summary (DESIGN.md shape).
- :func:`line_problems` ``(layout, lines, crossed, new_line) -> list[str]``: why a new line
  would be illegal (empty when legal); :func:`violations` ``(layout, state)``: what is wrong in
  a finished or read state.
- :func:`quadrant`, :func:`halves`: where a point lies relative to the dividers.

Convention: millimetres on the card, origin top-left, x right, y down; points are ``(x, y)``.
Candles are layout indices 0-11; a line is a pair ``(a, b)`` with a < b. Quadrants are named
``"TL"``, ``"TR"``, ``"BL"``, ``"BR"``; halves ``"left"``, ``"right"``, ``"top"``, ``"bottom"``.
A point exactly on a divider counts on its right (x == vertical_x) or bottom (y ==
horizontal_y) side.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, cached_property
from itertools import combinations, pairwise
from typing import Any, NamedTuple

from companion.doomcat.layouts import Layout
from vision.readings import SigilState

QPoint = tuple[Fraction, Fraction]
Line = tuple[int, int]
QUADRANTS = ("TL", "TR", "BL", "BR")
HALVES = ("left", "right", "top", "bottom")


# ---------------------------------------------------------------- exact primitives

def _q(point: Sequence[float | Fraction]) -> QPoint:
    return (Fraction(point[0]), Fraction(point[1]))


def orientation(p: Sequence[Any], q: Sequence[Any], r: Sequence[Any]) -> int:
    """Sign of the turn p -> q -> r: +1, -1, or 0 when the three points are collinear (exact).

    Convention: points ``(x, y)`` in any consistent frame; floats are taken exactly.
    """
    px, py = _q(p)
    qx, qy = _q(q)
    rx, ry = _q(r)
    cross = (qx - px) * (ry - py) - (qy - py) * (rx - px)
    return (cross > 0) - (cross < 0)


def crossing_point(p1: Sequence[Any], p2: Sequence[Any], q1: Sequence[Any],
                   q2: Sequence[Any]) -> QPoint | None:
    """The point where segments p1-p2 and q1-q2 properly cross (inside both), else ``None``.

    Segments that only touch (an end on the other segment, a shared end) or overlap do not
    cross properly: see :func:`segments_meet` for those. Exact.

    Convention: points ``(x, y)``; the result is a pair of Fractions.
    """
    a, b, c, d = _q(p1), _q(p2), _q(q1), _q(q2)
    o1, o2 = orientation(a, b, c), orientation(a, b, d)
    o3, o4 = orientation(c, d, a), orientation(c, d, b)
    if o1 * o2 >= 0 or o3 * o4 >= 0:
        return None
    rx, ry = b[0] - a[0], b[1] - a[1]
    sx, sy = d[0] - c[0], d[1] - c[1]
    t = ((c[0] - a[0]) * sy - (c[1] - a[1]) * sx) / (rx * sy - ry * sx)
    return (a[0] + t * rx, a[1] + t * ry)


def point_on_segment(p: Sequence[Any], a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Whether ``p`` lies on the closed segment a-b (exact)."""
    p, a, b = _q(p), _q(a), _q(b)
    if orientation(a, b, p) != 0:
        return False
    return (min(a[0], b[0]) <= p[0] <= max(a[0], b[0])
            and min(a[1], b[1]) <= p[1] <= max(a[1], b[1]))


def segments_meet(p1: Sequence[Any], p2: Sequence[Any], q1: Sequence[Any],
                  q2: Sequence[Any]) -> bool:
    """Whether the closed segments share any point (crossing, touching or overlapping). Exact."""
    if crossing_point(p1, p2, q1, q2) is not None:
        return True
    return (point_on_segment(q1, p1, p2) or point_on_segment(q2, p1, p2)
            or point_on_segment(p1, q1, q2) or point_on_segment(p2, q1, q2))


def point_segment_distance(p: Sequence[float], a: Sequence[float], b: Sequence[float]) -> float:
    """Euclidean distance from ``p`` to the closed segment a-b (float)."""
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / length2))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def point_in_polygon(p: Sequence[Any], polygon: Sequence[Sequence[Any]]) -> bool:
    """Even-odd test: is ``p`` strictly inside ``polygon``? Points on the boundary are outside.

    Exact. ``polygon`` may repeat vertices (a dangling edge walked both ways cancels out).
    """
    px, py = _q(p)
    pts = [_q(v) for v in polygon]
    inside = False
    for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1], strict=True):
        if point_on_segment((px, py), (ax, ay), (bx, by)):
            return False
        if (ay > py) != (by > py):
            x = ax + (py - ay) * (bx - ax) / (by - ay)
            if px < x:
                inside = not inside
    return inside


def polygon_area(polygon: Sequence[Sequence[Any]]) -> float:
    """Signed shoelace area (positive when the vertices turn clockwise on the card, y down)."""
    pts = [(float(x), float(y)) for x, y in polygon]
    s = 0.0
    for (ax, ay), (bx, by) in zip(pts, pts[1:] + pts[:1], strict=True):
        s += ax * by - bx * ay
    return s / 2.0


def quadrant(point: Sequence[Any], layout: Layout) -> str:
    """``"TL"``, ``"TR"``, ``"BL"`` or ``"BR"`` of a point on the card.

    Convention: card mm, origin top-left, y down; on a divider counts right / bottom.
    """
    vx, hy = layout.dividers
    return QUADRANTS[(point[0] >= vx) + 2 * (point[1] >= hy)]


def halves(point: Sequence[Any], layout: Layout) -> tuple[str, str]:
    """The two halves a point lies in: (``"left"``/``"right"``, ``"top"``/``"bottom"``)."""
    vx, hy = layout.dividers
    return ("right" if point[0] >= vx else "left", "bottom" if point[1] >= hy else "top")


def _clip(polygon: list[tuple[float, float]], inside, cut) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for i, cur in enumerate(polygon):
        prev = polygon[i - 1]
        if inside(cur):
            if not inside(prev):
                out.append(cut(prev, cur))
            out.append(cur)
        elif inside(prev):
            out.append(cut(prev, cur))
    return out


def quadrant_areas(polygon: Sequence[Sequence[Any]], layout: Layout) -> dict[str, float]:
    """Area (mm^2) of the polygon inside each quadrant (Sutherland-Hodgman clipping, float)."""
    vx, hy = layout.dividers
    pts = [(float(x), float(y)) for x, y in polygon]

    def cut_x(p, q):
        t = (vx - p[0]) / (q[0] - p[0])
        return (vx, p[1] + t * (q[1] - p[1]))

    def cut_y(p, q):
        t = (hy - p[1]) / (q[1] - p[1])
        return (p[0] + t * (q[0] - p[0]), hy)

    xs = [x for x, _ in pts]
    ys = [y for _, y in pts]
    areas = {}
    for name in QUADRANTS:
        left, top = name[1] == "L", name[0] == "T"
        if (min(xs) >= vx if left else max(xs) <= vx) or (min(ys) >= hy if top else max(ys) <= hy):
            areas[name] = 0.0  # the polygon lies wholly on the other side of a divider
            continue
        if (max(xs) <= vx if left else min(xs) >= vx) and (max(ys) <= hy if top else min(ys) >= hy):
            areas[name] = abs(polygon_area(pts))  # wholly inside this quadrant
            continue
        part = _clip(pts, (lambda p: p[0] <= vx) if left else (lambda p: p[0] >= vx), cut_x)
        part = _clip(part, (lambda p: p[1] <= hy) if top else (lambda p: p[1] >= hy), cut_y)
        areas[name] = abs(polygon_area(part)) if len(part) >= 3 else 0.0
    return areas


# ---------------------------------------------------------------- per-layout tables

class Board:
    """Exact, precomputed geometry of one layout: chords, their crossings and clearances.

    Every proper crossing of two chords is interned as a point id (concurrent chords share
    one id); ``points[pid]`` is the exact point, ``fpoints[pid]`` its float copy, and
    ``rank[(line, pid)]`` orders the crossings along a chord from its lower candle (exact).
    """

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.centers: tuple[QPoint, ...] = tuple(_q(c.center) for c in layout.candles)
        self.fcenters: tuple[tuple[float, float], ...] = layout.centers
        f = self.fcenters
        n = len(self.centers)
        self.chords: tuple[Line, ...] = tuple(combinations(range(n), 2))
        self.must_curve = frozenset(layout.must_curve)
        self.points: list[QPoint] = []
        self.fpoints: list[tuple[float, float]] = []
        ids: dict[QPoint, int] = {}
        self._cross: dict[tuple[Line, Line], int] = {}
        on_chord: dict[Line, set[int]] = {line: set() for line in self.chords}
        # Exact integer coordinates: every centre times the common denominator ``scale``.
        scale = math.lcm(*(v.denominator for c in self.centers for v in c))
        ic = [(int(x * scale), int(y * scale)) for x, y in self.centers]
        self._scale = scale

        def turn(i: int, j: int, k: int) -> int:
            v = ((ic[j][0] - ic[i][0]) * (ic[k][1] - ic[i][1])
                 - (ic[j][1] - ic[i][1]) * (ic[k][0] - ic[i][0]))
            return (v > 0) - (v < 0)

        self._collinear = any(turn(*t) == 0 for t in combinations(range(n), 3))
        for l1, l2 in combinations(self.chords, 2):
            if l1[0] in l2 or l1[1] in l2:
                continue
            (a, b), (c, d) = l1, l2
            if turn(a, b, c) * turn(a, b, d) >= 0 or turn(c, d, a) * turn(c, d, b) >= 0:
                continue
            rx, ry = ic[b][0] - ic[a][0], ic[b][1] - ic[a][1]
            sx, sy = ic[d][0] - ic[c][0], ic[d][1] - ic[c][1]
            den = rx * sy - ry * sx
            num = (ic[c][0] - ic[a][0]) * sy - (ic[c][1] - ic[a][1]) * sx
            point = (Fraction(ic[a][0] * den + num * rx, den * scale),
                     Fraction(ic[a][1] * den + num * ry, den * scale))
            pid = ids.get(point)
            if pid is None:
                pid = ids[point] = len(self.points)
                self.points.append(point)
                self.fpoints.append((float(point[0]), float(point[1])))
            self._cross[(l1, l2)] = self._cross[(l2, l1)] = pid
            on_chord[l1].add(pid)
            on_chord[l2].add(pid)
        self.rank: dict[tuple[Line, int], int] = {}
        for (a, b), pids in on_chord.items():
            pa, pb = self.centers[a], self.centers[b]
            dx, dy = pb[0] - pa[0], pb[1] - pa[1]
            ordered = sorted(pids, key=lambda k, pa=pa, dx=dx, dy=dy: (
                (self.points[k][0] - pa[0]) * dx + (self.points[k][1] - pa[1]) * dy))
            for r, pid in enumerate(ordered):
                self.rank[((a, b), pid)] = r
        # Chord pairs that meet other than by a proper crossing or a shared end: only possible
        # when three candles are collinear (the loader refuses such layouts).
        self.touching: set[tuple[Line, Line]] = set()
        if self._collinear:
            for l1, l2 in combinations(self.chords, 2):
                p, q = self.centers[l1[0]], self.centers[l1[1]]
                r, t = self.centers[l2[0]], self.centers[l2[1]]
                shared = set(l1) & set(l2)
                if shared:
                    s = self.centers[shared.pop()]
                    u = self.centers[(set(l1) - set(l2)).pop()]
                    v = self.centers[(set(l2) - set(l1)).pop()]
                    meets = (orientation(s, u, v) == 0
                             and (u[0] - s[0]) * (v[0] - s[0]) + (u[1] - s[1]) * (v[1] - s[1]) > 0)
                else:
                    meets = (l1, l2) not in self._cross and segments_meet(p, q, r, t)
                if meets:
                    self.touching |= {(l1, l2), (l2, l1)}
        # stars at least 1e-3 mm off every chord (all shipped ones) can use float tests
        self.star_clear: tuple[bool, ...] = tuple(
            min((point_segment_distance(star, f[a], f[b]) for a, b in self.chords),
                default=1.0) > 1e-3 for star in layout.stars)
        self.point_quadrant: tuple[str, ...] = tuple(quadrant(p, layout) for p in self.points)
        self.through: dict[Line, tuple[int, ...]] = {}
        for a, b in self.chords:
            pa, pb = layout.candles[a].center, layout.candles[b].center
            self.through[(a, b)] = tuple(
                k for k, c in enumerate(layout.candles)
                if k not in (a, b) and point_segment_distance(c.center, pa, pb) < c.radius)

        # lookup tables for fast "which chords may be drawn now" questions
        self.point_chords: dict[int, frozenset[Line]] = {}
        for (l1, l2), pid in self._cross.items():
            self.point_chords[pid] = self.point_chords.get(pid, frozenset()) | {l1, l2}
        self.chords_at: dict[int, frozenset[Line]] = {
            c: frozenset(ch for ch in self.chords if c in ch) for c in range(n)}
        self.clear_chords: frozenset[Line] = frozenset(
            ch for ch in self.chords if ch in self.must_curve or not self.through[ch])
        numbers = [c.number for c in layout.candles]
        self.by_numbers: dict[tuple[int, int], frozenset[Line]] = {}
        for a, b in self.chords:
            key = (min(numbers[a], numbers[b]), max(numbers[a], numbers[b]))
            self.by_numbers[key] = self.by_numbers.get(key, frozenset()) | {(a, b)}
        self.with_number: dict[int, frozenset[Line]] = {
            x: frozenset(ch for ch in self.chords if x in (numbers[ch[0]], numbers[ch[1]]))
            for x in range(1, 7)}

    def cross_id(self, l1: Line, l2: Line) -> int | None:
        """Id of the exact crossing point of two chords (``None`` when they do not cross)."""
        return self._cross.get((l1, l2))

    def cross(self, l1: Line, l2: Line) -> QPoint | None:
        """Exact crossing point of two chords (``None`` when they do not cross properly)."""
        pid = self._cross.get((l1, l2))
        return None if pid is None else self.points[pid]


def board(layout: Layout) -> Board:
    """The :class:`Board` of a layout, built once and kept on the (immutable) layout object."""
    found = layout.__dict__.get("_board")
    if found is None:
        found = Board(layout)
        object.__setattr__(layout, "_board", found)
    return found


# ---------------------------------------------------------------- analysis of a drawing

@dataclass(frozen=True)
class Enclosure:
    """One bounded face of the drawing.

    ``polygon`` walks the face's outer boundary (card mm, y down; a dangling edge inside the
    face is walked both ways); ``area`` and ``centroid`` leave out its holes (separate pieces
    of the drawing inside it, which are enclosures of their own; ``candles``, ``corners`` and
    ``neighbors`` count the sides around them too); ``stars`` are the layout
    star indices inside; ``quadrants`` those the face covers (area > 0), ``quadrant`` the one
    holding its centroid.
    """

    polygon: tuple[tuple[float, float], ...]
    area: float
    centroid: tuple[float, float]
    quadrant: str
    quadrants: tuple[str, ...]
    stars: tuple[int, ...]
    candles: tuple[int, ...]
    corners: int = 0
    neighbors: tuple[int, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"polygon": [[round(x, 2), round(y, 2)] for x, y in self.polygon],
                "corners": self.corners, "neighbors": list(self.neighbors),
                "area": round(self.area, 2), "centroid": [round(v, 2) for v in self.centroid],
                "quadrant": self.quadrant, "quadrants": list(self.quadrants),
                "stars": list(self.stars), "candles": list(self.candles)}


def _vkey_sort(key: Any) -> tuple[int, int]:
    return (0, key) if isinstance(key, int) else (1, key[1])


def _ray_inside(poly: Sequence[tuple[float, float]], px: float, py: float) -> bool:
    inside = False
    ax, ay = poly[-1]
    for bx, by in poly:
        if (ay > py) != (by > py) and px < ax + (py - ay) * (bx - ax) / (by - ay):
            inside = not inside
        ax, ay = bx, by
    return inside


def _inside(fpoly: Sequence[tuple[float, float]], point: Sequence[float], exact) -> bool:
    """Float even-odd test; falls back to the exact test when the point is near the boundary."""
    px, py = float(point[0]), float(point[1])
    inside = False
    for (ax, ay), (bx, by) in zip(fpoly, (*fpoly[1:], fpoly[0]), strict=True):
        if point_segment_distance((px, py), (ax, ay), (bx, by)) < 1e-6:
            return point_in_polygon(point, exact())
        if (ay > py) != (by > py) and px < ax + (py - ay) * (bx - ax) / (by - ay):
            inside = not inside
    return inside


class _Face(NamedTuple):
    """A bounded face of a drawing (:attr:`Drawing._face_table`)."""

    walk: tuple[Any, ...]   # its outer boundary walk: candles and ("x", crossing id)
    area: float             # mm^2, its holes left out
    outline_area: float     # mm^2 inside its outer boundary
    holes: tuple[tuple[tuple[float, float], ...], ...]   # each hole's outline (mm)
    centroid: tuple[float, float]   # of its area (mm)
    hole_walks: tuple[tuple[Any, ...], ...]   # each hole's boundary walk


class Drawing:
    """Facts of a set of drawn lines on a layout, computed lazily and exactly.

    Convention: ``lines`` are candle index pairs (any order inside a pair); ``crossed`` candle
    indices. Vertices of the drawing are candles (ints) and crossing points (Fraction pairs).
    """

    def __init__(self, layout: Layout, lines: Iterable[Sequence[int]],
                 crossed: Iterable[int] = ()) -> None:
        self.layout = layout
        self.board = board(layout)
        self.lines: tuple[Line, ...] = tuple(sorted({(min(p), max(p)) for p in lines}))
        self.crossed: tuple[int, ...] = tuple(sorted(set(crossed)))

    # -- points where lines cross
    @cached_property
    def crossing_ids(self) -> dict[int, frozenset[Line]]:
        """Each distinct crossing point (a :class:`Board` point id) and the lines through it."""
        out: dict[int, set[Line]] = {}
        cross = self.board._cross
        for l1, l2 in combinations(self.lines, 2):
            pid = cross.get((l1, l2))
            if pid is not None:
                out.setdefault(pid, set()).update((l1, l2))
        return {p: frozenset(ls) for p, ls in out.items()}

    @cached_property
    def crossings(self) -> dict[QPoint, frozenset[Line]]:
        """Each distinct crossing point (exact) and the lines through it."""
        return {self.board.points[p]: ls for p, ls in self.crossing_ids.items()}

    @property
    def intersections(self) -> int:
        return len(self.crossing_ids)

    @cached_property
    def intersection_points(self) -> tuple[tuple[float, float], ...]:
        return tuple(sorted(self.board.fpoints[p] for p in self.crossing_ids))

    @cached_property
    def used(self) -> tuple[int, ...]:
        return tuple(sorted({c for line in self.lines for c in line}))

    @cached_property
    def unused(self) -> tuple[int, ...]:
        used = set(self.used)
        return tuple(i for i in range(len(self.layout.candles)) if i not in used)

    def degree(self, candle: int) -> int:
        return sum(candle in line for line in self.lines)

    # -- the planar graph
    @cached_property
    def _graph(self) -> tuple[dict[Any, list[Any]], int]:
        """Adjacency of the planar graph (lines split at crossings) and its edge count.

        Vertices are candle indices (ints) and crossing points (``("x", point id)``).
        """
        on_line: dict[Line, list[int]] = {line: [] for line in self.lines}
        for pid, lines in self.crossing_ids.items():
            for line in lines:
                on_line[line].append(pid)
        rank = self.board.rank
        adj: dict[Any, list[Any]] = {}
        edges = 0
        for (a, b), pids in on_line.items():
            pids.sort(key=lambda p, line=(a, b): rank[(line, p)])
            chain = [a, *(("x", p) for p in pids), b]
            for u, v in pairwise(chain):
                adj.setdefault(u, []).append(v)
                adj.setdefault(v, []).append(u)
                edges += 1
        return adj, edges

    def _xy(self, vertex: Any) -> QPoint:
        return self.board.centers[vertex] if isinstance(vertex, int) else \
            self.board.points[vertex[1]]

    def _fxy(self, vertex: Any) -> tuple[float, float]:
        return self.board.fcenters[vertex] if isinstance(vertex, int) else \
            self.board.fpoints[vertex[1]]

    @cached_property
    def _line_groups(self) -> list[list[Line]]:
        """Lines grouped into connected pieces: lines meeting at a candle or crossing."""
        parent = {line: line for line in self.lines}

        def find(x: Line) -> Line:
            while parent[x] != x:
                parent[x] = parent[parent[x]]
                x = parent[x]
            return x

        def join(group: Iterable[Line]) -> None:
            it = iter(group)
            root = find(next(it))
            for other in it:
                parent[find(other)] = root

        at: dict[int, list[Line]] = {}
        for line in self.lines:
            at.setdefault(line[0], []).append(line)
            at.setdefault(line[1], []).append(line)
        for lines in at.values():
            join(lines)
        for lines in self.crossing_ids.values():
            join(lines)
        groups: dict[Line, list[Line]] = {}
        for line in self.lines:
            groups.setdefault(find(line), []).append(line)
        return list(groups.values())

    @property
    def n_enclosures(self) -> int:
        """Bounded regions cut out by the lines: E - V + C of the planar graph.

        V = used candles + crossing points; E = each line split at the crossings on it;
        C = connected pieces.
        """
        vertices = len(self.used) + len(self.crossing_ids)
        edges = len(self.lines) + sum(len(lines) for lines in self.crossing_ids.values())
        return edges - vertices + len(self._line_groups)

    @cached_property
    def components(self) -> tuple[tuple[Line, ...], ...]:
        """Connected pieces of the drawing (lines meeting at candles or crossing), as lines."""
        return tuple(sorted(tuple(sorted(group)) for group in self._line_groups))

    @cached_property
    def _face_table(self) -> tuple[_Face, ...]:
        """The bounded faces (:class:`_Face`), in reading order (by centroid).

        A face's outline is its outer boundary walk; a separate piece of the drawing lying
        inside it (touching none of its lines) cuts a hole out of it: a face's ``holes`` are
        those pieces' outer boundaries and its ``area`` is the outline's area less theirs, so
        that the faces never overlap and their areas add up to the area the lines enclose.
        """
        adj, _ = self._graph
        if not adj or self.n_enclosures == 0:
            return ()
        fxy = {v: self._fxy(v) for v in adj}
        order: dict[Any, list[Any]] = {}
        for v, nbrs in adj.items():
            x, y = fxy[v]
            order[v] = sorted(nbrs, key=lambda w, x=x, y=y: math.atan2(fxy[w][1] - y,
                                                                       fxy[w][0] - x))
        position = {v: {w: i for i, w in enumerate(ws)} for v, ws in order.items()}
        # vertex -> its connected piece (the index of its group of lines)
        group = {line: g for g, lines in enumerate(self._line_groups) for line in lines}
        piece: dict[Any, int] = {v: group[line] for line in self.lines for v in line}
        piece.update({("x", pid): group[next(iter(lines))]
                      for pid, lines in self.crossing_ids.items()})
        visited: set[tuple[Any, Any]] = set()
        bounded: list[tuple[tuple[Any, ...], float, list[tuple[float, float]]]] = []
        outlines: list[tuple[tuple[Any, ...], float, list[tuple[float, float]]]] = []
        for u in sorted(adj, key=_vkey_sort):
            for v in order[u]:
                if (u, v) in visited:
                    continue
                cycle = []
                a, b = u, v
                while (a, b) not in visited:
                    visited.add((a, b))
                    cycle.append(a)
                    ws = order[b]
                    c = ws[(position[b][a] - 1) % len(ws)]
                    a, b = b, c
                poly = [fxy[w] for w in cycle]
                area = polygon_area(poly)
                if area > 1e-9:
                    bounded.append((tuple(cycle), area, poly))
                elif area < -1e-9:  # the outer boundary of a piece holding an enclosure
                    outlines.append((tuple(cycle), -area, poly))
        holes: list[list[tuple[tuple[Any, ...], float, list[tuple[float, float]]]]] = [
            [] for _ in bounded]
        for cycle, hole_area, poly in outlines:
            # the smallest face of another piece around this piece holds it; the pieces never
            # touch, so any vertex of the piece is strictly inside or outside a face's outline
            point = self._xy(cycle[0])
            around = [k for k, (fc, fa, fp) in enumerate(bounded)
                      if piece[fc[0]] != piece[cycle[0]]
                      and _inside(fp, point, lambda fc=fc: [self._xy(w) for w in fc])]
            if around:
                holes[min(around, key=lambda k: bounded[k][1])].append((cycle, hole_area, poly))
        table = []
        for (cycle, area, poly), inner in zip(bounded, holes, strict=True):
            cut = [(a, _centroid(h, -a)) for _, a, h in inner]   # (-a: its walk's signed area)
            net = area - sum(a for a, _ in cut)
            ox, oy = _centroid(poly, area)
            centroid = ((area * ox - sum(a * c[0] for a, c in cut)) / net,
                        (area * oy - sum(a * c[1] for a, c in cut)) / net)
            table.append(_Face(cycle, net, area, tuple(tuple(h) for _, _, h in inner), centroid,
                               tuple(c for c, _, _ in inner)))
        table.sort(key=lambda f: (f.centroid[1], f.centroid[0]))
        return tuple(table)

    @cached_property
    def faces(self) -> tuple[tuple[tuple[Any, ...], float], ...]:
        """The bounded faces as (boundary walk of vertices, area mm^2), in reading order.

        The walk follows the face's outer boundary (a dangling edge inside the face is walked
        both ways); vertices are candles (ints) and crossings (``("x", point id)``). The area
        leaves out the holes: separate pieces of the drawing lying inside the face.
        """
        return tuple((f.walk, f.area) for f in self._face_table)

    @cached_property
    def face_centroids(self) -> tuple[tuple[float, float], ...]:
        """The centroid of each face's area (its outline less its holes)."""
        return tuple(f.centroid for f in self._face_table)

    def face_polygon(self, k: int) -> tuple[tuple[float, float], ...]:
        """The outline of face ``k`` (its outer boundary walk; holes are not in it)."""
        return tuple(self._fxy(w) for w in self.faces[k][0])

    @cached_property
    def star_faces(self) -> dict[int, int]:
        """Star index -> the face holding it (the face with the smallest outline around it:
        a star in a hole lies in the face filling the hole, not in the one around it)."""
        out: dict[int, int] = {}
        if not self.faces:
            return out
        bd = self.board
        table = self._face_table
        polys = [self.face_polygon(k) for k in range(len(self.faces))]
        boxes = [(min(x for x, _ in p), min(y for _, y in p), max(x for x, _ in p),
                  max(y for _, y in p)) for p in polys]
        for s, star in enumerate(self.layout.stars):
            sx, sy = star
            best = None
            for k, face in enumerate(table):
                if best is not None and face.outline_area >= table[best].outline_area:
                    continue
                x0, y0, x1, y1 = boxes[k]
                if not (x0 < sx < x1 and y0 < sy < y1):
                    continue
                if bd.star_clear[s]:  # off every chord: the float ray test is exact enough
                    inside = _ray_inside(polys[k], sx, sy)
                else:
                    inside = point_in_polygon(star, [self._xy(w) for w in face.walk])
                if inside:
                    best = k
            if best is not None:
                out[s] = best
        return out

    @cached_property
    def face_corners(self) -> tuple[int, ...]:
        """Corners of each face: where its boundary turns, around the outline and around
        each hole (a ring around a separate triangle has six)."""
        return tuple(self._corners(list(f.walk))
                     + sum(self._corners(list(h)) for h in f.hole_walks)
                     for f in self._face_table)

    @cached_property
    def face_neighbors(self) -> tuple[tuple[int, ...], ...]:
        """For each face, the faces sharing a side (an edge) with it; the sides around a
        face's holes are its sides too."""
        edges = [{frozenset((c[i], c[i - 1])) for c in (f.walk, *f.hole_walks)
                  for i in range(len(c))} for f in self._face_table]
        return tuple(tuple(j for j in range(len(edges)) if j != k and edges[k] & edges[j])
                     for k in range(len(edges)))

    @cached_property
    def face_quadrants(self) -> tuple[tuple[str, ...], ...]:
        """For each face, the quadrants it covers (area > 0; a hole covers none of it)."""
        out = []
        for k, face in enumerate(self._face_table):
            qa = quadrant_areas(self.face_polygon(k), self.layout)
            for hole in face.holes:
                for q, a in quadrant_areas(hole, self.layout).items():
                    qa[q] -= a
            out.append(tuple(q for q in QUADRANTS if qa[q] > 1e-6))
        return tuple(out)

    @cached_property
    def enclosures(self) -> tuple[Enclosure, ...]:
        """The bounded faces, each with its polygon, stars, quadrants, corners, neighbours."""
        out = []
        for k, (cycle, area) in enumerate(self.faces):
            poly = self.face_polygon(k)
            cx, cy = self.face_centroids[k]
            around = (*cycle, *(w for hole in self._face_table[k].hole_walks for w in hole))
            out.append(Enclosure(
                polygon=poly, area=area, centroid=(cx, cy),
                quadrant=quadrant((cx, cy), self.layout),
                quadrants=self.face_quadrants[k],
                stars=tuple(sorted(s for s, f in self.star_faces.items() if f == k)),
                candles=tuple(sorted({w for w in around if isinstance(w, int)})),
                corners=self.face_corners[k], neighbors=self.face_neighbors[k]))
        return tuple(out)

    def _corners(self, cycle: list[Any]) -> int:
        """Corners of a face boundary: vertices where it turns (spikes removed first). Exact."""
        walk = list(cycle)
        changed = True
        while changed and len(walk) > 2:
            changed = False
            n = len(walk)
            for i in range(n):
                if walk[(i - 1) % n] == walk[(i + 1) % n]:  # walk[i] is the tip of a spike
                    for j in sorted((i, (i + 1) % n), reverse=True):
                        del walk[j]
                    changed = True
                    break
        count = 0
        n = len(walk)
        for i in range(n):
            p, q, r = walk[i - 1], walk[i], walk[(i + 1) % n]
            if isinstance(q, int):
                count += 1  # a candle on the boundary: lines meet there at a corner
                continue
            # a crossing is a corner unless the walk goes straight through it (one line)
            pf, qf, rf = self._fxy(p), self._fxy(q), self._fxy(r)
            turn = ((qf[0] - pf[0]) * (rf[1] - pf[1]) - (qf[1] - pf[1]) * (rf[0] - pf[0]))
            if abs(turn) > 1e-6 or orientation(self._xy(p), self._xy(q), self._xy(r)) != 0:
                count += 1
        return count

    @cached_property
    def stars_enclosed(self) -> tuple[int, ...]:
        return tuple(sorted(self.star_faces))

    # -- paths along lines, candle to candle
    @cached_property
    def longest_path(self) -> tuple[int, ...]:
        """The longest chain of lines joined end to end at candles, no candle twice.

        Returned as the candle sequence (``len - 1`` lines); ``()`` with no lines.
        """
        return longest_simple_path(self.lines)

    @property
    def longest_path_lines(self) -> int:
        return max(0, len(self.longest_path) - 1)

    @cached_property
    def line_lengths(self) -> dict[Line, float]:
        c = self.layout.centers
        return {(a, b): math.dist(c[a], c[b]) for a, b in self.lines}

    # -- where things are
    def candle_quadrant(self, candle: int) -> str:
        return quadrant(self.layout.candles[candle].center, self.layout)

    @cached_property
    def intersection_quadrants(self) -> tuple[str, ...]:
        return tuple(quadrant(p, self.layout) for p in self.intersection_points)

    def facts(self) -> Facts:
        lay = self.layout
        return Facts(
            lines=self.lines,
            intersections=self.intersections,
            enclosures=self.n_enclosures,
            used=self.used,
            unused=self.unused,
            crossed=self.crossed,
            intersection_points=self.intersection_points,
            enclosure_list=self.enclosures,
            candle_quadrants=tuple(self.candle_quadrant(i) for i in range(len(lay.candles))),
            star_quadrants=tuple(quadrant(s, lay) for s in lay.stars),
            intersection_quadrants=self.intersection_quadrants,
            stars_enclosed=self.stars_enclosed,
            components=self.components,
            longest_path=self.longest_path,
        )


def _neighbours(lines: Iterable[Sequence[int]]) -> dict[int, list[int]]:
    nbrs: dict[int, list[int]] = {}
    for a, b in lines:
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    return nbrs


# The longest path and loop are found by a programme over (candles visited as a bitmask, end
# candle): at most 2**12 * 12 states on a card, where walking every path takes minutes once a
# card holds a few dozen lines.

def longest_simple_path(lines: Iterable[Sequence[int]]) -> tuple[int, ...]:
    """The longest path along ``lines`` (pairs of candles), no candle twice.

    Among the longest, the first one a depth-first walk meets (starts in increasing order,
    neighbours in the order of ``lines``), with its lower end first; ``()`` with no lines.

    >>> longest_simple_path([(0, 1), (1, 2), (1, 3), (3, 4)])
    (0, 1, 3, 4)
    """
    nbrs = _neighbours(lines)

    @cache
    def reach(seen: int, end: int) -> int:
        """Most lines a path can still add from ``end`` avoiding the candles in ``seen``."""
        return max((1 + reach(seen | 1 << w, w) for w in nbrs[end] if not seen >> w & 1),
                   default=0)

    if not nbrs:
        return ()
    start = max(sorted(nbrs), key=lambda v: reach(1 << v, v))  # max keeps the first best
    path, seen = [start], 1 << start
    while left := reach(seen, path[-1]):
        step = next(w for w in nbrs[path[-1]]
                    if not seen >> w & 1 and reach(seen | 1 << w, w) == left - 1)
        path.append(step)
        seen |= 1 << step
    return tuple(path) if path[0] < path[-1] else tuple(path[::-1])


def longest_simple_loop(lines: Iterable[Sequence[int]]) -> int:
    """Lines in the longest closed loop along ``lines``, no candle twice (0 when none).

    >>> longest_simple_loop([(0, 1), (1, 2), (0, 2), (2, 3), (3, 4), (0, 4)])
    5
    """
    nbrs = _neighbours(lines)
    closed = -len(nbrs) - 1  # below any loop: "no way back to the start"

    @cache
    def back(seen: int, end: int) -> int:
        """Most lines from ``end`` back to the loop's start, the lowest candle of ``seen``,
        through candles above it not in ``seen``."""
        start = (seen & -seen).bit_length() - 1
        best = 1 if start in nbrs[end] and seen.bit_count() >= 3 else closed
        for w in nbrs[end]:
            if w > start and not seen >> w & 1:
                best = max(best, 1 + back(seen | 1 << w, w))
        return best

    return max([back(1 << v, v) for v in nbrs] + [0])


def _centroid(poly: Sequence[tuple[float, float]], area: float) -> tuple[float, float]:
    if abs(area) < 1e-12:
        xs, ys = zip(*poly, strict=True)
        return (sum(xs) / len(xs), sum(ys) / len(ys))
    cx = cy = 0.0
    for (ax, ay), (bx, by) in zip(poly, (*poly[1:], poly[0]), strict=True):
        f = ax * by - bx * ay
        cx += (ax + bx) * f
        cy += (ay + by) * f
    return (cx / (6 * area), cy / (6 * area))


@dataclass(frozen=True)
class Facts:
    """The facts of one sigil (DESIGN.md's ``facts`` object, with more keys)."""

    lines: tuple[Line, ...]
    intersections: int
    enclosures: int
    used: tuple[int, ...]
    unused: tuple[int, ...]
    crossed: tuple[int, ...]
    intersection_points: tuple[tuple[float, float], ...]
    enclosure_list: tuple[Enclosure, ...]
    candle_quadrants: tuple[str, ...]
    star_quadrants: tuple[str, ...]
    intersection_quadrants: tuple[str, ...]
    stars_enclosed: tuple[int, ...]
    components: tuple[tuple[Line, ...], ...]
    longest_path: tuple[int, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "intersections": self.intersections,
            "enclosures": self.enclosures,
            "used": list(self.used),
            "unused": list(self.unused),
            "crossed": list(self.crossed),
            "lines": [list(x) for x in self.lines],
            "intersection_points": [[round(x, 2), round(y, 2)]
                                    for x, y in self.intersection_points],
            "enclosure_faces": [e.to_json() for e in self.enclosure_list],
            "candle_quadrants": list(self.candle_quadrants),
            "star_quadrants": list(self.star_quadrants),
            "intersection_quadrants": list(self.intersection_quadrants),
            "stars_enclosed": list(self.stars_enclosed),
            "components": [[list(x) for x in comp] for comp in self.components],
            "longest_path": list(self.longest_path),
        }


def facts(layout: Layout, state: SigilState) -> Facts:
    """Facts of a sigil state drawn on ``layout`` (the state's own layout name is not read)."""
    return Drawing(layout, state.lines, state.crossed).facts()


# ---------------------------------------------------------------- legality of lines

def line_problems(layout: Layout, lines: Iterable[Sequence[int]], crossed: Iterable[int],
                  new_line: Sequence[int]) -> list[str]:
    """Why drawing ``new_line`` next to ``lines`` would break a line rule; ``[]`` when legal.

    Checks, in order, each message quoting the rulebook: two different candles in range; one
    line per candle pair; no crossed-out candle; not through another candle (unless the layout
    marks the pair "must curve"); not through an existing intersection; not crossing a line
    that shares one of its candles ("Direct"); not crossing any line twice ("No recrossing").
    The last two cannot happen with straight chords when no three candles are collinear (the
    layout loader refuses such layouts); they stay as guards.
    """
    n = len(layout.candles)
    a, b = (int(new_line[0]), int(new_line[1]))
    if not (0 <= a < n and 0 <= b < n):
        return [f"line {a}-{b}: candles are numbered 0-{n - 1}"]
    if a == b:
        return [f"line {a}-{b}: a line joins two different candles"]
    a, b = min(a, b), max(a, b)
    new = (a, b)
    drawn = Drawing(layout, lines, crossed)
    problems = []
    if new in drawn.lines:
        problems.append(f"line {a}-{b} is already drawn (One per candle pair: only one line "
                        "between any pair of candles)")
    for c in (a, b):
        if c in drawn.crossed:
            problems.append(f"line {a}-{b} uses crossed-out candle {c} (Usable: you cannot use "
                            "a candle after it is crossed out)")
    bd = drawn.board
    if new not in bd.must_curve:
        for k in bd.through[new]:
            problems.append(f"line {a}-{b} passes through candle {k} (Middles: never draw "
                            "lines through other candles)")
    existing = drawn.crossing_ids
    for line in drawn.lines:
        pid = bd.cross_id(new, line)
        if pid is not None and pid in existing:
            others = "+".join(f"{x}-{y}" for x, y in sorted(existing[pid]))
            problems.append(f"line {a}-{b} passes through the intersection of lines {others} "
                            "(Middles: never draw lines through line intersections)")
            break
    for line in drawn.lines:
        if line == new or (new, line) not in bd.touching:
            continue
        if set(line) & {a, b}:
            problems.append(f"line {a}-{b} runs along line {line[0]}-{line[1]} which shares a "
                            "candle (Direct: lines using the same candle cannot intersect)")
        else:
            problems.append(f"line {a}-{b} touches line {line[0]}-{line[1]} along its length "
                            "(No recrossing: two lines may never intersect each other more "
                            "than once)")
    return problems


def violations(layout: Layout, state: SigilState, write_limit: int = 2,
               extra_lines: int = 0) -> list[str]:
    """Rule breaches visible in a state (read from a photo or typed in), one message each.

    Lines are checked as if drawn in index order; breaches that depend on the order of play
    (a line to a candle crossed out later) cannot be told from a final state and are not
    reported. Also checks the top boxes (no number more than ``write_limit`` times: twice, or
    three times for the Rat's player; the second write and any after it circled) and that
    crossed candles match the numbers written on top. A card holds one line per turn and one
    tie-break line, plus ``extra_lines`` (1 for the Raven's player, F02: "draw one extra
    line").
    """
    out: list[str] = []
    bd = board(layout)
    drawn: list[Line] = []
    for line in state.lines:
        if line not in bd.must_curve:
            out += [f"line {line[0]}-{line[1]} passes through candle {k}"
                    for k in bd.through[line]]
        crossings = Drawing(layout, drawn).crossing_ids
        for other in drawn:
            pid = bd.cross_id(line, other)
            if pid is not None and pid in crossings:
                lines = "+".join(f"{x}-{y}" for x, y in sorted(crossings[pid]))
                out.append(f"line {line[0]}-{line[1]} passes through the intersection of "
                           f"lines {lines}")
                break
        drawn.append(line)
    written = [box for box in state.top if box is not None]
    counts: dict[int, int] = {}
    for k, box in enumerate(state.top):
        if box is None:
            continue
        counts[box.value] = counts.get(box.value, 0) + 1
        if counts[box.value] > write_limit:
            out.append(f"top {k}: {box.value} is written more than "
                       f"{'twice' if write_limit == 2 else f'{write_limit} times'} (Two of each)")
        elif counts[box.value] >= 2 and not box.circled:
            out.append(f"top {k}: the second {box.value} must be circled (Wild Numbers)")
        elif counts[box.value] == 1 and box.circled:
            out.append(f"top {k}: only the second {box.value} is circled (Wild Numbers)")
    if any(later is not None for k, box in enumerate(state.top) if box is None
           for later in state.top[k + 1:]):
        out.append("top: numbers are written in the leftmost empty box (a gap is left)")
    crossed_numbers = sorted(layout.candles[c].number for c in state.crossed)
    if len(state.crossed) > len(written):
        out.append(f"{len(state.crossed)} candles are crossed out but only {len(written)} "
                   "numbers are written on top (one candle per turn)")
    else:
        missing = list(crossed_numbers)
        for box in written:
            if box.value in missing:
                missing.remove(box.value)
        for number in sorted(set(missing)):
            out.append(f"a candle numbered {number} is crossed out but {number} is not written "
                       "on top that often (the crossed candle matches the written number)")
    if len(state.lines) > len(written) + 1 + extra_lines:
        out.append(f"{len(state.lines)} lines are drawn but only {len(written)} turns are "
                   "written on top (one line per turn, one more to break a tie"
                   + (", one for the Raven" if extra_lines else "") + ")")
    return out
