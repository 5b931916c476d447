"""Straightened strips along every candle pair's path, and the learned band classifier.

A strip is the card's maps (ink relative to the print contrast, hidden, glare, printed
artwork too dark to measure on) resampled along one centre-line hypothesis of a candle pair
(straight, or a bow round the candles in the way; :func:`vision.sigil.reader._bows`), from
``STRIP_EXT_MM`` inside the first candle's outline to as far inside the second's (less for
candles closer than any the model was trained on: :func:`strip_extension`), and
``STRIP_HALF_MM`` to each side: a fixed ``(CHANNELS, STRIP_LEN, STRIP_LANES)`` array whatever
the layout. The band model (``models/sigil_bands/bands.onnx``, trained by
``models/sigil_bands/train.py`` on strips of rendered photos) scores each strip "a pen line
joins these two candles"; its scores still go through the card's one adaptive threshold.
Because it only ever sees strips, it does not depend on a layout's design (pairs closer than
any it was trained on are given strips at the scale it knows: :func:`strip_extension`).

Convention: card geometry in mm (origin top-left); strips are sampled in rectified pixels
``(x * s, y * s)``; a strip's rows run from candle ``a`` to candle ``b`` (a < b), its columns
from the right of that direction to its left (lanes at offsets ``-STRIP_HALF_MM`` ..
``+STRIP_HALF_MM`` along the left normal).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision.onnxmodel import onnx_session

__all__ = ["BAND_MODEL_PATH", "DISC_MODEL_PATH", "SCREEN_MODEL_PATH", "BandModel", "DiscModel",
           "StripGeometry", "chord", "disc_geometry", "sample_discs", "sample_strips",
           "stack_maps", "strip_extension", "strip_geometry"]

BAND_MODEL_PATH = Path(__file__).resolve().parents[2] / "models" / "sigil_bands" / "bands.onnx"
DISC_MODEL_PATH = BAND_MODEL_PATH.with_name("discs.onnx")
SCREEN_MODEL_PATH = BAND_MODEL_PATH.with_name("bands_screen.onnx")
SCREEN_LOGIT = -7.0  # strips the screen scores below this logit skip the band model
STRIP_LEN = 48
STRIP_LANES = 25
STRIP_HALF_MM = 6.0
STRIP_EXT_MM = 2.0
TRAINED_GAP_MM = 6.5
"""No two candle outlines of the designs the band model was trained on (A-D) are closer than
this (C's candles 6 and 7: 6.6 mm)."""
PEN_START_MM = 0.45
"""How far outside a candle's outline a player's line starts on average (the renderer the
band model learnt from draws it -0.2 to 1.1 mm out)."""
CHANNELS = 5  # ink, hidden, glare, blind, the pair's length (constant, /100 mm)


@dataclass(frozen=True)
class StripGeometry:
    """Sampling maps of every strip: one row per (pair, bow hypothesis)."""

    owner: np.ndarray      # (R,) pair index of each strip
    mapx: np.ndarray       # (R * STRIP_LEN, STRIP_LANES) float32 rectified px
    mapy: np.ndarray
    inside: np.ndarray     # (R, STRIP_LEN) bool: the row lies between the two outlines
    length_mm: np.ndarray  # (R,) the pair's centre distance
    step_mm: np.ndarray    # (R,) distance between consecutive rows along the chord


def strip_extension(gap_mm: float) -> float:
    """How far (mm) a strip reaches inside each candle's outline, for two outlines ``gap_mm``
    apart: :data:`STRIP_EXT_MM`, less for pairs closer than any the band model was trained on.

    A strip has a fixed number of rows, so a short pair's rows are finer and the few tenths of
    a millimetre between an outline and where the pen line starts take more of them: the model
    (which counts in rows) no longer sees the line join the candles. Below
    :data:`TRAINED_GAP_MM` the strip reaches less far inside the candles, so that a line
    starting :data:`PEN_START_MM` outside the outline starts at the same share of the strip as
    on the closest pair trained on.

    >>> strip_extension(20.0), strip_extension(TRAINED_GAP_MM), round(strip_extension(4.3), 2)
    (2.0, 2.0, 1.04)
    """
    if gap_mm >= TRAINED_GAP_MM:
        return STRIP_EXT_MM
    share = (STRIP_EXT_MM + PEN_START_MM) / (TRAINED_GAP_MM + 2 * STRIP_EXT_MM)
    return max(0.0, (share * gap_mm - PEN_START_MM) / (1 - 2 * share))


def chord(centres: np.ndarray, a: int, b: int) -> tuple[float, np.ndarray, np.ndarray]:
    """The straight chord from candle a's centre to candle b's (``centres``: mm, shape (N, 2)):
    its length (mm), its unit direction ``u`` and its left normal ``n`` = ``(-u_y, u_x)``, the
    frame a band's bows and lanes are measured in."""
    d = centres[b] - centres[a]
    length = float(np.hypot(*d))
    u = d / length
    return length, u, np.array([-u[1], u[0]])


def strip_geometry(centres: np.ndarray, radii: np.ndarray, pairs: list[tuple[int, int]],
                   bows: list[list[float]], px_per_mm: float) -> StripGeometry:
    """The strips of ``pairs`` (index ``p`` has the bow hypotheses ``bows[p]``, peak offsets in
    mm to the left normal of a -> b) for candles at ``centres`` (mm) with ``radii`` (mm); each
    reaches :func:`strip_extension` inside the two outlines."""
    s = px_per_mm
    rows = [(p, bow) for p in range(len(pairs)) for bow in bows[p]]
    R = len(rows)
    mapx = np.zeros((R, STRIP_LEN, STRIP_LANES), np.float32)
    mapy = np.zeros_like(mapx)
    inside = np.zeros((R, STRIP_LEN), bool)
    lengths = np.zeros(R)
    steps = np.zeros(R)
    lanes = np.linspace(-STRIP_HALF_MM, STRIP_HALF_MM, STRIP_LANES)
    for r, (p, bow) in enumerate(rows):
        a, b = pairs[p]
        length, u, n = chord(centres, a, b)
        ext = strip_extension(length - radii[a] - radii[b])
        t0, t1 = radii[a] - ext, length - radii[b] + ext
        ts = np.linspace(t0, t1, STRIP_LEN)
        x = ts / length
        centre = bow * 4 * x * (1 - x)
        # the bow's own normal, so that the lanes stay across the curved stroke
        slope = bow * 4 * (1 - 2 * x) / length
        tang = u[None, :] + slope[:, None] * n[None, :]
        tang /= np.linalg.norm(tang, axis=1, keepdims=True)
        nrm = np.stack([-tang[:, 1], tang[:, 0]], axis=1)
        base = centres[a][None, :] + ts[:, None] * u[None, :] + centre[:, None] * n[None, :]
        pts = base[:, None, :] + lanes[None, :, None] * nrm[:, None, :]
        mapx[r] = pts[..., 0] * s
        mapy[r] = pts[..., 1] * s
        inside[r] = (ts >= radii[a]) & (ts <= length - radii[b])
        lengths[r] = length
        steps[r] = (t1 - t0) / (STRIP_LEN - 1)
    owner = np.array([r[0] for r in rows], np.int64)
    return StripGeometry(owner, mapx.reshape(R * STRIP_LEN, STRIP_LANES),
                         mapy.reshape(R * STRIP_LEN, STRIP_LANES), inside, lengths, steps)


def stack_maps(ink: np.ndarray, hidden: np.ndarray, glare: np.ndarray, blind: np.ndarray,
               ) -> np.ndarray:
    """The four maps as the one float32 ``(H, W, 4)`` image strips and discs are sampled from:
    ``ink`` (already divided by the print contrast) clipped at 1.5, then hidden, glare and
    blind as 0/1."""
    return cv2.merge([cv2.min(ink.astype(np.float32, copy=False), 1.5),
                      hidden.astype(np.float32), glare.astype(np.float32),
                      blind.astype(np.float32)])


def _remap_maps(mapx: np.ndarray, mapy: np.ndarray, stack: np.ndarray) -> np.ndarray:
    """The stacked maps (:func:`stack_maps`) sampled at ``(mapx, mapy)`` (card pixels),
    float32 ``(*mapx.shape, 4)``; outside the card counts as hidden."""
    return cv2.remap(stack, mapx, mapy, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0.0, 1.0, 0.0, 0.0))


