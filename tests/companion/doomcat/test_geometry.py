from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.doomcat.geometry import (
    Drawing,
    board,
    crossing_point,
    facts,
    halves,
    line_problems,
    longest_simple_loop,
    longest_simple_path,
    orientation,
    point_in_polygon,
    point_on_segment,
    polygon_area,
    quadrant,
    segments_meet,
    violations,
)
from companion.doomcat.layouts import LAYOUTS_DIR, Candle, Layout, load_layout
from vision.readings import SigilState, TopBox

LETTERS = ("A", "B", "C", "D")
CHORDS = list(combinations(range(12), 2))


@pytest.mark.parametrize(("p", "q", "r", "expected"), [
    ((0, 0), (1, 0), (0, 1), 1), ((0, 0), (1, 0), (0, -1), -1), ((0, 0), (1, 1), (3, 3), 0),
    ((0.1, 0.2), (0.3, 0.6), (0.5, 1.0), 0),  # exact: floats 0.1 etc. taken as they are
    ((0, 0), (Fraction(1, 3), 1), (1, 3), 0),
])
def test_orientation(p, q, r, expected):
    assert orientation(p, q, r) == expected


@pytest.mark.parametrize(("segs", "expected"), [
    (((0, 0), (2, 2), (0, 2), (2, 0)), (1, 1)),
    (((0, 0), (2, 2), (0, 2), (1, 1)), None),      # touches at an end: not a crossing
    (((0, 0), (2, 2), (2, 2), (3, 0)), None),      # shared end
    (((0, 0), (2, 0), (0, 1), (2, 1)), None),      # parallel
    (((0, 0), (3, 0), (1, 0), (2, 0)), None),      # overlapping
    (((0, 0), (1, 3), (1, 0), (0, 1)), (Fraction(1, 4), Fraction(3, 4))),
])
def test_crossing_point_is_exact(segs, expected):
    point = crossing_point(*segs)
    assert point == (None if expected is None else tuple(Fraction(v) for v in expected))


def test_segments_meet_and_point_on_segment():
    assert segments_meet((0, 0), (2, 2), (0, 2), (1, 1))
    assert segments_meet((0, 0), (3, 0), (1, 0), (2, 0))
    assert not segments_meet((0, 0), (2, 0), (0, 1), (2, 1))
    assert point_on_segment((1, 1), (0, 0), (2, 2))
    assert not point_on_segment((3, 3), (0, 0), (2, 2))


@pytest.mark.parametrize(("point", "inside"), [
    ((1, 1), True), ((3, 1), False), ((0, 1), False), ((2, 2), False), ((1.999, 1.999), True),
])
def test_point_in_polygon(point, inside):
    assert point_in_polygon(point, [(0, 0), (2, 0), (2, 2), (0, 2)]) is inside


@pytest.mark.parametrize(("point", "q", "h"), [
    ((10, 10), "TL", ("left", "top")), ((50, 10), "TR", ("right", "top")),
    ((10, 70), "BL", ("left", "bottom")), ((50, 70), "BR", ("right", "bottom")),
    ((44, 62), "BR", ("right", "bottom")),  # on the dividers: right and bottom
])
def test_quadrants_and_halves(point, q, h):
    layout = load_layout("A")
    assert quadrant(point, layout) == q
    assert halves(point, layout) == h


# Ring layout B: candles 0, 3, 6, 9 sit roughly at the four compass points of the ring.
@pytest.mark.parametrize(("lines", "intersections", "enclosures", "path", "stars"), [
    ([], 0, 0, 0, []),
    ([(0, 1)], 0, 0, 1, []),
    ([(0, 1), (1, 2), (0, 2)], 0, 1, 2, []),
    ([(0, 6), (3, 9)], 1, 0, 1, []),
    ([(0, 6), (3, 9), (0, 3), (6, 9)], 1, 2, 3, [1, 2]),
    ([(0, 6), (3, 9), (0, 3), (6, 9), (0, 9), (3, 6)], 1, 4, 3, [0, 1, 2, 3]),
    ([(0, 1), (1, 2), (0, 2), (6, 7), (7, 8), (6, 8)], 0, 2, 2, []),
    ([(0, 4), (2, 6), (1, 5)], 3, 1, 1, []),
])
def test_ring_cases(lines, intersections, enclosures, path, stars):
    drawing = Drawing(load_layout("B"), lines)
    assert drawing.intersections == intersections
    assert drawing.n_enclosures == enclosures == len(drawing.enclosures)
    assert drawing.longest_path_lines == path
    assert list(drawing.stars_enclosed) == stars


