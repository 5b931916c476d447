"""The Doom Cat turn rules as a pure event-log engine: state is a fold over events.

Python API (the dashboard and the simulator drive the game through these only)
-------------------------------------------------------------------------------
- :class:`GameConfig` (players, the two sigil designs every player uses, goals, familiars).
- :func:`new_game` ``(config) -> list[dict]``: the opening events (a ``start`` event).
- :func:`apply` ``(state, event) -> GameState``: the next state; raises :class:`IllegalMove`
  (a :class:`~companion.errors.BadInput`) whose message quotes the rule broken. States are
  immutable, so a refused event leaves the caller's state unchanged.
- :func:`replay` ``(events) -> GameState``: the fold; ``replay([])`` is the empty state.
- :func:`legal_options` ``(state, player, power=None) -> list[dict]``: every legal ``move``
  event for a player this turn, with the dice a Black Cat's or Bat's ``power`` leaves (add the
  ``power`` to a move yourself). :func:`effective_dice` and :func:`rolled_dice` ``(state,
  power)``: the dice a player uses, and the numbers they rolled (which decide triples).
- :func:`check_power` ``(state, player, power)``: raises when the player may not use that
  one-off familiar power now (not theirs, not one-off, used).
- :func:`tiebreak_options` ``(state, player) -> list[dict]``: the legal ``tiebreak_line``
  events of a tied player after the tie-break roll.
- :func:`scores` ``(state) -> dict``: per player, each sigil's goal points, familiar cost and
  total, the player's total, solo win, and the winner(s); :func:`solo_win` ``(totals)``.
- :func:`card_state` ``(state, player, card) -> SigilState``: one card in DESIGN.md's shape.
- :func:`roll` ``(rng, n=3) -> list[int]``: dice from an injected ``random.Random``.

Events (JSON-able dicts, ``type`` first)
----------------------------------------
- ``{"type": "start", "players": ["ann"], "cards": ["A", "B"], "goals": [1, 2, 3],
  "familiar_mode": "none" | "one-for-all" | "asymmetric" | "solo", "familiar": "F03" | null,
  "familiars": {"ann": "F03", "bo": "F07"}}`` (optional, asymmetric only: each player's
  familiar is given, as a campaign's between games, and nobody picks)
- ``{"type": "pick_roll", "rolls": {"ann": [3, 5, 6], "bob": [1, 2, 2]}}`` then
  ``{"type": "pick", "player": "ann", "familiar": "F02"}`` in pick order (asymmetric games).
- ``{"type": "setup", "player": "ann", "wild": [4, 2]}``: a Toad (F03) player's wild number
  for each card, before the first roll.
- ``{"type": "roll", "dice": [3, 3, 5]}``: one roll shared by every player (a turn).
- ``{"type": "move", "player": "ann", "card": 0, "die": 2, "write": 5, "line": [0, 7],
  "cross": 4, "power": {...}}``: the three steps of one player's turn on one card: write the
  number of die ``die`` (any number if that die is wild) in the leftmost empty top box, draw
  ``line`` between candles matching the two other dice, cross out candle ``cross`` showing the
  written number. ``line`` is null only when no line can be drawn at all; ``power`` (optional)
  uses the player's familiar: ``{"familiar": "F01", "die": 0, "to": 6}`` (Black Cat),
  ``{"familiar": "F02", "extra_line": [a, b]}`` (Raven), ``{"familiar": "F04"}`` (Owl, with
  ``"cross": null``), ``{"familiar": "F06", "dice": [a, b, c]}`` (Bat's re-roll),
  ``{"familiar": "F07", "erase": [a, b]}`` (Snake), ``{"familiar": "F08"}`` (Moth).
- ``{"type": "tiebreak_roll", "dice": [a, b]}`` then ``{"type": "tiebreak_line", "player":
  "ann", "card": 1, "line": [a, b] | null}`` for each tied player.

Rules (rulebook sentences, each with allowed and refused cases in the tests)
----------------------------------------------------------------------------
2 goals (an easy game) or 3 (``catalogue.GOALS_PER_GAME``); 14 turns, 7 per card, 2 cards per
player; every player uses the same roll; the written number matches a die or any number for a
wild die; no number more than twice per card; the second write circles it and makes it wild on
that card from that turn on; rolled triples are wild for everyone (a Bat's re-roll of three
matching numbers for its player; a die the Black Cat turned makes no triples); "unstuck": when
a player can draw no line with any pair of dice, all dice are wild for them this turn; the line
joins candles matching the other two dice; one line per candle pair; crossed candles cannot be
used; a candle is crossed once and matches the written number; lines never pass through candles
(unless "must curve"), intersections, or cross lines sharing a candle. Solo: >= 70 VP on each
sigil wins. Ties: roll 2 dice, tied players draw one more line.
Familiars (our catalogue, ``familiars.json``): each power is implemented here. Familiar modes:
one for all (no cost), asymmetric picks (highest sum picks first, then clockwise;
cost subtracted from each sigil), solo (cost subtracted from each sigil).

Convention: candles are layout indices 0-11 (card mm geometry in :mod:`layouts`); a line is
a pair ``[a, b]``; cards are 0 and 1 in the order of ``start.cards``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from companion.doomcat.catalogue import (
    Sigil,
    familiar,
    game_goals,
    parse_goals,
    score_sigil,
    write_limit,
)
from companion.doomcat.geometry import Drawing, board
from companion.doomcat.layouts import Layout, load_layout
from companion.errors import BadInput
from vision.readings import N_TOP_BOXES, SigilState, TopBox

TURNS = 14
CARDS = 2
SOLO_TARGET = 70
FAMILIAR_MODES = ("none", "one-for-all", "asymmetric", "solo")
Line = tuple[int, int]


class IllegalMove(BadInput):
    """An event the rules refuse; the message says why, quoting the rule."""


# ----------------------------------------------------------------------------- config

@dataclass(frozen=True)
class GameConfig:
    """How a game is set up.

    ``cards`` are the two sigil designs every player uses ("matching pairs": the same two or
    the same combo for everyone). ``familiar`` is the one-for-all or solo familiar.
    """

    players: tuple[str, ...] = ("solo",)
    cards: tuple[str, str] = ("A", "B")
    goals: tuple[int, ...] = (1, 2, 3)
    familiar_mode: str = "none"
    familiar: str | None = None
    familiars: tuple[tuple[str, str], ...] | None = None   # asymmetric, given: no pick


def new_game(config: GameConfig) -> list[dict[str, Any]]:
    """The opening events of a game (checked: a bad config raises :class:`BadInput`)."""
    event = {"type": "start", "players": list(config.players), "cards": list(config.cards),
             "goals": list(config.goals), "familiar_mode": config.familiar_mode,
             "familiar": config.familiar}
    if config.familiars is not None:
        event["familiars"] = dict(config.familiars)
    apply(GameState(), event)
    return [event]


def roll(rng: random.Random, n: int = 3) -> list[int]:
    """``n`` six-sided dice from the injected generator."""
    return [rng.randint(1, 6) for _ in range(n)]


# ----------------------------------------------------------------------------- state

@dataclass(frozen=True)
class Card:
    """One Sigil Card of one player."""

    layout: Layout
    lines: tuple[Line, ...] = ()
    crossed: tuple[int, ...] = ()
    top: tuple[TopBox | None, ...] = (None,) * N_TOP_BOXES
    toad: int | None = None  # the Toad's wild number on this card
    spider: bool = False  # the Spider's player: dice showing 1 are wild on this card

    @property
    def filled(self) -> int:
        return sum(box is not None for box in self.top)

    @property
    def full(self) -> bool:
        return self.filled >= N_TOP_BOXES

    def written(self, number: int) -> int:
        return sum(1 for box in self.top if box is not None and box.value == number)

    @cached_property
    def wild(self) -> frozenset[int]:
        """Numbers wild on this card: circled ones, the Toad's, and 1 for the Spider."""
        out = {box.value for box in self.top if box is not None and box.circled}
        if self.toad is not None:
            out.add(self.toad)
        if self.spider:
            out.add(1)
        return frozenset(out)

    @cached_property
    def drawing(self) -> Drawing:
        return Drawing(self.layout, self.lines, self.crossed)

    def chord_problem(self, line: Line, *, moth: bool = False) -> str | None:
        """Why ``line`` cannot be drawn on this card now (geometry and crossed candles)."""
        bd = board(self.layout)
        if line not in bd.through:
            return (f"line {'-'.join(map(str, line))} does not join two different candles of "
                    f"this card (a < b, candles 0-{len(self.layout.candles) - 1})")
        if line in self.lines:
            return (f"{_said(self.layout, line)} is already drawn (One per candle pair: only "
                    "one line between any pair of candles)")
        crossed_ends = [c for c in line if c in self.crossed]
        if crossed_ends and not (moth and len(crossed_ends) == 1):
            return (f"{_said(self.layout, line)} uses crossed-out "
                    f"{_said(self.layout, candle=crossed_ends[0])} (Usable: you "
                    "cannot use a candle after it is crossed out)")
        if line not in bd.must_curve and bd.through[line]:
            return (f"{_said(self.layout, line)} passes through "
                    f"{_said(self.layout, candle=bd.through[line][0])} (Middles: never "
                    "draw lines through other candles)")
        existing = self.drawing.crossing_ids
        for other in self.lines:
            pid = bd.cross_id(line, other)
            if pid is not None and pid in existing:
                return (f"{_said(self.layout, line)} passes through an existing intersection "
                        "(Middles: never draw lines through line intersections)")
        for other in self.lines:
            if (line, other) in bd.touching:
                return (f"{_said(self.layout, line)} meets {_said(self.layout, other)} along its "
                        "length (Direct / No recrossing)")
        return None

    @cached_property
    def open_chords(self) -> frozenset[Line]:
        """Every chord that may be drawn now, ignoring dice (no familiar powers).

        The same answer as :meth:`chord_problem` is ``None``, from set lookups.
        """
        bd = board(self.layout)
        blocked: set[Line] = set(self.lines)
        for c in self.crossed:
            blocked |= bd.chords_at[c]
        for pid in self.drawing.crossing_ids:
            blocked |= bd.point_chords[pid]
        out = bd.clear_chords - blocked
        if bd.touching:
            out = frozenset(c for c in out if self.chord_problem(c) is None)
        return out

    def sigil_state(self) -> SigilState:
        return SigilState(layout=self.layout.name, lines=self.lines, crossed=self.crossed,
                          top=self.top)

    def sigil(self) -> Sigil:
        return Sigil(self.layout, self.lines, self.crossed, self.top)


