"""Every rulebook sentence of Doom Machine: an allowed case and a refused case each."""

from __future__ import annotations

import json

import pytest

from companion.errors import BadInput
from companion.machine.game import (
    Game,
    IllegalAction,
    apply,
    copy_state,
    dice_names,
    die_name,
    legal_actions,
    lock_choices,
    lockable,
    new_game,
    replay,
    view,
)

from .conftest import parts_accounted, setup_event, started


def refused(state, event, cat, reason):
    """Apply an event the rules refuse: the reason is in the message, the state unchanged."""
    before = copy_state(state)
    with pytest.raises(IllegalAction, match=reason):
        apply(state, event, cat)
    assert state == before


def machine(state, cat):
    """Run a whole machine phase (end_turn, cycles, grow); returns the state and the log."""
    state = apply(state, {"type": "end_turn"}, cat)
    log = []
    while state["phase"] == "machine":
        state = apply(state, legal_actions(state, cat)[0], cat)
        log += state["log"]
    return state, log


def cycle_all(state, cat):
    """end_turn and every cycle step, but not the grow."""
    state = apply(state, {"type": "end_turn"}, cat)
    while state["phase"] == "machine" and legal_actions(state, cat)[0]["type"] == "cycle":
        state = apply(state, legal_actions(state, cat)[0], cat)
    return state


# ---------------------------------------------------------------------------- setup

def test_illegal_action_is_bad_input():
    assert issubclass(IllegalAction, BadInput)


def test_normal_setup_keeps_nine_parts_above_the_core_and_reveals_three(cat):
    state = replay([setup_event(["sum", "dbl", "eo"])], cat)
    assert [s["part"] for s in state["row"]] == ["sum", "dbl", "eo"]
    assert [s["hp"] for s in state["row"]] == [3, 3, 2]
    assert all(s["pos"] == 0 for s in state["row"])
    assert len(state["deck"]) == 10 - 3 and state["deck"][-1] == "core"
    assert len(state["aside"]) == 1
    assert state["hp"] == 10 and state["side"] == "A"
    assert [d["color"] for d in state["dice"]] == ["black"] * 5
    assert parts_accounted(state, cat)


def test_hard_setup_uses_every_part_and_side_b(cat):
    state = replay([setup_event(["sum", "dbl", "eo"], hard=True)], cat)
    assert state["aside"] == [] and len(state["deck"]) == 11 - 3
    assert state["side"] == "B" and state["shield_cap"] == 3


@pytest.mark.parametrize(("change", "reason"), [
    ({"deck": ["core", "sum"]}, "bottom of the deck"),
    ({"aside": []}, "every other part exactly once"),
    ({"hard": True}, "hard mode uses all 10"),
    ({"deck": ["nope", "core"]}, "unknown part 'nope'"),
    ({"hard": "yes"}, "true or false"),
])
def test_bad_setup_is_refused(cat, change, reason):
    event = {**setup_event(["sum", "dbl", "eo"]), **change}
    refused({"version": 1, "phase": "setup", "log": []}, event, cat, reason)


def test_setup_twice_is_refused(cat):
    state = replay([setup_event(["sum", "dbl", "eo"])], cat)
    refused(state, setup_event(["sum", "dbl", "eo"]), cat, "already set up")


def test_new_game_is_seeded_and_replays(cat):
    a, events = new_game(3, catalogue=cat)
    b, _ = new_game(3, catalogue=cat)
    c, _ = new_game(4, catalogue=cat)
    assert a == b and a != c
    assert replay(json.loads(json.dumps(events)), cat) == a


# ---------------------------------------------------------------------------- roll

def test_roll_gives_every_ready_die_its_face(cat):
    state = started(cat, faces=[6, 5, 4, 3, 2])
    assert [d["value"] for d in state["dice"]] == [6, 5, 4, 3, 2]
    assert all(d["at"] == "hand" for d in state["dice"])
    assert state["phase"] == "player" and state["stage"] == "utilities"


@pytest.mark.parametrize(("dice", "reason"), [
    ({"0": 1, "1": 2, "2": 3, "3": 4}, "missing"),
    ({"0": 1, "1": 2, "2": 3, "3": 4, "4": 7}, "die face 1-6"),
    ({"0": 1, "1": 2, "2": 3, "3": 4, "4": 5, "9": 1}, "not rollable"),
    ([1, 2, 3, 4, 5], "must map die ids"),
])
def test_bad_rolls_are_refused(cat, dice, reason):
    state = replay([setup_event(["sum", "dbl", "eo"])], cat)
    refused(state, {"type": "roll", "dice": dice}, cat, reason)


def test_actions_out_of_phase_are_refused(cat):
    state = replay([setup_event(["sum", "dbl", "eo"])], cat)
    refused(state, {"type": "shield", "die": 0}, cat, "only in the player phase")
    refused(state, {"type": "cycle"}, cat, "only in the machine phase")
    refused(state, {"type": "dance"}, cat, "unknown event type")
    refused(state, "roll", cat, "unknown event type")


# ---------------------------------------------------------------------------- utilities

