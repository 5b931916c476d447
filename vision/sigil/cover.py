"""The learned cover map: which parts of a rectified card a hand, a sleeve or strong glare hides.

``models/sigil_cover/cover.onnx`` (trained by ``models/sigil_cover/train.py`` on photos the
project renders, targets from the renderer's own hidden masks) maps
:func:`vision.sigil.ink.cover_input` (the photo's colour and the blank card's, ``COVER_CHANNELS``
x h x w at ``COVER_PX_PER_MM``) to the probability that each cell is covered. It compares the
photo with the blank card around each cell (about 30 mm of context), so a shadow, which leaves
the print visible, is not a hand, and a pale hand, which hides it, is. Without the file the
reader falls back to the colour and darkness rule of :func:`vision.sigil.ink.card_maps`.

Convention: arrays are ``[row, col]`` = ``[y, x]`` on the rectified card, 1 cell per
``1 / COVER_PX_PER_MM`` mm.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vision.onnxmodel import onnx_session

__all__ = ["COVER_MODEL_PATH", "CoverModel"]

COVER_MODEL_PATH = (Path(__file__).resolve().parents[2] / "models" / "sigil_cover"
                    / "cover.onnx")


class CoverModel:
    """The ONNX cover model: ``cover_in`` (1, COVER_CHANNELS, h, w) -> ``cover`` (1, 1, h, w)
    logits. Loaded once per process, lazily."""

    def __init__(self, path: str | Path = COVER_MODEL_PATH) -> None:
        self.path = str(path)

    def available(self) -> bool:
        return Path(self.path).is_file()

    def __call__(self, inputs: np.ndarray) -> np.ndarray:
        """Probabilities (h, w) that each cell of ``inputs`` (COVER_CHANNELS, h, w) is
        covered."""
        sess = onnx_session(self.path, "sigil cover model")
        (logit,) = sess.run(None, {"cover_in": inputs[None].astype(np.float32, copy=False)})
        return 1.0 / (1.0 + np.exp(-logit[0, 0]))
