from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.doomcat.layouts import load_layout
from vision.render.cardface import card_face
from vision.render.sigil import (
    CardStyle,
    _background,
    photograph,
    render_card,
    sample_conditions,
)
from vision.sigil.geometry import card_geometry, project
from vision.sigil.ink import prepare_reference
from vision.sigil.pose import (
    NoCard,
    PoseConfig,
    _completions,
    _min_channel_normalised,
    _Outline,
    _Photo,
    _quads_from_runs,
    _same_quad,
    _straight_runs,
    find_pose,
    line_quads,
    marker_ids_of,
    refine_by_patches,
    shows_markers,
)


def _reference(letter: str, art: str, design: int) -> np.ndarray:
    geom = card_geometry(load_layout(letter))
    return prepare_reference(np.asarray(card_face(geom, art, design, 5.0).image), geom, 4.0).grey


def _photo(letter: str, art: str, design: int, seed: int, *, hide_markers: int = 0, **fixed):
    rng = np.random.default_rng(seed)
    card = render_card(load_layout(letter), None, CardStyle(art, design, 8.0), rng)
    geom = card_geometry(load_layout(letter))
    for m in geom.markers[:hide_markers]:          # e.g. covered by a finger, torn off
        (cx, cy), half = m.center, m.size / 2 + 1.0
        cv2.rectangle(card.image, (round((cx - half) * 8), round((cy - half) * 8)),
                      (round((cx + half) * 8), round((cy + half) * 8)), (255, 255, 255), -1)
    cond = sample_conditions(rng, glare=0.0, shadow=0.0, defocus_px=0.0, **fixed)
    frame, info = photograph(card, rng, cond)
    _, data = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 90])
    return cv2.imdecode(data, cv2.IMREAD_COLOR), info, geom


def _error_px(h: np.ndarray, truth: np.ndarray, geom) -> float:
    """Largest distance between where two homographies put the candle centres."""
    pts = geom.centers()
    return float(np.linalg.norm(project(h, pts) - project(truth, pts), axis=1).max())


@pytest.mark.parametrize(("letter", "design", "seed", "hand", "tilt"), [
    ("A", 0, 11, False, 35.0),
    ("B", 1, 12, True, 20.0),
    ("C", 2, 13, False, 45.0),
    ("D", 3, 14, True, 30.0),
])
def test_printed_card_pose_is_precise(letter, design, seed, hand, tilt):
    frame, info, geom = _photo(letter, "printed", design, seed, hand=hand, tilt_deg=tilt,
                               motion_px=0.0, fill=0.35)
    pose, which, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                               [_reference(letter, "printed", design)])
    assert pose.method == "outline" and which == 0
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_two_blurred_markers_are_refined_by_the_artwork():
    """Two markers on one side of the card fix its far side only roughly; the printed
    artwork pins it down."""
    frame, info, geom = _photo("A", "companion", 0, 21, hide_markers=2, hand=False,
                               tilt_deg=40.0, motion_px=3.0, fill=0.3)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("A", "companion", 0)])
    assert pose.method == "markers" and len(pose.markers) == 2
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_refine_by_patches_recovers_a_pose_a_few_mm_off():
    frame, info, geom = _photo("B", "printed", 2, 31, hand=False, tilt_deg=25.0, motion_px=0.0)
    w, h = geom.size_mm
    card = np.float32([[0, 0], [w, 0], [w, h], [0, h]])
    off = card + np.float32([[3, -2], [-2, 3], [2, 2], [-3, -2]])   # 2-3 mm off
    rough = cv2.getPerspectiveTransform(card, project(info.homography, off).astype(np.float32))
    assert _error_px(rough, info.homography, geom) > 8
    ref = _reference("B", "printed", 2)
    coarse = refine_by_patches(frame, rough, geom, ref, s=2.0, reach_mm=6.0, patch_mm=8.0,
                               cell_mm=9.0)
    assert coarse is not None
    fine = refine_by_patches(frame, coarse[0], geom, ref, s=4.0, reach_mm=1.5, patch_mm=6.0,
                             cell_mm=7.0)
    assert fine is not None
    hom, inliers, cover = fine
    assert inliers >= 20 and cover > 0.5
    assert _error_px(hom, info.homography, geom) < 1.0