@dataclass(frozen=True)
class Player:
    name: str
    cards: tuple[Card, ...]
    familiar: str | None = None
    powers_used: frozenset[str] = frozenset()
    moved: bool = False
    extra_lines: int = 0  # tie-break lines drawn


@dataclass(frozen=True)
class GameState:
    """The state after a sequence of events (see the module docstring)."""

    phase: str = "new"  # new, picking, setup, playing, tiebreak, over
    players: tuple[Player, ...] = ()
    card_names: tuple[str, ...] = ()
    goals: tuple[int, ...] = ()
    familiar_mode: str = "none"
    turn: int = 0
    dice: tuple[int, ...] | None = None
    pick_order: tuple[str, ...] = ()
    tied: tuple[str, ...] = ()
    tiebreak_dice: tuple[int, ...] | None = None
    events: int = 0
    log: tuple[str, ...] = field(default=(), compare=False)

    def player(self, name: str) -> Player:
        for p in self.players:
            if p.name == name:
                return p
        raise IllegalMove(f"unknown player {name!r}: players are "
                          f"{', '.join(p.name for p in self.players)}")

    def index(self, name: str) -> int:
        return [p.name for p in self.players].index(self.player(name).name)

    @property
    def waiting_for(self) -> tuple[str, ...]:
        """Players who still have to move this turn (or draw their tie-break line)."""
        if self.phase == "playing" and self.dice is not None:
            return tuple(p.name for p in self.players if not p.moved)
        if self.phase == "tiebreak" and self.tiebreak_dice is not None:
            return tuple(p.name for p in self.players if p.name in self.tied and not p.moved)
        if self.phase == "picking":
            return self.pick_order[:1]
        if self.phase == "setup":
            return tuple(p.name for p in self.players if _needs_setup(p))
        return ()

    def to_json(self) -> dict[str, Any]:
        return {
            "phase": self.phase, "turn": self.turn, "dice": list(self.dice or []),
            "goals": list(self.goals), "familiar_mode": self.familiar_mode,
            "waiting_for": list(self.waiting_for), "tied": list(self.tied),
            "players": [{"name": p.name, "familiar": p.familiar,
                         "powers_used": sorted(p.powers_used),
                         "cards": [c.sigil_state().to_json() | {"toad": c.toad}
                                   for c in p.cards]} for p in self.players],
        }


