from __future__ import annotations

import io
import json

import pytest

from companion.cli import main
from companion.doomcat.catalogue import goal


def pts(number: int, count: int) -> int:
    """Points of ``count`` scoring units of a per-unit goal, from the catalogue's values."""
    per = next(v for k, v in goal(number).params.items() if k.startswith("per_"))
    return int(count * per)

STATE = {"layout": "B", "lines": [[0, 6], [3, 9], [0, 3], [6, 9]], "crossed": [0, 9],
         "top": [{"value": 1, "circled": False}, {"value": 4, "circled": False},
                 {"value": 2, "circled": False}, {"value": 3, "circled": False},
                 None, None, None],
         "unknown": []}


def _write(tmp_path, name, doc):
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(path)


def test_score_prints_one_json_line_per_state_in_order(tmp_path, capsys):
    a = _write(tmp_path, "a.json", STATE)
    b = _write(tmp_path, "b.json", STATE | {"lines": [[0, 4], [4, 8], [0, 8]]})
    assert main(["score", a, b, "--goals", "1,2,3", "--familiar", "F03", "--json"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    first, second = (json.loads(x) for x in lines)
    assert first["facts"]["intersections"] == 1 and first["facts"]["enclosures"] == 2
    assert first["facts"]["used"] == [0, 3, 6, 9] and first["facts"]["crossed"] == [0, 9]
    assert first["goals"] == {"01": pts(1, 2), "02": pts(2, 1), "03": pts(3, 4)}
    assert first["familiar_cost"] == 4
    assert first["total"] == pts(1, 2) + pts(2, 1) + pts(3, 4) - 4
    assert first["violations"] == []
    assert second["facts"]["enclosures"] == 1 and second["goals"]["01"] == pts(1, 1)


def test_score_reports_violations(tmp_path, capsys):
    path = _write(tmp_path, "v.json", STATE | {"crossed": [1]})
    assert main(["score", path, "--goals", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["violations"] == []  # candle 1 shows 2, and 2 is written on top
    path = _write(tmp_path, "w.json", STATE | {"crossed": [5]})
    assert main(["score", path, "--goals", "1", "--json"]) == 0
    assert "a candle numbered 6 is crossed out" in json.loads(capsys.readouterr().out)[
        "violations"][0]


def test_score_counts_a_number_the_rat_wrote_three_times_as_one_wild_number(tmp_path, capsys):
    """Goal 18 Wild Hand scores each circled (wild) number once; the Rat's third write "stays
    circled and wild", the same number, and is no violation for the Rat's player."""
    top = [{"value": 3, "circled": False}, {"value": 3, "circled": True},
           {"value": 3, "circled": True}, None, None, None, None]
    path = _write(tmp_path, "rat.json", STATE | {"top": top, "crossed": []})
    assert main(["score", path, "--goals", "18", "--familiar", "F09", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["goals"]["18"] == pts(18, 1)
    assert not any(v.startswith("top") for v in result["violations"])
    assert main(["score", path, "--goals", "18", "--json"]) == 0   # without the Rat
    assert any("more than twice" in v for v in json.loads(capsys.readouterr().out)["violations"])


def test_score_a_card_full_of_lines_with_every_goal(tmp_path, capsys):
    # all 66 lines of a card: the longest path and loop once walked every path (minutes)
    full = STATE | {"lines": [[a, b] for a in range(12) for b in range(a + 1, 12)], "crossed": []}
    path = _write(tmp_path, "full.json", full)
    assert main(["score", path, "--goals", ",".join(map(str, range(1, 28))), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["facts"]["longest_path"] == list(range(12))
    assert result["goals"]["10"] == pts(10, 11) and result["goals"]["20"] == pts(20, 12)


def test_score_reads_json_lines_from_stdin(monkeypatch, capsys):
    text = json.dumps(STATE) + "\n\n" + json.dumps(STATE | {"lines": []}) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(text))
    assert main(["score", "-", "--goals", "2", "--json"]) == 0
    totals = [json.loads(x)["total"] for x in capsys.readouterr().out.strip().splitlines()]
    assert totals == [pts(2, 1), 0]


def test_score_stdin_line_that_is_not_utf8_exits_2_naming_the_line(monkeypatch, capsys):
    """stdin is read as bytes: a line in another encoding is the user's mistake, whatever
    the locale's error handler for stdin (strict: a traceback once; surrogateescape: a
    misleading "not valid JSON")."""
    good = json.dumps(STATE).encode()
    data = good + b"\n" + json.dumps(STATE | {"layout": "A"}).encode().replace(b'"A"', b'"\xc4"')
    stdin = io.TextIOWrapper(io.BytesIO(data + b"\n"), encoding="utf-8", errors="strict")
    monkeypatch.setattr("sys.stdin", stdin)
    assert main(["score", "-", "--goals", "2", "--json"]) == 2
    captured = capsys.readouterr()
    assert len(captured.out.strip().splitlines()) == 1   # the first line was scored
    err = captured.err.strip()
    assert "\n" not in err and "<stdin>:2: at line 1 column" in err
    assert "not UTF-8 text (byte 0xc4)" in err


def test_score_text_output(tmp_path, capsys):
    assert main(["score", _write(tmp_path, "a.json", STATE), "--goals", "1,2"]) == 0
    out = capsys.readouterr().out
    assert f"total {pts(1, 2) + pts(2, 1)}" in out and "1 intersections, 2 enclosures" in out


@pytest.mark.parametrize(("doc", "goals", "message"), [
    ("{not json", "1", "not valid JSON"),
    (STATE | {"layout": "Z"}, "1", "unknown layout 'Z'"),
    (STATE | {"lines": [[0, 12]]}, "1", "candle 12 is out of range"),
    (STATE | {"lines": [[0, 6], [6, 0]]}, "1", "line 0-6 is listed twice"),
    (STATE, "1,28", "goal 28 does not exist"),
    (STATE | {"crossed": "3"}, "1", "$.crossed"),
])
def test_score_bad_input_exits_2_with_one_line(tmp_path, capsys, doc, goals, message):
    path = _write(tmp_path, "bad.json", doc)
    assert main(["score", path, "--goals", goals]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and "\n" not in err and captured.out == ""


def test_score_missing_file_and_unknown_familiar(tmp_path, capsys):
    assert main(["score", str(tmp_path / "none.json"), "--goals", "1"]) == 2
    assert "no such file" in capsys.readouterr().err
    path = _write(tmp_path, "a.json", STATE)
    assert main(["score", path, "--goals", "1", "--familiar", "F12"]) == 2
    assert "F01-F09" in capsys.readouterr().err


def test_cat_simulate_json_report(capsys):
    assert main(["cat", "simulate", "--games", "4", "--goals", "1,2,3", "--policy", "random",
                 "--seed", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    for key in ("games", "wins", "win_rate", "win_rate_ci95", "mean_score_per_sigil",
                "games_per_second"):
        assert key in report
    assert report["games"] == 4 and 0 <= report["wins"] <= 4
    assert main(["cat", "simulate", "--games", "2", "--goals", "1,2", "--seed", "3",
                 "--familiar", "F04"]) == 0
    assert "2 solo games" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["--policy", "clever"], "unknown policy"),
    (["--goals", "1,99"], "goal 99 does not exist"),
    (["--familiar", "F0"], "F01-F09"),
    (["--goals", "1"], "goals: a game is played with 2 goals (an easy game) or 3, got 1: 1"),
    (["--goals", "1,2,3,4,5"], "or 3, got 5: 1,2,3,4,5"),
])
def test_cat_simulate_bad_input(capsys, argv, message):
    base = ["cat", "simulate", "--games", "1", "--goals", "1,2,3"]
    assert main(base + argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def _legal_lines(count: int) -> list[list[int]]:
    from itertools import combinations

    from companion.doomcat.geometry import line_problems
    from companion.doomcat.layouts import load_layout
    layout, lines = load_layout("B"), []
    for chord in combinations(range(12), 2):
        if len(lines) < count and not line_problems(layout, lines, (), chord):
            lines.append(chord)
    assert len(lines) == count
    return [list(x) for x in lines]


def test_score_allows_the_ravens_extra_line(tmp_path, capsys):
    """Raven (F02): "Once per game, draw one extra line on the card you play this turn". A
    full card of the Raven's player holds 7 turn lines, the Raven's and a tie-break line
    ("Ties: ... tied players draw 1 more line"): 9 lines are no violation for that player."""
    top = [{"value": v, "circled": c} for v, c in
           [(1, False), (2, False), (3, False), (4, False), (5, False), (6, False), (1, True)]]
    path = _write(tmp_path, "raven.json", STATE | {"top": top, "crossed": [],
                                                    "lines": _legal_lines(9)})
    assert main(["score", path, "--goals", "1", "--familiar", "F02", "--json"]) == 0
    assert not any("lines are drawn" in v
                   for v in json.loads(capsys.readouterr().out)["violations"])
    assert main(["score", path, "--goals", "1", "--json"]) == 0   # without the Raven
    assert any("9 lines are drawn" in v
               for v in json.loads(capsys.readouterr().out)["violations"])
    path = _write(tmp_path, "raven10.json", STATE | {"top": top, "crossed": [],
                                                      "lines": _legal_lines(10)})
    assert main(["score", path, "--goals", "1", "--familiar", "F02", "--json"]) == 0
    assert any("10 lines are drawn" in v
               for v in json.loads(capsys.readouterr().out)["violations"])