def test_the_wrong_layouts_reference_finds_no_card():
    """A printed card of layout A checked against layout C's blank card: no pose, not a wrong
    one."""
    frame, _, _ = _photo("A", "printed", 1, 41, hand=False, tilt_deg=20.0, motion_px=0.0)
    geom_c = card_geometry(load_layout("C"))
    with pytest.raises(NoCard):
        find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom_c,
                  [_reference("C", "printed", 1)], PoseConfig(),
                  marker_ids_of([load_layout(x) for x in "ABCD"]))


@pytest.mark.parametrize("side", [0, 1, 2, 3])
def test_a_sheet_of_paper_touching_the_card_does_not_hide_it(side):
    """A pale sheet touching one edge joins the card's outline into one blob; the card's
    sides are still straight runs of that outline."""
    frame, info, geom = _photo("C", "printed", 0, 51 + side, hand=False, tilt_deg=15.0,
                               motion_px=0.0, fill=0.3, background="dark")
    corners = info.card_corners_px
    a, b = corners[side], corners[(side + 1) % 4]
    centre = corners.mean(0)
    out = (a + b) / 2 - centre
    out = out / np.linalg.norm(out)
    along = (b - a) / np.linalg.norm(b - a)
    mid = (a + b) / 2
    sheet = np.array([mid - 0.3 * (b - a) - 3 * out, mid + 0.2 * (b - a) - 3 * out,
                      mid + 0.25 * (b - a) + 160 * out + 40 * along,
                      mid - 0.35 * (b - a) + 150 * out], np.int32)
    cv2.fillConvexPoly(frame, sheet, (228, 232, 236), cv2.LINE_AA)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("C", "printed", 0)])
    assert _error_px(pose.homography, info.homography, geom) < 1.5


@pytest.mark.parametrize("seed", [61, 62, 63])
def test_three_markers_under_strong_motion_blur(seed):
    """Motion blur moves marker corners by a millimetre; the refined pose agrees with the
    markers' centres and is kept."""
    frame, info, geom = _photo("B", "companion", 0, seed, hide_markers=1, hand=False,
                               tilt_deg=30.0, motion_px=3.0, fill=0.5)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("B", "companion", 0)])
    assert pose.method == "markers" and len(pose.markers) == 3
    assert _error_px(pose.homography, info.homography, geom) < 2.0


def test_two_markers_that_misplace_the_card_give_way_to_the_outline(monkeypatch):
    """Two markers whose (blurred, misread) corners put the card somewhere else: the pose must
    fit the printed card too, else the outline decides; never the markers' wrong pose."""
    import vision.sigil.pose as pose_mod

    frame, info, geom = _photo("A", "companion", 0, 71, hand=False, tilt_deg=20.0,
                               motion_px=0.0, fill=0.35)
    skew = np.array([[1.0, 0.25, -10.0], [0.1, 1.0, 6.0], [0.0, 0.002, 1.0]])  # card mm
    wrong = info.homography @ skew
    two = {m.id: project(wrong, m.corners()).astype(np.float32) for m in geom.markers[:2]}
    monkeypatch.setattr(pose_mod, "detect_markers", lambda gray, dictionary: dict(two))
    assert _error_px(wrong, info.homography, geom) > 20
    pose, _, notes = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                               [_reference("A", "companion", 0)])
    assert pose.method == "outline" and any("does not fit" in n for n in notes)
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_an_arm_across_the_card_does_not_hide_it():
    """An arm reaching over one side joins the card in every mask; the card's sides are still
    the longest straight edges in view (line_quads), a side the arm breaks is one run."""
    frame, info, geom = _photo("D", "printed", 2, 74, hand=False, tilt_deg=30.0, motion_px=0.0,
                               fill=0.3, background="wood")
    c = info.card_corners_px
    centre, mid = c.mean(0), (c[2] + c[3]) / 2
    width = int(0.25 * np.linalg.norm(c[1] - c[0]))
    cv2.line(frame, tuple(int(v) for v in centre + (mid - centre) * 6),
             tuple(int(v) for v in centre * 0.6 + mid * 0.4), (120, 150, 200), width)
    quads = line_quads(frame, geom)
    # within a few px (the coarse refinement reaches 6 mm)
    assert any(min(np.abs(np.roll(q, k, 0) - c).max() for k in range(4)) < 8 for q in quads)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("D", "printed", 2)])
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_straight_runs_join_the_pieces_of_a_broken_edge():
    edges = np.zeros((200, 400), np.uint8)
    cv2.line(edges, (20, 50), (120, 50), 255, 1)
    cv2.line(edges, (180, 51), (300, 51), 255, 1)     # the same edge after a gap (a finger)
    cv2.line(edges, (50, 100), (50, 190), 255, 1)
    runs = _straight_runs(edges, 20, 5)
    assert len(runs) == 2
    covered, p, q = runs[0]
    assert 215 <= covered <= 225
    assert sorted([p[0], q[0]]) == pytest.approx([20, 300], abs=2)


