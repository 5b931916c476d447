"""Policies that play the player phase of Doom Machine: ``random`` and ``greedy``.

``random`` picks a uniformly random legal action (ending the turn only when nothing else is
legal).

A policy is called while the state is in the ``player`` phase and returns the next events to
apply (at least one; the last may be ``end_turn``). Dice values of re-rolls are filled by the
caller from its seeded RNG, and the policy is called again after a re-roll.

``greedy`` plans the whole turn with a one-turn lookahead: it enumerates the ways to spend
the dice on attacks (every distinct set of met conditions), puts the best remaining dice on
the shields, and scores each plan by running the coming machine phase on a copy of the state
(the machine is deterministic once the dice are placed): damage dealt, parts destroyed and
the Doom Core's HP count for it, HP lost against it, a loss is the worst and a win the best.
Before allocating it tries the utilities: a re-roll when the expected score (over the six
faces) beats the current plan, then +/-1 changes while one improves the plan.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from companion.machine.catalogue import Catalogue, Condition
from companion.machine.game import (
    Event,
    State,
    _advance,
    _destroy,
    _row_index,
    copy_state,
    legal_actions,
)

Policy = Callable[[State, Catalogue, random.Random], list[Event]]


def random_policy(state: State, cat: Catalogue, rng: random.Random) -> list[Event]:
    """One uniformly random legal action; ``end_turn`` only when nothing else is legal.

    So the random player uses every die it can (utilities, shields and attacks at random)
    instead of ending most turns early: a fair baseline for the greedy policy.
    """
    actions = [a for a in legal_actions(state, cat) if a["type"] != "end_turn"]
    return [rng.choice(actions)] if actions else [{"type": "end_turn"}]


@dataclass(frozen=True)
class GreedyWeights:
    """Weights of the greedy score of a turn (a plan's value)."""

    damage: float = 1.0
    kill: float = 3.0
    core_damage: float = 2.0
    hp_lost: float = 1.6
    lose: float = 1000.0
    win: float = 1000.0
    shield_left: float = 0.05
    reroll_gain: float = 0.15


class Greedy:
    """The greedy one-turn-lookahead policy (see the module docstring)."""

    def __init__(self, weights: GreedyWeights | None = None) -> None:
        self.w = weights or GreedyWeights()

    # -- scoring -------------------------------------------------------------------------
    def _machine_damage(self, state: State, cat: Catalogue, cache: dict) -> tuple[int, bool]:
        """Total damage the machine phase deals (shield 0, HP unbounded) and any lock/break."""
        key = (tuple((s["part"], s["hp"], s["pos"]) for s in state["row"]),
               state["power"], state["sentience"])
        hit = cache.get(key)
        if hit is not None:
            return hit
        sim = copy_state(state)
        sim["shield"] = 0
        sim["hp"] = 10_000
        log: list[str] = _NullLog()
        for pid in [s["part"] for s in sim["row"]]:
            if _row_index(sim, pid) >= 0:
                _advance(sim, pid, cat, log)
        out = (10_000 - sim["hp"], sim["broken_shield"])
        cache[key] = out
        return out

    def _value(self, base: State, after: State, shield: int, cat: Catalogue,
               cache: dict) -> float:
        w = self.w
        if after["phase"] == "over":
            return w.win if after["outcome"] == "won" else -w.lose
        before_hp = {s["part"]: s["hp"] for s in base["row"]}
        after_hp = {s["part"]: s["hp"] for s in after["row"]}
        dealt = sum(h - after_hp.get(p, 0) for p, h in before_hp.items())
        kills = sum(1 for p in before_hp if p not in after_hp)
        core = cat.core.id
        core_dealt = before_hp[core] - after_hp.get(core, 0) if core in before_hp else 0
        incoming, _ = self._machine_damage(after, cat, cache)
        lost = max(0, incoming - shield)
        if lost >= after["hp"]:
            return -w.lose + dealt
        return (w.damage * dealt + w.kill * kills + w.core_damage * core_dealt
                - w.hp_lost * lost + w.shield_left * max(0, shield - incoming))

    # -- allocation search (over face multisets, memoised) -------------------------------
    def _search(self, base: State, cur: State, faces: tuple[int, ...], cap: int,
                cat: Catalogue, memo: dict, cache: dict) -> tuple[float, tuple]:
        """Best ``(value, plan)`` from ``cur`` with these faces left; plan is
        ``(shield_faces, ((part, faces), ...))``."""
        key = (tuple((s["part"], s["hp"]) for s in cur["row"]), cur["power"],
               cur["sentience"], cur["phase"], faces)
        hit = memo.get(key)
        if hit is not None:
            return hit
        shield_faces = faces[len(faces) - cap:] if cap else ()
        shield = cur["shield"] + sum(shield_faces)
        best = (self._value(base, cur, shield, cat, cache), (shield_faces, ()))
        if cur["phase"] != "over":
            counts = [0] * 7
            for f in faces:
                counts[f] += 1
            for i, slot in enumerate(cur["row"]):
                pid = slot["part"]
                for need, need_counts in _USES[cat.part(pid).condition]:
                    if any(counts[f] < c for f, c in need_counts):
                        continue
                    rest = list(faces)
                    for f in need:
                        rest.remove(f)
                    if slot["hp"] > 1:  # a hit that does not destroy only changes that part
                        nxt = dict(cur)
                        nxt["row"] = row = list(cur["row"])
                        row[i] = {**slot, "hp": slot["hp"] - 1}
                    else:
                        nxt = copy_state(cur)
                        nxt["row"][i]["hp"] = 0
                        _destroy(nxt, pid, cat, _NullLog())
                    value, (sf, attacks) = self._search(base, nxt, tuple(rest), cap, cat,
                                                        memo, cache)
                    if value > best[0]:
                        best = (value, (sf, ((pid, need), *attacks)))
        memo[key] = best
        return best

    def best_plan(self, state: State, cat: Catalogue, memo: dict | None = None,
                  cache: dict | None = None) -> tuple[float, list[Event]]:
        """The best shields + attacks for the dice in hand: ``(value, events)``."""
        memo = {} if memo is None else memo
        cache = {} if cache is None else cache
        hand = [d for d in state["dice"] if d["at"] == "hand"]
        cap = state["shield_cap"] - state["shield_dice"] if state["stage"] != "damage" else 0
        cap = min(cap, len(hand))
        faces = tuple(sorted(d["value"] for d in hand))
        value, (shield_faces, attacks) = self._search(state, state, faces, cap, cat, memo,
                                                      cache)
        pool = sorted(hand, key=lambda d: d["value"])
        events: list[Event] = []

        def take(face: int) -> int:
            for k, d in enumerate(pool):
                if d["value"] == face:
                    return pool.pop(k)["id"]
            raise AssertionError("plan uses a face not in hand")

        for f in shield_faces:
            events.append({"type": "shield", "die": take(f)})
        for pid, need in attacks:
            events.append({"type": "attack", "part": pid, "dice": [take(f) for f in need]})
        return value, events

    def __call__(self, state: State, cat: Catalogue, rng: random.Random) -> list[Event]:
        memo: dict = {}
        cache: dict = {}
        value, plan = self.best_plan(state, cat, memo, cache)
        side = cat.player.side(state["hard"])
        if value >= self.w.win:
            return plan
        if state["stage"] != "utilities":
            return [*plan, {"type": "end_turn"}]
        hand = [d for d in state["dice"] if d["at"] == "hand"]
        if state["used"]["reroll"] < side.reroll_slots:
            best_gain, best_die = self.w.reroll_gain, None
            in_attacks = {i for e in plan if e["type"] == "attack" for i in e["dice"]}
            tried: set[int] = set()
            for d in hand:  # re-roll candidates: dice the plan does not attack with
                if d["value"] in tried or d["id"] in in_attacks or d["value"] >= 5:
                    continue
                tried.add(d["value"])
                total = 0.0
                for face in range(1, 7):
                    trial = copy_state(state)
                    trial["dice"][d["id"]]["value"] = face
                    total += self.best_plan(trial, cat, memo, cache)[0]
                gain = total / 6 - value
                if gain > best_gain:
                    best_gain, best_die = gain, d["id"]
            if best_die is not None:
                return [{"type": "reroll", "die": best_die}]
        events: list[Event] = []
        trial = state
        used = state["used"]["modifier"]
        while used < side.modifier_slots and abs(value) < self.w.win:
            best_step = None
            tried_steps: set[tuple[int, int]] = set()
            for d in trial["dice"]:
                if d["at"] != "hand" or d["rerolled"]:
                    continue
                for delta in (1, -1):
                    if not 1 <= d["value"] + delta <= 6 or (d["value"], delta) in tried_steps:
                        continue
                    tried_steps.add((d["value"], delta))
                    t = copy_state(trial)
                    t["dice"][d["id"]]["value"] += delta
                    v, p = self.best_plan(t, cat, memo, cache)
                    if v > value + 1e-9:
                        value, plan, best_step = v, p, (d["id"], delta, t)
            if best_step is None:
                break
            events.append({"type": "modify", "die": best_step[0], "delta": best_step[1]})
            trial = best_step[2]
            used += 1
        return [*events, *plan, {"type": "end_turn"}]


def _uses(cond: Condition) -> tuple[tuple[tuple[int, ...], tuple[tuple[int, int], ...]], ...]:
    """Every sorted tuple of faces that meets ``cond``, with the count of each face."""
    from itertools import combinations_with_replacement

    return tuple((t, tuple((f, t.count(f)) for f in sorted(set(t))))
                 for t in combinations_with_replacement(range(1, 7), cond.dice)
                 if cond.matches(t))


class _Uses(dict):
    def __missing__(self, cond: Condition) -> tuple[tuple[int, ...], ...]:
        self[cond] = _uses(cond)
        return self[cond]


_USES = _Uses()


class _NullLog(list):
    """A log that drops its lines (the lookahead does not need them)."""

    def append(self, item: Any) -> None:
        return None


POLICIES: dict[str, Callable[[], Policy]] = {"random": lambda: random_policy, "greedy": Greedy}


def get_policy(name: str) -> Policy:
    """The policy called ``name`` (``random`` or ``greedy``)."""
    from companion.errors import unknown_name

    if name not in POLICIES:
        raise unknown_name("policy", name, POLICIES)
    return POLICIES[name]()


__all__ = ["POLICIES", "Greedy", "GreedyWeights", "get_policy", "random_policy"]
