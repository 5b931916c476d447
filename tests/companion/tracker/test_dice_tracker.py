from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.tracker import (
    DiceTracker,
    DiceTrackerConfig,
    DieNudged,
    RerollSettled,
    RollSettled,
)
from vision.readings import DiceReading, Die

S = 40.0  # die size in pixels


def die(value, x, y, color="white", state=None, conf=0.95) -> Die:
    if state is None:
        state = "flat" if value is not None else "cocked"
    return Die(value, color, (x - S / 2, y - S / 2, x + S / 2, y + S / 2), conf, state)


def still(dice, n):
    return [list(dice)] * n


def run(frames, config=None, hands=None):
    """Feed frames (lists of Die) at 10 fps; return [(frame index, event)]."""
    tracker = DiceTracker(config)
    out = []
    for i, dice in enumerate(frames):
        hand = bool(hands and i in hands)
        for event in tracker.update(DiceReading(tuple(dice)), i / 10.0, hand=hand):
            out.append((i, event))
    return out, tracker


THREE = [die(3, 100, 100), die(5, 200, 110), die(5, 300, 90)]


def tumbling(final, frames=4, seed=0):
    """Dice thrown in: moving several die sizes a frame, faces flickering, then ``final``."""
    rng = random.Random(seed)
    out = []
    for k in range(frames, 0, -1):
        out.append([die(rng.randint(1, 6), d.center[0] - 1.0 * S * k, d.center[1] + 0.4 * S * k,
                        d.color) for d in final])
    return out


# ---------------------------------------------------------------- one roll
def test_constant_dice_emit_one_roll_after_the_vote():
    events, tracker = run(still(THREE, 20))
    assert [(i, e.text) for i, e in events] == [(4, "roll settled: 3 5 5")]
    event = events[0][1]
    assert isinstance(event, RollSettled) and event.values == (3, 5, 5)
    assert event.triples == () and event.needs_player == ()
    assert [d.state for d in tracker.dice()] == ["settled"] * 3


def test_tumbling_dice_emit_only_when_they_come_to_rest():
    frames = tumbling(THREE) + still(THREE, 10)
    events, _ = run(frames)
    assert [(i, e.text) for i, e in events] == [(4 + 4, "roll settled: 3 5 5")]


def test_rolling_state_is_shown_while_dice_move():
    tracker = DiceTracker()
    for i, dice in enumerate(tumbling(THREE)):
        assert tracker.update(DiceReading(tuple(dice)), i / 10) == []
    assert {d.state for d in tracker.dice()} == {"rolling"}


@pytest.mark.parametrize(("name", "frames", "expected"), [
    ("a misread frame before settling does not win the vote",
     [*still(THREE, 2), [die(3, 100, 100), die(6, 200, 110), die(5, 300, 90)], *still(THREE, 8)],
     ["roll settled: 3 5 5"]),
    ("a misread frame after the roll settled emits nothing",
     [*still(THREE, 6), [die(3, 100, 100), die(6, 200, 110), die(5, 300, 90)], *still(THREE, 8)],
     ["roll settled: 3 5 5"]),
    ("two misreads in a row after the roll settled emit nothing",
     still(THREE, 6) + [[die(1, 100, 100), die(5, 200, 110), die(5, 300, 90)]] * 2
     + still(THREE, 8),
     ["roll settled: 3 5 5"]),
    ("a die the reader misses for two frames is still the same die",
     still(THREE, 6) + [THREE[:2]] * 2 + still(THREE, 8),
     ["roll settled: 3 5 5"]),
    ("positions jittering by a few pixels are still",
     [[die(d.value, d.center[0] + (i % 3) * 3, d.center[1] - (i % 2) * 3) for d in THREE]
      for i in range(12)],
     ["roll settled: 3 5 5"]),
    ("triples are flagged (Doom Cat: wild for all players)",
     still([die(4, 100, 100), die(4, 200, 100), die(4, 300, 100)], 8),
     ["roll settled: 4 4 4 (triples: 4 4 4)"]),
    ("a cocked die is never guessed: the player is asked",
     still([die(2, 100, 100), die(None, 200, 100), die(6, 300, 100)], 8),
     ["roll settled: 2 6 ?; die 2 (white) is cocked: the player must say its value"]),
    ("a face that flickers between two readings settles as unreadable, not as a guess",
     [[die(2, 100, 100), die(6 if i % 2 else 5, 200, 100)] for i in range(16)],
     ["roll settled: 2 ?; die 2 (white) is unreadable: the player must say its value"]),
    ("no dice, no event", [[] for _ in range(10)], []),
])
def test_roll_table(name, frames, expected):
    events, _ = run(frames)
    assert [e.text for _, e in events] == expected, name


