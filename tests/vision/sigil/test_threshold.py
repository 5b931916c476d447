from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vision.sigil.threshold import first_large_gap

BOUNDS = {"floor": 0.3, "ceiling": 0.7, "min_jump": 0.12, "default": 0.45}


@pytest.mark.parametrize(("values", "expected"), [
    ([0.9, 0.85, 0.1, 0.05, 0.0], 0.475),     # drawn vs not drawn: middle of the gap
    ([0.9, 0.6, 0.5, 0.1], 0.3),               # the first gap, kept above the floor
    ([1.2, 0.7, 0.43, 0.01, 0.0], 0.3),        # drawn marks spread widely: all kept
    ([0.8, 0.6, 0.25, 0.2, 0.02, 0.0], 0.425),  # ghosts between: left out
    ([0.2, 0.15, 0.1, 0.0], 0.45),             # ghosts only: no line, default threshold
    ([], 0.45),
    ([1.4, 1.3, 0.05], 0.675),                 # a wide gap: its middle
])
def test_first_large_gap_table(values: list[float], expected: float) -> None:
    assert first_large_gap(values, **BOUNDS) == pytest.approx(expected)


@given(st.lists(st.floats(0.0, 2.0), max_size=66))
def test_threshold_stays_inside_bounds(values: list[float]) -> None:
    t = first_large_gap(values, **BOUNDS)
    assert BOUNDS["floor"] <= t <= BOUNDS["ceiling"]


@given(st.lists(st.floats(0.0, 0.25), max_size=66))
def test_faint_marks_never_pass(values: list[float]) -> None:
    t = first_large_gap(values, **BOUNDS)
    assert all(v < t for v in values)