@pytest.mark.parametrize(("runs", "found"), [
    # the four sides of a 200 x 280 card, each a little short of the corners: one quad
    ([(180.0, [110, 100], [290, 100]), (260.0, [300, 110], [300, 370]),
      (180.0, [290, 380], [110, 380]), (260.0, [100, 370], [100, 110])], 1),
    # one side reaches far beyond a corner (another edge on the same line): none
    ([(180.0, [110, 100], [290, 100]), (260.0, [300, 110], [300, 370]),
      (380.0, [490, 380], [110, 380]), (260.0, [100, 370], [100, 110])], 0),
    # a square: 1:1 lies within the side ratios steep tilt gives a card, so it is kept
    ([(180.0, [110, 100], [290, 100]), (180.0, [300, 110], [300, 290]),
      (180.0, [290, 300], [110, 300]), (180.0, [100, 290], [100, 110])], 1),
    # three sides only
    ([(180.0, [110, 100], [290, 100]), (260.0, [300, 110], [300, 370]),
      (180.0, [290, 380], [110, 380])], 0),
])
def test_quads_from_runs(runs, found):
    runs = [(c, np.array(p, float), np.array(q, float)) for c, p, q in runs]
    quads = _quads_from_runs(runs, 126 / 88, (1000.0, 500000.0))
    assert len(quads) == found
    if found and runs[1][0] == 260.0:
        support, quad = quads[0]
        assert support == pytest.approx(880 / 960, abs=0.01)
        assert sorted(map(tuple, np.round(quad).astype(int).tolist())) == \
            [(100, 100), (100, 380), (300, 100), (300, 380)]


def _moved(h: np.ndarray, geom, dx_mm: float, dy_mm: float) -> np.ndarray:
    """The pose of the card slid by (dx, dy) mm on the table."""
    return h @ np.array([[1.0, 0.0, dx_mm], [0.0, 1.0, dy_mm], [0.0, 0.0, 1.0]])


@pytest.mark.parametrize(("dx", "dy", "method"), [
    (0.4, -0.3, "hint"),       # a steady card: the fine pass from where it was
    (3.0, 2.0, "hint"),        # nudged: the coarse pass from where it was
    (30.0, 0.0, "outline"),    # moved away: searched for by its outline
])
def test_a_pose_hint_finds_a_card_near_where_it_was(dx, dy, method):
    frame, info, geom = _photo("B", "printed", 1, 81, hand=False, tilt_deg=25.0,
                               motion_px=0.0, fill=0.3)
    hint = _moved(info.homography, geom, dx, dy)
    pose, _, notes = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                               [_reference("B", "printed", 1)], hint=hint)
    assert pose.method == method, notes
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_read_sigil_hands_its_hint_to_the_pose():
    from vision.sigil import read_sigil

    frame, info, geom = _photo("B", "printed", 1, 82, hand=False, tilt_deg=20.0,
                               motion_px=0.0, fill=0.3)
    layout = load_layout("B")
    reference = np.asarray(card_face(geom, "printed", 1, 5.0).image)
    hinted = read_sigil(frame, layout, reference, hint=_moved(info.homography, geom, 0.5, 0))
    plain = read_sigil(frame, layout, reference)
    assert hinted.pose.method == "hint" and plain.pose.method == "outline"
    assert hinted.state == plain.state


