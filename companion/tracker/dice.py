"""Roll tracking over frames: per-frame dice readings in, settled roll events out.

Pure logic: no threads, no clock, no I/O. Feed it every frame's
:class:`vision.readings.DiceReading` with the frame time; it returns the events that frame
settled::

    tracker = DiceTracker(DiceTrackerConfig(vote_frames=5))
    for frame in frames:
        reading = read_dice(frame.image)
        for event in tracker.update(reading, frame.t, hand=reading.hand):
            print(event.text)          # "roll settled: 3 5 5"
    tracker.dice()                     # the dice now in view, with their state, for the page

Per-die states (:attr:`TrackedDie.state`), as smart dice show them:

- ``"rolling"``: the die moved in the last frames, or its readings have not agreed yet;
- ``"settled"``: still for ``vote_frames`` frames and one reading has at least ``vote_share`` of
  those frames (or still for ``undecided_frames`` frames since its readings last agreed, or
  since it came to rest: settled as ``unreadable``, value ``None``: the tracker never
  guesses);
- ``"handling"``: a hand is in view (``hand=True``), or the die vanished from view (picked up);
  a roll that lay still under a hand through ``hand_still_frames`` is reported all the same, and
  so is a die turned in place under a hand once its new reading has held that long (not the
  edge it showed on the way);
- ``"nudged"``: a settled, reported die now shows another face without having been rolled.

Events (see :mod:`companion.tracker.events`) are emitted only when no hand is in view (or every
die has stayed still through ``hand_still_frames`` frames of it: a hand that moves no die holds
nothing back for ever), no die is missing and every die in view is settled, and only for what
changed since the last event:

- the first dice to settle on an empty table, or all dice rolled again: :class:`RollSettled`,
  once per roll;
- some dice picked up (or rolled on the table) and rolled again while others stayed untouched:
  :class:`RerollSettled` naming the re-rolled dice and the ones they replaced;
- a settled die turned onto another face in place, or picked up and set down on another face
  without tumbling (Doom Machine's +/-1 slot): :class:`DieNudged`;
- a die moved by hand to another place with the same face: no event (the table is updated).

Dice taken away are remembered until an event accounts for them (a re-roll names them among
the dice it replaced; a die set down again is paired with them): an event about other dice
while they are still in the hand does not forget them.

A die counts as rolled when it was seen moving before it settled, or appeared while other dice
were rolling; a die that appears already still on a quiet table is taken as set down by hand.
A die the tracker followed as it tumbled (showing other faces while it moved, with no hand in
view) and that came to rest away from where it settled before is rolled too when it lands on
its old face: a roll of the same values again is a new roll, a re-rolled die that shows its old
face a re-roll. A die slid along the table on its face is only moved. Dice taken away that
come back already still, two or more of them on other faces than before and appearing within
``vote_frames`` frames of each other, were thrown, not turned (their tumble went unseen: frames
dropped, or dice too blurred to read in flight): a roll when no die stayed where it lay, else a
re-roll of those; a hand turns one die at a time, so one die set down on another face, or dice
set down one after the other, are nudged.
Three dice or more of one value in an event are listed in ``triples`` (Doom Cat: a rolled
triple is wild for all players). A die whose vote is ``None`` (cocked, or unreadable) is named
in ``needs_player``. A die whose value the reader gave a mean confidence under ``check_below``
over the frames of its vote is named in ``check`` (in a re-roll, only among the dice thrown):
its value counts, and the text asks the player to look at it.

Convention: boxes are ``[x0, y0, x1, y1]`` in pixels, origin top-left; distances are measured
between box centres in units of the die's size (mean box side), so thresholds do not depend on
the camera's resolution. Frame times ``t`` are seconds and must not decrease.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from companion.tracker.events import (
    DieNudged,
    RerollSettled,
    RollSettled,
    SettledDie,
    TrackerEvent,
)
from vision.readings import DiceReading, Die, box_center

__all__ = ["DiceTracker", "DiceTrackerConfig", "TrackedDie", "point_in_polygon"]

_Key = tuple[int | None, str]  # (value, reader state)


@dataclass(frozen=True)
class DiceTrackerConfig:
    """Every threshold of the dice tracker.

    Parameters
    ----------
    vote_frames : int
        Frames a die must be still, and the size of the vote over its readings.
    vote_share : float
        Share of those frames one reading (a value, or cocked / unreadable) must reach.
    undecided_frames : int
        A still die whose readings have not agreed for this many frames (since it came to
        rest, or since they last agreed: a die turned in place after a long rest is voted
        afresh, not called unreadable) settles as ``unreadable`` (no guess).
    still_tolerance : float
        Largest centre movement (die sizes) from where it came to rest for a die to be still.
    match_distance : float
        Largest centre distance (die sizes) between a die's last place (or the place its last
        step predicts) and a detection for the detection to be the same die in the next frame.
        A still die the reader has lost for a frame or more is found again only within
        ``still_tolerance`` of where it lay.
    color_penalty : float
        Added to the matching distance (die sizes) when the colours differ.
    face_penalty : float
        Added to the matching distance (die sizes) of a settled die and a detection on
        another face that a moving die could take too: a die thrown past a die at rest hides
        it for a frame or two, and the die at rest must not follow the moving one away.
    nudge_distance : float
        A reported die found this close (die sizes) to where it settled, on another face, without
        having tumbled, is nudged rather than re-rolled.
    max_missed : int
        Frames a die may be missed by the reader before it counts as gone (picked up).
    min_confidence : float
        Detections below this confidence are ignored.
    hand_still_frames : int
        A hand in view holds events back, unless every die in view has been still this many
        frames: a hand that moves no die (resting on the table, writing on a sigil card, or a
        patch of the table the reader takes for a hand) never holds a settled roll back for
        ever.
    gap_seconds : float
        Frames further apart than this (the camera was away) break the dice's tracks: the dice
        seen afterwards are matched to the settled ones by colour and face, not by place, so a
        camera that comes back moved says nothing new.
    check_below : float
        A settled value that the reader gave a mean confidence under this, over the frames of
        its vote, is named in the event's ``check`` (0: never). 0.6 suits the committed dice
        reader: on rendered table scenes (S777, S779, S780, S784: 1000 scenes), 74% of the
        values it reads wrong and 8% of those it reads right are under 0.6 in a single frame
        (models/dice/HISTORY.md, "Session 22").
    """

    vote_frames: int = 5
    vote_share: float = 0.7
    undecided_frames: int = 12
    still_tolerance: float = 0.25
    match_distance: float = 2.0
    color_penalty: float = 0.5
    face_penalty: float = 0.5
    nudge_distance: float = 1.0
    max_missed: int = 3
    min_confidence: float = 0.0
    hand_still_frames: int = 15
    gap_seconds: float = 2.0
    check_below: float = 0.6

    def to_check(self, value: int | None, confidence: float) -> bool:
        """Whether a value read with ``confidence`` is one for the player to check
        (``check_below``); a die with no value needs the player anyway."""
        return value is not None and confidence < self.check_below

    def __post_init__(self) -> None:
        if self.vote_frames < 1:
            raise ValueError(f"vote_frames must be 1 or more, got {self.vote_frames}")
        if not 0.5 <= self.vote_share <= 1.0:
            raise ValueError(f"vote_share must lie in [0.5, 1], got {self.vote_share}")
        if self.undecided_frames < self.vote_frames:
            raise ValueError("undecided_frames must be at least vote_frames")
        if self.hand_still_frames < self.vote_frames:
            raise ValueError("hand_still_frames must be at least vote_frames")
        for name in ("still_tolerance", "match_distance", "nudge_distance"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if not self.gap_seconds > 0:
            raise ValueError(f"gap_seconds must be positive, got {self.gap_seconds}")
        if min(self.color_penalty, self.face_penalty, self.max_missed) < 0:
            raise ValueError("color_penalty, face_penalty and max_missed must not be negative")
        for name in ("min_confidence", "check_below"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must lie in [0, 1], got {getattr(self, name)}")


@dataclass(frozen=True)
class TrackedDie:
    """A die the tracker follows, as the page shows it. ``value`` is the settled vote (``None``
    while rolling, or when it needs the player)."""

    id: int
    state: str  # rolling | settled | handling | nudged
    value: int | None
    reading: str  # flat | cocked | unreadable (of the vote, or of the last frame while rolling)
    color: str
    bbox: tuple[float, float, float, float]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state, "value": self.value,
                "reading": self.reading, "color": self.color,
                "bbox": [round(float(v), 1) for v in self.bbox]}


def _size(bbox: tuple[float, ...]) -> float:
    return max(1.0, ((bbox[2] - bbox[0]) + (bbox[3] - bbox[1])) / 2.0)


def _dist(a: tuple[float, float], b: tuple[float, float]) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


def point_in_polygon(point: tuple[float, float], polygon: Sequence[tuple[float, float]]) -> bool:
    """Whether ``point`` lies inside ``polygon`` (even-odd rule; corners in order).

    Convention: ``(x, y)`` pixels, origin top-left.

    >>> point_in_polygon((5, 5), [(0, 0), (10, 0), (10, 10), (0, 10)])
    True
    """
    x, y = point
    inside = False
    n = len(polygon)
    for i in range(n):
        (x0, y0), (x1, y1) = polygon[i], polygon[(i + 1) % n]
        if (y0 > y) != (y1 > y) and x < x0 + (y - y0) * (x1 - x0) / (y1 - y0):
            inside = not inside
    return inside


@dataclass
class _Track:
    id: int
    bbox: tuple[float, float, float, float]
    color_votes: deque[str]
    anchor: tuple[float, float]
    still: int = 1
    # the reading with ``vote_share`` of its vote, taken when its last frame came in (None:
    # none has, or still under ``vote_frames``)
    vote: _Key | None = None
    agreed: int = 0  # the value of ``still`` when its vote last agreed (0: not since at rest)
    changed: int = 0  # the frame (count of updates) its vote last became another reading
    vote_was: _Key | None = None  # its last vote that agreed
    # since it came to rest: each frame's reading with the reader's confidence in it
    keys: deque[tuple[_Key, float]] = field(default_factory=deque)
    missed: int = 0
    tumbled: bool = False  # seen moving (or born while others rolled) since it last settled
    # seen moving on another face than its reported one, no hand in view, since it last settled
    turned: bool = False
    last_key: _Key | None = None
    reported: SettledDie | None = None  # as it was in the last event
    reported_center: tuple[float, float] | None = None
    previous: tuple[float, float] = (0.0, 0.0)  # centre in the frame before
    born: int = 0  # the frame (count of updates) it first appeared in

    def __post_init__(self) -> None:
        self.previous = self.center

    @property
    def center(self) -> tuple[float, float]:
        return box_center(self.bbox)

    @property
    def size(self) -> float:
        return _size(self.bbox)

    @property
    def predicted(self) -> tuple[float, float]:
        (x, y), (px, py) = self.center, self.previous
        return (2 * x - px, 2 * y - py)

    @property
    def color(self) -> str:
        counts = Counter(self.color_votes)
        return max(sorted(counts), key=lambda c: counts[c])


class DiceTracker:
    """Follows dice across frames and emits settled-roll events (see the module notes)."""

    def __init__(self, config: DiceTrackerConfig | None = None) -> None:
        self.config = config or DiceTrackerConfig()
        self._tracks: list[_Track] = []
        self._vanished: list[_Track] = []  # reported dice gone since the last event
        self._next_id = 1
        self._t: float | None = None
        self._hand = False
        self._frame = 0
        self._after_gap = False

    # ------------------------------------------------------------------ public
    def update(self, reading: DiceReading, t: float, *, hand: bool = False,
               exclude: Sequence[Sequence[tuple[float, float]]] = (),
               area: Sequence[tuple[float, float]] | None = None,
               ) -> list[TrackerEvent]:
        """Take one frame's reading at frame time ``t`` (seconds); return the events it settled.

        ``hand`` says a hand is in view (if the caller knows); dice vanishing from view count as
        handling too. ``exclude`` lists polygons (``(x, y)`` pixel corners, origin top-left)
        whose detections are ignored: pass the outline of each sigil card in view, whose printed
        candles and markers a dice reader may take for dice. ``area``, when given, is the roll
        area (a polygon, same convention): only detections whose centre lies inside it count,
        so dice resting elsewhere on the table (Doom Machine's yellow HP dice on the part
        cards) are never part of a roll nor nudged. Raises ``ValueError`` when ``t`` goes back
        in time.
        """
        if not isinstance(reading, DiceReading):
            raise TypeError(f"expected a DiceReading, got {type(reading).__name__}")
        if not math.isfinite(t) or (self._t is not None and t < self._t):
            raise ValueError(f"frame time must be finite and not decrease: {self._t} -> {t}")
        if self._t is not None and t - self._t > self.config.gap_seconds:
            # The camera was away: where the dice were tells nothing any more.
            self._vanished += [tr for tr in self._tracks if tr.reported is not None]
            self._tracks = []
            self._after_gap = True
        self._t = t
        self._hand = hand
        self._frame += 1
        detections = [d for d in reading.dice if d.confidence >= self.config.min_confidence
                      and not any(point_in_polygon(d.center, poly) for poly in exclude)
                      and (area is None or point_in_polygon(d.center, area))]
        self._associate(detections)
        if self._held_by_hand() or any(tr.missed for tr in self._tracks):
            return []
        if not self._tracks or not all(self._settled(tr) is not None for tr in self._tracks):
            return []
        return self._emit(t)

    def dice(self) -> tuple[TrackedDie, ...]:
        """The dice in view (and those just picked up), left to right, with their state."""
        out = []
        for tr in sorted(self._tracks, key=lambda tr: (tr.center, tr.id)):
            key = self._settled(tr)
            if self._hand or tr.missed:
                state = "handling"  # (events may go out all the same: see _held_by_hand)
            elif key is None:
                state = "rolling"
            elif (tr.reported is not None and tr.reported_center is not None
                  and key[0] != tr.reported.value
                  and _dist(tr.center, tr.reported_center)
                  <= self.config.nudge_distance * tr.size):
                state = "nudged"
            else:
                state = "settled"
            shown = key if key is not None else (None, tr.last_key[1] if tr.last_key else "flat")
            out.append(TrackedDie(tr.id, state, shown[0], shown[1], tr.color, tr.bbox))
        return tuple(out)

    def reset(self) -> None:
        """Forget every die (a new game)."""
        self.__init__(self.config)  # type: ignore[misc]

    def _held_by_hand(self) -> bool:
        """A hand is in view and some die has not been still long enough to ignore it, or a
        reported die turned in place under it (another reading than the one reported, without
        moving) has not shown its new reading that long: a die turned in place shows an edge,
        or a face on the way, before the face it is left on."""
        wait = self.config.hand_still_frames
        return self._hand and any(
            tr.still < wait or (tr.reported is not None and not tr.tumbled
                                and self._frame - tr.changed < wait
                                and tr.vote_was != (tr.reported.value, tr.reported.state))
            for tr in self._tracks)

    # ------------------------------------------------------------------ association
    def _associate(self, detections: list[Die]) -> None:
        cfg = self.config
        pairs = []
        for ti, tr in enumerate(self._tracks):
            # A die lost from view while it lay still was taken away (or hidden): found again
            # only where it lay (within still_tolerance); a detection further off is another
            # die, or this one set down elsewhere, which the pairing of vanished dice tells.
            reach = (cfg.still_tolerance if tr.missed and tr.still >= cfg.vote_frames
                     else cfg.match_distance)
            for di, det in enumerate(detections):
                c = det.center
                scale = max(tr.size, _size(det.bbox))
                # Near its last place, or where its last step would take it (a rolling die).
                cost = min(_dist(tr.center, c), _dist(tr.predicted, c)) / scale
                if det.color != tr.color:
                    cost += cfg.color_penalty
                if cost <= reach:
                    pairs.append([cost, tr.id, c[0], c[1], det.value or 0, ti, di])
        # A die thrown past a die at rest hides it: where a moving die could take a detection,
        # a die settled on another face than the detection's is the less likely one, so it
        # does not follow the moving die away (a die turned in place, with no moving die
        # near, still takes its detection: nudged).
        settled = [self._settled(tr) is not None for tr in self._tracks]  # once a track
        moving = {di for *_, ti, di in pairs if not settled[ti] and not self._tracks[ti].missed}
        for p in pairs:
            *_, ti, di = p
            tr, det = self._tracks[ti], detections[di]
            if (di in moving and settled[ti] and tr.reported is not None
                    and (det.value, det.state) != (tr.reported.value, tr.reported.state)):
                p[0] += cfg.face_penalty
        # Ties broken by positions, never by list order: permuting the reader's list of dice
        # changes nothing.
        pairs.sort(key=lambda p: p[:5])
        used_t: set[int] = set()
        used_d: set[int] = set()
        for *_, ti, di in pairs:
            if ti in used_t or di in used_d:
                continue
            used_t.add(ti)
            used_d.add(di)
            self._observe(self._tracks[ti], detections[di])
        # Dice appearing while others roll (or while a rolling die was lost) are part of that
        # roll; a die appearing on a quiet table was set down by hand.
        busy = any((ti in used_t and self._settled(tr) is None)
                   or (ti not in used_t and tr.reported is None)
                   for ti, tr in enumerate(self._tracks))
        kept = []
        for ti, tr in enumerate(self._tracks):
            if ti not in used_t:
                tr.missed += 1
                if tr.missed > cfg.max_missed:
                    if tr.reported is not None:
                        self._vanished.append(tr)
                    continue
            kept.append(tr)
        fresh = sorted((detections[di] for di in range(len(detections)) if di not in used_d),
                       key=lambda d: (d.center, d.color, d.value or 0, d.state))
        for det in fresh:
            tr = _Track(id=self._next_id, bbox=det.bbox,
                        color_votes=deque([det.color], maxlen=cfg.vote_frames),
                        anchor=det.center, tumbled=busy, born=self._frame)
            tr.keys = deque([((det.value, det.state), det.confidence)],
                            maxlen=cfg.undecided_frames)
            tr.last_key = (det.value, det.state)
            self._next_id += 1
            kept.append(tr)
        self._tracks = kept

    def _observe(self, tr: _Track, det: Die) -> None:
        cfg = self.config
        center = det.center
        key = (det.value, det.state)
        tr.missed = 0
        tr.previous = tr.center
        tr.bbox = det.bbox
        tr.color_votes.append(det.color)
        if _dist(center, tr.anchor) > cfg.still_tolerance * tr.size:
            tr.anchor = center
            tr.still = 1
            tr.agreed = 0
            tr.keys.clear()
            tr.tumbled = True
            if (not self._hand and tr.reported is not None
                    and key != (tr.reported.value, tr.reported.state)):
                tr.turned = True   # tumbling, not slid along on its face
        else:
            tr.still += 1  # (a face flickering in place is the reader's noise, not a roll)
        tr.keys.append((key, det.confidence))
        tr.last_key = key
        vote = self._agreement(tr) if tr.still >= cfg.vote_frames else None
        if vote is not None:
            tr.agreed = tr.still
            if vote != tr.vote_was:
                tr.changed = self._frame
                tr.vote_was = vote
        tr.vote = vote

    def _vote(self, tr: _Track) -> list[tuple[_Key, float]]:
        """The still frames the die's vote is taken over: each one's reading and the reader's
        confidence in it."""
        return list(tr.keys)[-self.config.vote_frames:]

    def _agreement(self, tr: _Track) -> _Key | None:
        """The reading that has ``vote_share`` of the die's vote, if one has."""
        recent = [key for key, _ in self._vote(tr)]
        counts = Counter(recent)
        best = max(sorted(counts, key=lambda k: (k[0] or 0, k[1])), key=lambda k: counts[k])
        return best if counts[best] >= self.config.vote_share * len(recent) else None

    def _settled(self, tr: _Track) -> _Key | None:
        """The die's voted reading when it is settled, else ``None``."""
        cfg = self.config
        if tr.missed or tr.still < cfg.vote_frames:
            return None
        if tr.vote is not None:
            return tr.vote
        if tr.still - tr.agreed >= cfg.undecided_frames:
            return (None, "unreadable")
        return None

    # ------------------------------------------------------------------ events
    def _as_settled(self, tr: _Track) -> SettledDie:
        key = self._settled(tr)
        assert key is not None
        votes = [c for k, c in self._vote(tr) if k == key]
        confidence = sum(votes) / len(votes) if votes else 0.0
        return SettledDie(tr.id, key[0], tr.color, key[1], tuple(tr.bbox),  # type: ignore[arg-type]
                          confidence)

    def _emit(self, t: float) -> list[TrackerEvent]:
        cfg = self.config
        now = {tr.id: self._as_settled(tr) for tr in self._tracks}
        kept, rolled, placed, nudged = [], [], [], []
        for tr in self._tracks:
            die = now[tr.id]
            if tr.reported is None:
                (rolled if tr.tumbled else placed).append(tr)
            else:
                assert tr.reported_center is not None
                near = _dist(tr.center, tr.reported_center) <= cfg.nudge_distance * tr.size
                if (die.value, die.state) != (tr.reported.value, tr.reported.state):
                    (nudged if near or not tr.tumbled else rolled).append(tr)
                elif tr.turned and not near:
                    rolled.append(tr)   # rolled again, onto the face it showed before
                else:
                    kept.append(tr)
        births = [tr.born for tr in rolled if tr.reported is None]
        if births:  # dice that appeared once the roll had begun belong to it
            rolled += [tr for tr in placed if tr.born >= min(births)]
            placed = [tr for tr in placed if tr.born < min(births)]
        if not rolled and not placed and not nudged:
            # Dice taken away (maybe to be set down elsewhere): nothing to say yet.
            self._report()
            return []
        events: list[TrackerEvent] = []
        away: list[_Track] = []  # vanished dice this event leaves unaccounted for
        vanished = sorted(self._vanished, key=lambda tr: (tr.center, tr.id))
        if self._after_gap:
            # Back from a gap: the same dice (colours and faces) say nothing; anything else is
            # a roll we did not see.
            self._after_gap = False
            before = Counter((v.reported.color, v.reported.value) for v in vanished
                             if v.reported is not None)
            if before == Counter((d.color, d.value) for d in now.values()):
                self._adopt(vanished)
                self._report()
                self._vanished.clear()
                return []
            self._report()
            self._vanished.clear()
            return [self._roll(t, list(self._tracks))]
        table_was_empty = not kept and not nudged and not vanished
        if table_was_empty or (not kept and not nudged and rolled):
            # A fresh table, or every die rolled again: a whole roll.
            events.append(self._roll(t, [*rolled, *placed]))
        else:
            # Dice set down by hand: paired with vanished dice of the same colour (same face
            # first, then nearest). Same face: moved, no event; another face: nudged; unpaired:
            # rolled in.
            free = list(vanished)
            paired: list[tuple[_Track, _Track]] = []
            for tr in sorted(placed, key=lambda tr: (tr.center, tr.id)):
                same = now[tr.id].value
                match = min((v for v in free if v.color == tr.color),
                            key=lambda v: (v.reported is None or v.reported.value != same,
                                           _dist(v.center, tr.center), v.id), default=None)
                if match is None:
                    rolled.append(tr)
                    continue
                free.remove(match)
                paired.append((tr, match))
            turned = [(tr, v) for tr, v in paired
                      if v.reported is not None and now[tr.id].value != v.reported.value]
            flung = self._thrown_together(turned)
            if flung and not kept and not nudged:
                # No die stayed where it lay and several came back on other faces at once:
                # a roll whose tumble went unseen (frames dropped, dice too blurred to read).
                events.append(self._roll(t, list(self._tracks)))
                self._report()
                self._vanished.clear()
                return events
            rolled += [tr for tr, _ in flung]
            was = tuple(v.reported for _, v in flung if v.reported is not None)
            for tr, match in paired:
                if (tr, match) in flung:
                    continue  # thrown: a new die in the re-roll, replacing the vanished one
                assert match.reported is not None
                del now[tr.id]
                tr.id = match.id  # the same die, set down again
                now[tr.id] = self._as_settled(tr)
                if now[tr.id].value != match.reported.value:
                    events.append(DieNudged(t=t, die=now[tr.id], previous=match.reported.value,
                                            check=self._check((now[tr.id],))))
            for tr in sorted(nudged, key=lambda tr: (tr.center, tr.id)):
                assert tr.reported is not None
                events.append(DieNudged(t=t, die=now[tr.id], previous=tr.reported.value,
                                        check=self._check((now[tr.id],))))
            if rolled:
                dice = self._ordered(now.values())
                replaced = tuple(sorted((v.reported for v in free if v.reported is not None),
                                        key=lambda d: (box_center(d.bbox), d.id)))
                replaced += tuple(tr.reported for tr in rolled if tr.reported is not None)
                replaced += was
                thrown = tuple(sorted(tr.id for tr in rolled))
                events.append(RerollSettled(
                    t=t, dice=dice, triples=self._triples(dice), needs_player=self._needs(dice),
                    check=self._check(tuple(d for d in dice if d.id in thrown)),
                    rerolled=thrown, replaced=replaced))
            else:
                # Dice still away (in the hand, to be thrown or set down): remembered for the
                # event that brings them back.
                away = free
        self._report()
        self._vanished = away
        return events

    def _thrown_together(self, turned: list[tuple[_Track, _Track]],
                         ) -> list[tuple[_Track, _Track]]:
        """Of the dice set down on other faces than the vanished dice they replace, those that
        were thrown: two or more that appeared within ``vote_frames`` frames of the first of
        them (a hand turns one die at a time; thrown dice land together)."""
        if len(turned) < 2:
            return []
        first = min(tr.born for tr, _ in turned)
        together = [(tr, old) for tr, old in turned if tr.born - first <= self.config.vote_frames]
        return together if len(together) >= 2 else []

    def _adopt(self, vanished: list[_Track]) -> None:
        """Give the dice in view the ids of the vanished dice they are (same colour and face,
        nearest first)."""
        free = list(vanished)
        for tr in sorted(self._tracks, key=lambda tr: (tr.center, tr.id)):
            key = self._settled(tr)
            match = min((v for v in free if v.reported is not None
                         and (v.reported.color, v.reported.value) == (tr.color, key and key[0])),
                        key=lambda v: (_dist(v.center, tr.center), v.id), default=None)
            if match is not None:
                free.remove(match)
                tr.id = match.id

    def _roll(self, t: float, tracks: list[_Track]) -> RollSettled:
        dice = self._ordered(self._as_settled(tr) for tr in tracks)
        return RollSettled(t=t, dice=dice, triples=self._triples(dice),
                           needs_player=self._needs(dice), check=self._check(dice))

    @staticmethod
    def _ordered(dice: Any) -> tuple[SettledDie, ...]:
        return tuple(sorted(dice, key=lambda d: (box_center(d.bbox), d.id)))

    @staticmethod
    def _triples(dice: tuple[SettledDie, ...]) -> tuple[int, ...]:
        counts = Counter(d.value for d in dice if d.value is not None)
        return tuple(sorted(v for v, n in counts.items() if n >= 3))

    @staticmethod
    def _needs(dice: tuple[SettledDie, ...]) -> tuple[int, ...]:
        return tuple(sorted(d.id for d in dice if d.value is None))

    def _check(self, dice: tuple[SettledDie, ...]) -> tuple[int, ...]:
        return tuple(sorted(d.id for d in dice if self.config.to_check(d.value, d.confidence)))

    def _report(self) -> None:
        for tr in self._tracks:
            tr.reported = self._as_settled(tr)
            tr.reported_center = tr.center
            tr.tumbled = False
            tr.turned = False
