from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.doomcat.layouts import load_layout
from tests.vision.sigil.test_bands import _FixedModel
from vision.sigil import SigilConfig
from vision.sigil.bands import STRIP_LANES, STRIP_LEN, strip_geometry
from vision.sigil.cover import COVER_MODEL_PATH, CoverModel
from vision.sigil.geometry import card_geometry
from vision.sigil.ink import COVER_CHANNELS, CardMaps, Reference, cover_input, print_fade
from vision.sigil.reader import _clean_run_mm, _lines_by_model, _strip_geo

S = 4.0


def _reference(shape: tuple[int, int]) -> Reference:
    """A blank card with thin dark print every 6 mm (grey 0.3), paper 1.0."""
    grey = np.ones(shape, np.float32)
    for x in range(8, shape[1], round(6 * S)):
        grey[:, x:x + 2] = 0.3
    floor = np.repeat(grey[..., None], 3, axis=2)
    paper = np.ones((shape[0] // 8, shape[1] // 8, 3), np.float32)
    return Reference(floor, grey, paper, grey < 0.5, 0.7)


def test_print_fade_finds_where_glare_washes_the_print_out() -> None:
    shape = (240, 240)
    ref = _reference(shape)
    photo = ref.grey.copy()
    yy, xx = np.mgrid[0:shape[0], 0:shape[1]]
    spot = (yy - 60) ** 2 + (xx - 60) ** 2 < 30 ** 2
    photo[spot] = 1.0 - (1.0 - photo[spot]) * 0.25        # print at a quarter of its contrast
    fade = print_fade(photo, ref, np.zeros(shape, bool), px_per_mm=S, spread_px=1)
    assert fade is not None and fade.shape == shape
    assert fade[60, 60] > 2.5
    assert fade[200, 200] == pytest.approx(1.0, abs=0.05)
    # evenly printed: nothing fades
    assert print_fade(ref.grey, ref, np.zeros(shape, bool), px_per_mm=S, spread_px=1) is None


def test_print_fade_without_print_nearby_is_as_washed_out() -> None:
    shape = (400, 240)
    ref = _reference(shape)
    grey = ref.grey.copy()
    grey[200:] = 1.0                                         # no print on the lower half
    ref = Reference(np.repeat(grey[..., None], 3, axis=2), grey, ref.paper, grey < 0.5, 0.7)
    fade = print_fade(grey, ref, np.zeros(shape, bool), px_per_mm=S, spread_px=1, most=4.0)
    assert fade is not None
    assert fade[100, 100] == pytest.approx(1.0, abs=0.05)
    assert fade[390, 120] == pytest.approx(4.0, abs=0.05)


def test_clean_run_measures_the_longest_visible_stretch_without_ink() -> None:
    centres = np.array([[10.0, 20.0], [70.0, 20.0]])
    geo = strip_geometry(centres, np.array([4.0, 4.0]), [(0, 1)], [[0.0]], S)
    strips = np.zeros((1, 5, STRIP_LEN, STRIP_LANES), np.float32)
    cfg = SigilConfig()
    full = _clean_run_mm(strips, geo, cfg, None)[0]
    assert full == pytest.approx(52.0, abs=1.5)              # 60 mm between centres - 2 radii
    strips[0, 0, 20, STRIP_LANES // 2 + 3] = 1.0              # ink 1.5 mm off the centre line
    strips[0, 1, 30:, :] = 1.0                                # hidden from row 30 on
    run = _clean_run_mm(strips, geo, cfg, None)[0]
    step = float(geo.step_mm[0])
    assert run == pytest.approx((20 - int(np.argmax(geo.inside[0]))) * step, abs=0.01)
    # rows where the print is washed out do not count as clean
    fade = np.full((100, 400), 3.0, np.float32)
    assert _clean_run_mm(strips, geo, cfg, fade)[0] == 0.0


def test_partly_hidden_pair_with_a_clean_stretch_in_view_is_no_line() -> None:
    layout = load_layout("A")
    geom = card_geometry(layout)
    cfg = SigilConfig()
    w, h = geom.size_mm
    shape = (round(h * cfg.px_per_mm), round(w * cfg.px_per_mm))
    cs = np.array([c.center for c in geom.candles])
    pairs = geom.pairs
    # the longest pair: hide its middle half
    p = max(range(len(pairs)), key=lambda k: np.hypot(*(cs[pairs[k][1]] - cs[pairs[k][0]])))
    a, b = pairs[p]
    mid = (cs[a] + cs[b]) / 2
    hidden = np.zeros(shape, bool)
    r = round(0.3 * np.hypot(*(cs[b] - cs[a])) * cfg.px_per_mm)
    cv2.circle(hidden.view(np.uint8), (round(mid[0] * cfg.px_per_mm),
                                       round(mid[1] * cfg.px_per_mm)), r, 1, -1)
    ink = np.zeros(shape, np.float32)

    def maps_of(ink: np.ndarray) -> CardMaps:   # fresh maps: their derived arrays are cached
        return CardMaps(ink=ink, hidden=hidden, glare=np.zeros(shape, bool),
                        blind=np.zeros(shape, bool), contrast=0.5,
                        rectified=np.zeros((*shape, 3), np.uint8))

    maps = maps_of(ink)
    geo = _strip_geo(geom, cfg)
    prob = np.full(len(geo.owner), 0.02)
    strengths, _, lines, unknown = _lines_by_model(maps, geom, cfg, _FixedModel(prob))
    assert f"line {a}-{b}" not in unknown and strengths[(a, b)] == 0.0
    # ink all along the path in view, on both sides of the hand: what lies under the hand may
    # join them (the model does not say "line" here: it never saw strips this hidden)
    s = cfg.px_per_mm
    cv2.line(ink, (round(cs[a][0] * s), round(cs[a][1] * s)),
             (round(cs[b][0] * s), round(cs[b][1] * s)), 1.0, 3)
    maps = maps_of(ink)
    strengths, _, lines, unknown = _lines_by_model(maps, geom, cfg, _FixedModel(prob))
    assert f"line {a}-{b}" in unknown and strengths[(a, b)] is None
    # ink in view from candle a into the hand only: the clean stretch near b rules a-b out
    ink[:] = 0.0
    cv2.line(ink, (round(cs[a][0] * s), round(cs[a][1] * s)),
             (round(mid[0] * s), round(mid[1] * s)), 1.0, 3)
    maps = maps_of(ink)
    strengths, _, lines, unknown = _lines_by_model(maps, geom, cfg, _FixedModel(prob))
    assert f"line {a}-{b}" not in unknown and (a, b) not in lines


def test_cover_input_is_the_photo_and_blank_card_at_one_cell_per_mm() -> None:
    shape = (504, 352)
    ref = _reference(shape)
    rect = np.full((*shape, 3), 200, np.uint8)
    x = cover_input(rect, ref, np.array([200.0, 200.0, 200.0]), 4.0)
    assert x.shape == (COVER_CHANNELS, 126, 88) and x.dtype == np.float32
    assert np.allclose(x[:4], 1.0)                  # the bare card, balanced to its white
    assert x[7].min() == pytest.approx(0.3)         # the print's darkest, cell by cell


@pytest.mark.skipif(not COVER_MODEL_PATH.is_file(), reason="cover model not trained")
def test_cover_model_is_small_and_finds_a_hand_not_a_shadow() -> None:
    assert COVER_MODEL_PATH.stat().st_size < 256 * 1024
    shape = (504, 352)
    ref = _reference(shape)
    white = np.array([220.0, 220.0, 220.0])
    rect = np.repeat((ref.grey * 220)[..., None], 3, axis=2)
    rect[300:, :] *= 0.55                               # a shadow: the print still shows
    rect[:150, :120] = (110, 140, 200)                  # a hand: skin, the print gone
    rect = np.clip(rect, 0, 255).astype(np.uint8)
    prob = CoverModel()(cover_input(rect, ref, white, 4.0))
    assert prob.shape == (126, 88)
    assert prob[10:30, 5:25].mean() > 0.8
    assert prob[90:120, 30:60].mean() < 0.2
    assert prob[10:30, 50:80].mean() < 0.2


def test_exported_cover_net_runs_in_the_reader_model_class(tmp_path) -> None:
    torch = pytest.importorskip("torch")
    from models.sigil_cover.net import CoverNet
    from models.sigil_cover.train import export

    torch.manual_seed(0)
    net = CoverNet().eval()
    export(net, str(tmp_path / "c.onnx"))
    x = np.random.default_rng(0).random((COVER_CHANNELS, 37, 29), np.float32)
    with torch.no_grad():
        want = torch.sigmoid(net(torch.from_numpy(x[None]))[0, 0]).numpy()
    got = CoverModel(tmp_path / "c.onnx")(x)
    assert got.shape == (37, 29) and np.allclose(got, want, atol=1e-5)