def test_modifier_slot_changes_a_die_by_one(cat):
    state = started(cat, faces=[2, 5, 3, 3, 3])
    state = apply(state, {"type": "modify", "die": 0, "delta": 1}, cat)
    state = apply(state, {"type": "modify", "die": 1, "delta": -1}, cat)
    assert [d["value"] for d in state["dice"][:2]] == [3, 4]
    assert state["used"]["modifier"] == 2


@pytest.mark.parametrize(("face", "delta", "reason"), [
    (6, 1, "sixes may not become ones"),
    (1, -1, "ones may not become sixes"),
    (3, 2, "must be \\+1 or -1"),
    (3, 0, "must be \\+1 or -1"),
    # "modify its face value by +/- 1 pip": a die shows whole pips (1.0 used to be taken and
    # left the die showing 4.0)
    (3, 1.0, "must be \\+1 or -1, got 1.0"),
    (3, "1", "must be \\+1 or -1"),
])
def test_modifier_never_wraps_and_moves_by_one(cat, face, delta, reason):
    state = started(cat, faces=[face, 2, 2, 2, 2])
    refused(state, {"type": "modify", "die": 0, "delta": delta}, cat, reason)


def test_each_modifier_slot_once_per_turn(cat):
    state = started(cat, faces=[3, 3, 3, 3, 3])
    for die in range(3):  # side A: three +/-1 slots
        state = apply(state, {"type": "modify", "die": die, "delta": 1}, cat)
    refused(state, {"type": "modify", "die": 3, "delta": 1}, cat, "all 3 \\+/-1 slots")


def test_reroll_slot_sets_the_read_face(cat):
    state = started(cat, faces=[1, 2, 3, 4, 5])
    state = apply(state, {"type": "reroll", "die": 0, "value": 6}, cat)
    assert state["dice"][0]["value"] == 6 and state["dice"][0]["rerolled"]
    state = apply(state, {"type": "reroll", "die": 1, "value": 6}, cat)
    refused(state, {"type": "reroll", "die": 2, "value": 6}, cat, "all 2 re-roll slots")
    refused(started(cat), {"type": "reroll", "die": 0, "value": 0}, cat, "die face 1-6")


def test_a_rerolled_die_cannot_be_modified(cat):
    state = started(cat, faces=[3, 3, 3, 3, 3])
    state = apply(state, {"type": "reroll", "die": 0, "value": 4}, cat)
    # players count dice from one: id 0 is "die 1" in the refusal and the log
    refused(state, {"type": "modify", "die": 0, "delta": 1}, cat, "die 1 was re-rolled this turn")
    assert state["log"] == ["re-roll slot: die 1: 3 -> 4"]
    state = apply(state, {"type": "modify", "die": 1, "delta": 1}, cat)  # another die may
    assert state["dice"][1]["value"] == 4


def test_hard_mode_has_one_slot_fewer_of_each(cat):
    state = started(cat, faces=[3, 3, 3, 3, 3], hard=True)
    state = apply(state, {"type": "reroll", "die": 0, "value": 4}, cat)
    refused(state, {"type": "reroll", "die": 1, "value": 4}, cat, "all 1 re-roll slots")
    for die in (1, 2):
        state = apply(state, {"type": "modify", "die": die, "delta": 1}, cat)
    refused(state, {"type": "modify", "die": 3, "delta": 1}, cat, "all 2 \\+/-1 slots")
    for die in range(3):
        state = apply(state, {"type": "shield", "die": die}, cat)
    refused(state, {"type": "shield", "die": 3}, cat, "at most 3 shield dice")


def test_utilities_come_before_shields_and_damage(cat):
    state = started(cat, faces=[3, 3, 3, 3, 3])
    shielded = apply(state, {"type": "shield", "die": 0}, cat)
    refused(shielded, {"type": "modify", "die": 1, "delta": 1}, cat, "utilities come first")
    refused(shielded, {"type": "reroll", "die": 1, "value": 2}, cat, "utilities come first")
    attacked = apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    refused(attacked, {"type": "modify", "die": 1, "delta": 1}, cat, "already played")


# ---------------------------------------------------------------------------- shields

def test_shield_strength_is_the_sum_of_faces_at_most_four_dice(cat):
    state = started(cat, faces=[6, 5, 4, 3, 2])
    for die in range(4):
        state = apply(state, {"type": "shield", "die": die}, cat)
    assert state["shield"] == 6 + 5 + 4 + 3
    refused(state, {"type": "shield", "die": 4}, cat, "at most 4 shield dice")


def test_shields_come_before_damage(cat):
    state = started(cat, faces=[2, 5, 4, 3, 2])
    state = apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    refused(state, {"type": "shield", "die": 1}, cat, "shields come before damage")


def test_a_die_is_used_once(cat):
    state = started(cat, faces=[2, 5, 4, 3, 2])
    state = apply(state, {"type": "shield", "die": 1}, cat)
    refused(state, {"type": "shield", "die": 1}, cat, "is on a shield")
    refused(state, {"type": "attack", "part": "eo", "dice": [9]}, cat, "no die with id 9")
    state = apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    refused(state, {"type": "attack", "part": "eo", "dice": [0]}, cat, "is spent")