def _needs_setup(player: Player) -> bool:
    return player.familiar == "F03" and any(c.toad is None for c in player.cards)


def _replace_player(state: GameState, player: Player) -> tuple[Player, ...]:
    return tuple(player if p.name == player.name else p for p in state.players)


def _replace_card(player: Player, index: int, card: Card) -> Player:
    cards = list(player.cards)
    cards[index] = card
    return dataclasses.replace(player, cards=tuple(cards))


# ----------------------------------------------------------------------------- helpers

def _ints(value: Any, n: int, what: str, low: int, high: int) -> tuple[int, ...]:
    if (not isinstance(value, (list, tuple)) or len(value) != n
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)):
        raise IllegalMove(f"{what}: expected {n} whole numbers, got {value!r}")
    if not all(low <= v <= high for v in value):
        raise IllegalMove(f"{what}: values must lie in {low}-{high}, got {list(value)}")
    return tuple(value)


def _said(layout: Layout, line: Line | None = None, candle: int | None = None) -> str:
    """A line or a candle as a refusal says it, in a player's words (Layout.candle_names, not
    the events' indices): "line left 3 – right 3", "candle upper 5"."""
    if line is not None:
        return f"line {layout.line_name(*line)}"
    assert candle is not None
    return f"candle {layout.candle_names[candle]}"


def _pair(value: Any, what: str) -> Line:
    a, b = _ints(value, 2, what, 0, 11)
    if a == b:
        raise IllegalMove(f"{what}: a line joins two different candles, got {a}-{b}")
    return (min(a, b), max(a, b))


def _matches(layout: Layout, line: Line, d1: int, d2: int, w1: bool, w2: bool) -> bool:
    na, nb = layout.candles[line[0]].number, layout.candles[line[1]].number
    return ((w1 or d1 == na) and (w2 or d2 == nb)) or ((w1 or d1 == nb) and (w2 or d2 == na))


def _write_limit(player: Player) -> int:
    return write_limit(player.familiar)


def _matching(card: Card, d1: int, d2: int, w1: bool, w2: bool) -> frozenset[Line]:
    bd = board(card.layout)
    if w1 and w2:
        return card.open_chords
    if w1 or w2:
        return card.open_chords & bd.with_number[d2 if w1 else d1]
    return card.open_chords & bd.by_numbers.get((min(d1, d2), max(d1, d2)), frozenset())


def _lines_for(card: Card, d1: int, d2: int, w1: bool, w2: bool) -> list[Line]:
    """Open chords of a card joining candles that match dice d1, d2 (w: that die is wild)."""
    return sorted(_matching(card, d1, d2, w1, w2))


