from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.doomcat.layouts import load_layout
from tests.vision.sigil.cards import blank_card, draw_state, photograph
from vision.readings import SigilState, TopBox
from vision.sigil import SigilConfig, read_sigil
from vision.sigil.bands import (
    BAND_MODEL_PATH,
    CHANNELS,
    SCREEN_MODEL_PATH,
    STRIP_LANES,
    STRIP_LEN,
    BandModel,
    sample_strips,
    stack_maps,
    strip_geometry,
)
from vision.sigil.geometry import card_geometry
from vision.sigil.ink import CardMaps
from vision.sigil.reader import _lines_by_model, card_samples

S = 4.0
CENTRES = np.array([[10.0, 20.0], [50.0, 20.0], [30.0, 40.0]])
RADII = np.array([4.0, 4.0, 4.0])
PAIRS = [(0, 1), (0, 2), (1, 2)]


def _maps_with_line(p0: tuple[float, float], p1: tuple[float, float]) -> np.ndarray:
    ink = np.zeros((round(60 * S), round(60 * S)), np.float32)
    cv2.line(ink, (round(p0[0] * S), round(p0[1] * S)), (round(p1[0] * S), round(p1[1] * S)),
             1.0, 2)
    return ink


def _blank_card_maps(hide) -> tuple:
    """Layout A's geometry and all-blank maps of it at the reader's scale, with the pixels
    ``hide(hidden, px_per_mm)`` marks as hidden."""
    geom = card_geometry(load_layout("A"))
    s = SigilConfig().px_per_mm
    w, h = geom.size_mm
    shape = (round(h * s), round(w * s))
    hidden = np.zeros(shape, bool)
    hide(hidden, s)
    maps = CardMaps(ink=np.zeros(shape, np.float32), hidden=hidden,
                    glare=np.zeros(shape, bool), blind=np.zeros(shape, bool), contrast=0.5,
                    rectified=np.zeros((*shape, 3), np.uint8))
    return geom, maps