def test_shields_do_not_persist_to_the_next_turn(cat):
    state = started(cat, row=["sum"], faces=[6, 6, 6, 6, 1])
    for die in range(4):
        state = apply(state, {"type": "shield", "die": die}, cat)
    state, _ = machine(state, cat)
    state = apply(state, {"type": "roll", "dice": {str(i): 1 for i in range(5)}}, cat)
    assert state["shield"] == 0 and state["shield_dice"] == 0


# ---------------------------------------------------------------------------- damage

@pytest.mark.parametrize(("part", "good", "bad"), [
    ("sum", [2, 4, 6], [2, 4, 5]),
    ("sum", [3, 3, 6], [3, 3, 3]),
    ("dbl", [5, 5], [5, 4]),
    ("eo", [3], [4]),
    ("eo", [2], [1]),
    ("pair", [5, 4], [4, 4]),
    ("gt", [3, 6], [4, 6]),
    ("gt", [4, 3], [3, 3]),
    ("all", [6, 6, 6], [6, 6, 5]),
])
def test_damage_conditions_of_all_six_kinds(cat, part, good, bad):
    row = ["sum", "dbl", "eo", "pair", "gt", "all"]
    ok = started(cat, row=row, faces=(good + [1] * 5)[:5])
    ids = list(range(len(good)))
    hp = cat.part(part).hp
    after = apply(ok, {"type": "attack", "part": part, "dice": ids}, cat)
    if hp > 1:
        slot = next(s for s in after["row"] if s["part"] == part)
        assert slot["hp"] == hp - 1
    else:
        assert part in after["destroyed"]
    assert all(after["dice"][i]["at"] == "spent" for i in ids)
    no = started(cat, row=row, faces=(bad + [1] * 5)[:5])
    refused(no, {"type": "attack", "part": part, "dice": ids}, cat, "not meet")


def test_a_condition_needs_exactly_its_number_of_dice(cat):
    state = started(cat, faces=[2, 4, 6, 3, 3])
    refused(state, {"type": "attack", "part": "sum", "dice": [0, 1]}, cat, "needs 3 dice")
    refused(state, {"type": "attack", "part": "eo", "dice": [3, 4]}, cat, "got 2")
    refused(state, {"type": "attack", "part": "dbl", "dice": [3, 3]}, cat, "same die")
    refused(state, {"type": "attack", "part": "pair", "dice": [0]}, cat, "not in play")
    refused(state, {"type": "attack", "part": "nope", "dice": [0]}, cat, "is not a part")
    refused(state, {"type": "attack", "part": "eo", "dice": []}, cat, "list of die ids")
    # the refusal names the field the event has: 'dice' (it said "field 'die'")
    refused(state, {"type": "attack", "part": "eo", "dice": ["a"]}, cat,
            "field 'dice' must list die ids \\(whole numbers\\), got \\['a'\\]")
    refused(state, {"type": "attack", "part": "eo", "dice": [True]}, cat, "field 'dice'")


def test_an_attack_names_the_faces_in_words_in_the_log_and_in_a_refusal(cat):
    # the log read "dice 1, 2 ([5, 4]) deal 1 dmg" and a refusal "[4, 4] do not meet": a
    # Python list where a player reads dice
    state = started(cat, row=["pair", "sum"], faces=[5, 4, 4, 4, 1])
    after = apply(state, {"type": "attack", "part": "pair", "dice": [0, 1]}, cat)
    assert after["log"][-1] == "dice 1, 2 (5 and 4) deal 1 dmg to PAIR (HP 2)"
    refused(state, {"type": "attack", "part": "pair", "dice": [2, 3]}, cat,
            r"^attack: dice 3, 4 show 4 and 4, which do not meet PAIR's condition")
    refused(state, {"type": "attack", "part": "sum", "dice": [1, 2, 3]}, cat,
            r"dice 2, 3, 4 show 4, 4 and 4, which do not meet SUM's condition")


def test_a_part_can_be_damaged_several_times_a_turn(cat):
    state = started(cat, row=["rep", "sum"], faces=[4, 5, 4, 1, 1])
    for die in range(3):
        state = apply(state, {"type": "attack", "part": "rep", "dice": [die]}, cat)
    assert state["row"][0]["hp"] == 1
    refused(state, {"type": "attack", "part": "rep", "dice": [3]}, cat,
            "die 4 shows 1, which does not meet")


# ---------------------------------------------------------------------------- destroy

def test_destroying_a_part_closes_the_gap_and_adds_its_die(cat):
    state = started(cat, row=["sum", "f1", "dbl"], faces=[1, 2, 2, 2, 2])
    state = apply(state, {"type": "attack", "part": "f1", "dice": [0]}, cat)
    assert [s["part"] for s in state["row"]] == ["sum", "dbl"]
    assert state["destroyed"] == ["f1"]
    new = state["dice"][5]
    assert (new["color"], new["at"], len(state["dice"])) == ("yellow", "spent", 6)
    refused(state, {"type": "attack", "part": "f1", "dice": [1]}, cat, "already destroyed")
    state, _ = machine(state, cat)
    assert state["dice"][5]["at"] == "ready"  # rolled with the others next turn


