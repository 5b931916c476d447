"""The card's own bookkeeping: every number written in a top box crosses out a candle showing it.

A Doom Cat turn writes a die's number in the leftmost empty top box (the second time a number
is written on a card it is circled; no number three times) and crosses out a candle showing that
number. So on a card played by the rulebook the numbers of the crossed candles are the written
numbers, as many of each. The box and disc models read each element alone; when their readings
break that count, :func:`settle` looks for the readings that keep it at the least cost in the
models' own probabilities, and takes them only when they are cheap, clearly better than any
other way of keeping the count, and no single element is overruled against strong evidence.
Otherwise the models' readings stand as they are.

A camera watching a game also sees cards in the middle of a turn: the rulebook's turn writes
its number first, draws its line next and crosses out its candle at its end, so for a while the
last number written has no crossed candle. That reading keeps the count too, at a price (the
prior odds of catching a card between its write and its cross, ``settle``'s ``mid_turn``).

Some familiars break the count (the Owl knocks over no candle once, the Rat writes a number a
third time, the Toad's wild number fills no top box): the rule is off in
``SigilConfig.match_written_crossed`` for such games. With one of them and the rule on, a
reading breaks the count by a whole element whose evidence is strong, and the cost caps leave it
as read.

Convention: candles are the indices of the layout's ``candles`` list; top boxes 0-6 left to
right.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from vision.readings import TopBox

__all__ = ["Settled", "settle"]

_EPS = 1e-4


@dataclass(frozen=True)
class Settled:
    """What :func:`settle` decided: the crossed candles, the top boxes (a :class:`TopBox`,
    ``None`` for empty, ``"unknown"``), the extra cost of the change in nats (0 when nothing
    changed) and a note naming what changed (empty when nothing did)."""

    crossed: tuple[int, ...]
    top: tuple[TopBox | str | None, ...]
    cost: float = 0.0
    note: str = ""


def _nll(p: float) -> float:
    return -math.log(min(max(p, _EPS), 1.0 - _EPS))


def _logit(p: float) -> float:
    return _nll(1.0 - p) - _nll(p)


def _candles(need: Counter[int], by_number: dict[int, list[int]], hidden: Counter[int],
             cp: list[float], on0: list[bool], max_flip: float,
             ) -> tuple[float, float, list[int]] | None:
    """The cheapest candles to cross for the written numbers ``need``: its cost, how much
    dearer the next cheapest choice is, and the candles; None when none is allowed. Per
    number, the m likeliest candles in view are crossed, the hidden ones making up the rest."""
    cost, alt, chosen = 0.0, math.inf, []
    for n, ids in by_number.items():
        c = need.get(n, 0)
        ways = []
        for m in range(max(0, c - hidden[n]), min(c, len(ids)) + 1):
            if any((r < m) != on0[i] and abs(_logit(cp[i])) > max_flip
                   for r, i in enumerate(ids)):
                continue
            ways.append((sum(_nll(cp[i] if r < m else 1.0 - cp[i]) for r, i in enumerate(ids)),
                         m))
        if not ways:
            return None
        ways.sort()
        part, m = ways[0]
        cost += part
        chosen += ids[:m]
        if len(ways) > 1:
            alt = min(alt, ways[1][0] - part)
        if 0 < m < len(ids):
            # crossing the next likely candle of n instead of the last one chosen
            alt = min(alt, _logit(cp[ids[m - 1]]) - _logit(cp[ids[m]]))
    return cost, alt, chosen


def settle(numbers: Sequence[int], cross_prob: Sequence[float | None], cross_threshold: float,
           digit_probs: Sequence[np.ndarray | None], circled: Sequence[bool | None],
           top: Sequence[TopBox | str | None], *, max_cost: float = 6.0,
           max_flip: float = 4.0, margin: float = 1.0, top_n: int = 6,
           mid_turn: float = 1.7, max_steps: int = 20000) -> Settled:
    """Make the written numbers and the crossed candles agree, when that is cheap and clear.

    Parameters
    ----------
    numbers : sequence of int
        The number each candle shows.
    cross_prob : sequence of float or None
        The disc model's probability "crossed" per candle (None: hidden).
    cross_threshold : float
        The card's threshold on ``cross_prob`` (crossed at or above it).
    digit_probs : sequence of (6,) arrays or None
        Per top box the digit model's probabilities of 1..6 (None: the box was not read, empty
        or hidden).
    circled : sequence of bool or None
        Per top box whether the circle head called it circled (None where not read).
    top : sequence
        The reader's decision per box: a :class:`TopBox`, ``None`` (empty) or ``"unknown"``.
    max_cost : float
        The largest extra cost (nats, summed negative log probabilities) a change may have.
    max_flip : float
        The largest cost of changing any one element (a digit from its best reading to
        another: ``log(p_best / p_other)``; a candle crossed or not: ``|logit p|``).
    margin : float
        How much cheaper (nats) the best agreeing reading must be than the next one.
    top_n : int
        How many of each box's most likely digits are considered (within ``max_flip``).
    mid_turn : float
        The cost (nats) of reading the card as caught between writing its last number (the
        rightmost box read) and crossing out its candle. The default 1.7 is
        ``log(0.85 / 0.15)``: a card watched through a game shows a number not crossed yet
        about 15% of the time. So a last number plainly not crossed is left so, while a cross
        the disc model half saw is still taken when that costs less than the price.
    max_steps : int
        A bound on the search (nodes visited); a card that needs more is left as read.

    Returns
    -------
    Settled
        The readings unchanged (``note`` empty) when they agree already (a hidden candle may
        be crossed or not), when a box is hidden (it may hold anything), or when no cheap and
        clear change exists. Hidden candles stay out of ``crossed`` (they are unknown).
    """
    crossed0 = tuple(i for i, p in enumerate(cross_prob) if p is not None and p >= cross_threshold)
    unchanged = Settled(crossed0, tuple(top))
    if len(numbers) != len(cross_prob):
        return unchanged
    written = [k for k, p in enumerate(digit_probs) if p is not None]
    # a box left unknown without a reading (hidden, washed out) may hold anything
    if any(b == "unknown" and digit_probs[k] is None for k, b in enumerate(top)):
        return unchanged
    probs = {k: np.asarray(digit_probs[k], np.float64) for k in written}
    best = {k: int(np.argmax(probs[k])) + 1 for k in written}
    # per number, the candles in view (likeliest crossed first) and how many are hidden: a
    # hidden candle may be crossed or not, at no cost, and stays unknown
    by_number: dict[int, list[int]] = {}
    hidden: Counter[int] = Counter()
    for i, n in enumerate(numbers):
        by_number.setdefault(n, [])
        if cross_prob[i] is None:
            hidden[n] += 1
        else:
            by_number[n].append(i)
    cp = [0.5 if p is None else float(p) for p in cross_prob]
    for ids in by_number.values():
        ids.sort(key=lambda i: -cp[i])
    on0 = [p is not None and p >= cross_threshold for p in cross_prob]
    seen0 = Counter(numbers[i] for i in crossed0)

    def agrees(need: Counter[int]) -> bool:
        return all(seen0[n] <= need[n] <= seen0[n] + hidden[n] for n in by_number)

    # (a card caught in the middle of a turn, its last number not crossed yet, keeps the count
    # too, at mid_turn's price: weighed in the search below)
    if all(isinstance(top[k], TopBox) for k in written) and \
            agrees(Counter(best[k] for k in written)):
        return unchanged

    base = sum(_nll(probs[k][best[k] - 1]) for k in written) + \
        sum(_nll(cp[i] if on0[i] else 1.0 - cp[i]) for ids in by_number.values() for i in ids)
    options = [[(int(v) + 1, _nll(probs[k][v])) for v in np.argsort(-probs[k])[:top_n]
                if math.log(probs[k].max() / max(probs[k][v], _EPS)) <= max_flip]
               for k in written]
    candle_part: dict[tuple[int, ...], tuple[float, float, list[int]] | None] = {}
    found: list[tuple[float, float, tuple[int, ...], tuple[int, ...]]] = []
    # the two cheapest readings are all that count: a depth-first search over the boxes (left
    # to right, likeliest digit first) that drops a branch once its digits alone cost more
    # than the second cheapest reading found so far
    bound = [math.inf]
    # what the candles cost at the least, whatever is written
    floor = sum(min(_nll(cp[i]), _nll(1.0 - cp[i])) for ids in by_number.values() for i in ids)
    combo: list[int] = []
    count: Counter[int] = Counter()
    steps = [0]

    def visit(j: int, cost: float) -> None:
        steps[0] += 1
        if cost + floor >= bound[0] or steps[0] > max_steps:
            return
        if j == len(written):
            # the whole turn done, or the last one caught before its cross
            for price, need in ((0.0, count), (mid_turn, count - Counter(combo[-1:]))):
                key = tuple(sorted(need.elements()))
                if key not in candle_part:
                    candle_part[key] = _candles(need, by_number, hidden, cp, on0, max_flip)
                part = candle_part[key]
                if part is None:
                    continue
                entry = (cost + price + part[0], part[1], tuple(combo), tuple(sorted(part[2])))
                same = [f for f in found if f[2:] == entry[2:]]
                if same and same[0][0] <= entry[0]:
                    continue
                found[:] = [f for f in found if f[2:] != entry[2:]] + [entry]
                found.sort(key=lambda f: f[0])
                del found[2:]
                if len(found) == 2:
                    bound[0] = found[1][0]
            return
        k = written[j]
        for v, c in options[j]:
            # at most twice a number; the second write of a number circled, the first not
            if count[v] >= 2 or v not in by_number or \
                    (circled[k] is not None and bool(circled[k]) != (count[v] > 0)):
                continue
            combo.append(v)
            count[v] += 1
            visit(j + 1, cost + c)
            count[v] -= 1
            combo.pop()

    visit(0, 0.0)
    if not found or steps[0] > max_steps:
        return unchanged
    cost, alt, best_combo, chosen = found[0]
    extra = cost - base
    # the next best: another reading of the numbers, or the same with other candles
    nxt = min(found[1][0] if len(found) > 1 else math.inf, cost + alt)
    if extra > max_cost or nxt - cost < margin:
        return unchanged
    new_top = list(top)
    changes = []
    for k, v in zip(written, best_combo, strict=True):
        box = TopBox(v, bool(circled[k]))
        if top[k] != box:
            was = top[k].value if isinstance(top[k], TopBox) else "unknown"
            changes.append(f"top {k} {was} -> {v} (p {probs[k][v - 1]:.2f})")
        new_top[k] = box
    for i in sorted(set(chosen) ^ set(crossed0)):
        changes.append(f"candle {i} {'crossed' if i in chosen else 'not crossed'} "
                       f"(p {cp[i]:.2f})")
    if not changes:
        return unchanged
    note = (f"written numbers and crossed candles made to agree (+{extra:.1f} nats): "
            + ", ".join(changes))
    return Settled(chosen, tuple(new_top), extra, note)


def settle_lines(strength: dict[tuple[int, int], float | None],
                 lines: Sequence[tuple[int, int]], written: int, crossed: int, *,
                 min_add: float = 0.1, max_drop: float = 0.9, margin: float = 1.0,
                 ) -> tuple[list[tuple[int, int]], str]:
    """Each turn also draws one line: when the boxes and the crosses agree on the number of
    turns (``written == crossed``; or ``written == crossed + 1``, a card caught in the middle
    of a turn, its last line drawn or not) and the lines read are one fewer or one more than
    that allows, the line the count asks for is taken if the band model is clear about it.

    One fewer: the strongest pair not read as a line is added when its probability is at least
    ``min_add`` and its logit exceeds the next pair's by ``margin``, and no pair is unknown
    (a hidden pair may be the missing line). One more: the weakest line is dropped when its
    probability is at most ``max_drop`` and its logit is ``margin`` below the next weakest.

    Returns the lines and a note (empty when nothing changed). ``strength`` maps every candle
    pair to the band model's probability (None: unknown)."""
    lines = sorted(lines)
    if written == crossed:
        lo = hi = written
    elif written == crossed + 1:
        # caught in the middle of a turn: the last number written, its line drawn or not yet
        lo, hi = written - 1, written
    else:
        return lines, ""
    counts = f"{written} numbers written, {crossed} crossed"
    known = {p: float(v) for p, v in strength.items() if v is not None}
    if len(lines) == lo - 1 and len(known) == len(strength):
        rest = sorted(((v, p) for p, v in known.items() if p not in lines), reverse=True)
        if rest and rest[0][0] >= min_add and (
                len(rest) < 2 or _logit(rest[0][0]) - _logit(rest[1][0]) >= margin):
            p = rest[0][1]
            return sorted([*lines, p]), (f"line {p[0]}-{p[1]} drawn (p {rest[0][0]:.2f}): "
                                          f"{counts}")
    elif len(lines) == hi + 1:
        have = sorted((known[p], p) for p in lines if p in known)
        if have and have[0][0] <= max_drop and (
                len(have) < 2 or _logit(have[1][0]) - _logit(have[0][0]) >= margin):
            p = have[0][1]
            return [q for q in lines if q != p], (f"line {p[0]}-{p[1]} not drawn "
                                                  f"(p {have[0][0]:.2f}): {counts}")
    return lines, ""


