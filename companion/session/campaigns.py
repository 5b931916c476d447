"""Doom Cat campaigns: a 3x3 grid of goals, 6 games over its rows and columns.

The store keeps a campaign's setup (title, grid, players, whether it is played with
familiars); its games are Doom Cat games that name the campaign and the row or column they
play. The standings are the engine's fold (``companion.doomcat.campaign``) over the finished
games' sigil scores.

With familiars (the rulebook's optional campaign rule): each game is played with familiars
(the first one asymmetric, each player picking, or solo), each familiar's cost comes off each
of its player's sigils, and between games of two or more players, lowest to highest total,
each player keeps their familiar or takes one unused or held by a player with a higher total
(:func:`choose_familiar`, refused with the rule's reason). The next game starts with the
familiars so chosen. A solo campaign keeps the familiar of its first game for all six (the
rulebook's "Solo Campaign with Familiars" has no change; a choice is refused).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from companion.errors import BadInput
from companion.session.core import schema_error
from companion.store import CampaignRecord, Damaged, Store

LINES = ("row 0", "row 1", "row 2", "column 0", "column 1", "column 2")
# a campaign's stored setup (the API's body schema takes its fields from here)
SETUP_SCHEMA: dict[str, Any] = {
    "type": "object", "required": ["goals"],
    "properties": {
        "goals": {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 27},
                  "minItems": 9, "maxItems": 9, "uniqueItems": True},
        # names as a game's setup keeps them (no blank name, none twice)
        "players": {"type": "array", "items": {"type": "string", "maxLength": 24,
                                                "pattern": r"^\S(.*\S)?$"},
                    "maxItems": 6, "uniqueItems": True},
        "familiars": {"type": "boolean"},
    },
}


def campaign_of(store: Store, campaign_id: int) -> CampaignRecord:
    """The stored campaign, its setup checked (:class:`Damaged` says what is wrong)."""
    record = store.campaign(campaign_id)
    problem = schema_error(record.setup, SETUP_SCHEMA, f"campaign {campaign_id}: its setup")
    if problem:
        raise Damaged(problem)
    return record


def line_name(line: str) -> str:
    """A row or column as players count them, from 1: ``"row 0"`` (as stored) is "row 1"."""
    kind, k = line.split()
    return f"{kind} {int(k) + 1}"


def line_goals(grid: list[int], line: str) -> list[int]:
    """The three goals of a row or column of the grid (row by row)."""
    kind, k = line.split()
    i = int(k)
    return grid[3 * i:3 * i + 3] if kind == "row" else [grid[i], grid[i + 3], grid[i + 6]]


def _choices_key(campaign_id: int) -> str:
    return f"campaign.{campaign_id}.familiar_choices"


def _choices(store: Store, campaign_id: int) -> list[dict[str, Any]]:
    """The familiar choices made between the campaign's games, in order; :class:`Damaged`
    naming the campaign when the stored row cannot be used (edited by hand, damaged)."""
    raw = store.get_meta(_choices_key(campaign_id))
    if not raw:
        return []
    what = f"campaign {campaign_id}: its familiar choices"
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise Damaged(f"{what}: not valid JSON ({exc})") from None
    if not isinstance(doc, list):
        raise Damaged(f"{what}: not a list")
    for i, c in enumerate(doc):
        if not (isinstance(c, dict) and isinstance(c.get("after"), int)
                and isinstance(c.get("player"), str) and isinstance(c.get("familiar"), str)):
            raise Damaged(f'{what}: choice {i + 1} is not {{"after": game, "player": name, '
                          '"familiar": id}')
    return doc


def _fold(store: Store, campaign_id: int) -> tuple[Any, list[str], str]:
    """(the campaign engine's state or None, its players, an error) from the store."""
    campaign = campaign_of(store, campaign_id)
    games = [g for g in reversed(store.games(campaign_id=campaign_id))
             if g.result and g.result.get("sigils")]
    players = list(campaign.setup.get("players") or [])
    if not players and games:
        players = list(games[0].result["sigils"])
    if not players:
        return None, players, ""
    try:
        from companion.doomcat import campaign as engine
    except ImportError:   # pragma: no cover - the engine ships with the program
        return None, players, ""
    with_familiars = bool(campaign.setup.get("familiars"))
    held = games[0].result.get("familiars") or {} if games else {}
    if with_familiars and games and not all(held.get(p) for p in players):
        return None, players, ("the first game of this campaign with familiars was played "
                               "without a familiar for every player")
    events: list[dict[str, Any]] = [{
        "type": "campaign_start", "players": players, "grid": list(campaign.setup["goals"]),
        "familiars": {p: held[p]["id"] for p in players} if with_familiars and games
        else None}]
    try:
        choices = _choices(store, campaign_id)
    except Damaged as exc:   # said in the standings; no choice is written over it
        return None, players, str(exc)
    for k, g in enumerate(games):
        fams = g.result.get("familiars") or {}
        # a game's sigil totals are net of its familiar's cost: the campaign takes it off
        events.append({"type": "game", "line": g.setup.get("campaign_line"), "sigils": {
            n: [v + ((fams.get(n) or {}).get("cost", 0) if with_familiars else 0)
                for v in pair] for n, pair in g.result["sigils"].items()}})
        events += [{"type": "familiar_choice", "player": c["player"],
                    "familiar": c["familiar"]} for c in choices if c["after"] == k + 1]
    try:
        return engine.campaign_replay(events), players, ""
    except BadInput as exc:
        return None, players, str(exc)


def choose_familiar(store: Store, campaign_id: int, player: str, familiar_id: str) -> None:
    """Between games: ``player`` keeps or changes familiar (the rules refuse with the reason:
    :class:`~companion.doomcat.game.IllegalMove`, a :class:`BadInput`)."""
    from companion.doomcat import campaign as engine
    state, _, error = _fold(store, campaign_id)
    if state is None:
        raise BadInput(error or "this campaign has no finished game yet")
    engine.campaign_apply(state, {"type": "familiar_choice", "player": player,
                                  "familiar": familiar_id})
    choices = [*_choices(store, campaign_id),
               {"after": len(state.played), "player": player, "familiar": familiar_id}]
    store.set_meta(_choices_key(campaign_id), json.dumps(choices))


def familiar_options(state: Any) -> list[dict[str, Any]]:
    """For the player choosing now: every familiar, allowed or the rule's reason why not."""
    from companion.doomcat import campaign as engine
    from companion.doomcat.catalogue import familiars
    if state is None or state.phase != "choosing":
        return []
    player = state.choose_order[0]
    out = []
    for fid, card in sorted(familiars().items()):
        try:
            engine.campaign_apply(state, {"type": "familiar_choice", "player": player,
                                          "familiar": fid})
            reason = ""
        except BadInput as exc:
            reason = str(exc).removeprefix("familiar_choice: ")
        out.append({"id": fid, "name": card.name, "cost": card.cost, "ok": not reason,
                    "keep": state.familiar(player) == fid, "reason": reason})
    return out


def prepare_game(store: Store, campaign_id: int, setup: Mapping[str, Any]) -> dict[str, Any]:
    """A Doom Cat setup checked against its campaign: the line's goals, the campaign's players
    and, with familiars, the familiars chosen between games."""
    try:
        campaign = campaign_of(store, campaign_id)
    except KeyError:
        raise BadInput(f"no campaign {campaign_id}") from None
    line = setup.get("campaign_line")
    if line not in LINES:
        raise BadInput(f"a campaign game names its row or column ({', '.join(LINES)})")
    played = {g.setup.get("campaign_line") for g in store.games(campaign_id=campaign_id)}
    if line in played:
        raise BadInput(f"{line_name(line)} of this campaign has been played already")
    out = dict(setup)
    out["goals"] = line_goals(list(campaign.setup["goals"]), line)
    players = campaign.setup.get("players") or []
    if players:
        names = [p["name"] for p in setup.get("players", [])]
        if sorted(names) != sorted(players):
            raise BadInput(f"this campaign's players are {', '.join(players)}")
    if campaign.setup.get("familiars"):
        out = _with_campaign_familiars(store, campaign_id, out)
    return out


def _with_campaign_familiars(store: Store, campaign_id: int,
                             setup: dict[str, Any]) -> dict[str, Any]:
    state, _, error = _fold(store, campaign_id)
    if error:
        raise BadInput(error)
    names = [p["name"] for p in setup.get("players", [])]
    if state is None or not state.played:
        # the first game: the players pick their familiars in it
        want = "solo" if len(names) == 1 else "asymmetric"
        if setup.get("familiar_mode") != want:
            raise BadInput(f"a campaign with familiars plays each game with them: start its "
                           f"first game with the familiar mode '{want}'")
        return setup
    if state.phase == "choosing":
        raise BadInput(f"{state.choose_order[0]} must first keep or change their familiar "
                       "(between games, lowest to highest total: on the History page)")
    held = {p: state.familiar(p) for p in state.players}
    out = {k: v for k, v in setup.items() if k not in ("familiar", "familiars")}
    if len(names) == 1:
        out.update(familiar_mode="solo", familiar=held[names[0]])
    else:
        out.update(familiar_mode="asymmetric", familiars={n: held[n] for n in names})
    return out


def standings(store: Store, campaign_id: int) -> dict[str, Any]:
    """Totals after the finished games, lines played, winners and the solo verdict; with
    familiars, who holds which and, between games, whose choice it is and their options."""
    from companion.doomcat import campaign as engine
    campaign = campaign_of(store, campaign_id)
    state, players, error = _fold(store, campaign_id)
    with_familiars = bool(campaign.setup.get("familiars"))
    out: dict[str, Any] = {"players": players, "grid": campaign.setup["goals"],
                           "played": [], "totals": {p: 0 for p in players}, "winners": [],
                           "solo_win": None, "error": error, "with_familiars": with_familiars}
    if state is None:
        return out
    result = engine.campaign_result(state)
    out.update(played=result["played"], totals=result["totals"], winners=result["winners"],
               solo_win=result["solo_win"], games=result["games"],
               target=engine.SOLO_CAMPAIGN_TARGET if len(players) == 1 else None)
    if with_familiars:
        from companion.doomcat.catalogue import familiar
        held = {p: None if f is None else {"id": f, "name": familiar(f).name,
                                           "cost": familiar(f).cost}
                for p, f in result["familiars"].items()}
        out.update(familiars=result["familiars"], held=held, phase=state.phase,
                   choose_order=list(state.choose_order), options=familiar_options(state))
    return out
