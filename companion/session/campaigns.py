"""Doom Cat campaigns: a 3x3 grid of goals, 6 games over its rows and columns.

The store keeps a campaign's setup (title, grid, players); its games are Doom Cat games that
name the campaign and the row or column they play. The standings are the engine's fold
(``companion.doomcat.campaign``) over the finished games' sigil scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.errors import BadInput
from companion.store import Store

LINES = ("row 0", "row 1", "row 2", "column 0", "column 1", "column 2")


def line_goals(grid: list[int], line: str) -> list[int]:
    """The three goals of a row or column of the grid (row by row)."""
    kind, k = line.split()
    i = int(k)
    return grid[3 * i:3 * i + 3] if kind == "row" else [grid[i], grid[i + 3], grid[i + 6]]


def prepare_game(store: Store, campaign_id: int, setup: Mapping[str, Any]) -> dict[str, Any]:
    """A Doom Cat setup checked against its campaign: the line's goals, the campaign's players."""
    try:
        campaign = store.campaign(campaign_id)
    except KeyError:
        raise BadInput(f"no campaign {campaign_id}") from None
    line = setup.get("campaign_line")
    if line not in LINES:
        raise BadInput(f"a campaign game names its row or column ({', '.join(LINES)})")
    played = {g.setup.get("campaign_line") for g in store.games(campaign_id=campaign_id)}
    if line in played:
        raise BadInput(f"{line} of this campaign has been played already")
    out = dict(setup)
    out["goals"] = line_goals(list(campaign.setup["goals"]), line)
    players = campaign.setup.get("players") or []
    if players:
        names = [p["name"] for p in setup.get("players", [])]
        if sorted(names) != sorted(players):
            raise BadInput(f"this campaign's players are {', '.join(players)}")
    return out


def standings(store: Store, campaign_id: int) -> dict[str, Any]:
    """Totals after the finished games, lines played, winners and the solo verdict."""
    campaign = store.campaign(campaign_id)
    games = [g for g in reversed(store.games(campaign_id=campaign_id))
             if g.result and g.result.get("sigils")]
    players = list(campaign.setup.get("players") or [])
    if not players and games:
        players = list(games[0].result["sigils"])
    out: dict[str, Any] = {"players": players, "grid": campaign.setup["goals"],
                           "played": [], "totals": {p: 0 for p in players}, "winners": [],
                           "solo_win": None, "error": ""}
    if not players:
        return out
    try:
        from companion.doomcat import campaign as engine
    except ImportError:   # pragma: no cover - the engine ships with the program
        return out
    events: list[dict[str, Any]] = [{"type": "campaign_start", "players": players,
                                     "grid": list(campaign.setup["goals"]),
                                     "familiars": None}]
    events += [{"type": "game", "line": g.setup.get("campaign_line"),
                "sigils": {n: v for n, v in g.result["sigils"].items()}} for g in games]
    try:
        state = engine.campaign_replay(events)
    except BadInput as exc:
        out["error"] = str(exc)
        return out
    result = engine.campaign_result(state)
    out.update(played=result["played"], totals=result["totals"], winners=result["winners"],
               solo_win=result["solo_win"], games=result["games"],
               target=engine.SOLO_CAMPAIGN_TARGET if len(players) == 1 else None)
    return out