@pytest.mark.parametrize(("letter", "art", "design", "carries"), [
    ("A", "companion", 0, True),
    ("C", "companion", 0, True),
    ("A", "printed", 0, False),
    ("D", "printed", 3, False),
])
def test_shows_markers_tells_companion_blanks_from_printed_ones(letter, art, design, carries):
    geom = card_geometry(load_layout(letter))
    assert shows_markers(_reference(letter, art, design), geom) is carries


def test_a_card_read_against_printed_blanks_only_is_not_searched_for_markers(monkeypatch):
    """``markers=False``: the marker search is skipped (the outline finds the card)."""
    import vision.sigil.pose as pose_mod

    frame, info, geom = _photo("A", "companion", 0, 91, hand=False, tilt_deg=20.0,
                               motion_px=0.0, fill=0.3)
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    ref = [_reference("A", "companion", 0)]
    assert find_pose(frame, grey, geom, ref)[0].method == "markers"
    calls = []
    real = pose_mod.detect_markers
    monkeypatch.setattr(pose_mod, "detect_markers", lambda *a: calls.append(1) or real(*a))
    pose, _, notes = find_pose(frame, grey, geom, ref, markers=False)
    assert not calls and pose.method == "outline"
    assert not any("markers" in n for n in notes)
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_the_darkest_channel_is_the_least_of_each_pixels_three_values():
    rng = np.random.default_rng(5)
    bgr = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    photo = _Photo(bgr, cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY))
    assert photo.darkest.flags.c_contiguous
    assert np.array_equal(photo.darkest, bgr.min(axis=2))
    geom = card_geometry(load_layout("A"))
    card = np.float32([[0, 0], [geom.width, 0], [geom.width, geom.height], [0, geom.height]])
    h = cv2.getPerspectiveTransform(card, np.float32([[3, 2], [50, 4], [48, 35], [1, 33]]))
    assert np.array_equal(_min_channel_normalised(photo, h, geom, 2.0, 6.0),
                          _min_channel_normalised(bgr.min(axis=2), h, geom, 2.0, 6.0))


def test_same_quad_whichever_corner_comes_first():
    q = np.float32([[0, 0], [10, 0], [10, 20], [0, 20]])
    for k in range(4):
        assert _same_quad(np.roll(q, k, 0), q + 1.5, 2.0)
        assert not _same_quad(np.roll(q, k, 0), q + 2.5, 2.0)
    assert not _same_quad(q[::-1].copy(), q, 2.0)   # the other turning order


def _passes(monkeypatch) -> list[float]:
    """The patch passes find_pose runs, by their resolution (2 px/mm coarse, 4 fine)."""
    import vision.sigil.pose as pose_mod

    seen: list[float] = []
    real = pose_mod.refine_by_patches

    def logged(*args, **kw):
        seen.append(kw["s"])
        return real(*args, **kw)

    monkeypatch.setattr(pose_mod, "refine_by_patches", logged)
    return seen


