from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.tracker import (
    CandleCrossed,
    DigitCircled,
    DigitWritten,
    Erased,
    LineDrawn,
    SigilTracker,
    SigilTrackerConfig,
)
from vision.readings import SigilState, TopBox

BLANK = SigilState.of("A")


def state(lines=(), crossed=(), top=None, unknown=(), layout="A") -> SigilState:
    boxes = [None] * 7
    for k, (value, circled) in (top or {}).items():
        boxes[k] = TopBox(value, circled)
    return SigilState.of(layout, lines, crossed, boxes, unknown)


def run(frames, card="B1", config=None):
    tracker = SigilTracker(config)
    out = []
    for i, s in enumerate(frames):
        out.extend((i, e.text) for e in tracker.update(card, s, i / 10))
    return out, tracker


TURN = state(lines=[(2, 9)], crossed=[7], top={0: (4, False)})
# a hand or a cloth moving over the card: five or more unknowns, changing from frame to frame
MOVING = (["line 0-1", "line 0-2", "line 0-3", "line 0-4", "line 0-5"],
          ["line 1-2", "line 1-3", "line 1-4", "line 1-5", "line 1-6"])


@pytest.mark.parametrize(("name", "frames", "expected"), [
    ("a blank card says nothing", [BLANK] * 10, []),
    ("a line drawn is announced once, after the vote",
     [BLANK] * 5 + [state(lines=[(2, 9)])] * 10, [(7, "new line left 3 – right 3 on card B1")]),
    ("a whole Doom Cat turn: digit, line, cross",
     [BLANK] * 5 + [state(top={0: (4, False)})] * 5 + [state(lines=[(2, 9)], top={0: (4, False)})]
     * 5 + [TURN] * 5,
     [(7, "digit 4 written in top box 1 on card B1"), (12, "new line left 3 – right 3 on card B1"),
      (17, "candle lower 5 crossed on card B1")]),
    ("a ghost line in one noisy frame is never announced",
     [BLANK] * 5 + [state(lines=[(0, 11)])] + [BLANK] * 5, []),
    ("two noisy frames apart are never announced",
     [BLANK] * 3 + [state(lines=[(0, 11)]), BLANK, BLANK, state(lines=[(0, 11)])] + [BLANK] * 5,
     []),
    ("a line that vanishes for one frame is not erased",
     [TURN] * 6 + [state(crossed=[7], top={0: (4, False)})] + [TURN] * 5,
     [(2, "new line left 3 – right 3 on card B1"), (2, "candle lower 5 crossed on card B1"),
      (2, "digit 4 written in top box 1 on card B1")]),
    ("a line hidden by a hand (unknown) is filled from the later frames",
     [state(unknown=["line 2-9"])] * 6 + [state(lines=[(2, 9)])] * 4,
     [(8, "new line left 3 – right 3 on card B1")]),
    ("a line hidden by a hand after it was seen is kept, not erased",
     [state(lines=[(2, 9)])] * 5 + [state(unknown=["line 2-9", "candle 2", "top 0"])] * 10,
     [(2, "new line left 3 – right 3 on card B1")]),
    ("a digit written then circled",
     [state(top={1: (3, False)})] * 5 + [state(top={1: (3, True)})] * 5,
     [(2, "digit 3 written in top box 2 on card B1"),
      (7, "digit 3 circled in top box 2 on card B1")]),
    ("a digit written already circled",
     [BLANK] * 3 + [state(top={4: (6, True)})] * 5,
     [(5, "digit 6 written in top box 5 (circled) on card B1")]),
    ("a digit corrected",
     [state(top={0: (3, False)})] * 5 + [state(top={0: (5, False)})] * 5,
     [(2, "digit 3 written in top box 1 on card B1"),
      (7, "digit 5 written in top box 1 (was 3) on card B1")]),
    ("a card wiped at the end of a game: told once the card has been still erase_hold seconds",
     [TURN] * 5 + [BLANK] * 10, [(2, "new line left 3 – right 3 on card B1"),
                                 (2, "candle lower 5 crossed on card B1"),
                                 (2, "digit 4 written in top box 1 on card B1"),
                                 (12, "card B1 wiped")]),
    ("a card wiped in strokes, a hand moving over it between them, is one event",
     [TURN] * 5 + [state(unknown=MOVING[k % 2]) for k in range(3)]
     + [state(crossed=[7])] * 4 + [state(unknown=MOVING[k % 2]) for k in range(3)]
     + [BLANK] * 10,
     [(2, "new line left 3 – right 3 on card B1"), (2, "candle lower 5 crossed on card B1"),
      (2, "digit 4 written in top box 1 on card B1"), (22, "card B1 wiped")]),
    ("one line erased (a mistake corrected)",
     [state(lines=[(2, 9), (0, 5)])] * 5 + [state(lines=[(0, 5)])] * 10,
     [(2, "new line left 1 – upper 6 on card B1"), (2, "new line left 3 – right 3 on card B1"),
      (12, "erased line left 3 – right 3 on card B1")]),
    ("two things erased a few frames apart are told together",
     [TURN] * 5 + [state(crossed=[7], top={0: (4, False)})] * 4 + [state(crossed=[7])] * 10,
     [(2, "new line left 3 – right 3 on card B1"), (2, "candle lower 5 crossed on card B1"),
      (2, "digit 4 written in top box 1 on card B1"),
      (16, "erased line left 3 – right 3, top box 1 on card B1")]),
    ("a line erased, then the turn's line drawn before the hold ends: the erasure comes first",
     [state(lines=[(2, 9)])] * 5 + [state()] * 3 + [state(lines=[(0, 5)])] * 5,
     [(2, "new line left 3 – right 3 on card B1"),
      (10, "erased line left 3 – right 3 on card B1"),
      (10, "new line left 1 – upper 6 on card B1")]),
    ("a line read as gone for a while, then seen again, is neither erased nor new",
     [state(lines=[(2, 9)])] * 5 + [state()] * 3 + [state(lines=[(2, 9)])] * 10,
     [(2, "new line left 3 – right 3 on card B1")]),
    ("a digit wiped and another written: one correction",
     [state(top={0: (3, True)})] * 5 + [state()] * 3 + [state(top={0: (5, False)})] * 10,
     [(2, "digit 3 written in top box 1 (circled) on card B1"),
      (10, "digit 5 written in top box 1 (was 3) on card B1")]),
    ("a circle wiped, its digit kept",
     [state(top={0: (3, True)})] * 5 + [state(top={0: (3, False)})] * 10,
     [(2, "digit 3 written in top box 1 (circled) on card B1"),
      (12, "erased circle of top box 1 on card B1")]),
])
def test_sigil_table(name, frames, expected):
    events, _ = run(frames)
    assert events == expected, name


