"""Every rulebook sentence of a turn, each with an allowed and a refused case.

The games use ring layout B, where candle i shows number i % 6 + 1 (candles n-1 and n+5 show
n) and the candles sit on a convex ring in index order, so two lines cross exactly when their
ends interleave round the ring.
"""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from companion.doomcat.game import (
    Card,
    GameConfig,
    GameState,
    IllegalMove,
    apply,
    legal_options,
    new_game,
    replay,
    roll,
    scores,
    solo_win,
    tiebreak_options,
)
from companion.doomcat.geometry import board
from companion.doomcat.layouts import LAYOUTS_DIR, load_layout
from companion.errors import BadInput


def start(players=("ann",), cards=("B", "B"), goals=(1, 2, 3), mode="none", fam=None):
    return replay(new_game(GameConfig(tuple(players), tuple(cards), tuple(goals), mode, fam)))


def move(player="ann", card=0, die=0, write=None, line=None, cross=None, **extra):
    event = {"type": "move", "player": player, "card": card, "die": die, "write": write,
             "line": line, "cross": cross}
    event.update(extra)
    return event


def rolled(state, *dice):
    return apply(state, {"type": "roll", "dice": list(dice)})


def refused(state, event, match):
    with pytest.raises(IllegalMove, match=match):
        apply(state, event)


# -------------------------------------------------------------- write a die on top

def test_write_one_of_the_dice_numbers():
    s = rolled(start(), 1, 2, 3)
    after = apply(s, move(die=0, write=1, line=[1, 2], cross=0))   # 2-3 line, cross a 1
    assert after.player("ann").cards[0].top[0].value == 1
    refused(s, move(die=0, write=4, line=[1, 2], cross=3), "you wrote 4 but the roll is 1 2 3")
    refused(s, move(die=0, write=2, line=[1, 2], cross=3), "you wrote 2 but die 1 shows 1")


def test_the_number_goes_in_the_leftmost_empty_box_and_the_same_card_gets_the_line():
    s = rolled(start(), 1, 2, 3)
    s = apply(s, move(card=1, die=0, write=1, line=[1, 2], cross=0))
    card = s.player("ann").cards[1]
    assert card.top[0].value == 1 and card.lines == ((1, 2),) and card.crossed == (0,)
    assert s.player("ann").cards[0].lines == ()


def _two_writes_of(number, card=0):
    """A state after two turns writing ``number`` on ``card`` (circled the second time)."""
    s = start()
    first = number - 1
    other = [c for c in range(12) if c % 6 + 1 not in (number,)]
    for turn, cross in enumerate((first, first + 6)):
        s = rolled(s, number, other[0] % 6 + 1, other[2 * turn + 3] % 6 + 1)
        a, b = other[0], other[2 * turn + 3]
        s = apply(s, move(card=card, die=0, write=number, line=[a, b], cross=cross))
    return s


def test_second_write_is_circled_and_wild_on_that_card_only():
    s = _two_writes_of(2)
    top = s.player("ann").cards[0].top
    assert top[0].circled is False and top[1].circled is True
    assert 2 in s.player("ann").cards[0].wild
    s = rolled(s, 2, 4, 5)
    # the 2 is wild on card 0: it may be written as any number
    after = apply(s, move(card=0, die=0, write=6, line=[3, 4], cross=5))
    assert after.player("ann").cards[0].top[2].value == 6
    # ... and only there: on card 1 the 2 is just a 2
    refused(s, move(card=1, die=0, write=6, line=[3, 4], cross=5), "the roll is 2 4 5")


def test_wild_from_the_turn_it_is_circled():
    s = start()
    s = rolled(s, 3, 5, 6)
    s = apply(s, move(die=0, write=3, line=[4, 5], cross=2))   # first 3
    s = rolled(s, 3, 3, 5)
    # second 3 circled now: the other 3 die is wild for this very line (5 with anything)
    after = apply(s, move(die=0, write=3, line=[0, 10], cross=8))
    assert (0, 10) in after.player("ann").cards[0].lines
    # a first write does not make the other die wild: 3 and 5 must show on the line
    t = rolled(start(), 3, 3, 5)
    refused(t, move(die=0, write=3, line=[0, 10], cross=2), "other two dice show 3 and 5")


def test_two_of_each_no_number_three_times():
    s = _two_writes_of(2)
    s = rolled(s, 2, 4, 5)
    refused(s, move(card=0, die=0, write=2, line=[3, 4], cross=1),
            "Two of each|already written 2 times")