def test_cocked_die_event_has_a_null_value():
    events, _ = run(still([die(2, 100, 100), die(None, 200, 100)], 8))
    doc = events[0][1].to_json()
    assert doc["values"] == [2, None]
    assert [d["value"] for d in doc["dice"]] == [2, None]
    assert doc["needs_player"] == [2] and doc["dice"][1]["state"] == "cocked"
    json.dumps(doc)


# ---------------------------------------------------------------- hands, nudges, re-rolls
def test_hand_in_view_holds_every_event_back():
    frames = still(THREE, 12)
    events, _tracker = run(frames, hands=set(range(0, 9)))
    assert [(i, e.text) for i, e in events] == [(9, "roll settled: 3 5 5")]


def test_hand_that_moves_no_die_holds_the_roll_back_only_for_hand_still_frames():
    # A hand (or a patch of table the reader takes for one) in view on every frame: dice that
    # lie still through hand_still_frames frames settle all the same, once.
    config = DiceTrackerConfig(hand_still_frames=10)
    events, tracker = run(still(THREE, 30), config, hands=set(range(30)))
    assert [(i, e.text) for i, e in events] == [(9, "roll settled: 3 5 5")]
    assert {d.state for d in tracker.dice()} == {"handling"}  # the hand is still in view
    assert tracker.update(DiceReading(tuple(THREE)), 3.0) == []
    assert {(d.state, d.value) for d in tracker.dice()} == {("settled", 3), ("settled", 5)}


def test_hand_still_holds_back_dice_that_moved_recently():
    config = DiceTrackerConfig(hand_still_frames=10)
    frames = still(THREE, 12) + tumbling(THREE, seed=3) + still(THREE, 20)
    events, _tracker = run(frames, config, hands=set(range(12, 36)))
    # The first roll is read before the hand; the re-throw is read only when the dice have
    # lain still 10 frames under the hand (frames 16-25), not after the 5-frame vote.
    assert [i for i, _e in events] == [4, 25]
    assert events[0][1].text == "roll settled: 3 5 5"
    # All three dice were thrown again: a roll (it was told as a re-roll of two, 'was 3 5',
    # when a lost die took another die's detection for its own and counted as kept).
    assert isinstance(events[1][1], RollSettled)
    assert events[1][1].text == "roll settled: 3 5 5"


def test_hand_still_frames_is_at_least_the_vote():
    with pytest.raises(ValueError, match="hand_still_frames"):
        DiceTrackerConfig(vote_frames=5, hand_still_frames=4)


def test_handling_state_when_a_hand_is_in_view_or_a_die_is_picked_up():
    tracker = DiceTracker()
    for i, dice in enumerate(still(THREE, 6)):
        tracker.update(DiceReading(tuple(dice)), i / 10)
    tracker.update(DiceReading(tuple(THREE)), 0.6, hand=True)
    assert {d.state for d in tracker.dice()} == {"handling"}
    tracker.update(DiceReading(tuple(THREE[:2])), 0.7)
    assert [d.state for d in tracker.dice()] == ["settled", "settled", "handling"]


def test_nudged_die_emits_a_nudge_not_a_roll():
    nudged = [THREE[0], die(4, 212, 114), THREE[2]]  # knocked a little, onto another face
    events, _tracker = run(still(THREE, 6) + [nudged] * 8)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 2 nudged: 5 -> 4"]
    nudge = events[1][1]
    assert isinstance(nudge, DieNudged) and nudge.previous == 5 and nudge.die.value == 4
    assert nudge.to_json()["die"]["id"] == 2


@pytest.mark.parametrize("rest", [6, 11, 20, 50])
def test_a_die_turned_in_place_after_any_rest_is_one_nudge(rest):
    # Turned onto another face without moving: the vote changes over a few frames, and that is
    # not a face the reader cannot read, however long the die lay still before.
    turned = [THREE[0], die(4, 200, 110), THREE[2]]
    events, tracker = run(still(THREE, rest) + [turned] * 8)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 2 nudged: 5 -> 4"]
    assert [d.state for d in tracker.dice()] == ["settled", "settled", "settled"]


def test_readings_that_stop_agreeing_settle_unreadable_after_undecided_frames():
    config = DiceTrackerConfig()
    flicker = [[THREE[0], die(v, 200, 110), THREE[2]] for v in (1, 2, 3, 4) * 6]
    events, _ = run(still(THREE, 30) + flicker, config)
    texts = [e.text for _, e in events]
    assert texts[0] == "roll settled: 3 5 5" and len(texts) == 2
    assert texts[1].startswith("die 2 nudged: 5 -> ?")
    # the vote agreed (on the 5) up to the first flickering frame, the 30th
    assert events[1][0] == 30 + config.undecided_frames


def test_nudged_state_while_other_dice_still_roll():
    tracker = DiceTracker()
    frames = still(THREE, 6) + [[THREE[0], die(4, 200, 110), die(1, 300 + 20 * k, 90)]
                                for k in range(6)]
    for i, dice in enumerate(frames):
        tracker.update(DiceReading(tuple(dice)), i / 10)
    assert [d.state for d in tracker.dice()] == ["settled", "nudged", "rolling"]


