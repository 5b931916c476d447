"""The random and greedy policies: legal plans, and the greedy lookahead's choices."""

from __future__ import annotations

import random

import pytest

from companion.errors import BadInput
from companion.machine.game import apply, complete, legal_actions
from companion.machine.policies import Greedy, get_policy, random_policy

from .conftest import started


def play_out(state, events, cat, rng, policy=None, played=None):
    """Apply the policy's events, asking it again after a re-roll, to the turn's end."""
    while True:
        for event in events:
            state = apply(state, complete(state, event, rng), cat)
            if played is not None:
                played.append(event)
            if event["type"] == "reroll" or state["phase"] != "player":
                break
        if state["phase"] != "player":
            return state
        events = (policy or Greedy())(state, cat, rng)


def test_greedy_kills_the_doom_core_when_it_can(cat):
    state = started(cat, row=["eo", "core", "sum"], faces=[5, 6, 5, 6, 2])
    events = Greedy()(state, cat, random.Random(0))
    state = play_out(state, events, cat, random.Random(0))
    assert state["outcome"] == "won"


def test_greedy_shields_against_lethal_damage(cat):
    # eo deals 3 next machine phase and the player has 3 HP: shields must hold 3
    state = started(cat, row=["eo", "sum"], faces=[1, 1, 1, 4, 4], hp=3)
    events = Greedy()(state, cat, random.Random(0))
    state = play_out(state, events, cat, random.Random(0))
    assert state["shield"] >= 3 or "eo" in state["destroyed"]
    state = apply(state, {"type": "cycle"}, cat)
    assert state["outcome"] != "lost"


def test_greedy_uses_a_modifier_to_meet_a_condition(cat):
    # a 4 and a 5 hurt pair; the 6 can become a 5 with a +/-1 slot
    state = started(cat, row=["pair"], faces=[4, 6, 1, 1, 1])
    played: list = []
    events = Greedy()(state, cat, random.Random(0))
    state = play_out(state, events, cat, random.Random(0), played=played)
    assert {"type": "modify", "die": 1, "delta": -1} in played
    assert state["row"][0]["hp"] <= 2


@pytest.mark.parametrize("seed", range(5))
def test_policies_only_play_legal_actions(cat, seed):
    rng = random.Random(seed)
    for policy in (random_policy, Greedy()):
        state = started(cat, row=["sum", "dbl", "eo", "pair", "gt"],
                        faces=[rng.randint(1, 6) for _ in range(7)])
        for _ in range(30):
            if state["phase"] != "player":
                break
            for event in policy(state, cat, rng):
                state = apply(state, complete(state, event, rng), cat)
                if event["type"] == "reroll":
                    break
        assert state["phase"] in ("machine", "over")


def test_random_policy_ends_the_turn_only_when_nothing_else_is_legal(cat):
    state = started(cat, faces=[1, 2, 3, 4, 5])
    assert random_policy(state, cat, random.Random(1))[0]["type"] != "end_turn"
    state = apply(state, {"type": "attack", "part": "eo", "dice": [1]}, cat)
    for die in (0, 2, 3, 4):
        state["dice"][die]["at"] = "spent"
    assert legal_actions(state, cat) == [{"type": "end_turn"}]
    assert random_policy(state, cat, random.Random(1)) == [{"type": "end_turn"}]


def test_unknown_policy_is_bad_input():
    with pytest.raises(BadInput, match="unknown policy 'smart'"):
        get_policy("smart")