def test_rat_may_write_a_third_time():
    s = start(fam="F09", mode="solo")
    for turn in range(3):
        s = rolled(s, 2, 4, 5)
        line = [[3, 4], [9, 10], [3, 10]][turn]
        s = apply(s, move(die=0, write=2, line=line, cross=[1, 7, None][turn]))
    top = s.player("ann").cards[0].top
    assert [b.value for b in top[:3]] == [2, 2, 2] and top[2].circled


def test_triples_are_wild_for_everyone():
    s = rolled(start(players=("ann", "bob")), 4, 4, 4)
    s = apply(s, move("ann", die=0, write=1, line=[1, 2], cross=0))
    s = apply(s, move("bob", die=0, write=6, line=[0, 6], cross=5))
    assert s.dice is None  # both played
    t = rolled(start(), 4, 4, 5)
    refused(t, move(die=0, write=1, line=[3, 4], cross=0), "the roll is 4 4 5")


# Rolling Triples: "If three matching numbers are rolled, they are considered wild for all
# players." Triples are decided by the numbers rolled: the shared roll, or the Bat's re-roll
# ("re-roll all three dice for yourself only"), never by the Black Cat's turned die ("turn one
# die to any number": turned, not rolled).

def test_black_cat_turning_a_pair_into_three_of_a_kind_rolls_no_triples():
    s = rolled(start(mode="solo", fam="F01"), 4, 4, 5)
    cat = {"familiar": "F01", "die": 2, "to": 4}          # your dice: 4 4 4, not rolled so
    refused(s, move(die=0, write=1, line=[1, 2], cross=0, power=cat),
            r"you wrote 1 but your dice are 4 4 4 .*only three matching numbers rolled")
    refused(s, move(die=0, write=4, line=[0, 1], cross=3, power=cat),
            "the other two dice show 4 and 4")
    after = apply(s, move(die=0, write=4, line=[3, 9], cross=3, power=cat))   # 4-4 line
    assert after.player("ann").cards[0].lines == ((3, 9),)


def test_rolled_triples_stay_wild_when_the_black_cat_turns_one_of_them():
    s = rolled(start(mode="solo", fam="F01"), 4, 4, 4)
    cat = {"familiar": "F01", "die": 0, "to": 6}          # your dice: 6 4 4, rolled 4 4 4
    after = apply(s, move(die=1, write=1, line=[1, 2], cross=0, power=cat))
    assert after.player("ann").cards[0].top[0].value == 1


def test_the_bats_reroll_is_a_roll_its_triples_are_wild_for_its_player():
    s = rolled(start(players=("ann", "bob"), mode="one-for-all", fam="F06"), 1, 2, 3)
    bat = {"familiar": "F06", "dice": [5, 5, 5]}
    s = apply(s, move("ann", die=0, write=1, line=[1, 2], cross=0, power=bat))
    assert s.player("ann").cards[0].top[0].value == 1
    refused(s, move("bob", die=0, write=6, line=[0, 1], cross=5), "the roll is 1 2 3")


def test_rerolling_rolled_triples_away_with_the_bat_leaves_no_wild_dice():
    s = rolled(start(players=("ann", "bob"), mode="one-for-all", fam="F06"), 4, 4, 4)
    bat = {"familiar": "F06", "dice": [1, 2, 3]}
    refused(s, move("ann", die=0, write=5, line=[1, 2], cross=4, power=bat),
            "you wrote 5 but your dice are 1 2 3")
    s = apply(s, move("bob", die=0, write=5, line=[0, 1], cross=4))     # bob's 4 4 4: wild
    assert s.player("bob").cards[0].lines == ((0, 1),)


def test_legal_options_with_a_black_cat_turn_offer_no_triples_wilds():
    s = rolled(start(mode="solo", fam="F01"), 4, 4, 5)
    cat = {"familiar": "F01", "die": 2, "to": 4}
    options = legal_options(s, "ann", cat)
    assert options and {m["write"] for m in options} == {4}
    assert all(s.player("ann").cards[m["card"]].layout.candles[c].number == 4
               for m in options for c in m["line"])
    for m in options[:5]:
        apply(s, m | {"power": cat})
    assert {m["write"] for m in legal_options(rolled(start(), 4, 4, 4), "ann")} == set(
        range(1, 7))                                       # rolled triples: any number


def _stuck_state():
    """Every candle showing 1 or 2 is crossed out on both cards; other dice are fine."""
    s = rolled(start(), 1, 2, 1)
    layout = load_layout("B")
    cards = tuple(Card(layout, crossed=(0, 1, 6, 7)) for _ in range(2))
    player = dataclasses.replace(s.players[0], cards=cards)
    return dataclasses.replace(s, players=(player,))


