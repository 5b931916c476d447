"""Seeded solo Doom Cat games played by a policy, and the balance report.

- :func:`play_solo` ``(config, rng, policy) -> (state, events)``: one solo game.
- :func:`simulate` ``(SimConfig, clock=time.perf_counter) -> SimReport``: many games; the
  report has DESIGN.md's keys (``games, wins, win_rate, win_rate_ci95, mean_score_per_sigil,
  games_per_second``) and more.

Game ``g`` of a run with seed ``s`` uses ``random.Random(s * 1_000_003 + g)`` for its dice, its
pair of sigil designs (each drawn from A-D, unless fixed) and the policy's tie-breaks, so any
single game can be replayed. The clock is injected so that the rest is pure.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from companion.doomcat.catalogue import familiar as find_familiar
from companion.doomcat.catalogue import game_goals
from companion.doomcat.game import GameConfig, GameState, apply, new_game, replay, roll, scores
from companion.doomcat.layouts import BUILTIN
from companion.doomcat.policies import Greedy, Policy, make_policy

PLAYER = "solo"


@dataclass(frozen=True)
class SimConfig:
    """A batch of solo games."""

    games: int = 500
    goals: tuple[int, ...] = (1, 2, 3)
    policy: str = "greedy"
    seed: int = 0
    familiar: str | None = None
    cards: tuple[str, str] | None = None  # None: each game draws its two designs from A-D


@dataclass(frozen=True)
class SimReport:
    games: int
    wins: int
    win_rate: float
    win_rate_ci95: tuple[float, float]
    mean_score_per_sigil: float
    games_per_second: float
    policy: str
    goals: tuple[int, ...]
    seed: int
    familiar: str | None
    sigil_score_quartiles: tuple[float, float, float]
    sigils_at_target: float

    def to_json(self) -> dict[str, Any]:
        return {"games": self.games, "wins": self.wins, "win_rate": round(self.win_rate, 4),
                "win_rate_ci95": [round(v, 4) for v in self.win_rate_ci95],
                "mean_score_per_sigil": round(self.mean_score_per_sigil, 2),
                "games_per_second": round(self.games_per_second, 1),
                "policy": self.policy, "goals": list(self.goals), "seed": self.seed,
                "familiar": self.familiar,
                "sigil_score_quartiles": [round(v, 1) for v in self.sigil_score_quartiles],
                "sigils_at_target": round(self.sigils_at_target, 4)}


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (95% by default)."""
    if n == 0:
        return (0.0, 1.0)
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def play_solo(config: GameConfig, rng: random.Random, policy: Policy,
              ) -> tuple[GameState, list[dict[str, Any]]]:
    """Play one solo game to the end; returns the final state and its event log."""
    events = new_game(config)
    state = replay(events)
    name = config.players[0]
    while state.phase == "setup":
        wild = (policy.setup_wilds(state, name) if isinstance(policy, Greedy)
                else [rng.randint(1, 6), rng.randint(1, 6)])
        event = {"type": "setup", "player": name, "wild": wild}
        state = apply(state, event)
        events.append(event)
    while state.phase == "playing":
        event = {"type": "roll", "dice": roll(rng)}
        state = apply(state, event)
        events.append(event)
        move = policy(state, name, rng)
        state = apply(state, move)
        events.append(move)
    return state, events


def _quartiles(values: Sequence[float]) -> tuple[float, float, float]:
    ordered = sorted(values)
    if not ordered:
        return (0.0, 0.0, 0.0)

    def at(q: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(q * len(ordered)))])
    return (at(0.25), at(0.5), at(0.75))


def simulate(config: SimConfig, clock: Callable[[], float] = time.perf_counter) -> SimReport:
    """Play ``config.games`` seeded solo games and report (see the module docstring)."""
    goals = game_goals(config.goals)
    fam = find_familiar(config.familiar).id if config.familiar else None
    policy = make_policy(config.policy, [g.number for g in goals])
    wins = 0
    sigil_scores: list[float] = []
    start = clock()
    for g in range(config.games):
        rng = random.Random(config.seed * 1_000_003 + g)
        cards = config.cards or (rng.choice(BUILTIN), rng.choice(BUILTIN))
        game = GameConfig(players=(PLAYER,), cards=cards, goals=tuple(x.number for x in goals),
                          familiar_mode="solo" if fam else "none", familiar=fam)
        state, _ = play_solo(game, rng, policy)
        result = scores(state)
        wins += bool(result["solo_win"])
        sigil_scores += [s["total"] for s in result["players"][PLAYER]["sigils"]]
    elapsed = max(clock() - start, 1e-9)
    n = config.games
    return SimReport(
        games=n, wins=wins, win_rate=wins / n, win_rate_ci95=wilson(wins, n),
        mean_score_per_sigil=sum(sigil_scores) / len(sigil_scores),
        games_per_second=n / elapsed, policy=config.policy,
        goals=tuple(x.number for x in goals), seed=config.seed, familiar=fam,
        sigil_score_quartiles=_quartiles(sigil_scores),
        sigils_at_target=sum(s >= 70 for s in sigil_scores) / len(sigil_scores))
