"""Events the tracker emits: frozen dataclasses with ``to_json()`` and a one-line ``text``.

Every event has ``t`` (the frame time, seconds, of the frame that settled it) and ``kind``
(a stable string the web app and the game session switch on). ``to_json()`` gives
``{"kind": ..., "t": ..., "text": ..., <fields>}``.

Dice events (from :class:`companion.tracker.DiceTracker`):

- :class:`RollSettled` ``"roll"`` -- "roll settled: 3 5 5": a whole roll came to rest.
  "roll settled: 2 3 5; check the red 5 (read at 54%)": a die read with little confidence is
  named in ``check`` (each die's ``confidence`` is the reader's mean over the frames of the
  vote), so the player looks at it; the value still counts.
- :class:`RerollSettled` ``"reroll"`` -- "re-roll settled: 6 (was 1); dice now 2 3 6": a subset
  of the dice was picked up and rolled again (Doom Machine's re-roll slot); the other dice kept.
- :class:`DieNudged` ``"nudged"`` -- "die 2 nudged: 3 -> 4": a settled die turned onto another
  face without a roll (knocked, or set by hand: Doom Machine's +/-1 slot).

Sigil events (from :class:`companion.tracker.SigilTracker`), ``card`` is the caller's card id;
the text says the card by ``name`` when the caller gave one ("Ann, card 1"), else by its id:

- :class:`LineDrawn` ``"line"`` -- "new line upper 3 – lower 4 on card B1"
- :class:`CandleCrossed` ``"crossed"`` -- "candle lower 2 crossed on card B1"
- :class:`DigitWritten` ``"digit"`` -- "digit 4 written in top box 2 (circled) on card B1"
- :class:`DigitCircled` ``"circled"`` -- "digit 4 circled in top box 2 on card B1"
- :class:`Erased` ``"erased"`` -- "card B1 wiped" (``wiped``: the card is blank now) or
  "erased line upper 3 – lower 4 on card B1".

The fields keep DESIGN.md's indices (candles 0-11, top boxes 0-6); the ``text`` says them in a
player's words (:meth:`companion.doomcat.layouts.Layout.element_name`: the candle's printed
number and side, top boxes counted from 1), or as indices when the layout cannot be loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from companion.doomcat.layouts import load_layout
from companion.errors import BadInput, DataFileError

__all__ = [
    "CandleCrossed", "DieNudged", "DigitCircled", "DigitWritten", "Erased", "LineDrawn",
    "RerollSettled", "RollSettled", "SettledDie", "TrackerEvent",
]


@dataclass(frozen=True)
class SettledDie:
    """A die as the tracker settled it. ``value`` is ``None`` when it needs the player.

    ``state`` is the reader's vocabulary: ``"flat"`` (read), ``"cocked"`` or ``"unreadable"``
    (the vote never settled on a face). ``id`` is the tracker's id for that die (stable while the
    die stays in view). ``confidence`` is the reader's mean confidence over the frames of the
    vote that gave the settled reading. Convention: ``bbox`` is ``[x0, y0, x1, y1]`` in pixels,
    origin top-left.
    """

    id: int
    value: int | None
    color: str
    state: str
    bbox: tuple[float, float, float, float]
    confidence: float

    @property
    def center(self) -> tuple[float, float]:
        x0, y0, x1, y1 = self.bbox
        return ((x0 + x1) / 2.0, (y0 + y1) / 2.0)

    @property
    def label(self) -> str:
        return "?" if self.value is None else str(self.value)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "value": self.value, "color": self.color, "state": self.state,
                "bbox": [round(float(v), 1) for v in self.bbox],
                "confidence": round(float(self.confidence), 3)}


@dataclass(frozen=True)
class TrackerEvent:
    """Base of every event."""

    t: float
    kind: ClassVar[str] = "event"

    @property
    def text(self) -> str:
        raise NotImplementedError

    def _fields(self) -> dict[str, Any]:
        return {}

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "t": round(float(self.t), 4), "text": self.text,
                **self._fields()}


def _values_text(dice: tuple[SettledDie, ...]) -> str:
    known = sorted(d.value for d in dice if d.value is not None)
    return " ".join([str(v) for v in known] + ["?"] * sum(d.value is None for d in dice))


def _needs_text(dice: tuple[SettledDie, ...], needs: tuple[int, ...]) -> str:
    if not needs:
        return ""
    parts = [f"die {d.id} ({d.color}) is {d.state}" for d in dice if d.id in needs]
    return "; " + ", ".join(parts) + ": the player must say its value"


def _check_text(dice: tuple[SettledDie, ...], check: tuple[int, ...]) -> str:
    if not check:
        return ""
    # said by colour and value, as the player sees the die (the ids are the tracker's own)
    parts = [f"the {d.color} {d.value} (read at {round(100 * d.confidence)}%)"
             for d in dice if d.id in check]
    return "; check " + ", ".join(parts)


@dataclass(frozen=True)
class _DiceEvent(TrackerEvent):
    dice: tuple[SettledDie, ...] = ()
    triples: tuple[int, ...] = ()
    needs_player: tuple[int, ...] = ()
    check: tuple[int, ...] = ()

    @property
    def values(self) -> tuple[int | None, ...]:
        """Read values, sorted, then one ``None`` per die that needs the player."""
        known = sorted(d.value for d in self.dice if d.value is not None)
        return (*known, *([None] * sum(d.value is None for d in self.dice)))

    def values_by_color(self) -> dict[str, list[int | None]]:
        out: dict[str, list[int | None]] = {}
        for d in sorted(self.dice, key=lambda d: (d.value is None, d.value or 0)):
            out.setdefault(d.color, []).append(d.value)
        return out

    def _triples_text(self) -> str:
        if not self.triples:
            return ""
        return " (triples: " + ", ".join(f"{v} {v} {v}" for v in self.triples) + ")"

    def _fields(self) -> dict[str, Any]:
        return {"values": list(self.values), "values_by_color": self.values_by_color(),
                "dice": [d.to_json() for d in self.dice], "triples": list(self.triples),
                "needs_player": list(self.needs_player), "check": list(self.check)}


@dataclass(frozen=True)
class RollSettled(_DiceEvent):
    """A whole roll came to rest: every die in view, voted over several frames."""

    kind: ClassVar[str] = "roll"

    @property
    def text(self) -> str:
        return (f"roll settled: {_values_text(self.dice)}{self._triples_text()}"
                f"{_needs_text(self.dice, self.needs_player)}{_check_text(self.dice, self.check)}")


@dataclass(frozen=True)
class RerollSettled(_DiceEvent):
    """Some dice were rolled again while the others stayed: ``rerolled`` names the new dice's
    ids, ``replaced`` the dice they replaced (as they were last settled)."""

    rerolled: tuple[int, ...] = ()
    replaced: tuple[SettledDie, ...] = ()
    kind: ClassVar[str] = "reroll"

    @property
    def text(self) -> str:
        new = tuple(d for d in self.dice if d.id in self.rerolled)
        was = f" (was {_values_text(self.replaced)})" if self.replaced else ""
        return (f"re-roll settled: {_values_text(new)}{was}; dice now "
                f"{_values_text(self.dice)}{self._triples_text()}"
                f"{_needs_text(self.dice, self.needs_player)}{_check_text(self.dice, self.check)}")

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "rerolled": list(self.rerolled),
                "replaced": [d.to_json() for d in self.replaced]}


@dataclass(frozen=True)
class DieNudged(TrackerEvent):
    """A settled die turned onto another face without being rolled (``previous`` -> ``die``)."""

    die: SettledDie | None = None
    previous: int | None = None
    check: tuple[int, ...] = ()
    kind: ClassVar[str] = "nudged"

    @property
    def text(self) -> str:
        assert self.die is not None
        before = "?" if self.previous is None else self.previous
        needs = _needs_text((self.die,), (self.die.id,) if self.die.value is None else ())
        check = _check_text((self.die,), self.check)
        return f"die {self.die.id} nudged: {before} -> {self.die.label}{needs}{check}"

    def _fields(self) -> dict[str, Any]:
        return {"die": None if self.die is None else self.die.to_json(),
                "previous": self.previous, "check": list(self.check)}


@dataclass(frozen=True)
class _CardEvent(TrackerEvent):
    card: str = ""
    layout: str = ""
    name: str = ""  # the card as players say it ("Ann, card 1"); texts say the id without

    def _fields(self) -> dict[str, Any]:
        return {"card": self.card, "layout": self.layout}

    @property
    def _card_said(self) -> str:
        return self.name or f"card {self.card}"

    def _words(self, element: str) -> str:
        """``element`` (``"line a-b"``, ``"candle c"``, ``"top k"``, ``"circle of top k"``)
        in a player's words."""
        if element.startswith("circle of "):
            return f"circle of {self._words(element.removeprefix('circle of '))}"
        try:
            return load_layout(self.layout).element_name(element)
        except (BadInput, DataFileError):
            return element


