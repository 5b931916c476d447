from __future__ import annotations

import numpy as np
import pytest

from vision.readings import TopBox
from vision.sigil.bookkeeping import settle, settle_circles, settle_empty, settle_lines

# candle i shows number NUMBERS[i]: every number twice
NUMBERS = [1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6]


def digits(**p: float) -> np.ndarray:
    """Probabilities of 1..6: the named ones (``d3=0.9``), the rest shared equally."""
    out = np.zeros(6)
    for k, v in p.items():
        out[int(k[1:]) - 1] = v
    rest = [i for i in range(6) if out[i] == 0]
    out[rest] = (1.0 - out.sum()) / len(rest)
    return out


def candles(**p: float) -> list[float | None]:
    """Disc probabilities: the named candles (``c2=0.99``), 0.001 for the rest."""
    out: list[float | None] = [0.001] * 12
    for k, v in p.items():
        out[int(k[1:])] = v
    return out


def run(cross, boxes, top=None, circled=None, **options):
    probs = [b for b in boxes] + [None] * (7 - len(boxes))
    if top is None:
        top = [TopBox(int(np.argmax(b)) + 1) if b is not None else None for b in probs]
    circled = (circled or [False] * len(boxes)) + [None] * (7 - len(boxes))
    return settle(NUMBERS, cross, 0.5, probs, circled, top, **options)


def test_agreeing_readings_are_left_alone() -> None:
    r = run(candles(c2=0.99, c4=0.98), [digits(d3=0.9), digits(d5=0.8)])
    assert r.note == "" and r.crossed == (2, 4)
    assert r.top[:2] == (TopBox(3), TopBox(5))


def test_unsure_box_takes_the_number_its_candle_shows() -> None:
    # box 1 is unsure (2 at 0.35, 5 at 0.30): the crosses show 3 and 5, both sure
    boxes = [digits(d3=0.95), digits(d2=0.35, d5=0.30)]
    r = run(candles(c2=0.99, c4=0.99), boxes, top=[TopBox(3), "unknown"] + [None] * 5)
    assert r.top[1] == TopBox(5)
    assert r.crossed == (2, 4)
    assert "top 1 unknown -> 5" in r.note


@pytest.mark.parametrize(("cross", "expected"), [
    (candles(c2=0.99, c4=0.98, c7=0.7), (2, 4)),   # an extra cross (a ghost) no box wrote
    (candles(c2=0.3, c4=0.99), (2, 4)),             # a faint cross the count needs
    (candles(c8=0.2, c4=0.99), (4, 8)),            # ... on either candle showing the number
])
def test_crosses_follow_sure_digits(cross, expected) -> None:
    r = run(cross, [digits(d3=0.97), digits(d5=0.96)])
    assert r.crossed == expected
    assert r.note


@pytest.mark.parametrize("cross", [
    candles(c2=0.99),                   # the Owl: no candle knocked over for the 5, nothing
                                        # near it: the count stays broken
    candles(c2=0.99, c4=0.45, c10=0.45),  # both candles showing 5 equally likely
    candles(c2=0.99, c4=None),           # a hidden candle may hold what is missing
])
def test_no_change_when_costly_unclear_or_hidden(cross) -> None:
    r = run(cross, [digits(d3=0.97), digits(d5=0.96)])
    assert r.note == ""
    assert r.top[:2] == (TopBox(3), TopBox(5))


def test_hidden_box_leaves_the_card_as_read() -> None:
    top = [TopBox(3), "unknown"] + [None] * 5
    r = settle(NUMBERS, candles(c2=0.99, c4=0.99, c7=0.6), 0.5,
               [digits(d3=0.97)] + [None] * 6, [False] + [None] * 6, top)
    assert r.note == "" and r.crossed == (2, 4, 7)