@pytest.mark.parametrize(("fps", "told_at"), [(10, 1.2), (5, 2.0), (2, 5.0)])
def test_the_erase_hold_is_in_seconds_whatever_the_frame_rate(fps, told_at):
    # votes settle the wipe on the 3rd blank frame (frame 7); it is told half a second later,
    # and not before three more votes (at 2 frames a second: 1.5 s)
    tracker = SigilTracker()
    said = []
    for i, s in enumerate([TURN] * 5 + [BLANK] * 10):
        said += [(round(e.t, 2), e.text) for e in tracker.update("B1", s, i / fps)
                 if isinstance(e, Erased)]
    assert said == [(told_at, "card B1 wiped")]


def test_a_card_back_in_view_after_a_gap_is_wiped_in_one_event():
    # the line's erasure is held when the card leaves the view (no readings for 5 s); it comes
    # back blank: the held erasure waits for the rest of the wipe's votes
    tracker = SigilTracker()
    said = []
    frames = [(i / 10, TURN) for i in range(5)] + [(0.5 + i / 10, state(crossed=[7],
                                                                          top={0: (4, False)}))
                                                   for i in range(3)]
    frames += [(6.0 + i / 10, BLANK) for i in range(10)]
    for t, s in frames:
        said += [(round(e.t, 2), e.text) for e in tracker.update("B1", s, t)
                 if isinstance(e, Erased)]
    assert said == [(6.7, "card B1 wiped")]


def test_a_hand_moving_over_the_card_starts_the_erase_hold_again():
    frames = ([TURN] * 5 + [state(crossed=[7], top={0: (4, False)})] * 4
              + [state(crossed=[7], top={0: (4, False)}, unknown=MOVING[k % 2]) for k in range(4)]
              + [state(crossed=[7], top={0: (4, False)})] * 6)
    events, _ = run(frames)
    # the line's erasure settles at frame 7; frames 9-12 are a hand at work; the wait begins
    # again at frame 13 and ends half a second later
    assert events[3:] == [(18, "erased line left 3 – right 3 on card B1")]


def test_texts_say_the_card_by_the_name_the_caller_gives():
    tracker = SigilTracker()
    said = []
    for i, s in enumerate([TURN] * 5 + [BLANK] * 10):
        said += tracker.update("g3p0c1", s, i / 10, name="player 1, card 2")
    assert [e.text for e in said] == [
        "new line left 3 – right 3 on player 1, card 2",
        "candle lower 5 crossed on player 1, card 2",
        "digit 4 written in top box 1 on player 1, card 2",
        "player 1, card 2 wiped"]
    assert {e.to_json()["card"] for e in said} == {"g3p0c1"}  # the data keep the caller's id


