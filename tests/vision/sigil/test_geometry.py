from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.doomcat.layouts import load_layout
from vision.sigil.geometry import card_geometry, segment_distance

GEOMS = {L: card_geometry(load_layout(L)) for L in "ABCD"}


@pytest.mark.parametrize("letter", "ABCD")
def test_must_curve_paths_clear_every_other_candle(letter):
    geom = GEOMS[letter]
    assert geom.must_curve
    for a, b in geom.must_curve:
        path = geom.pair_path(a, b, 80)
        assert np.allclose(path[0], geom.candles[a].center)
        assert np.allclose(path[-1], geom.candles[b].center)
        for k, c in enumerate(geom.candles):
            if k not in (a, b):
                assert np.linalg.norm(path - c.center, axis=1).min() >= c.radius + 1.9


@settings(max_examples=60, deadline=None)
@given(letter=st.sampled_from("ABCD"), pair=st.tuples(st.integers(0, 11), st.integers(0, 11)))
def test_clear_chords_stay_straight(letter, pair):
    geom = GEOMS[letter]
    a, b = pair
    if a == b or tuple(sorted(pair)) in geom.must_curve \
            or geom.blocking_candle(a, b, 1.2) is not None:
        return
    path = geom.pair_path(a, b, 20)
    pa, pb = np.array(geom.candles[a].center), np.array(geom.candles[b].center)
    assert max(segment_distance(p, pa, pb) for p in path) < 1e-9


@pytest.mark.parametrize(("p", "a", "b", "want"), [
    ((0, 1), (0, 0), (2, 0), 1.0),
    ((3, 0), (0, 0), (2, 0), 1.0),
    ((1, 0), (0, 0), (0, 0), 1.0),
    ((1, 1), (0, 0), (2, 2), 0.0),
])
def test_segment_distance(p, a, b, want):
    assert segment_distance(np.array(p, float), np.array(a, float), np.array(b, float)) == \
        pytest.approx(want)


def test_marker_corners_are_in_aruco_order():
    m = GEOMS["A"].markers[0]
    c = m.corners()
    assert c[0, 0] < c[1, 0] and c[1, 1] < c[2, 1] and c[3, 0] < c[2, 0]
    assert np.allclose(c.mean(0), m.center)