def test_the_second_write_of_a_number_is_the_circled_one() -> None:
    # box 0 reads 4 or 2 (unsure), box 1 a circled 4: the crosses show 4 twice
    boxes = [digits(d2=0.5, d4=0.4), digits(d4=0.9)]
    r = run(candles(c3=0.99, c9=0.99), boxes, top=[TopBox(2), TopBox(4, True)] + [None] * 5,
            circled=[False, True])
    assert r.top[:2] == (TopBox(4), TopBox(4, True))


def pairs(**p: float) -> dict[tuple[int, int], float | None]:
    """Band probabilities of every candle pair: the named ones (``l0_5=0.9``), 0.01 else."""
    out: dict[tuple[int, int], float | None] = {(a, b): 0.01 for a in range(12)
                                                for b in range(a + 1, 12)}
    for k, v in p.items():
        a, b = k[1:].split("_")
        out[(int(a), int(b))] = v
    return out


@pytest.mark.parametrize(("strength", "lines", "crossed", "expected"), [
    # two turns, one line read: a faint second line clear of the rest is taken
    (pairs(l0_5=0.99, l2_7=0.3), [(0, 5)], 2, [(0, 5), (2, 7)]),
    # two turns, three lines read: the weak one goes
    (pairs(l0_5=0.99, l2_7=0.98, l3_4=0.6), [(0, 5), (2, 7), (3, 4)], 2, [(0, 5), (2, 7)]),
    # the second turn caught before its cross: one or two lines; three are one too many
    (pairs(l0_5=0.99, l2_7=0.98, l3_4=0.6), [(0, 5), (2, 7), (3, 4)], 1, [(0, 5), (2, 7)]),
])
def test_lines_follow_the_turns(strength, lines, crossed, expected) -> None:
    out, note = settle_lines(strength, lines, written=2, crossed=crossed)
    assert out == expected and note


@pytest.mark.parametrize(("strength", "lines", "written", "crossed"), [
    (pairs(l0_5=0.99, l2_7=0.05), [(0, 5)], 2, 2),              # too faint to take
    (pairs(l0_5=0.99, l2_7=0.3, l3_4=0.25), [(0, 5)], 2, 2),    # two candidates alike
    (pairs(l0_5=0.99, l2_7=0.3) | {(1, 2): None}, [(0, 5)], 2, 2),  # a hidden pair
    (pairs(l0_5=0.99, l2_7=0.3), [(0, 5)], 2, 1),               # caught before the line
    (pairs(l0_5=0.99, l2_7=0.3), [(0, 5)], 3, 1),               # crosses disagree
    (pairs(l0_5=0.99, l2_7=0.98, l3_4=0.95), [(0, 5), (2, 7), (3, 4)], 2, 2),  # all strong
])
def test_lines_stay_when_the_count_is_unclear(strength, lines, written, crossed) -> None:
    out, note = settle_lines(strength, lines, written=written, crossed=crossed)
    assert out == sorted(lines) and note == ""


def test_a_hidden_candle_may_hold_the_missing_cross() -> None:
    # crosses in view show 3; candle 4 (a 5) is hidden; box 0 reads 6 or 5, unsure: the 6s are
    # plainly not crossed, so 5 it is, and candle 4 stays unknown (not in crossed)
    boxes = [digits(d6=0.4, d5=0.35), digits(d3=0.97)]
    r = run(candles(c2=0.99, c4=None), boxes, top=["unknown", TopBox(3)] + [None] * 5)
    assert r.top[0] == TopBox(5)
    assert r.crossed == (2,)


@pytest.mark.parametrize("cross", [candles(c2=0.99), candles(c2=0.99, c4=0.1)])
def test_a_card_caught_before_its_last_cross_is_left_alone(cross) -> None:
    # the last number written (5), its candle not crossed yet: the middle of a turn
    r = run(cross, [digits(d3=0.97), digits(d5=0.96)])
    assert r.note == "" and r.crossed == (2,)