def test_unstuck_makes_all_dice_wild_when_no_line_can_be_drawn():
    s = _stuck_state()
    after = apply(s, move(die=0, write=5, line=[2, 3], cross=4))
    assert (2, 3) in after.player("ann").cards[0].lines
    not_stuck = rolled(start(), 1, 2, 1)
    refused(not_stuck, move(die=0, write=5, line=[2, 3], cross=4), "the roll is 1 2 1")


def test_line_joins_candles_matching_the_two_other_dice():
    s = rolled(start(), 1, 2, 3)
    apply(s, move(die=0, write=1, line=[7, 8], cross=0))  # 2 and 3 on the other ring side
    refused(s, move(die=0, write=1, line=[1, 3], cross=0),
            "line upper 2 – upper 4 does not match the dice")


def test_a_refusal_names_candles_as_players_do_not_by_index():
    s = rolled(start(cards=("C", "D")), 1, 2, 5)
    with pytest.raises(IllegalMove) as refusal:
        apply(s, move(die=0, write=1, line=[1, 11], cross=0))
    assert str(refusal.value) == (
        "move: line left 4 – right 4 does not match the dice: the other two dice show 2 and 5 "
        "(draw a line between two candles matching the two remaining dice)")


def test_one_line_per_candle_pair():
    s = rolled(start(), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))
    s = rolled(s, 1, 2, 3)
    refused(s, move(die=0, write=1, line=[1, 2], cross=6), "One per candle pair")
    apply(s, move(die=0, write=1, line=[1, 8], cross=6))


def test_crossed_candles_cannot_be_used():
    s = rolled(start(), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))
    s = rolled(s, 4, 1, 3)
    refused(s, move(die=0, write=4, line=[0, 2], cross=3), "Usable")
    apply(s, move(die=0, write=4, line=[6, 2], cross=3))


def test_crossed_candle_matches_the_written_number_and_is_crossed_once():
    s = rolled(start(), 1, 2, 3)
    refused(s, move(die=0, write=1, line=[1, 2], cross=3), "shows 4, not 1")
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))
    s = rolled(s, 1, 5, 6)
    refused(s, move(die=0, write=1, line=[4, 5], cross=0), "Once")
    refused(s, move(die=0, write=1, line=[4, 5], cross=None), "cross out a candle numbered 1")
    apply(s, move(die=0, write=1, line=[4, 5], cross=6))


def test_crossing_out_a_candle_used_this_turn_is_allowed():
    s = rolled(start(), 1, 1, 2)
    after = apply(s, move(die=0, write=1, line=[0, 1], cross=0))
    assert after.player("ann").cards[0].crossed == (0,)


def _file_layout(tmp_path, centers=None, must_curve=None, name="custom"):
    doc = json.loads((LAYOUTS_DIR / "B.json").read_text())
    if centers:
        for candle, c in zip(doc["candles"], centers, strict=True):
            candle["center"] = list(c)
    if must_curve is not None:
        doc["must_curve"] = must_curve
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_lines_never_pass_through_candles_unless_must_curve(tmp_path):
    s = rolled(start(), 4, 1, 5)   # candle 0 shows 1, candle 10 shows 5; 11 is in the way
    apply(s, move(die=0, write=4, line=[0, 10], cross=3))   # B marks 0-10 must-curve
    straight = _file_layout(tmp_path, must_curve=[])
    t = rolled(start(cards=(straight, straight)), 4, 1, 5)
    refused(t, move(die=0, write=4, line=[0, 10], cross=3), "lower 5 passes through candle right 6")


def test_lines_never_pass_through_an_intersection(tmp_path):
    # candles 0-6, 1-7 and 2-8 meet at one point (44.5, 62.5) on this layout
    centers = [(20, 30), (69, 30), (44.5, 20), (10, 50), (12, 80), (30, 108),
               (69, 95), (20, 95), (44.5, 105), (79, 52), (77, 78), (60, 108)]
    path = _file_layout(tmp_path, centers=centers, must_curve=[])
    steps = (((4, 1, 1), move(die=0, write=4, line=[0, 6], cross=3)),
             ((5, 2, 2), move(die=0, write=5, line=[1, 7], cross=4)))
    last = ((6, 3, 3), move(die=0, write=6, line=[2, 8], cross=5))
    s = start(cards=(path, path))
    for dice, mv in steps:
        s = apply(rolled(s, *dice), mv)
    refused(rolled(s, *last[0]), last[1], "intersection")
    assert [2, 8] not in [m["line"] for m in legal_options(rolled(s, *last[0]), "ann")
                          if m["card"] == 0]


