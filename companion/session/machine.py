"""The Doom Machine adapter: session events are the engine's events (``companion.machine``).

The stored setup carries the engine's shuffled ``setup`` event, so a stored game always folds
to the same machine. Dice values a ``roll`` or ``reroll`` lacks (the "roll for me" button) are
filled by :meth:`MachineAdapter.complete` before the event is checked and stored, so the log
holds the values and the fold stays deterministic.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from companion.errors import BadInput
from companion.session.engine import EngineMissing, Refused

try:
    from companion.machine import game as engine
    from companion.machine.catalogue import load_catalogue
except ImportError as exc:  # pragma: no cover - the page says the engine is missing
    raise EngineMissing(f"the Doom Machine rules engine is not installed yet ({exc.name})") \
        from exc

PART_ID = {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{0,40}$"}
FACE = {"type": "integer", "minimum": 1, "maximum": 6}
DIE_ID = {"type": "integer", "minimum": 0, "maximum": 31}
LOG_KEEP = 400


@dataclass(frozen=True)
class MachineState:
    """The engine's state and the log lines of every event so far (newest last)."""

    game: dict[str, Any]
    log: tuple[str, ...] = ()


class MachineAdapter:
    kind = "machine"
    title = "Doom Machine"

    def __init__(self) -> None:
        self.parts = load_catalogue()

    def catalogue(self) -> dict[str, Any]:
        """The machine part cards (for the page's "which card was turned over")."""
        return {"parts": [p.to_json() for p in self.parts.parts]}

    # -- schemas -------------------------------------------------------------------------
    def setup_schema(self) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": False, "properties": {
            "hard": {"type": "boolean"},
            "demo": {"type": "boolean"},
            "seed": {"type": "integer", "minimum": 0, "maximum": 2**31},
            "players": {"type": "array", "maxItems": 1,
                        "items": {"type": "string", "maxLength": 24}},
            # the starting parts turned over at the table, left to right (the rest shuffled)
            # (a card named twice is refused by its name in _turned_over)
            "revealed": {"type": "array", "minItems": 1, "maxItems": engine.REVEAL,
                         "items": PART_ID},
            # a stored game's shuffled deck (its setup prepared already; the engine checks it)
            "setup_event": {"type": "object"},
        }}

    def event_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["type"], "additionalProperties": False,
                "properties": {
                    "type": {"enum": ["roll", "modify", "reroll", "shield", "attack",
                                      "end_turn", "cycle", "grow"]},
                    "dice": {"anyOf": [
                        {"type": "object", "maxProperties": 10,
                         "patternProperties": {"^[0-9]{1,2}$": FACE},
                         "additionalProperties": False},
                        {"type": "array", "items": DIE_ID, "maxItems": 5}]},
                    "die": DIE_ID, "delta": {"enum": [-1, 1]}, "value": FACE,
                    "part": PART_ID, "source": {"enum": ["camera", "manual", "random"]},
                    "locks": {"type": "array", "items": DIE_ID, "maxItems": 10},
                }}

    def prepare_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        hard = bool(setup.get("hard", False))
        seed = int(setup["seed"]) if "seed" in setup else random.SystemRandom().randrange(2**31)
        if "setup_event" in setup:
            event = dict(setup["setup_event"])
        else:
            event = engine.setup_event(random.Random(seed), hard, self.parts)
        if setup.get("revealed"):
            event = self._turned_over(event, list(setup["revealed"]))
        out = {"hard": hard, "seed": seed, "setup_event": event}
        if setup.get("demo"):
            out["demo"] = True
        return out

    def _turned_over(self, event: Mapping[str, Any], revealed: list[str]) -> dict[str, Any]:
        """The shuffled setup with the named cards on top of the deck, in order.

        The rulebook draws "the top 3 cards from the machine deck": a named card cannot be
        the Doom Core (it is at the bottom, under 9 or 15 cards). A named card our shuffle had
        set aside swaps places with the last unnamed card kept in the deck.
        """
        for pid in revealed:
            if pid not in self.parts.by_id:
                raise Refused(f"unknown part {pid!r}: not in the machine part catalogue")
            if pid == self.parts.core.id:
                raise Refused(f"{self.part_name(pid)} is at the bottom of the deck: it cannot "
                              "be among the starting parts")
            if revealed.count(pid) > 1:
                raise Refused(f"{self.part_name(pid)} is named twice among the starting parts: "
                              "each card is turned over once")
        deck, aside = list(event["deck"][:-1]), list(event["aside"])
        rest = [p for p in deck if p not in revealed]
        for pid in revealed:
            if pid in aside:
                aside[aside.index(pid)] = rest.pop()
        out = dict(event)
        out["deck"] = [*revealed, *rest, event["deck"][-1]]
        out["aside"] = aside
        return out

    # -- folding -------------------------------------------------------------------------
    def initial(self, setup: Mapping[str, Any]) -> MachineState:
        event = setup.get("setup_event")
        if not isinstance(event, Mapping):
            raise Refused("the stored setup lacks its shuffled deck")
        return self.apply(MachineState(engine.initial_state()), event)

    def apply(self, state: MachineState, event: Mapping[str, Any]) -> MachineState:
        if state.game.get("phase") == "over":
            raise Refused("the game is over")
        try:
            game = engine.apply(state.game, dict(event), self.parts)
        except engine.IllegalAction as exc:
            raise Refused(exc.reason) from None
        except BadInput as exc:
            raise Refused(str(exc)) from None
        lines = tuple(game.get("log", []))
        return MachineState(game, (*state.log, *lines)[-LOG_KEEP:])

    def complete(self, state: MachineState, event: Mapping[str, Any]) -> dict[str, Any]:
        """Fill the values of a roll/re-roll made "for me" (random, then stored), and the part
        of a cycle or a grow sent without one (the next part, left to right; the card on top
        of the deck), so that the log names it and a grow can be corrected."""
        out = dict(event)
        game = state.game
        if out.get("type") in ("cycle", "grow") and "part" not in out \
                and game.get("phase") == "machine":
            in_row = [slot["part"] for slot in game.get("row", [])]
            pending = [p for p in game.get("pending", []) if p in in_row]
            if out["type"] == "cycle" and pending:
                out["part"] = pending[0]
            # the card drawn for the players: the top of the shuffled deck
            if out["type"] == "grow" and not pending and game.get("deck") \
                    and len(in_row) < engine.ROW_MAX:
                out["part"] = game["deck"][0]
        if out.get("type") in ("roll", "reroll") and "dice" not in out and "value" not in out:
            out = engine.complete(state.game, out, random.Random(random.SystemRandom()
                                                                 .randrange(2**63)))
            out["source"] = "random"
        return out

    # -- the camera ----------------------------------------------------------------------
    def from_tracker(self, state: MachineState, doc: Mapping[str, Any]) -> dict[str, Any] | None:
        """A game event from a tracker event (``companion.tracker`` JSON), or None.

        A settled roll in the roll phase becomes the ``roll`` (camera dice are matched to the
        pool's dice by colour, then in order), and so do the dice thrown when others stayed
        still on the table (a re-roll event in the roll phase); a single re-rolled die
        becomes a ``reroll`` and a die turned by one pip a ``modify`` (the +/-1 slot).
        :class:`Refused` says why a reading cannot be used (a cocked die, the wrong number of
        dice).
        """
        game = state.game
        kind = doc.get("kind")
        hand = [d for d in game.get("dice", []) if d["at"] == "hand"]
        if kind == "roll" and game.get("phase") == "roll":
            return {"type": "roll", "dice": self._match_roll(game, doc), "source": "camera"}
        if kind == "reroll" and game.get("phase") == "roll":
            # some dice stayed still on the table (a die a lock set aside, one not picked up):
            # only the dice thrown make the roll
            thrown = [d for d in doc.get("dice", []) if d["id"] in doc.get("rerolled", [])]
            ready = [d for d in game.get("dice", []) if d["at"] == "ready"]
            if len(thrown) != len(ready):
                return None   # a few dice moved about, not the roll
            return {"type": "roll", "dice": self._match_roll(game, {"dice": thrown}),
                    "source": "camera"}
        if kind == "reroll" and game.get("phase") == "player":
            new = [d for d in doc.get("dice", []) if d["id"] in doc.get("rerolled", [])]
            old = doc.get("replaced", [])
            if len(new) != 1 or len(old) != 1 or new[0]["value"] is None:
                return None
            die = next((d for d in hand if d["value"] == old[0]["value"]), None)
            if die is None:
                return None
            return {"type": "reroll", "die": die["id"], "value": new[0]["value"],
                    "source": "camera"}
        if kind == "nudged" and game.get("phase") == "player":
            now = (doc.get("die") or {}).get("value")
            before = doc.get("previous")
            if now is None or before is None or abs(now - before) != 1:
                return None
            die = next((d for d in hand if d["value"] == before and not d["rerolled"]), None)
            if die is None:
                return None
            return {"type": "modify", "die": die["id"], "delta": now - before,
                    "source": "camera"}
        return None

    @staticmethod
    def _match_roll(game: Mapping[str, Any], doc: Mapping[str, Any]) -> dict[str, int]:
        ready = [d for d in game["dice"] if d["at"] == "ready"]
        seen = list(doc.get("dice", []))
        unread = [d for d in seen if d.get("value") is None]
        if unread:
            raise Refused(f"the camera cannot read {len(unread)} of the dice (cocked or "
                          "hidden): enter the roll by hand or roll again")
        if len(seen) != len(ready):
            raise Refused(f"the camera sees {len(seen)} dice but {len(ready)} are to be "
                          "rolled: enter the roll by hand or roll again")
        out: dict[str, int] = {}
        by_colour: dict[str, list[int]] = {}
        for d in seen:
            by_colour.setdefault(d.get("color", ""), []).append(int(d["value"]))
        if all(len(by_colour.get(c, [])) == sum(1 for d in ready if d["color"] == c)
               for c in {d["color"] for d in ready}):
            for c, values in by_colour.items():
                ids = sorted(d["id"] for d in ready if d["color"] == c)
                out.update({str(i): v for i, v in zip(ids, sorted(values), strict=True)})
        else:   # colours misread: the values still count, in order
            values = sorted(int(d["value"]) for d in seen)
            ids = sorted(d["id"] for d in ready)
            out = {str(i): v for i, v in zip(ids, values, strict=True)}
        return out

    # -- views ---------------------------------------------------------------------------
    def part_name(self, part_id: str) -> str:
        try:
            return self.parts.part(part_id).name
        except (KeyError, BadInput):
            return part_id

    def view(self, state: MachineState) -> dict[str, Any]:
        v = engine.view(state.game, self.parts)
        legal = engine.legal_actions(state.game, self.parts) \
            if state.game.get("phase") not in ("setup", "over") else []
        v["legal"] = legal
        v["log"] = list(state.log[-120:])
        v["last_log"] = list(state.game.get("log", []))
        v["next_step"] = legal[0] if state.game.get("phase") == "machine" and legal else None
        v["next_step_text"] = self.describe(legal[0], state) if v["next_step"] else ""
        v["to_roll"] = [d["id"] for d in state.game.get("dice", []) if d["at"] == "ready"]
        v["drawable"] = [{"part": p, "name": self.part_name(p)}
                         for p in self.drawable(state.game)]
        v["lockable"] = engine.lockable(state.game)   # the dice a lock icon may set aside
        # the dice each lock icon the next cycle fires chooses from: the part's own lock, or a
        # neighbour's that its gear cycles onto one
        v["lock_choices"] = engine.lock_choices(state.game, legal[0], self.parts) \
            if v["next_step"] else []
        return v

    def drawable(self, game: Mapping[str, Any]) -> list[str]:
        """The part cards that can be turned over when the machine grows now (none when no
        card is drawn): every card not in play nor destroyed, the Doom Core only last."""
        if game.get("phase") != "machine" or not game.get("deck") \
                or len(game.get("row", [])) >= engine.ROW_MAX:
            return []
        core = self.parts.core.id
        if game["deck"] == [core]:
            return [core]
        return sorted((p for p in [*game["deck"], *game.get("aside", [])] if p != core),
                      key=lambda p: self.part_name(p))

    def describe(self, event: Mapping[str, Any], state: MachineState) -> str:
        t = event.get("type")
        cam = " (camera)" if event.get("source") == "camera" else ""
        if t == "roll":
            dice = event.get("dice")
            faces = " ".join(str(v) for _, v in sorted(dice.items(), key=lambda kv: int(kv[0]))) \
                if isinstance(dice, Mapping) else "?"
            return f"roll {faces}{cam}"
        if t == "modify":
            delta = "+1" if event.get("delta") == 1 else "-1"
            return f"{_dice_said(event.get('die'))} {delta}{cam}"
        if t == "reroll":
            return f"re-roll {_dice_said(event.get('die'))} -> {event.get('value', '?')}{cam}"
        if t == "shield":
            return f"shield with {_dice_said(event.get('die'))}"
        if t == "attack":
            return (f"attack {self.part_name(str(event.get('part')))} with "
                    f"{_dice_said(event.get('dice'))}")
        if t == "end_turn":
            return "end of the player phase"
        if t == "cycle":
            locks = event.get("locks")
            chosen = f" (lock: {_dice_said(locks)})" if locks else ""
            return f"machine: {self.part_name(str(event.get('part')))} cycles{chosen}"
        if t == "grow":
            if event.get("part"):
                return f"machine grows: {self.part_name(str(event['part']))} drawn"
            return "machine grows: a new part is drawn"
        if t == "setup":
            return "setup"
        return str(t)

    def result(self, state: MachineState) -> dict[str, Any] | None:
        outcome = state.game.get("outcome")
        if not outcome:
            return None
        turn = state.game.get("turn")
        word = "won: the Doom Core is destroyed" if outcome == "won" else "lost: 0 HP"
        return {"outcome": outcome, "turn": turn, "summary": f"{word} (turn {turn})"}


def _dice_said(dice: Any) -> str:
    """A die id or a list of them as players count them ("die 2", "dice 1, 3"); "die ?" when
    an event lacks them or holds something else (a log line never fails)."""
    ids = [dice] if isinstance(dice, int) else dice
    if isinstance(ids, list) and ids and all(isinstance(i, int) for i in ids):
        return engine.dice_names(ids)
    return "die ?"
