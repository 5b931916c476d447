"""Random sigil states a real game could reach, for synthetic photos.

A game is simulated turn by turn the way the rulebook describes it: write a number in the
leftmost empty top box (a number at most twice per card, the second write circled), draw one line
between two candles, cross out a candle showing the written number. The line is chosen among the
legal ones.

Legality of a line comes from the Doom Cat engine (``companion.doomcat.geometry.line_problems``:
every line rule of the rulebook, exact arithmetic) for catalogue layouts; :func:`chord_line_ok`
is a simpler straight-chord check (no crossed candle, one line per pair, not within 0.5 mm of
another candle unless the pair is ``must_curve``, not crossing a line sharing a candle, not
near an existing intersection) used for layouts the engine cannot load. See
:func:`line_checker`.

Convention: candle geometry in millimetres, origin top-left of the card; candles are the indices
of the layout's ``candles`` list; lines are pairs ``(a, b)``, a < b.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from companion.errors import BadInput
from vision.readings import N_TOP_BOXES, SigilState, TopBox
from vision.render.sigil import RandomPhoto, random_photo
from vision.sigil.geometry import CardGeometry, card_geometry, segment_distance

__all__ = ["PHASES", "LineCheck", "RandomCards", "chord_line_ok", "line_checker", "random_state"]

#: Where the last turn of a state stops: its number ``written``, its line ``drawn`` too, or
#: ``crossed`` (the whole turn: number, line, cross). A camera watching a game sees cards in
#: all three: the rulebook's turn writes first, draws next and crosses out at its end.
PHASES = ("written", "drawn", "crossed")

#: ``check(state_so_far, a, b) -> bool``: may the line a-b be drawn next on this card?
LineCheck = Callable[[SigilState, int, int], bool]


def _cross(p: np.ndarray, q: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray | None:
    """Intersection point of the open segments p-q and r-s, or None."""
    d1, d2 = q - p, s - r
    den = d1[0] * d2[1] - d1[1] * d2[0]
    if abs(den) < 1e-12:
        return None
    t = ((r[0] - p[0]) * d2[1] - (r[1] - p[1]) * d2[0]) / den
    u = ((r[0] - p[0]) * d1[1] - (r[1] - p[1]) * d1[0]) / den
    if 1e-9 < t < 1 - 1e-9 and 1e-9 < u < 1 - 1e-9:
        return p + t * d1
    return None


def chord_line_ok(geom: CardGeometry, state: SigilState, a: int, b: int,
                  clearance_mm: float = 0.5, intersection_mm: float = 1.5) -> bool:
    """Interim straight-chord legality of drawing a-b next (see the module docstring)."""
    a, b = min(a, b), max(a, b)
    if a == b or (a, b) in state.lines or a in state.crossed or b in state.crossed:
        return False
    pts = geom.centers()
    pa, pb = pts[a], pts[b]
    if (a, b) not in geom.must_curve:
        for k, c in enumerate(geom.candles):
            if k not in (a, b) and segment_distance(pts[k], pa, pb) < c.radius + clearance_mm:
                return False
    crossings = []
    for c, d in state.lines:
        shared = {a, b} & {c, d}
        x = _cross(pa, pb, pts[c], pts[d])
        if x is not None:
            if shared:
                return False
            crossings.append(x)
    # Not through an existing intersection of two other lines.
    for (c, d), (e, f) in itertools.combinations(state.lines, 2):
        x = _cross(pts[c], pts[d], pts[e], pts[f])
        if x is not None and segment_distance(x, pa, pb) < intersection_mm:
            return False
    # Nor so close to a crossing of its own with another crossing that they merge.
    return all(np.linalg.norm(x - y) >= intersection_mm
               for x, y in itertools.combinations(crossings, 2))


def line_checker(layout: Any) -> LineCheck:
    """The line check for ``layout``: the Doom Cat engine's rules
    (``companion.doomcat.geometry.line_problems``) when ``layout`` is a catalogue layout (or its
    JSON document), else the interim straight-chord check :func:`chord_line_ok`."""
    geom = card_geometry(layout)
    try:
        from companion.doomcat.geometry import line_problems
        from companion.doomcat.layouts import Layout
    except ImportError:  # pragma: no cover - the engine is part of the project
        return lambda state, a, b: chord_line_ok(geom, state, a, b)
    if isinstance(layout, Mapping) and not isinstance(layout, Layout):
        try:
            layout = Layout.from_json(dict(layout))
        except BadInput:
            layout = None
    if not isinstance(layout, Layout):
        return lambda state, a, b: chord_line_ok(geom, state, a, b)
    engine_layout = layout

    def check(state: SigilState, a: int, b: int) -> bool:
        return not line_problems(engine_layout, state.lines, state.crossed, (a, b))

    return check


def random_state(layout: Any, rng: np.random.Generator, turns: int | None = None,
                 check: LineCheck | None = None, last: str = "crossed") -> SigilState:
    """A state after ``turns`` turns (default: random 0-7, full cards most often).

    Each turn writes a number (the second write of a number circled, no number thrice), draws a
    legal line when one exists and crosses out an uncrossed candle showing the written number
    when one is left. The last turn stops after step ``last`` (:data:`PHASES`): a card caught
    in the middle of a turn.
    """
    if last not in PHASES:
        raise ValueError(f"last must be one of {', '.join(PHASES)}, got {last!r}")
    geom = card_geometry(layout)
    check = check or line_checker(layout)
    if turns is None:
        turns = int(rng.choice(np.arange(N_TOP_BOXES + 1),
                               p=[0.04, 0.06, 0.08, 0.1, 0.12, 0.14, 0.16, 0.30]))
    if not 0 <= turns <= N_TOP_BOXES:
        raise ValueError(f"turns must be 0-{N_TOP_BOXES}, got {turns}")
    state = SigilState(geom.name)
    written: dict[int, int] = {}
    for turn in range(turns):
        final = turn == turns - 1
        value = int(rng.choice([v for v in range(1, 7) if written.get(v, 0) < 2]))
        written[value] = written.get(value, 0) + 1
        top = list(state.top)
        top[turn] = TopBox(value, circled=written[value] == 2)
        pairs = [p for p in geom.pairs if check(state, *p)]
        lines = list(state.lines)
        if pairs and not (final and last == "written"):
            lines.append(pairs[int(rng.integers(len(pairs)))])
        crossed = list(state.crossed)
        options = [i for i, c in enumerate(geom.candles) if c.number == value and i not in crossed]
        if options and not (final and last != "crossed"):
            crossed.append(int(rng.choice(options)))
        state = SigilState(geom.name, tuple(lines), tuple(crossed), tuple(top))
    return state


class RandomCards:
    """Random labelled photos of sigil cards of ``layouts`` (``render sigil`` and the trainers):
    photo ``i`` of ``seed`` depends only on ``(seed, i)``: one of the layouts, a legal state of
    it (:func:`random_state`), drawn and photographed by
    :func:`vision.render.sigil.random_photo`."""

    def __init__(self, layouts: Sequence[Any]) -> None:
        self.layouts = list(layouts)
        self.geoms = [card_geometry(lay) for lay in self.layouts]
        self.checks = [line_checker(lay) for lay in self.layouts]

    def photo(self, seed: int, i: int, mid_turn_share: float = 0.0, **options: Any,
              ) -> tuple[int, RandomPhoto, np.random.Generator]:
        """The index of the photo's layout, the photo (``options`` go to ``random_photo``) and
        its generator, for any draws that follow it. With probability ``mid_turn_share`` the
        card is caught in the middle of its last turn (number written, line drawn or not, no
        cross yet: :data:`PHASES`); with 0 no draw is spent on it, so photos of a seed are the
        same as before the option existed."""
        rng = np.random.default_rng([seed, i])
        k = int(rng.integers(len(self.layouts)))
        last = "crossed"
        if mid_turn_share > 0 and rng.random() < mid_turn_share:
            last = PHASES[int(rng.integers(2))]
        state = random_state(self.geoms[k], rng, check=self.checks[k], last=last)
        return k, random_photo(self.geoms[k], state, rng, **options), rng