def test_a_half_seen_last_cross_costs_less_than_the_middle_of_a_turn() -> None:
    # candle 4 (a 5) at 0.45: crossing it costs 0.2 nats, the middle of a turn 1.7
    boxes = [digits(d3=0.97), digits(d5=0.96)]
    r = run(candles(c2=0.99, c4=0.45), boxes)
    assert r.crossed == (2, 4) and "candle 4 crossed" in r.note
    # were the middle of a turn free, a card could never have its last cross mended
    r = run(candles(c2=0.99, c4=0.45), boxes, mid_turn=0.0)
    assert r.crossed == (2,) and r.note == ""


def test_the_last_box_is_free_of_the_count() -> None:
    # the last box is unsure (2 or 6): caught before its cross, nothing tells which
    boxes = [digits(d3=0.97), digits(d2=0.4, d6=0.3)]
    r = run(candles(c2=0.99), boxes, top=[TopBox(3), "unknown"] + [None] * 5)
    assert r.note == "" and r.top[1] == "unknown"


def test_two_equally_good_readings_leave_the_box_unknown() -> None:
    # box 1 reads 2 or 5 alike, and a 2 and a 5 are half crossed each: no clear reading
    boxes = [digits(d3=0.97), digits(d2=0.4, d5=0.4)]
    r = run(candles(c2=0.99, c1=0.5, c4=0.5), boxes, top=[TopBox(3), "unknown"] + [None] * 5)
    assert r.note == "" and r.top[1] == "unknown"


def test_many_unsure_boxes_are_searched_quickly() -> None:
    # seven blurred boxes: the search still finds the one reading the crosses allow
    values = [1, 2, 3, 4, 5, 6, 1]
    boxes = [digits(**{f"d{v}": 0.3, f"d{v % 6 + 1}": 0.25}) for v in values]
    cross = candles(c0=0.99, c1=0.99, c2=0.99, c3=0.99, c4=0.99, c5=0.99, c6=0.99)
    top = ["unknown"] * 7
    r = settle(NUMBERS, cross, 0.5, boxes, [False] * 6 + [True], top)
    assert [b.value for b in r.top] == values


def test_a_washed_out_box_after_the_turns_is_empty() -> None:
    # two candles plainly crossed, the rest plainly not: two turns, or a third caught before
    # its cross (box 2 may hold it); box 3 (washed out, unread) is empty; an unsure or hidden
    # candle, or an unread box among the turns, proves nothing
    top = [TopBox(3), TopBox(5), "unknown", "unknown"] + [None] * 3
    read = [True, True, False, False] + [False] * 3
    out, note = settle_empty(candles(c2=0.99, c4=0.99), (2, 4), top, read)
    assert out[2] == "unknown" and out[3] is None and note
    for cross, crossed, boxes in (
            (candles(c2=0.99, c4=0.99, c7=0.2), (2, 4), top),         # c7 might be crossed
            (candles(c2=0.99, c4=0.99, c7=None), (2, 4), top),        # c7 hidden
            (candles(c2=0.99, c4=0.99, c5=0.99), (2, 4, 5), top)):    # three turns
        out, note = settle_empty(cross, crossed, boxes, read)
        assert out[3] == "unknown" and note == ""


def test_the_circle_follows_the_second_write_unless_the_head_is_sure() -> None:
    top = [TopBox(4), TopBox(2), TopBox(4, False), TopBox(2, True)] + [None] * 3
    out, note = settle_circles(top, [0.01, 0.02, 0.3, 0.9999, None, None, None])
    assert out[2] == TopBox(4, True)          # the head was unsure: the digits decide
    assert out[3] == TopBox(2, True) and note
    sure = [0.01, 0.02, 0.0001, 0.99, None, None, None]   # the head is sure: left as read
    assert settle_circles(top, sure) == (tuple(top), "")
    assert settle_circles([TopBox(4), "unknown", TopBox(4)] + [None] * 4,
                          [0.01, None, 0.3, None, None, None, None])[1] == ""
