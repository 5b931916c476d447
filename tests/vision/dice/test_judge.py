"""The judging tool (models/dice/judge.py): MODEL.md's sets, the counts and the table."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from models.dice import judge, validate

MODEL_MD = Path(__file__).resolve().parents[3] / "models" / "dice" / "MODEL.md"


def test_the_recipes_are_model_md_s_documented_sets_in_its_order():
    """Each row of MODEL.md's table of rendered sets names its ``validate`` options; the tool
    runs the same ones, so that offset 0 gives the documented figures."""
    rows = re.findall(r"^\| S(\d+) \| `([^`]*)`", MODEL_MD.read_text(), re.M)
    assert len(rows) == 18
    documented = [(int(name), options.split()) for name, options in rows]
    ours = [(number, [*options[:2], "--seed", str(number), *options[2:]])
            for number, options in judge.RECIPES]
    assert ours == documented


def _report(right: int, wrong: int, null: int, fp: int, images: int) -> dict:
    return {"by_place": {"inside": {"right": right - 1, "wrong": wrong, "null": null},
                         "edge": {"right": 1, "wrong": 0, "null": 0}},
            "wrong_values": wrong, "fp_per_image": fp / images, "images": images,
            "wrong_on_unreadable": 2}


def test_the_counts_and_the_score_of_a_table():
    a = [{"name": "S1", **_report(10, 2, 3, 3, 7)}, {"name": "S2", **_report(5, 0, 1, 1, 3)}]
    b = [{"name": "S1", **_report(11, 1, 3, 2, 7)}, {"name": "S2", **_report(5, 0, 1, 2, 3)}]
    assert validate.counts(a[0]) == {"right": 10, "wrong": 2, "fp": 3, "matched": 15, "nonflat": 2}
    lines = judge.table([("base", a), ("cand", b)]).splitlines()
    assert lines[0] == "| set | base | cand |"
    assert lines[2] == "| S1 | 10 / 2 / 3 / 15 | 11 / 1 / 2 / 15 |"
    assert lines[4] == "| **sum** | 15 / 2 / 4 / 21 | 16 / 1 / 4 / 21 |"
    assert lines[5] == "| score | 9 | 11 |"  # right - wrong - false positives
    assert lines[6] == "| non-flat read with a value | 4 | 4 |"
    assert lines[7] == "| colour named as drawn | - | - |"  # reports from before session 58
    named = [{**r, "colour": {"dice": 9, "named": n}} for r, n in zip(b, (7, 8), strict=True)]
    assert judge.table([("base", a), ("cand", named)]).splitlines()[7] == \
        "| colour named as drawn | - | 15 / 18 |"
    other = [{**a[0], "name": "S1001"}, a[1]]  # another offset: the rows would not compare
    with pytest.raises(SystemExit, match="other: its sets are not base's"):
        judge.table([("base", a), ("other", other)])


def test_a_run_writes_each_set_and_the_table_reads_it_back(monkeypatch, capsys, tmp_path):
    """Two tiny sets through ``validate`` itself, with a reader option passed on."""
    monkeypatch.setattr(judge, "RECIPES", ((3, ("--count", "2")),
                                           (4, ("--count", "2", "--closeups"))))
    out = tmp_path / "run.jsonl"
    monkeypatch.setattr(sys, "argv", ["judge", str(out), "--offset", "10", "--jobs", "1",
                                      "--set", "work_size=320"])
    judge.main()
    printed = capsys.readouterr().out
    reports = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["name"] for r in reports] == ["S13", "S14"]
    assert [r["closeups"] for r in reports] == [False, True]
    assert all(r["set"] == ["work_size=320"] and r["scenes"] == 2 for r in reports)
    monkeypatch.setattr(sys, "argv", ["judge", "--table", str(out)])
    judge.main()
    assert capsys.readouterr().out == printed


def test_a_recoloured_run_is_named_apart(monkeypatch, capsys, tmp_path):
    """--recolour reaches validate, and its sets are named S<seed>r, so that the table refuses
    to set them beside the plain sets."""
    monkeypatch.setattr(judge, "RECIPES", ((3, ("--count", "2")),))
    plain, turned = tmp_path / "plain.jsonl", tmp_path / "turned.jsonl"
    for out, more in ((plain, []), (turned, ["--recolour"])):
        monkeypatch.setattr(sys, "argv", ["judge", str(out), "--jobs", "1", *more])
        judge.main()
    capsys.readouterr()
    reports = [json.loads(line) for line in turned.read_text().splitlines()]
    assert [(r["name"], r["recolour"]) for r in reports] == [("S3r", True)]
    with pytest.raises(SystemExit, match="its sets are not"):
        judge.table([("plain", judge.load(str(plain))), ("turned", reports)])