def test_spider_ones_are_wild_on_both_cards():
    s = rolled(start(mode="solo", fam="F05"), 1, 4, 6)
    for card in (0, 1):
        after = apply(s, move(card=card, die=1, write=4, line=[1, 5], cross=3))  # 1 acts as 2
        assert (1, 5) in after.player("ann").cards[card].lines
    plain = rolled(start(), 1, 4, 6)
    refused(plain, move(card=0, die=1, write=4, line=[1, 5], cross=3),
            "line upper 2 – left 6 does not match the dice")


def test_direct_lines_sharing_a_candle_cannot_overlap():
    base = load_layout("B")
    from companion.doomcat.layouts import Candle
    candles = list(base.candles)
    for i, x in ((0, 20.0), (1, 40.0), (2, 60.0)):
        candles[i] = Candle(candles[i].number, (x, 21.0), 4.0)
    collinear = dataclasses.replace(base, candles=tuple(candles), must_curve=())
    card = Card(collinear, lines=((0, 1),))
    assert "Direct" in card.chord_problem((0, 2)) or "through candle" in card.chord_problem((0, 2))
    assert Card(base, lines=((0, 1),)).chord_problem((0, 2)) is None


@pytest.mark.parametrize("line", [(3, 3), (5, 2), (0, 12)])
def test_a_line_that_is_no_chord_of_the_card_is_a_problem_not_a_crash(line):
    problem = Card(load_layout("A")).chord_problem(line)
    assert problem is not None and "does not join two different candles" in problem


# -------------------------------------------------------------- turns and players

def test_every_player_uses_the_same_roll_and_plays_once_per_turn():
    s = rolled(start(players=("ann", "bob")), 1, 2, 3)
    s = apply(s, move("ann", die=0, write=1, line=[1, 2], cross=0))
    refused(s, move("ann", die=1, write=2, line=[0, 2], cross=1), "already played")
    refused(s, {"type": "roll", "dice": [4, 5, 6]}, "bob must still use this roll")
    s = apply(s, move("bob", die=1, write=2, line=[0, 2], cross=1))
    assert s.dice is None and s.waiting_for == ()
    refused(s, move("ann", die=0, write=1, line=[7, 8], cross=6), "roll the dice first")


def test_fourteen_turns_seven_per_card():
    s = start()
    rng = random.Random(3)
    for _turn in range(7):
        s = rolled(s, *roll(rng))
        options = [m for m in legal_options(s, "ann") if m["card"] == 0]
        s = apply(s, options[0])
    s = rolled(s, *roll(rng))
    card0 = [m for m in legal_options(s, "ann") if m["card"] == 0]
    assert card0 == []
    any_move = legal_options(s, "ann")[0]
    refused(s, any_move | {"card": 0}, "card 1 is full")  # card id 0, counted from one
    s = apply(s, any_move)
    for _turn in range(6):
        s = rolled(s, *roll(rng))
        s = apply(s, legal_options(s, "ann")[0])
    assert s.phase == "over" and s.turn == 14
    refused(s, {"type": "roll", "dice": [1, 2, 3]}, "over after 14 turns")


@pytest.mark.parametrize(("event", "match"), [
    ({"type": "start", "players": ["a"], "cards": ["A"], "goals": [1, 2]}, "exactly two"),
    ({"type": "start", "players": ["a"], "cards": ["A", "B", "C"], "goals": [1, 2]},
     "exactly two"),
    ({"type": "start", "players": [], "cards": ["A", "B"], "goals": [1, 2]}, "one or more"),
    ({"type": "start", "players": ["a", "a"], "cards": ["A", "B"], "goals": [1, 2]}, "twice"),
    ({"type": "start", "players": ["a"], "cards": ["A", "Q"], "goals": [1, 2]},
     "unknown layout"),
    ({"type": "start", "players": ["a"], "cards": ["A", "B"], "goals": [1, 28]},
     "does not exist"),
    ({"type": "start", "players": ["a"], "cards": ["A", "B"], "goals": [1, 2],
      "familiar_mode": "solo", "familiar": "F10"}, "F01-F09"),
    ({"type": "dance"}, "unknown event type"),
    ("roll", "JSON object"),
])
def test_bad_setup_events(event, match):
    with pytest.raises(IllegalMove, match=match):
        apply(GameState(), event)