def _stuck(player: Player, dice: Sequence[int], triples: bool) -> bool:
    """Unstuck: no line can be drawn with any pair of dice on any playable card.

    ``dice`` are the player's dice (a familiar may have changed them), ``triples`` whether the
    rolled numbers were three of a kind (:func:`_triples`). A write that circles a number (its
    second write) makes the other dice of that number wild for the line: that counts as a
    possible line.
    """
    memo = player.__dict__.setdefault("_stuck_memo", {})  # players are immutable
    key = (tuple(dice), triples)
    if key not in memo:
        memo[key] = _stuck_uncached(player, *key)
    return memo[key]


def _stuck_uncached(player: Player, dice: tuple[int, ...], triples: bool) -> bool:
    for card in player.cards:
        if card.full:
            continue
        for i in range(3):
            j, k = [x for x in range(3) if x != i]
            wild = card.wild
            die_wild = triples or dice[i] in wild
            writes = range(1, 7) if die_wild else (dice[i],)
            for n in writes:
                if card.written(n) >= _write_limit(player):
                    continue
                after = wild | {n} if card.written(n) + 1 >= 2 else wild
                w1 = triples or dice[j] in after
                w2 = triples or dice[k] in after
                if _matching(card, dice[j], dice[k], w1, w2):
                    return False
    return True


# ----------------------------------------------------------------------------- apply

def replay(events: Iterable[Mapping[str, Any]]) -> GameState:
    """Fold events into a state (the first must be ``start``)."""
    state = GameState()
    for event in events:
        state = apply(state, event)
    return state


def apply(state: GameState, event: Mapping[str, Any]) -> GameState:
    """The state after ``event``; :class:`IllegalMove` (state unchanged) when refused."""
    if not isinstance(event, Mapping) or not isinstance(event.get("type"), str):
        raise IllegalMove(f"an event is a JSON object with a 'type', got {event!r}")
    handler = _HANDLERS.get(event["type"])
    if handler is None:
        raise IllegalMove(f"unknown event type {event['type']!r}: expected one of "
                          f"{', '.join(_HANDLERS)}")
    try:
        new = handler(state, event)
    except IllegalMove:
        raise
    except BadInput as exc:  # an unknown layout, goal or familiar named in the event
        raise IllegalMove(str(exc)) from None
    return dataclasses.replace(new, events=state.events + 1)


