"""The sigil card reader: photo in, :class:`SigilReading` (state, pose, evidence) out.

Steps (every threshold lives in :class:`SigilConfig`):

1. find the card: the layout's ArUco markers, else its outline (largest card-shaped convex
   quadrilateral; the rotation that best matches the blank card's artwork);
2. rectify it to ``px_per_mm`` and turn it into ink / hidden / glare maps
   (:mod:`vision.sigil.ink`), the printed artwork subtracted;
3. lines: for each of the 66 candle pairs, the best continuous path through the pair's band
   (a dynamic programme that lets a hand-drawn stroke wobble and curve round a candle), and its
   strength: the ink level that ``1 - line_quantile`` of the band's length reaches. One
   adaptive threshold over the 66 strengths (first large gap, with floors against ghosts);
4. crossed candles: ink over each candle disc, one adaptive threshold over the 12;
5. top boxes: empty, or digit 1-6 and circled (:mod:`vision.sigil.digits`);
6. what is hidden (a hand, outside the photo) or washed out by glare and not otherwise clear
   goes to ``unknown``; never to "not drawn";
7. the card's bookkeeping (:mod:`vision.sigil.bookkeeping`): each turn writes a number,
   crosses out a candle showing it and draws a line; where the models' readings break those
   counts and a cheap, clear change in their own probabilities restores them, it is taken
   and named in the reading's notes.

Convention: image points are ``(x, y)`` pixels, origin top-left; card geometry in mm, origin at
the card's top-left corner; the pose's homography maps card mm to image px.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache, reduce
from typing import Any

import cv2
import numpy as np

from companion.errors import BadInput
from vision.cache import per_object
from vision.imageio import as_bgr
from vision.readings import N_TOP_BOXES, SigilState, TopBox
from vision.sigil import digits as dg
from vision.sigil.bands import (
    BAND_MODEL_PATH,
    DISC_MODEL_PATH,
    SCREEN_LOGIT,
    SCREEN_MODEL_PATH,
    STRIP_HALF_MM,
    STRIP_LANES,
    BandModel,
    DiscModel,
    StripGeometry,
    chord,
    disc_geometry,
    sample_discs,
    sample_strips,
    strip_geometry,
)
from vision.sigil.bookkeeping import settle, settle_circles, settle_empty, settle_lines
from vision.sigil.cover import COVER_MODEL_PATH, CoverModel
from vision.sigil.edges import EdgeConfig
from vision.sigil.geometry import CardGeometry, card_geometry, photo_px_per_mm, project
from vision.sigil.ink import CardMaps, Reference, card_maps, prepare_reference, print_mask
from vision.sigil.pose import Pose, PoseConfig, find_pose, marker_ids_of, shows_markers
from vision.sigil.pose import rectify as _rectify
from vision.sigil.threshold import first_large_gap

__all__ = ["SigilConfig", "SigilReading", "card_samples", "read_sigil"]


@dataclass(frozen=True)
class SigilConfig:
    """Every threshold of the reader. Ink levels are relative to the printed artwork's
    contrast in the same photo (1.0 = as dark as the printed outlines)."""

    px_per_mm: float = 4.0
    # bands between candles
    band_step_mm: float = 0.6
    band_half_width_mm: float = 2.0
    band_bow_share: float = 0.065
    band_bow_extra_mm: float = 1.5
    band_lanes: int = 25
    curve_touch_mm: float = 1.2
    graze_mm: float = 1.0
    end_tol_mm: float = 1.8
    end_mm: float = 2.5
    end_share: float = 0.7
    end_anchor: float = 0.5
    curve_margin_mm: float = 2.1
    curve_squeeze_mm: float = 2.5
    band_smooth_mm: float = 2.0
    move_penalty: float = 0.08
    wobble_mm: float = 0.9
    explain_radius_mm: float = 1.2
    min_own_share: float = 0.35
    single_cover: float = 0.7
    end_radius_mm: float = 0.8
    end_cover: float = 0.8
    via_mm: float = 2.5
    line_quantile: float = 0.15
    line_floor: float = 0.32
    line_ceiling: float = 0.75
    line_min_jump: float = 0.12
    line_default: float = 0.45
    line_max_gap_mm: float = 5.0
    min_visible: float = 0.5
    # crossed candles
    disc_fraction: float = 0.85
    cross_angles: int = 12
    cross_points: int = 21
    cross_offset_mm: float = 0.4
    cross_level: float = 0.5
    cross_max_hidden: float = 0.3
    cross_floor: float = 0.4
    cross_ceiling: float = 0.6
    cross_min_jump: float = 0.1
    cross_default: float = 0.4
    # top boxes
    box_ink_level: float = 0.45
    box_min_ink_mm2: float = 0.6
    box_inset_px: int = 4
    box_max_hidden: float = 0.1
    # a box more than this share of it (grown by box_outside_margin_mm, where a ring goes) outside
    # the photo is unknown: a digit cut short by the frame's edge can read as another (a 2
    # without its top as a 5), an empty box may hold writing out of view (the renderer labels
    # such a box hidden by the same rule)
    box_max_outside: float = 0.1
    box_outside_margin_mm: float = 1.0
    box_glare_print: float = 0.6
    # faint writing (a pale pen under glare): too little ink over box_ink_level, but this much
    # over box_faint_level above the box's median in its centre (box_faint_inset_px inside its
    # printed edge, out of reach of the edge's residue): read, but only with
    # digit_faint_min_prob, else unknown
    box_faint_level: float = 0.2
    box_faint_inset_px: int = 8
    box_faint_mm2: float = 2.0
    # ... above the box's background: its inner area opened with a disc this wide (a pen
    # stroke is narrower, a shadow or a smudge wider; a circled digit can cover more than half
    # of the box, so that a level of the whole box, such as its median, is ink)
    box_faint_open_mm: float = 3.0
    # boxes are written from the left: a box read only by the faint-ink test beyond a box
    # read empty is unknown (an erased game's digit, or a pale one after a pale digit missed)
    box_fill_order: bool = True
    circle_prob: float = 0.5
    digit_min_prob: float = 0.45
    digit_faint_min_prob: float = 0.8
    # hidden / glare
    hand_chroma: float = 0.10
    hand_dark: float = 0.45
    glare_gain: float = 1.22
    spread_photo_px: float = 1.3
    blob_mm: float = 6.0
    # bad input
    min_card_px: float = 60.0
    min_contrast: float = 0.12
    pose: PoseConfig = field(default_factory=PoseConfig)
    model_path: str = str(dg.MODEL_PATH)
    # the learned band classifier (lines); without its file, the hand-made evidence decides
    band_model_path: str = str(BAND_MODEL_PATH)
    use_band_model: bool = True
    # the cheap screen in front of it (None: every strip through the band model), and the
    # logit under which a strip it screens skips the band model (vision.sigil.bands)
    band_screen_path: str | None = str(SCREEN_MODEL_PATH)
    band_screen_logit: float = SCREEN_LOGIT
    # the models give probabilities: a mark below 0.5 is more likely not drawn, whatever gap
    # the card's other marks leave (0.3 let strips of 0.3-0.5 in: extra lines and crosses)
    band_floor: float = 0.5
    band_ceiling: float = 0.7
    band_min_jump: float = 0.25
    band_default: float = 0.5
    band_max_hidden: float = 0.25
    # a pair more hidden than that is still "no line" when a visible stretch of its path this
    # long holds no ink (below band_clean_level) within band_clean_half_mm of every centre
    # line hypothesis: a pen line joins the two candles end to end
    band_clean_mm: float = 6.0
    band_clean_level: float = 0.2
    band_clean_half_mm: float = 4.5
    band_clean_max_fade: float = 1.5  # ... where the print is not washed out (CardMaps.fade)
    # the learned crossed-candle classifier (same thresholds on its probabilities)
    disc_model_path: str = str(DISC_MODEL_PATH)
    disc_max_hidden: float = 0.3
    # the learned cover map (what a hand or strong glare hides); without its file, or without
    # a blank-card reference, the colour and darkness rule of vision.sigil.ink decides
    cover_model_path: str = str(COVER_MODEL_PATH)
    use_cover_model: bool = True
    cover_level: float = 0.5
    cover_min_mm: float = 3.0
    cover_island_mm2: float = 120.0
    # another card lying over this one: its straight edge and the print missing beyond it
    # (vision.sigil.edges); what it covers is hidden
    edges: EdgeConfig = field(default_factory=EdgeConfig)
    # a card found by its outline with nothing written on it: another card of the layout is
    # looked for, and read instead when it holds writing (a blank card over the card in play)
    second_card: bool = True
    # the card's bookkeeping (bookkeeping.py): each turn writes a number, crosses out a candle
    # showing it and draws one line. When the models' readings break the first count, the
    # cheapest readings that keep it (in the models' own probabilities, nats) are taken if they
    # cost at most match_max_cost, no element is overruled by more than match_max_flip, and
    # the next best costs match_margin more; when numbers and crosses agree and the lines are
    # one short (one over), the strongest other pair if at least match_line_min (the weakest
    # line if at most match_line_max) is added (dropped), match_margin clear of the next.
    # Off for games whose familiars break the counts (Owl, Rat, Toad, Raven).
    match_written_crossed: bool = True
    match_max_cost: float = 6.0
    match_max_flip: float = 4.0
    match_margin: float = 1.0
    match_top_n: int = 6
    match_line_min: float = 0.1
    match_line_max: float = 0.9
    # a card may be caught between writing its last number and crossing out its candle; that
    # reading costs match_mid_turn nats (bookkeeping.settle's mid_turn: the prior odds)
    match_mid_turn: float = 1.7


@dataclass(frozen=True)
class SigilReading:
    """The reader's result: the :class:`SigilState`, the pose, and the evidence behind it.

    ``line_strength`` maps each candle pair ``(a, b)`` to its strength (None when hidden);
    ``line_threshold`` is the card's adaptive threshold; likewise for candles. ``boxes``
    holds per top box the digit probabilities and the circle probability.
    """

    state: SigilState
    pose: Pose
    line_strength: dict[tuple[int, int], float | None]
    line_threshold: float
    cross_strength: tuple[float | None, ...]
    cross_threshold: float
    boxes: tuple[dict[str, Any], ...]
    contrast: float
    notes: tuple[str, ...] = field(default=())

    def to_json(self, *, evidence: bool = True) -> dict[str, Any]:
        doc = self.state.to_json()
        if evidence:
            doc["pose"] = self.pose.to_json()
            doc["evidence"] = {
                "contrast": round(self.contrast, 3),
                "line_threshold": round(self.line_threshold, 3),
                "lines": {f"{a}-{b}": None if s is None else round(s, 3)
                          for (a, b), s in self.line_strength.items()},
                "cross_threshold": round(self.cross_threshold, 3),
                "candles": [None if s is None else round(s, 3) for s in self.cross_strength],
                "top": list(self.boxes)}
            doc["notes"] = list(self.notes)
        return doc


# ---------------------------------------------------------------------------- band geometry

@dataclass(frozen=True)
class _Bands:
    """Sampling grids of the candle-pair bands: one row per (pair, bow hypothesis)."""

    pairs: tuple[tuple[int, int], ...]
    owner: np.ndarray     # (P,) the pair index of each row
    mapx: np.ndarray      # (P*T, K) float32 rectified px
    mapy: np.ndarray
    valid: np.ndarray     # (P, T) bool: sample inside the pair's band (not padding)
    blocked: np.ndarray   # (P, T, K) bool: sample over another candle's disc
    tol_lanes: np.ndarray  # (P,) wobble tolerance around the fitted stroke, in lanes
    end_ok: np.ndarray    # (P, K) bool: lanes where a line may start/end (near the chord)
    last: np.ndarray      # (P,) index of the last sample of the band
    T: int
    K: int


def _detour(cs: np.ndarray, rs: np.ndarray, a: int, b: int, clearance: float,
            squeeze: float = 0.0) -> list[float]:
    """The gentlest parabolic bows (peak offset in mm, + to the left normal of a -> b) of a
    line from candle a to candle b that passes every other candle at least ``clearance`` mm
    from its outline (offsets measured across the chord): the gentlest, and the gentlest on
    the other side when it is nearly as gentle, or when the gentlest threads between two
    candles (the bows clearing both span less than ``squeeze`` mm): a player wanting more room
    goes round the other side."""
    length, u, n = chord(cs, a, b)
    forbidden = []
    for c in range(len(cs)):
        if c in (a, b):
            continue
        rel = cs[c] - cs[a]
        t_c = float(rel @ u) / length
        if not 0.0 < t_c < 1.0:
            continue
        e, k, reach = float(rel @ n), 4 * t_c * (1 - t_c), rs[c] + clearance
        forbidden.append(((e - reach) / k, (e + reach) / k))
    options = [0.0] + [v for iv in forbidden for v in iv]
    allowed = [bw for bw in options if not any(lo + 1e-6 < bw < hi - 1e-6 for lo, hi in forbidden)]
    if not allowed:
        return [0.0]
    best = min(allowed, key=abs)
    # the room on the gentlest's side: up to where the next candle's forbidden bows begin
    beyond = [lo - best if best >= 0 else best - hi for lo, hi in forbidden
              if (lo >= best - 1e-6 if best >= 0 else hi <= best + 1e-6)]
    squeezed = bool(beyond) and min(beyond) < squeeze
    other = [bw for bw in allowed if bw * best < 0]
    out = [best]
    if other:
        alt = min(other, key=abs)
        if abs(alt) < 1.3 * abs(best) or squeezed:
            out.append(alt)
    return out


def _bows(cs: np.ndarray, rs: np.ndarray, a: int, b: int, cfg: SigilConfig,
          must_curve: bool = False) -> list[float]:
    """Band centre-line hypotheses for pair a-b, as the peak offset (mm, + to the left normal)
    of a parabolic bow: 0 (straight) when the chord clears every other candle; else a player
    curves round the candles in the way: the gentlest bow clearing them all, and the bow
    passing the candle nearest the chord at a clearance."""
    length, u, n = chord(cs, a, b)
    cands: list[tuple[float, float]] = []
    for c in range(len(cs)):
        if c in (a, b):
            continue
        rel = cs[c] - cs[a]
        t_c = float(rel @ u) / length
        e = float(rel @ n)
        if 0.0 < t_c < 1.0 and abs(e) < rs[c] + cfg.curve_touch_mm:
            t_c = min(max(t_c, 0.15), 0.85)
            need = rs[c] + cfg.curve_margin_mm - abs(e)
            bow = -float(np.copysign(max(0.0, need) / (4 * t_c * (1 - t_c)), e if e else 1.0))
            cands.append((abs(e) - rs[c], bow))
    if not cands and not must_curve:
        return [0.0]
    out = _detour(cs, rs, a, b, cfg.curve_margin_mm, cfg.curve_squeeze_mm)
    if cands:
        nearest = min(cands)[1]
        if all(abs(nearest - o) >= 1.5 for o in out):
            out.append(nearest)
    return out


@lru_cache(maxsize=16)
def _bands(geom: CardGeometry, cfg: SigilConfig) -> _Bands:
    s = cfg.px_per_mm
    cs = np.array([c.center for c in geom.candles], np.float64)
    rs = np.array([c.radius for c in geom.candles], np.float64)
    pairs = geom.pairs
    rows = [(p, bow) for p, (a, b) in enumerate(pairs)
            for bow in _bows(cs, rs, a, b, cfg, (a, b) in geom.must_curve)]
    lengths = [np.hypot(*(cs[b] - cs[a])) - rs[a] - rs[b] for a, b in pairs]
    T = int(np.ceil(max(lengths) / cfg.band_step_mm)) + 1
    K = cfg.band_lanes
    P = len(rows)
    mapx = np.full((P, T, K), -10.0, np.float32)
    mapy = np.full((P, T, K), -10.0, np.float32)
    valid = np.zeros((P, T), bool)
    blocked = np.zeros((P, T, K), bool)
    tol = np.zeros(P)
    end_ok = np.zeros((P, K), bool)
    last = np.zeros(P, np.int64)
    lanes = np.linspace(-1.0, 1.0, K)
    for p, (pair_index, bow) in enumerate(rows):
        a, b = pairs[pair_index]
        length, u, n = chord(cs, a, b)
        half = cfg.band_half_width_mm + cfg.band_bow_share * length
        if bow:
            half += cfg.band_bow_extra_mm
        tol[p] = cfg.wobble_mm / (2 * half / (K - 1))
        end_ok[p] = np.abs(lanes * half) <= max(cfg.end_tol_mm, half / (K - 1))
        t0, t1 = rs[a], length - rs[b]
        nt = int(np.floor((t1 - t0) / cfg.band_step_mm)) + 1
        last[p] = nt - 1
        ts = t0 + np.arange(nt) * cfg.band_step_mm
        centre = bow * 4 * (ts / length) * (1 - ts / length)
        offs = centre[:, None] + (lanes * half)[None, :]                    # (nt, K)
        pts = (cs[a][None, None, :] + ts[:, None, None] * u[None, None, :]
               + offs[..., None] * n[None, None, :])
        mapx[p, :nt] = pts[..., 0] * s
        mapy[p, :nt] = pts[..., 1] * s
        valid[p, :nt] = True
        for c in range(len(cs)):
            if c in (a, b):
                continue
            dist = np.hypot(pts[..., 0] - cs[c][0], pts[..., 1] - cs[c][1])
            blocked[p, :nt] |= dist < rs[c] - cfg.graze_mm
    owner = np.array([r[0] for r in rows], np.int64)
    return _Bands(pairs, owner, mapx.reshape(P * T, K), mapy.reshape(P * T, K), valid, blocked,
                  tol, end_ok, last, T, K)


@lru_cache(maxsize=16)
def _strip_geo(geom: CardGeometry, cfg: SigilConfig) -> StripGeometry:
    cs = np.array([c.center for c in geom.candles], np.float64)
    rs = np.array([c.radius for c in geom.candles], np.float64)
    pairs = list(geom.pairs)
    bows = [_bows(cs, rs, a, b, cfg, (a, b) in geom.must_curve) for a, b in pairs]
    return strip_geometry(cs, rs, pairs, bows, cfg.px_per_mm)


def _over_lanes(op: np.ufunc, a: np.ndarray, lanes: range) -> np.ndarray:
    """``op`` (``np.add``, ``np.maximum``) of ``a``'s values over the given lanes (its last
    axis), lane by lane: the same values, in the same order, as NumPy's reduction over so
    short an axis, at a fraction of its cost."""
    return reduce(op, (a[..., k] for k in lanes))


def _strips(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
            ) -> tuple[StripGeometry, np.ndarray, np.ndarray]:
    """Every pair's strips (:mod:`vision.sigil.bands`) and, per strip, the share of its
    centre line between the outlines that is hidden (a hand, outside the photo) and the share
    washed out by glare."""
    geo = _strip_geo(geom, cfg)
    strips = sample_strips(geo, maps.stack)
    mid = STRIP_LANES // 2
    # the hidden and glare channels' mean over the five middle lanes, (R, 2, L)
    centre = _over_lanes(np.add, strips[:, 1:3], range(mid - 2, mid + 3)) / np.float32(5)
    n_in = np.maximum(geo.inside.sum(axis=1), 1)
    hid = ((centre[:, 0] > 0.5) & geo.inside).sum(axis=1) / n_in
    gl = ((centre[:, 1] > 0.5) & geo.inside).sum(axis=1) / n_in
    return geo, strips, np.stack([hid, gl], axis=1)


@lru_cache(maxsize=16)
def _disc_geo(geom: CardGeometry, s: float) -> tuple[np.ndarray, np.ndarray]:
    cs = np.array([c.center for c in geom.candles], np.float64)
    rs = np.array([c.radius for c in geom.candles], np.float64)
    return disc_geometry(cs, rs, s)


def _discs(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig) -> np.ndarray:
    """Every candle's disc patch (:func:`vision.sigil.bands.sample_discs`)."""
    return sample_discs(_disc_geo(geom, cfg.px_per_mm), maps.stack)