def test_state_fills_unknowns_from_other_frames_and_lists_the_undecided():
    frames = ([state(lines=[(2, 9)], crossed=[7])] * 4
              + [state(unknown=["line 2-9", "candle 7", "top 6"])] * 6)
    _, tracker = run(frames)
    voted = tracker.state("B1")
    assert voted.lines == ((2, 9),) and voted.crossed == (7,)
    assert voted.unknown == ()  # top 6 was seen in the first frames: it is empty


def test_state_lists_elements_never_seen_as_unknown():
    _, tracker = run([state(lines=[(1, 3)], unknown=["line 4-5", "top 2"])] * 5)
    voted = tracker.state("B1")
    assert voted.unknown == ("line 4-5", "top 2") and voted.lines == ((1, 3),)
    with pytest.raises(KeyError, match="no card 'X'"):
        tracker.state("X")


def test_cards_are_tracked_apart_and_a_layout_change_starts_over():
    tracker = SigilTracker()
    events = []
    for i in range(5):
        events += tracker.update_all({"A1": state(lines=[(0, 1)]),
                                      "C1": state(crossed=[3], layout="C")}, i / 10)
    assert [e.text for e in events] == ["new line left 1 – upper 2 on card A1",
                                        "candle left 2 crossed on card C1"]
    assert isinstance(events[0], LineDrawn) and isinstance(events[1], CandleCrossed)
    for i in range(5, 10):
        events += tracker.update("A1", state(layout="D"), i / 10)
    assert len(events) == 2  # a new blank card D: no erase event for card A's line
    assert tracker.state("A1").layout == "D" and tracker.cards() == ("A1", "C1")


def test_event_texts_fall_back_to_indices_when_the_layout_is_unknown():
    # a registered card deleted since: the event still says what changed, by index
    gone = Erased(t=0.0, card="B1", layout="no-such-card", elements=("line 2-9", "top 0"))
    assert gone.text == "erased line 2-9, top 0 on card B1"
    named = Erased(t=0.0, card="B1", layout="A", elements=("line 2-9", "top 0"))
    assert named.text == "erased line left 3 – right 3, top box 1 on card B1"


def test_events_serialise():
    tracker = SigilTracker()
    events = []
    for i in range(14):
        events += tracker.update("B1", TURN if i < 4 else BLANK, i / 10)
    docs = [e.to_json() for e in events]
    json.dumps(docs)
    digit = next(e for e in events if isinstance(e, DigitWritten))
    assert digit.to_json() == {"kind": "digit", "t": 0.2, "card": "B1", "layout": "A",
                               "text": "digit 4 written in top box 1 on card B1", "box": 0,
                               "value": 4, "circled": False, "previous": None}
    wiped = next(e for e in events if isinstance(e, Erased))
    assert wiped.wiped and set(wiped.elements) == {"line 2-9", "candle 7", "top 0"}
    assert docs[0]["line"] == [2, 9] and docs[1]["candle"] == 7


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"window": 0}, "min_votes"), ({"min_votes": 6}, "min_votes"), ({"share": 0.5}, "share"),
    ({"erase_hold": -1}, "erase_hold"), ({"erase_hold": float("nan")}, "erase_hold"),
])
def test_config_refuses_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        SigilTrackerConfig(**kwargs)


def test_bad_calls_are_refused():
    tracker = SigilTracker()
    tracker.update("B1", BLANK, 1.0)
    with pytest.raises(ValueError, match="not decrease"):
        tracker.update("B1", BLANK, 0.5)
    with pytest.raises(ValueError, match="card id"):
        tracker.update("", BLANK, 2.0)
    with pytest.raises(TypeError, match="SigilState"):
        tracker.update("B1", {"layout": "A"}, 2.0)  # type: ignore[arg-type]


# ---------------------------------------------------------------- properties
_pairs = st.lists(st.tuples(st.integers(0, 11), st.integers(0, 11)).filter(lambda p: p[0] != p[1])
                  .map(lambda p: tuple(sorted(p))), unique=True, max_size=6)
_states = st.builds(
    lambda lines, crossed, digits: state(lines=lines, crossed=crossed,
                                         top={k: v for k, v in enumerate(digits) if v}),
    _pairs, st.lists(st.integers(0, 11), unique=True, max_size=5),
    st.lists(st.one_of(st.none(), st.tuples(st.integers(1, 6), st.booleans())), max_size=7))


