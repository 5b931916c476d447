"""Doom Cat campaigns as an event log: a 3x3 grid of goals, 6 games over its rows and columns.

Rulebook: choose 9 Goal Cards (or 9 random ones) set in a 3x3 grid; play 6 games, each with a
different row or column of 3 goals; keep score after each game; the highest sum after 6 games
wins (solo: a total higher than 840). With familiars, each player's familiar cost is
subtracted from each of their sigils after each game, and between games of a campaign of two or
more players, in lowest to highest total order, each player keeps their familiar or takes a
different one that is unused or held by a player with a higher total (who then chooses again
when their turn comes). The solo campaign with familiars keeps its familiar for all 6 games:
its rule has no change ("Try to win a campaign with each Familiar").

Python API
----------
- :func:`campaign_apply` ``(state, event) -> CampaignState`` (raises
  :class:`~companion.doomcat.game.IllegalMove`), :func:`campaign_replay` ``(events)``.
- :func:`campaign_result` ``(state) -> dict``: totals, games played, winners, solo win.
- :func:`line_goals` ``(grid, "row 0" | "column 2") -> tuple of 3 goal numbers``.

Events
------
- ``{"type": "campaign_start", "players": ["ann"], "grid": [9 goal numbers, row by row],
  "familiars": {"ann": "F03"} | null}``
- ``{"type": "game", "line": "row 1", "sigils": {"ann": [71, 64]}}``: the goal points of
  each player's two sigils in that game (before familiar costs; the campaign subtracts them).
- ``{"type": "familiar_choice", "player": "ann", "familiar": "F05"}`` between games (two or
  more players; refused in a solo campaign).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from companion.doomcat.catalogue import familiar, parse_goals
from companion.doomcat.game import IllegalMove
from companion.errors import BadInput

GAMES = 6
SOLO_CAMPAIGN_TARGET = 840
LINES = ("row 0", "row 1", "row 2", "column 0", "column 1", "column 2")


def line_goals(grid: Sequence[int], line: str) -> tuple[int, int, int]:
    """The three goals of a row or column of the 3x3 grid (row by row)."""
    if line not in LINES:
        raise IllegalMove(f"line: expected one of {', '.join(LINES)}, got {line!r}")
    kind, index = line.split()
    k = int(index)
    if kind == "row":
        return (grid[3 * k], grid[3 * k + 1], grid[3 * k + 2])
    return (grid[k], grid[k + 3], grid[k + 6])


@dataclass(frozen=True)
class CampaignState:
    players: tuple[str, ...] = ()
    grid: tuple[int, ...] = ()
    with_familiars: bool = False
    familiar_of: tuple[tuple[str, str | None], ...] = ()
    totals: tuple[tuple[str, int], ...] = ()
    played: tuple[str, ...] = ()
    phase: str = "new"  # new, playing, choosing, over
    choose_order: tuple[str, ...] = ()

    def total(self, player: str) -> int:
        return dict(self.totals)[player]

    def familiar(self, player: str) -> str | None:
        return dict(self.familiar_of)[player]


def campaign_replay(events: Iterable[Mapping[str, Any]]) -> CampaignState:
    state = CampaignState()
    for event in events:
        state = campaign_apply(state, event)
    return state


def campaign_apply(state: CampaignState, event: Mapping[str, Any]) -> CampaignState:
    """The campaign after ``event``; :class:`IllegalMove` (state unchanged) when refused."""
    kind = event.get("type") if isinstance(event, Mapping) else None
    try:
        if kind == "campaign_start":
            return _start(state, event)
        if kind == "game":
            return _game(state, event)
        if kind == "familiar_choice":
            return _choice(state, event)
    except IllegalMove:
        raise
    except BadInput as exc:
        raise IllegalMove(str(exc)) from None
    raise IllegalMove(f"unknown campaign event {kind!r}: expected campaign_start, game or "
                      "familiar_choice")


def _start(state: CampaignState, event: Mapping[str, Any]) -> CampaignState:
    if state.phase != "new":
        raise IllegalMove("campaign_start: the campaign has already started")
    players = event.get("players")
    if (not isinstance(players, list) or not players or len(set(players)) != len(players)
            or not all(isinstance(p, str) and p for p in players)):
        raise IllegalMove("campaign_start: 'players' lists one or more distinct names")
    grid = event.get("grid")
    if not isinstance(grid, list) or len(grid) != 9:
        raise IllegalMove("campaign_start: 'grid' is 9 goal numbers (a 3x3 grid, row by row)")
    goals = parse_goals(grid)
    fams = event.get("familiars")
    familiar_of: dict[str, str | None] = dict.fromkeys(players)
    if fams is not None:
        if not isinstance(fams, Mapping) or sorted(fams) != sorted(players):
            raise IllegalMove("campaign_start: 'familiars' gives one familiar per player")
        familiar_of = {p: familiar(fams[p]).id for p in players}
        if len(players) > 1 and len(set(familiar_of.values())) != len(players):
            raise IllegalMove("campaign_start: each player has a different familiar")
    return CampaignState(players=tuple(players), grid=tuple(g.number for g in goals),
                         with_familiars=fams is not None,
                         familiar_of=tuple(familiar_of.items()),
                         totals=tuple((p, 0) for p in players), phase="playing")


def _game(state: CampaignState, event: Mapping[str, Any]) -> CampaignState:
    if state.phase == "choosing":
        raise IllegalMove(f"game: {state.choose_order[0]} must first keep or change familiar "
                          "(between games, lowest to highest score)")
    if state.phase != "playing":
        raise IllegalMove("game: the campaign is over after 6 games" if state.phase == "over"
                          else "game: start the campaign first")
    line = event.get("line")
    line_goals(state.grid, line)  # checks the name
    if line in state.played:
        raise IllegalMove(f"game: {line} was already played (a different row or column of 3 "
                          "cards each game)")
    sigils = event.get("sigils")
    if not isinstance(sigils, Mapping) or sorted(sigils) != sorted(state.players):
        raise IllegalMove(f"game: 'sigils' gives two sigil scores for each player: "
                          f"{list(state.players)}")
    totals = dict(state.totals)
    for player in state.players:
        pair = sigils[player]
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)):
            raise IllegalMove(f"game: {player}'s sigils are two whole numbers, got {pair!r}")
        cost = 0
        if state.with_familiars and state.familiar(player):
            cost = familiar(state.familiar(player)).cost
        totals[player] += sum(v - cost for v in pair)
    played = (*state.played, line)
    new = dataclasses.replace(state, totals=tuple(totals.items()), played=played)
    if len(played) == GAMES:
        return dataclasses.replace(new, phase="over")
    if state.with_familiars and len(state.players) > 1:   # solo: no change (see _choice)
        order = tuple(sorted(state.players,
                             key=lambda p: (totals[p], state.players.index(p))))
        return dataclasses.replace(new, phase="choosing", choose_order=order)
    return new


SOLO_FAMILIAR_RULE = ("Solo Campaign with Familiars: \"Subtract the Familiar's cost from each "
                      "Sigil Card's score after each game. Try to win a campaign with each "
                      "Familiar.\"")


def _choice(state: CampaignState, event: Mapping[str, Any]) -> CampaignState:
    if len(state.players) == 1:
        raise IllegalMove(f"familiar_choice: a solo campaign keeps its familiar for all "
                          f"{GAMES} games ({SOLO_FAMILIAR_RULE}); keeping or changing familiars "
                          "between games is the multiplayer campaign's rule")
    if state.phase != "choosing":
        raise IllegalMove("familiar_choice: familiars change only between games of a "
                          "campaign with familiars")
    player = event.get("player")
    if player != state.choose_order[0]:
        raise IllegalMove(f"familiar_choice: it is {state.choose_order[0]}'s choice (lowest to "
                          "highest score)")
    wanted = familiar(event.get("familiar", "")).id
    holders = {f: p for p, f in state.familiar_of if f is not None}
    mine = state.familiar(player)
    if wanted != mine and wanted in holders:
        holder = holders[wanted]
        if state.total(holder) <= state.total(player):
            raise IllegalMove(f"familiar_choice: {wanted} belongs to {holder}, whose total is "
                              "not higher than yours (take an unused familiar or one from a "
                              "player with a higher total)")
    if wanted == mine is None:
        raise IllegalMove("familiar_choice: you have no familiar to keep: choose one")
    familiar_of = dict(state.familiar_of)
    if wanted != mine and wanted in holders:
        familiar_of[holders[wanted]] = None
    familiar_of[player] = wanted
    order = state.choose_order[1:]
    return dataclasses.replace(state, familiar_of=tuple(familiar_of.items()),
                               choose_order=order, phase="choosing" if order else "playing")


def campaign_result(state: CampaignState) -> dict[str, Any]:
    """Totals, games played, winners (after 6 games) and the solo verdict (> 840)."""
    totals = dict(state.totals)
    out: dict[str, Any] = {"totals": totals, "games": len(state.played),
                           "played": list(state.played), "phase": state.phase,
                           "familiars": dict(state.familiar_of)}
    if state.phase != "over":
        out["winners"] = []
        out["solo_win"] = None
        return out
    if len(state.players) == 1:
        won = totals[state.players[0]] > SOLO_CAMPAIGN_TARGET
        out["solo_win"] = won
        out["winners"] = list(state.players) if won else []
    else:
        best = max(totals.values())
        out["winners"] = [p for p in state.players if totals[p] == best]
        out["solo_win"] = None
    return out