def settle_empty(cross_prob: Sequence[float | None], crossed: Sequence[int],
                 top: Sequence[TopBox | str | None], read: Sequence[bool], *,
                 max_flip: float = 4.0) -> tuple[tuple[TopBox | str | None, ...], str]:
    """Boxes the count proves empty: with every candle in view and each one not crossed
    plainly so (its logit below ``-max_flip``), the card has had as many turns as candles
    crossed, or one more caught before its cross, and the boxes are filled from the left; when
    the first that many boxes hold digits, a box beyond the next one that was left unknown
    without a reading (washed out by glare, hidden) is empty. ``read`` tells per box whether
    the digit model read it (a box it read but found unsure is not touched). Returns the
    boxes and a note (empty when nothing changed)."""
    out = tuple(top)
    if any(p is None for p in cross_prob):
        return out, ""
    if any(i not in crossed and _logit(p) >= -max_flip  # type: ignore[arg-type]
           for i, p in enumerate(cross_prob)):
        return out, ""
    # n turns done, and perhaps one more caught before its cross (box n written)
    n = len(crossed)
    if not all(isinstance(b, TopBox) for b in top[:n]):
        return out, ""
    if not all(b is None or (b == "unknown" and not read[k])
               for k, b in enumerate(top) if k > n):
        return out, ""
    empty = [k for k, b in enumerate(top) if k > n and b == "unknown"]
    if not empty:
        return out, ""
    return (tuple(None if k in empty else b for k, b in enumerate(top)),
            f"top {', '.join(map(str, empty))} empty: {n} candles crossed, at most {n + 1} "
            "boxes written")


def settle_circles(top: Sequence[TopBox | str | None], circle_prob: Sequence[float | None], *,
                   max_flip: float = 4.0) -> tuple[tuple[TopBox | str | None, ...], str]:
    """The second write of a number is the circled one: when every box is read (no box
    unknown), a box whose circle the circle head called against the digits read before it is
    called by them instead, unless the head is sure (``|logit|`` over ``max_flip``). Returns
    the boxes and a note (empty when nothing changed)."""
    out = list(top)
    if any(b == "unknown" for b in top):
        return tuple(out), ""
    seen: set[int] = set()
    changed = []
    for k, b in enumerate(top):
        if not isinstance(b, TopBox):
            continue
        want = b.value in seen
        seen.add(b.value)
        p = circle_prob[k]
        if want != b.circled and p is not None and abs(_logit(p)) <= max_flip:
            out[k] = TopBox(b.value, want)
            changed.append(f"top {k} {'circled' if want else 'not circled'} (p {p:.2f})")
    if not changed:
        return tuple(out), ""
    return tuple(out), "the second write of a number circled: " + ", ".join(changed)