def test_the_pool_never_exceeds_ten_dice(cat):
    state = started(cat, row=["f1", "eo", "sum"], faces=[1, 1, 1, 1, 1, 1, 1, 1, 1, 1])
    assert len(state["dice"]) == 10
    state = apply(state, {"type": "attack", "part": "f1", "dice": [0]}, cat)
    assert "f1" in state["destroyed"] and len(state["dice"]) == 10
    assert "goes back in the tin" in " ".join(state["log"])
    nine = started(cat, row=["f1", "eo", "sum"], faces=[1] * 9)
    nine = apply(nine, {"type": "attack", "part": "f1", "dice": [0]}, cat)
    assert len(nine["dice"]) == 10


def test_the_pool_never_holds_more_than_five_yellow_dice(cat):
    """Destroying a Machine Part: "you can never have more than 10 dice (5 black and 5 yellow)
    in your permanent pool." With a black die removed from play and 5 yellow dice held, a
    destroyed part's die does not join as a 6th yellow die."""
    state = started(cat, row=["f1", "eo", "sum"], faces=[1] * 10)
    state["dice"][4]["at"] = "removed"
    state = apply(state, {"type": "attack", "part": "f1", "dice": [0]}, cat)
    assert "f1" in state["destroyed"] and len(state["dice"]) == 10
    assert "5 yellow dice (9 dice in all): its die goes back in the tin" in " ".join(state["log"])
    # a yellow die removed from play leaves room for a new one
    state = started(cat, row=["f1", "eo", "sum"], faces=[1] * 10)
    state["dice"][9]["at"] = "removed"
    state = apply(state, {"type": "attack", "part": "f1", "dice": [0]}, cat)
    assert len(state["dice"]) == 11 and state["dice"][10]["color"] == "yellow"


def test_destroyed_effect_damages_all_parts_in_play(cat):
    state = started(cat, row=["sum", "eo", "dbl"], faces=[2, 3, 1, 1, 1], )
    state = apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    assert [s["hp"] for s in state["row"]] == [3, 1, 3]
    state = apply(state, {"type": "attack", "part": "eo", "dice": [1]}, cat)
    assert [(s["part"], s["hp"]) for s in state["row"]] == [("sum", 2), ("dbl", 2)]


def test_destroyed_effect_hits_the_left_part_and_chains(cat):
    # brk's destroyed effect deals 2 to its left part: f1 (HP 1) is destroyed in turn
    state = started(cat, row=["f1", "brk", "sum"], faces=[1, 6, 3, 3, 3])
    state = apply(state, {"type": "attack", "part": "brk", "dice": [0]}, cat)
    state = apply(state, {"type": "attack", "part": "brk", "dice": [1]}, cat)
    assert state["destroyed"] == ["brk", "f1"]
    assert [s["part"] for s in state["row"]] == ["sum"] and state["row"][0]["hp"] == 3
    assert len(state["dice"]) == 7


# ---------------------------------------------------------------------------- machine phase

def test_machine_cycles_left_to_right_then_grows(cat):
    state = started(cat, row=["sum", "dbl", "f1"])
    state = apply(state, {"type": "end_turn"}, cat)
    refused(state, {"type": "cycle", "part": "dbl"}, cat, "next is SUM, not DBL")
    refused(state, {"type": "grow"}, cat, "still to cycle")
    refused(state, {"type": "attack", "part": "sum", "dice": [0]}, cat, "machine phase")
    for pid in ("sum", "dbl", "f1"):
        state = apply(state, {"type": "cycle", "part": pid}, cat)
    assert [s["pos"] for s in state["row"]] == [1, 1, 1]
    refused(state, {"type": "cycle"}, cat, "every part has cycled")
    top = state["deck"][0]
    state = apply(state, {"type": "grow"}, cat)
    assert [s["part"] for s in state["row"]] == [top, "sum", "dbl", "f1"]
    assert state["row"][0]["pos"] == 0 and state["turn"] == 2 and state["phase"] == "roll"


def test_dead_space_sends_the_die_back_to_the_start(cat):
    state = started(cat, row=["sum"])
    state = cycle_all(state, cat)
    assert state["row"][0]["pos"] == 1
    state = apply(state, {"type": "grow"}, cat)
    state = apply(state, {"type": "roll", "dice": {"0": 1, "1": 1, "2": 1, "3": 1,
                                                   "4": 1}}, cat)
    state = apply(state, {"type": "end_turn"}, cat)
    state = apply(state, {"type": "cycle"}, cat)  # the new part cycles first
    state = apply(state, {"type": "cycle", "part": "sum"}, cat)
    assert state["row"][1]["pos"] == 0 and "dead space" in state["log"][0]


def test_damage_hits_shields_first_then_hp(cat):
    state = started(cat, row=["eo"], faces=[1, 1, 1, 1, 1])
    state = apply(state, {"type": "shield", "die": 0}, cat)  # shield 1 against 3 dmg
    state = cycle_all(state, cat)
    assert (state["shield"], state["hp"]) == (0, 8)
    assert state["dice"][0]["at"] == "spent"  # an expended shield die
    full = started(cat, row=["eo"], faces=[5, 1, 1, 1, 1])
    full = apply(full, {"type": "shield", "die": 0}, cat)
    full = cycle_all(full, cat)
    assert (full["shield"], full["hp"]) == (2, 10)