def _start(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "new":
        raise IllegalMove("the game has already started")
    players = event.get("players")
    if (not isinstance(players, list) or not players
            or not all(isinstance(p, str) and p for p in players)):
        raise IllegalMove("start: 'players' is a list of one or more player names")
    if len(set(players)) != len(players):
        raise IllegalMove(f"start: a player name is used twice in {players}")
    cards = event.get("cards")
    if not isinstance(cards, list) or len(cards) != CARDS:
        raise IllegalMove("start: each player takes a matching pair of Sigil Cards: 'cards' "
                          "lists exactly two layouts (the same two or the same combo)")
    layouts = tuple(load_layout(str(name)) for name in cards)
    goal_numbers = event.get("goals")
    if not isinstance(goal_numbers, list):
        raise IllegalMove(f"start: 'goals' is a list of goal numbers, got {goal_numbers!r}")
    goals = game_goals(goal_numbers)  # 2 (an easy game) or 3, each once, each existing
    mode = event.get("familiar_mode", "none")
    if mode not in FAMILIAR_MODES:
        raise IllegalMove(f"start: familiar_mode must be one of {', '.join(FAMILIAR_MODES)}")
    fam = event.get("familiar")
    if mode in ("one-for-all", "solo"):
        if fam is None:
            raise IllegalMove(f"start: a {mode} game names its familiar")
        fam = familiar(fam).id
    elif fam is not None:
        raise IllegalMove(f"start: 'familiar' is only for one-for-all or solo games, not {mode}")
    if mode == "solo" and len(players) != 1:
        raise IllegalMove("start: a solo familiar game has one player")
    if mode in ("asymmetric", "one-for-all") and len(players) < 2:
        # one player with a familiar is the rulebook's Solo: its cost comes off each sigil
        raise IllegalMove(f"start: {mode} familiars need two or more players (one player "
                          "plays a familiar in solo mode, which takes its cost off each sigil)")
    given = event.get("familiars")
    held: dict[str, str | None] = dict.fromkeys(players, fam)
    if given is not None:
        # a campaign's familiars, kept or changed between games: nobody picks
        if mode != "asymmetric":
            raise IllegalMove("start: 'familiars' gives each player's own familiar: only for "
                              "asymmetric games")
        if not isinstance(given, Mapping) or sorted(given) != sorted(players):
            raise IllegalMove("start: 'familiars' gives one familiar per player")
        held = {name: familiar(given[name]).id for name in players}
        if len(set(held.values())) != len(players):
            raise IllegalMove("start: each player holds a different familiar")
    made = tuple(Player(name, tuple(Card(layout, spider=held[name] == "F05")
                                    for layout in layouts), held[name]) for name in players)
    phase = "picking" if mode == "asymmetric" and given is None else "playing"
    new = GameState(phase=phase, players=made, card_names=tuple(x.name for x in layouts),
                    goals=tuple(g.number for g in goals), familiar_mode=mode)
    if phase == "playing" and any(_needs_setup(p) for p in made):
        new = dataclasses.replace(new, phase="setup")
    return new


def _pick_roll(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "picking" or state.pick_order:
        raise IllegalMove("pick_roll: familiars are picked once, before the first roll, in "
                          "asymmetric games")
    rolls = event.get("rolls")
    names = [p.name for p in state.players]
    if not isinstance(rolls, Mapping) or sorted(rolls) != sorted(names):
        raise IllegalMove(f"pick_roll: 'rolls' gives three dice for each player: {names}")
    sums = {name: sum(_ints(rolls[name], 3, f"pick_roll {name}", 1, 6)) for name in names}
    best = max(sums.values())
    leaders = [n for n in names if sums[n] == best]
    if len(leaders) > 1:
        raise IllegalMove(f"pick_roll: {', '.join(leaders)} tie for the highest sum ({best}): "
                          "roll again")
    first = names.index(leaders[0])
    return dataclasses.replace(state, pick_order=tuple(names[first:] + names[:first]))


def _pick(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "picking":
        raise IllegalMove("pick: familiars are picked before the first roll in asymmetric games")
    if not state.pick_order:
        raise IllegalMove("pick: roll for the pick order first (the highest sum picks first)")
    name = event.get("player")
    if name != state.pick_order[0]:
        raise IllegalMove(f"pick: it is {state.pick_order[0]}'s pick (highest sum first, then "
                          "clockwise)")
    card = familiar(event.get("familiar", ""))
    taken = {p.familiar for p in state.players}
    if card.id in taken:
        raise IllegalMove(f"pick: {card.id} ({card.name}) is already taken")
    player = dataclasses.replace(state.player(name), familiar=card.id)
    player = dataclasses.replace(player, cards=tuple(
        dataclasses.replace(c, spider=card.id == "F05") for c in player.cards))
    players = _replace_player(state, player)
    order = state.pick_order[1:]
    phase = "picking" if order else "playing"
    new = dataclasses.replace(state, players=players, pick_order=order, phase=phase)
    if phase == "playing" and any(_needs_setup(p) for p in players):
        new = dataclasses.replace(new, phase="setup")
    return new


def _setup(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "setup":
        raise IllegalMove("setup: only a Toad (F03) player chooses wild numbers, before the "
                          "first roll")
    player = state.player(event.get("player", ""))
    if not _needs_setup(player):
        raise IllegalMove(f"setup: {player.name} has nothing to set up")
    wild = _ints(event.get("wild"), CARDS, "setup wild", 1, 6)
    cards = tuple(dataclasses.replace(c, toad=n) for c, n in zip(player.cards, wild,
                                                                  strict=True))
    players = _replace_player(state, dataclasses.replace(player, cards=cards))
    phase = "setup" if any(_needs_setup(p) for p in players) else "playing"
    return dataclasses.replace(state, players=players, phase=phase)


def _roll(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase in ("new", "picking", "setup"):
        raise IllegalMove(f"roll: the game is not ready ({state.phase}): "
                          + ("pick familiars first" if state.phase == "picking"
                             else "Toad players choose wild numbers first"
                             if state.phase == "setup" else "start it first"))
    if state.phase in ("over", "tiebreak"):
        raise IllegalMove("roll: the game is over after 14 turns (all 7 boxes on top of both "
                          "cards are full)")
    if state.dice is not None:
        raise IllegalMove(f"roll: {', '.join(state.waiting_for)} must still use this roll "
                          "(pass the dice after everyone finishes)")
    dice = _ints(event.get("dice"), 3, "roll", 1, 6)
    players = tuple(dataclasses.replace(p, moved=False) for p in state.players)
    return dataclasses.replace(state, dice=dice, turn=state.turn + 1, players=players)


def effective_dice(state: GameState, power: Mapping[str, Any] | None) -> tuple[int, ...]:
    """The roll as a player uses it with ``power``: the Black Cat's turned die, the Bat's
    re-roll; the roll itself for any other power or none. Raises :class:`IllegalMove` when the
    power's numbers are out of range."""
    dice = tuple(state.dice or ())
    if not power:
        return dice
    fam = power.get("familiar")
    if fam == "F01":
        i = _ints([power.get("die")], 1, "Black Cat die", 0, 2)[0]
        to = _ints([power.get("to")], 1, "Black Cat number", 1, 6)[0]
        dice = tuple(to if k == i else d for k, d in enumerate(dice))
    elif fam == "F06":
        dice = _ints(power.get("dice"), 3, "Bat re-roll", 1, 6)
    return dice


def rolled_dice(state: GameState, power: Mapping[str, Any] | None) -> tuple[int, ...]:
    """The numbers a player rolled this turn: the shared roll, or the Bat's re-roll ("re-roll
    all three dice"), which is a roll too. The Black Cat's die is turned, not rolled: it
    keeps the shared roll here (:func:`effective_dice` has the turned die)."""
    if power and power.get("familiar") == "F06":
        return effective_dice(state, power)
    return tuple(state.dice or ())


def _triples(state: GameState, power: Mapping[str, Any] | None) -> bool:
    """Rolling Triples: "If three matching numbers are rolled, they are considered wild for all
    players." Decided by the rolled numbers (:func:`rolled_dice`), so three of a kind made by
    turning a die makes nothing wild."""
    return len(set(rolled_dice(state, power))) == 1


def _check_power(player: Player, power: Any) -> str | None:
    if power is None:
        return None
    if not isinstance(power, Mapping) or not isinstance(power.get("familiar"), str):
        raise IllegalMove(f"power: expected {{\"familiar\": \"Fxx\", ...}}, got {power!r}")
    fam = familiar(power["familiar"]).id
    if player.familiar != fam:
        raise IllegalMove(f"power: {player.name} does not have {fam} "
                          f"({'no familiar' if player.familiar is None else player.familiar})")
    card = familiar(fam)
    if card.kind != "once":
        raise IllegalMove(f"power: {fam} ({card.name}) is {card.kind}, not a one-off power "
                          "to use in a move")
    if fam in player.powers_used:
        raise IllegalMove(f"power: {fam} ({card.name}) is used once per game and was used")
    return fam


def check_power(state: GameState, player_name: str, power: Mapping[str, Any]) -> None:
    """Raise :class:`IllegalMove` when ``player_name`` may not use ``power`` in a move now:
    not their familiar, not a one-off power, or already used this game."""
    _check_power(state.player(player_name), power)


def _move(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "playing":
        raise IllegalMove(f"move: no turn is being played ({state.phase})")
    if state.dice is None:
        raise IllegalMove("move: roll the dice first")
    player = state.player(event.get("player", ""))
    if player.moved:
        raise IllegalMove(f"move: {player.name} has already played this turn")
    fam = _check_power(player, event.get("power"))
    power = event.get("power") if fam else None
    dice = effective_dice(state, power)
    k = event.get("card")
    if k not in range(CARDS) or isinstance(k, bool):
        raise IllegalMove(f"move: 'card' is 0 or 1, got {k!r}")
    card = player.cards[k]
    if card.full:
        raise IllegalMove(f"move: card {k + 1} is full: 7 turns per card (its 7 top boxes are "
                          "written), play the other card")
    i = event.get("die")
    if i not in range(3) or isinstance(i, bool):
        raise IllegalMove(f"move: 'die' is the index 0-2 of the die your cat steals, got {i!r}")
    triples = _triples(state, power)
    stuck = _stuck(player, dice, triples)
    wild = card.wild
    n = event.get("write")
    if n not in range(1, 7) or isinstance(n, bool):
        raise IllegalMove(f"move: 'write' is the number 1-6 written on top, got {n!r}")
    die_wild = triples or stuck or dice[i] in wild
    if n != dice[i] and not die_wild:
        shows = (f"die {i + 1} shows {dice[i]}" if n in dice   # another die shows n
                 else ("the roll is " if dice == state.dice else "your dice are ")
                 + " ".join(map(str, dice)))
        made = ("; a die the Black Cat turned makes no Rolling Triples: only three matching "
                "numbers rolled are wild" if len(set(dice)) == 1 else "")
        raise IllegalMove(f"move: you wrote {n} but {shows} (write one of the dice numbers; "
                          f"only a wild die acts as any number{made})")
    limit = _write_limit(player)
    if card.written(n) >= limit:
        raise IllegalMove(f"move: {n} is already written {card.written(n)} times on card {k + 1} "
                          "(Two of each: you can't write a number at the top more than twice)")
    count = card.written(n) + 1
    box = TopBox(n, circled=count >= 2)
    top = list(card.top)
    top[top.index(None)] = box
    wild_after = wild | {n} if box.circled else wild
    j, m = [x for x in range(3) if x != i]
    w1 = triples or stuck or dice[j] in wild_after
    w2 = triples or stuck or dice[m] in wild_after
    moth = fam == "F08"
    lines = list(card.lines)
    if fam == "F07":
        erase = _pair(power.get("erase"), "Snake erase")
        if erase not in lines:
            raise IllegalMove(f"Snake: {_said(card.layout, erase)} is not drawn on card {k + 1}")
        lines.remove(erase)
    work = dataclasses.replace(card, lines=tuple(lines))
    line_value = event.get("line")
    if line_value is None:
        any_line = any(_lines_for(c, 1, 1, True, True) for c in player.cards if not c.full)
        if any_line:
            raise IllegalMove("move: draw a line: some line can still be drawn (with all dice "
                              "wild when you are stuck)")
        new_lines = tuple(lines)
    else:
        line = _pair(line_value, "move line")
        if not _matches(card.layout, line, dice[j], dice[m], w1, w2):
            raise IllegalMove(f"move: {_said(card.layout, line)} does not match the dice: the "
                              f"other two dice show {dice[j]} and {dice[m]} (draw a line between "
                              "two candles matching the two remaining dice)")
        problem = work.chord_problem(line, moth=moth)
        if problem:
            raise IllegalMove(f"move: {problem}")
        new_lines = (*lines, line)
    if fam == "F02":
        extra = _pair(power.get("extra_line"), "Raven extra line")
        problem = dataclasses.replace(card, lines=new_lines).chord_problem(extra)
        if problem:
            raise IllegalMove(f"Raven: {problem}")
        new_lines = (*new_lines, extra)
    cross = event.get("cross")
    crossed = card.crossed
    if cross is None:
        options = [c for c in card.layout.candles_numbered(n) if c not in card.crossed]
        if fam != "F04" and options:
            raise IllegalMove(f"move: cross out a candle numbered {n} (your cat knocks over a "
                              "candle with the number you wrote): "
                              + ", ".join(_said(card.layout, candle=c) for c in options))
    else:
        if cross not in range(12) or isinstance(cross, bool):
            raise IllegalMove(f"move: 'cross' is a candle index 0-11, got {cross!r}")
        if card.layout.candles[cross].number != n:
            raise IllegalMove(f"move: {_said(card.layout, candle=cross)} shows "
                              f"{card.layout.candles[cross].number}, "
                              f"not {n} (cross out a candle with the number you wrote)")
        if cross in card.crossed:
            raise IllegalMove(f"move: {_said(card.layout, candle=cross)} is already crossed out "
                              "(Once: candles can only be crossed out once)")
        if fam == "F04":
            raise IllegalMove("Owl: using the Owl means crossing out no candle ('cross': null)")
        crossed = tuple(sorted((*crossed, cross)))
    new_card = dataclasses.replace(card, lines=tuple(sorted(new_lines)), crossed=crossed,
                                   top=tuple(top))
    new_player = _replace_card(player, k, new_card)
    new_player = dataclasses.replace(
        new_player, moved=True,
        powers_used=new_player.powers_used | ({fam} if fam else set()))
    players = _replace_player(state, new_player)
    new = dataclasses.replace(state, players=players)
    if all(p.moved for p in players):
        new = dataclasses.replace(new, dice=None)
        if new.turn >= TURNS:
            new = _finish(new)
    return new


def _finish(state: GameState) -> GameState:
    if len(state.players) < 2:
        return dataclasses.replace(state, phase="over")
    totals = {name: s["total"] for name, s in scores(state)["players"].items()}
    best = max(totals.values())
    tied = tuple(n for n, t in totals.items() if t == best)
    if len(tied) > 1:
        players = tuple(dataclasses.replace(p, moved=False) for p in state.players)
        return dataclasses.replace(state, phase="tiebreak", tied=tied, players=players,
                                   tiebreak_dice=None)
    return dataclasses.replace(state, phase="over", tied=())


def _tiebreak_roll(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "tiebreak":
        raise IllegalMove("tiebreak_roll: only tied players at the end of a game break ties")
    if state.tiebreak_dice is not None:
        raise IllegalMove("tiebreak_roll: the tied players must still draw their lines")
    dice = _ints(event.get("dice"), 2, "tiebreak_roll", 1, 6)
    players = tuple(dataclasses.replace(p, moved=False) for p in state.players)
    return dataclasses.replace(state, tiebreak_dice=dice, players=players)


def _tiebreak_line(state: GameState, event: Mapping[str, Any]) -> GameState:
    if state.phase != "tiebreak" or state.tiebreak_dice is None:
        raise IllegalMove("tiebreak_line: roll 2 dice first (Ties: roll 2 dice and tied players "
                          "draw 1 more line)")
    player = state.player(event.get("player", ""))
    if player.name not in state.tied:
        raise IllegalMove(f"tiebreak_line: {player.name} is not tied")
    if player.moved:
        raise IllegalMove(f"tiebreak_line: {player.name} has drawn this tie-break line")
    k = event.get("card")
    if k not in range(CARDS) or isinstance(k, bool):
        raise IllegalMove(f"tiebreak_line: 'card' is 0 or 1, got {k!r}")
    card = player.cards[k]
    d1, d2 = state.tiebreak_dice
    w1, w2 = d1 in card.wild, d2 in card.wild
    if event.get("line") is None:
        if any(_lines_for(c, d1, d2, d1 in c.wild, d2 in c.wild) for c in player.cards):
            raise IllegalMove("tiebreak_line: a line matching the two dice can be drawn")
        new_player = player
    else:
        line = _pair(event.get("line"), "tiebreak line")
        if not _matches(card.layout, line, d1, d2, w1, w2):
            raise IllegalMove(f"tiebreak_line: {_said(card.layout, line)} does not match the dice "
                              f"{d1} and {d2}")
        problem = card.chord_problem(line)
        if problem:
            raise IllegalMove(f"tiebreak_line: {problem}")
        new_card = dataclasses.replace(card, lines=tuple(sorted((*card.lines, line))))
        new_player = _replace_card(player, k, new_card)
    new_player = dataclasses.replace(new_player, moved=True,
                                     extra_lines=new_player.extra_lines + 1)
    new = dataclasses.replace(state, players=_replace_player(state, new_player))
    if all(p.moved for p in new.players if p.name in new.tied):
        new = _finish(dataclasses.replace(new, tiebreak_dice=None))
        if new.phase == "tiebreak" and not any(
                _lines_for(c, 1, 1, True, True) for p in new.players if p.name in new.tied
                for c in p.cards):
            new = dataclasses.replace(new, phase="over")  # no line left to break the tie
    return new


_HANDLERS = {
    "start": _start, "pick_roll": _pick_roll, "pick": _pick, "setup": _setup, "roll": _roll,
    "move": _move, "tiebreak_roll": _tiebreak_roll, "tiebreak_line": _tiebreak_line,
}


# ----------------------------------------------------------------------------- options

def legal_options(state: GameState, player_name: str,
                  power: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Every legal ``move`` event for a player this turn.

    ``power`` (a Black Cat's turn or a Bat's re-roll, as a move gives it) plays the turn with
    the dice as it leaves them (:func:`effective_dice`); triples stay those of the rolled
    numbers (:func:`rolled_dice`). The moves do not carry the power: add it to a move
    yourself, and check it with :func:`check_power`. Wild dice offer every number they may
    write; moves differing only in ``die`` index between equal dice are listed once.
    """
    if state.phase != "playing" or state.dice is None:
        return []
    player = state.player(player_name)
    if player.moved:
        return []
    dice = effective_dice(state, power)
    triples = _triples(state, power)
    stuck = _stuck(player, dice, triples)
    out: list[dict[str, Any]] = []
    for k, card in enumerate(player.cards):
        if card.full:
            continue
        seen_dice: set[int] = set()
        for i in range(3):
            if dice[i] in seen_dice:
                continue
            seen_dice.add(dice[i])
            j, m = [x for x in range(3) if x != i]
            die_wild = triples or stuck or dice[i] in card.wild
            for n in (range(1, 7) if die_wild else (dice[i],)):
                if card.written(n) >= _write_limit(player):
                    continue
                wild_after = card.wild | {n} if card.written(n) + 1 >= 2 else card.wild
                w1 = triples or stuck or dice[j] in wild_after
                w2 = triples or stuck or dice[m] in wild_after
                lines: list[Line | None] = list(_lines_for(card, dice[j], dice[m], w1, w2))
                if not lines:
                    if stuck and not any(_lines_for(c, 1, 1, True, True)
                                         for c in player.cards if not c.full):
                        lines = [None]
                    else:
                        continue
                crosses = [c for c in card.layout.candles_numbered(n) if c not in card.crossed]
                for line in lines:
                    for cross in crosses or [None]:
                        out.append({"type": "move", "player": player.name, "card": k, "die": i,
                                    "write": n, "line": None if line is None else list(line),
                                    "cross": cross})
    return out


def tiebreak_options(state: GameState, player_name: str) -> list[dict[str, Any]]:
    """Every legal ``tiebreak_line`` event for a tied player (a null line when none fits)."""
    if state.phase != "tiebreak" or state.tiebreak_dice is None:
        return []
    player = state.player(player_name)
    if player.name not in state.tied or player.moved:
        return []
    d1, d2 = state.tiebreak_dice
    out: list[dict[str, Any]] = []
    for k, card in enumerate(player.cards):
        for line in _lines_for(card, d1, d2, d1 in card.wild, d2 in card.wild):
            out.append({"type": "tiebreak_line", "player": player.name, "card": k,
                        "line": list(line)})
    return out or [{"type": "tiebreak_line", "player": player.name, "card": 0, "line": None}]


# ----------------------------------------------------------------------------- scores

def solo_win(sigil_totals: Sequence[int]) -> bool:
    """Solo Win: you meet or exceed 70 VP on every Sigil Card."""
    return bool(sigil_totals) and all(t >= SOLO_TARGET for t in sigil_totals)


def scores(state: GameState) -> dict[str, Any]:
    """Goal points of every sigil, familiar costs, totals, solo win and winners.

    Familiar costs are subtracted in asymmetric and solo games (as the rulebook says), not
    in one-for-all games where every player has the same power.
    """
    goals = parse_goals(state.goals) if state.goals else ()
    out: dict[str, Any] = {}
    for p in state.players:
        fam = familiar(p.familiar) if (p.familiar and state.familiar_mode in
                                       ("asymmetric", "solo")) else None
        sigils = []
        for card in p.cards:
            s = score_sigil(card.sigil(), goals, fam)
            s["layout"] = card.layout.name
            sigils.append(s)
        total = sum(s["total"] for s in sigils)
        out[p.name] = {"sigils": sigils, "total": total, "familiar": p.familiar,
                       "solo_win": solo_win([s["total"] for s in sigils])}
    best = max((v["total"] for v in out.values()), default=0)
    winners = [n for n, v in out.items() if v["total"] == best] if out else []
    result: dict[str, Any] = {"players": out, "phase": state.phase, "turn": state.turn}
    if len(out) == 1:
        name = next(iter(out))
        result["solo_win"] = out[name]["solo_win"] if state.phase == "over" else None
        result["winners"] = [name] if result["solo_win"] else []
    else:
        result["winners"] = winners if state.phase == "over" else []
    return result


def card_state(state: GameState, player: str, card: int) -> SigilState:
    """The sigil state (DESIGN.md shape) of one card of one player."""
    return state.player(player).cards[card].sigil_state()


__all__ = [
    "CARDS",
    "SOLO_TARGET",
    "TURNS",
    "Card",
    "GameConfig",
    "GameState",
    "IllegalMove",
    "Player",
    "apply",
    "card_state",
    "check_power",
    "effective_dice",
    "legal_options",
    "new_game",
    "replay",
    "roll",
    "rolled_dice",
    "scores",
    "solo_win",
    "tiebreak_options",
]
