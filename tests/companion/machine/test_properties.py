"""Properties: any sequence of actions, legal or not, never corrupts the state or loses a die."""

from __future__ import annotations

import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.machine.game import (
    ROW_MAX,
    IllegalAction,
    apply,
    complete,
    copy_state,
    legal_actions,
    replay,
)

from .conftest import parts_accounted, setup_event

PLACES = {"ready", "hand", "shield", "spent", "locked", "removed"}


def check_invariants(state, cat):
    dice = state["dice"]
    assert [d["id"] for d in dice] == list(range(len(dice)))  # no die lost or duplicated
    assert all(d["at"] in PLACES for d in dice)
    assert sum(d["at"] != "removed" for d in dice) <= cat.player.max_dice
    assert sum(d["color"] == "black" for d in dice) == cat.player.black_dice
    for d in dice:
        if d["at"] == "hand":
            assert 1 <= d["value"] <= 6
    assert parts_accounted(state, cat)
    assert len(state["row"]) <= ROW_MAX
    for slot in state["row"]:
        part = cat.part(slot["part"])
        assert 1 <= slot["hp"] <= part.hp
        assert 0 <= slot["pos"] < len(part.track)
    assert 0 <= state["power"] <= 10 and 0 <= state["sentience"] <= 10
    assert 0 <= state["hp"] <= cat.player.hp and state["shield"] >= 0
    assert state["shield_dice"] <= state["shield_cap"]
    side = cat.player.side(state["hard"])
    assert state["used"]["modifier"] <= side.modifier_slots
    assert state["used"]["reroll"] <= side.reroll_slots
    assert (state["outcome"] is not None) == (state["phase"] == "over")
    json.dumps(state)


junk_event = st.fixed_dictionaries({"type": st.sampled_from(
    ["roll", "modify", "reroll", "shield", "attack", "end_turn", "cycle", "grow", "setup",
     "nope"])}, optional={
    "die": st.one_of(st.integers(-2, 12), st.text(max_size=2), st.none()),
    "delta": st.sampled_from([1, -1, 0, 2, True, "1"]),
    "value": st.one_of(st.integers(-1, 8), st.none()),
    "dice": st.one_of(st.lists(st.integers(-1, 11), max_size=4),
                      st.dictionaries(st.sampled_from([str(i) for i in range(11)]),
                                      st.integers(0, 7), max_size=11)),
    "locks": st.one_of(st.lists(st.integers(-1, 11), max_size=3), st.just("0")),
    "part": st.sampled_from(["sum", "dbl", "eo", "pair", "gt", "all", "brk", "rep", "dmg",
                             "f1", "core", "zzz", ["x"]]),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), hard=st.booleans(),
       steps=st.lists(st.tuples(st.booleans(), junk_event, st.integers(0, 10**6)),
                      min_size=1, max_size=150))
def test_random_actions_never_corrupt_the_state(cat, seed, hard, steps):
    rng = random.Random(seed)
    others = [p.id for p in cat.others]
    rng.shuffle(others)
    events = [setup_event(others[:3], hard)]
    state = replay(events, cat)
    for legal, junk, pick in steps:
        if state["phase"] == "over":
            break
        if legal:
            actions = legal_actions(state, cat)
            event = complete(state, actions[pick % len(actions)], rng)
        else:
            event = junk
        before = copy_state(state)
        try:
            state = apply(state, event, cat)
        except IllegalAction:
            assert state == before
            continue
        events.append(event)
        check_invariants(state, cat)
    assert replay(json.loads(json.dumps(events)), cat) == state


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10**6), hard=st.booleans())
def test_whole_random_games_on_the_shipped_catalogue_keep_the_invariants(seed, hard):
    from companion.machine.catalogue import load_catalogue
    from companion.machine.policies import random_policy
    from companion.machine.simulate import play_game

    shipped = load_catalogue()
    events: list = []
    result = play_game(random.Random(seed), random_policy, hard, shipped, events=events)
    state = replay(events[:1], shipped)
    for event in events[1:]:
        state = apply(state, event, shipped)
        check_invariants(state, shipped)
    assert state["hp"] == result.hp_left and state["phase"] == "over"
