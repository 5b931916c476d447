"""Scoring sigil readings against labels (``eval sigil``), with a per-condition breakdown.

DESIGN.md: elements a label lists in ``unknown`` are hidden in the photo and not scored; a
visible element the reader calls unknown counts in ``unknown_share`` and makes the card not
exact, but is not a wrong reading. A photo the reader refuses (no card found, ...) counts as
every visible element unknown, and in ``failed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vision.readings import N_CANDLES, N_TOP_BOXES, SigilState

__all__ = ["CardScore", "Tally", "condition_groups", "score_card"]

PAIRS = tuple((a, b) for a in range(N_CANDLES) for b in range(a + 1, N_CANDLES))


@dataclass
class CardScore:
    """The comparison of one reading (or a refusal) with its label."""

    line_tp: int = 0
    line_fp: int = 0
    line_fn: int = 0
    cross_ok: int = 0
    cross_n: int = 0
    digit_ok: int = 0
    digit_n: int = 0
    circle_ok: int = 0
    circle_n: int = 0
    empty_ok: int = 0
    empty_n: int = 0
    visible: int = 0
    unknown: int = 0
    ghosts_counted: int = 0
    failed: bool = False
    errors: list[str] = field(default_factory=list)

    @property
    def exact(self) -> bool:
        return not self.failed and not self.errors and self.unknown == 0


def score_card(truth: SigilState, reading: SigilState | None,
               ghost_lines: Iterable[Iterable[int]] = ()) -> CardScore:
    """Compare ``reading`` (None when the reader refused the photo) with the label ``truth``."""
    hidden = set(truth.unknown)
    said = set(reading.unknown) if reading is not None else set()
    sc = CardScore(failed=reading is None)
    true_lines = set(truth.lines)
    read_lines = set(reading.lines) if reading is not None else set()
    ghosts = {tuple(sorted(g)) for g in ghost_lines}

    def scored(name: str) -> bool:
        """Whether the element is to be compared: in view in the label, read (not unknown)."""
        if name in hidden:
            return False
        sc.visible += 1
        if reading is None or name in said:
            sc.unknown += 1
            return False
        return True

    for a, b in PAIRS:
        name = f"line {a}-{b}"
        if not scored(name):
            continue
        t, r = (a, b) in true_lines, (a, b) in read_lines
        if t and r:
            sc.line_tp += 1
        elif r:
            sc.line_fp += 1
            sc.errors.append(f"extra {name}")
            if (a, b) in ghosts:
                sc.ghosts_counted += 1
        elif t:
            sc.line_fn += 1
            sc.errors.append(f"missed {name}")
    true_x = set(truth.crossed)
    read_x = set(reading.crossed) if reading is not None else set()
    for c in range(N_CANDLES):
        if not scored(f"candle {c}"):
            continue
        sc.cross_n += 1
        if (c in true_x) == (c in read_x):
            sc.cross_ok += 1
        else:
            sc.errors.append(f"{'missed' if c in true_x else 'extra'} cross {c}")
    for k in range(N_TOP_BOXES):
        if not scored(f"top {k}"):
            continue
        t, r = truth.top[k], reading.top[k]
        if t is None:
            sc.empty_n += 1
            if r is None:
                sc.empty_ok += 1
            else:
                sc.errors.append(f"top {k}: read {r.value} in an empty box")
            continue
        sc.digit_n += 1
        if r is not None and r.value == t.value:
            sc.digit_ok += 1
        else:
            sc.errors.append(f"top {k}: read {None if r is None else r.value}, not {t.value}")
        if r is not None:
            sc.circle_n += 1
            if r.circled == t.circled:
                sc.circle_ok += 1
            else:
                sc.errors.append(f"top {k}: circle {'missed' if t.circled else 'extra'}")
    return sc


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


@dataclass
class Tally:
    """Sums of :class:`CardScore` over a set of photos, and the report's figures."""

    images: int = 0
    exact: int = 0
    failed: int = 0
    sums: dict[str, int] = field(default_factory=dict)

    def add(self, sc: CardScore) -> None:
        self.images += 1
        self.exact += int(sc.exact)
        self.failed += int(sc.failed)
        for key in ("line_tp", "line_fp", "line_fn", "cross_ok", "cross_n", "digit_ok",
                    "digit_n", "circle_ok", "circle_n", "empty_ok", "empty_n", "visible",
                    "unknown", "ghosts_counted"):
            self.sums[key] = self.sums.get(key, 0) + getattr(sc, key)

    def to_json(self) -> dict[str, Any]:
        s = self.sums
        tp, fp, fn = s.get("line_tp", 0), s.get("line_fp", 0), s.get("line_fn", 0)
        prec = tp / (tp + fp) if tp + fp else 1.0
        rec = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        return {"images": self.images, "line_precision": round(prec, 4),
                "line_recall": round(rec, 4), "line_f1": round(f1, 4),
                "crossed_accuracy": _ratio(s.get("cross_ok", 0), s.get("cross_n", 0)),
                "digit_accuracy": _ratio(s.get("digit_ok", 0), s.get("digit_n", 0)),
                "circle_accuracy": _ratio(s.get("circle_ok", 0), s.get("circle_n", 0)),
                "empty_box_accuracy": _ratio(s.get("empty_ok", 0), s.get("empty_n", 0)),
                "exact_rate": _ratio(self.exact, self.images),
                "unknown_share": _ratio(s.get("unknown", 0), s.get("visible", 0)),
                "ghost_lines_counted": s.get("ghosts_counted", 0),
                "failed": self.failed}


def condition_groups(conditions: Mapping[str, Any] | None) -> list[str]:
    """The breakdown groups a photo falls in, from its label's ``conditions`` (if any)."""
    if not conditions:
        return []
    out = []
    tilt = conditions.get("tilt_deg")
    if isinstance(tilt, (int, float)):
        lo = next(b for b in (40, 30, 15, 0) if tilt >= b)
        out.append(f"tilt {lo}-{ {0: 15, 15: 30, 30: 40, 40: 50}[lo]}")
    fill = conditions.get("fill")
    if isinstance(fill, (int, float)):
        out.append("fill <0.25" if fill < 0.25 else "fill 0.25-0.5" if fill < 0.5
                   else "fill >=0.5")
    out_of_view = conditions.get("out_of_view")
    if isinstance(out_of_view, (int, float)):
        out.append("out of view 0" if out_of_view <= 0 else "out of view <0.25"
                   if out_of_view < 0.25 else "out of view >=0.25")
    for key in ("glare", "ghosts", "hand", "markers", "shadow"):
        if key in conditions:
            out.append(f"{key} {'yes' if conditions[key] else 'no'}")
    for key in ("pen_color", "art", "background", "turn"):
        if key in conditions:
            out.append(f"{key} {conditions[key]}")
    blur = max(float(conditions.get("defocus_px", 0) or 0), float(conditions.get("motion_px", 0)
                                                                  or 0))
    if "defocus_px" in conditions or "motion_px" in conditions:
        out.append("blur >=1px" if blur >= 1 else "blur <1px")
    return out