def test_damage_scaled_by_power_and_sentience_with_a_condition(cat):
    state = started(cat, row=["dmg"], power=2, sentience=6, hp=20)
    state["row"][0]["pos"] = 1
    state = cycle_all(state, cat)
    assert state["hp"] == 20 - (1 + 2 + 6) - 3
    low = started(cat, row=["dmg"], power=2, sentience=5, hp=20)
    low["row"][0]["pos"] = 1
    low = cycle_all(low, cat)
    assert low["hp"] == 20 - (1 + 2 + 5)  # the extra 3 needs sentience > 5


@pytest.mark.parametrize(("start", "power", "sentience"), [
    ({"power": 0, "sentience": 0}, 2, 0),
    ({"power": 9, "sentience": 10}, 10, 10),
])
def test_power_and_sentience_move_within_0_to_10(cat, start, power, sentience):
    state = started(cat, row=["dbl"], **start)
    state = cycle_all(state, cat)  # +2 power
    assert state["power"] == power
    state = apply(state, {"type": "grow"}, cat)
    state = apply(state, {"type": "roll", "dice": {str(i): 1 for i in range(5)}}, cat)
    state = apply(state, {"type": "end_turn"}, cat)
    state = apply(state, {"type": "cycle"}, cat)
    state = apply(state, {"type": "cycle", "part": "dbl"}, cat)  # -1 sentience
    assert state["sentience"] == max(0, sentience - 1)


def test_broken_shield_allows_one_shield_die_next_turn(cat):
    state = started(cat, row=["brk"])
    state, log = machine(state, cat)
    assert "breaks your shield" in " ".join(log)
    state = apply(state, {"type": "roll", "dice": {str(i): 4 for i in range(5)}}, cat)
    state = apply(state, {"type": "shield", "die": 0}, cat)
    refused(state, {"type": "shield", "die": 1}, cat, "at most 1 shield die this turn "
            "\\(broken shield\\)")
    # the turn after, four again
    state, _ = machine(state, cat)
    state = apply(state, {"type": "roll", "dice": {str(i): 4 for i in range(5)}}, cat)
    assert state["shield_cap"] == 4


def test_repair_never_exceeds_starting_hp(cat):
    state = started(cat, row=["pair"], faces=[4, 5, 4, 5, 1])
    for dice in ([0, 1], [2, 3]):
        state = apply(state, {"type": "attack", "part": "pair", "dice": dice}, cat)
    assert state["row"][0]["hp"] == 1
    state = cycle_all(state, cat)
    assert state["row"][0]["hp"] == 3
    full = cycle_all(started(cat, row=["pair"]), cat)
    assert full["row"][0]["hp"] == 3  # already at its starting HP: stays there
    assert "repairs PAIR by 0" in " ".join(full["log"])


def test_repair_of_adjacent_parts(cat):
    state = started(cat, row=["sum", "rep", "dbl", "f1"])
    state["row"][0]["hp"] = 1
    state["row"][2]["hp"] = 2
    state["row"][3]["hp"] = 0  # not adjacent to rep: untouched
    state = apply(state, {"type": "end_turn"}, cat)
    state = apply(state, {"type": "cycle"}, cat)
    state = apply(state, {"type": "cycle", "part": "rep"}, cat)
    assert [s["hp"] for s in state["row"]] == [3, 4, 3, 0]


def test_gear_cycles_the_adjacent_parts_once_more(cat):
    state = started(cat, row=["sum", "gt", "dbl", "f1"])
    state = cycle_all(state, cat)
    # sum and dbl cycled twice (own turn + gear), gt and f1 once
    assert [s["pos"] for s in state["row"]] == [0, 1, 2, 1]
    assert state["sentience"] == 0 and state["power"] == 2  # dbl: +2 power, then -1 sent.
    alone = cycle_all(started(cat, row=["gt", "f1"]), cat)
    assert [s["pos"] for s in alone["row"]] == [1, 0]  # f1: 1 by the gear, 2 is dead -> 0


def test_gears_that_face_each_other_stop(cat):
    from companion.machine.catalogue import Catalogue, PlayerCard, parts_from_json

    from .conftest import TEST_PARTS
    doc = json.loads(json.dumps(TEST_PARTS))
    for p in doc["parts"]:
        if p["id"] == "sum":
            p["track"] = ["start", [{"icon": "gear"}], [{"icon": "gear"}], [{"icon": "gear"}]]
        if p["id"] == "gt":
            p["track"] = ["start", [{"icon": "gear"}], [{"icon": "gear"}], [{"icon": "gear"}]]
    gears = Catalogue(parts=parts_from_json(doc), player=PlayerCard())
    state = cycle_all(started(gears, row=["sum", "gt"]), gears)
    assert all(0 <= s["pos"] <= 3 for s in state["row"])


