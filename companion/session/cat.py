"""The Doom Cat adapter: readings and clicks in, turns for the rules engine out.

A Doom Cat turn arrives in pieces: the roll settles (the camera or a click), then each player
writes a die's number in a top box, draws a line and crosses a candle, in any order the camera
happens to see them. The session stores each piece as its own event (so each can be corrected
or undone on its own) and checks it at once against the legal turns the engine lists for that
player; when a player's three pieces are known, they go to the engine as one turn.

Session events (stored in the game's log):

=========  ============================================  ====================================
type       fields                                        means
=========  ============================================  ====================================
roll       dice [3 x 1-6 or null], source                the roll (null: unread, to be fixed)
write      player, card, value                           the number written on top
line       player, card, line [a, b]                     the line drawn between two candles
cross      player, card, candle                          the candle crossed out
turn       player, card, value, line, cross              a whole turn at once (clicks)
tiebreak   dice [2 x 1-6] / player, card, line           the tie-break roll / a tied line
pick_roll  rolls [3 x 1-6 per player]                    asymmetric familiars: the pick order
pick       player, familiar                              a player picks their familiar
power      player, familiar, [card], its parameters      a one-off familiar power this turn
=========  ============================================  ====================================

A power's parameters: the Black Cat (F01) ``die`` 0-2 and ``to`` 1-6; the Bat (F06) ``dice``
(the three re-rolled); the Raven (F02) ``card`` and ``extra_line``; the Snake (F07) ``card``
and ``erase``; the Owl (F04) and the Moth (F08) none. The power joins the player's pieces of
the turn and goes to the engine with the move. The camera uses two powers by itself: a second
line read in a turn is the Raven's extra line, a line erased during a turn the Snake's (when
that player has the familiar, unused).

Convention: players and cards are 0-based indices (card 0 and 1 of each player); candles the
indices 0-11 of the card's layout; lines pairs ``[a, b]`` with a < b.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from companion.session.engine import EngineMissing, Refused

try:
    from companion.doomcat.catalogue import GOALS_PER_GAME
    from companion.doomcat.layouts import load_layout
except ImportError as exc:  # pragma: no cover - the page says the engine is missing
    raise EngineMissing(f"the Doom Cat rules engine is not installed yet ({exc.name})") \
        from exc

from companion.session import catrules
from vision.sigil.geometry import card_geometry

PLAYER = {"type": "integer", "minimum": 0, "maximum": 5}
CARD = {"type": "integer", "minimum": 0, "maximum": 1}
FACE = {"type": "integer", "minimum": 1, "maximum": 6}
CANDLE = {"type": "integer", "minimum": 0, "maximum": 11}
LINE = {"type": "array", "items": CANDLE, "minItems": 2, "maxItems": 2}
SOURCE = {"enum": ["camera", "manual"]}
LAYOUT_NAME = {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,32}$"}
FAMILIAR = {"type": "string", "pattern": "^F0[1-9]$"}
POWER_KEYS = ("familiar", "die", "to", "dice", "extra_line", "erase")
PICK_FIRST = ("players pick their familiars first: everyone rolls three dice, the highest sum "
              "picks first, then clockwise")


@dataclass(frozen=True)
class Pieces:
    """What a player has done so far this turn."""

    card: int | None = None
    value: int | None = None
    line: tuple[int, int] | None = None
    cross: int | None = None
    power: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"card": self.card, "value": self.value,
                "line": None if self.line is None else list(self.line), "cross": self.cross,
                "power": None if self.power is None else dict(self.power)}


@dataclass(frozen=True)
class CatState:
    """The engine's state, the roll as read, and each player's pieces of the current turn.

    ``before_roll`` is the engine's state before the current roll was applied (a roll read
    again before anyone moved replaces it); None while the roll is not applied.
    """

    game: Any
    setup: Mapping[str, Any]
    roll: tuple[int | None, ...] | None = None
    before_roll: Any = None
    pieces: tuple[Pieces, ...] = ()
    notes: tuple[str, ...] = field(default=())


class CatAdapter:
    kind = "cat"
    title = "Doom Cat"

    def __init__(self, rules: catrules.CatRules | None = None) -> None:
        self.rules = rules if rules is not None else catrules.bind()
        self._layouts: dict[str, dict[str, Any]] = {}

    # -- catalogue -----------------------------------------------------------------------
    def layout(self, name: str) -> dict[str, Any]:
        """The layout's JSON for the page, with ``candle_names``: what a player calls each
        candle (Layout.candle_names), for the log, the hints and the corrections; and
        ``curves``: the control point of each ``must_curve`` line (:func:`curve_controls`),
        for the page's card and the share image."""
        if name not in self._layouts:
            layout = load_layout(name)
            self._layouts[name] = {**layout.to_json(), "candle_names": list(layout.candle_names),
                                   "curves": curve_controls(layout)}
        return self._layouts[name]

    def catalogue(self) -> dict[str, Any]:
        return self.rules.catalogue()

    # -- schemas -------------------------------------------------------------------------
    def setup_schema(self) -> dict[str, Any]:
        return {
            "type": "object", "required": ["players", "cards", "goals"],
            "additionalProperties": False,
            "properties": {
                "players": {"type": "array", "minItems": 1, "maxItems": 6, "items": {
                    "type": "object", "required": ["name"], "additionalProperties": False,
                    "properties": {"name": {"type": "string", "minLength": 1,
                                            "maxLength": 24}}}},
                "cards": {"type": "array", "minItems": 2, "maxItems": 2, "items": LAYOUT_NAME},
                # (a goal chosen twice is refused by its name in prepare_setup)
                "goals": {"type": "array", "minItems": min(GOALS_PER_GAME),
                          "maxItems": max(GOALS_PER_GAME),
                          "items": {"type": "integer", "minimum": 1, "maximum": 27}},
                "familiar_mode": {"enum": ["none", "one-for-all", "asymmetric", "solo"]},
                "familiar": {"type": ["string", "null"], "pattern": "^F0[1-9]$"},
                # each player's familiar, given (a campaign's between games): nobody picks
                "familiars": {"type": "object", "maxProperties": 6,
                              "additionalProperties": FAMILIAR},
                "demo": {"type": "boolean"},
                "campaign_line": {"enum": ["row 0", "row 1", "row 2", "column 0",
                                           "column 1", "column 2"]},
            }}

    def event_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["type"], "additionalProperties": False,
                "properties": {
                    "type": {"enum": ["roll", "write", "line", "cross", "turn", "toad",
                                      "tiebreak", "pick_roll", "pick", "power"]},
                    "dice": {"type": "array", "minItems": 2, "maxItems": 3,
                             "items": {"anyOf": [FACE, {"type": "null"}]}},
                    "player": PLAYER, "card": CARD, "value": FACE,
                    "line": {"anyOf": [LINE, {"type": "null"}]},
                    "cross": {"anyOf": [CANDLE, {"type": "null"}]}, "candle": CANDLE,
                    "wild": {"type": "array", "items": FACE, "minItems": 2, "maxItems": 2},
                    "box": {"type": "integer", "minimum": 0, "maximum": 6},
                    "source": SOURCE,
                    "rolls": {"type": "array", "minItems": 1, "maxItems": 6,
                              "items": {"type": "array", "items": FACE, "minItems": 3,
                                        "maxItems": 3}},
                    "familiar": FAMILIAR, "die": {"type": "integer", "minimum": 0, "maximum": 2},
                    "to": FACE, "extra_line": LINE, "erase": LINE,
                }}

    def prepare_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(setup)
        for letter in out["cards"]:
            try:
                self.layout(letter)
            except Exception as exc:   # BadInput / DataFileError from the loader
                raise Refused(f"sigil card {letter!r}: {exc}") from None
        goals = list(out["goals"])
        twice = next((n for n in goals if goals.count(n) > 1), None)
        if twice is not None:
            name = next((g["name"] for g in self.catalogue()["goals"] if g["number"] == twice),
                        "")
            raise Refused(f"goal #{twice:02d} {name} is chosen twice: a game uses "
                          f"{' or '.join(str(k) for k in sorted(GOALS_PER_GAME))} different "
                          "goal cards")
        names = [p["name"].strip() for p in out["players"]]
        if len(set(names)) != len(names):
            raise Refused("two players have the same name")
        out["players"] = [{"name": n} for n in names]
        mode = out.get("familiar_mode", "none")
        if mode == "solo" and len(names) != 1:
            raise Refused("a solo familiar game has one player")
        if mode == "none":
            out.pop("familiar", None)
        self.rules.check_setup(out)
        return out

    # -- folding -------------------------------------------------------------------------
    def initial(self, setup: Mapping[str, Any]) -> CatState:
        game = self.rules.new(setup)
        return CatState(game, setup, None, None, tuple(Pieces() for _ in setup["players"]))

    def apply(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        t = event["type"]
        if t == "roll":
            return self._roll(state, event)
        if t == "tiebreak":
            return self._tiebreak(state, event)
        if t == "pick_roll":
            return replace(state, game=self.rules.pick_roll(state.game, event["rolls"]))
        player = self._player(state, event)
        if t == "pick":
            return replace(state, game=self.rules.pick(state.game, player, event["familiar"]))
        if t == "toad":
            if self.rules.phase(state.game) != "setup":
                raise Refused("wild numbers are chosen before the first roll")
            return replace(state, game=self.rules.engine_event(state.game, {
                "type": "setup", "player": self._name(state, player),
                "wild": list(event["wild"])}))
        phase = self.rules.phase(state.game)
        if phase == "over":
            raise Refused("the game is over")
        if phase == "setup":
            raise Refused("players with the Toad choose their wild numbers first")
        if phase == "picking":
            raise Refused(PICK_FIRST)
        if state.roll is None or any(v is None for v in state.roll):
            raise Refused("roll the dice first" if state.roll is None else
                          "say the value of the unread die first (click it)")
        if self.rules.done(state.game, player):
            raise Refused(f"{self._name(state, player)} has finished this turn: wait for the "
                          "next roll")
        if t == "power":
            new = self._power(state, player, event)
        else:
            new = self._merge(state.pieces[player], event)
        options = self._options(state.game, player, new.power)
        if options is None:   # a power whose moves the engine judges whole
            if not self._complete_free(state, player, new, t):
                return _with_pieces(state, player, new)
            game = self.rules.move_with_power(state.game, player, new.to_json(), new.power or {})
            return self._played(state, player, game)
        fit = [o for o in options if _fits(new, o)]
        if not fit:
            raise Refused(self.rules.explain(state.game, player, new.to_json(), new.power))
        complete = new.value is not None and (
            new.line is not None or all(o["line"] is None for o in fit)) and (
            new.cross is not None or all(o["cross"] is None for o in fit))
        if not complete:
            return _with_pieces(state, player, new)
        return self._played(state, player, self.rules.move(state.game, player, fit[0]))

    def _played(self, state: CatState, player: int, game: Any) -> CatState:
        state = replace(_with_pieces(state, player, Pieces()), game=game)
        if self.rules.phase(game) != "turn":   # everyone has played: the dice pass
            state = replace(state, roll=None, before_roll=None)
        return state

    def _options(self, game: Any, player: int, power: Mapping[str, Any] | None,
                 ) -> list[dict[str, Any]] | None:
        if power is None:
            return self.rules.options(game, player)
        return self.rules.power_options(game, player, power)

    def _power(self, state: CatState, player: int, event: Mapping[str, Any]) -> Pieces:
        """The player's pieces with a one-off familiar power added (checked at once)."""
        have = state.pieces[player]
        if have.power is not None:
            raise Refused("a familiar power is already used this turn")
        power = {k: event[k] for k in POWER_KEYS if k in event}
        fam = power["familiar"]
        self.rules.check_power(state.game, player, power)
        need = {"F01": (("die", "to"), "Black Cat: say which die (1-3) turns and the number "
                                          "it shows"),
                "F06": (("dice",), "Bat: give the three dice of your re-roll"),
                "F02": (("extra_line",), "Raven: name the extra line (two candles) and its "
                                         "card"),
                "F07": (("erase",), "Snake: name the line to erase and its card")}
        keys, message = need.get(fam, ((), ""))
        if any(k not in power for k in keys) or (fam in ("F02", "F07") and "card" not in event):
            raise Refused(message)
        if fam == "F06" and (len(power["dice"]) != 3 or None in power["dice"]):
            raise Refused("Bat: give the three dice of your re-roll")
        card = event.get("card", have.card)
        if have.card is not None and card != have.card:
            raise Refused(f"this turn is played on card {have.card + 1}: the power is used on "
                          "the same Sigil Card")
        if fam == "F07":
            line = sorted(power["erase"])
            drawn = self.rules.sigil(state.game, player, card)["lines"]
            if line not in drawn:
                name = self.layout(str(state.setup["cards"][card]))["candle_names"]
                raise Refused(f"Snake: line {name[line[0]]} – {name[line[1]]} is not drawn on "
                              f"card {card + 1}")
            power["erase"] = line
        if fam == "F02":
            line = sorted(power["extra_line"])
            problem = self.rules.chord_problem(state.game, player, card, line)
            if problem:
                raise Refused(f"Raven: {problem}")
            power["extra_line"] = line
        new = replace(have, power=power, card=card)
        options = self._options(state.game, player, power)
        if options is not None and not any(_fits(new, o) for o in options):
            raise Refused(self.rules.explain(state.game, player, new.to_json(), power))
        return new

    def _complete_free(self, state: CatState, player: int, p: Pieces, t: str) -> bool:
        """Whether the pieces make a whole move (powers whose moves are not listed)."""
        if t == "turn":
            return True
        if p.value is None or p.line is None or p.card is None:
            return False
        if p.cross is not None:
            return True
        layout = self.layout(str(state.setup["cards"][p.card]))
        crossed = set(self.rules.sigil(state.game, player, p.card)["crossed"])
        return not any(c["number"] == p.value and i not in crossed
                       for i, c in enumerate(layout["candles"]))

    @staticmethod
    def _merge(have: Pieces, event: Mapping[str, Any]) -> Pieces:
        t = event["type"]
        if t == "turn":
            line = event.get("line")
            new = Pieces(event["card"], event["value"], None if line is None else _pair(line),
                         event.get("cross"), have.power)
            if any(getattr(have, k) is not None and getattr(have, k) != getattr(new, k)
                   for k in ("card", "value", "line", "cross")):
                raise Refused("this turn disagrees with what was already written or drawn")
            return new
        card = event["card"]
        if have.card is not None and have.card != card:
            raise Refused(f"this turn is played on card {have.card + 1}: the number, the "
                          "line and the cross all go on the same Sigil Card")
        if t == "write":
            if have.value is not None:
                raise Refused("a number is already written this turn")
            return replace(have, card=card, value=event["value"])
        if t == "line":
            if have.line is not None:
                raise Refused("a line is already drawn this turn (one line per turn)")
            if event.get("line") is None:
                raise Refused("say which two candles the line joins")
            return replace(have, card=card, line=_pair(event["line"]))
        if have.cross is not None:
            raise Refused("a candle is already crossed this turn (one per turn)")
        return replace(have, card=card, cross=event.get("candle", event.get("cross")))

    def _roll(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        dice = tuple(event["dice"])
        if len(dice) != 3:
            raise Refused("a Doom Cat roll is three dice")
        phase = self.rules.phase(state.game)
        if phase in ("over", "tiebreak"):
            raise Refused("the game is over after 14 turns (all 7 boxes on top of both cards "
                          "are full)")
        if phase == "setup":
            raise Refused("players with the Toad choose their wild numbers first")
        if phase == "picking":
            raise Refused(PICK_FIRST)
        base = state.game
        if phase == "turn":
            started = any(p != Pieces() for p in state.pieces) or any(
                self.rules.done(state.game, i) for i in range(len(state.pieces)))
            if started:
                raise Refused("the players are still using this roll: finish the turn first")
            base = state.before_roll   # the roll was read again before anyone moved
        if None in dice:
            return replace(state, game=base, roll=dice, before_roll=None)
        return replace(state, game=self.rules.roll(base, list(dice)), roll=dice,
                       before_roll=base)

    def _tiebreak(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        if self.rules.phase(state.game) != "tiebreak":
            raise Refused("there is no tie to break")
        if "dice" in event:
            if len(event["dice"]) != 2 or None in event["dice"]:
                raise Refused("the tie-break roll is two dice")
            engine_event = {"type": "tiebreak_roll", "dice": list(event["dice"])}
        else:
            player = self._player(state, {**event, "type": "line"}) if "card" in event else None
            if player is None:
                raise Refused("say which player draws the tie-break line, on which card")
            engine_event = {"type": "tiebreak_line", "player": self._name(state, player),
                            "card": event["card"], "line": event.get("line")}
        return replace(state, game=self.rules.engine_event(state.game, engine_event))

    def _player(self, state: CatState, event: Mapping[str, Any]) -> int:
        if "player" not in event or ("card" not in event
                                     and event["type"] not in ("toad", "pick", "power")):
            raise Refused("say which player and which card")
        p = event["player"]
        if p >= len(state.pieces):
            raise Refused(f"there is no player {p + 1} in this game")
        need = {"write": ("value",), "line": ("line",), "cross": ("candle",),
                "turn": ("value", "line", "cross"), "toad": ("wild",),
                "pick": ("familiar",), "power": ("familiar",)}[event["type"]]
        missing = [k for k in need if k not in event
                   and not (k == "candle" and event.get("cross") is not None)]
        if missing:
            raise Refused(f"a {event['type']} needs {', '.join(missing)}")
        return int(p)

    @staticmethod
    def _name(state: CatState, player: int) -> str:
        return str(state.setup["players"][player]["name"])

    # -- the camera ----------------------------------------------------------------------
    def card_layout(self, state: CatState, player: int, card: int) -> str | None:
        if not 0 <= player < len(state.setup["players"]) or card not in (0, 1):
            return None
        return str(state.setup["cards"][card])

    def card_name(self, state: CatState, player: int, card: int) -> str:
        """A player's card as players say it, counted from one: "Ann, card 2"."""
        return f"{self._said_player(state, player)}, card {card + 1}"

    @staticmethod
    def _said_player(state: CatState, player: Any) -> str:
        """A player's name from the game's setup ("player 3" for no such player)."""
        players = state.setup.get("players", [])
        if isinstance(player, int) and 0 <= player < len(players):
            return str(players[player]["name"])
        return f"player {player + 1}" if isinstance(player, int) else "a player"

    def player_familiar(self, state: CatState, player: int) -> str | None:
        """The familiar a player holds (``"F04"``), None when none (or no such player)."""
        players = getattr(state.game, "players", ())
        if not 0 <= player < len(players):
            return None
        return players[player].familiar

    def from_tracker(self, state: CatState, doc: Mapping[str, Any]) -> dict[str, Any] | None:
        """A session event from a tracker event (``companion.tracker`` JSON), or None.

        Sigil events carry ``player`` and ``card_index`` (added by the hub from the camera
        card they were read on).
        """
        kind = doc.get("kind")
        if kind == "roll":
            values = list(doc.get("values", []))
            if self.rules.phase(state.game) == "tiebreak" and len(values) == 2:
                return {"type": "tiebreak", "dice": values, "source": "camera"}
            if self.rules.phase(state.game) == "picking":
                raise Refused("the familiar pick rolls are entered on the Doom Cat page")
            if len(values) != 3:
                raise Refused(f"the camera sees {len(values)} dice; Doom Cat rolls three")
            if self.rules.phase(state.game) == "turn" and (
                    any(p != Pieces() for p in state.pieces)):
                return None   # dice nudged while the players use them
            return {"type": "roll", "dice": values, "source": "camera"}
        if "player" not in doc or "card_index" not in doc:
            return None
        who = {"player": int(doc["player"]), "card": int(doc["card_index"]),
               "source": "camera"}
        if kind == "digit":
            return {"type": "write", **who, "value": int(doc["value"])}
        if kind == "line":
            line = sorted(int(v) for v in doc["line"])
            power = self._camera_power(state, who, "F02", "extra_line", line)
            if power is not False:
                return power
            return {"type": "line", **who, "line": line}
        if kind == "crossed":
            return {"type": "cross", **who, "candle": int(doc["candle"])}
        if kind == "erased" and not doc.get("wiped"):
            elements = list(doc.get("elements", []))
            if len(elements) == 1 and str(elements[0]).startswith("line "):
                line = sorted(int(v) for v in str(elements[0])[5:].split("-"))
                power = self._camera_power(state, who, "F07", "erase", line)
                if power is not False:
                    return power
            raise Refused(f"{doc.get('text', 'something was erased')}: if it was a mistake, "
                          "undo it here")
        return None

    def _camera_power(self, state: CatState, who: Mapping[str, Any], familiar: str, key: str,
                      line: list[int]) -> dict[str, Any] | bool | None:
        """A line drawn or erased that is a familiar's power this turn: the Raven's second
        line (a line is already drawn this turn), the Snake's erased line. The power event,
        None when the power already holds this line, False when it is no power."""
        p = who["player"]
        if p >= len(state.pieces) or self.rules.phase(state.game) != "turn" \
                or self.rules.done(state.game, p):
            return False
        have = state.pieces[p]
        if have.power is not None:
            same = have.power.get("familiar") == familiar and have.power.get(key) == line
            return None if same else False
        fam = self.rules.familiar(state.game, p)
        if fam is None or fam["id"] != familiar or fam["used"]:
            return False
        if familiar == "F02" and have.line is None:
            return False   # the turn's own line comes first
        if have.card is not None and have.card != who["card"]:
            return False
        return {"type": "power", "player": p, "card": who["card"], "familiar": familiar,
                key: line, "source": "camera"}

    # -- views ---------------------------------------------------------------------------
    def view(self, state: CatState) -> dict[str, Any]:
        g = state.game
        phase = self.rules.phase(g)
        if phase in ("turn", "roll") and state.roll is not None and None in state.roll:
            phase = "roll"
        sc = self.rules.scores(g)
        players = []
        for p, player in enumerate(state.setup["players"]):
            mine = sc["players"][player["name"]]
            pieces = state.pieces[p]
            cards = []
            total = mine["total"]
            for c, letter in enumerate(state.setup["cards"]):
                score = dict(mine["sigils"][c])
                if pieces.card == c and pieces != Pieces():
                    # the live score: this turn's pieces count as soon as they are read
                    live = self.rules.score_pending(g, p, pieces.to_json())
                    total += live["total"] - score["total"]
                    score = {**score, **live, "pending": True}
                cards.append({"letter": letter, "layout": self.layout(letter),
                              "sigil": self.rules.sigil(g, p, c),
                              "wild": self.rules.wilds(g, p, c), "score": score})
            done = self.rules.done(g, p)
            power = state.pieces[p].power
            playing = phase == "turn" and not done
            options = self._options(g, p, power) if playing else []
            free = options is None   # a power the engine judges whole: the plain moves hint
            if options is None:
                options = self.rules.options(g, p)
            familiar = self.rules.familiar(g, p)
            if familiar is not None:
                familiar["usable"] = (familiar["kind"] == "once" and not familiar["used"]
                                      and phase == "turn" and not done and power is None)
                if familiar["id"] == "F02" and phase == "turn" and not done:
                    for c, card in enumerate(cards):
                        card["open_lines"] = self.rules.open_lines(g, p, c)
            players.append({
                "name": player["name"], "familiar": familiar, "power_free": free,
                "cards": cards, "pieces": state.pieces[p].to_json(), "done": done,
                "options": _summarise(options, state.pieces[p]), "total": total,
                "solo_win": mine.get("solo_win")})
        return {
            "phase": phase, "turn": self.rules.turn_number(g), "turns": 14,
            "roll": None if state.roll is None else list(state.roll),
            "wild_roll": state.roll is not None and None not in state.roll
            and len(set(state.roll)) == 1,
            "goals": self.rules.goals(g), "players": players,
            "familiar_mode": state.setup.get("familiar_mode", "none"),
            "picking": self.rules.picking(g),
            "tiebreak": self.rules.tiebreak(g),
            "verdict": self._verdict(state, sc) if phase == "over" else None,
            "demo": bool(state.setup.get("demo")),
        }

    def _verdict(self, state: CatState, sc: Mapping[str, Any]) -> dict[str, Any]:
        out = self._verdict_text(state, sc)
        out["sigils"] = {n: [s["total"] for s in v["sigils"]] for n, v in sc["players"].items()}
        # each player's familiar and its cost (already taken off each sigil's total above)
        out["familiars"] = {}
        for i, player in enumerate(state.setup["players"]):
            fam = self.rules.familiar(state.game, i)
            out["familiars"][player["name"]] = None if fam is None else {
                "id": fam["id"], "cost": int(fam.get("cost", 0))}
        return out

    def _verdict_text(self, state: CatState, sc: Mapping[str, Any]) -> dict[str, Any]:
        totals = {n: v["total"] for n, v in sc["players"].items()}
        if len(totals) == 1:
            name = next(iter(totals))
            sigils = [s["total"] for s in sc["players"][name]["sigils"]]
            win = bool(sc.get("solo_win"))
            text = (f"Solo win! {name}: {' and '.join(map(str, sigils))} VP, 70 or more on "
                    "each sigil" if win else
                    f"Solo loss: {name} scored {' and '.join(map(str, sigils))} VP; each sigil "
                    "needs 70")
            return {"text": text, "solo": {"win": win}, "winners": sc.get("winners", []),
                    "totals": totals}
        winners = sc.get("winners", [])
        best = max(totals.values())
        text = (f"{winners[0]} wins with {best} VP" if len(winners) == 1 else
                f"Tie at {best} VP between {', '.join(winners)}")
        return {"text": text, "winners": winners, "totals": totals}

    def describe(self, event: Mapping[str, Any], state: CatState) -> str:
        t = event.get("type")
        who = self.card_name(state, event.get("player", 0), event.get("card", 0))
        player = self._said_player(state, event.get("player", 0))
        cam = " (camera)" if event.get("source") == "camera" else ""
        names = self._candle_names(state, event.get("card", 0))

        def candle(c: Any) -> str:
            return names[c] if isinstance(c, int) and 0 <= c < len(names) else str(c)

        def line(pair: Any) -> str:
            a, b = pair if isinstance(pair, (list, tuple)) and len(pair) == 2 else ("?", "?")
            return f"line {candle(a)} – {candle(b)}"

        if t == "roll":
            return "roll " + " ".join("?" if v is None else str(v)
                                      for v in event.get("dice", [])) + cam
        if t == "write":
            return f"{who}: writes {event.get('value')}{cam}"
        if t == "line":
            return f"{who}: {line(event.get('line'))}{cam}"
        if t == "cross":
            return f"{who}: crosses candle {candle(event.get('candle', event.get('cross')))}{cam}"
        if t == "turn":
            drawn = "no line" if event.get("line") is None else line(event["line"])
            return (f"{who}: writes {event.get('value')}, {drawn}, crosses candle "
                    f"{candle(event.get('cross'))}")
        if t == "pick_roll":
            rolls = enumerate(event.get("rolls", []))
            return "familiar pick rolls: " + ", ".join(
                f"{self._said_player(state, i)} {sum(r)}" for i, r in rolls)
        if t == "pick":
            return f"{player}: picks familiar {event.get('familiar')}"
        if t == "power":
            fam = event.get("familiar")
            detail = {"F01": lambda: f": die {event.get('die', 0) + 1} turned to {event.get('to')}",
                      "F06": lambda: ": re-rolls " + " ".join(map(str, event.get("dice", []))),
                      "F02": lambda: ": extra " + line(event.get("extra_line")),
                      "F07": lambda: ": erases " + line(event.get("erase")),
                      }.get(str(fam), lambda: "")()
            return f"{player}: uses {fam}{detail}"
        if t == "toad":
            return f"{player}: Toad wild numbers {event.get('wild')}"
        if t == "tiebreak":
            if "dice" in event:
                return "tie-break roll " + " ".join(str(v) for v in event["dice"])
            return f"{who}: tie-break " + ("no line" if event.get("line") is None else
                                          line(event["line"]))
        return str(t)

    def _candle_names(self, state: CatState, card: Any) -> tuple[str, ...]:
        """The candles of the game's card ``card`` in a player's words (Layout.candle_names);
        () when the setup names no such card."""
        cards = state.setup.get("cards", [])
        if not isinstance(card, int) or not 0 <= card < len(cards):
            return ()
        return tuple(self.layout(str(cards[card]))["candle_names"])

    def result(self, state: CatState) -> dict[str, Any] | None:
        if self.rules.phase(state.game) != "over":
            return None
        verdict = self._verdict(state, self.rules.scores(state.game))
        return {**verdict, "summary": verdict["text"]}

    def share_png(self, state: CatState, record: Any,
                  photos: Mapping[tuple[int, int], Any] | None = None) -> bytes:
        from companion.session.share import share_png
        return share_png(self.view(state), title=getattr(record, "title", "Doom Cat"),
                         photos=photos)


def curve_controls(layout: Any) -> dict[str, list[float]]:
    """Where each line of the layout's ``must_curve`` is drawn: ``{"a-b": [x, y]}``, the control
    point of the quadratic curve from candle a to candle b bowed just enough to keep clear of
    the other candles (the gentlest arc of :meth:`vision.sigil.geometry.CardGeometry.detour`,
    the path the sigil reader expects a player to draw).

    Convention: card mm, origin top-left. The arc's peak lies ``bow`` off the chord's middle,
    so the control point lies twice as far: ``middle + 2 * bow * normal``.
    """
    geom = card_geometry(layout)
    out = {}
    for a, b in layout.must_curve:
        pa, pb = np.array(layout.candles[a].center), np.array(layout.candles[b].center)
        d = pb - pa
        normal = np.array([-d[1], d[0]]) / max(float(np.linalg.norm(d)), 1e-9)
        control = (pa + pb) / 2 + 2 * geom.detour(a, b) * normal
        out[f"{a}-{b}"] = [round(float(v), 2) for v in control]
    return out


def _pair(line: Sequence[int]) -> tuple[int, int]:
    a, b = int(line[0]), int(line[1])
    if a == b:
        raise Refused("a line joins two different candles")
    return (a, b) if a < b else (b, a)


def _fits(p: Pieces, option: Mapping[str, Any]) -> bool:
    return ((p.card is None or p.card == option["card"])
            and (p.value is None or p.value == option["value"])
            and (p.line is None or (option["line"] is not None
                                    and tuple(sorted(option["line"])) == p.line))
            and (p.cross is None or p.cross == option["cross"]))


def _with_pieces(state: CatState, player: int, pieces: Pieces) -> CatState:
    return replace(state, pieces=tuple(pieces if i == player else p
                                       for i, p in enumerate(state.pieces)))


def _summarise(options: Sequence[Mapping[str, Any]], have: Pieces) -> list[dict[str, Any]]:
    """The legal choices left for a player, per card: values, lines and candles."""
    out = []
    for card in (0, 1):
        fit = [o for o in options if o["card"] == card and _fits(have, o)]
        if not fit:
            continue
        out.append({"card": card,
                    "values": sorted({o["value"] for o in fit}),
                    "lines": sorted({tuple(sorted(o["line"])) for o in fit
                                     if o["line"] is not None}),
                    "crosses": sorted({o["cross"] for o in fit if o["cross"] is not None}),
                    "no_line": any(o["line"] is None for o in fit),
                    "count": len(fit)})
    return out
