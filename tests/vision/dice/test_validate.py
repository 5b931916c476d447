"""The dice validation tool (models/dice/validate.py): its paired reading against a baseline."""

from __future__ import annotations

import json
import sys

import numpy as np

from models.dice import validate
from vision.render.dice import render_scene


def _run(monkeypatch, capsys, *args: str) -> dict:
    monkeypatch.setattr(sys, "argv", ["validate", "--count", "6", "--seed", "3", *args])
    validate.main()
    return json.loads(capsys.readouterr().out)


def test_the_paired_counts_are_the_differences_scene_by_scene(monkeypatch, capsys):
    """Read with a coarser work image as the baseline: what the paired block gains and loses
    adds up to the difference between the two readers' own figures."""
    judged = _run(monkeypatch, capsys, "--baseline-set", "work_size=320")
    alone = _run(monkeypatch, capsys, "--set", "work_size=320")
    paired = judged["paired"]
    assert paired["baseline_set"] == ["work_size=320"]
    a, b = validate.counts(judged), validate.counts(alone)
    assert paired["gained"] - paired["lost"] == a["right"] - b["right"]
    assert paired["fp_added"] - paired["fp_removed"] == a["fp"] - b["fp"]
    assert paired["gained"] + paired["lost"] > 0  # a 320 px work image reads other dice
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