def test_two_cards_per_player_matching_pairs():
    s = start(players=("ann", "bob"), cards=("A", "C"))
    for p in s.players:
        assert [c.layout.name for c in p.cards] == ["A", "C"]


@pytest.mark.parametrize(("dice", "match"), [([1, 2], "3 whole numbers"), ([0, 2, 3], "1-6"),
                                              ([1, 2, True], "whole numbers")])
def test_bad_rolls(dice, match):
    refused(start(), {"type": "roll", "dice": dice}, match)


def test_a_refused_event_leaves_the_state_unchanged():
    s = rolled(start(), 1, 2, 3)
    before = s.to_json()
    with pytest.raises(IllegalMove):
        apply(s, move(die=0, write=4, line=[1, 2], cross=3))
    assert s.to_json() == before
    assert isinstance(IllegalMove("x"), BadInput)


# -------------------------------------------------------------- scores, solo, ties

@pytest.mark.parametrize(("totals", "won"), [
    ([70, 70], True), ([70, 69], False), ([69, 120], False), ([140, 71], True), ([], False),
])
def test_solo_needs_70_on_each_sigil(totals, won):
    assert solo_win(totals) is won


def test_solo_win_in_the_scores():
    s = start(goals=(1, 2, 3))
    layout = load_layout("B")
    full = Card(layout, lines=tuple(board(layout).chords))   # every chord: far above 70
    short = Card(layout, lines=((0, 1), (2, 3)))
    player = dataclasses.replace(s.players[0], cards=(full, full))
    won = dataclasses.replace(s, players=(player,), phase="over")
    result = scores(won)
    assert all(x["total"] >= 70 for x in result["players"]["ann"]["sigils"])
    assert result["solo_win"] is True and result["winners"] == ["ann"]
    lost = dataclasses.replace(won, players=(dataclasses.replace(player, cards=(full, short)),))
    assert scores(lost)["solo_win"] is False and scores(lost)["winners"] == []
    assert scores(dataclasses.replace(won, phase="playing"))["solo_win"] is None


def _tied_game():
    s = start(players=("ann", "bob"), goals=(2, 3))
    rng = random.Random(5)
    while s.phase == "playing":
        s = rolled(s, *roll(rng))
        m = legal_options(s, "ann")[0]
        s = apply(s, m)
        s = apply(s, m | {"player": "bob"})   # bob copies ann: same score
    return s


def test_ties_roll_two_dice_and_tied_players_draw_one_more_line():
    s = _tied_game()
    assert s.phase == "tiebreak" and s.tied == ("ann", "bob")
    refused(s, {"type": "tiebreak_line", "player": "ann", "card": 0, "line": [0, 1]},
            "roll 2 dice first")
    refused(s, {"type": "tiebreak_roll", "dice": [1, 2, 3]}, "2 whole numbers")
    s = apply(s, {"type": "tiebreak_roll", "dice": [5, 6]})
    card = s.player("ann").cards[0]
    ann_line = next(list(c) for c in sorted(card.open_chords)
                    if {card.layout.candles[i].number for i in c} == {5, 6})
    refused(s, {"type": "tiebreak_line", "player": "ann", "card": 0, "line": [0, 1]},
            "does not match")
    s = apply(s, {"type": "tiebreak_line", "player": "ann", "card": 0, "line": ann_line})
    refused(s, {"type": "tiebreak_line", "player": "ann", "card": 0, "line": ann_line},
            "has drawn")
    if s.phase == "tiebreak":
        s = apply(s, {"type": "tiebreak_line", "player": "bob", "card": 0, "line": None}) \
            if not any(s.player("bob").cards[k].open_chords for k in (0, 1)) else s
    result = scores(s)
    assert result["players"]["ann"]["total"] >= result["players"]["bob"]["total"]


def test_no_tiebreak_in_a_solo_game():
    s = start()
    rng = random.Random(2)
    while s.phase == "playing":
        s = rolled(s, *roll(rng))
        s = apply(s, legal_options(s, "ann")[0])
    assert s.phase == "over"
    refused(s, {"type": "tiebreak_roll", "dice": [1, 2]}, "only tied players")


# -------------------------------------------------------------- familiars

def test_one_for_all_every_player_has_the_power_and_no_cost():
    s = start(players=("ann", "bob"), mode="one-for-all", fam="F04")
    assert {p.familiar for p in s.players} == {"F04"}
    result = scores(s)
    assert all(x["familiar_cost"] == 0 for p in result["players"].values()
               for x in p["sigils"])