def test_facts_shape_of_the_design():
    layout = load_layout("B")
    state = SigilState.of("B", lines=[(0, 6), (3, 9), (0, 3), (6, 9)], crossed=[1, 7])
    doc = facts(layout, state).to_json()
    assert doc["intersections"] == 1 and doc["enclosures"] == 2
    assert doc["used"] == [0, 3, 6, 9] and doc["crossed"] == [1, 7]
    assert doc["unused"] == [1, 2, 4, 5, 7, 8, 10, 11]
    assert len(doc["enclosure_faces"]) == 2
    assert doc["candle_quadrants"][0] == "TR" and doc["candle_quadrants"][6] == "BL"
    json.dumps(doc)


line_sets = st.lists(st.sampled_from(CHORDS), max_size=10, unique=True)


@settings(max_examples=60, deadline=None)
@given(letter=st.sampled_from(LETTERS), lines=line_sets)
def test_face_walk_agrees_with_euler(letter, lines):
    layout = load_layout(letter)
    drawing = Drawing(layout, lines)
    assert len(drawing.enclosures) == drawing.n_enclosures >= 0
    for enclosure in drawing.enclosures:
        for s in enclosure.stars:
            assert point_in_polygon(layout.stars[s], enclosure.polygon)
    assert len(set(drawing.stars_enclosed)) == len(drawing.stars_enclosed)


@settings(max_examples=40, deadline=None)
@given(letter=st.sampled_from(LETTERS), lines=line_sets, extra=st.sampled_from(CHORDS))
def test_adding_a_line_never_removes_an_enclosure(letter, lines, extra):
    layout = load_layout(letter)
    before = Drawing(layout, lines)
    after = Drawing(layout, [*lines, extra])
    assert after.n_enclosures >= before.n_enclosures
    assert after.intersections >= before.intersections


def _relabelled(layout: Layout, perm: list[int]) -> Layout:
    # new index perm[i] holds old candle i
    candles = [None] * 12
    for old, new in enumerate(perm):
        candles[new] = layout.candles[old]
    must = tuple(sorted(tuple(sorted((perm[a], perm[b]))) for a, b in layout.must_curve))
    return dataclasses.replace(layout, candles=tuple(candles), must_curve=must)


def _mirrored(layout: Layout) -> Layout:
    w = layout.size_mm[0]
    return dataclasses.replace(
        layout,
        candles=tuple(Candle(c.number, (w - c.center[0], c.center[1]), c.radius)
                      for c in layout.candles),
        stars=tuple((w - x, y) for x, y in layout.stars),
        dividers=(w - layout.dividers[0], layout.dividers[1]))


def _summary(drawing: Drawing) -> tuple:
    return (drawing.intersections, drawing.n_enclosures, drawing.longest_path_lines,
            sorted(round(e.area, 6) for e in drawing.enclosures), len(drawing.stars_enclosed),
            len(drawing.components))


@settings(max_examples=30, deadline=None)
@given(letter=st.sampled_from(LETTERS), lines=line_sets, perm=st.permutations(range(12)))
def test_counts_are_invariant_under_relabelling(letter, lines, perm):
    layout = load_layout(letter)
    moved = _relabelled(layout, list(perm))
    moved_lines = [(perm[a], perm[b]) for a, b in lines]
    assert _summary(Drawing(layout, lines)) == _summary(Drawing(moved, moved_lines))


@settings(max_examples=30, deadline=None)
@given(letter=st.sampled_from(LETTERS), lines=line_sets)
def test_counts_are_invariant_under_mirroring(letter, lines):
    layout = load_layout(letter)
    mirror = _mirrored(layout)
    a, b = Drawing(layout, lines), Drawing(mirror, lines)
    assert _summary(a) == _summary(b)
    flip = {"TL": "TR", "TR": "TL", "BL": "BR", "BR": "BL"}
    assert [flip[q] for q in (a.candle_quadrant(i) for i in range(12))] == \
        [b.candle_quadrant(i) for i in range(12)]


def test_longest_path_follows_lines_candle_to_candle():
    drawing = Drawing(load_layout("B"), [(0, 1), (1, 2), (2, 3), (3, 4), (1, 7), (9, 10)])
    assert drawing.longest_path == (0, 1, 2, 3, 4)
    assert len(drawing.components) == 2


def _every_path(lines):
    """Reference: walk every simple path (exponential), in the order the answer promises."""
    nbrs = {}
    for a, b in lines:
        nbrs.setdefault(a, []).append(b)
        nbrs.setdefault(b, []).append(a)
    paths = []

    def walk(path):
        paths.append(tuple(path))
        for w in nbrs[path[-1]]:
            if w not in path:
                walk([*path, w])

    for start in sorted(nbrs):
        walk([start])
    return paths


small_graphs = st.lists(st.sampled_from(list(combinations(range(7), 2))), max_size=14,
                        unique=True)