def test_die_set_down_on_another_face_by_hand_is_a_nudge():
    # Doom Machine's +/-1 slot: a die picked up, turned, set down elsewhere, already still.
    moved = [THREE[0], THREE[1], die(6, 500, 300)]
    frames = still(THREE, 6) + [THREE[:2]] * 5 + still(moved, 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 3 nudged: 5 -> 6"]


def test_die_moved_by_hand_with_the_same_face_emits_nothing():
    moved = [THREE[0], THREE[1], die(5, 500, 300)]
    frames = still(THREE, 6) + [THREE[:2]] * 5 + still(moved, 8)
    events, tracker = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5"]
    assert sorted(d.value for d in tracker.dice()) == [3, 5, 5]


def test_subset_reroll_updates_only_those_dice():
    five = [die(v, 100 + 100 * i, 100, "black") for i, v in enumerate([1, 1, 3, 4, 6])]
    # The two 1s are picked up (Doom Machine's re-roll slot) and rolled again.
    kept = five[2:]
    new = [die(6, 150, 300, "black"), die(2, 260, 300, "black")]
    frames = (still(five, 6) + [kept] * 5 + [kept + f for f in tumbling(new, seed=3)]
              + still(kept + new, 8))
    events, _tracker = run(frames)
    texts = [e.text for _, e in events]
    assert texts == ["roll settled: 1 1 3 4 6",
                     "re-roll settled: 2 6 (was 1 1); dice now 2 3 4 6 6"]
    reroll = events[1][1]
    assert isinstance(reroll, RerollSettled)
    kept_ids = {d.id for d in events[0][1].dice} - {1, 2}
    assert set(reroll.rerolled).isdisjoint(kept_ids)
    assert {d.id for d in reroll.dice} == kept_ids | set(reroll.rerolled)
    assert [d.value for d in reroll.replaced] == [1, 1]
    assert reroll.to_json()["rerolled"] == list(reroll.rerolled)


def test_rolling_every_die_again_is_a_new_roll():
    again = [die(2, 120, 300), die(2, 220, 300), die(2, 320, 300)]
    frames = still(THREE, 6) + [[]] * 5 + tumbling(again, seed=1) + still(again, 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5",
                                          "roll settled: 2 2 2 (triples: 2 2 2)"]


def rolled_in_view(start, end, frames=6):
    """Dice rolled across the table in view of the camera, the tracker following each one:
    a fraction of the way a frame, showing other faces as they tumble, then ``end``."""
    out = []
    for k in range(1, frames):
        out.append([die(d0.value % 6 + 1,
                        d0.center[0] + (d1.center[0] - d0.center[0]) * k / frames,
                        d0.center[1] + (d1.center[1] - d0.center[1]) * k / frames, d1.color)
                    for d0, d1 in zip(start, end, strict=True)])
    return out


@pytest.mark.parametrize(("values", "expected"), [
    ((3, 5, 5), "roll settled: 3 5 5"),   # the same values again: a new roll all the same
    ((3, 5, 2), "roll settled: 2 3 5"),   # two dice land on their old faces
])
def test_dice_rolled_again_in_view_are_a_new_roll_whatever_faces_they_land_on(values,
                                                                             expected):
    again = [die(v, 120 + 100 * i, 300) for i, v in enumerate(values)]
    events, _ = run(still(THREE, 6) + rolled_in_view(THREE, again) + still(again, 8))
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", expected]
    assert isinstance(events[1][1], RollSettled)


def test_one_die_rerolled_in_view_onto_its_old_face_is_a_reroll():
    # Doom Machine's re-roll slot: the die is thrown again and shows the same face
    again = [THREE[0], THREE[1], die(5, 300, 260)]
    frames = still(THREE, 6) + rolled_in_view(THREE, again) + still(again, 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5",
                                          "re-roll settled: 5 (was 5); dice now 3 5 5"]
    assert events[1][1].rerolled == (3,)


def test_a_die_slid_along_the_table_on_its_face_is_no_roll():
    # pushed aside by hand, in view, its face the same all the way: the table is updated
    slid = [THREE[0], THREE[1], die(5, 300, 260)]
    moving = [[THREE[0], THREE[1], die(5, 300, 90 + 170 * k / 6)] for k in range(1, 6)]
    events, tracker = run(still(THREE, 6) + moving + still(slid, 8))
    assert [e.text for _, e in events] == ["roll settled: 3 5 5"]
    assert [d.bbox[1] for d in tracker.dice()][2] == 260 - S / 2


def test_black_and_yellow_dice_are_grouped_by_colour():
    dice = [die(6, 100, 100, "black"), die(2, 200, 100, "yellow"), die(3, 300, 100, "black")]
    events, _ = run(still(dice, 8))
    assert events[0][1].values_by_color() == {"black": [3, 6], "yellow": [2]}


def test_low_confidence_detections_are_ignored():
    dice = [*THREE, die(6, 400, 400, conf=0.2)]
    events, _ = run(still(dice, 8), DiceTrackerConfig(min_confidence=0.5))
    assert [e.text for _, e in events] == ["roll settled: 3 5 5"]


def test_a_value_read_with_little_confidence_is_named_for_the_player_to_check():
    unsure = [THREE[0], die(5, 200, 110, "red", conf=0.5), THREE[2]]
    events, _ = run(still(unsure, 8))
    [(_, event)] = events
    assert event.values == (3, 5, 5) and event.check == (2,)  # the value still counts
    assert event.text == "roll settled: 3 5 5; check the red 5 (read at 50%)"
    doc = event.to_json()
    assert doc["check"] == [2] and [d["confidence"] for d in doc["dice"]] == [0.95, 0.5, 0.95]
    # 0 checks nothing; sure dice are never named
    events, _ = run(still(unsure, 8), DiceTrackerConfig(check_below=0.0))
    assert events[0][1].check == () and events[0][1].text == "roll settled: 3 5 5"
    assert run(still(THREE, 8))[0][0][1].check == ()


def test_the_check_averages_only_the_frames_the_vote_settled_on():
    # four frames read 5 surely, one misreads 6 unsurely: the 5 wins the vote at 0.9
    flicker = [[THREE[0], die(6 if i == 2 else 5, 200, 110, conf=0.2 if i == 2 else 0.9),
                THREE[2]] for i in range(5)]
    events, _ = run(flicker + still([THREE[0], die(5, 200, 110, conf=0.9), THREE[2]], 3))
    [(i, event)] = events
    assert i == 4 and event.values == (3, 5, 5) and event.check == ()
    assert event.dice[1].confidence == pytest.approx(0.9)
    # the same vote read at 0.5 in its four frames is named
    flicker = [[THREE[0], die(6 if i == 2 else 5, 200, 110, conf=0.95 if i == 2 else 0.5),
                THREE[2]] for i in range(5)]
    [(_, event)] = run(flicker)[0]
    assert event.check == (2,) and event.dice[1].confidence == pytest.approx(0.5)


def test_a_reroll_names_only_the_thrown_dice_to_check():
    # a kept die read unsurely was named by the roll; the re-roll names only a thrown one
    three = [die(1, 100, 100), die(4, 200, 100, conf=0.5), die(6, 300, 100)]
    new = [die(2, 150, 300), die(5, 260, 300, conf=0.55)]
    frames = (still(three, 6) + [three[1:]] * 5 + [three[1:] + f for f in tumbling(new, seed=3)]
              + still(three[1:] + new, 8))
    events, _ = run(frames)
    roll, reroll = (e for _, e in events)
    assert roll.check == (2,) and isinstance(reroll, RerollSettled)
    [thrown] = [d.id for d in reroll.dice if d.value == 5]
    assert reroll.check == (thrown,) and thrown in reroll.rerolled
    assert reroll.text.endswith("; check the white 5 (read at 55%)")


def test_a_die_nudged_onto_a_face_read_unsurely_is_named_to_check():
    nudged = [THREE[0], die(4, 212, 114, conf=0.4), THREE[2]]
    events, _ = run(still(THREE, 6) + [nudged] * 8)
    assert [e.text for _, e in events] == [
        "roll settled: 3 5 5", "die 2 nudged: 5 -> 4; check the white 4 (read at 40%)"]
    assert isinstance(events[1][1], DieNudged) and events[1][1].to_json()["check"] == [2]


def test_time_must_not_go_back():
    tracker = DiceTracker()
    tracker.update(DiceReading(), 1.0)
    with pytest.raises(ValueError, match="not decrease"):
        tracker.update(DiceReading(), 0.5)
    with pytest.raises(TypeError, match="DiceReading"):
        tracker.update([], 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"vote_frames": 0}, "vote_frames"), ({"vote_share": 0.4}, "vote_share"),
    ({"undecided_frames": 2}, "undecided_frames"), ({"still_tolerance": 0}, "still_tolerance"),
    ({"max_missed": -1}, "max_missed"), ({"min_confidence": 2}, "min_confidence"),
    ({"gap_seconds": 0}, "gap_seconds"), ({"check_below": 1.5}, "check_below"),
])
def test_config_refuses_bad_values(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DiceTrackerConfig(**kwargs)


def test_reset_forgets_the_table():
    _, tracker = run(still(THREE, 8))
    tracker.reset()
    assert tracker.dice() == ()
    events = [e for i in range(8) for e in tracker.update(DiceReading(tuple(THREE)), 10 + i)]
    assert [e.text for e in events] == ["roll settled: 3 5 5"]


# ---------------------------------------------------------------- properties
_cells = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=1, max_size=8,
                  unique=True)
