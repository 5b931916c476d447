"""One adaptive threshold over all the marks of a card: the first large gap (as OMRChecker).

Marks of one kind on one card (66 candle-pair strengths, 12 candle-disc strengths) fall in two
groups: drawn (strong) and not drawn (near zero, or faint ghosts of an erased game). Sorted from
the strongest down, the first jump larger than ``min_jump`` separates them; the threshold sits in
the middle of that jump. Floors keep faint marks (ghosts, smudges) out when nothing is drawn.
"""

from __future__ import annotations

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
    >>> first_large_gap([0.2, 0.1, 0.0], floor=0.3, ceiling=0.7, min_jump=0.15, default=0.5)
    0.5
    """
    v = np.sort(np.asarray(values, np.float64))[::-1]
    if v.size == 0:
        return default
    # consider the jumps whose middle lies inside [floor, ceiling] (with the bounds themselves
    # as virtual marks, so that a group entirely above the ceiling or below the floor counts)
    v = np.concatenate([[max(v[0], ceiling)], v, [min(v[-1], floor)]])
    best, best_jump = None, min_jump
    for hi, lo in zip(v[:-1], v[1:], strict=True):
        mid = (hi + lo) / 2.0
        if floor <= mid <= ceiling and hi - lo >= best_jump:
            best, best_jump = float(mid), hi - lo
            break
    if best is not None:
        return best
    # no large gap: one group only; fall back to the default inside the bounds
    return float(min(max(default, floor), ceiling))
