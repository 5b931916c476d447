"""Simulated Doom Machine games: a policy plays many seeded games, the report sums them up.

Game ``i`` of a run with seed ``S`` is shuffled and rolled from ``random.Random(f"{S}:{i}")``,
so a run is reproducible and any single game can be replayed alone.

Examples
--------
>>> report = simulate(4, "greedy", seed=1)
>>> report.games, 0 <= report.wins <= 4
(4, True)
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any

from companion.machine.catalogue import Catalogue, load_catalogue
from companion.machine.game import (
    Event,
    apply_in_place,
    complete,
    legal_actions,
    replay,
    setup_event,
)
from companion.machine.policies import Policy, get_policy

MAX_TURNS = 100


def wilson_interval(successes: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default).

    >>> wilson_interval(0, 0)
    (0.0, 1.0)
    >>> [round(x, 3) for x in wilson_interval(50, 100)]
    [0.404, 0.596]
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class GameResult:
    """One simulated game: won or not, turns played, HP left, parts destroyed."""

    won: bool
    turns: int
    hp_left: int
    destroyed: int
    events: int

    def to_json(self) -> dict[str, Any]:
        return {"won": self.won, "turns": self.turns, "hp_left": self.hp_left,
                "destroyed": self.destroyed, "events": self.events}


@dataclass(frozen=True)
class SimReport:
    """What ``machine simulate --json`` prints (``games_per_second`` is added by the CLI)."""

    games: int
    wins: int
    mean_turns: float
    mean_hp_left: float
    mean_destroyed: float
    policy: str
    hard: bool
    seed: int

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    def to_json(self) -> dict[str, Any]:
        lo, hi = wilson_interval(self.wins, self.games)
        return {"games": self.games, "wins": self.wins, "win_rate": round(self.win_rate, 4),
                "win_rate_ci95": [round(lo, 4), round(hi, 4)],
                "mean_turns": round(self.mean_turns, 2),
                "mean_hp_left": round(self.mean_hp_left, 2),
                "mean_destroyed": round(self.mean_destroyed, 2),
                "policy": self.policy, "hard": self.hard, "seed": self.seed}


def play_game(rng: random.Random, policy: Policy, hard: bool = False,
              catalogue: Catalogue | None = None, max_turns: int = MAX_TURNS,
              events: list[Event] | None = None) -> GameResult:
    """Play one game with ``policy``; dice come from ``rng``. Appends the events if given."""
    cat = catalogue if catalogue is not None else load_catalogue()
    setup = setup_event(rng, hard, cat)
    state = replay([setup], cat)
    log = events if events is not None else None
    if log is not None:
        log.append(setup)
    count = 1
    while state["phase"] != "over" and state["turn"] <= max_turns:
        if state["phase"] == "player":
            batch = policy(state, cat, rng)
        else:
            batch = legal_actions(state, cat)[:1]
        for event in batch:
            event = complete(state, event, rng)
            apply_in_place(state, event, cat)
            count += 1
            if log is not None:
                log.append(event)
            if event["type"] == "reroll" or state["phase"] != "player":
                break
    return GameResult(won=state.get("outcome") == "won", turns=state["turn"],
                      hp_left=state["hp"], destroyed=len(state["destroyed"]), events=count)


def simulate(games: int, policy: str = "greedy", seed: int = 0, hard: bool = False,
             catalogue: Catalogue | None = None, max_turns: int = MAX_TURNS) -> SimReport:
    """Play ``games`` seeded games with the named policy and sum them up."""
    cat = catalogue if catalogue is not None else load_catalogue()
    play = get_policy(policy)
    results = [play_game(random.Random(f"{seed}:{i}"), play, hard, cat, max_turns)
               for i in range(games)]
    n = max(1, len(results))
    return SimReport(games=games, wins=sum(r.won for r in results),
                     mean_turns=sum(r.turns for r in results) / n,
                     mean_hp_left=sum(r.hp_left for r in results) / n,
                     mean_destroyed=sum(r.destroyed for r in results) / n,
                     policy=policy, hard=hard, seed=seed)