_faces = st.one_of(st.integers(1, 6), st.none())


@settings(max_examples=60, deadline=None)
@given(cells=_cells, data=st.data(), n=st.integers(5, 30))
def test_constant_sequence_emits_exactly_one_roll(cells, data, n):
    faces = data.draw(st.lists(_faces, min_size=len(cells), max_size=len(cells)))
    dice = [die(v, 60 + 120 * cx, 60 + 120 * cy) for (cx, cy), v in zip(cells, faces, strict=True)]
    events, _ = run(still(dice, n))
    assert len(events) == 1 and isinstance(events[0][1], RollSettled)
    assert list(events[0][1].values) == sorted(v for v in faces if v) + [None] * faces.count(None)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), n_dice=st.integers(1, 6))
def test_permuting_the_readers_dice_order_changes_nothing(seed, n_dice):
    rng = random.Random(seed)
    pos = [(60.0 + 130 * i, 80.0 + rng.uniform(-20, 20)) for i in range(n_dice)]
    faces = [rng.randint(1, 6) for _ in range(n_dice)]
    frames = []
    for _ in range(40):
        for i in range(n_dice):  # some frames roll a die, some nudge it, most keep it
            r = rng.random()
            if r < 0.05:
                faces[i] = rng.randint(1, 6)
                pos[i] = (pos[i][0] + rng.uniform(-10, 10), pos[i][1] + rng.uniform(-10, 10))
            elif r < 0.08:
                faces[i] = rng.randint(1, 6)
        visible = [die(faces[i], *pos[i]) for i in range(n_dice) if rng.random() > 0.05]
        frames.append(visible)
    shuffled = [rng.sample(f, len(f)) for f in frames]
    a, _ = run(frames)
    b, _ = run(shuffled)
    assert [(i, e.to_json()) for i, e in a] == [(i, e.to_json()) for i, e in b]


