"""The bundled demo: a short table scene the project renders itself, played when no camera is given.

``demo.mp4`` (960x540, 10 fps, 20 s, MPEG-4 part 2, loops seamlessly) shows a Doom Cat turn --
three white dice settle on 3 5 5, a hand writes 5 in top box 0 of sigil card A, draws line 2-7
and crosses candle 4 -- then a Doom Machine round: the five black dice of a new run settle on
1 2 3 4 6, the 1 is re-rolled into a 5, the dice are cleared and the card is wiped.
``demo.json`` is its ground truth, made by ``make_demo.py`` (which needs not be run: both files
are committed).

API::

    from companion.demo import demo_source_path, expected_events, truth_frames
    from vision.sources import SourceConfig, open_source

    source = open_source(str(demo_source_path()), SourceConfig(loop=True))   # the demo loops
    for e in expected_events():        # what a perfect reader + tracker emit, once per loop
        e.kind, e.text, e.t_from, e.t_until   # "roll", "roll settled: 3 5 5", 0.5, 3.8
    for f in truth_frames():           # the true reading of every frame of one loop
        f.index, f.t, f.dice, f.sigil, f.hand   # DiceReading, SigilState (with unknown), bool

The tracker events' card id is :data:`DEMO_CARD_ID` (``"A"``, the layout of the card). Event
times are seconds from the start of a loop, as frame times of a source that plays the file at
10 fps: the ``Frame.t`` of loop ``n`` is ``n * duration`` later. A window runs from the start of
the action (a reader may count a cross once its first stroke is down) to a second after the next
action starts, so that a pipeline reading one frame in three still lands inside it.
``python -m companion.demo.check_readers`` plays the demo through the real readers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from companion.datafiles import read_json
from vision.readings import DiceReading, Die, SigilState

__all__ = [
    "DEMO_CARD_ID", "DEMO_DIR", "ExpectedEvent", "TruthFrame", "demo_description",
    "demo_source_path", "expected_events", "truth_frames",
]

DEMO_DIR = Path(__file__).resolve().parent
DEMO_CARD_ID = "A"


def demo_source_path() -> Path:
    """The demo video (pass ``str()`` of it to :func:`vision.sources.open_source`)."""
    return DEMO_DIR / "demo.mp4"


@lru_cache(maxsize=1)
def _doc() -> dict[str, Any]:
    return read_json(DEMO_DIR / "demo.json")   # damaged: DataFileError naming line, column


def demo_description() -> dict[str, Any]:
    """The scene without its per-frame truth: ``fps``, ``size``, ``frames``, ``duration_s``,
    ``card`` (id, layout, corners in pixels), ``timeline`` and ``events`` (as JSON)."""
    return {k: v for k, v in _doc().items() if k != "truth"}


@dataclass(frozen=True)
class ExpectedEvent:
    """An event a reader + tracker emit once per loop, between ``t_from`` and ``t_until``
    seconds after the loop's start."""

    kind: str
    text: str
    t_from: float
    t_until: float

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "t_from": self.t_from,
                "t_until": self.t_until}


@dataclass(frozen=True, eq=False)
class TruthFrame:
    """The true reading of one frame: dice (hidden ones left out), the card's state (elements
    under the hand or being drawn in ``unknown``) and whether a hand is in view."""

    index: int
    t: float
    dice: DiceReading
    sigil: SigilState
    hand: bool


def expected_events() -> tuple[ExpectedEvent, ...]:
    return tuple(ExpectedEvent(e["kind"], e["text"], float(e["t_from"]), float(e["t_until"]))
                 for e in _doc()["events"])


def truth_frames() -> Iterator[TruthFrame]:
    doc = _doc()
    source = str(DEMO_DIR / "demo.json")
    for i, frame in enumerate(doc["truth"]):
        dice = DiceReading(tuple(
            Die(d["value"], d["color"], tuple(d["bbox"]), 1.0, d["state"])  # type: ignore[arg-type]
            for d in frame["dice"]))
        yield TruthFrame(i, i / doc["fps"], dice,
                         SigilState.from_json(frame["sigil"], source=source), bool(frame["hand"]))
