from __future__ import annotations

import pytest

from vision.readings import SigilState, TopBox
from vision.sigil.scoring import Tally, condition_groups, score_card

TOP = [TopBox(4), TopBox(4, True), None, None, None, None, None]
TRUTH = SigilState.of("A", lines=[(0, 5), (2, 9)], crossed=[3], top=TOP)


def test_perfect_reading_is_exact() -> None:
    sc = score_card(TRUTH, TRUTH)
    assert sc.exact and sc.line_tp == 2 and sc.line_fp == 0 and sc.cross_ok == 12
    assert sc.digit_ok == 2 and sc.circle_ok == 2 and sc.visible == 66 + 12 + 7


@pytest.mark.parametrize(("reading", "field", "value"), [
    (SigilState.of("A", lines=[(0, 5)], crossed=[3], top=TOP), "line_fn", 1),
    (SigilState.of("A", lines=[(0, 5), (2, 9), (1, 2)], crossed=[3], top=TOP), "line_fp", 1),
    (SigilState.of("A", lines=[(0, 5), (2, 9)], crossed=[], top=TOP), "cross_ok", 11),
    (SigilState.of("A", lines=[(0, 5), (2, 9)], crossed=[3],
                   top=[TopBox(4), TopBox(4), *TOP[2:]]), "circle_ok", 1),
    (SigilState.of("A", lines=[(0, 5), (2, 9)], crossed=[3],
                   top=[TopBox(5), *TOP[1:]]), "digit_ok", 1),
])
def test_each_kind_of_error_is_counted(reading: SigilState, field: str, value: int) -> None:
    sc = score_card(TRUTH, reading)
    assert getattr(sc, field) == value
    assert not sc.exact


def test_unknown_is_not_wrong_but_not_exact() -> None:
    reading = SigilState.of("A", lines=[(0, 5)], crossed=[3], top=TOP, unknown=["line 2-9"])
    sc = score_card(TRUTH, reading)
    assert sc.line_fn == 0 and sc.unknown == 1 and not sc.exact


def test_hidden_elements_are_not_scored() -> None:
    truth = SigilState.of("A", lines=[(0, 5), (2, 9)], crossed=[3], top=TOP,
                          unknown=["line 2-9", "top 1"])
    reading = SigilState.of("A", lines=[(0, 5)], crossed=[3], top=TOP[:1] + [None] * 6)
    sc = score_card(truth, reading)
    assert sc.exact and sc.visible == 65 + 12 + 6


def test_refusal_and_ghosts() -> None:
    sc = score_card(TRUTH, None)
    assert sc.failed and not sc.exact and sc.unknown == sc.visible
    ghost = SigilState.of("A", lines=[(0, 5), (2, 9), (4, 6)], crossed=[3], top=TOP)
    assert score_card(TRUTH, ghost, ghost_lines=[[4, 6]]).ghosts_counted == 1


def test_tally_report_keys() -> None:
    t = Tally()
    t.add(score_card(TRUTH, TRUTH))
    t.add(score_card(TRUTH, None))
    rep = t.to_json()
    assert rep["images"] == 2 and rep["exact_rate"] == 0.5 and rep["failed"] == 1
    for key in ("line_precision", "line_recall", "line_f1", "crossed_accuracy",
                "digit_accuracy", "circle_accuracy", "unknown_share", "ghost_lines_counted"):
        assert key in rep


@pytest.mark.parametrize(("cond", "group"), [
    ({"tilt_deg": 44.0}, "tilt 40-50"), ({"tilt_deg": 3.0}, "tilt 0-15"),
    ({"glare": True}, "glare yes"), ({"pen_color": "red"}, "pen_color red"),
    ({"markers": False}, "markers no"), ({"ghosts": True}, "ghosts yes"),
    ({"out_of_view": 0.0}, "out of view 0"), ({"out_of_view": 0.12}, "out of view <0.25"),
    ({"out_of_view": 0.4}, "out of view >=0.25"),
])
def test_condition_groups(cond: dict, group: str) -> None:
    assert group in condition_groups(cond)


def test_no_out_of_view_group_without_the_key() -> None:
    assert not any(g.startswith("out of view") for g in condition_groups({"tilt_deg": 3.0}))
