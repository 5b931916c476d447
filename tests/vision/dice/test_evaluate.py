"""Matching and scoring of dice readings (the rule of ../shared/data/dice-real/README.md)."""

from __future__ import annotations

import pytest

from companion.errors import DataFileError
from vision.dice.evaluate import (
    check_labels,
    colour_score,
    label_colour,
    match,
    point_inside,
    score_image,
    summarize,
)
from vision.readings import DiceReading, Die


@pytest.mark.parametrize(("reads", "labels", "pairs"), [
    ([], [], []),
    ([[0, 0, 10, 10]], [[2, 2, 4, 4]], [(0, 0)]),            # label centre inside reading
    ([[4, 4, 6, 6]], [[0, 0, 10, 10]], [(0, 0)]),            # reading centre inside label
    ([[0, 0, 10, 10]], [[20, 20, 30, 30]], []),              # apart
    ([[0, 0, 10, 10], [8, 0, 18, 10]], [[8, 3, 12, 7]], [(1, 0)]),  # nearest wins
    ([[0, 0, 20, 10]], [[2, 2, 6, 6], [12, 2, 16, 6]], [(0, 1)]),   # one-to-one
])
def test_match(reads, labels, pairs):
    assert match(reads, labels) == pairs


def _die(value, box, state="flat"):
    return Die(value, "white", tuple(box), 0.9, state)


def test_the_points_inside_a_box():
    assert point_inside((10, 60), [10, 20, 30, 60])  # its edges count as inside
    assert not point_inside((9.5, 40), [10, 20, 30, 60])
    assert not point_inside((20, 60.5), [10, 20, 30, 60])


def test_score_and_summary():
    reading = DiceReading((_die(3, [0, 0, 10, 10]), _die(None, [20, 0, 30, 10], "unreadable"),
                           _die(5, [50, 50, 60, 60])))
    labels = [{"value": 3, "bbox": [2, 2, 8, 8]}, {"value": 4, "bbox": [22, 2, 28, 8]},
              {"value": 6, "bbox": [100, 100, 110, 110]}]
    r = score_image("a.jpg", reading, labels)
    assert (r.labelled, r.matched, r.correct, r.false_positives) == (3, 2, 1, 1)
    assert r.unmatched == (2,)  # the 5 at [50, 50, 60, 60] is no labelled die
    assert not r.exact
    perfect = score_image("b.jpg", DiceReading((_die(2, [0, 0, 9, 9]),)),
                          [{"value": 2, "bbox": [1, 1, 8, 8]}])
    s = summarize([r, perfect])
    assert s.images == 2 and s.dice == 4
    assert s.accuracy == pytest.approx(2 / 3, abs=1e-4)
    assert s.recall == 0.75 and s.fp_per_image == 0.5 and s.exact_rate == 0.5
    assert s.confusion == {"2": {"2": 1}, "3": {"3": 1}, "4": {"null": 1}, "6": {"missed": 1}}
    assert set(s.to_json()) >= {"images", "dice", "accuracy", "recall", "fp_per_image",
                                "exact_rate", "confusion"}


@pytest.mark.parametrize(("label", "colour"), [
    ({"color": "white"}, "white"),
    ({"color": "white die, black pips"}, "white"),  # a source's description: its first word
    ({"color": "Translucent casino die (red or blue)"}, "translucent"),
    ({"color": "cream"}, None),  # not a name the reader gives
    ({"color": "whiteish"}, None),
    ({"color": "unknown"}, None),
    ({"color_est": "red"}, None),  # an estimate is not a label
    ({"color": 3}, None),
    ({}, None),
])
def test_the_colour_a_label_names(label, colour):
    assert label_colour(label) == colour


def test_colours_are_scored_on_the_matched_dice_whose_label_names_one():
    """A missed die and a die labelled without a colour count in no colour figure; without
    any labelled colour the figure is null."""
    reading = DiceReading((_die(3, [0, 0, 10, 10]), _die(4, [20, 0, 30, 10]),
                           _die(5, [40, 0, 50, 10])))
    labels = [{"value": 3, "bbox": [2, 2, 8, 8], "color": "black"},  # read white (_die)
              {"value": 4, "bbox": [22, 2, 28, 8], "color": "white die, black pips"},
              {"value": 5, "bbox": [42, 2, 48, 8]},  # no colour given
              {"value": 6, "bbox": [100, 100, 110, 110], "color": "red"}]  # missed
    r = score_image("a.jpg", reading, labels)
    assert r.colours == (("black", "white"), ("white", "white"))
    colour = summarize([r]).colour
    assert colour == {"dice": 2, "named": 1, "share": 0.5,
                      "confusion": {"black": {"white": 1}, "white": {"white": 1}}}
    assert summarize([r]).to_json()["colour"] == colour
    plain = [{k: v for k, v in lb.items() if k != "color"} for lb in labels]
    assert summarize([score_image("b.jpg", reading, plain)]).colour is None


