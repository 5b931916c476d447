"""Policies that play Doom Cat moves: ``random`` and ``greedy``.

A policy is a callable ``(state, player, rng) -> move event`` choosing among
:func:`companion.doomcat.game.legal_options`; the RNG is injected (a ``random.Random``).

- ``random``: a uniformly random legal move.
- ``greedy``: the move that raises the current goal score of the card it is played on the
  most (one step ahead, no look-ahead). Ties go to the move that keeps more lines open on
  that card, then to a random one. Its familiar: a one-off power is used on the first turn
  where it raises the score more than the best plain move (Black Cat, Raven, Owl and Snake are
  tried; Bat and Moth are never used); a Toad picks, for each card, the number whose candles
  reach the most open lines.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any

from companion.doomcat.catalogue import Goal, Sigil, parse_goals
from companion.doomcat.game import Card, GameState, IllegalMove, apply, legal_options
from companion.doomcat.geometry import Drawing, board
from vision.readings import TopBox

Policy = Callable[[GameState, str, random.Random], dict[str, Any]]


def random_policy(state: GameState, player: str, rng: random.Random) -> dict[str, Any]:
    """A uniformly random legal move."""
    options = legal_options(state, player)
    if not options:
        raise IllegalMove(f"{player} has no legal move")
    return rng.choice(options)


class Greedy:
    """One-step greedy play for a set of goals (see the module docstring)."""

    def __init__(self, goals: Sequence[int] | Sequence[Goal]) -> None:
        self.goals = tuple(g if isinstance(g, Goal) else parse_goals([g])[0] for g in goals)
        self._geometric = tuple(g for g in self.goals if g.lines_only)
        self._other = tuple(g for g in self.goals if not g.lines_only)
        self._drawings: dict[tuple[str, tuple], Drawing] = {}
        self._geo: dict[tuple[str, tuple], int] = {}

    def _drawing(self, card: Card, lines: tuple) -> Drawing:
        key = (card.layout.name, lines)
        found = self._drawings.get(key)
        if found is None:
            if len(self._drawings) > 20000:
                self._drawings.clear()
            found = self._drawings[key] = Drawing(card.layout, lines)
        return found

    def value(self, card: Card, lines: tuple, crossed: tuple, top: tuple) -> int:
        """Goal points of a card drawn like this (line-only goals cached across games)."""
        key = (card.layout.name, lines)
        geo = self._geo.get(key)
        if geo is None:
            if len(self._geo) > 200000:
                self._geo.clear()
            sigil = Sigil(card.layout, lines, (), (), drawing=self._drawing(card, lines))
            geo = self._geo[key] = sum(g.score(sigil) for g in self._geometric)
        if not self._other:
            return geo
        sigil = Sigil(card.layout, lines, crossed, top, drawing=self._drawing(card, lines))
        return geo + sum(g.score(sigil) for g in self._other)

    def _after(self, card: Card, move: dict[str, Any]) -> tuple[tuple, tuple, tuple]:
        lines = card.lines
        if move.get("line") is not None:
            a, b = move["line"]
            lines = tuple(sorted((*lines, (min(a, b), max(a, b)))))
        crossed = card.crossed
        if move.get("cross") is not None:
            crossed = tuple(sorted((*crossed, move["cross"])))
        top = list(card.top)
        n = move["write"]
        top[top.index(None)] = TopBox(n, card.written(n) >= 1)
        return lines, crossed, tuple(top)

    def rank(self, state: GameState, player: str, options: list[dict[str, Any]],
             rng: random.Random) -> list[tuple[float, float, float, dict[str, Any]]]:
        me = state.player(player)
        base = [self.value(c, c.lines, c.crossed, c.top) for c in me.cards]
        values: dict[tuple, int] = {}
        rooms: dict[tuple, int] = {}
        ranked = []
        for move in options:
            k = move["card"]
            card = me.cards[k]
            lines, crossed, top = self._after(card, move)
            wilds = sum(1 for box in top if box is not None and box.circled)
            key = (k, lines, crossed, wilds)
            value = values.get(key)
            if value is None:
                value = values[key] = self.value(card, lines, crossed, top)
            room_key = (k, move.get("line") and tuple(move["line"]), move.get("cross"))
            room = rooms.get(room_key)
            if room is None:
                room = rooms[room_key] = _open_after(card, move)
            ranked.append((value - base[k], room, rng.random(), move))
        ranked.sort(key=lambda r: r[:3], reverse=True)
        return ranked

    def __call__(self, state: GameState, player: str, rng: random.Random) -> dict[str, Any]:
        options = legal_options(state, player)
        if not options:
            raise IllegalMove(f"{player} has no legal move")
        ranked = self.rank(state, player, options, rng)
        best = ranked[0]
        me = state.player(player)
        if me.familiar and me.familiar not in me.powers_used:
            powered = self._with_power(state, me, best, rng)
            if powered is not None:
                return powered
        return best[3]

    def _with_power(self, state: GameState, me: Any, best: tuple, rng: random.Random,
                    ) -> dict[str, Any] | None:
        """A move using the familiar's one-off power when it beats ``best`` (else None)."""
        fam = me.familiar
        move = best[3]
        card = me.cards[move["card"]]
        base = self.value(card, card.lines, card.crossed, card.top)
        trials: list[tuple[int, dict[str, Any]]] = []
        if fam == "F01" and state.dice is not None:
            for i in range(3):
                for to in range(1, 7):
                    if to == state.dice[i]:
                        continue
                    power = {"familiar": "F01", "die": i, "to": to}
                    ranked = self.rank(state, me.name,
                                       legal_options(state, me.name, power), rng)
                    if ranked:
                        trials.append((ranked[0][0], ranked[0][3] | {"power": power}))
        elif fam in ("F02", "F04", "F07"):
            lines, crossed, top = self._after(card, move)
            if fam == "F02":
                trial_card = dataclasses.replace(card, lines=lines)
                for extra in sorted(trial_card.open_chords):
                    more = tuple(sorted((*lines, extra)))
                    trials.append((self.value(card, more, crossed, top) - base,
                                   move | {"power": {"familiar": "F02",
                                                     "extra_line": list(extra)}}))
            elif fam == "F04" and move.get("cross") is not None:
                trials.append((self.value(card, lines, card.crossed, top) - base,
                               move | {"cross": None, "power": {"familiar": "F04"}}))
            elif fam == "F07" and move.get("line") is not None:
                for erase in card.lines:
                    fewer = tuple(x for x in lines if x != erase)
                    trials.append((self.value(card, fewer, crossed, top) - base,
                                   move | {"power": {"familiar": "F07", "erase": list(erase)}}))
        trials.sort(key=lambda t: t[0], reverse=True)
        for gain, trial in trials[:3]:
            if gain <= best[0]:
                break
            try:
                apply(state, trial)
            except IllegalMove:
                continue
            return trial
        return None

    def setup_wilds(self, state: GameState, player: str) -> list[int]:
        """Toad: for each card, the number whose candles reach the most open lines."""
        out = []
        for card in state.player(player).cards:
            bd = board(card.layout)
            out.append(max(range(1, 7), key=lambda n, bd=bd, card=card: (
                len(bd.with_number[n] & card.open_chords), -n)))
        return out


def _open_after(card: Card, move: dict[str, Any]) -> int:
    """How many chords stay open on ``card`` after ``move`` (set arithmetic, no geometry)."""
    bd = board(card.layout)
    still = set(card.open_chords)
    if move.get("line") is not None:
        a, b = move["line"]
        line = (min(a, b), max(a, b))
        still.discard(line)
        for other in card.lines:
            pid = bd.cross_id(line, other)
            if pid is not None:
                still -= bd.point_chords[pid]
    if move.get("cross") is not None:
        still -= bd.chords_at[move["cross"]]
    return len(still)


POLICIES: dict[str, Callable[[Sequence[int]], Policy]] = {
    "random": lambda goals: random_policy, "greedy": Greedy}


def make_policy(name: str, goals: Sequence[int]) -> Policy:
    """``"greedy"`` or ``"random"`` (see :data:`POLICIES`) for a game of ``goals``;
    :class:`~companion.errors.BadInput` otherwise."""
    from companion.errors import unknown_name

    if name not in POLICIES:
        raise unknown_name("policy", name, POLICIES)
    return POLICIES[name](goals)
