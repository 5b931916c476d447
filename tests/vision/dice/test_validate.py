"""The dice validation tool (models/dice/validate.py): its paired reading against a baseline."""

from __future__ import annotations

import json
import sys
from dataclasses import replace

import cv2
import numpy as np
import pytest

from models.dice import validate
from vision.readings import DiceReading
from vision.render.dice import render_scene


def _run(monkeypatch, capsys, *args: str) -> dict:
    monkeypatch.setattr(sys, "argv", ["validate", "--count", "6", "--seed", "3", *args])
    validate.main()
    return json.loads(capsys.readouterr().out)


def test_the_paired_counts_are_the_differences_scene_by_scene(monkeypatch, capsys):
    """Read with a coarser work image as the baseline: what the paired block gains and loses
    adds up to the difference between the two readers' own figures."""
    judged = _run(monkeypatch, capsys, "--baseline-set", "work_size=256")
    alone = _run(monkeypatch, capsys, "--set", "work_size=256")
    paired = judged["paired"]
    assert paired["baseline_set"] == ["work_size=256"]
    a, b = validate.counts(judged), validate.counts(alone)
    assert paired["gained"] - paired["lost"] == a["right"] - b["right"]
    assert paired["fp_added"] - paired["fp_removed"] == a["fp"] - b["fp"]
    # a 256 px work image reads other dice (320 px read the same six scenes with session 44's
    # detector)
    assert paired["gained"] + paired["lost"] > 0
    assert "paired" not in alone


def test_a_baseline_equal_to_the_reader_changes_nothing(monkeypatch, capsys):
    same = _run(monkeypatch, capsys, "--baseline-set", "work_size=512")["paired"]
    assert {k: v for k, v in same.items() if k != "baseline_set"} == dict.fromkeys(
        ("gained", "lost", "fp_added", "fp_removed", "hand_changed"), 0)


def test_a_stretch_squashes_the_table_scenes_and_is_reported(monkeypatch, capsys):
    """--stretch draws the table scenes as an exporter squashing photos to a square leaves
    them (render_scene's stretch): wider scenes squashed to the frame's size."""
    plain = _run(monkeypatch, capsys)
    squashed = _run(monkeypatch, capsys, "--stretch", "0.75,0.75")
    assert plain["stretch"] is None and squashed["stretch"] == [0.75, 0.75]
    assert plain["images"] == squashed["images"] == 6
    a, _ = render_scene(np.random.default_rng([3, 0]), extras={})
    b, _ = render_scene(np.random.default_rng([3, 0]), extras={}, stretch=(0.75, 0.75))
    assert a.shape == b.shape and not np.array_equal(a, b)


def test_leaning_dice_are_counted_as_labelled_found_and_reported(monkeypatch, capsys):
    """--cocked-rate draws more leaning dice; the leaning block counts the dice labelled cocked
    in the scenes, those the reader finds, and those it reports without a value or as cocked."""
    plain = _run(monkeypatch, capsys)["leaning"]
    more = _run(monkeypatch, capsys, "--cocked-rate", "0.6")["leaning"]
    labelled = 0
    for i in range(6):
        _, labels = render_scene(np.random.default_rng([3, i]), extras={}, cocked_rate=0.6)
        labelled += sum(lb["state"] == "cocked" for lb in labels)
    assert more["labelled"] == labelled > plain["labelled"]
    for block in (plain, more):
        assert block["cocked"] <= block["null"] <= block["found"] <= block["labelled"]
    assert more["found"] > 0


def test_the_cocked_rate_is_recorded_and_flat_dice_called_cocked_are_counted(monkeypatch,
                                                                              capsys):
    """The report names the cocked rate it drew with. A reader that reports every die it finds
    as cocked calls every matched flat die cocked, and the leaning block counts them all."""
    assert _run(monkeypatch, capsys)["cocked_rate"] is None
    plain = _run(monkeypatch, capsys, "--cocked-rate", "0.2")
    assert plain["cocked_rate"] == 0.2
    real = validate.read_dice

    def all_cocked(image, config):
        reading = real(image, config)
        return DiceReading(tuple(replace(d, value=None, state="cocked") for d in reading.dice),
                           reading.hand)

    monkeypatch.setattr(validate, "read_dice", all_cocked)
    every = _run(monkeypatch, capsys, "--cocked-rate", "0.2")
    matched_flat = validate.counts(plain)["matched"]
    assert every["leaning"]["flat_called_cocked"] == matched_flat > 0
    assert plain["leaning"]["flat_called_cocked"] < matched_flat
    assert every["leaning"]["cocked"] == every["leaning"]["found"]
    assert every["read_rate"] == 0