def test_three_sharp_markers_are_refined_by_the_fine_pass_alone(monkeypatch):
    """Three markers seen sharply put the card well within the fine pass's reach: the coarse
    pass is not run, and the pose is as precise."""
    frame, info, geom = _photo("B", "companion", 0, 64, hide_markers=1, hand=False,
                               tilt_deg=30.0, motion_px=0.0, fill=0.4)
    passes = _passes(monkeypatch)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("B", "companion", 0)])
    assert pose.method == "markers" and len(pose.markers) == 3
    assert passes == [4.0]
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def test_markers_a_millimetre_off_are_refined_coarse_then_fine(monkeypatch):
    """Markers read a millimetre off (the whole card shifted): the fine pass alone would move
    the card by more than half its reach, so coarse then fine refine it, as far off poses."""
    import vision.sigil.pose as pose_mod

    frame, info, geom = _photo("B", "companion", 0, 64, hide_markers=1, hand=False,
                               tilt_deg=30.0, motion_px=0.0, fill=0.4)
    shift = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])   # 1 mm across
    off = info.homography @ shift
    three = {m.id: project(off, m.corners()).astype(np.float32) for m in geom.markers[1:]}
    monkeypatch.setattr(pose_mod, "detect_markers", lambda gray, dictionary: dict(three))
    passes = _passes(monkeypatch)
    pose, _, _ = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                           [_reference("B", "companion", 0)])
    assert pose.method == "markers"
    assert passes == [4.0, 2.0, 4.0]
    assert _error_px(pose.homography, info.homography, geom) < 1.5


def _hide_side(frame: np.ndarray, corners: np.ndarray, side: int, depth: float,
               colour: tuple[int, int, int] = (95, 125, 175)) -> None:
    """Paint an arm (one flat colour) over side ``side`` of the card (corners TL, TR, BR, BL,
    px) and ``depth`` of the card beyond it, reaching out of the card well past that side."""
    a, b = corners[side], corners[(side + 1) % 4]
    c, d = corners[(side + 2) % 4], corners[(side + 3) % 4]
    along = b - a
    inner_b, inner_a = b + depth * (c - b), a + depth * (d - a)
    outer_b, outer_a = b - 1.5 * (c - b), a - 1.5 * (d - a)
    poly = np.array([outer_a - 0.15 * along, outer_b + 0.15 * along, inner_b + 0.15 * along,
                     inner_a - 0.15 * along])
    cv2.fillPoly(frame, [np.round(poly).astype(np.int32)], colour, cv2.LINE_AA)


@pytest.mark.parametrize(("letter", "design", "seed", "side", "tilt"), [
    ("C", 1, 81, 0, 40.0),
    ("A", 2, 82, 1, 30.0),
])
def test_a_card_whose_whole_side_a_hand_hides_is_recovered(letter, design, seed, side, tilt):
    """An arm over one whole side (both its corners) of a printed card: the outlines found
    run along the arm, no candidate's best-ranked rotation fits; the card is recovered from
    the three sides in view (completed by the card's aspect ratio) and registered with the
    blank card, and its pose is as precise as a whole card's."""
    frame, info, geom = _photo(letter, "printed", design, seed, hand=False, tilt_deg=tilt,
                               motion_px=0.0, fill=0.3, background="wood")
    _hide_side(frame, info.card_corners_px, side, 0.3)
    pose, which, notes = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                                   [_reference(letter, "printed", design)])
    assert any("recovered" in n for n in notes)
    assert pose.method == "outline" and which == 0
    assert _error_px(pose.homography, info.homography, geom) < 1.5
    # with the recovery off (the live loop, between its tries while no card is found): refused
    with pytest.raises(NoCard, match="no card matching layout"):
        find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                  [_reference(letter, "printed", design)], PoseConfig(recover=False))


def test_completions_put_a_hidden_side_where_the_aspect_ratio_does():
    """Seen square on (no perspective), one completion of an outline whose side k runs
    along a hand is the card itself, whichever side it is."""
    geom = card_geometry(load_layout("B"))
    w, h = geom.size_mm
    card = np.array([[100.0, 50.0], [100 + 3 * w, 50.0], [100 + 3 * w, 50 + 3 * h],
                     [100.0, 50 + 3 * h]])
    for k in range(4):
        wrong = card.copy()
        inward = card[(k + 2) % 4] - card[(k + 1) % 4]
        wrong[k] += 0.4 * inward
        wrong[(k + 1) % 4] += 0.4 * inward
        found = _completions(wrong, geom)
        assert min(float(np.abs(c - card).max()) for c in found) < 1e-6
        assert all(np.abs(c - card).max() > 5 for c in _completions(wrong, geom, (0.75,)))