def test_every_gear_in_a_chain_cycles_its_next_neighbour(cat):
    """Card Effect Icons: "Gear — Instantly triggers an additional track cycle for any cards
    immediately adjacent to it." A neighbour that a gear cycles onto its own gear cycles its
    other neighbour in turn, however long the chain: here the fifth part of a row of five
    gears (each part is cycled once by the chain, none twice)."""
    from companion.machine.catalogue import Catalogue, PlayerCard, parts_from_json

    from .conftest import TEST_PARTS
    row = ["sum", "gt", "dbl", "pair", "f1"]
    doc = json.loads(json.dumps(TEST_PARTS))
    for p in doc["parts"]:
        if p["id"] in row:
            p["track"] = ["start", [{"icon": "gear"}], "dead"]
    gears = Catalogue(parts=parts_from_json(doc), player=PlayerCard())
    state = apply(started(gears, row=row), {"type": "end_turn"}, gears)
    state = apply(state, {"type": "cycle", "part": "sum"}, gears)
    assert [s["pos"] for s in state["row"]] == [1, 1, 1, 1, 1]
    assert sum("gear cycles the adjacent parts" in line for line in state["log"]) == 5


def test_lock_sets_a_die_aside_for_the_next_turn(cat):
    state = started(cat, row=["all"])
    state, log = machine(state, cat)
    locked = [d["id"] for d in state["dice"] if d["at"] == "locked"]
    assert len(locked) == 1 and "sits out the next turn" in " ".join(log)
    refused(state, {"type": "roll", "dice": {str(i): 2 for i in range(5)}}, cat,
            "not rollable")
    rest = {str(i): 2 for i in range(5) if i not in locked}
    state = apply(state, {"type": "roll", "dice": rest}, cat)
    refused(state, {"type": "shield", "die": locked[0]}, cat, "is locked this turn")
    state, _ = machine(state, cat)  # all's track: back to the start, no new lock
    assert state["dice"][locked[0]]["at"] == "ready"


def test_lock_removes_the_die_when_sentience_is_high(cat):
    state = started(cat, row=["all"], sentience=7)
    state, _ = machine(state, cat)
    removed = [d for d in state["dice"] if d["at"] == "removed"]
    assert len(removed) == 1 and len(state["dice"]) == 5
    view_ = view(state, cat)
    assert view_["pool"] == 4


def test_a_lock_fired_in_the_player_phase_sits_out_the_next_turn(cat):
    """Card Effect Icons: "Lock — Choose one of your dice and set it aside. It does not get
    rolled or placed on your next turn." A lock can fire in the player phase too (a destroyed
    effect, on an edited catalogue): the die is set aside at once and is not rolled on the next
    turn. It used to be spent at the end of the turn and rolled again on the next."""
    from companion.machine.catalogue import Catalogue, PlayerCard, parts_from_json

    from .conftest import TEST_PARTS
    doc = json.loads(json.dumps(TEST_PARTS))
    for p in doc["parts"]:
        if p["id"] == "f1":
            p["destroyed"] = [{"icon": "lock", "amount": 1}]
    locks = Catalogue(parts=parts_from_json(doc), player=PlayerCard())
    state = started(locks, row=["f1", "sum"], faces=[1, 2, 3, 4, 5])
    state = apply(state, {"type": "attack", "part": "f1", "dice": [0]}, locks)
    # the default choice: the lowest die not on a shield, here the die just spent
    assert "F1 locks die 1: it sits out the next turn" in state["log"]
    refused(state, {"type": "attack", "part": "sum", "dice": [0, 1, 2]}, locks,
            "die 1 is locked this turn")
    state, _ = machine(state, locks)
    assert state["dice"][0]["at"] == "locked"
    rolled = {str(i): 3 for i in range(1, 6)}  # the four others and f1's yellow die
    refused(state, {"type": "roll", "dice": {**rolled, "0": 3}}, locks, "not rollable: 0")
    state = apply(state, {"type": "roll", "dice": rolled}, locks)
    assert "locked this turn: die 1" in state["log"][0]
    state, _ = machine(state, locks)  # it sat out that turn: back in the turn after
    assert state["dice"][0]["at"] == "ready"


# ---------------------------------------------------------------------------- the row

def test_never_more_than_ten_parts_in_play(cat):
    row = ["sum", "dbl", "eo", "pair", "gt", "all", "brk", "rep", "dmg", "f1"]
    state = started(cat, row=row, hp=1000)
    state = cycle_all(state, cat)
    refused(state, {"type": "grow", "part": "core"}, cat, "10 parts are in play")
    state = apply(state, {"type": "grow"}, cat)
    assert len(state["row"]) == 10 and state["deck"] == ["core"]
    nine = cycle_all(started(cat, row=row[:9], hp=1000), cat)
    nine = apply(nine, {"type": "grow"}, cat)
    assert len(nine["row"]) == 10


def test_deck_exhaustion_draws_nothing(cat):
    state = started(cat, row=["sum", "dbl"])
    state["deck"] = []
    state["destroyed"] = [p.id for p in cat.parts if p.id not in ("sum", "dbl")]
    state["aside"] = []
    state = cycle_all(state, cat)
    refused(state, {"type": "grow", "part": "eo"}, cat, "deck is empty")
    state = apply(state, {"type": "grow"}, cat)
    assert [s["part"] for s in state["row"]] == ["sum", "dbl"]
    assert "deck is empty" in state["log"][0] and state["turn"] == 2