def sample_strips(geo: StripGeometry, stack: np.ndarray) -> np.ndarray:
    """The strips, float32 ``(R, CHANNELS, STRIP_LEN, STRIP_LANES)``, from the card's stacked
    maps (:func:`stack_maps`). Outside the card counts as hidden."""
    samp = _remap_maps(geo.mapx, geo.mapy, stack)
    R = len(geo.owner)
    out = np.empty((R, CHANNELS, STRIP_LEN, STRIP_LANES), np.float32)
    out[:, :4] = samp.reshape(R, STRIP_LEN, STRIP_LANES, 4).transpose(0, 3, 1, 2)
    out[:, 4] = (geo.length_mm / 100.0).astype(np.float32)[:, None, None]
    return out


class _LogitModel:
    """An ONNX file of the reader giving one logit per item: ``path``, whether it is there, and
    its logits for a batch (the session made once per process by :func:`onnx_session`)."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)

    def available(self) -> bool:
        return Path(self.path).is_file()

    @staticmethod
    def _logits(path: str, what: str, feed: str, batch: np.ndarray) -> np.ndarray:
        (logit,) = onnx_session(path, what).run(None, {feed: batch})
        return logit.reshape(-1)


class BandModel(_LogitModel):
    """The ONNX band classifier: ``strip`` (N, CHANNELS, STRIP_LEN, STRIP_LANES) -> ``line``
    (N, 1) logit "a pen line joins the strip's two candles". Loaded once, lazily.

    With a ``screen`` (``bands_screen.onnx``: a network about a fifth as dear, distilled from
    the band model's logits by ``models/sigil_bands/distill.py``), every strip goes through
    the screen first and only those it scores at least ``screen_logit`` go through the band
    model; the others (most of a card's: blank or crossed by other lines only) keep the
    screen's probability, under 0.001 (the band model's on such strips held out of the
    distillation: at most 0.023, far below where the card's threshold or the bookkeeping
    look). A missing screen file means every strip goes through the band model."""

    def __init__(self, path: str | Path = BAND_MODEL_PATH,
                 screen: str | Path | None = SCREEN_MODEL_PATH,
                 screen_logit: float = SCREEN_LOGIT) -> None:
        super().__init__(path)
        self.screen = None if screen is None else str(screen)
        self.screen_logit = screen_logit

    def predict(self, strips: np.ndarray) -> np.ndarray:
        """Probabilities (N,) that each strip holds a line joining its two candles."""
        if len(strips) == 0:
            return np.zeros((0,), np.float32)
        strips = strips.astype(np.float32, copy=False)
        if self.screen is None or not Path(self.screen).is_file():
            logit = self._logits(self.path, "sigil band model", "strip", strips)
        else:
            logit = self._logits(self.screen, "sigil band screen", "strip", strips)
            doubt = np.flatnonzero(logit >= self.screen_logit)
            if len(doubt):
                logit[doubt] = self._logits(self.path, "sigil band model", "strip",
                                            strips[doubt])
        return 1.0 / (1.0 + np.exp(-logit))


DISC_SIZE = 24
DISC_SPAN = 1.5   # a disc patch spans this many radii to each side of the candle's centre
DISC_CHANNELS = 4  # ink, hidden, glare, blind


def disc_geometry(centres: np.ndarray, radii: np.ndarray, px_per_mm: float,
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Sampling maps (12 * DISC_SIZE, DISC_SIZE) in rectified px of a square patch round every
    candle (``DISC_SPAN`` radii to each side), rows down the card, columns across."""
    g = np.linspace(-DISC_SPAN, DISC_SPAN, DISC_SIZE)
    mx = centres[:, 0, None, None] + radii[:, None, None] * g[None, None, :]
    my = centres[:, 1, None, None] + radii[:, None, None] * g[None, :, None]
    mx, my = np.broadcast_arrays(mx, my)
    n = len(centres)
    return ((mx * px_per_mm).astype(np.float32).reshape(n * DISC_SIZE, DISC_SIZE),
            (my * px_per_mm).astype(np.float32).reshape(n * DISC_SIZE, DISC_SIZE))


def sample_discs(maps_xy: tuple[np.ndarray, np.ndarray], stack: np.ndarray) -> np.ndarray:
    """The disc patches, float32 ``(12, DISC_CHANNELS, DISC_SIZE, DISC_SIZE)``, from the card's
    stacked maps (:func:`stack_maps`); outside the card counts as hidden."""
    mx, my = maps_xy
    samp = _remap_maps(mx, my, stack)
    n = mx.shape[0] // DISC_SIZE
    return np.ascontiguousarray(samp.reshape(n, DISC_SIZE, DISC_SIZE, 4).transpose(0, 3, 1, 2))


class DiscModel(_LogitModel):
    """The ONNX crossed-candle classifier: ``disc`` (N, DISC_CHANNELS, DISC_SIZE, DISC_SIZE)
    -> ``crossed`` (N, 1) logit. Loaded once, lazily."""

    def __init__(self, path: str | Path = DISC_MODEL_PATH) -> None:
        super().__init__(path)

    def predict(self, discs: np.ndarray) -> np.ndarray:
        """Probabilities (N,) that each candle is crossed out."""
        if len(discs) == 0:
            return np.zeros((0,), np.float32)
        logit = self._logits(self.path, "sigil disc model", "disc",
                             discs.astype(np.float32, copy=False))
        return 1.0 / (1.0 + np.exp(-logit))