@dataclass(frozen=True)
class LineDrawn(_CardEvent):
    """A new line between candles ``a`` < ``b``."""

    a: int = 0
    b: int = 0
    kind: ClassVar[str] = "line"

    @property
    def text(self) -> str:
        return f"new {self._words(f'line {self.a}-{self.b}')} on {self._card_said}"

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "line": [self.a, self.b]}


@dataclass(frozen=True)
class CandleCrossed(_CardEvent):
    """Candle ``candle`` (index 0-11 of the layout) was crossed out."""

    candle: int = 0
    kind: ClassVar[str] = "crossed"

    @property
    def text(self) -> str:
        return f"{self._words(f'candle {self.candle}')} crossed on {self._card_said}"

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "candle": self.candle}


@dataclass(frozen=True)
class DigitWritten(_CardEvent):
    """A digit appeared in top box ``box`` (0-6); ``previous`` is the digit it replaced."""

    box: int = 0
    value: int = 0
    circled: bool = False
    previous: int | None = None
    kind: ClassVar[str] = "digit"

    @property
    def text(self) -> str:
        circled = " (circled)" if self.circled else ""
        was = f" (was {self.previous})" if self.previous is not None else ""
        return (f"digit {self.value} written in {self._words(f'top {self.box}')}{circled}{was} "
                f"on {self._card_said}")

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "box": self.box, "value": self.value,
                "circled": self.circled, "previous": self.previous}


@dataclass(frozen=True)
class DigitCircled(_CardEvent):
    """The digit already in top box ``box`` was circled (it is wild on that card now)."""

    box: int = 0
    value: int = 0
    kind: ClassVar[str] = "circled"

    @property
    def text(self) -> str:
        return (f"digit {self.value} circled in {self._words(f'top {self.box}')} "
                f"on {self._card_said}")

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "box": self.box, "value": self.value}


@dataclass(frozen=True)
class Erased(_CardEvent):
    """Elements (``"line a-b"``, ``"candle c"``, ``"top k"``, or ``"circle of top k"`` when
    only a digit's circle went) were wiped off a card; ``wiped`` when nothing is left on it."""

    elements: tuple[str, ...] = ()
    wiped: bool = False
    kind: ClassVar[str] = "erased"

    @property
    def text(self) -> str:
        if self.wiped:
            return f"{self._card_said} wiped"
        return f"erased {', '.join(map(self._words, self.elements))} on {self._card_said}"

    def _fields(self) -> dict[str, Any]:
        return {**super()._fields(), "elements": list(self.elements), "wiped": self.wiped}