def test_colour_score_counts_a_confusion():
    assert colour_score([]) is None
    assert colour_score([("white", "white"), ("white", "grey"), ("black", "black")]) == {
        "dice": 3, "named": 2, "share": 0.6667,
        "confusion": {"black": {"black": 1}, "white": {"grey": 1, "white": 1}}}


@pytest.mark.parametrize(("doc", "where"), [
    ({"image": "a"}, "$"),
    ([{"dice": []}], "$[0].image"),
    ([{"image": "a.jpg"}], "$[0].dice"),
    ([{"image": "a.jpg", "dice": [{"value": 3, "bbox": [0, 0, 1]}]}], "$[0].dice[0].bbox"),
    ([{"image": "a.jpg", "dice": [{"value": 7, "bbox": [0, 0, 1, 1]}]}], "$[0].dice[0].value"),
    ([{"image": "a.jpg", "dice": [{"value": 2, "bbox": [5, 0, 1, 1]}]}], "$[0].dice[0].bbox"),
    ([{"image": "a.jpg", "dice": [{"value": 2, "bbox": [0, 0, float("nan"), 1]}]}],
     "$[0].dice[0].bbox"),
    # a misspelt key: read as a die "that cannot be read" it made every such die a miss
    ([{"image": "a.jpg", "dice": [{"valeu": 2, "bbox": [0, 0, 1, 1]}]}], "$[0].dice[0].value"),
    ([{"image": "a.jpg", "dice": [{"value": 2, "bbox": [0, 0, 1, 1], "color": 5}]}],
     "$[0].dice[0].color"),
])
def test_check_labels_names_the_place(doc, where):
    with pytest.raises(DataFileError) as exc:
        check_labels(doc, "labels.json")
    assert exc.value.json_path == where


def test_check_labels_says_a_missing_value_is_missing():
    with pytest.raises(DataFileError) as exc:
        check_labels([{"image": "a.jpg", "dice": [{"valeu": 2, "bbox": [0, 0, 1, 1]}]}], "l.json")
    assert exc.value.rule == "missing: the top face's value, 1-6, or null when it cannot be read"
    # null is a value: a die whose top face the labeller could not read
    assert check_labels([{"image": "a.jpg", "dice": [{"value": None, "bbox": [0, 0, 1, 1]}]}],
                        "l.json")[0]["dice"][0]["value"] is None


def test_dice_cut_by_the_edge_of_the_view_are_counted_apart():
    """``by_place``: a labelled face touching the image border is "edge", the others
    "inside"; each place counts its right, wrong, null and missed dice."""
    reading = DiceReading((_die(3, [0, 10, 10, 20]), _die(None, [30, 10, 40, 20], "unreadable"),
                           _die(2, [90, 90, 100, 100]), _die(6, [50, 50, 60, 60])))
    labels = [{"value": 3, "bbox": [0, 12, 8, 18]},      # on the left border: right
              {"value": 4, "bbox": [32, 12, 38, 18]},    # inside: null
              {"value": 5, "bbox": [92, 92, 100, 98]},   # on the right border: wrong
              {"value": 1, "bbox": [70, 20, 78, 28]},    # inside: missed
              {"value": 6, "bbox": [52, 52, 58, 58]}]    # inside: right
    r = score_image("a.jpg", reading, labels, (100, 120))
    assert r.places == ("edge", "inside", "edge", "inside", "inside")
    s = summarize([r, score_image("b.jpg", DiceReading(()), labels[:1])])  # size unknown
    assert s.by_place == {
        "edge": {"dice": 2, "right": 1, "wrong": 1, "null": 0, "missed": 0},
        "inside": {"dice": 3, "right": 1, "wrong": 0, "null": 1, "missed": 1}}
    assert s.to_json()["by_place"] == s.by_place
    assert summarize([score_image("b.jpg", DiceReading(()), labels)]).by_place == {}
