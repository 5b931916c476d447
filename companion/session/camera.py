"""Build the live loop from what is installed: a frame source, the readers, the tracker.

Each piece is imported when it exists; a missing one is named in the loop's ``unavailable``
map (the live page lists them) and the rest runs without it.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from companion.session.hub import Hub
from companion.session.live import LiveLoop, draw_dice


def _try(module: str) -> tuple[Any, str]:
    try:
        return importlib.import_module(module), ""
    except ImportError as exc:
        return None, f"not installed yet ({exc.name or exc})"


class Processor:
    """Runs the readers and the tracker on a frame and routes the tracker's events."""

    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self.unavailable: dict[str, str] = {}
        dice, why = _try("vision.dice")
        self.read_dice = getattr(dice, "read_dice", None) if dice else None
        if self.read_dice is None:
            self.unavailable["dice reader"] = why or "vision.dice has no read_dice"

    def __call__(self, frame: np.ndarray) -> tuple[dict[str, Any], np.ndarray]:
        readings: dict[str, Any] = {}
        overlay = frame.copy()
        if self.read_dice is not None:
            reading = self.read_dice(frame)
            dice = reading.to_json()["dice"]
            readings["dice"] = dice
            draw_dice(overlay, dice)
        return readings, overlay


def make_live(source: str | None, hub: Hub) -> LiveLoop:
    """The live loop for a ``--source`` spec (None: the bundled demo; "none": no camera)."""
    processor = Processor(hub)
    if source == "none":
        return LiveLoop(None, processor, hub.live_bus, unavailable=processor.unavailable,
                        placeholder=["No camera source", "live view is off for this server"])
    sources, why = _try("vision.sources")
    if sources is None:
        processor.unavailable["camera pipeline"] = why
        return LiveLoop(None, processor, hub.live_bus, unavailable=processor.unavailable,
                        placeholder=["Camera pipeline not installed yet",
                                     "the games can still be played by clicks"])
    return LiveLoop(None, processor, hub.live_bus, unavailable=processor.unavailable)