def test_solo_familiar_cost_is_subtracted_from_each_sigil():
    s = start(mode="solo", fam="F01")
    sigils = scores(s)["players"]["ann"]["sigils"]
    assert [x["familiar_cost"] for x in sigils] == [5, 5]
    assert [x["total"] for x in sigils] == [-5, -5]


def test_asymmetric_highest_sum_picks_first_then_clockwise():
    s = start(players=("ann", "bob", "cat"), mode="asymmetric")
    assert s.phase == "picking"
    refused(s, {"type": "roll", "dice": [1, 2, 3]}, "pick familiars first")
    refused(s, {"type": "pick_roll", "rolls": {"ann": [6, 6, 6], "bob": [6, 6, 6],
                                               "cat": [1, 1, 1]}}, "tie for the highest")
    s = apply(s, {"type": "pick_roll", "rolls": {"ann": [1, 1, 1], "bob": [6, 6, 5],
                                                 "cat": [2, 2, 2]}})
    assert s.pick_order == ("bob", "cat", "ann")
    refused(s, {"type": "pick", "player": "ann", "familiar": "F01"}, "bob's pick")
    s = apply(s, {"type": "pick", "player": "bob", "familiar": "F01"})
    refused(s, {"type": "pick", "player": "cat", "familiar": "F01"}, "already taken")
    s = apply(s, {"type": "pick", "player": "cat", "familiar": "F02"})
    s = apply(s, {"type": "pick", "player": "ann", "familiar": "F09"})
    assert s.phase == "playing"
    costs = {n: p["sigils"][0]["familiar_cost"] for n, p in scores(s)["players"].items()}
    assert costs == {"ann": 2, "bob": 5, "cat": 6}


def test_black_cat_turns_a_die_once_per_game():
    s = rolled(start(mode="solo", fam="F01"), 1, 2, 3)
    cat = {"familiar": "F01", "die": 0, "to": 4}
    s = apply(s, move(die=0, write=4, line=[1, 2], cross=3, power=cat))
    s = rolled(s, 1, 2, 3)
    refused(s, move(die=0, write=4, line=[7, 8], cross=9, power=cat), "once per game")
    refused(start(), move(power=cat), "roll the dice first")


def test_power_of_a_familiar_you_do_not_have_is_refused():
    s = rolled(start(mode="solo", fam="F02"), 1, 2, 3)
    refused(s, move(die=0, write=4, line=[1, 2], cross=3,
                    power={"familiar": "F01", "die": 0, "to": 4}), "does not have F01")


def test_raven_draws_an_extra_line():
    s = rolled(start(mode="solo", fam="F02"), 1, 2, 3)
    raven = {"familiar": "F02", "extra_line": [4, 5]}
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0, power=raven))
    assert s.player("ann").cards[0].lines == ((1, 2), (4, 5))
    t = rolled(start(mode="solo", fam="F02"), 1, 2, 3)
    refused(t, move(die=0, write=1, line=[1, 2], cross=0,
                    power={"familiar": "F02", "extra_line": [1, 2]}), "already drawn")


def test_owl_knocks_over_no_candle():
    s = rolled(start(mode="solo", fam="F04"), 1, 2, 3)
    after = apply(s, move(die=0, write=1, line=[1, 2], cross=None, power={"familiar": "F04"}))
    assert after.player("ann").cards[0].crossed == ()
    refused(s, move(die=0, write=1, line=[1, 2], cross=0, power={"familiar": "F04"}),
            "crossing out no candle")


def test_bat_rerolls_for_you_only():
    s = rolled(start(players=("ann", "bob"), mode="one-for-all", fam="F06"), 1, 2, 3)
    bat = {"familiar": "F06", "dice": [6, 6, 5]}
    s = apply(s, move("ann", die=2, write=5, line=[5, 11], cross=4, power=bat))
    refused(s, move("bob", die=2, write=5, line=[5, 11], cross=4), "the roll is 1 2 3")


def test_snake_erases_a_line_first():
    s = rolled(start(mode="solo", fam="F07"), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))
    s = rolled(s, 4, 2, 3)
    s = apply(s, move(die=0, write=4, line=[7, 8], cross=3,
                      power={"familiar": "F07", "erase": [1, 2]}))
    assert s.player("ann").cards[0].lines == ((7, 8),)
    t = rolled(start(mode="solo", fam="F07"), 1, 2, 3)
    refused(t, move(die=0, write=1, line=[1, 2], cross=0,
                    power={"familiar": "F07", "erase": [4, 5]}), "not drawn")


