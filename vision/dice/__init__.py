"""The dice reader: real d6 top-face values and body colours from a camera frame.

>>> from vision.dice import DiceConfig, read_dice   # doctest: +SKIP
>>> read_dice(frame).to_json()                      # doctest: +SKIP
{"dice": [{"value": 5, "color": "black", "bbox": [...], "confidence": 0.99, "state": "flat"}],
 "hand": false}
"""

from __future__ import annotations

from vision.dice.reader import CLASSES, DiceConfig, die_color, read_dice

__all__ = ["CLASSES", "DiceConfig", "die_color", "read_dice"]