def test_strip_geometry_follows_the_chord_between_the_outlines() -> None:
    geo = strip_geometry(CENTRES, RADII, PAIRS, [[0.0], [0.0, 5.0], [0.0]], S)
    assert list(geo.owner) == [0, 1, 1, 2]
    assert geo.mapx.shape == (4 * STRIP_LEN, STRIP_LANES)
    mx = geo.mapx.reshape(4, STRIP_LEN, STRIP_LANES) / S
    my = geo.mapy.reshape(4, STRIP_LEN, STRIP_LANES) / S
    mid = STRIP_LANES // 2
    # pair 0-1 is horizontal: its centre lane runs along y = 20 from 2 mm inside one outline
    # (x = 10 + 4 - 2) to 2 mm inside the other (x = 50 - 4 + 2)
    assert np.allclose(my[0, :, mid], 20.0)
    assert mx[0, 0, mid] == pytest.approx(12.0)
    assert mx[0, -1, mid] == pytest.approx(48.0)
    # the rows between the outlines are flagged inside, the ends over the discs are not
    xs = mx[0, :, mid]
    assert np.array_equal(geo.inside[0], (xs >= 14.0 - 1e-6) & (xs <= 46.0 + 1e-6))
    # a bowed row bends away from the chord in its middle, by the bow
    centre = np.array([mx[2, STRIP_LEN // 2, mid], my[2, STRIP_LEN // 2, mid]])
    chord = (CENTRES[0] + CENTRES[2]) / 2
    assert np.hypot(*(centre - chord)) == pytest.approx(5.0, abs=0.3)


def test_sampled_strip_holds_the_line_on_its_centre_lanes() -> None:
    geo = strip_geometry(CENTRES, RADII, PAIRS, [[0.0], [0.0], [0.0]], S)
    ink = _maps_with_line((14.0, 20.0), (46.0, 20.0))
    none = np.zeros_like(ink, bool)
    strips = sample_strips(geo, stack_maps(ink, none, none, none))
    assert strips.shape == (3, CHANNELS, STRIP_LEN, STRIP_LANES)
    mid = STRIP_LANES // 2
    inside = geo.inside[0]
    assert strips[0, 0, inside, mid - 1:mid + 2].max(axis=1).min() > 0.5
    assert strips[0, 0, :, :3].max() == 0.0 and strips[0, 0, :, -3:].max() == 0.0
    # the other pairs' strips see it only where they leave candle 0 / 1
    assert strips[1, 0, inside, mid].mean() < 0.2
    # the last channel is the pair's length (/100 mm), constant
    assert np.allclose(strips[0, 4], 0.4)


def test_outside_the_card_counts_as_hidden() -> None:
    geo = strip_geometry(CENTRES, RADII, PAIRS, [[0.0], [0.0], [0.0]], S)
    small = np.zeros((round(30 * S), round(30 * S)), np.float32)   # the card's right part cut
    none = np.zeros_like(small, bool)
    strips = sample_strips(geo, stack_maps(small, none, none, none))
    assert strips[0, 1, -1].min() == 1.0     # pair 0-1 ends at x = 52 mm, outside
    assert strips[0, 1, 0].max() == 0.0


class _FixedModel(BandModel):
    """A stand-in returning given probabilities per strip (tests the decision logic)."""

    def __init__(self, prob: np.ndarray) -> None:
        super().__init__("unused")
        self.prob = prob

    def predict(self, strips: np.ndarray) -> np.ndarray:
        assert strips.shape[1:] == (CHANNELS, STRIP_LEN, STRIP_LANES)
        return self.prob[:len(strips)]


def test_model_scores_go_through_one_threshold_and_hidden_goes_to_unknown() -> None:
    def left_half(hidden: np.ndarray, s: float) -> None:   # a hand over the left half
        hidden[:, : hidden.shape[1] // 2] = True

    geom, maps = _blank_card_maps(left_half)
    w = geom.size_mm[0]
    from vision.sigil.reader import _strip_geo

    geo = _strip_geo(geom, SigilConfig())
    prob = np.full(len(geo.owner), 0.02)
    cs = np.array([c.center for c in geom.candles])
    right = [p for p, (a, b) in enumerate(geom.pairs)
             if cs[a][0] > w / 2 + 8 and cs[b][0] > w / 2 + 8]
    left = [p for p, (a, b) in enumerate(geom.pairs)
            if cs[a][0] < w / 2 - 8 and cs[b][0] < w / 2 - 8]
    assert right and left
    drawn = set(right[:2])
    for p in drawn | {left[0]}:        # the model "sees" a line under the hand: not trusted
        prob[geo.owner == p] = 0.97
    strengths, t, lines, unknown = _lines_by_model(maps, geom, SigilConfig(),
                                                   _FixedModel(prob))
    assert 0.3 <= t <= 0.7
    assert set(lines) == {geom.pairs[p] for p in drawn}
    for p, (a, b) in enumerate(geom.pairs):
        name = f"line {a}-{b}"
        if p in drawn:
            assert name not in unknown
        if cs[a][0] < w / 2 - 8 and cs[b][0] < w / 2 - 8:
            # both candles well inside the hidden half: not "no line" but unknown
            assert name in unknown and strengths[(a, b)] is None
        elif cs[a][0] > w / 2 + 8 and cs[b][0] > w / 2 + 8:
            assert name not in unknown


def test_card_samples_strips_of_a_photo() -> None:
    layout = load_layout("A")
    rng = np.random.default_rng(3)
    state = SigilState.of("A", lines=[(0, 1)])
    frame, _ = photograph(draw_state(layout, state, rng), rng)
    got = card_samples(frame, layout, blank_card(layout))
    pairs, owner, strips, seen = got["pairs"], got["owner"], got["strips"], got["seen"]
    assert len(pairs) == 66 and owner.max() == 65 and len(owner) == len(strips) == len(seen)
    mid = STRIP_LANES // 2
    p01 = pairs.index((0, 1))
    centre = strips[:, 0, :, mid - 2:mid + 3].max(axis=2).mean(axis=1)
    assert centre[owner == p01].max() > 2 * np.median(centre)


@pytest.mark.skipif(not BAND_MODEL_PATH.is_file(), reason="band model not trained")
def test_band_model_and_fallback_agree_on_a_clean_card() -> None:
    layout = load_layout("A")
    rng = np.random.default_rng(4)
    state = SigilState.of("A", lines=[(0, 1), (2, 6), (7, 9)])
    frame, _ = photograph(draw_state(layout, state, rng), rng)
    ref = blank_card(layout)
    for cfg in (SigilConfig(), SigilConfig(use_band_model=False),
                SigilConfig(band_model_path="/nonexistent/bands.onnx")):
        assert set(read_sigil(frame, layout, ref, cfg).state.lines) == set(state.lines)


def test_band_model_file_is_small_and_runs() -> None:
    assert BAND_MODEL_PATH.is_file()
    assert BAND_MODEL_PATH.stat().st_size < 512 * 1024
    p = BandModel().predict(np.zeros((3, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32))
    assert p.shape == (3,) and np.all((p >= 0) & (p <= 1))
    # a blank strip holds no line
    assert p.max() < 0.5


def test_training_strips_are_labelled_from_the_renderer() -> None:
    pytest.importorskip("torch")
    from models.sigil_bands.train import make_strips

    d = make_strips(seed=424, count=2)
    n = len(d["y"])
    assert d["x"].shape == (n, 4, STRIP_LEN, STRIP_LANES) and d["x"].dtype == np.float16
    assert set(np.unique(d["y"])) <= {0.0, 1.0} and d["y"].sum() >= 1
    assert len(d["w"]) == len(d["group"]) == len(d["length"]) == n
    # the nearly blank negatives kept are weighted up, the rest count once
    assert set(np.unique(d["w"])) <= {1.0, 5.0}
    assert len(d["dy"]) == len(d["dx"]) and d["dx"].shape[1:] == (4, 24, 24)
    assert d["bx"].shape[1:] == (48, 48) and d["by"].shape == (len(d["bx"]), 2)


def test_exported_net_runs_in_the_reader_model_class(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from models.sigil_bands.fit import BandNet, DiscNet, export
    from vision.sigil.bands import DISC_CHANNELS, DISC_SIZE, DiscModel

    torch.manual_seed(0)
    net = BandNet()
    export(net, str(tmp_path / "b.onnx"))
    export(DiscNet(), str(tmp_path / "d.onnx"), discs=True)
    x = np.random.default_rng(0).random((4, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32)
    with torch.no_grad():
        want = torch.sigmoid(net.eval()(torch.from_numpy(x))[:, 0]).numpy()
    assert np.allclose(BandModel(tmp_path / "b.onnx").predict(x), want, atol=1e-5)
    d = np.zeros((12, DISC_CHANNELS, DISC_SIZE, DISC_SIZE), np.float32)
    assert DiscModel(tmp_path / "d.onnx").predict(d).shape == (12,)


def test_screen_net_exports_and_learns_the_teachers_logits(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from models.sigil_bands.distill import fit
    from models.sigil_bands.fit import BandNet, ScreenBandNet, export

    torch.manual_seed(0)
    net = ScreenBandNet().eval()
    export(net, str(tmp_path / "screen.onnx"))
    x = np.random.default_rng(0).random((4, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32)
    with torch.no_grad():
        want = torch.sigmoid(net(torch.from_numpy(x))[:, 0]).numpy()
    assert np.allclose(BandModel(tmp_path / "screen.onnx", screen=None).predict(x), want,
                       atol=1e-5)
    # distilled from a teacher whose logit follows the strip's ink (a made-up rule: its mean
    # over every eighth sample), the student gets it, as a constant net cannot
    teacher = BandNet()
    with torch.no_grad():
        for p in teacher.parameters():
            p.zero_()
        first = teacher.body[0]
        first.weight[0, 0, 1, 1] = 1.0
        teacher.body[7].weight[0, :6 * 7] = 1.0 / (6 * 7)
        teacher.body[2].weight[0, 0, 1, 1] = 1.0
        teacher.body[4].weight[0, 0, 1, 1] = 1.0
        teacher.body[9].weight[0, 0] = 16.0
        teacher.body[9].bias[0] = -4.0
    export(teacher, str(tmp_path / "teacher.onnx"))
    rng = np.random.default_rng(1)
    strips = np.zeros((1024, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32)
    strips[:, 0] = rng.random((1024, 1, 1)) * rng.random((1024, STRIP_LEN, STRIP_LANES))
    np.savez(tmp_path / "d.npz", x=strips.astype(np.float16))
    assert fit([str(tmp_path / "d.npz")], str(tmp_path / "teacher.onnx"),
               str(tmp_path / "student.onnx"), epochs=3) == 0
    got = BandModel(tmp_path / "student.onnx", screen=None).predict(strips[:256])
    want = BandModel(tmp_path / "teacher.onnx", screen=None).predict(strips[:256])
    assert want.std() > 0.1 and np.corrcoef(got, want)[0, 1] > 0.9


@pytest.mark.skipif(not SCREEN_MODEL_PATH.is_file(), reason="band screen not trained")
def test_the_screen_leaves_the_band_model_every_strip_that_could_matter() -> None:
    layout = load_layout("B")
    rng = np.random.default_rng(11)
    state = SigilState.of("B", lines=[(0, 5), (1, 7), (2, 9), (3, 4)], crossed=[2, 6])
    frame, _ = photograph(draw_state(layout, state, rng), rng)
    strips = card_samples(frame, layout, blank_card(layout))["strips"]
    full = BandModel(screen=None).predict(strips)
    screened = BandModel().predict(strips)
    skipped = screened != full
    # most strips of a card are screened out, and only those the band model calls
    # plainly "no line"; every other strip keeps the band model's own probability
    assert skipped.mean() > 0.5
    assert screened[skipped].max() < 0.001 and full[skipped].max() < 0.05
    assert np.array_equal(screened[~skipped], full[~skipped]) and full[~skipped].max() > 0.9
    # a screen that lets everything through changes nothing
    assert np.array_equal(BandModel(screen_logit=-np.inf).predict(strips), full)


def test_disc_model_file_is_small_and_reads_a_blank_disc_as_not_crossed() -> None:
    from vision.sigil.bands import DISC_CHANNELS, DISC_MODEL_PATH, DISC_SIZE, DiscModel

    assert DISC_MODEL_PATH.is_file() and DISC_MODEL_PATH.stat().st_size < 256 * 1024
    p = DiscModel().predict(np.zeros((2, DISC_CHANNELS, DISC_SIZE, DISC_SIZE), np.float32))
    assert p.shape == (2,) and p.max() < 0.5


def test_disc_patches_centre_on_the_candles_and_a_hidden_disc_is_unknown() -> None:
    from vision.sigil.bands import DISC_SIZE, DiscModel, disc_geometry, sample_discs
    from vision.sigil.reader import _crosses_by_model

    mx, my = disc_geometry(CENTRES, RADII, S)
    mid = DISC_SIZE // 2
    assert mx.reshape(3, DISC_SIZE, DISC_SIZE)[0, 0].min() == pytest.approx((10 - 6) * S)
    assert my.reshape(3, DISC_SIZE, DISC_SIZE)[1, :, mid].max() == pytest.approx((20 + 6) * S)
    ink = _maps_with_line((47.0, 17.0), (53.0, 23.0))            # a slash over candle 1
    none = np.zeros_like(ink, bool)
    d = sample_discs((mx, my), stack_maps(ink, none, none, none))
    assert d[1, 0].max() > 0.5 and d[0, 0].max() == 0.0

    c0 = card_geometry(load_layout("A")).candles[0]

    def candle_0(hidden: np.ndarray, s: float) -> None:     # a finger over candle 0
        hidden[round((c0.center[1] - 8) * s):round((c0.center[1] + 8) * s),
               round((c0.center[0] - 8) * s):round((c0.center[0] + 8) * s)] = True

    geom, maps = _blank_card_maps(candle_0)

    class Fixed(DiscModel):
        def predict(self, discs: np.ndarray) -> np.ndarray:
            return np.array([0.01] * 3 + [0.98] + [0.01] * 8)[:len(discs)]

    out, t = _crosses_by_model(maps, geom, SigilConfig(), Fixed("unused"))
    assert out[0] is None                      # hidden and no cross seen: unknown
    assert out[3] is not None and out[3] >= t  # crossed
    assert all(v is not None and v < t for i, v in enumerate(out) if i not in (0, 3))


def test_a_missing_model_file_is_named_in_the_error(tmp_path) -> None:
    from vision.sigil.bands import DISC_CHANNELS, DISC_SIZE, DiscModel

    strips = np.zeros((1, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32)
    with pytest.raises(FileNotFoundError, match="sigil band model missing"):
        BandModel(tmp_path / "none.onnx", screen=None).predict(strips)
    discs = np.zeros((1, DISC_CHANNELS, DISC_SIZE, DISC_SIZE), np.float32)
    with pytest.raises(FileNotFoundError, match="sigil disc model missing"):
        DiscModel(tmp_path / "none.onnx").predict(discs)


LAYOUT_E = Path(__file__).with_name("layout_e.json")


@pytest.mark.skipif(not BAND_MODEL_PATH.is_file(), reason="band model not trained")
def test_lines_between_close_candles_read_on_a_design_not_trained_on() -> None:
    """Layout E (a test design: 100 x 136 mm, 4.5 mm candles, pairs 8-9 and 0-1 only 4.3 and
    4.9 mm apart, closer than any pair of A-D): the short lines a player draws there are read.
    The band model saw no pair closer than 6.6 mm; before its strips of short pairs were
    scaled to what it knows, it read one such line in ten."""
    from vision.render.cardface import card_face
    from vision.render.sigil import CardStyle, InkStyle, photograph, render_card, sample_conditions

    layout = load_layout(LAYOUT_E)
    reference = np.asarray(card_face(layout, "companion", 0, 5.0).image)
    # three turns: 5, 4, 6 written, candles 4, 3, 7 crossed, a short line in two of them
    state = SigilState.of("E", lines=[(0, 1), (2, 6), (8, 9)], crossed=[3, 4, 7],
                          top=[TopBox(5), TopBox(4), TopBox(6), None, None, None, None])
    found, extra = 0, 0
    for seed, pen in enumerate(("black", "blue", "red", "green", "purple", "orange")):
        rng = np.random.default_rng(seed)
        ink = InkStyle(pen_color=pen, width_mm=float(rng.uniform(0.5, 1.1)), hand=seed)
        card = render_card(layout, state, CardStyle("companion", 0, 8.0), rng, ink)
        conditions = sample_conditions(rng, tilt_deg=float(rng.uniform(10, 35)), glare=0.0,
                                       hand=False, shadow=0.0, motion_px=0.0, defocus_px=0.0)
        frame, _ = photograph(card, rng, conditions=conditions)
        lines = set(read_sigil(frame, layout, reference).state.lines)
        found += len(lines & {(0, 1), (8, 9)})
        extra += len(lines - set(state.lines))
    assert extra == 0
    assert found >= 9, f"{found} of the 12 short lines read"