def card_samples(image: np.ndarray, layout: Any,
                 reference: np.ndarray | Sequence[np.ndarray] | None = None,
                 config: SigilConfig | None = None, *, others: Sequence[Any] = (),
                 ) -> dict[str, Any]:
    """What the learned classifiers see in a photo (for training them): ``pairs`` (the
    layout's candle pairs), ``owner`` (pair index of every strip), ``strips``, ``seen`` (their
    hidden and glare shares), ``discs`` (one patch per candle) and ``boxes`` (the top boxes'
    ink crops, as the digit reader gets them). Raises like
    :func:`read_sigil`."""
    cfg = config or SigilConfig()
    geom, _, maps, _ = _prepare(image, layout, reference, cfg, others, keep_cover_input=True)
    geo, strips, seen = _strips(maps, geom, cfg)
    v = np.clip(maps.relative_ink, 0, 1.5).astype(np.float32)
    boxes = np.stack([_box_crop(v, box, cfg.px_per_mm) for box in geom.top_boxes])
    return {"pairs": geom.pairs, "owner": geo.owner, "strips": strips, "seen": seen,
            "discs": _discs(maps, geom, cfg), "boxes": boxes, "cover_in": maps.cover_in,
            "hidden": maps.hidden}


def _best_paths(v: np.ndarray, penalty: float) -> np.ndarray:
    """For (P, T, K) values, the lane index of the best continuous path (lane changes of at
    most one per step, each costing ``penalty``) at every step: (P, T) ints. Forward and
    backward max-sum passes; the path's lane at t is the argmax of their sum."""
    P, T, K = v.shape

    vt = np.ascontiguousarray(v.transpose(1, 0, 2))          # (T, P, K)
    fwd = np.empty_like(vt)
    bwd = np.empty_like(vt)
    tmp = np.empty((P, K - 1), vt.dtype)

    def step(prev: np.ndarray, out: np.ndarray, here: np.ndarray) -> None:
        out[:] = prev
        np.subtract(prev[:, :-1], penalty, out=tmp)
        np.maximum(out[:, 1:], tmp, out=out[:, 1:])
        np.subtract(prev[:, 1:], penalty, out=tmp)
        np.maximum(out[:, :-1], tmp, out=out[:, :-1])
        out += here

    fwd[0] = vt[0]
    for t in range(1, T):
        step(fwd[t - 1], fwd[t], vt[t])
    bwd[T - 1] = vt[T - 1]
    for t in range(T - 2, -1, -1):
        step(bwd[t + 1], bwd[t], vt[t])
    fwd += bwd
    fwd -= vt
    return np.argmax(fwd, axis=2).T


