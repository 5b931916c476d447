"""The tracker: per-frame readings in, settled events out (pure logic: no threads, no clock).

- :class:`DiceTracker` (:mod:`companion.tracker.dice`): dice readings -> roll, re-roll and
  nudge events, per-die states rolling / settled / handling / nudged.
- :class:`SigilTracker` (:mod:`companion.tracker.sigil`): sigil readings per card -> new line,
  candle crossed, digit written / circled, erased events; unknown elements filled from other
  frames.
- Events (:mod:`companion.tracker.events`) are frozen dataclasses with ``kind``, ``t``, ``text``
  and ``to_json()``.

Both trackers take the frame time ``t`` (seconds, never decreasing) from the frame source
(:attr:`vision.sources.Frame.t`) and every threshold from a config dataclass with defaults.
"""

from __future__ import annotations

from companion.tracker.dice import DiceTracker, DiceTrackerConfig, TrackedDie
from companion.tracker.events import (
    CandleCrossed,
    DieNudged,
    DigitCircled,
    DigitWritten,
    Erased,
    LineDrawn,
    RerollSettled,
    RollSettled,
    SettledDie,
    TrackerEvent,
)
from companion.tracker.sigil import SigilTracker, SigilTrackerConfig

__all__ = [
    "CandleCrossed", "DiceTracker", "DiceTrackerConfig", "DieNudged", "DigitCircled",
    "DigitWritten", "Erased", "LineDrawn", "RerollSettled", "RollSettled", "SettledDie",
    "SigilTracker", "SigilTrackerConfig", "TrackedDie", "TrackerEvent",
]
