"""The pinned scenes' claims and their search (models/dice/pinned.py). The reader tests call
each claim at its pinned seed; here, a claim that does not hold says which part fails, and the
search finds the pinned seeds and only seeds where the claim holds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from models.dice import pinned

PINNED = [(name, list(seed), values) for name, (seed, values) in pinned.PINNED.items()]


def test_every_claim_has_a_pinned_scene_that_a_reader_test_checks():
    assert list(pinned.PINNED) == list(pinned.CLAIMS)
    reader_tests = (Path(__file__).parent / "test_reader.py").read_text()
    assert sorted(re.findall(r'_holds\("([a-z-]+)"\)', reader_tests)) == sorted(pinned.CLAIMS)


@pytest.mark.parametrize(("name", "seed", "reason"), [
    ("middle-pass", [1118, 1], "not one flat die"),
    ("split-closeup", [8068, 1], "two parts"),
    ("parts-dropped", [5551, 1], "an unreadable part and a 1"),
    ("rejected-crop", [195, 1], "no die is found by it alone"),
    ("weak-peak", [166, 3], "no die is found by it alone"),
])
def test_a_claim_that_does_not_hold_says_which_part_fails(name, seed, reason):
    with pytest.raises(pinned.ClaimFails, match=reason):
        pinned.CLAIMS[name](seed)


@pytest.mark.parametrize(("name", "seed", "values"), [p for p in PINNED if p[1][1] == 1])
def test_the_search_finds_a_pinned_seed_and_prints_its_values(name, seed, values, capsys):
    found = list(pinned.search(pinned.CLAIMS[name], seed[0] - 2, 3, 1, first=5))
    assert found == [(seed[0], values)]  # the two seeds before it do not hold
    assert pinned.main([name, "--start", str(seed[0]), "--count", "1"]) == 0
    assert capsys.readouterr().out == f"[{seed[0]}, 1]: {' '.join(map(str, values))}\n"


def test_the_search_yields_the_seeds_that_hold_in_order_and_stops_at_first():
    def even(seed):
        s, stream = seed
        if s % 2:
            raise pinned.ClaimFails("odd")
        return (s, stream)

    assert list(pinned.search(even, 3, 6, 7, first=5)) == [(4, (4, 7)), (6, (6, 7)),
                                                           (8, (8, 7))]
    assert list(pinned.search(even, 3, 6, 7, first=2)) == [(4, (4, 7)), (6, (6, 7))]


def test_the_search_takes_the_seeds_second_number(capsys):
    assert list(pinned.search(pinned.weak_peak, 160, 10, 3, first=5)) == [(165, (3,))]
    assert pinned.main(["weak-peak", "--start", "165", "--count", "1", "--stream", "3"]) == 0
    assert capsys.readouterr().out == "[165, 3]: 3\n"


def test_a_search_that_finds_nothing_says_so(capsys):
    assert pinned.main(["middle-pass", "--start", "1118", "--count", "1"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "middle-pass holds for none of the seeds [1118...1118, 1]" in captured.err


@pytest.mark.parametrize("argv", [["no-such-claim", "--start", "1"], ["middle-pass"],
                                  ["middle-pass", "--start", "1", "--count", "0"],
                                  ["middle-pass", "--start", "1", "--first", "0"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        pinned.main(argv)
    assert exit_.value.code == 2
    assert "error" in capsys.readouterr().err


def test_it_runs_as_a_module():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "models.dice.pinned", "split-closeup",
                           "--start", "8069", "--count", "1"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[3], timeout=120)
    assert (done.returncode, done.stdout) == (0, "[8069, 1]: 6\n")