def test_moth_may_end_a_line_at_a_crossed_candle():
    s = rolled(start(mode="solo", fam="F08"), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))
    s = rolled(s, 4, 1, 3)
    refused(s, move(die=0, write=4, line=[0, 2], cross=3), "Usable")
    after = apply(s, move(die=0, write=4, line=[0, 2], cross=3, power={"familiar": "F08"}))
    assert (0, 2) in after.player("ann").cards[0].lines


def test_toad_chooses_a_wild_number_for_each_card_before_the_first_roll():
    s = start(mode="solo", fam="F03")
    assert s.phase == "setup"
    refused(s, {"type": "roll", "dice": [1, 2, 3]}, "Toad players choose")
    refused(s, {"type": "setup", "player": "ann", "wild": [7, 1]}, "1-6")
    s = apply(s, {"type": "setup", "player": "ann", "wild": [5, 6]})
    s = rolled(s, 5, 1, 2)
    after = apply(s, move(card=0, die=0, write=3, line=[0, 1], cross=2))
    assert after.player("ann").cards[0].top[0].value == 3
    refused(s, move(card=1, die=0, write=3, line=[0, 1], cross=2), "the roll is 5 1 2")


@pytest.mark.parametrize("fam", ["F03", "F05", "F09"])
def test_standing_and_setup_familiars_are_not_move_powers(fam):
    s = start(mode="solo", fam=fam)
    if s.phase == "setup":
        s = apply(s, {"type": "setup", "player": "ann", "wild": [1, 1]})
    s = rolled(s, 1, 2, 3)
    refused(s, move(die=0, write=1, line=[1, 2], cross=0, power={"familiar": fam}),
            "not a one-off power")


# -------------------------------------------------------------- options and API

