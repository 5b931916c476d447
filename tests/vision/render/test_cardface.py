from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from companion.doomcat.layouts import load_layout
from companion.errors import BadInput
from vision.render.cardface import (
    band_mask,
    card_face,
    decoration_items,
    face_items,
    marker_bits,
    rasterize,
)
from vision.sigil.geometry import card_geometry

FIXTURE = Path(__file__).with_name("layout_t.json")
LETTERS = ["A", "B", "C", "D"]


def _ids(image: np.ndarray, dictionary: str = "DICT_4X4_50") -> set[int]:
    aruco = cv2.aruco
    det = aruco.ArucoDetector(aruco.getPredefinedDictionary(getattr(aruco, dictionary)),
                              aruco.DetectorParameters())
    _, ids, _ = det.detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
    return set() if ids is None else {int(i) for i in ids.ravel()}


@pytest.mark.parametrize("letter", LETTERS)
@pytest.mark.parametrize("ppm", [4.0, 8.0])
def test_companion_face_shows_the_layout_markers(letter, ppm):
    layout = load_layout(letter)
    face = card_face(layout, "companion", px_per_mm=ppm)
    assert face.image.shape == (round(126 * ppm), round(88 * ppm), 3)
    assert _ids(face.image) == {m.id for m in layout.markers}
    assert (face.alpha == 255).all()


@pytest.mark.parametrize("design", range(4))
def test_printed_face_has_no_markers_and_rounded_corners(design):
    face = card_face(load_layout("A"), "printed", design, px_per_mm=6.0)
    assert _ids(face.image) == set()
    assert face.alpha[0, 0] == 0 and face.alpha[face.alpha.shape[0] // 2, 0] == 255
    assert not face.image.flags.writeable


@pytest.mark.parametrize("letter", LETTERS)
@pytest.mark.parametrize("design", range(4))
def test_printed_decoration_stays_out_of_every_candle_band(letter, design):
    geom = card_geometry(load_layout(letter))
    ppm = 4.0
    deco = decoration_items(geom, design)
    assert deco, "some decoration is placed"
    painted = rasterize(deco, geom.size_mm, ppm)
    ink = (painted < 250).any(axis=2)
    bands = band_mask(geom, ppm, margin_mm=3.0) > 0
    assert not (ink & bands).any()


def test_band_mask_covers_chords_and_candles():
    geom = card_geometry(load_layout("B"))
    mask = band_mask(geom, 2.0, margin_mm=1.0)
    for a, b in geom.pairs[:10]:
        mid = (np.array(geom.candles[a].center) + geom.candles[b].center) / 2 * 2.0
        assert mask[round(mid[1]), round(mid[0])] == 255
    assert mask[1, 1] == 0


def test_marker_bits_match_opencv():
    bits = marker_bits("DICT_4X4_50", 7)
    assert bits.shape == (6, 6)
    assert bits[0].all() and bits[:, 0].all()   # the black border


@pytest.mark.parametrize(("layout", "art", "error"), [
    (FIXTURE, "gothic", ValueError),
    ({"name": "X"}, "companion", BadInput),
    ({"name": "X", "candles": [{"number": "one", "center": [1, 2]}]}, "companion", BadInput),
])
def test_bad_arguments(layout, art, error):
    if isinstance(layout, Path):
        layout = json.loads(layout.read_text())
    with pytest.raises(error):
        face_items(layout, art)


def test_geometry_accepts_mapping_object_and_itself():
    doc = json.loads(FIXTURE.read_text())
    a = card_geometry(doc)
    assert card_geometry(a) is a
    assert card_geometry(load_layout("A")).name == "A"
    assert a.must_curve and all(p[0] < p[1] for p in a.must_curve)