@settings(max_examples=60, deadline=None)
@given(s=_states, n=st.integers(3, 20))
def test_constant_state_announces_each_element_exactly_once(s, n):
    events, tracker = run([s] * n)
    assert len([t for _, t in events if t.startswith("new line")]) == len(s.lines)
    assert len([t for _, t in events if "crossed" in t]) == len(s.crossed)
    assert len([t for _, t in events if t.startswith("digit")]) == sum(b is not None for b in s.top)
    assert tracker.state("B1") == s


@settings(max_examples=60, deadline=None)
@given(s=_states, noise=_states, before=st.integers(3, 8), after=st.integers(0, 8))
def test_a_single_noisy_frame_changes_nothing(s, noise, before, after):
    clean, _ = run([s] * (before + 1 + after))
    noisy, tracker = run([s] * before + [noise] + [s] * after)
    assert noisy == clean
    assert tracker.state("B1") == s


def _replayed(events, layout="A") -> SigilState:
    """The card a player keeping score from the events alone would have."""
    lines, crossed, top = set(), set(), [None] * 7
    for e in events:
        if isinstance(e, LineDrawn):
            lines.add((e.a, e.b))
        elif isinstance(e, CandleCrossed):
            crossed.add(e.candle)
        elif isinstance(e, DigitWritten):
            top[e.box] = TopBox(e.value, e.circled)
        elif isinstance(e, DigitCircled):
            top[e.box] = TopBox(e.value, True)
        elif isinstance(e, Erased):
            for name in e.elements:
                kind, _, index = name.rpartition(" ")
                if kind == "circle of top":
                    top[int(index)] = TopBox(top[int(index)].value, False)
                elif kind == "top":
                    top[int(index)] = None
                elif kind == "candle":
                    crossed.discard(int(index))
                else:
                    lines.discard(tuple(int(v) for v in index.split("-")))
    return SigilState.of(layout, sorted(lines), sorted(crossed), top, ())


# cards drawn from a few elements, so that the same ones come and go and change
_few_states = st.builds(
    lambda lines, crossed, digits: state(lines=lines, crossed=crossed,
                                         top={k: v for k, v in enumerate(digits) if v}),
    st.lists(st.sampled_from([(0, 1), (2, 9), (4, 7)]), unique=True),
    st.lists(st.sampled_from([3, 7]), unique=True),
    st.lists(st.one_of(st.none(), st.tuples(st.integers(1, 2), st.booleans())), max_size=2))


@settings(max_examples=150, deadline=None)
@given(segments=st.lists(st.tuples(_few_states, st.integers(1, 7)), min_size=1, max_size=8))
def test_the_events_tell_the_whole_card_once_it_is_still(segments):
    # Whatever was drawn, erased, misread or corrected on the way, a player who keeps the
    # card from the events alone has the tracker's card once the card has been still.
    frames = [s for s, n in segments for _ in range(n)]
    frames += [segments[-1][0]] * (SigilTrackerConfig().window + 6)  # 10 frames a second
    tracker = SigilTracker()
    events = []
    for i, s in enumerate(frames):
        events += tracker.update("B1", s, i / 10)
    assert _replayed(events) == tracker.state("B1") == segments[-1][0]


_UNDER_HAND = [[f"line {a}-{b}" for a, b in [(0, 1), (0, 2), (1, 2), (1, 3), (2, 3), (3, 4)][:n]]
               for n in (5, 6)]


def test_a_hand_moving_over_the_card_casts_no_vote():
    # While a pen moves over the card the reader sees a ghost line 6-8 next to what it hides,
    # in many frames in a row: those frames are busy (many unknowns, changing), so no event.
    busy = [state(lines=[(6, 8)], unknown=_UNDER_HAND[i % 2]) for i in range(8)]
    events, tracker = run([BLANK] * 3 + busy + [state(lines=[(2, 7)])] * 4)
    assert [text for _, text in events] == ["new line left 3 – lower 5 on card B1"]
    assert not tracker.busy("B1")
    assert tracker.state("B1").lines == ((2, 7),)


def test_unknowns_that_stay_put_do_not_stop_the_votes():
    glare = _UNDER_HAND[1]  # the same six elements hidden in every frame: glare, not a hand
    events, tracker = run([state(unknown=glare)] * 3 + [state(lines=[(5, 9)], unknown=glare)] * 4)
    assert [text for _, text in events] == ["new line upper 6 – right 3 on card B1"]
    assert not tracker.busy("B1")


def test_the_callers_hand_flag_stops_the_votes():
    tracker = SigilTracker()
    events = []
    for i in range(6):
        events += tracker.update("B1", state(lines=[(1, 4)]), i / 10, hand=True)
    assert events == [] and tracker.busy("B1")
    for i in range(6, 9):
        events += tracker.update("B1", state(lines=[(1, 4)]), i / 10)
    assert [e.text for e in events] == ["new line upper 2 – upper 5 on card B1"]
