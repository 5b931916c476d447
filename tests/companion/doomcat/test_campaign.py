from __future__ import annotations

import pytest

from companion.doomcat.campaign import (
    LINES,
    campaign_apply,
    campaign_replay,
    campaign_result,
    line_goals,
)
from companion.doomcat.game import IllegalMove

GRID = [1, 2, 3, 10, 11, 12, 19, 20, 21]


def start(players=("ann",), familiars=None):
    return campaign_replay([{"type": "campaign_start", "players": list(players), "grid": GRID,
                             "familiars": familiars}])


def game(line, **sigils):
    return {"type": "game", "line": line, "sigils": {p: list(v) for p, v in sigils.items()}}


@pytest.mark.parametrize(("line", "goals"), [
    ("row 0", (1, 2, 3)), ("row 2", (19, 20, 21)), ("column 0", (1, 10, 19)),
    ("column 2", (3, 12, 21)),
])
def test_rows_and_columns_of_the_3x3_grid(line, goals):
    assert line_goals(GRID, line) == goals


@pytest.mark.parametrize(("grid", "match"), [
    ([1, 2, 3], "9 goal numbers"), ([1, 1, 2, 3, 4, 5, 6, 7, 8], "listed twice"),
    ([1, 2, 3, 4, 5, 6, 7, 8, 30], "does not exist"),
])
def test_the_grid_holds_nine_different_goals(grid, match):
    with pytest.raises(IllegalMove, match=match):
        campaign_apply(campaign_replay([]), {"type": "campaign_start", "players": ["a"],
                                             "grid": grid})


def test_six_games_each_a_different_row_or_column():
    s = start()
    s = campaign_apply(s, game("row 0", ann=(70, 71)))
    with pytest.raises(IllegalMove, match="already played"):
        campaign_apply(s, game("row 0", ann=(70, 71)))
    with pytest.raises(IllegalMove, match="expected one of"):
        campaign_apply(s, game("diagonal", ann=(70, 71)))
    for line in LINES[1:]:
        s = campaign_apply(s, game(line, ann=(70, 71)))
    assert s.phase == "over" and campaign_result(s)["games"] == 6
    with pytest.raises(IllegalMove, match="over after 6 games"):
        campaign_apply(s, game("row 0", ann=(70, 71)))


@pytest.mark.parametrize(("per_game", "won"), [((70, 71), True), ((70, 70), False)])
def test_solo_campaign_needs_more_than_840(per_game, won):
    s = start()
    for line in LINES:
        s = campaign_apply(s, game(line, ann=per_game))
    result = campaign_result(s)
    assert result["totals"]["ann"] == 6 * sum(per_game)
    assert result["solo_win"] is won


def test_multiplayer_highest_sum_after_six_games_wins():
    s = start(players=("ann", "bob"))
    for k, line in enumerate(LINES):
        s = campaign_apply(s, game(line, ann=(50, 50), bob=(40, 59 if k == 0 else 60)))
        if k < 5:
            assert campaign_result(s)["winners"] == []   # only after 6 games
    assert campaign_result(s)["winners"] == ["ann"]
    with pytest.raises(IllegalMove, match="two sigil scores for each player"):
        campaign_apply(start(players=("ann", "bob")), game("row 0", ann=(1, 2)))


def test_familiar_cost_is_subtracted_from_each_sigil_after_each_game():
    s = start(familiars={"ann": "F01"})  # Black Cat costs 5
    s = campaign_apply(s, game("row 0", ann=(70, 71)))
    assert s.total("ann") == 70 + 71 - 2 * 5


