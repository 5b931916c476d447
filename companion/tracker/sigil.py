"""Sigil tracking over frames: per-frame sigil readings in, drawing events out.

Pure logic: no threads, no clock, no I/O. Feed it each frame's
:class:`vision.readings.SigilState` for each card in view, keyed by the caller's card id (e.g.
``"B of player 1"``), with the frame time::

    tracker = SigilTracker()
    for frame in frames:
        for event in tracker.update("B1", read_sigil(frame.image, layout="B"), frame.t):
            print(event.text)          # "new line 2-9 on card B1"
    tracker.state("B1")                # the voted SigilState: unknowns filled from other frames

Every element of a card -- each of the 66 possible lines, each of the 12 candles' crosses, each
of the 7 top boxes (digit and circle) -- has its own vote over the last ``window`` frames in
which the reader could see it (an element listed in a frame's ``unknown`` casts no vote in that
frame, so a hand over the card changes nothing; a frame in which a hand moves over the card
casts no vote at all, see ``busy_unknown``). An element's value changes only when one value
holds at least ``min_votes`` votes and ``share`` of that window: a single noisy frame never
emits an event. An element never seen yet is reported in :meth:`SigilTracker.state`'s
``unknown`` until enough frames have shown it.

Events (:mod:`companion.tracker.events`): :class:`LineDrawn`, :class:`CandleCrossed`,
:class:`DigitWritten`, :class:`DigitCircled`, and :class:`Erased` when elements disappear
(``wiped=True`` when the whole card is blank again). An element's first decision emits an event
only when something is drawn there (a card first seen blank says nothing). A card whose layout
changes is a new card: its history is dropped without events.

Erasures are held (``erase_hold``) and told together: a card wiped in several strokes is one
"card wiped", not a warning for each element that went first, and an element read as gone for
a while and then seen again as it was says nothing at all. A drawing on the card tells the held
erasures first, so they keep their order (the Snake erases a line before the turn's line is
drawn); an element wiped and written anew is one correction ("digit 5 ... (was 3)"). A card
out of view casts no votes: erasures held when it left wait for it (a card taken off the table
to be wiped comes back blank, and the whole wipe is one event).

Convention: candles are the indices 0-11 of the layout's ``candles`` list; lines are pairs
``(a, b)``, a < b; top boxes are numbered 0-6 left to right (DESIGN.md's ``top k``).
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from itertools import combinations

from companion.tracker.events import (
    CandleCrossed,
    DigitCircled,
    DigitWritten,
    Erased,
    LineDrawn,
    TrackerEvent,
)
from vision.readings import N_CANDLES, N_TOP_BOXES, SigilState, TopBox

__all__ = ["SigilTracker", "SigilTrackerConfig"]

_LINES = tuple(combinations(range(N_CANDLES), 2))
# Element keys: ("line", a, b), ("candle", c), ("top", k); their values: bool for lines and
# candles (drawn / crossed), None or (digit, circled) for top boxes.
_Element = tuple[str, int] | tuple[str, int, int]
_ELEMENTS: tuple[_Element, ...] = (
    *(("line", a, b) for a, b in _LINES),
    *(("candle", c) for c in range(N_CANDLES)),
    *(("top", k) for k in range(N_TOP_BOXES)),
)


def _name(element: _Element) -> str:
    if element[0] == "line":
        return f"line {element[1]}-{element[2]}"
    return f"{element[0]} {element[1]}"


_BY_NAME = {_name(e): e for e in _ELEMENTS}
_UNSEEN = object()  # an element no frame has decided yet


@dataclass(frozen=True)
class SigilTrackerConfig:
    """Every threshold of the sigil tracker.

    Parameters
    ----------
    window : int
        Votes kept per element (the last frames in which the reader could see it).
    min_votes : int
        Votes one value needs before the element takes it.
    share : float
        Share of the window that value needs (> 0.5, so two values cannot both win).
    busy_unknown : int
        A frame whose ``unknown`` lists at least this many elements, and not the same ones as
        the frame before, shows a hand moving over the card (writing, wiping): it casts no
        vote, since a pen or an arm makes lines the reader does not know are hidden. Unknowns
        that stay put (glare, a hand at rest) do not stop the votes.
    erase_hold : float
        Erasures are told once the card has cast votes (frames without a hand moving over
        it) for this many seconds, and in at least ``min_votes`` frames, with no further
        erasure, all in one event; or as soon as something is drawn on it (0 seconds: after
        ``min_votes`` frames). A hand moving over the card starts the wait again. Half a
        second: longer than a cloth's pause between strokes that the votes see, short enough
        for the Snake's erased line to show before its player reaches for the pen again. The
        ``min_votes`` frames give whatever else is being erased the votes it needs to join
        (a card back in view after a gap, a slow camera).
    """

    window: int = 5
    min_votes: int = 3
    share: float = 0.6
    busy_unknown: int = 5
    erase_hold: float = 0.5

    def __post_init__(self) -> None:
        if self.window < 1 or not 1 <= self.min_votes <= self.window:
            raise ValueError(f"need 1 <= min_votes <= window, got {self.min_votes}, "
                             f"{self.window}")
        if not 0.5 < self.share <= 1.0:
            raise ValueError(f"share must lie in (0.5, 1], got {self.share}")
        if self.busy_unknown < 1:
            raise ValueError(f"busy_unknown must be 1 or more, got {self.busy_unknown}")
        if not self.erase_hold >= 0:
            raise ValueError(f"erase_hold must be 0 or more, got {self.erase_hold}")


@dataclass
class _Card:
    layout: str
    votes: dict[_Element, deque[Hashable]] = field(default_factory=dict)
    value: dict[_Element, Hashable] = field(default_factory=dict)  # decided elements only
    last_unknown: tuple[str, ...] = ()
    busy: bool = False
    name: str = ""  # how the events' texts say the card (the caller's; else its id)
    # erasures not told yet: element -> its value before (the one last told); since when the
    # card has cast votes without another erasure (None: a hand is moving over it), and in
    # how many frames after that one
    held: dict[_Element, Hashable] = field(default_factory=dict)
    quiet_since: float | None = None
    quiet_votes: int = 0


def _observed(state: SigilState) -> dict[_Element, Hashable]:
    lines = set(state.lines)
    crossed = set(state.crossed)
    hidden = {_BY_NAME[name] for name in state.unknown}
    out: dict[_Element, Hashable] = {}
    for element in _ELEMENTS:
        if element in hidden:
            continue
        if element[0] == "line":
            out[element] = (element[1], element[2]) in lines
        elif element[0] == "candle":
            out[element] = element[1] in crossed
        else:
            box = state.top[element[1]]
            out[element] = None if box is None else (box.value, box.circled)
    return out


def _blank(value: Hashable) -> bool:
    return value is False or value is None


def _circle_wiped(before: Hashable, after: Hashable) -> bool:
    """A top box whose circle is gone and whose digit stays."""
    return (isinstance(before, tuple) and isinstance(after, tuple)
            and before[0] == after[0] and before[1] and not after[1])


class SigilTracker:
    """Votes each card's elements over frames and emits drawing events (see the module notes)."""

    def __init__(self, config: SigilTrackerConfig | None = None) -> None:
        self.config = config or SigilTrackerConfig()
        self._cards: dict[str, _Card] = {}
        self._t: float | None = None

    def cards(self) -> tuple[str, ...]:
        return tuple(sorted(self._cards))

    def busy(self, card: str) -> bool:
        """Whether the last frame of ``card`` showed a hand at work over it (no vote cast)."""
        entry = self._cards.get(card)
        return entry is not None and entry.busy

    def update(self, card: str, state: SigilState, t: float, *, hand: bool = False,
               name: str = "") -> list[TrackerEvent]:
        """Take one frame's reading of ``card`` at frame time ``t``; return the events it
        settled. ``hand`` (if the caller knows) says a hand is over the card: the frame casts
        no vote. ``name`` is how the events' texts say the card ("Ann, card 1"; default:
        "card <id>"). Raises ``ValueError`` when ``t`` goes back in time."""
        if not isinstance(state, SigilState):
            raise TypeError(f"expected a SigilState, got {type(state).__name__}")
        if not isinstance(card, str) or not card:
            raise ValueError("a card id is a non-empty string")
        if not math.isfinite(t) or (self._t is not None and t < self._t):
            raise ValueError(f"frame time must be finite and not decrease: {self._t} -> {t}")
        self._t = t
        entry = self._cards.get(card)
        if entry is None or entry.layout != state.layout:
            entry = self._cards[card] = _Card(state.layout)
        entry.name = name
        cfg = self.config
        moving = (len(state.unknown) >= cfg.busy_unknown
                  and state.unknown != entry.last_unknown)
        entry.last_unknown = state.unknown
        entry.busy = hand or moving
        if entry.busy:
            entry.quiet_since = None
            return []
        changes: list[tuple[_Element, Hashable, Hashable]] = []
        for element, value in _observed(state).items():
            votes = entry.votes.setdefault(element, deque(maxlen=cfg.window))
            votes.append(value)
            counts = Counter(votes)
            best, n = max(counts.items(), key=lambda kv: kv[1])
            if n < cfg.min_votes or n < cfg.share * len(votes):
                continue
            before = entry.value.get(element, _UNSEEN)
            if before is not _UNSEEN and before == best:
                continue
            entry.value[element] = best
            if before is _UNSEEN and _blank(best):
                continue
            changes.append((element, None if before is _UNSEEN else before, best))
        return self._events(card, entry, changes, t)

    def update_all(self, readings: Mapping[str, SigilState], t: float) -> list[TrackerEvent]:
        """:meth:`update` for every card in one frame (cards in name order)."""
        events: list[TrackerEvent] = []
        for card in sorted(readings):
            events.extend(self.update(card, readings[card], t))
        return events

    def state(self, card: str) -> SigilState:
        """The voted state of ``card``; elements not decided yet are listed in ``unknown``."""
        entry = self._cards.get(card)
        if entry is None:
            raise KeyError(f"no card {card!r} seen yet (cards: {', '.join(self.cards())})")
        v = entry.value
        lines = [(e[1], e[2]) for e in _ELEMENTS if e[0] == "line" and v.get(e) is True]
        crossed = [e[1] for e in _ELEMENTS if e[0] == "candle" and v.get(e) is True]
        top: list[TopBox | None] = []
        for k in range(N_TOP_BOXES):
            box = v.get(("top", k))
            top.append(TopBox(*box) if isinstance(box, tuple) else None)  # type: ignore[misc]
        unknown = [_name(e) for e in _ELEMENTS if e not in v]
        return SigilState.of(entry.layout, lines, crossed, top, unknown)

    def forget(self, card: str) -> None:
        """Drop a card's history (it left the table)."""
        self._cards.pop(card, None)

    def _events(self, card: str, entry: _Card, changes: list, t: float) -> list[TrackerEvent]:
        """The events of one voting frame's ``changes`` (element, value told before, value
        now), erasures held as the module notes say."""
        on = {"t": t, "card": card, "layout": entry.layout, "name": entry.name}
        drawn: list[tuple[_Element, Hashable, Hashable]] = []
        erasing = False
        for element, before, after in changes:
            if element in entry.held:  # its erasure is not told yet: compare with what was
                before = entry.held.pop(element)
                if after == before:
                    continue  # seen again as it was: nothing happened
            if _blank(after) or _circle_wiped(before, after):
                entry.held[element] = before
                erasing = True
            else:
                drawn.append((element, before, after))
        if erasing or entry.quiet_since is None:
            entry.quiet_since, entry.quiet_votes = t, 0
        else:
            entry.quiet_votes += 1
        cfg = self.config
        # (a hair under the hold: frame times such as 1.2 - 0.7 fall just short in floats)
        quiet = (t - entry.quiet_since >= cfg.erase_hold - 1e-9
                 and entry.quiet_votes >= cfg.min_votes)
        events: list[TrackerEvent] = []
        if entry.held and (drawn or quiet):
            events.append(self._erased(entry, on))
        for element, before, after in drawn:
            kind = element[0]
            if kind == "line":
                events.append(LineDrawn(**on, a=element[1], b=element[2]))
            elif kind == "candle":
                events.append(CandleCrossed(**on, candle=element[1]))
            else:
                value, circled = after  # type: ignore[misc]
                if isinstance(before, tuple) and before[0] == value and circled:
                    events.append(DigitCircled(**on, box=element[1], value=value))
                else:
                    events.append(DigitWritten(
                        **on, box=element[1], value=value, circled=circled,
                        previous=before[0] if isinstance(before, tuple) else None))
        return events

    @staticmethod
    def _erased(entry: _Card, on: Mapping[str, object]) -> Erased:
        """The held erasures of ``entry`` as one event (and forgotten): each element by name, a
        top box whose digit stays as its circle; ``wiped`` when the card is blank."""
        names = []
        for element in sorted(entry.held, key=_ELEMENTS.index):
            if _blank(entry.value.get(element, False)):
                names.append(_name(element))
            else:  # the digit stays, its circle was wiped
                names.append(f"circle of top {element[1]}")
        entry.held.clear()
        wiped = all(map(_blank, entry.value.values()))
        return Erased(**on, elements=tuple(names), wiped=wiped)  # type: ignore[arg-type]