def test_named_draws_follow_the_table(cat):
    state = cycle_all(started(cat, row=["sum", "dbl", "eo"]), cat)
    aside = state["aside"][0]
    drawn = apply(state, {"type": "grow", "part": aside}, cat)  # our shuffle set it aside
    assert drawn["row"][0]["part"] == aside and aside not in drawn["aside"]
    assert parts_accounted(drawn, cat)
    refused(state, {"type": "grow", "part": "core"}, cat, "bottom of the deck")
    refused(state, {"type": "grow", "part": "sum"}, cat, "already in play")
    refused(state, {"type": "grow", "part": "zzz"}, cat, "unknown part")


# ---------------------------------------------------------------------------- end

def test_destroying_the_doom_core_wins(cat):
    state = started(cat, row=["sum", "core"], faces=[5, 6, 5, 6, 1])
    state = apply(state, {"type": "attack", "part": "core", "dice": [0, 1]}, cat)
    assert state["outcome"] is None
    state = apply(state, {"type": "attack", "part": "core", "dice": [2, 3]}, cat)
    assert (state["phase"], state["outcome"]) == ("over", "won")
    refused(state, {"type": "end_turn"}, cat, "the game is over: won")
    assert legal_actions(state, cat) == []


def test_parts_brought_to_zero_with_the_doom_core_leave_play_too(cat):
    """Destroying a Machine Part: "If you successfully destroy a machine part by reducing its HP
    die to zero, remove the card from play and add that part's die to your permanent pool."
    A destroyed effect ("deal 1 damage to all parts in play") brings the Doom Core and another
    part to 0 at once: the game is won, and neither card stays in the row at HP 0 (the other
    part used to stay there, its die not added)."""
    state = started(cat, row=["core", "f1", "eo"], faces=[2, 3, 1, 1, 1])
    state["row"][0]["hp"] = 1
    state = apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    assert [s["hp"] for s in state["row"]] == [1, 1, 1]
    state = apply(state, {"type": "attack", "part": "eo", "dice": [1]}, cat)
    assert (state["phase"], state["outcome"]) == ("over", "won")
    assert state["row"] == []
    assert sorted(state["destroyed"]) == ["core", "eo", "f1"]
    assert [d["color"] for d in state["dice"]] == ["black"] * 5 + ["yellow"] * 3
    assert "F1 is destroyed" in state["log"]
    assert "the Doom Core is destroyed: you win" in state["log"]


def test_zero_hp_loses(cat):
    state = started(cat, row=["eo"], hp=3)
    state = cycle_all(state, cat)
    assert (state["hp"], state["phase"], state["outcome"]) == (0, "over", "lost")
    refused(state, {"type": "grow"}, cat, "the game is over: lost")
    alive = cycle_all(started(cat, row=["eo"], hp=4), cat)
    assert (alive["hp"], alive["outcome"]) == (1, None)


def test_the_machine_stops_at_the_players_death(cat):
    state = started(cat, row=["eo", "core"], hp=3)
    state["row"][1]["pos"] = 0
    state = cycle_all(state, cat)
    assert state["row"][1]["pos"] == 0  # the core never cycled: the game ended first


# ---------------------------------------------------------------------------- log and view

def test_apply_never_changes_its_argument(cat):
    state = started(cat, faces=[2, 3, 4, 5, 6])
    before = copy_state(state)
    apply(state, {"type": "attack", "part": "eo", "dice": [0]}, cat)
    assert state == before


def test_game_undo_and_replay_are_exact(cat):
    game = Game([setup_event(["sum", "dbl", "eo"])], cat)
    game.act({"type": "roll", "dice": {"0": 2, "1": 4, "2": 6, "3": 3, "4": 3}})
    game.act({"type": "attack", "part": "sum", "dice": [0, 1, 2]})
    snapshot = copy_state(game.state)
    game.act({"type": "attack", "part": "dbl", "dice": [3, 4]})
    game.undo()
    assert game.state == snapshot
    game.act({"type": "end_turn"})
    lines = game.machine_phase()
    assert lines and game.state["phase"] == "roll"
    assert replay(json.loads(json.dumps(game.events)), cat) == game.state
    with pytest.raises(IllegalAction, match="nothing to undo"):
        Game(game.events[:1], cat).undo()


def test_view_is_json_and_shows_the_table(cat):
    state = started(cat, row=["sum", "eo"], faces=[2, 3, 4, 5, 6])
    shown = json.loads(json.dumps(view(state, cat)))
    for key in ("row", "hp", "shield", "power", "sentience", "dice", "locked", "deck_size",
                "outcome", "slots", "pool", "log", "phase"):
        assert key in shown
    first = shown["row"][0]
    assert (first["name"], first["hp"], first["hp_max"], first["pos"]) == ("SUM", 3, 3, 0)
    assert shown["row"][1]["next"] == {"pos": 1, "text": "deal 3 dmg", "icons": ["damage"]}
    assert shown["row"][1]["condition_text"] == "1 die: a 2 or a 3"
    assert shown["row"][1]["destroyed_text"] == "deal 1 dmg to all parts"
    assert shown["slots"]["modifier"] == {"used": 0, "max": 3}