def test_a_pale_sheet_with_no_card_is_still_refused(monkeypatch):
    """A blank sheet of the card's shape on a table: card-shaped outlines, none of them the
    card; the recovery registers them and verifies none, and the photo is refused."""
    import vision.sigil.pose as pose_module

    calls = []
    original = pose_module._recover
    monkeypatch.setattr(pose_module, "_recover",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    rng = np.random.default_rng(91)
    frame = _background(rng, "wood").astype(np.uint8)
    sheet = np.array([[500, 150], [760, 190], [720, 560], [450, 510]], np.int32)
    cv2.fillPoly(frame, [sheet], (225, 228, 232), cv2.LINE_AA)
    _hide_side(frame, sheet.astype(np.float64), 2, 0.3)
    geom = card_geometry(load_layout("C"))
    with pytest.raises(NoCard, match="no card matching layout"):
        find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                  [_reference("C", "printed", 1)])
    assert calls


def test_outline_refit_on_demand_keeps_the_rough_quads_first_corner():
    """An outline's sides are refitted through its contour only when asked (:attr:`quad`), to
    the card's corners, starting at the corner its rough quad starts at (so that a rotation
    ranked on the rough quad is the same rotation of the refitted one)."""
    true = np.array([[100.0, 50.0], [300.0, 52.0], [302.0, 350.0], [98.0, 348.0]])
    sides = [true[k] + t * (true[(k + 1) % 4] - true[k])
             for k in range(4) for t in np.linspace(0, 1, 200, endpoint=False)]
    contour = np.round(np.array(sides) * 2).reshape(-1, 1, 2).astype(np.int32)  # a 2x copy
    off = true + np.array([[3.0, -2.0], [-2.0, 3.0], [2.0, 2.0], [-3.0, -3.0]])
    for start in range(4):                 # whichever corner the rough quad starts at
        rough = np.roll(off, -start, axis=0).astype(np.float32)
        o = _Outline(rough, (contour, rough * 2), 2.0)
        assert np.abs(o.rough - rough).max() == 0
        assert np.abs(o.quad - np.roll(true, -start, axis=0)).max() < 0.6
    assert np.array_equal(_Outline(off).quad, off)     # found without a contour: as it is


@pytest.mark.parametrize(("letter", "design", "seed"), [("A", 0, 90), ("B", 1, 91),
                                                        ("C", 2, 92), ("D", 3, 94)])
def test_a_printed_card_running_out_of_the_frame_is_found(letter, design, seed):
    """A card a quarter or more out of the frame: its outline runs along the frame's edge on
    that side (two corners on the border, not a card wholly in view), so the outline search
    left it out and the photo was refused. The card is completed from its three sides in view
    and registered with the blank card (pose._recover); the candles in view land where they
    are."""
    frame, info, geom = _photo(letter, "printed", design, seed, hand=False, tilt_deg=20.0,
                               motion_px=0.0, fill=0.3, center=(0.88, 0.5),
                               keep_in_view=False, background="wood")
    pts = geom.centers()
    truth = project(info.homography, pts)
    inside = (truth[:, 0] >= 0) & (truth[:, 0] < 1280) & (truth[:, 1] >= 0) & (truth[:, 1] < 720)
    assert inside.sum() >= 4 and (info.card_corners_px[:, 0] > 1280).sum() >= 1  # runs out
    pose, _, notes = find_pose(frame, cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), geom,
                               [_reference(letter, "printed", design)])
    assert any("recovered" in n for n in notes)
    found = project(pose.homography, pts)
    assert float(np.linalg.norm(found[inside] - truth[inside], axis=1).max()) < 1.5