@settings(max_examples=200, deadline=None)
@given(lines=small_graphs)
def test_longest_path_and_loop_agree_with_walking_every_path(lines):
    paths = _every_path(lines)
    longest = max(paths, key=len, default=())  # max keeps the first of the longest
    assert longest_simple_path(lines) == min(longest, longest[::-1])
    loops = [len(p) for p in paths if len(p) >= 3 and tuple(sorted((p[0], p[-1]))) in lines]
    assert longest_simple_loop(lines) == max(loops, default=0)


def test_longest_path_and_loop_of_a_full_card():
    # every one of the 66 lines: walking every path took minutes here
    drawing = Drawing(load_layout("B"), CHORDS)
    assert drawing.longest_path == tuple(range(12))
    assert longest_simple_loop(CHORDS) == 12


# ------------------------------------------------------------------ line legality

def _concurrent_layout(tmp_path) -> Layout:
    """Chords 0-1, 2-3 and 4-5 all pass through (40, 60): an exact triple point."""
    doc = json.loads((LAYOUTS_DIR / "A.json").read_text())
    centers = [(20, 30), (60, 90), (60, 30), (20, 90), (30, 20), (50, 100),
               (12, 50), (76, 48), (10, 75), (78, 77), (28, 106), (67, 21)]
    for candle, center in zip(doc["candles"], centers, strict=True):
        candle["center"] = list(center)
    doc["must_curve"] = []
    path = tmp_path / "concurrent.json"
    path.write_text(json.dumps(doc))
    return load_layout(str(path))


def test_a_line_may_not_pass_through_an_existing_intersection(tmp_path):
    layout = _concurrent_layout(tmp_path)
    assert line_problems(layout, [(0, 1)], [], (4, 5)) == []  # one line there: no intersection
    problems = line_problems(layout, [(0, 1), (2, 3)], [], (4, 5))
    assert problems and "through the intersection of lines 0-1+2-3" in problems[0]


@pytest.mark.parametrize(("lines", "crossed", "new", "expected"), [
    ([], [], (0, 6), None),
    ([(0, 6)], [], (6, 0), "already drawn"),
    ([], [6], (0, 6), "crossed-out candle 6"),
    ([(0, 6)], [0], (0, 3), "crossed-out candle 0"),
    ([], [], (0, 12), "numbered 0-11"),
    ([], [], (4, 4), "two different candles"),
])
def test_line_problems_table(lines, crossed, new, expected):
    problems = line_problems(load_layout("B"), lines, crossed, new)
    if expected is None:
        assert problems == []
    else:
        assert any(expected in p for p in problems), problems


def test_passing_through_a_candle_is_legal_only_for_must_curve_pairs():
    layout = load_layout("B")
    pair = layout.must_curve[0]
    assert board(layout).through[pair], "the must-curve chord really crosses a candle"
    assert line_problems(layout, [], [], pair) == []
    straight = dataclasses.replace(layout, must_curve=())
    problems = line_problems(straight, [], [], pair)
    assert problems and "passes through candle" in problems[0]


def _collinear_layout() -> Layout:
    base = load_layout("A")
    centers = list(base.centers)
    centers[1] = (40.0, 21.0)
    centers[2] = (63.0, 21.0)   # 0 (17, 21), 1, 2 and 3 (65, 21)... on one line y = 21
    candles = tuple(Candle(c.number, centers[i], c.radius) for i, c in enumerate(base.candles))
    return dataclasses.replace(base, candles=candles, must_curve=())


def test_guards_for_lines_sharing_a_candle_and_recrossing():
    layout = _collinear_layout()  # built directly: the loader refuses collinear candles
    problems = line_problems(layout, [(0, 1)], [], (0, 2))
    assert any("Direct" in p for p in problems)
    problems = line_problems(layout, [(0, 2)], [], (1, 3))
    assert any("No recrossing" in p for p in problems)
    assert not any("Direct" in p or "recrossing" in p
                   for p in line_problems(load_layout("A"), [(0, 1)], [], (0, 2)))


def _top(*values):
    seen: dict[int, int] = {}
    out = []
    for v in values:
        seen[v] = seen.get(v, 0) + 1
        out.append(TopBox(v, seen[v] == 2))
    return out + [None] * (7 - len(out))