def test_legal_actions_are_all_legal(cat):
    state = started(cat, row=["sum", "dbl", "eo", "pair", "gt", "all"], faces=[6, 6, 6, 3, 2])
    actions = legal_actions(state, cat)
    kinds = {a["type"] for a in actions}
    assert kinds == {"modify", "reroll", "shield", "attack", "end_turn"}
    for action in actions:
        if action["type"] == "reroll":
            action = {**action, "value": 1}
        apply(state, action, cat)
    assert {"type": "attack", "part": "all", "dice": [0, 1, 2]} in actions


def test_the_player_chooses_the_locked_die(cat):
    state = apply(started(cat, row=["all"]), {"type": "end_turn"}, cat)
    chosen = apply(state, {"type": "cycle", "locks": [3]}, cat)
    assert [d["id"] for d in chosen["dice"] if d["at"] == "locked"] == [3]
    assert "_locks" not in chosen
    default = apply(state, {"type": "cycle"}, cat)
    assert [d["id"] for d in default["dice"] if d["at"] == "locked"] == [0]
    refused(state, {"type": "cycle", "locks": [17]}, cat, "dice that can be locked")
    refused(state, {"type": "cycle", "locks": "3"}, cat, "dice that can be locked")


def test_the_player_may_lock_a_die_on_a_shield(cat):
    """Card Effect Icons: "Lock — Choose one of your dice and set it aside. It does not get
    rolled or placed on your next turn." A die on a shield is one of your dice: the die named
    is the one locked (the shield keeps the strength it gained this turn)."""
    state = apply(started(cat, row=["all"], faces=[6, 1, 1, 1, 1]), {"type": "shield", "die": 0},
                  cat)
    state = apply(state, {"type": "end_turn"}, cat)
    assert lockable(state) == [0, 1, 2, 3, 4]
    assert lock_choices(state, {"type": "cycle", "locks": [0]}, cat) == [[0, 1, 2, 3, 4]]
    chosen = apply(state, {"type": "cycle", "locks": [0]}, cat)
    assert [d["id"] for d in chosen["dice"] if d["at"] == "locked"] == [0]
    assert "ALL locks die 1: it sits out the next turn" in chosen["log"]
    assert chosen["shield"] == 6
    # without a choice the lock takes the lowest die not on a shield
    default = apply(state, {"type": "cycle"}, cat)
    assert [d["id"] for d in default["dice"] if d["at"] == "locked"] == [1]


def test_a_lock_refuses_a_die_it_cannot_take(cat):
    """"Lock — Choose one of your dice and set it aside": a die already set aside (locked or
    removed from play) cannot be chosen, nor one die for two locks; the event is refused with
    the reason and nothing changes."""
    state = apply(started(cat, row=["all"]), {"type": "end_turn"}, cat)
    state["dice"][2]["at"] = "removed"
    refused(state, {"type": "cycle", "locks": [2]}, cat, "die 3 was removed from play")
    state["dice"][2]["at"] = "locked"
    refused(state, {"type": "cycle", "locks": [2]}, cat, "die 3 is locked already")
    refused(state, {"type": "cycle", "locks": [1, 1]}, cat, "die 2 twice")
    assert 2 not in lockable(state)


def test_a_lock_choice_without_a_lock_is_refused(cat):
    """"Lock — Choose one of your dice and set it aside": a die is chosen for a lock icon the
    cycle fires, and only then. A cycle naming more dice in 'locks' than it fires locks is
    refused with the reason (it used to be stored, the extra dice silently not locked), and
    nothing changes."""
    state = apply(started(cat, row=["sum", "all"]), {"type": "end_turn"}, cat)
    refused(state, {"type": "cycle", "part": "sum", "locks": [1]}, cat,
            "field 'locks' names die 2 but no lock fires on this cycle")
    state = apply(state, {"type": "cycle", "part": "sum", "locks": []}, cat)
    refused(state, {"type": "cycle", "part": "all", "locks": [1, 2]}, cat,
            "field 'locks' names dice 2, 3 but only 1 lock fires on this cycle")
    after = apply(state, {"type": "cycle", "part": "all", "locks": [2]}, cat)
    assert [d["id"] for d in after["dice"] if d["at"] == "locked"] == [2]
    assert "ALL locks die 3: it sits out the next turn" in after["log"]


def test_lock_choices_see_a_lock_fired_through_a_gear(cat):
    # gt's gear cycles "all" onto its lock icon: the player chooses that die too
    state = apply(started(cat, row=["gt", "all"]), {"type": "end_turn"}, cat)
    step = {"type": "cycle", "part": "gt"}
    assert lock_choices(state, step, cat) == [[0, 1, 2, 3, 4]]
    after = apply(state, {**step, "locks": [3]}, cat)
    assert [d["id"] for d in after["dice"] if d["at"] == "locked"] == [3]
    assert "_lock_probe" not in after
    # "all" then cycles onto a dead space: no lock; other events and refused ones: none
    assert lock_choices(after, {"type": "cycle", "part": "all"}, cat) == []
    assert lock_choices(state, {"type": "cycle", "part": "all"}, cat) == []   # refused
    assert lock_choices(state, {"type": "end_turn"}, cat) == []


def test_dice_are_named_from_one_for_players():
    assert die_name(0) == "die 1"
    assert dice_names([4]) == "die 5"
    assert dice_names([0, 2]) == "dice 1, 3"
