"""The Doom Machine rules engine: a game is an event log, the state is a fold over it.

The engine is pure: no I/O, no clock, and the only randomness is in the values that events
carry. During real play those values come from the table (the camera reads the dice); in a
simulation :func:`complete` fills them from an injected, seeded ``random.Random``.

API for the dashboard (all functions take and return plain JSON-able dicts)
---------------------------------------------------------------------------
``new_game(seed, hard=False) -> (state, events)``
    A shuffled setup (the ``setup`` event, carrying the deck order) and the state after it.
``apply(state, event) -> state``
    A new state; the argument is never changed. An illegal event raises :class:`IllegalAction`
    (a :class:`companion.errors.BadInput`) whose message is the reason, e.g.
    ``"die 3 was re-rolled this turn: it cannot be modified"``. Texts for players (the log, the
    refusals) name a die as the table counts, from one (:func:`die_name`: id 2 is "die 3");
    events and state keep the ids.
``replay(events) -> state``
    The fold of :func:`apply` over the log from :func:`initial_state`: undo is
    ``replay(events[:-1])``; :class:`Game` wraps this.
``legal_actions(state) -> [event, ...]``
    The legal next events. ``roll`` and ``reroll`` come without their dice values: fill them
    from the table, or with :func:`complete` from a seeded RNG.
``view(state) -> dict``
    What a screen shows: the row of parts (name, HP, track position, the next space's icon,
    roll condition), power, sentience, player HP, shield, dice pool, locked dice, deck size,
    slots left, outcome. ``state["log"]`` holds the human-readable lines of the last event.

Events (``type`` and fields; dice are named by ``id``, parts by catalogue ``id``)
-------------------------------------------------------------------------------
============ ==================================== ===========================================
type         fields                               does
============ ==================================== ===========================================
setup        hard, deck (top first, Doom Core     player card side A or B, black dice, the
             last), aside (removed from the run)  top 3 parts revealed with their HP
roll         dice: {"<id>": face, ...}            the turn starts: every die not locked or
                                                  removed is rolled (faces read at the table)
modify       die, delta (+1 or -1)                uses one +/-1 slot (never 6->1 or 1->6)
reroll       die, value                           uses one re-roll slot; the die can't then
                                                  be modified
shield       die                                  the die's face adds to the shield strength
attack       part, dice: [id, ...]                1 damage when the dice meet the condition
end_turn                                          the player phase ends (unplayed dice spent)
cycle        [part], [locks: [id, ...]]           the machine phase, one part at a time, left
                                                  to right (gears cycle the neighbours too);
                                                  ``locks`` names the dice the player chooses
                                                  for lock icons, any die not locked or
                                                  removed (default: the lowest id not on a
                                                  shield); naming more dice than the cycle
                                                  fires locks is refused
grow         [part]                               the row slides right and a part is drawn
                                                  (optionally the named one: the card turned
                                                  over at the table); the next turn begins
============ ==================================== ===========================================

Phases: ``setup`` -> ``roll`` -> ``player`` (stages ``utilities`` -> ``shields`` ->
``damage``, never backwards) -> ``machine`` (``cycle`` ... ``grow``) -> ``roll`` ... until
``over`` (``outcome`` "won" when the Doom Core is destroyed, "lost" at 0 HP).

Dice positions (``die["at"]``): ``ready`` (to be rolled), ``hand`` (rolled, unallocated),
``shield``, ``spent``, ``locked`` (sits out the next turn), ``removed`` (out of the game).
A die is never created or lost except by the rules: a destroyed part's die joins the pool
(10 dice at most, 5 of them yellow), a lock with its condition met removes one.

Examples
--------
>>> state, events = new_game(seed=7)
>>> [p["part"] for p in state["row"]] == events[0]["deck"][:3]
True
>>> state = apply(state, {"type": "roll", "dice": {"0": 6, "1": 6, "2": 3, "3": 2, "4": 1}})
>>> state = apply(state, {"type": "modify", "die": 0, "delta": 1})
Traceback (most recent call last):
...
companion.machine.game.IllegalAction: modify: a 6 cannot go up: sixes may not become ones
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Any

from companion.errors import BadInput
from companion.machine.catalogue import Catalogue, Part, load_catalogue

ROW_MAX = 10
TRACK_MAX = 10
REVEAL = 3
NORMAL_DECK = 9

State = dict[str, Any]
Event = dict[str, Any]

EVENT_TYPES = ("setup", "roll", "modify", "reroll", "shield", "attack", "end_turn", "cycle",
               "grow")
STAGES = ("utilities", "shields", "damage")


class IllegalAction(BadInput):
    """An event the rules refuse; the message says why. The state it was applied to is intact."""

    def __init__(self, event_type: str, reason: str) -> None:
        self.event_type = event_type
        self.reason = reason
        super().__init__(f"{event_type}: {reason}")


# ----------------------------------------------------------------------------- state basics

def initial_state() -> State:
    """The empty state before the ``setup`` event."""
    return {"version": 1, "phase": "setup", "log": []}


def copy_state(state: State) -> State:
    """A deep copy of a state (fast: the state is flat dicts and lists of small dicts)."""
    out = dict(state)
    for key, value in state.items():
        if isinstance(value, list):
            out[key] = [dict(v) if isinstance(v, dict) else v for v in value]
        elif isinstance(value, dict):
            out[key] = dict(value)
    return out


def _cat(catalogue: Catalogue | None) -> Catalogue:
    return catalogue if catalogue is not None else load_catalogue()


def _int(event: Event, key: str, etype: str) -> int:
    value = event.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise IllegalAction(etype, f"field {key!r} must be a whole number, got {value!r}")
    return value


def _face(value: Any, etype: str, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 6:
        raise IllegalAction(etype, f"{what} must be a die face 1-6, got {value!r}")
    return value


def die_name(die_id: int) -> str:
    """A die as players count them, from one: ``die_name(0) == "die 1"``."""
    return f"die {die_id + 1}"


def dice_names(ids: Iterable[int]) -> str:
    """Dice as players count them: ``dice_names([0, 2]) == "dice 1, 3"``, one die as
    :func:`die_name` says it."""
    ids = list(ids)
    if len(ids) == 1:
        return die_name(ids[0])
    return "dice " + ", ".join(str(i + 1) for i in ids)


def faces_said(faces: Iterable[int]) -> str:
    """Dice faces as a player says them: ``faces_said([4, 6, 6]) == "4, 6 and 6"``."""
    words = [str(v) for v in faces]
    return " and ".join(words) if len(words) <= 2 else ", ".join(words[:-1]) + " and " + words[-1]


def _die(state: State, event: Event, etype: str, key: str = "die") -> dict[str, Any]:
    die_id = _int(event, key, etype)
    if not 0 <= die_id < len(state["dice"]):
        raise IllegalAction(etype, f"there is no die with id {die_id} "
                            f"(ids 0-{len(state['dice']) - 1})")
    return state["dice"][die_id]


def _in_hand(die: dict[str, Any], etype: str) -> None:
    if die["at"] != "hand":
        where = {"shield": "is on a shield", "spent": "is spent this turn",
                 "locked": "is locked this turn", "removed": "was removed from play",
                 "ready": "has not been rolled"}[die["at"]]
        raise IllegalAction(etype, f"{die_name(die['id'])} {where}")


def _need_phase(state: State, etype: str, phase: str) -> None:
    if state["phase"] == "over":
        raise IllegalAction(etype, f"the game is over: {state['outcome']}")
    if state["phase"] != phase:
        raise IllegalAction(etype, f"not allowed in the {state['phase']} phase "
                            f"(only in the {phase} phase)")


def _row_index(state: State, part_id: str) -> int:
    for i, slot in enumerate(state["row"]):
        if slot["part"] == part_id:
            return i
    return -1


def _side(state: State, cat: Catalogue):
    return cat.player.side(state["hard"])


# ----------------------------------------------------------------------------- effects

def describe_effect(effect: dict[str, Any]) -> str:
    """Human-readable text of one icon effect, e.g. ``"deal 3 dmg"``."""
    icon = effect["icon"]
    amount = effect.get("amount", 0)
    if icon == "damage":
        names = {"power": "power", "sentience": "sentience", "parts_in_play": "parts in play",
                 "left_hp": "HP of the left part"}
        plus = [names[p] for p in effect.get("plus", ())]
        if plus:
            text = "deal dmg = " + " + ".join(([str(amount)] if amount else []) + plus)
        else:
            text = f"deal {amount} dmg"
        if "if" in effect:
            text += f" if {effect['if']['stat']} > {effect['if']['gt']}"
        return text
    if icon in ("power", "sentience"):
        return f"{amount:+d} {icon}"
    if icon == "broken_shield":
        return "broken shield: only 1 shield die next turn"
    if icon == "repair":
        return f"repair {amount}" + (" to adjacent parts" if effect["target"] == "adjacent" else "")
    if icon == "gear":
        return "gear: adjacent parts cycle once more"
    if icon == "lock":
        text = f"lock {amount} {'die' if amount == 1 else 'dice'}"
        if "remove_if" in effect:
            text += (f" (removed from play if {effect['remove_if']['stat']} > "
                     f"{effect['remove_if']['gt']})")
        return text
    if icon == "damage_parts":
        return f"deal {amount} dmg to {effect['target']} parts"
    return icon


def describe_space(space: Any) -> str:
    if isinstance(space, str):
        return space
    return "; ".join(describe_effect(e) for e in space)


def _test(state: State, test: dict[str, Any] | None) -> bool:
    return test is None or state[test["stat"]] > test["gt"]


def _neighbours(state: State, part_id: str) -> tuple[str | None, str | None]:
    i = _row_index(state, part_id)
    row = state["row"]
    left = row[i - 1]["part"] if i > 0 else None
    right = row[i + 1]["part"] if 0 <= i < len(row) - 1 else None
    return left, right


def _hurt_player(state: State, amount: int, log: list[str], who: str) -> None:
    if amount <= 0:
        log.append(f"{who} deals 0 dmg")
        return
    blocked = min(state["shield"], amount)
    state["shield"] -= blocked
    rest = amount - blocked
    state["hp"] = max(0, state["hp"] - rest)
    if state["shield"] == 0 and blocked:
        for d in state["dice"]:
            if d["at"] == "shield":
                d["at"] = "spent"
    log.append(f"{who} deals {amount} dmg: {blocked} blocked by shields, {rest} to HP "
               f"(HP {state['hp']}, shield {state['shield']})")
    if state["hp"] == 0:
        state["phase"] = "over"
        state["outcome"] = "lost"
        log.append("the machine destroys you: lost")


def _lockable(state: State) -> list[dict[str, Any]]:
    """The dice a lock icon may set aside now: "choose one of your dice", so any die not
    already locked or removed from play, a die on a shield included."""
    return [d for d in state["dice"] if d["at"] not in ("locked", "removed")]


def lockable(state: State) -> list[int]:
    """The ids of the dice a lock icon may set aside now (:func:`_lock`'s rule)."""
    return [d["id"] for d in _lockable(state)]


def _lock(state: State, count: int, remove_if: dict[str, Any] | None, log: list[str],
          who: str) -> None:
    for _ in range(count):
        free = _lockable(state)
        if not free:
            log.append(f"{who}: no die left to lock")
            return
        if "_lock_probe" in state:   # lock_choices' dry run: the dice this lock chooses from
            state["_lock_probe"].append([d["id"] for d in free])
        chosen = state.get("_locks") or []
        if chosen:  # the player's choice (cycle event "locks"), checked by _cycle
            die = state["dice"][chosen.pop(0)]
            if die not in free:
                raise IllegalAction("cycle", f"{die_name(die['id'])} cannot be locked now")
        else:  # by default the lowest die not on a shield
            die = next((d for d in free if d["at"] != "shield"), free[0])
        if remove_if is not None and _test(state, remove_if):
            die["at"] = "removed"
            log.append(f"{who} locks {die_name(die['id'])} and, {remove_if['stat']} being > "
                       f"{remove_if['gt']}, removes it from play")
        else:
            die["at"] = "locked"
            die["locked_on"] = state["turn"]   # it sits out the turn after this one
            log.append(f"{who} locks {die_name(die['id'])}: it sits out the next turn")


def _repair(state: State, part_id: str | None, amount: int, cat: Catalogue,
            log: list[str], who: str) -> None:
    if part_id is None:
        return
    i = _row_index(state, part_id)
    if i < 0:
        return
    slot = state["row"][i]
    top = cat.part(part_id).hp
    gained = min(amount, top - slot["hp"])
    slot["hp"] += gained
    log.append(f"{who} repairs {cat.part(part_id).name} by {gained} (HP {slot['hp']}/{top})")


def _run_effects(state: State, effects: Iterable[dict[str, Any]], source: str,
                 left: str | None, right: str | None, cat: Catalogue, log: list[str],
                 chain: frozenset[str] | None = None) -> list[str]:
    """Run icon effects of ``source``; returns the parts a damage_parts effect brought to 0."""
    who = cat.part(source).name
    zeroed: list[str] = []
    for effect in effects:
        if state["phase"] == "over":
            break
        icon = effect["icon"]
        if icon == "damage":
            if not _test(state, effect.get("if")):
                log.append(f"{who}: {describe_effect(effect)}: condition not met")
                continue
            amount = effect["amount"]
            for plus in effect.get("plus", ()):
                if plus == "left_hp":
                    i = _row_index(state, left) if left else -1
                    amount += state["row"][i]["hp"] if i >= 0 else 0
                elif plus == "parts_in_play":
                    amount += len(state["row"])
                else:
                    amount += state[plus]
            _hurt_player(state, amount, log, who)
        elif icon in ("power", "sentience"):
            before = state[icon]
            state[icon] = min(TRACK_MAX, max(0, before + effect["amount"]))
            log.append(f"{who}: {icon} {before} -> {state[icon]}")
        elif icon == "broken_shield":
            state["broken_shield"] = True
            log.append(f"{who} breaks your shield: only 1 shield die next turn")
        elif icon == "repair":
            targets = [source] if effect["target"] == "self" else [left, right]
            for t in targets:
                _repair(state, t, effect["amount"], cat, log, who)
        elif icon == "lock":
            _lock(state, effect["amount"], effect.get("remove_if"), log, who)
        elif icon == "gear":
            # a part is cycled at most once by one chain of gears (two gears facing each
            # other would cycle each other for ever); the chain ends, at the latest, at the
            # ends of the row
            chain = chain or frozenset((source,))
            log.append(f"{who}: gear cycles the adjacent parts")
            for t in (left, right):
                if t is not None and t not in chain and _row_index(state, t) >= 0:
                    _advance(state, t, cat, log, chain | {t})
        elif icon == "damage_parts":
            target = effect["target"]
            if target == "all":
                targets = [s["part"] for s in state["row"] if s["part"] != source]
            elif target == "adjacent":
                targets = [t for t in (left, right) if t]
            else:
                targets = [t for t in ((left if target == "left" else right),) if t]
            for t in targets:
                i = _row_index(state, t)
                if i < 0 or state["row"][i]["hp"] <= 0:
                    continue
                slot = state["row"][i]
                slot["hp"] = max(0, slot["hp"] - effect["amount"])
                log.append(f"{who} deals {effect['amount']} dmg to {cat.part(t).name} "
                           f"(HP {slot['hp']})")
                if slot["hp"] == 0:
                    zeroed.append(t)
    return zeroed


def _advance(state: State, part_id: str, cat: Catalogue, log: list[str],
             chain: frozenset[str] | None = None) -> None:
    """Move a part's die one space down its track and trigger what it lands on."""
    i = _row_index(state, part_id)
    slot = state["row"][i]
    part = cat.part(part_id)
    pos = slot["pos"] + 1
    if pos >= len(part.track) or part.track[pos] == "dead":
        slot["pos"] = 0
        log.append(f"{part.name} cycles onto a dead space: back to the start")
        return
    slot["pos"] = pos
    space = part.track[pos]
    if space in ("blank", "start"):
        log.append(f"{part.name} cycles to space {pos}: blank")
        return
    log.append(f"{part.name} cycles to space {pos}: {describe_space(space)}")
    left, right = _neighbours(state, part_id)
    zeroed = _run_effects(state, space, part_id, left, right, cat, log,
                          chain or frozenset((part_id,)))
    for z in zeroed:
        if state["phase"] != "over" and _row_index(state, z) >= 0:
            _destroy(state, z, cat, log)


def _destroy(state: State, part_id: str, cat: Catalogue, log: list[str]) -> None:
    """Remove a part at 0 HP: its destroyed effect fires, its die joins the pool, gap closes.

    Parts a destroyed effect brings to 0 are destroyed in turn. Once the game is over (the
    Doom Core destroyed, or the player at 0 HP) the parts already at 0 still leave play, but
    no destroyed effect fires and the first outcome stands.
    """
    queue = [part_id]
    while queue:
        pid = queue.pop(0)
        i = _row_index(state, pid)
        if i < 0:
            continue
        part = cat.part(pid)
        left, right = _neighbours(state, pid)
        del state["row"][i]
        state["destroyed"].append(pid)
        log.append(f"{part.name} is destroyed")
        pool = [d for d in state["dice"] if d["at"] != "removed"]
        yellow = sum(1 for d in pool if d["color"] == "yellow")
        # "never more than 10 dice (5 black and 5 yellow)": the black dice are never more
        # than at the start, so the yellow cap keeps the total too
        if yellow < cat.player.max_dice - cat.player.black_dice:
            state["dice"].append({"id": len(state["dice"]), "color": "yellow", "value": None,
                                  "at": "spent", "rerolled": False})
            log.append(f"its die joins your pool as {die_name(len(state['dice']) - 1)} "
                       f"({len(pool) + 1} dice)")
        else:
            log.append(f"your pool already holds {yellow} yellow dice ({len(pool)} dice in "
                       f"all): its die goes back in the tin")
        if part.core and state["phase"] != "over":
            state["phase"] = "over"
            state["outcome"] = "won"
            log.append("the Doom Core is destroyed: you win")
        if part.destroyed and state["phase"] != "over":
            log.append(f"{part.name}'s destroyed effect: "
                       + "; ".join(describe_effect(e) for e in part.destroyed))
            queue.extend(_run_effects(state, part.destroyed, pid, left, right, cat, log))


# ----------------------------------------------------------------------------- handlers

def _setup(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    if state.get("phase") != "setup":
        raise IllegalAction("setup", "the game is already set up")
    hard = event.get("hard", False)
    if not isinstance(hard, bool):
        raise IllegalAction("setup", f"field 'hard' must be true or false, got {hard!r}")
    deck, aside = event.get("deck"), event.get("aside", [])
    if not isinstance(deck, list) or not isinstance(aside, list) \
            or not all(isinstance(p, str) for p in deck + aside):
        raise IllegalAction("setup", "fields 'deck' and 'aside' must be lists of part ids")
    unknown = [p for p in deck + aside if p not in cat.by_id]
    if unknown:
        raise IllegalAction("setup", f"unknown part {unknown[0]!r}")
    core = cat.core.id
    if not deck or deck[-1] != core:
        raise IllegalAction("setup", f"the Doom Core ({core}) must be at the bottom of the deck")
    others = sorted(p.id for p in cat.others)
    if sorted(deck[:-1] + aside) != others:
        raise IllegalAction("setup", "deck and aside must hold every other part exactly once")
    want = len(others) if hard else min(NORMAL_DECK, len(others))
    if len(deck) - 1 != want:
        raise IllegalAction("setup", f"{'hard mode uses all' if hard else 'a normal game keeps'}"
                            f" {want} parts above the Doom Core, got {len(deck) - 1}")
    player = cat.player
    side = player.side(hard)
    state.update({
        "hard": hard, "side": "B" if hard else "A", "turn": 1, "phase": "roll",
        "stage": "utilities", "outcome": None, "deck": list(deck), "aside": list(aside),
        "row": [], "destroyed": [], "power": 0, "sentience": 0, "hp": player.hp,
        "shield": 0, "shield_dice": 0, "shield_cap": side.shield_slots, "broken_shield": False,
        "used": {"modifier": 0, "reroll": 0}, "pending": [],
        "dice": [{"id": i, "color": "black", "value": None, "at": "ready", "rerolled": False}
                 for i in range(player.black_dice)],
    })
    for _ in range(min(REVEAL, len(deck))):
        pid = state["deck"].pop(0)
        state["row"].append({"part": pid, "hp": cat.part(pid).hp, "pos": 0})
    log.append(f"{'hard mode (side B)' if hard else 'normal game (side A)'}: "
               f"{len(deck)} cards in the machine deck, revealed "
               + ", ".join(cat.part(s["part"]).name for s in state["row"]))


def _roll(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "roll", "roll")
    values = event.get("dice")
    if not isinstance(values, dict):
        raise IllegalAction("roll", "field 'dice' must map die ids to faces")
    values = {str(k): v for k, v in values.items()}
    ready = [d for d in state["dice"] if d["at"] == "ready"]
    want = {str(d["id"]) for d in ready}
    if set(values) != want:
        ids = sorted(want, key=int)
        missing = [k for k in ids if k not in values]
        extra = sorted(set(values) - want)
        raise IllegalAction("roll", f"field 'dice' must give the faces of die ids {', '.join(ids)} "
                            f"({dice_names(map(int, ids))})"
                            + (f"; missing ids {', '.join(missing)}" if missing else "")
                            + (f"; not rollable: {', '.join(extra)}" if extra else ""))
    for k, v in values.items():
        _face(v, "roll", f"die id {k}")
    for d in ready:
        d["value"] = values[str(d["id"])]
        d["at"] = "hand"
        d["rerolled"] = False
    side = _side(state, cat)
    state.update({"phase": "player", "stage": "utilities", "shield": 0, "shield_dice": 0,
                  "shield_cap": 1 if state["broken_shield"] else side.shield_slots,
                  "broken_shield": False, "used": {"modifier": 0, "reroll": 0}})
    locked = [d["id"] for d in state["dice"] if d["at"] == "locked"]
    log.append(f"turn {state['turn']}: rolled " + ", ".join(
        f"{die_name(d['id'])}={d['value']}" for d in ready)
        + (f"; locked this turn: {dice_names(locked)}" if locked else "")
        + (" ; broken shield: 1 shield die at most" if state["shield_cap"] == 1
           and side.shield_slots > 1 else ""))


def _utility_checks(state: State, etype: str, slot: str, cat: Catalogue) -> dict[str, Any]:
    _need_phase(state, etype, "player")
    if state["stage"] != "utilities":
        raise IllegalAction(etype, f"utilities come first: dice were already played to "
                            f"{'shields' if state['stage'] == 'shields' else 'damage'} this turn")
    side = _side(state, cat)
    have = side.modifier_slots if slot == "modifier" else side.reroll_slots
    if state["used"][slot] >= have:
        raise IllegalAction(etype, f"all {have} {'+/-1' if slot == 'modifier' else 're-roll'} "
                            f"slots were used this turn")
    return side


def _modify(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _utility_checks(state, "modify", "modifier", cat)
    die = _die(state, event, "modify")
    _in_hand(die, "modify")
    delta = event.get("delta")
    if isinstance(delta, bool) or not isinstance(delta, int) or delta not in (1, -1):
        raise IllegalAction("modify", f"field 'delta' must be +1 or -1, got {delta!r}")
    if die["rerolled"]:
        raise IllegalAction("modify", f"{die_name(die['id'])} was re-rolled this turn: "
                            f"it cannot be modified")
    new = die["value"] + delta
    if new > 6:
        raise IllegalAction("modify", "a 6 cannot go up: sixes may not become ones")
    if new < 1:
        raise IllegalAction("modify", "a 1 cannot go down: ones may not become sixes")
    log.append(f"+/-1 slot: {die_name(die['id'])}: {die['value']} -> {new}")
    die["value"] = new
    state["used"]["modifier"] += 1


def _reroll(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _utility_checks(state, "reroll", "reroll", cat)
    die = _die(state, event, "reroll")
    _in_hand(die, "reroll")
    value = _face(event.get("value"), "reroll", "field 'value'")
    log.append(f"re-roll slot: {die_name(die['id'])}: {die['value']} -> {value}")
    die["value"] = value
    die["rerolled"] = True
    state["used"]["reroll"] += 1


def _shield(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "shield", "player")
    if state["stage"] == "damage":
        raise IllegalAction("shield", "shields come before damage: a part was already attacked "
                            "this turn")
    die = _die(state, event, "shield")
    _in_hand(die, "shield")
    if state["shield_dice"] >= state["shield_cap"]:
        why = " (broken shield)" if state["shield_cap"] < _side(state, cat).shield_slots else ""
        raise IllegalAction("shield", f"at most {state['shield_cap']} shield "
                            f"{'die' if state['shield_cap'] == 1 else 'dice'} this turn{why}")
    die["at"] = "shield"
    state["shield"] += die["value"]
    state["shield_dice"] += 1
    state["stage"] = "shields"
    log.append(f"{die_name(die['id'])} ({die['value']}) to shields: strength {state['shield']}")


def _attack(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "attack", "player")
    pid = event.get("part")
    i = _row_index(state, pid) if isinstance(pid, str) else -1
    if i < 0:
        where = ("is not a part" if not isinstance(pid, str) or pid not in cat.by_id else
                 "was already destroyed" if pid in state["destroyed"] else "is not in play")
        raise IllegalAction("attack", f"part {pid!r} {where}")
    ids = event.get("dice")
    if not isinstance(ids, list) or not ids:
        raise IllegalAction("attack", "field 'dice' must be a list of die ids")
    if any(isinstance(x, bool) or not isinstance(x, int) for x in ids):
        raise IllegalAction("attack", f"field 'dice' must list die ids (whole numbers), "
                            f"got {ids!r}")
    dice = [_die(state, {"die": x}, "attack") for x in ids]
    if len({d["id"] for d in dice}) != len(dice):
        raise IllegalAction("attack", "the same die is used twice")
    for d in dice:
        _in_hand(d, "attack")
    part = cat.part(pid)
    cond = part.condition
    faces = [d["value"] for d in dice]
    if len(dice) != cond.dice:
        raise IllegalAction("attack", f"{part.name} needs {cond.describe()} "
                            f"({cond.dice} dice), got {len(dice)}")
    if not cond.matches(faces):
        show, meet = ("shows", "does") if len(dice) == 1 else ("show", "do")
        raise IllegalAction("attack", f"{dice_names(d['id'] for d in dice)} {show} "
                            f"{faces_said(faces)}, which {meet} not meet {part.name}'s "
                            f"condition: {cond.describe()}")
    for d in dice:
        d["at"] = "spent"
    slot = state["row"][i]
    slot["hp"] -= 1
    state["stage"] = "damage"
    deal = "deals" if len(dice) == 1 else "deal"
    log.append(f"{dice_names(d['id'] for d in dice)} ({faces_said(faces)}) {deal} 1 dmg to "
               f"{part.name} (HP {slot['hp']})")
    if slot["hp"] <= 0:
        _destroy(state, pid, cat, log)


def _end_turn(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "end_turn", "player")
    unplayed = [d["id"] for d in state["dice"] if d["at"] == "hand"]
    for d in state["dice"]:
        # a die locked before this turn has sat it out; one locked during it (a destroyed
        # effect) sits out the next turn
        if d["at"] == "hand" or (d["at"] == "locked"
                                 and d.get("locked_on", -1) < state["turn"]):
            d["at"] = "spent"
            d.pop("locked_on", None)
    state["phase"] = "machine"
    state["pending"] = [s["part"] for s in state["row"]]
    verb = "is" if len(unplayed) == 1 else "are"
    log.append("end of the player phase" + (f": unplayed {dice_names(unplayed)} {verb} spent"
                                            if unplayed else ""))


def _cycle(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "cycle", "machine")
    pending = [p for p in state["pending"] if _row_index(state, p) >= 0]
    if not pending:
        raise IllegalAction("cycle", "every part has cycled: the next step is grow")
    want = event.get("part")
    if want is not None and want != pending[0]:
        asked = cat.part(want).name if isinstance(want, str) and want in cat.by_id else repr(want)
        raise IllegalAction("cycle", f"parts cycle left to right: next is "
                            f"{cat.part(pending[0]).name}, not {asked}")
    locks = event.get("locks", [])
    if not isinstance(locks, list) or any(
            isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < len(state["dice"])
            for x in locks):
        raise IllegalAction("cycle", f"field 'locks' must list dice that can be locked, "
                            f"got {locks!r}")
    for k, x in enumerate(locks):
        where = {"locked": "is locked already", "removed": "was removed from play"}.get(
            state["dice"][x]["at"])
        if where:
            raise IllegalAction("cycle", f"field 'locks': {die_name(x)} {where}: a lock sets "
                                f"aside one of the dice still in play")
        if x in locks[:k]:
            raise IllegalAction("cycle", f"field 'locks' names {die_name(x)} twice: each lock "
                                f"sets aside another die")
    if not locks:
        state["pending"] = pending[1:]
        _advance(state, pending[0], cat, log)
        return
    # the dice chosen for locks: the cycle runs on a copy, so that a choice no lock takes is
    # refused before anything changes
    trial = copy_state(state)
    trial["pending"] = pending[1:]
    trial["_locks"] = list(locks)
    trial_log: list[str] = []
    _advance(trial, pending[0], cat, trial_log)
    unused = trial.pop("_locks")
    if unused:
        fired = len(locks) - len(unused)
        what = ("no lock fires" if fired == 0 else "only 1 lock fires" if fired == 1
                else f"only {fired} locks fire")
        raise IllegalAction("cycle", f"field 'locks' names {dice_names(locks)} but {what} on "
                            f"this cycle: a die is chosen only for a lock icon")
    state.clear()
    state.update(trial)
    log.extend(trial_log)


def _grow(state: State, event: Event, cat: Catalogue, log: list[str]) -> None:
    _need_phase(state, "grow", "machine")
    if any(_row_index(state, p) >= 0 for p in state["pending"]):
        raise IllegalAction("grow", "parts are still to cycle: the next step is cycle")
    want = event.get("part")
    deck, aside = state["deck"], state["aside"]
    if want is not None:
        if not isinstance(want, str) or want not in cat.by_id:
            raise IllegalAction("grow", f"unknown part {want!r}")
        if len(state["row"]) >= ROW_MAX:
            raise IllegalAction("grow", f"{ROW_MAX} parts are in play: no part is drawn")
        if not deck:
            raise IllegalAction("grow", "the machine deck is empty")
        if want not in deck and want not in aside:
            raise IllegalAction("grow", f"{cat.part(want).name} is already in play or destroyed")
        if want == cat.core.id and len(deck) > 1:
            raise IllegalAction("grow", f"the Doom Core is at the bottom of the deck: "
                                f"{len(deck) - 1} cards are above it")
        if want != cat.core.id and deck == [cat.core.id]:
            raise IllegalAction("grow", "only the Doom Core is left in the deck")
    state["pending"] = []
    if len(state["row"]) >= ROW_MAX:
        log.append(f"{ROW_MAX} parts are in play: no part is drawn")
    elif not deck:
        log.append("the machine deck is empty: no part is drawn")
    else:
        if want is None or want == deck[0]:
            pid = deck.pop(0)
        elif want in deck:
            deck.remove(want)
            pid = want
        else:  # the card turned over at the table was set aside by our shuffle: swap them
            aside[aside.index(want)] = deck.pop(0)
            pid = want
        state["row"].insert(0, {"part": pid, "hp": cat.part(pid).hp, "pos": 0})
        log.append(f"the row slides right; {cat.part(pid).name} is drawn "
                   f"(HP {cat.part(pid).hp}; {len(deck)} cards left in the deck)")
    state["turn"] += 1
    state["phase"] = "roll"
    state["stage"] = "utilities"
    state["shield"] = 0
    state["shield_dice"] = 0
    for d in state["dice"]:
        if d["at"] in ("hand", "spent", "shield"):
            d["at"] = "ready"
            d["value"] = None
            d["rerolled"] = False


HANDLERS = {"setup": _setup, "roll": _roll, "modify": _modify, "reroll": _reroll,
            "shield": _shield, "attack": _attack, "end_turn": _end_turn, "cycle": _cycle,
            "grow": _grow}


# ----------------------------------------------------------------------------- public API

def apply(state: State, event: Event, catalogue: Catalogue | None = None) -> State:
    """Return the state after ``event``; ``state`` itself is never changed.

    Raises :class:`IllegalAction` (with the reason) when the rules refuse the event.
    ``state["log"]`` of the result holds the human-readable lines of this event.
    """
    new = copy_state(state)
    apply_in_place(new, event, catalogue)
    return new


def apply_in_place(state: State, event: Event, catalogue: Catalogue | None = None) -> None:
    """Like :func:`apply` but changes ``state`` (every check runs before any change)."""
    if not isinstance(event, dict) or event.get("type") not in HANDLERS:
        etype = event.get("type") if isinstance(event, dict) else type(event).__name__
        raise IllegalAction(str(etype), f"unknown event type (known: {', '.join(EVENT_TYPES)})")
    log: list[str] = []
    HANDLERS[event["type"]](state, event, _cat(catalogue), log)
    state["log"] = log


def lock_choices(state: State, event: Event, catalogue: Catalogue | None = None,
                 ) -> list[list[int]]:
    """The dice each lock icon a ``cycle`` event triggers would choose from, in order.

    Dry-runs the event on a copy: a lock reached through a gear (a neighbour cycled onto
    its lock icon) counts as well as the part's own. Each list holds the ids of the dice the
    lock may set aside at that moment, given that the earlier locks took the dice the event's
    ``locks`` name (or their default); ``[]`` when no lock fires or the event is refused.
    """
    if event.get("type") != "cycle":
        return []
    probe = copy_state(state)
    probe["_lock_probe"] = []
    try:
        apply_in_place(probe, event, catalogue)
    except IllegalAction:
        return []
    return [list(ids) for ids in probe["_lock_probe"]]


def replay(events: Iterable[Event], catalogue: Catalogue | None = None) -> State:
    """The state after the events, from :func:`initial_state` (undo: drop the last event)."""
    state = initial_state()
    cat = _cat(catalogue)
    for event in events:
        apply_in_place(state, event, cat)
    return state


def setup_event(rng: random.Random, hard: bool = False,
                catalogue: Catalogue | None = None) -> Event:
    """Shuffle the parts with ``rng``: the ``setup`` event of a new game."""
    cat = _cat(catalogue)
    others = [p.id for p in cat.others]
    rng.shuffle(others)
    keep = len(others) if hard else min(NORMAL_DECK, len(others))
    return {"type": "setup", "hard": hard, "deck": [*others[:keep], cat.core.id],
            "aside": others[keep:]}


def new_game(seed: int | str, hard: bool = False,
             catalogue: Catalogue | None = None) -> tuple[State, list[Event]]:
    """A new game shuffled from ``seed``: ``(state, [setup event])``."""
    event = setup_event(random.Random(seed), hard, catalogue)
    return replay([event], catalogue), [event]


def complete(state: State, event: Event, rng: random.Random) -> Event:
    """Fill the dice values a ``roll`` or ``reroll`` event lacks from ``rng`` (simulation)."""
    if event.get("type") == "roll" and "dice" not in event:
        return {**event, "dice": {str(d["id"]): rng.randint(1, 6)
                                  for d in state["dice"] if d["at"] == "ready"}}
    if event.get("type") == "reroll" and "value" not in event:
        return {**event, "value": rng.randint(1, 6)}
    return event


def attack_options(state: State, part_id: str, cat: Catalogue,
                   dice: Sequence[dict[str, Any]] | None = None) -> list[list[int]]:
    """The distinct ways (by faces) to meet a part's condition with dice in hand."""
    cond = cat.part(part_id).condition
    hand = dice if dice is not None else [d for d in state["dice"] if d["at"] == "hand"]
    seen: set[tuple[int, ...]] = set()
    out = []
    for combo in combinations(hand, cond.dice):
        faces = tuple(sorted(d["value"] for d in combo))
        if faces not in seen and cond.matches(faces):
            seen.add(faces)
            out.append([d["id"] for d in combo])
    return out


def legal_actions(state: State, catalogue: Catalogue | None = None) -> list[Event]:
    """The legal next events (one representative die per distinct face).

    ``roll`` and ``reroll`` lack their dice values (see :func:`complete`).
    """
    cat = _cat(catalogue)
    phase = state["phase"]
    if phase == "roll":
        return [{"type": "roll"}]
    if phase == "machine":
        pending = [p for p in state["pending"] if _row_index(state, p) >= 0]
        return [{"type": "cycle", "part": pending[0]}] if pending else [{"type": "grow"}]
    if phase != "player":
        return []
    out: list[Event] = []
    hand = [d for d in state["dice"] if d["at"] == "hand"]
    by_face: dict[int, dict[str, Any]] = {}
    for d in hand:
        by_face.setdefault(d["value"], d)
    side = _side(state, cat)
    if state["stage"] == "utilities":
        if state["used"]["modifier"] < side.modifier_slots:
            seen = set()
            for d in hand:
                if d["rerolled"]:
                    continue
                for delta in (1, -1):
                    if 1 <= d["value"] + delta <= 6 and (d["value"], delta) not in seen:
                        seen.add((d["value"], delta))
                        out.append({"type": "modify", "die": d["id"], "delta": delta})
        if state["used"]["reroll"] < side.reroll_slots:
            out += [{"type": "reroll", "die": d["id"]} for d in by_face.values()]
    if state["stage"] != "damage" and state["shield_dice"] < state["shield_cap"]:
        out += [{"type": "shield", "die": d["id"]} for d in by_face.values()]
    for slot in state["row"]:
        out += [{"type": "attack", "part": slot["part"], "dice": ids}
                for ids in attack_options(state, slot["part"], cat, hand)]
    out.append({"type": "end_turn"})
    return out


def next_icon(part: Part, pos: int) -> tuple[int, Any]:
    """Where a die at ``pos`` goes next on ``part``'s track, and the space there."""
    nxt = pos + 1
    if nxt >= len(part.track) or part.track[nxt] == "dead":
        return 0, "dead"
    return nxt, part.track[nxt]


def view(state: State, catalogue: Catalogue | None = None) -> dict[str, Any]:
    """A JSON view of the state for a screen (see the module docstring)."""
    cat = _cat(catalogue)
    if state["phase"] == "setup":
        return {"phase": "setup", "log": state.get("log", [])}
    side = _side(state, cat)
    row = []
    for i, slot in enumerate(state["row"]):
        part = cat.part(slot["part"])
        nxt, space = next_icon(part, slot["pos"])
        row.append({
            "index": i, "part": part.id, "name": part.name, "core": part.core,
            "hp": slot["hp"], "hp_max": part.hp, "pos": slot["pos"],
            "track": [describe_space(s) for s in part.track],
            "next": {"pos": nxt, "text": "back to the start" if space == "dead"
                     else describe_space(space),
                     "icons": [] if isinstance(space, str) else [e["icon"] for e in space]},
            "condition": part.condition.to_json(), "condition_text": part.condition.describe(),
            "destroyed_text": "; ".join(describe_effect(e) for e in part.destroyed),
        })
    dice = [{k: d[k] for k in ("id", "color", "value", "at", "rerolled")}
            for d in state["dice"]]
    return {
        "turn": state["turn"], "phase": state["phase"], "stage": state["stage"],
        "outcome": state["outcome"], "hard": state["hard"], "side": state["side"],
        "hp": state["hp"], "hp_max": cat.player.hp, "shield": state["shield"],
        "shield_dice": state["shield_dice"], "shield_cap": state["shield_cap"],
        "broken_shield_next": state["broken_shield"],
        "power": state["power"], "sentience": state["sentience"],
        "row": row, "deck_size": len(state["deck"]), "destroyed": list(state["destroyed"]),
        "dice": dice,
        "pool": sum(1 for d in state["dice"] if d["at"] != "removed"),
        "hand": [d["id"] for d in state["dice"] if d["at"] == "hand"],
        "locked": [d["id"] for d in state["dice"] if d["at"] == "locked"],
        "slots": {"modifier": {"used": state["used"]["modifier"], "max": side.modifier_slots},
                  "reroll": {"used": state["used"]["reroll"], "max": side.reroll_slots},
                  "shield": {"used": state["shield_dice"], "max": state["shield_cap"]}},
        "pending": list(state["pending"]),
        "log": list(state.get("log", [])),
    }


class Game:
    """A game as its event log, with undo; the dashboard's and the simulator's handle.

    ``act`` fills missing dice values from the seeded RNG (simulation); at the table, pass
    the values read by the camera in the event instead.
    """

    def __init__(self, events: Sequence[Event], catalogue: Catalogue | None = None,
                 rng: random.Random | None = None) -> None:
        self.catalogue = _cat(catalogue)
        self.events: list[Event] = list(events)
        self.state = replay(self.events, self.catalogue)
        self.rng = rng if rng is not None else random.Random(0)

    @classmethod
    def new(cls, seed: int | str, hard: bool = False,
            catalogue: Catalogue | None = None) -> Game:
        rng = random.Random(seed)
        event = setup_event(rng, hard, catalogue)
        return cls([event], catalogue, rng)

    def act(self, event: Event) -> list[str]:
        """Apply one event (values filled from the RNG if missing); returns its log lines."""
        event = complete(self.state, event, self.rng)
        self.state = apply(self.state, event, self.catalogue)
        self.events.append(event)
        return self.state["log"]

    def undo(self) -> None:
        """Drop the last event (never the setup)."""
        if len(self.events) <= 1:
            raise IllegalAction("undo", "nothing to undo")
        self.events.pop()
        self.state = replay(self.events, self.catalogue)

    def legal_actions(self) -> list[Event]:
        return legal_actions(self.state, self.catalogue)

    def view(self) -> dict[str, Any]:
        return view(self.state, self.catalogue)

    def machine_phase(self) -> list[str]:
        """Run the rest of the machine phase step by step; returns all log lines."""
        lines: list[str] = []
        while self.state["phase"] == "machine":
            lines += self.act(legal_actions(self.state, self.catalogue)[0])
        return lines