@pytest.mark.parametrize(("state", "expected"), [
    (SigilState.of("B", lines=[(0, 6)], crossed=[0], top=_top(1)), None),
    (SigilState.of("B", lines=[(0, 10)], crossed=[], top=_top(1)), None),  # must-curve pair
    (SigilState.of("B", crossed=[0, 6], top=[TopBox(1), TopBox(1, True), TopBox(1, True),
                                               *[None] * 4]), "more than twice"),
    (SigilState.of("B", top=[TopBox(1), TopBox(1), *[None] * 5]), "must be circled"),
    (SigilState.of("B", top=[TopBox(1, True), *[None] * 6]), "only the second"),
    (SigilState.of("B", top=[None, TopBox(2), *[None] * 5]), "leftmost empty box"),
    (SigilState.of("B", crossed=[1], top=_top(1)), "crossed out but 2 is not written"),
    (SigilState.of("B", crossed=[0, 1], top=_top(1)), "2 candles are crossed out"),
    (SigilState.of("B", lines=[(0, 1), (2, 3), (4, 5)], top=_top(1)), "3 lines are drawn"),
])
def test_violations_of_a_state(state, expected):
    found = violations(load_layout("B"), state)
    if expected is None:
        assert found == []
    else:
        assert any(expected in v for v in found), found


def test_the_rat_s_third_write_is_no_violation_for_its_player_only():
    """The Rat (F09): "You may write a number a third time on top of a card (it stays circled
    and wild)"; for anyone else, Two of each."""
    three = [TopBox(1), TopBox(1, True), TopBox(1, True), *[None] * 4]
    state = SigilState.of("B", crossed=[0, 6], top=three)
    assert not any("top" in v for v in violations(load_layout("B"), state, write_limit=3))
    assert any("more than twice" in v for v in violations(load_layout("B"), state))
    uncircled = SigilState.of("B", crossed=[0, 6], top=[*three[:2], TopBox(1), *[None] * 4])
    assert any("must be circled" in v
               for v in violations(load_layout("B"), uncircled, write_limit=3))


def test_violation_line_through_candle_uses_design_notation():
    straight = dataclasses.replace(load_layout("B"), must_curve=())
    found = violations(straight, SigilState.of("B", lines=[(0, 10)], top=_top(1)))
    assert found == ["line 0-10 passes through candle 11"]


# A triangle of lines drawn inside another, touching none of its lines (layout A: candles 1, 5
# and 9 lie inside the triangle 0-4-11): the lines cut the plane into two bounded regions, the
# small triangle and the ring around it. Rulebook, Goal Glossary: "Enclosure: An area
# completely enclosed by lines". The ring's area is the big triangle's less the hole.
RING_LAYOUT, RING_OUTER, RING_INNER = "A", (0, 4, 11), (1, 5, 9)


def _ring():
    layout = load_layout(RING_LAYOUT)
    tri = [list(combinations(t, 2)) for t in (RING_OUTER, RING_INNER)]
    drawing = Drawing(layout, tri[0] + tri[1])
    outer = abs(polygon_area([layout.candles[i].center for i in RING_OUTER]))
    inner = abs(polygon_area([layout.candles[i].center for i in RING_INNER]))
    return layout, drawing, outer, inner


def test_an_enclosure_around_a_separate_drawing_does_not_count_its_hole():
    layout, drawing, outer, inner = _ring()
    assert not any(line_problems(layout, drawing.lines[:k], (), line)
                   for k, line in enumerate(drawing.lines))   # a legal drawing
    assert drawing.n_enclosures == 2 and drawing.intersections == 0
    areas = sorted(area for _, area in drawing.faces)
    assert areas == pytest.approx(sorted([inner, outer - inner]))
    # the two enclosures do not overlap: together they cover the big triangle once
    assert sum(e.area for e in drawing.enclosures) == pytest.approx(outer)
    ring = max(drawing.enclosures, key=lambda e: len(set(e.candles) & set(RING_OUTER)))
    assert ring.area == pytest.approx(outer - inner)
    # its boundary runs along both triangles: their candles are all on it
    assert ring.candles == tuple(sorted(RING_OUTER + RING_INNER))
    # the ring's centroid is that of the big triangle less the small one
    c_out = [sum(layout.candles[i].center[k] for i in RING_OUTER) / 3 for k in (0, 1)]
    c_in = [sum(layout.candles[i].center[k] for i in RING_INNER) / 3 for k in (0, 1)]
    expect = [(outer * a - inner * b) / (outer - inner) for a, b in zip(c_out, c_in, strict=True)]
    assert list(ring.centroid) == pytest.approx(expect)


def test_a_star_inside_the_hole_belongs_to_the_inner_enclosure_not_the_ring():
    layout, drawing, outer, inner = _ring()
    inner_poly = [layout.candles[i].center for i in RING_INNER]
    outer_poly = [layout.candles[i].center for i in RING_OUTER]
    encl = drawing.enclosures
    for s, star in enumerate(layout.stars):
        if point_in_polygon(star, inner_poly):
            assert encl[drawing.star_faces[s]].area == pytest.approx(inner)
        elif point_in_polygon(star, outer_poly):
            assert encl[drawing.star_faces[s]].area == pytest.approx(outer - inner)
        else:
            assert s not in drawing.star_faces