def test_familiar_swaps_lowest_to_highest_unused_or_from_a_higher_total():
    s = start(players=("ann", "bob", "cat"),
              familiars={"ann": "F01", "bob": "F02", "cat": "F03"})
    s = campaign_apply(s, game("row 0", ann=(80, 80), bob=(60, 60), cat=(70, 70)))
    assert s.choose_order == ("bob", "cat", "ann")
    with pytest.raises(IllegalMove, match="keep or change familiar"):
        campaign_apply(s, game("row 1", ann=(1, 1), bob=(1, 1), cat=(1, 1)))
    with pytest.raises(IllegalMove, match="bob's choice"):
        campaign_apply(s, {"type": "familiar_choice", "player": "ann", "familiar": "F01"})
    # bob (lowest) takes ann's Black Cat: ann has a higher total
    s = campaign_apply(s, {"type": "familiar_choice", "player": "bob", "familiar": "F01"})
    assert s.familiar("ann") is None
    # cat may not take bob's (lower total) F01, but may take an unused one
    with pytest.raises(IllegalMove, match="not higher than yours"):
        campaign_apply(s, {"type": "familiar_choice", "player": "cat", "familiar": "F01"})
    s = campaign_apply(s, {"type": "familiar_choice", "player": "cat", "familiar": "F04"})
    with pytest.raises(IllegalMove, match="not higher than yours"):
        campaign_apply(s, {"type": "familiar_choice", "player": "ann", "familiar": "F01"})
    s = campaign_apply(s, {"type": "familiar_choice", "player": "ann", "familiar": "F03"})
    assert dict(s.familiar_of) == {"ann": "F03", "bob": "F01", "cat": "F04"}
    assert s.phase == "playing"


def test_keeping_a_familiar_is_a_choice():
    s = start(players=("ann", "bob"), familiars={"ann": "F05", "bob": "F06"})
    s = campaign_apply(s, game("row 0", ann=(70, 71), bob=(80, 80)))
    s = campaign_apply(s, {"type": "familiar_choice", "player": "ann", "familiar": "F05"})
    s = campaign_apply(s, {"type": "familiar_choice", "player": "bob", "familiar": "F06"})
    assert s.familiar("ann") == "F05" and s.phase == "playing"
    t = start(players=("ann", "bob"))
    t = campaign_apply(t, game("row 0", ann=(70, 71), bob=(80, 80)))
    with pytest.raises(IllegalMove, match="only between games of a campaign with familiars"):
        campaign_apply(t, {"type": "familiar_choice", "player": "ann", "familiar": "F05"})


# The rulebook gives the change of familiars between games to the campaign of several players
# ("Between games, in lowest to highest score order, players may choose to keep their Familiar
# or take a different Familiar"); its solo campaign keeps one: "Solo Campaign with Familiars:
# Subtract the Familiar's cost from each Sigil Card's score after each game. Try to win a
# campaign with each Familiar."

def test_a_solo_campaign_with_familiars_keeps_its_familiar_all_six_games():
    s = start(familiars={"ann": "F05"})                       # the Spider costs 4
    for k, line in enumerate(LINES):
        s = campaign_apply(s, game(line, ann=(80, 80)))
        assert s.familiar("ann") == "F05" and s.choose_order == ()
        assert s.phase == ("over" if k == 5 else "playing")  # no choosing between games
    assert s.total("ann") == 6 * (80 - 4 + 80 - 4)


@pytest.mark.parametrize("fam", ["F09", "F05"])   # changing, and keeping
def test_a_solo_campaign_refuses_a_familiar_choice_naming_its_rule(fam):
    s = campaign_apply(start(familiars={"ann": "F05"}), game("row 0", ann=(70, 71)))
    with pytest.raises(IllegalMove, match=r"familiar_choice: a solo campaign keeps its "
                       r"familiar .*Solo Campaign with Familiars: .*Try to win a campaign with "
                       r"each Familiar"):
        campaign_apply(s, {"type": "familiar_choice", "player": "ann", "familiar": fam})
    with pytest.raises(IllegalMove, match="a solo campaign keeps its familiar"):
        campaign_apply(start(), {"type": "familiar_choice", "player": "ann", "familiar": fam})