def test_recolour_turns_every_hue_by_one_angle_and_keeps_the_greys():
    """A yellow die's body turns to another hue at the same saturation and value; black,
    white and grey stay as they were; the angle is drawn from the given stream only."""
    image = np.zeros((4, 6, 3), np.uint8)
    image[0] = (0, 200, 230)  # yellow (BGR)
    image[1] = (40, 90, 160)  # wood
    image[2] = (128, 128, 128)
    image[3] = (255, 255, 255)
    out = validate.recolour(image, np.random.default_rng(0))
    assert np.array_equal(out, validate.recolour(image, np.random.default_rng(0)))
    assert np.abs(out[2:].astype(int) - image[2:]).max() <= 1  # greys stay
    hsv_in = cv2.cvtColor(image[:2], cv2.COLOR_BGR2HSV).astype(int)
    hsv_out = cv2.cvtColor(out[:2], cv2.COLOR_BGR2HSV).astype(int)
    turn = (hsv_out[..., 0] - hsv_in[..., 0]) % 180
    assert turn.min() == turn.max() and 30 <= turn.min() <= 150  # one angle, 60-300 degrees
    assert np.abs(hsv_out[..., 2] - hsv_in[..., 2]).max() <= 2  # value kept
    assert np.abs(hsv_out[..., 1] - hsv_in[..., 1]).max() <= 3  # saturation kept


def test_a_recoloured_run_reads_the_same_scenes_in_other_colours(monkeypatch, capsys):
    plain = _run(monkeypatch, capsys)
    turned = _run(monkeypatch, capsys, "--recolour")
    assert plain["recolour"] is False and turned["recolour"] is True
    assert turned["images"] == plain["images"] == 6
    assert turned["dice"] == plain["dice"]  # the same dice, labelled the same


def test_the_colour_block_counts_the_flat_dice_named_as_drawn(monkeypatch, capsys):
    """Every matched flat die is counted once, under the colour it was drawn in; a reader
    that names every die "red" names only the red ones right. Recoloured scenes have no
    colour block: their labels' names no longer hold."""
    plain = _run(monkeypatch, capsys)
    colour = plain["colour"]
    assert colour["dice"] == validate.counts(plain)["matched"] > 0
    assert colour["named"] == sum(row.get(drawn, 0)
                                  for drawn, row in colour["confusion"].items())
    assert colour["dice"] == sum(sum(row.values()) for row in colour["confusion"].values())
    real = validate.read_dice

    def all_red(image, config):
        reading = real(image, config)
        return DiceReading(tuple(replace(d, color="red") for d in reading.dice), reading.hand)

    monkeypatch.setattr(validate, "read_dice", all_red)
    red = _run(monkeypatch, capsys)["colour"]
    assert red["dice"] == colour["dice"]
    assert red["named"] == sum(colour["confusion"].get("red", {}).values())
    assert all(set(row) == {"red"} for row in red["confusion"].values())
    monkeypatch.setattr(validate, "read_dice", real)
    assert _run(monkeypatch, capsys, "--recolour")["colour"] is None


def test_set_parses_each_field_by_its_type_and_refuses_mistakes():
    from vision.dice import DiceConfig

    config = validate.parse_set(["work_size=320", "value_threshold=0.6",
                                 "value_given_die=True"], DiceConfig())
    assert (config.work_size, config.value_threshold, config.value_given_die) == (320, 0.6, True)
    assert validate.parse_set(["value_given_die=false"], config).value_given_die is False
    focals = validate.parse_set(["lean_focals=0,2.5, 0.8"], config).lean_focals
    assert focals == (0.0, 2.5, 0.8)
    for bad, message in (("value_given_die=yes", "true or false"),
                         ("lean_focals=0,far", "numbers separated by commas"),
                         ("lean_focals=", "numbers separated by commas"),
                         ("lean_focals=0,,2", "numbers separated by commas"),
                         ("no_such=1", "no field 'no_such'")):
        with pytest.raises(SystemExit, match=message):
            validate.parse_set([bad], DiceConfig())


def test_models_folder_gives_its_nets_and_its_face_net_only_where_it_has_one(tmp_path,
                                                                            monkeypatch):
    from vision.dice import DiceConfig, reader

    monkeypatch.setattr(reader, "int8_exact", lambda: True)  # a CPU that runs int8 exactly
    committed = DiceConfig()
    assert validate.with_models(committed, None) is committed
    plain = validate.with_models(committed, str(tmp_path))
    assert plain.detector_path == str(tmp_path / "dice_detector.onnx")
    assert plain.classifier_path == str(tmp_path / "dice_classifier.onnx")
    assert plain.face_path == committed.face_path
    (tmp_path / "dice_face.onnx").write_bytes(b"")
    assert validate.with_models(committed, str(tmp_path)).face_path == str(
        tmp_path / "dice_face.onnx")
    # each net's int8 copy (models/dice/quantize.py) is read in place of its float file
    (tmp_path / "dice_classifier.int8.onnx").write_bytes(b"")
    copies = validate.with_models(committed, str(tmp_path))
    assert copies.classifier_path == str(tmp_path / "dice_classifier.int8.onnx")
    assert copies.face_path == str(tmp_path / "dice_face.onnx")
    (tmp_path / "dice_face.int8.onnx").write_bytes(b"")
    copies = validate.with_models(committed, str(tmp_path))
    assert copies.face_path == str(tmp_path / "dice_face.int8.onnx")
    assert copies.detector_path == str(tmp_path / "dice_detector.onnx")
