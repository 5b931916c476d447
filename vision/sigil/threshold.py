"""One adaptive threshold over all the marks of a card: the large gap (as OMRChecker).

Marks of one kind on one card (66 candle-pair strengths, 12 candle-disc strengths) fall in two
groups: not drawn (near zero, or faint ghosts of an erased game, many) and drawn (strong, few,
and spread: pens, widths and light vary). Sorted from the faintest up, the first jump of at least
``min_jump`` that reaches above ``floor`` separates them; the threshold sits in the middle of
that jump, kept inside ``[floor, ceiling]``. The floor keeps faint marks (ghosts, smudges) out
when nothing is drawn; the ceiling keeps strong marks in.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

__all__ = ["first_large_gap"]


def first_large_gap(values: Sequence[float] | np.ndarray, *, floor: float, ceiling: float,
                    min_jump: float, default: float) -> float:
    """The threshold between drawn and not-drawn marks of one card.

    Parameters
    ----------
    values : sequence of float
        The strength of every candidate mark (any order).
    floor, ceiling : float
        The threshold never leaves ``[floor, ceiling]``: below ``floor`` lie ghosts and noise,
        above ``ceiling`` any mark is drawn whatever the rest of the card looks like.
    min_jump : float
        The smallest gap between two consecutive sorted strengths that counts as "large".
    default : float
        The threshold when no gap is large enough inside ``[floor, ceiling]`` (all marks of one
        group).

    Returns
    -------
    float
        Marks with strength ``>= threshold`` are drawn.

    Examples
    --------
    >>> first_large_gap([0.9, 0.85, 0.1, 0.05, 0.0], floor=0.3, ceiling=0.7, min_jump=0.15,
    ...                 default=0.5)
    0.475
    >>> first_large_gap([1.2, 0.7, 0.43, 0.05, 0.0], floor=0.3, ceiling=0.7, min_jump=0.15,
    ...                 default=0.5)
    0.3
    >>> first_large_gap([0.2, 0.1, 0.0], floor=0.3, ceiling=0.7, min_jump=0.15, default=0.5)
    0.5
    >>> first_large_gap([0.8, 0.6, 0.25, 0.2, 0.02, 0.0], floor=0.3, ceiling=0.7,
    ...                 min_jump=0.15, default=0.5)  # ghosts at 0.2-0.25 stay out
    0.425
    """
    v = np.sort(np.asarray(values, np.float64))
    if v.size == 0:
        return float(min(max(default, floor), ceiling))
    # from the faintest up: the first jump of at least min_jump that reaches above the floor
    for lo, hi in itertools.pairwise(v):
        if hi - lo >= min_jump and hi > floor:
            return float(min(max((hi + lo) / 2.0, floor), ceiling))
    # no such jump: all marks in one group; the default decides (inside the bounds)
    return float(min(max(default, floor), ceiling))
