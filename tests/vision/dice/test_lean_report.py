"""The lean check's development report (models/dice/lean_report.py)."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from models.dice import lean_report
from models.dice.lean_report import Lean, scene_leans, summary
from vision.dice import DiceConfig
from vision.render.dice import render_scene


def test_the_summary_counts_each_kind_past_each_bar():
    rows = [Lean("flat", 5.0, 0.1, 40), Lean("flat", 30.0, 0.3, 40),
            Lean("flat", math.nan, 0.2, 40), Lean("cocked", 21.0, 0.4, 40),
            Lean("cocked", 35.0, 0.5, 40),
            Lean("unreadable", 50.0, 0.9, 40)]
    out = summary(rows, [20, 25, 40])
    assert (out["flat"], out["cocked"]) == (3, 2)
    assert out["bars"] == {"20": {"flat_called_cocked": 1, "cocked_named": 2},
                           "25": {"flat_called_cocked": 1, "cocked_named": 1},
                           "40": {"flat_called_cocked": 0, "cocked_named": 0}}
    assert out["flat_error"][0] == pytest.approx(0.2)
    assert summary([], [20])["flat_error"] is None


@pytest.mark.parametrize("seed", [5301, 5302])
def test_flat_dice_with_their_exact_faces_lie_on_one_plane(seed):
    image, labels = render_scene(np.random.default_rng(seed), width=960, height=540,
                                 count=(5, 6), size_px=(45, 60), tilt_deg=(10, 35),
                                 hand_rate=0.0, cocked_rate=0.0)
    rows = scene_leans(image, labels, DiceConfig(), exact=True)
    assert len(rows) >= 3 and all(r.state == "flat" for r in rows)
    assert all(r.error == 0 for r in rows)
    assert all(r.angle < DiceConfig().lean_tolerance for r in rows)
    net = scene_leans(image, labels, DiceConfig())  # the face net's shapes: some error
    assert len(net) == len(rows) and any(r.error > 0 for r in net)


def test_the_report_prints_one_json_object(monkeypatch, capsys):
    monkeypatch.setattr(sys, "argv", ["lean_report", "--count", "2", "--seed", "5303",
                                      "--bars", "20,30", "--focals", "0"])
    lean_report.main()
    out = json.loads(capsys.readouterr().out)
    assert set(out["bars"]) == {"20", "30"} and out["focals"] == [0.0]
    assert out["scenes"] == 2 and out["exact"] is False