def _longest_run(mask: np.ndarray) -> np.ndarray:
    """Per row of a bool ``(N, L)`` array, the length of its longest run of True (N,)."""
    if mask.shape[1] == 0:
        return np.zeros(mask.shape[0], np.int64)
    idx = np.arange(mask.shape[1])[None, :]
    # the index of the last False at or before each position
    last_false = np.maximum.accumulate(np.where(mask, -1, idx), axis=1)
    return np.where(mask, idx - last_false, 0).max(axis=1)


def _line_evidence(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
                   ) -> tuple[dict[tuple[int, int], float | None], np.ndarray, list[np.ndarray]]:
    """Strength of every candle pair (None when too little of its band can be seen), the
    longest uninked run of its path in mm (P,), and each pair's fitted path in rectified px
    (only its seen samples)."""
    bands = _bands(geom, cfg)
    P, T, K = len(bands.owner), bands.T, bands.K
    samp = cv2.remap(maps.stack, bands.mapx, bands.mapy, cv2.INTER_LINEAR,
                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0.0, 1.0, 0.0, 0.0))
    samp = samp.reshape(P, T, K, 4)
    v = np.minimum(samp[..., 0], 1.5)
    v[bands.blocked] = 0.0
    # smooth along the band: a stroke along the band keeps its level, a crossing one fades
    n = max(1, round(cfg.band_smooth_mm / cfg.band_step_mm))
    if n > 1:
        c = np.cumsum(np.pad(v, ((0, 0), (1, 0), (0, 0))), axis=1)
        lo = np.clip(np.arange(T) - n // 2, 0, T)
        hi = np.clip(np.arange(T) + (n - n // 2), 0, T)
        v = (c[:, hi] - c[:, lo]) / (hi - lo)[None, :, None]
        v[bands.blocked] = 0.0
    v = v * bands.valid[..., None]
    # a line starts and ends at the candle outlines, facing the other candle: the path must
    # leave and reach them near the chord (a stroke passing beside a candle does not end there)
    vd = v.astype(np.float32)
    rows = np.arange(P)
    vd[rows, 0] = np.where(bands.end_ok, vd[rows, 0], -5.0)
    vd[rows, bands.last] = np.where(bands.end_ok, vd[rows, bands.last], -5.0)
    lanes = _best_paths(vd, cfg.move_penalty)
    # a drawn line is one smooth stroke: fit a cubic to the path (weighted by its ink) and read
    # the ink along the fit, within a wobble tolerance; a path that jumps from one stroke to
    # another (two lines meeting near the pair) loses the part it cannot follow
    t_norm = np.arange(T, dtype=np.float64) / max(T - 1, 1)
    vand = np.stack([t_norm ** d for d in range(4)], axis=1)                 # (T, 4)
    w = np.take_along_axis(v, lanes[..., None], axis=2)[..., 0] * bands.valid + 1e-3
    # the stroke starts and ends at the candles: anchor the fit there firmly
    anchor = cfg.end_anchor * w.sum(axis=1)
    w[rows, 0] += anchor
    w[rows, bands.last] += anchor
    a_mat = np.einsum("pt,ti,tj->pij", w, vand, vand) + 1e-6 * np.eye(4)
    b_vec = np.einsum("pt,ti,pt->pi", w, vand, lanes.astype(np.float64))
    coef = np.linalg.solve(a_mat, b_vec[..., None])[..., 0]
    fit = coef @ vand.T                                                       # (P, T)
    tol = bands.tol_lanes[:, None]
    lane_idx = np.arange(K)[None, None, :]
    near = np.abs(lane_idx - fit[..., None]) <= tol[..., None]
    vp = np.where(near, v, 0.0).max(axis=2)
    idx = np.clip(np.round(fit), 0, K - 1).astype(np.int64)[..., None]
    hid = samp[..., 1].mean(axis=2) > 0.3
    gl = np.take_along_axis(samp[..., 2], idx, axis=2)[..., 0] > 0.5
    # printed artwork under the path: ink cannot be measured there (neither ink nor not)
    blind = np.take_along_axis(samp[..., 3], idx, axis=2)[..., 0] > 0.5
    # the fitted path's position in rectified px (interpolated between lanes)
    mx, my = bands.mapx.reshape(P, T, K), bands.mapy.reshape(P, T, K)
    fc = np.clip(fit, 0, K - 1)
    lo = np.floor(fc).astype(np.int64)
    hi = np.minimum(lo + 1, K - 1)
    fr = (fc - lo)[..., None]
    pts = np.stack([np.take_along_axis(mx, lo[..., None], 2)[..., 0],
                    np.take_along_axis(my, lo[..., None], 2)[..., 0]], -1) * (1 - fr) + \
        np.stack([np.take_along_axis(mx, hi[..., None], 2)[..., 0],
                  np.take_along_axis(my, hi[..., None], 2)[..., 0]], -1) * fr
    enough = (bands.valid & ~hid & ~gl).sum(axis=1) >= cfg.min_visible * bands.valid.sum(axis=1)
    seen = bands.valid & ~hid & ~gl & ~blind
    n_seen = seen.sum(axis=1)
    enough &= n_seen >= 3
    # the line_quantile of the seen samples of each pair (vectorised: unseen sort last)
    srt = np.sort(np.where(seen, vp, np.inf), axis=1)
    k = np.clip(np.floor(cfg.line_quantile * (n_seen - 1)).astype(np.int64), 0, T - 1)
    q = np.take_along_axis(srt, k[:, None], axis=1)[:, 0]
    # the longest run of the path without ink (inside the band)
    empty = (vp < 0.5 * cfg.line_floor) & bands.valid & ~blind
    gaps = _longest_run(empty) * cfg.band_step_mm
    # ink where the stroke leaves and reaches the candles: along the anchored fit, over the
    # first and last end_mm of the band (inf when nothing can be seen there)
    n_end = max(1, round(cfg.end_mm / cfg.band_step_mm))
    tt = np.arange(T)[None, :]
    ends = np.full(P, np.inf)
    for sel in ((tt < n_end) & seen, (tt > bands.last[:, None] - n_end) & seen):
        cnt = sel.sum(1)
        e = np.where(sel, vp, 0.0).sum(1) / np.maximum(cnt, 1)
        ends = np.minimum(ends, np.where(cnt > 0, e, np.inf))
    # and near the chord at both outlines, whatever the path did
    t3 = tt[..., None]
    clear = (samp[..., 1] < 0.5) & (samp[..., 2] < 0.5) & (samp[..., 3] < 0.5)
    near = bands.end_ok[:, None, :] & bands.valid[..., None] & clear
    for sel in ((t3 < n_end) & near, (t3 > bands.last[:, None, None] - n_end) & near):
        e = np.where(sel, v, -1.0).reshape(P, -1).max(1)
        ends = np.minimum(ends, np.where(sel.reshape(P, -1).any(1), e, np.inf))
    # per pair, the bow hypothesis with the strongest evidence
    score = np.where(enough, q, -np.inf)
    strengths: dict[tuple[int, int], float | None] = {}
    best_rows = []
    for i, pair in enumerate(bands.pairs):
        rows_i = np.nonzero(bands.owner == i)[0]
        r = int(rows_i[np.argmax(score[rows_i])])
        best_rows.append(r)
        strengths[pair] = float(q[r]) if enough[r] else None
    br = np.array(best_rows)
    paths = [pts[r][seen[r]] for r in br]
    return strengths, np.stack([gaps[br], ends[br]], 1), paths


def _lines_by_evidence(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
                       ) -> tuple[dict[tuple[int, int], float | None], float,
                                  list[tuple[int, int]], list[str]]:
    """Lines from the hand-made band evidence (the fallback without the band model):
    strengths, threshold, lines, unknown pairs."""
    unknown: list[str] = []
    strengths, gaps, paths = _line_evidence(maps, geom, cfg)
    known = [v for v in strengths.values() if v is not None]
    t_line = first_large_gap(known, floor=cfg.line_floor, ceiling=cfg.line_ceiling,
                             min_jump=cfg.line_min_jump, default=cfg.line_default)
    chosen = []
    for p, (pair, st) in enumerate(strengths.items()):
        if st is None:
            unknown.append(f"line {pair[0]}-{pair[1]}")
        elif (st >= t_line and gaps[p, 0] <= cfg.line_max_gap_mm
              and gaps[p, 1] >= cfg.end_share * t_line):
            chosen.append(p)
    pairs = geom.pairs
    centres = np.array([c.center for c in geom.candles])
    radii = np.array([c.radius for c in geom.candles])
    lines = [pairs[p] for p in _explain_away(chosen, paths, pairs, centres, radii,
                                             maps.ink.shape, cfg)]
    return strengths, t_line, lines, unknown


def _clean_run_mm(strips: np.ndarray, geo: StripGeometry, cfg: SigilConfig,
                  fade: np.ndarray | None) -> np.ndarray:
    """Per strip, the longest run (mm along the chord) of rows between the outlines that are
    in view (neither hidden nor glare, the print there not washed out: ``fade`` at most
    ``band_clean_max_fade``) and hold no ink above ``band_clean_level`` within
    ``band_clean_half_mm`` of the centre line. A line joining the two candles would cross
    every such row."""
    half = min(STRIP_LANES // 2, round(cfg.band_clean_half_mm / STRIP_HALF_MM
                                       * (STRIP_LANES // 2)))
    near = range(STRIP_LANES // 2 - half, STRIP_LANES // 2 + half + 1)
    win = _over_lanes(np.maximum, strips[:, :3], near)                      # (R, 3, L)
    ok = (win[:, 1] < 0.5) & (win[:, 2] < 0.5) & (win[:, 0] < cfg.band_clean_level) \
        & geo.inside
    if fade is not None:
        f = cv2.remap(fade, geo.mapx, geo.mapy, cv2.INTER_LINEAR,
                      borderMode=cv2.BORDER_CONSTANT, borderValue=10.0)
        ok &= _over_lanes(np.maximum, f.reshape(len(strips), -1, STRIP_LANES), near) \
            <= cfg.band_clean_max_fade
    return _longest_run(ok) * geo.step_mm


def _lines_by_model(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig, model: BandModel,
                    ) -> tuple[dict[tuple[int, int], float | None], float,
                               list[tuple[int, int]], list[str]]:
    """Lines from the band model: each pair's score is its best strip's probability; one
    adaptive threshold over the card's scores. A pair whose centre line is more than
    ``band_max_hidden`` hidden (a hand, outside the photo) is unknown whatever its score:
    what is covered is never "no line", and the model was never trained on such strips."""
    geo, strips, seen = _strips(maps, geom, cfg)
    prob = model.predict(strips)
    n = len(geom.pairs)
    score = np.full(n, -1.0)
    np.maximum.at(score, geo.owner, prob)
    hidden = np.ones(n)
    np.minimum.at(hidden, geo.owner, seen[:, 0])
    t_line = first_large_gap(score[hidden <= cfg.band_max_hidden], floor=cfg.band_floor,
                             ceiling=cfg.band_ceiling, min_jump=cfg.band_min_jump,
                             default=cfg.band_default)
    strengths: dict[tuple[int, int], float | None] = {}
    lines, unknown = [], []
    clean = None
    for p, pair in enumerate(geom.pairs):
        if hidden[p] > cfg.band_max_hidden:
            # the model never saw strips this hidden (the renderer calls them unknown): it
            # does not speak for them; a long clean stretch in view still rules a line out
            if clean is None:
                clean = np.full(n, np.inf)
                np.minimum.at(clean, geo.owner, _clean_run_mm(strips, geo, cfg, maps.fade))
            if clean[p] >= cfg.band_clean_mm:
                strengths[pair] = 0.0
                continue
            unknown.append(f"line {pair[0]}-{pair[1]}")
            strengths[pair] = None
        else:
            strengths[pair] = float(score[p])
            if score[p] >= t_line:
                lines.append(pair)
    return strengths, t_line, lines, unknown


def _explain_away(chosen: list[int], paths: list[np.ndarray], pairs: Sequence[tuple[int, int]],
                  centres: np.ndarray, radii: np.ndarray, shape: tuple[int, int],
                  cfg: SigilConfig) -> list[int]:
    """Drop chosen pairs whose ink belongs to other chosen lines.

    0. Via a candle: lines a-b and b-c, both seen to end at b, trace a path for a-c past b.
    1. Passing by: a line that passes close to a candle on its way elsewhere traces a path for
       the pair ending at that candle; the pair's own end then lies on that line. A pair lying
       along another line but ending with ink of its own (two lines from one candle running
       close together) is kept.
    2. Pieced together: a path made of pieces of two or more other lines (two lines meeting or
       crossing near a pair).
    The most explained goes first; the rest are checked again.
    """
    s = cfg.px_per_mm
    scale = 2.0 / s  # work at 2 px/mm
    h, w = int(shape[0] * scale) + 1, int(shape[1] * scale) + 1
    masks, tight, where = {}, {}, {}
    for p in chosen:
        for store, radius in ((masks, cfg.explain_radius_mm), (tight, cfg.end_radius_mm)):
            m = np.zeros((h, w), np.uint8)
            if len(paths[p]) >= 2:
                cv2.polylines(m, [np.round(paths[p] * scale * 4).astype(np.int32)], False, 1,
                              max(1, round(2 * radius * 2.0)), cv2.LINE_8, 2)
            store[p] = m
        where[p] = np.clip(np.round(paths[p] * scale).astype(np.int64), 0, [w - 1, h - 1])
    n_end = max(2, round(cfg.end_mm / cfg.band_step_mm))
    keep = list(chosen)
    # 0. two lines meeting at a candle b, a-b and b-c, also trace a path for a-c past b: when
    #    both were seen to end at b, a-c is that trace
    index = {pairs[p]: p for p in keep}
    for q in list(keep):
        a, c = pairs[q]
        for b in range(len(centres)):
            if b in (a, c) or len(paths[q]) == 0:
                continue
            ab, bc = tuple(sorted((a, b))), tuple(sorted((b, c)))
            if ab in index and bc in index and index[ab] in keep and index[bc] in keep:
                d = np.hypot(*(paths[q] - centres[b] * s).T).min() / s
                if d < radii[b] + cfg.via_mm and q in keep:
                    keep.remove(q)
    while len(keep) > 1:
        # 1. passing by
        best, best_c = None, 0.0
        for p in keep:
            ij = where[p]
            if len(ij) < 2 * n_end:
                continue
            for q in keep:
                if q == p:
                    continue
                cov = float(masks[q][ij[:, 1], ij[:, 0]].mean())
                if cov < cfg.single_cover:
                    continue
                shared = set(pairs[p]) & set(pairs[q])
                for end, sl in ((pairs[p][0], slice(0, n_end)), (pairs[p][1], slice(-n_end, None))):
                    if end in shared:
                        continue
                    e = ij[sl]
                    c_end = float(tight[q][e[:, 1], e[:, 0]].mean())
                    if c_end >= cfg.end_cover and cov > best_c:
                        best, best_c = p, cov
        if best is not None:
            keep.remove(best)
            continue
        # 2. pieced together
        worst, worst_own = None, 1.0
        for p in keep:
            ij = where[p]
            if len(ij) == 0 or len(keep) < 3:
                continue
            hits = np.stack([masks[q][ij[:, 1], ij[:, 0]] for q in keep if q != p])
            share = hits.mean(axis=1)
            if share.max() > cfg.single_cover or (share >= 0.2).sum() < 2:
                continue
            own = float((hits.sum(axis=0) == 0).mean())
            if own < worst_own:
                worst, worst_own = p, own
        if worst is None or worst_own >= cfg.min_own_share:
            break
        keep.remove(worst)
    return keep


# ---------------------------------------------------------------------------- candle discs

@lru_cache(maxsize=16)
def _cross_maps(geom: CardGeometry, cfg: SigilConfig) -> tuple[np.ndarray, np.ndarray, int, int]:
    """Sample points along diameters of every candle disc: (12 * A * N, 3) maps in rectified
    px for A angles, N points along the diameter, 3 parallel offsets."""
    s = cfg.px_per_mm
    angles = np.linspace(0, np.pi, cfg.cross_angles, endpoint=False)
    mx, my = [], []
    for c in geom.candles:
        r = c.radius * cfg.disc_fraction
        along = np.linspace(-r, r, cfg.cross_points)
        offs = np.array([-cfg.cross_offset_mm, 0.0, cfg.cross_offset_mm])
        for a in angles:
            u = np.array([np.cos(a), np.sin(a)])
            n = np.array([-u[1], u[0]])
            pts = (np.array(c.center)[None, None, :] + along[:, None, None] * u
                   + offs[None, :, None] * n)
            mx.append(pts[..., 0] * s)
            my.append(pts[..., 1] * s)
    return (np.array(mx, np.float32).reshape(-1, 3), np.array(my, np.float32).reshape(-1, 3),
            cfg.cross_angles, cfg.cross_points)


def _cross_evidence(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
                    ) -> list[float | None]:
    """Per candle: the best diameter's ink cover (a slash or either stroke of an X crosses
    the disc from side to side), None when the disc is hidden."""
    level = maps.level * cfg.cross_level
    mx, my, na, npt = _cross_maps(geom, cfg)
    stack = np.dstack([maps.ink / level, (maps.hidden | maps.glare).astype(np.float32)])
    samp = cv2.remap(stack, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                     borderValue=(0.0, 1.0))
    samp = samp.reshape(len(geom.candles), na, npt, 3, 2)
    v = np.clip(samp[..., 0], 0, 1).max(axis=3)                      # (12, A, N)
    hid = samp[..., 1].mean(axis=(1, 2, 3))                          # (12,)
    score = v.mean(axis=2).max(axis=1)
    return [None if hid[i] > cfg.cross_max_hidden and score[i] < 0.8 else float(score[i])
            for i in range(len(geom.candles))]


def _crosses_by_model(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
                      model: DiscModel) -> tuple[list[float | None], float]:
    """Per candle the disc model's probability "crossed out" (None when more than
    ``disc_max_hidden`` of the disc is hidden), and the card's adaptive threshold over them."""
    discs = _discs(maps, geom, cfg)
    prob = model.predict(discs)
    inner = discs[:, 1, 4:-4, 4:-4].mean(axis=(1, 2))       # hidden share over the disc
    t = first_large_gap(prob[inner <= cfg.disc_max_hidden], floor=cfg.band_floor,
                        ceiling=cfg.band_ceiling, min_jump=cfg.band_min_jump,
                        default=cfg.band_default)
    # a disc more hidden than the renderer's labels allow was never trained on: unknown
    out: list[float | None] = [None if inner[i] > cfg.disc_max_hidden else float(prob[i])
                               for i in range(len(prob))]
    return out, t


# ---------------------------------------------------------------------------- top boxes

@lru_cache(maxsize=64)
def _box_warp(box: tuple[float, ...], s: float) -> tuple[np.ndarray, int]:
    """The affine map from rectified px to a top box's crop and its interpolation (made once
    per box and resolution: every photo crops the same boxes several times)."""
    x0, y0, x1, y1 = box
    mx, my = (x1 - x0) * dg.MARGIN, (y1 - y0) * dg.MARGIN
    src = np.float32([[(x0 - mx) * s, (y0 - my) * s], [(x1 + mx) * s, (y0 - my) * s],
                      [(x1 + mx) * s, (y1 + my) * s]])
    dst = np.float32([[0, 0], [dg.CROP, 0], [dg.CROP, dg.CROP]])
    m = cv2.getAffineTransform(src, dst)
    m.flags.writeable = False
    return m, (cv2.INTER_AREA if s * (x1 - x0) * (1 + 2 * dg.MARGIN) > dg.CROP
               else cv2.INTER_LINEAR)


def _box_crop(arr: np.ndarray, box: Sequence[float], s: float) -> np.ndarray:
    m, flags = _box_warp(tuple(box), s)
    return cv2.warpAffine(arr, m, (dg.CROP, dg.CROP), flags=flags,
                          borderMode=cv2.BORDER_CONSTANT, borderValue=0)


def _box_share(mask: np.ndarray | None, box: Sequence[float], s: float, a: int, b: int,
               ) -> np.float32:
    """The share of a top box's crop (rows and columns ``a:b``) a 0/1 float32 map covers
    (float32, as the thresholds compare it); 0 for a map with nothing set (None)."""
    return np.float32(0.0) if mask is None else _box_crop(mask, box, s)[a:b, a:b].mean()


def _box_print(rect: np.ndarray, box: Sequence[float], s: float,
               grey: np.ndarray | None = None) -> float:
    """Contrast of a top box's printed outline in the photo, on its faintest side: per side,
    ``1 - dark / paper`` of the darkest colour channel in a strip across the printed edge
    (``dark`` its 5th percentile, ``paper`` its 90th). Glare washes print and pen out alike, so
    a box whose outline prints about as dark as the card's artwork is not washed out.
    ``grey``: that channel as float32, when already made (several boxes of one photo)."""
    if grey is None:
        grey = rect.min(axis=2).astype(np.float32)
    g = _box_crop(grey, box, s)
    e = round(dg.CROP * dg.MARGIN / (1 + 2 * dg.MARGIN))
    lo, hi = max(e - 4, 0), e + 5
    a, b = e, dg.CROP - e
    sides = (g[lo:hi, a:b], g[dg.CROP - hi:dg.CROP - lo, a:b],
             g[a:b, lo:hi], g[a:b, dg.CROP - hi:dg.CROP - lo])
    out = 1.0
    for strip in sides:
        paper = float(np.percentile(strip, 90))
        out = min(out, 1.0 - float(np.percentile(strip, 5)) / max(paper, 1.0))
    return out


def _faint_ink(crop: np.ndarray, printed: np.ndarray | None, a: int, b: int, fa: int,
               fb: int, box: Sequence[float], cfg: SigilConfig) -> np.ndarray:
    """The ink of a box crop's centre (``[fa:fb, fa:fb]``) over the box's own background:
    its inner area (``[a:b, a:b]``) opened with a disc ``cfg.box_faint_open_mm`` wide, which
    keeps what is wider than a pen stroke (a shadow, a smudge greying the box) and drops the
    strokes, however much of the box they cover. ``printed`` (the crop of
    :func:`vision.sigil.ink.print_mask`, where the ink map is 0 under a shadow too; None:
    none) takes no part in the opening: a printed dot in a shaded box is not its background."""
    inner = crop[a:b, a:b]
    if printed is not None:
        inner = np.where(printed[a:b, a:b] > 0.5, np.float32(1.5), inner)
    px_mm = dg.CROP / ((box[2] - box[0]) * (1 + 2 * dg.MARGIN))
    r = max(1, round(cfg.box_faint_open_mm * px_mm / 2))
    disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1, 2 * r + 1))
    background = cv2.morphologyEx(inner, cv2.MORPH_OPEN, disc, borderType=cv2.BORDER_REPLICATE)
    return crop[fa:fb, fa:fb] - background[fa - a:fb - a, fa - a:fb - a]


def _outside_share(outside: np.ndarray, box: Sequence[float], s: float,
                   margin_mm: float) -> float:
    """Share of ``box`` (card mm ``[x0, y0, x1, y1]``) grown by ``margin_mm`` that lies outside
    the photo (``outside``: rectified px at ``s`` px/mm); the card's own edge bounds it."""
    x0, y0, x1, y1 = box
    h, w = outside.shape
    r0, r1 = max(0, round((y0 - margin_mm) * s)), min(h, round((y1 + margin_mm) * s))
    c0, c1 = max(0, round((x0 - margin_mm) * s)), min(w, round((x1 + margin_mm) * s))
    sl = outside[r0:r1, c0:c1]
    return float(sl.mean()) if sl.size else 1.0


def _read_boxes(maps: CardMaps, geom: CardGeometry, cfg: SigilConfig,
                ) -> tuple[list[TopBox | str | None], list[dict[str, Any]]]:
    s = cfg.px_per_mm
    # the maps down to just below the lowest box crop (the crops sample nothing further down)
    rows = min(maps.ink.shape[0], 2 + int(np.ceil(s * max(
        y1 + (y1 - y0) * dg.MARGIN for _, y0, _, y1 in geom.top_boxes))))
    v = np.clip(maps.relative_ink[:rows], 0, 1.5).astype(np.float32, copy=False)
    # the hidden and the hidden-or-glare maps as float32, None where nothing is set (every
    # crop of them is 0 then: the common case, no warps needed)
    hidden = maps.hidden[:rows].astype(np.float32) if maps.hidden[:rows].any() else None
    blocked = hidden if not maps.glare[:rows].any() else \
        (maps.hidden[:rows] | maps.glare[:rows]).astype(np.float32)
    results: list[TopBox | str | None] = []
    info: list[dict[str, Any]] = []
    crops, todo = [], []
    grey = None  # the darkest channel of the rows above, for _box_print (made when needed)
    printed = None  # the print of those rows, for _faint_ink (made when needed)
    inner = dg.MARGIN / (1 + 2 * dg.MARGIN)
    a, b = int(dg.CROP * inner) + cfg.box_inset_px, int(dg.CROP * (1 - inner)) - cfg.box_inset_px
    fa = int(dg.CROP * inner) + cfg.box_faint_inset_px
    fb = int(dg.CROP * (1 - inner)) - cfg.box_faint_inset_px
    for k, box in enumerate(geom.top_boxes):
        crop = _box_crop(v, box, s)
        hid = _box_share(hidden, box, s, a, b)
        gl = hid if blocked is hidden else _box_share(blocked, box, s, a, b)
        px_mm2 = ((box[2] - box[0]) * (1 + 2 * dg.MARGIN) / dg.CROP) * \
                 ((box[3] - box[1]) * (1 + 2 * dg.MARGIN) / dg.CROP)
        ink_mm2 = float((crop[a:b, a:b] > cfg.box_ink_level).sum()) * px_mm2
        rec: dict[str, Any] = {"ink_mm2": round(ink_mm2, 2), "hidden": round(float(hid), 3),
                               "glare": round(float(gl), 3)}
        info.append(rec)
        if maps.outside is not None:
            out = _outside_share(maps.outside, box, s, cfg.box_outside_margin_mm)
            if out > 0:
                rec["outside"] = round(out, 3)
            if out > cfg.box_max_outside:
                results.append("unknown")
                continue
        if hid > cfg.box_max_hidden:
            results.append("unknown")
            continue
        if ink_mm2 < cfg.box_min_ink_mm2:
            # over the box's own background (a shadow or a smudge greying the whole box is
            # not writing)
            if printed is None:
                printed = print_mask(maps.ref, maps.spread_px)[:rows]
            centre = _faint_ink(crop, _box_crop(printed, box, s), a, b, fa, fb, box, cfg)
            rec["faint_mm2"] = round(float((centre > cfg.box_faint_level).sum()) * px_mm2, 2)
            if rec["faint_mm2"] >= cfg.box_faint_mm2:
                results.append("pending")
                crops.append(crop)
                todo.append(k)
                continue
            washed = False
            if gl > 0.3:
                # the glare map also fires where a shadow darkens the rest of the card: it is
                # washed out only if the box's printed outline is faint too
                if grey is None:
                    grey = maps.rectified[:rows].min(axis=2).astype(np.float32)
                pr = _box_print(maps.rectified[:rows], box, s, grey)
                rec["print"] = round(pr / maps.level, 3)
                washed = rec["print"] < cfg.box_glare_print
            results.append("unknown" if washed else None)
            continue
        results.append("pending")
        crops.append(crop)
        todo.append(k)
    if todo:
        model = dg.DigitModel(cfg.model_path)
        pd, pc = model.read(np.stack([np.clip(c, 0, 1) for c in crops]), cfg.circle_prob)
        for j, k in enumerate(todo):
            d = int(np.argmax(pd[j]))
            info[k]["digit_probs"] = [round(float(x), 3) for x in pd[j]]
            info[k]["circle_prob"] = round(float(pc[j]), 3)
            need = cfg.digit_faint_min_prob if "faint_mm2" in info[k] else cfg.digit_min_prob
            if pd[j][d] < need:
                results[k] = "unknown"
            else:
                results[k] = TopBox(d + 1, bool(pc[j] >= cfg.circle_prob))
    if cfg.box_fill_order and None in results:
        # each turn writes in the leftmost empty box: faint ink beyond a box read empty is
        # an erased game's digit, or that box held a pale digit the faint test missed; which
        # one the boxes cannot tell (strong ink there is left alone: the empty box was missed)
        blank = results.index(None)
        for k in range(blank + 1, len(results)):
            if isinstance(results[k], TopBox) and "faint_mm2" in info[k]:
                results[k] = "unknown"
                info[k]["beyond_empty"] = blank
    return results, info


# ---------------------------------------------------------------------------- the reader

NO_REFERENCE = "no blank-card reference: the layout's printed elements are masked instead"


@per_object(size=64)
def _reference(reference: np.ndarray | None, geom: CardGeometry, s: float) -> Reference:
    """The prepared reference, cached by the array's identity (kept alive in the cache)."""
    return prepare_reference(None if reference is None else as_bgr(reference, name="reference"),
                             geom, s)


def _prepare(image: np.ndarray, layout: Any,
             reference: np.ndarray | Sequence[np.ndarray] | None, cfg: SigilConfig,
             others: Sequence[Any], hint: np.ndarray | None = None, *,
             keep_cover_input: bool = False, exclude: np.ndarray | None = None,
             over: np.ndarray | None = None,
             ) -> tuple[CardGeometry, Pose, CardMaps, list[str]]:
    """Steps 1-2 of the reader: the card's geometry, its pose, its maps, and notes (the
    first note "no reference" when the layout's elements stand in for a blank card).
    ``exclude``: the corners (px) of a card already read, another one is looked for
    (:func:`vision.sigil.pose.find_pose`); ``over``: the corners (px) of a card lying over
    the one found, what it covers hidden."""
    image = as_bgr(image)
    if min(image.shape[:2]) < 32:
        raise BadInput(f"image of {image.shape[1]}x{image.shape[0]} px is too small to hold "
                       "a readable card")
    geom = card_geometry(layout)
    if len(geom.candles) != 12 or len(geom.top_boxes) != N_TOP_BOXES:
        raise BadInput(f"layout {geom.name!r}: expected 12 candles and {N_TOP_BOXES} top boxes")
    s = cfg.px_per_mm
    if reference is None or (isinstance(reference, np.ndarray) and reference.ndim in (2, 3)
                             and reference.dtype != object):
        candidates = [reference]
    else:
        candidates = list(reference) or [None]
    refs = [_reference(r, geom, s) for r in candidates]
    gray = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    other_ids = {k: v for k, v in marker_ids_of(others).items()
                 if k not in {m.id for m in geom.markers}}
    # a card read against printed designs only (blank cards without markers) has none
    markers = any(r.stand_in or shows_markers(r.grey, geom) for r in refs)
    pose, which, notes = find_pose(image, gray, geom, [r.grey for r in refs], cfg.pose,
                                   other_ids, hint, markers, exclude)
    ref = refs[which]
    if ref.stand_in:
        notes.insert(0, NO_REFERENCE)
    corners = pose.corners
    sides = [float(np.hypot(*(corners[(k + 1) % 4] - corners[k]))) for k in range(4)]
    if min(sides) < cfg.min_card_px:
        raise BadInput(f"the card is too small in the image to read (shortest side "
                       f"{min(sides):.0f} px < {cfg.min_card_px:.0f} px)")
    rect, valid = _rectify(image, pose.homography, geom, s)
    covered = None
    if over is not None:
        # the other card's corners on this one, in rectified px
        pts = project(np.linalg.inv(pose.homography), np.asarray(over, np.float64))
        covered = np.zeros(valid.shape, np.uint8)
        if np.all(np.isfinite(pts)) and np.abs(pts).max() < 1e5:
            cv2.fillConvexPoly(covered, np.round(pts * s).astype(np.int32), 1)
        covered = covered.astype(bool)
    # how many rectified px one photo px spans (blur and misregistration scale with it)
    photo_ppm = photo_px_per_mm(pose.homography, geom)
    spread = int(np.clip(round(cfg.spread_photo_px * s / max(photo_ppm, 1e-3)), 1, 6))
    cover = CoverModel(cfg.cover_model_path) if cfg.use_cover_model else None
    maps = card_maps(rect, valid, ref, hand_chroma=cfg.hand_chroma, hand_dark=cfg.hand_dark,
                     glare_gain=cfg.glare_gain, px_per_mm=s, spread_px=spread,
                     blob_mm=cfg.blob_mm,
                     cover=cover if cover is not None and cover.available() else None,
                     cover_level=cfg.cover_level, cover_min_mm=cfg.cover_min_mm,
                     cover_island_mm2=cfg.cover_island_mm2,
                     keep_cover_input=keep_cover_input, edges=cfg.edges, also_hidden=covered)
    if maps.contrast < cfg.min_contrast:
        raise BadInput(f"the card is too blurred, dark or washed out to read (print contrast "
                       f"{maps.contrast:.2f} < {cfg.min_contrast})")
    return geom, pose, maps, notes


def read_sigil(image: np.ndarray, layout: Any,
               reference: np.ndarray | Sequence[np.ndarray] | None = None,
               config: SigilConfig | None = None, *, others: Sequence[Any] = (),
               hint: np.ndarray | None = None) -> SigilReading:
    """Read a sigil card in a photo.

    Parameters
    ----------
    image : ndarray
        The photo, BGR uint8 (any dtype/channels :func:`vision.imageio.as_bgr` accepts).
    layout
        The card's layout (``companion.doomcat.layouts.Layout``, its JSON document, or a
        :class:`~vision.sigil.geometry.CardGeometry`).
    reference : ndarray or sequence of ndarray, optional
        The blank card, rectified (the whole card, any resolution, BGR), subtracted so that
        printed artwork is never read as ink. Several candidates (e.g. the companion card and
        registered printed designs of the same layout): the one that best matches the photo
        is used. Without any, the layout's printed elements are masked instead.
    config : SigilConfig, optional
    others : sequence of layouts
        Other known layouts; their markers in view raise :class:`WrongLayout`.
    hint : ndarray (3, 3), optional
        Where the card was a moment ago (the previous frame's ``reading.pose.homography``,
        card mm -> image px): a card without markers that has not moved is found there
        without searching for its outline (:func:`vision.sigil.pose.find_pose`); a card that
        moved is searched for as without a hint.

    Returns
    -------
    SigilReading

    Raises
    ------
    BadInput
        Not an image, no card in view (:class:`NoCard`), the wrong layout's markers
        (:class:`WrongLayout`), a card too small or too blurred to read.
    """
    cfg = config or SigilConfig()
    geom, pose, maps, notes = _prepare(image, layout, reference, cfg, others, hint)
    reading = _read(geom, pose, maps, notes, cfg)
    if not (cfg.second_card and pose.method == "outline" and _blank(reading)):
        return reading
    # Nothing written on the card found by its outline: a blank card of the same layout may
    # lie over (or beside) the card in play, and fit the blank card better than it (it is
    # wholly in view). Another card of the layout is looked for; when one is found with
    # writing, it is read (what the blank card covers hidden: the blank card is on top when
    # no edge crosses it), else the blank card stands.
    on_top = not maps.edges
    try:
        geom2, pose2, maps2, notes2 = _prepare(image, layout, reference, cfg, others,
                                               exclude=pose.corners,
                                               over=pose.corners if on_top else None)
    except BadInput:
        return reading
    other = _read(geom2, pose2, maps2, notes2, cfg)
    if _blank(other):
        return reading
    note = (f"two cards of layout {geom.name!r} in view: the one with writing read, the blank "
            f"one {'over it (what it covers is unknown)' if on_top else 'beside it'} left out")
    return dataclasses.replace(other, notes=(*other.notes, note))


def _blank(reading: SigilReading) -> bool:
    """Nothing written read on the card: no line, no cross, no digit (elements unknown are
    not writing)."""
    st = reading.state
    return not st.lines and not st.crossed and all(b is None for b in st.top)


def _read(geom: CardGeometry, pose: Pose, maps: CardMaps, notes: list[str],
          cfg: SigilConfig) -> SigilReading:
    """Steps 3-7 of the reader: the card's elements from its maps."""
    unknown: list[str] = []

    # the learned models only know reference-subtracted maps: without a blank card (the
    # layout's elements masked instead) the hand-made evidence decides
    learned = cfg.use_band_model and NO_REFERENCE not in notes
    band_model = (BandModel(cfg.band_model_path, cfg.band_screen_path, cfg.band_screen_logit)
                  if learned else None)
    line_probs = band_model is not None and band_model.available()
    if line_probs:
        strengths, t_line, lines, unknown_lines = _lines_by_model(maps, geom, cfg, band_model)
        unknown.extend(unknown_lines)
    else:
        strengths, t_line, lines, unknown_lines = _lines_by_evidence(maps, geom, cfg)
        unknown.extend(unknown_lines)

    disc_model = DiscModel(cfg.disc_model_path) if learned else None
    cross_probs = disc_model is not None and disc_model.available()
    if cross_probs:
        cross, t_cross = _crosses_by_model(maps, geom, cfg, disc_model)
    else:
        cross = _cross_evidence(maps, geom, cfg)
        t_cross = first_large_gap([c for c in cross if c is not None], floor=cfg.cross_floor,
                                  ceiling=cfg.cross_ceiling, min_jump=cfg.cross_min_jump,
                                  default=cfg.cross_default)
    boxes, info = _read_boxes(maps, geom, cfg)
    crossed = [i for i, c in enumerate(cross) if c is not None and c >= t_cross]
    unknown.extend(f"candle {i}" for i, c in enumerate(cross) if c is None)
    if cfg.match_written_crossed and cross_probs:
        # the written numbers and the crossed candles' numbers must agree (bookkeeping.py;
        # it weighs probabilities: not with the hand-made evidence)
        settled = settle([c.number for c in geom.candles], cross, t_cross,
                         [None if "digit_probs" not in b else np.array(b["digit_probs"])
                          for b in info],
                         [None if "circle_prob" not in b else b["circle_prob"] >= cfg.circle_prob
                          for b in info],
                         boxes, max_cost=cfg.match_max_cost, max_flip=cfg.match_max_flip,
                         margin=cfg.match_margin, top_n=cfg.match_top_n,
                         mid_turn=cfg.match_mid_turn)
        if settled.note:
            crossed, boxes = list(settled.crossed), list(settled.top)
            notes = [*notes, settled.note]
        emptied, note = settle_empty(cross, crossed, boxes, ["digit_probs" in b for b in info],
                                     max_flip=cfg.match_max_flip)
        if note:
            boxes = list(emptied)
            notes = [*notes, note]
        circled, note = settle_circles(boxes, [b.get("circle_prob") for b in info],
                                       max_flip=cfg.match_max_flip)
        if note:
            boxes = list(circled)
            notes = [*notes, note]
        if line_probs and not any(u.startswith("candle") for u in unknown) and \
                not any(b == "unknown" for b in boxes):
            lines, note = settle_lines(strengths, lines, sum(b is not None for b in boxes),
                                       len(crossed), min_add=cfg.match_line_min,
                                       max_drop=cfg.match_line_max, margin=cfg.match_margin)
            if note:
                notes = [*notes, note]
    top: list[TopBox | None] = []
    for k, b in enumerate(boxes):
        if isinstance(b, str):
            unknown.append(f"top {k}")
            top.append(None)
        else:
            top.append(b)
    state = SigilState.of(geom.name, lines, crossed, top, unknown)
    return SigilReading(state=state, pose=pose, line_strength=strengths, line_threshold=t_line,
                        cross_strength=tuple(cross), cross_threshold=t_cross,
                        boxes=tuple(info), contrast=maps.contrast, notes=tuple(notes))
