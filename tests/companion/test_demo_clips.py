from __future__ import annotations

import pytest

from companion.demo import clips
from companion.demo.clips import Expected, Script, run_clip, score

W, B, Y = "white", "black", "yellow"


def roll(*dice):
    return Expected("roll", tuple(sorted(dice, key=lambda d: (d[0], d[1] or 0))))


def test_score_aligns_right_wrong_missed_and_extra():
    a, b, c = roll((W, 3), (W, 5)), roll((W, 1), (W, 2)), Expected("nudged", (), ((B, 3),),
                                                                  ((B, 2),))
    wrong_b = roll((W, 1), (W, 6))
    extra = Expected("reroll", ((W, 3), (W, 4)), ((W, 4),), ((W, 5),))
    report = score("x", 10, [a, b, c], [a, extra, wrong_b])
    assert report.right == 1
    assert report.wrong == [(b, wrong_b)]
    assert report.missed == [c]
    assert report.extra == [extra]


def test_a_script_says_which_events_a_perfect_pipeline_emits():
    s = Script(fps=5, seed=1)
    s.throw([("a", 2, B, (420, 220)), ("b", 6, B, (560, 330)), ("y", 3, Y, (700, 230))])
    s.rest(1.0).pick(["a"]).throw([("a", 5, B, (600, 420))]).rest(1.0).nudge("b", 5)
    assert [e.text() for e in s.expected] == [
        "roll b2 b6 y3", "reroll b5 (was b2) -> b5 b6 y3", "nudged b6 -> b5"]
    times = [f.t for f in s.frames()]
    assert times == sorted(times) and times[1] == pytest.approx(0.2)


def test_dropped_frames_leave_a_gap_in_time():
    s = Script(fps=10).rest(0.3).drop(0.5).rest(0.2)
    assert [round(f.t, 2) for f in s.frames()] == [0.0, 0.1, 0.2, 0.8, 0.9]


def test_a_die_a_hand_covers_is_not_in_the_truth():
    s = Script(fps=5, seed=2)
    s.throw([("a", 4, W, (560, 280)), ("b", 1, W, (300, 120))]).hover((560, 215), 1.2)
    covered = [clips.render(f, i)[1] for i, f in enumerate(s.frames()) if f.hand is not None]
    assert any(len(r.dice) == 1 and r.dice[0].value == 1 for r in covered)
    assert all(r.hand for r in covered)


def test_a_cocked_die_is_true_as_null():
    s = Script(fps=5, seed=6)
    s.throw([("a", 2, B, (440, 260)), ("b", 5, B, (488, 262))], cocked={"b": 32.0}).rest(0.4)
    _, truth = clips.render(s.frames()[-1])
    assert sorted((d.value or 0, d.state) for d in truth.dice) == [(0, "cocked"), (2, "flat")]
    assert s.expected[0].dice == ((B, None), (B, 2))


def test_truth_through_the_tracker_on_a_clip_is_scored_right():
    s = next(v for v in clips.variations(5) if v.name.startswith("machine+yellow"))
    report = run_clip(s)
    assert (report.right, report.wrong, report.missed, report.extra) == (1, [], [], [])
    assert report.got[0].dice == ((B, 2), (B, 4), (B, 6), (Y, 1), (Y, 3))


@pytest.mark.parametrize("name", ["roll-unseen-all@10", "reroll-unseen@10", "reroll-unseen@5",
                                  "roll-unseen-all@5"])
def test_dice_first_seen_at_rest_after_an_unseen_throw_are_a_roll_or_reroll(name):
    # Were told as nudges of the dice taken away (one per die that landed on another face); at
    # 5 fps the lost dice took new dice under two die sizes away for their own (a re-roll).
    fps = float(name.split("@")[1])
    s = next(v for v in clips.variations(fps) if v.name == name)
    report = run_clip(s)
    assert (report.right, report.wrong, report.missed, report.extra) == (2, [], [], [])


def test_the_dice_reader_and_tracker_tell_an_unseen_roll_at_5_fps():
    # Read by the dice reader, a new 5 landed 0.96 die sizes from an old 5 lost two frames
    # before, which took it for its own: a re-roll of two was told for the roll.
    s = next(v for v in clips.variations(5) if v.name == "roll-unseen-all@5")
    report = run_clip(s, reader="dice")
    assert report.right == 2 and not (report.wrong or report.missed or report.extra)


def test_a_die_turned_on_its_edge_in_view_is_one_nudge_at_30_fps():
    # A fingertip turns a die, in view throughout: 9 frames on its edge (read cocked), then
    # the new face. Before the tracker held a turned die's new reading under a hand, the
    # edge went out as a nudge to '?' and the face as a second nudge from '?'.
    s = next(v for v in clips.variations(30) if v.name == "turned-on-edge@30")
    frames = s.frames()
    assert any(d.cock for f in frames for d in f.dice) and all(
        len(f.dice) == 3 for f in frames[24:])   # the die is drawn throughout
    report = run_clip(s)
    assert (report.right, report.wrong, report.missed, report.extra) == (2, [], [], [])
