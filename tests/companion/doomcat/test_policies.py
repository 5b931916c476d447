from __future__ import annotations

import random

import pytest

from companion.doomcat.catalogue import goal
from companion.doomcat.game import GameConfig, apply, legal_options, new_game, replay
from companion.doomcat.policies import Greedy, make_policy, random_policy
from companion.doomcat.simulate import SimConfig, play_solo, simulate, wilson
from companion.errors import BadInput


def _state_before_the_triangle():
    """Ring B with lines 0-4 and 4-8 drawn; the roll lets 0-8 close a triangle."""
    s = replay(new_game(GameConfig(("ann",), ("B", "B"), (1, 2))))
    s = apply(s, {"type": "roll", "dice": [4, 1, 5]})
    s = apply(s, {"type": "move", "player": "ann", "card": 0, "die": 0, "write": 4,
                  "line": [0, 4], "cross": 3})
    s = apply(s, {"type": "roll", "dice": [6, 5, 3]})
    s = apply(s, {"type": "move", "player": "ann", "card": 0, "die": 0, "write": 6,
                  "line": [4, 8], "cross": 5})
    return apply(s, {"type": "roll", "dice": [2, 1, 3]})


def test_greedy_takes_the_move_that_raises_the_goal_score_most():
    s = _state_before_the_triangle()
    greedy = Greedy([1])
    ranked = greedy.rank(s, "ann", legal_options(s, "ann"), random.Random(0))
    gains = [r[0] for r in ranked]
    wards = int(goal(1).params["per_enclosure"])
    assert gains[0] == wards and gains == sorted(gains, reverse=True) and min(gains) == 0
    move = greedy(s, "ann", random.Random(0))
    after = apply(s, move).player("ann").cards[0]
    assert after.drawing.n_enclosures == 1   # it closed an area


def test_random_policy_plays_legal_moves():
    s = _state_before_the_triangle()
    rng = random.Random(1)
    for _ in range(10):
        apply(s, random_policy(s, "ann", rng))


def test_make_policy():
    assert make_policy("random", [1]) is random_policy
    assert isinstance(make_policy("greedy", [1, 2]), Greedy)
    with pytest.raises(BadInput, match="unknown policy"):
        make_policy("smart", [1])


@pytest.mark.parametrize("fam", [None, "F01", "F02", "F03", "F04", "F05", "F06", "F07", "F08",
                                 "F09"])
def test_a_solo_game_runs_to_the_end_with_every_familiar(fam):
    config = GameConfig(("solo",), ("A", "C"), (1, 2, 3), "solo" if fam else "none", fam)
    state, events = play_solo(config, random.Random(5), Greedy([1, 2, 3]))
    assert state.phase == "over" and state.turn == 14
    assert replay(events).to_json() == state.to_json()
    if fam in ("F01", "F02"):
        assert fam in state.players[0].powers_used


def test_simulate_is_deterministic_for_a_seed():
    config = SimConfig(games=6, goals=(1, 2, 3), policy="random", seed=9)
    a, b = simulate(config), simulate(config)
    assert a.to_json() | {"games_per_second": 0} == b.to_json() | {"games_per_second": 0}
    c = simulate(SimConfig(games=6, goals=(1, 2, 3), policy="random", seed=10))
    assert c.mean_score_per_sigil != a.mean_score_per_sigil


def test_simulate_uses_the_injected_clock():
    ticks = iter([10.0, 12.0])
    report = simulate(SimConfig(games=4, policy="random"), clock=lambda: next(ticks))
    assert report.games_per_second == pytest.approx(2.0)


def test_greedy_beats_random():
    greedy = simulate(SimConfig(games=12, goals=(1, 2, 3), policy="greedy", seed=1))
    rand = simulate(SimConfig(games=12, goals=(1, 2, 3), policy="random", seed=1))
    assert greedy.mean_score_per_sigil > rand.mean_score_per_sigil + 10


@pytest.mark.parametrize(("wins", "n", "low", "high"), [
    (0, 10, 0.0, 0.2775), (10, 10, 0.7225, 1.0), (50, 100, 0.40, 0.60),
])
def test_wilson_interval(wins, n, low, high):
    lo, hi = wilson(wins, n)
    assert lo == pytest.approx(low, abs=0.01) and hi == pytest.approx(high, abs=0.01)


def test_balance_table_has_a_row_per_suggested_set():
    from companion.doomcat.balance import table
    from companion.doomcat.catalogue import SUGGESTED_SETS

    text, results = table(games=1, seed=2)
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(SUGGESTED_SETS)
    assert set(results) == set(SUGGESTED_SETS)
    assert all(set(r) == {"greedy", "random"} for r in results.values())