def test_a_die_set_down_with_a_flickering_reading_is_still_a_nudge():
    # The reader hesitates over the new face for two frames: that is not a roll.
    noisy = [[THREE[0], THREE[1], die(v, 500, 300)] for v in (6, 2, 6, 2)]
    frames = still(THREE, 6) + [THREE[:2]] * 5 + noisy + still([*THREE[:2], die(6, 500, 300)], 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 3 nudged: 5 -> 6"]


def test_a_die_appearing_while_others_roll_is_part_of_the_roll():
    five = [die(v, 100 + 100 * i, 100) for i, v in enumerate([1, 2, 3, 4, 5])]
    kept, new = five[:3], [die(6, 150, 300), die(6, 300, 300)]
    rolling = [[*kept, die(3, 150 - 30 * k, 300 + 10 * k), die(4, 300, 300)]
               for k in range(4, 0, -1)]  # the second new die lands still at once
    frames = still(five, 6) + [kept] * 5 + rolling + still(kept + new, 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == [
        "roll settled: 1 2 3 4 5", "re-roll settled: 6 6 (was 4 5); dice now 1 2 3 6 6"]


def test_detections_inside_an_excluded_card_outline_are_ignored():
    # A dice reader may take a sigil card's printed candles for dice: the caller passes the
    # card's outline and they are ignored.
    card = [(600.0, 50.0), (900.0, 60.0), (890.0, 500.0), (590.0, 490.0)]
    candles = [die(1, 700, 150, conf=0.5), die(None, 800, 300, state="unreadable", conf=0.3)]
    tracker = DiceTracker()
    events = [e for i in range(8)
              for e in tracker.update(DiceReading(tuple(THREE + candles)), i / 10,
                                      exclude=[card])]
    assert [e.text for e in events] == ["roll settled: 3 5 5"]
    assert len(tracker.dice()) == 3


@pytest.mark.parametrize(("point", "inside"), [
    ((3, 3), True), ((15, 5), False), ((5, -1), False),
    ((8, 8), False),  # in the notch of the L
    ((2, 8), True),
])
def test_point_in_polygon(point, inside):
    from companion.tracker.dice import point_in_polygon
    ell = [(0, 0), (10, 0), (10, 5), (5, 5), (5, 10), (0, 10)]
    assert point_in_polygon(point, ell) is inside


def test_camera_away_and_back_on_a_moved_view_emits_nothing_new():
    # The stream drops for half a minute; the phone comes back a little moved: same dice.
    tracker = DiceTracker()
    events = [e for i in range(8) for e in tracker.update(DiceReading(tuple(THREE)), i / 10)]
    moved = tuple(die(d.value, d.center[0] + 150, d.center[1] + 40) for d in THREE)
    events += [e for i in range(12) for e in tracker.update(DiceReading(moved), 30 + i / 10)]
    assert [e.text for e in events] == ["roll settled: 3 5 5"]
    assert sorted(d.value for d in tracker.dice()) == [3, 5, 5]


def test_a_roll_made_while_the_camera_was_away_is_a_new_roll():
    tracker = DiceTracker()
    events = [e for i in range(8) for e in tracker.update(DiceReading(tuple(THREE)), i / 10)]
    ids = sorted(d.id for d in tracker.dice())
    other = tuple(die(v, x, y) for v, (x, y) in zip([6, 6, 1], [(120, 300), (220, 300), (320, 300)],
                                                     strict=True))
    events += [e for i in range(8) for e in tracker.update(DiceReading(other), 30 + i / 10)]
    assert [e.text for e in events] == ["roll settled: 3 5 5", "roll settled: 1 6 6"]
    assert sorted(d.id for d in tracker.dice()) != ids


def test_ids_survive_a_gap_when_nothing_changed():
    tracker = DiceTracker()
    for i in range(8):
        tracker.update(DiceReading(tuple(THREE)), i / 10)
    before = {d.value: d.id for d in tracker.dice() if d.value == 3}
    moved = tuple(die(d.value, d.center[0] + 150, d.center[1] + 40) for d in THREE)
    for i in range(8):
        tracker.update(DiceReading(moved), 30 + i / 10)
    assert {d.value: d.id for d in tracker.dice() if d.value == 3} == before


@settings(max_examples=40, deadline=None)
@given(data=st.data(), n=st.integers(2, 7))
def test_rerolling_any_subset_updates_exactly_those_dice(data, n):
    cells = data.draw(st.permutations([(cx, cy) for cx in range(5) for cy in range(3)]))
    old = [die(data.draw(st.integers(1, 6)), 60 + 130 * cx, 60 + 130 * cy, "black")
           for cx, cy in cells[:n]]
    k = data.draw(st.integers(1, n - 1))
    picked = set(data.draw(st.lists(st.integers(0, n - 1), min_size=k, max_size=k, unique=True)))
    kept = [d for i, d in enumerate(old) if i not in picked]
    new = [die(data.draw(st.integers(1, 6)), 60 + 130 * cx, 60 + 130 * cy, "black")
           for cx, cy in cells[n:n + k]]
    frames = (still(old, 6) + [kept] * 5 + [kept + f for f in tumbling(new, seed=n)]
              + still(kept + new, 8))
    events, _ = run(frames)
    assert len(events) == 2 and isinstance(events[1][1], RerollSettled)
    first, reroll = events[0][1], events[1][1]
    kept_ids = {d.id for d in first.dice if d.center not in {o.center for o in
                                                               (old[i] for i in picked)}}
    assert sorted(d.value for d in reroll.dice if d.id in reroll.rerolled) == sorted(
        d.value for d in new)
    assert sorted(d.value for d in reroll.replaced) == sorted(old[i].value for i in picked)
    assert {d.id for d in reroll.dice} - set(reroll.rerolled) == kept_ids


# ---------------------------------------------------------------- the roll area
ROLL_AREA = [(0.0, 250.0), (1000.0, 250.0), (1000.0, 600.0), (0.0, 600.0)]
HP_DICE = [die(4, 150, 80, "yellow"), die(2, 400, 80, "yellow"), die(6, 650, 80, "yellow")]
FIVE_BLACK = [die(v, 100 + 90 * i, 400, "black") for i, v in enumerate([1, 3, 3, 5, 6])]


def run_area(frames, area):
    tracker = DiceTracker()
    out = [e for i, dice in enumerate(frames)
           for e in tracker.update(DiceReading(tuple(dice)), i / 10.0, area=area)]
    return out, tracker


def test_dice_resting_on_the_part_cards_join_the_roll_without_a_roll_area():
    # The problem the roll area solves: Doom Machine's yellow HP dice sit still on the part
    # cards. The first roll takes them in, and every later roll is a mere re-roll of some dice.
    frames = (still(HP_DICE, 6) + [HP_DICE + d for d in tumbling(FIVE_BLACK)]
              + still(HP_DICE + FIVE_BLACK, 8))
    events, _ = run_area(frames, None)
    assert [type(e).__name__ for e in events] == ["RollSettled", "RerollSettled"]
    assert len(events[0].dice) == 3 and len(events[1].dice) == 8


def test_only_dice_inside_the_roll_area_make_the_roll():
    frames = (still(HP_DICE, 6) + [HP_DICE + d for d in tumbling(FIVE_BLACK)]
              + still(HP_DICE + FIVE_BLACK, 8))
    events, tracker = run_area(frames, ROLL_AREA)
    assert [e.text for e in events] == ["roll settled: 1 3 3 5 6"]
    assert {d.color for d in tracker.dice()} == {"black"}


def test_an_hp_die_turned_on_its_card_is_not_a_nudged_player_die():
    damaged = [die(3, 150, 80, "yellow"), *HP_DICE[1:]]   # the part lost 1 HP: 4 -> 3
    frames = (tumbling(FIVE_BLACK) + still(HP_DICE + FIVE_BLACK, 8)
              + still(damaged + FIVE_BLACK, 8))
    events, _ = run_area(frames, ROLL_AREA)
    assert [e.text for e in events] == ["roll settled: 1 3 3 5 6"]
    # without the area the same frames nudge a die
    events, _ = run_area(frames, None)
    assert any(isinstance(e, DieNudged) for e in events)


# ---------------------------------------------------------------- a roll first seen at rest
# Every die taken off the table, then dice first seen already still: the tumble was not seen
# (frames dropped, or dice too blurred to read in flight). Clip roll-unseen-all
# (companion.demo.clips) showed it told as nudges of the old dice.
OTHER = [die(2, 140, 260), die(5, 260, 300), die(6, 380, 260)]


@pytest.mark.parametrize("t_step", [0.1, 0.2], ids=["every-frame", "frames-dropped"])
def test_every_die_taken_and_others_found_at_rest_is_a_new_roll(t_step):
    frames = still(THREE, 8) + [[]] * 5 + still(OTHER, 8)
    tracker = DiceTracker()
    events = [e for i, f in enumerate(frames)
              for e in tracker.update(DiceReading(tuple(f)), i * t_step)]
    assert [e.text for e in events] == ["roll settled: 3 5 5", "roll settled: 2 5 6"]
    assert isinstance(events[1], RollSettled)


def test_every_die_taken_and_set_down_on_the_same_faces_is_no_roll():
    moved = [die(d.value, d.center[0] + 60, d.center[1] + 150) for d in THREE]
    before = None
    tracker = DiceTracker()
    events = []
    for i, f in enumerate(still(THREE, 8) + [[]] * 5 + still(moved, 8)):
        events += tracker.update(DiceReading(tuple(f)), i / 10)
        if i == 7:
            before = sorted((d.value, d.id) for d in tracker.dice())
    assert [e.text for e in events] == ["roll settled: 3 5 5"]
    assert sorted((d.value, d.id) for d in tracker.dice()) == before  # the same dice


def test_one_die_of_one_set_down_on_another_face_is_still_a_nudge():
    # A lone die turned by hand (the +/-1 slot) with nothing else on the table.
    frames = still([THREE[0]], 8) + [[]] * 5 + still([die(4, 300, 300)], 8)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3", "die 1 nudged: 3 -> 4"]


FIVE = [die(v, 100 + 100 * i, 100, "black") for i, v in enumerate([1, 2, 3, 4, 6])]


def test_two_dice_taken_and_found_at_rest_on_other_faces_together_are_a_reroll():
    # Clip reroll-unseen: two of five picked up and thrown, the tumble unseen; it was told as
    # two nudges. A nudge turns one die; dice set down at once on other faces were thrown.
    kept = [FIVE[1], FIVE[3], FIVE[4]]
    new = [die(5, 150, 300, "black"), die(6, 300, 300, "black")]
    frames = still(FIVE, 8) + still(kept, 6) + still(kept + new, 8)
    events, _ = run(frames)
    assert [e.kind for _, e in events] == ["roll", "reroll"]
    reroll = events[1][1]
    assert isinstance(reroll, RerollSettled)
    assert sorted(d.value for d in reroll.dice) == [2, 4, 5, 6, 6]
    assert sorted(d.value for d in reroll.replaced) == [1, 3]
    assert sorted(d.value for d in reroll.dice if d.id in reroll.rerolled) == [5, 6]


def test_two_dice_set_down_one_after_the_other_on_other_faces_are_two_nudges():
    # Two +/-1 slots used in turn while the hand stays in view: the 1 is set down as a 2, then
    # the 3 is taken and set down as a 4 eight frames later. Each was turned, not thrown.
    kept = [FIVE[1], FIVE[3], FIVE[4]]
    first = die(2, 150, 300, "black")
    second = die(4, 300, 300, "black")
    frames = (still(FIVE, 8) + still([*kept, FIVE[2]], 6) + still([*kept, FIVE[2], first], 4)
              + still([*kept, first], 4) + still([*kept, first, second], 12))
    hands = set(range(8, 8 + 6 + 4 + 4 + 3))
    events, _ = run(frames, hands=hands)
    assert [(e.kind, getattr(e, "previous", None), getattr(e, "die", None) and e.die.value)
            for _, e in events[1:]] == [("nudged", 1, 2), ("nudged", 3, 4)]


# ---------------------------------------------------------------- a lost die is not found afar
# Clip roll-unseen-all at 5 fps: the dice were picked up and the new ones, thrown unseen, lay
# under two die sizes from the old places while the old dice were missed only two frames; two
# old dice took the new detections as their own (the one that landed on its old face was
# "kept") and the roll was told as a re-roll of two.
@pytest.mark.parametrize("away", [1.7, 0.9])
def test_dice_found_away_from_where_still_dice_were_lost_are_new_dice(away):
    # 0.9: the same clip read by the dice reader (a new 5 landed 0.96 die sizes from an old 5)
    new = [die(2, 100, 100 + away * S), die(5, 200 - 0.6 * away * S, 110 + 0.8 * away * S),
           die(6, 300, 90 + away * S)]
    frames = still(THREE, 8) + [[]] * 2 + still(new, 10)
    events, _ = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "roll settled: 2 5 6"]


def test_a_still_die_missed_for_a_frame_and_found_nearby_is_the_same_die():
    jitter = [die(d.value, d.center[0] + 6, d.center[1] - 5) for d in THREE]
    frames = still(THREE, 8) + [THREE[:2]] * 2 + still(jitter, 10)
    events, tracker = run(frames)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5"]
    assert sorted(d.id for d in tracker.dice()) == [1, 2, 3]


def test_a_rolling_die_lost_for_a_frame_is_still_followed():
    frames = tumbling(THREE, frames=6)
    frames[3] = frames[3][:2]  # the third die unread in one frame of its tumble
    events, tracker = run(frames + still(THREE, 8))
    assert [e.text for _, e in events] == ["roll settled: 3 5 5"]
    assert sorted(d.id for d in tracker.dice()) == [1, 2, 3]


# ---------------------------------------------------------------- turned in view of a hand
# A fingertip turns a die in place, the die in view throughout: it shows an edge (read cocked)
# for a few frames, then its new face. The hand does not move the die's place, so a hand that
# had lain still long enough let the cocked vote out as a nudge to "needs player", then a
# second nudge to the new face.
@pytest.mark.parametrize("edge", [4, 8])
def test_a_die_turned_under_a_hand_through_an_edge_is_one_nudge(edge):
    first = still(THREE, 20)
    turning = still([THREE[0], THREE[1], die(None, 300, 90)], edge)
    turned = still([THREE[0], THREE[1], die(6, 300, 90)], 25)
    hands = set(range(8, 20 + edge + 10))
    events, _ = run(first + turning + turned, hands=hands)
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 3 nudged: 5 -> 6"]


def test_a_hand_resting_in_view_still_lets_a_turned_die_out_once_it_shows_one_face():
    # The hand stays in view (or the reader takes a patch of table for one): the nudge is
    # told once the new face has held hand_still_frames frames.
    first = still(THREE, 20)
    turned = still([THREE[0], THREE[1], die(6, 300, 90)], 25)
    events, _ = run(first + turned, hands=set(range(8, 45)))
    assert [e.text for _, e in events] == ["roll settled: 3 5 5", "die 3 nudged: 5 -> 6"]
    assert events[1][0] < 45  # with the hand still in view


# ---------------------------------------------------------------- dice away stay away
# Clip two-of-five-rerolled read at 30 fps: while two dice were picked up for a re-roll, the
# hand hid a kept die for more than max_missed frames; when it was seen again (the same die,
# the same face: no event) the dice still in the hand were forgotten, and the re-roll named no
# dice replaced.
def test_dice_in_the_hand_are_remembered_while_a_hidden_die_is_seen_again():
    kept = [FIVE[1], FIVE[3], FIVE[4]]
    new = [die(5, 150, 300, "black"), die(6, 300, 300, "black")]
    frames = (still(FIVE, 8) + still(kept, 3) + still(kept[1:], 6) + still(kept, 8)
              + [kept + f for f in tumbling(new, frames=4)] + still(kept + new, 8))
    events, _ = run(frames, hands=set(range(8, 8 + 3 + 6 + 4)))
    assert [e.kind for _, e in events] == ["roll", "reroll"]
    reroll = events[1][1]
    assert sorted(d.value for d in reroll.replaced) == [1, 3]
    assert sorted(d.value for d in reroll.dice if d.id in reroll.rerolled) == [5, 6]


def test_a_die_thrown_past_a_die_at_rest_does_not_carry_it_off():
    """A die thrown again lands beside a die at rest, hiding it for two frames on the way:
    the reader then sees one die there, with the moving die's face, a little nearer the die
    at rest than where the moving die's last step would take it. The die at rest stays where
    it lay with its face (it was followed away before, and the re-roll was told as its own,
    with a nudge of it onto the thrown die's face)."""
    a, b, c = die(2, 100, 100), die(4, 200, 200), die(3, 300, 90)
    landed = die(5, 140, 100)
    frames = (still([a, b, c], 8) + still([a, c], 6)
              + [[die(3, -20, 100), a, c], [die(1, 20, 100), a, c], [die(6, 58, 100), a, c],
                 [die(5, 98, 100), c], [die(2, 119, 100), c]]
              + still([a, landed, c], 10))
    events, _ = run(frames)
    assert [type(e).__name__ for _, e in events] == ["RollSettled", "RerollSettled"]
    first, reroll = events[0][1], events[1][1]
    a_id = next(d.id for d in first.dice if d.value == 2)
    assert [(d.value, d.center) for d in reroll.dice if d.id in reroll.rerolled] == [
        (5, landed.center)]
    assert [d.value for d in reroll.replaced] == [4]
    assert next(d for d in reroll.dice if d.id == a_id).value == 2