def test_legal_options_are_all_accepted_and_include_every_card():
    rng = random.Random(11)
    s = start()
    for _ in range(14):
        s = rolled(s, *roll(rng))
        options = legal_options(s, "ann")
        assert options
        for option in options[:: max(1, len(options) // 15)]:
            apply(s, option)
        s = apply(s, rng.choice(options))
    assert s.phase == "over"


def test_replay_is_a_fold_and_events_are_json():
    rng = random.Random(4)
    events = new_game(GameConfig(("ann",), ("C", "D"), (10, 11, 12)))
    s = replay(events)
    while s.phase == "playing":
        events.append({"type": "roll", "dice": roll(rng)})
        s = apply(s, events[-1])
        events.append(rng.choice(legal_options(s, "ann")))
        s = apply(s, events[-1])
    again = replay(json.loads(json.dumps(events)))
    assert again.to_json() == s.to_json()
    assert scores(again) == scores(s)


def test_shareable_a_candle_may_be_used_by_many_lines():
    s = rolled(start(), 1, 5, 1)
    s = apply(s, move(die=0, write=1, line=[4, 0], cross=6))     # 5-1 line from candle 4
    s = rolled(s, 2, 5, 3)
    s = apply(s, move(die=0, write=2, line=[4, 8], cross=1))     # candle 4 again
    assert s.player("ann").cards[0].drawing.degree(4) == 2


# Setup: "For an easy game, use 2 Goal Cards (such as #01 and #02)." / "Otherwise use 3 Goal
# Cards (suggested Goals sets on the back page)."
@pytest.mark.parametrize("goals", [[1, 2], [1, 2, 3], [19, 22, 25]])
def test_a_game_uses_2_goal_cards_easy_or_otherwise_3(goals):
    event = {"type": "start", "players": ["a"], "cards": ["A", "A"], "goals": goals}
    assert apply(GameState(), event).goals == tuple(goals)


@pytest.mark.parametrize(("goals", "match"), [
    ([], r"played with 2 goals \(an easy game\) or 3, got 0$"),
    ([1], r"played with 2 goals \(an easy game\) or 3, got 1: 1$"),
    ([1, 2, 3, 4], r"or 3, got 4: 1,2,3,4$"),
    (list(range(1, 10)), r"or 3, got 9: 1,2,3,4,5,6,7,8,9$"),   # a campaign's grid is no game
    ("1,2", r"'goals' is a list of goal numbers, got '1,2'"),
    (None, r"'goals' is a list of goal numbers, got None"),
    ([1, 1], "listed twice"),
    ([1, 28], "goal 28 does not exist"),
])
def test_a_game_with_another_number_of_goals_is_refused(goals, match):
    event = {"type": "start", "players": ["a"], "cards": ["A", "A"], "goals": goals}
    with pytest.raises(IllegalMove, match=match):
        apply(GameState(), event)


@pytest.mark.parametrize("goals", [(1,), (1, 2, 3, 4)])
def test_a_game_config_with_another_number_of_goals_is_refused(goals):
    with pytest.raises(IllegalMove, match="2 goals"):
        new_game(GameConfig(("a",), ("A", "A"), goals))


def test_tiebreak_options_are_legal_and_break_or_keep_the_tie():
    s = _tied_game()
    assert tiebreak_options(s, "ann") == []   # no tie-break roll yet
    s = apply(s, {"type": "tiebreak_roll", "dice": [1, 2]})
    for name in ("ann", "bob"):
        options = tiebreak_options(s, name)
        assert options and all(o["player"] == name for o in options)
        for option in options[:5]:
            apply(s, option)
        s = apply(s, options[0])
    assert s.phase in ("over", "tiebreak")


# A campaign's familiars, kept or changed between games, start the next asymmetric game: nobody
# picks.
def test_an_asymmetric_game_may_start_with_each_players_familiar_given():
    state = replay(new_game(GameConfig(("ann", "bo"), ("B", "B"), (1, 2, 3), "asymmetric",
                                       familiars=(("ann", "F05"), ("bo", "F02")))))
    assert state.phase == "playing"
    assert [p.familiar for p in state.players] == ["F05", "F02"]
    assert all(c.spider for c in state.players[0].cards)       # the Spider's cards
    assert not any(c.spider for c in state.players[1].cards)


@pytest.mark.parametrize("mode", ["one-for-all", "asymmetric"])
def test_one_player_with_a_familiar_plays_solo_and_pays_its_cost(mode):
    """The rulebook's Solo: "Randomly choose one Familiar card. Subtract the Familiar's cost
    from each Sigil Card's score." A one-player one-for-all game took no cost: refused, and
    solo mode (which takes it) named instead."""
    with pytest.raises(BadInput, match="one player plays a familiar in solo mode"):
        start(players=("ann",), mode=mode, fam="F05" if mode == "one-for-all" else None)
    assert start(players=("ann",), mode="solo", fam="F05").phase == "playing"


@pytest.mark.parametrize(("mode", "given", "reason"), [
    ("asymmetric", {"ann": "F05", "bo": "F05"}, "different familiar"),
    ("asymmetric", {"ann": "F05"}, "one familiar per player"),
    ("one-for-all", {"ann": "F05", "bo": "F02"}, "only for asymmetric"),
    ("asymmetric", {"ann": "F05", "bo": "F99"}, "does not exist"),
])
def test_given_familiars_are_checked(mode, given, reason):
    event = {"type": "start", "players": ["ann", "bo"], "cards": ["B", "B"],
             "goals": [1, 2, 3], "familiar_mode": mode,
             "familiar": "F01" if mode == "one-for-all" else None, "familiars": given}
    with pytest.raises(BadInput, match=reason):
        replay([event])


def test_the_moth_lets_one_end_of_the_line_be_crossed_out_not_both():
    """Moth (F08): "your line may end at a crossed-out candle": one end, not a line between
    two crossed-out candles ("You cannot use a candle after it is crossed out")."""
    s = rolled(start(mode="solo", fam="F08"), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))       # candle 0 (a 1) crossed
    s = rolled(s, 4, 2, 3)
    s = apply(s, move(die=0, write=4, line=[7, 8], cross=3))       # candle 3 (a 4) crossed
    s = rolled(s, 5, 1, 4)
    moth = {"familiar": "F08"}
    refused(s, move(die=0, write=5, line=[0, 3], cross=4, power=moth), "Usable")
    after = apply(s, move(die=0, write=5, line=[0, 9], cross=4, power=moth))
    assert (0, 9) in after.player("ann").cards[0].lines


def test_the_ravens_extra_line_joins_any_two_usable_candles():
    """Raven (F02): "draw one extra line ... between any two usable candles": any numbers
    (not the dice's), but no crossed-out candle."""
    s = rolled(start(mode="solo", fam="F02"), 1, 2, 3)
    s = apply(s, move(die=0, write=1, line=[1, 2], cross=0))       # candle 0 crossed
    s = rolled(s, 4, 2, 3)
    refused(s, move(die=0, write=4, line=[7, 8], cross=3,
                    power={"familiar": "F02", "extra_line": [0, 5]}), "Usable")
    after = apply(s, move(die=0, write=4, line=[7, 8], cross=3,
                          power={"familiar": "F02", "extra_line": [5, 10]}))   # a 6 and a 5
    assert after.player("ann").cards[0].lines == ((1, 2), (5, 10), (7, 8))
