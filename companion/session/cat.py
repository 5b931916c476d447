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
=========  ============================================  ====================================

Convention: players and cards are 0-based indices (card 0 and 1 of each player); candles the
indices 0-11 of the card's layout; lines pairs ``[a, b]`` with a < b.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from companion.session.engine import EngineMissing, Refused

try:
    from companion.doomcat.layouts import load_layout
except ImportError as exc:  # pragma: no cover - the page says the engine is missing
    raise EngineMissing(f"the Doom Cat rules engine is not installed yet ({exc.name})") \
        from exc

from companion.session import catrules

PLAYER = {"type": "integer", "minimum": 0, "maximum": 5}
CARD = {"type": "integer", "minimum": 0, "maximum": 1}
FACE = {"type": "integer", "minimum": 1, "maximum": 6}
CANDLE = {"type": "integer", "minimum": 0, "maximum": 11}
LINE = {"type": "array", "items": CANDLE, "minItems": 2, "maxItems": 2}
SOURCE = {"enum": ["camera", "manual"]}


@dataclass(frozen=True)
class Pieces:
    """What a player has done so far this turn."""

    card: int | None = None
    value: int | None = None
    line: tuple[int, int] | None = None
    cross: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"card": self.card, "value": self.value,
                "line": None if self.line is None else list(self.line), "cross": self.cross}


@dataclass(frozen=True)
class CatState:
    """The engine's state, the roll as read, and each player's pieces of the current turn."""

    game: Any
    setup: Mapping[str, Any]
    roll: tuple[int | None, ...] | None = None
    pieces: tuple[Pieces, ...] = ()
    tiebreak: tuple[int, ...] | None = None
    notes: tuple[str, ...] = field(default=())


class CatAdapter:
    kind = "cat"
    title = "Doom Cat"

    def __init__(self, rules: catrules.CatRules | None = None) -> None:
        self.rules = rules if rules is not None else catrules.bind()
        self._layouts: dict[str, dict[str, Any]] = {}

    # -- catalogue -----------------------------------------------------------------------
    def layout(self, name: str) -> dict[str, Any]:
        if name not in self._layouts:
            self._layouts[name] = load_layout(name).to_json()
        return self._layouts[name]

    def catalogue(self) -> dict[str, Any]:
        return self.rules.catalogue()

    # -- schemas -------------------------------------------------------------------------
    def setup_schema(self) -> dict[str, Any]:
        return {
            "type": "object", "required": ["players", "goals"], "additionalProperties": False,
            "properties": {
                "players": {"type": "array", "minItems": 1, "maxItems": 6, "items": {
                    "type": "object", "required": ["name", "letters"],
                    "additionalProperties": False, "properties": {
                        "name": {"type": "string", "minLength": 1, "maxLength": 24},
                        "letters": {"type": "array", "minItems": 2, "maxItems": 2,
                                    "items": {"type": "string", "pattern":
                                              "^[A-Za-z0-9_-]{1,32}$"}},
                        "familiar": {"type": ["string", "null"],
                                     "pattern": "^F0[1-9]$"}}}},
                "goals": {"type": "array", "minItems": 2, "maxItems": 3, "uniqueItems": True,
                          "items": {"type": "integer", "minimum": 1, "maximum": 27}},
                "familiar": {"type": ["string", "null"], "pattern": "^F0[1-9]$"},
                "familiar_mode": {"enum": ["none", "one-for-all", "asymmetric"]},
                "demo": {"type": "boolean"},
            }}

    def event_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["type"], "additionalProperties": False,
                "properties": {
                    "type": {"enum": ["roll", "write", "line", "cross", "turn", "tiebreak"]},
                    "dice": {"type": "array", "minItems": 2, "maxItems": 3,
                             "items": {"anyOf": [FACE, {"type": "null"}]}},
                    "player": PLAYER, "card": CARD, "value": FACE, "line": LINE,
                    "cross": CANDLE, "candle": CANDLE, "box": {"type": "integer", "minimum": 0,
                                                               "maximum": 6},
                    "source": SOURCE,
                }}

    def prepare_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: v for k, v in setup.items()}
        for i, player in enumerate(out["players"]):
            for letter in player["letters"]:
                try:
                    self.layout(letter)
                except Exception as exc:   # BadInput / DataFileError from the loader
                    raise Refused(f"player {i + 1}: sigil {letter!r}: {exc}") from None
        self.rules.check_setup(out)
        return out

    # -- folding -------------------------------------------------------------------------
    def initial(self, setup: Mapping[str, Any]) -> CatState:
        game = self.rules.new(setup)
        return CatState(game, setup, None, tuple(Pieces() for _ in setup["players"]))

    def apply(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        t = event["type"]
        if t == "roll":
            return self._roll(state, event)
        if t == "tiebreak":
            return self._tiebreak(state, event)
        player = self._player(state, event)
        if self.rules.phase(state.game) == "over":
            raise Refused("the game is over")
        if state.roll is None or any(v is None for v in state.roll):
            raise Refused("roll the dice first" if state.roll is None else
                          "say the value of the unread die first (click it)")
        if self.rules.done(state.game, player):
            raise Refused(f"{self._name(state, player)} has finished this turn: wait for the "
                          "next roll")
        have = state.pieces[player]
        if t == "turn":
            new = Pieces(event["card"], event["value"], _pair(event["line"]), event["cross"])
            if any(getattr(have, k) is not None and getattr(have, k) != getattr(new, k)
                   for k in ("card", "value", "line", "cross")):
                raise Refused("this turn disagrees with what was already written or drawn")
        else:
            card = event["card"]
            if have.card is not None and have.card != card:
                raise Refused(f"this turn is played on card {have.card + 1}: the number, the "
                              "line and the cross all go on the same Sigil Card")
            if t == "write":
                if have.value is not None:
                    raise Refused("a number is already written this turn")
                new = replace(have, card=card, value=event["value"])
            elif t == "line":
                if have.line is not None:
                    raise Refused("a line is already drawn this turn (one line per turn)")
                new = replace(have, card=card, line=_pair(event["line"]))
            else:
                if have.cross is not None:
                    raise Refused("a candle is already crossed this turn (one per turn)")
                new = replace(have, card=card, cross=event.get("candle", event.get("cross")))
        options = self.rules.options(state.game, player)
        if not any(_fits(new, o) for o in options):
            raise Refused(self.rules.explain(state.game, player, new.to_json()) or
                          "no legal turn allows this")
        if None in (new.card, new.value, new.line, new.cross):
            return _with_pieces(state, player, new)
        game = self.rules.turn(state.game, player, new.to_json())
        state = replace(_with_pieces(state, player, Pieces()), game=game)
        if self.rules.phase(game) != "turn":   # everyone has played: the dice pass
            state = replace(state, roll=None)
        return state

    def _roll(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        dice = tuple(event["dice"])
        if len(dice) != 3:
            raise Refused("a Doom Cat roll is three dice")
        phase = self.rules.phase(state.game)
        if phase == "over":
            raise Refused("the game is over")
        started = any(p != Pieces() for p in state.pieces) or any(
            self.rules.done(state.game, i) for i in range(len(state.pieces)))
        if phase == "turn" and started:
            raise Refused("the players are still using this roll: finish the turn first")
        if state.roll is not None and phase == "turn" and not started \
                and None not in state.roll and None not in dice:
            # the roll was re-read before anyone moved: the new reading replaces it
            game = self.rules.unroll(state.game)
        else:
            game = state.game
        if None in dice:
            return replace(state, game=game, roll=dice)
        return replace(state, game=self.rules.roll(game, list(dice)), roll=dice)

    def _tiebreak(self, state: CatState, event: Mapping[str, Any]) -> CatState:
        if self.rules.phase(state.game) != "tiebreak":
            raise Refused("there is no tie to break")
        game = self.rules.tiebreak(state.game, dict(event))
        return replace(state, game=game)

    def _player(self, state: CatState, event: Mapping[str, Any]) -> int:
        if "player" not in event or "card" not in event:
            raise Refused("say which player and which card")
        p = event["player"]
        if p >= len(state.pieces):
            raise Refused(f"there is no player {p + 1} in this game")
        need = {"write": ("value",), "line": ("line",), "cross": ("candle",),
                "turn": ("value", "line", "cross")}[event["type"]]
        missing = [k for k in need if k not in event and not (k == "candle" and "cross" in event)]
        if missing:
            raise Refused(f"a {event['type']} needs {', '.join(missing)}")
        return int(p)

    @staticmethod
    def _name(state: CatState, player: int) -> str:
        return str(state.setup["players"][player]["name"])

    # -- the camera ----------------------------------------------------------------------
    def card_layout(self, state: CatState, player: int, card: int) -> str | None:
        players = state.setup["players"]
        if not 0 <= player < len(players) or card not in (0, 1):
            return None
        return str(players[player]["letters"][card])

    def from_tracker(self, state: CatState, doc: Mapping[str, Any]) -> dict[str, Any] | None:
        """A session event from a tracker event (``companion.tracker`` JSON), or None.

        Sigil events carry ``player`` and ``card_index`` (added by the hub from the camera
        card they were read on).
        """
        kind = doc.get("kind")
        if kind == "roll":
            values = list(doc.get("values", []))
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
            return {"type": "line", **who, "line": [int(v) for v in doc["line"]]}
        if kind == "crossed":
            return {"type": "cross", **who, "candle": int(doc["candle"])}
        if kind == "erased" and not doc.get("wiped"):
            raise Refused(f"{doc.get('text', 'something was erased')}: if it was a mistake, "
                          "undo it here")
        return None

    # -- views ---------------------------------------------------------------------------
    def view(self, state: CatState) -> dict[str, Any]:
        g = state.game
        phase = self.rules.phase(g)
        if phase == "turn" and state.roll is not None and None in state.roll:
            phase = "roll"
        players = []
        for p, player in enumerate(state.setup["players"]):
            cards = []
            for c, letter in enumerate(player["letters"]):
                sigil = self.rules.sigil(g, p, c)
                cards.append({"letter": letter, "layout": self.layout(letter), "sigil": sigil,
                              "wild": self.rules.wilds(g, p, c),
                              "score": self.rules.score(g, p, c)})
            done = self.rules.done(g, p)
            options = self.rules.options(g, p) if phase == "turn" and not done else []
            players.append({
                "name": player["name"], "familiar": self.rules.familiar(g, p),
                "cards": cards, "pieces": state.pieces[p].to_json(), "done": done,
                "options": _summarise(options, state.pieces[p]),
                "total": sum(c["score"].get("total", 0) for c in cards)})
        return {
            "phase": phase, "turn": self.rules.turn_number(g), "turns": 14,
            "roll": None if state.roll is None else list(state.roll),
            "wild_roll": state.roll is not None and None not in state.roll
            and len(set(state.roll)) == 1,
            "goals": self.rules.goals(g), "players": players,
            "verdict": self.rules.verdict(g), "demo": bool(state.setup.get("demo")),
        }

    def describe(self, event: Mapping[str, Any]) -> str:
        t = event.get("type")
        who = f"player {event.get('player', 0) + 1}, card {event.get('card', 0) + 1}"
        cam = " (camera)" if event.get("source") == "camera" else ""
        if t == "roll":
            return "roll " + " ".join("?" if v is None else str(v)
                                      for v in event.get("dice", [])) + cam
        if t == "write":
            return f"{who}: writes {event.get('value')}{cam}"
        if t == "line":
            a, b = event.get("line", ["?", "?"])
            return f"{who}: line {a}-{b}{cam}"
        if t == "cross":
            return f"{who}: crosses candle {event.get('candle', event.get('cross'))}{cam}"
        if t == "turn":
            a, b = event.get("line", ["?", "?"])
            return (f"{who}: writes {event.get('value')}, line {a}-{b}, crosses candle "
                    f"{event.get('cross')}")
        if t == "tiebreak":
            return "tie-break " + (" ".join(str(v) for v in event["dice"]) if "dice" in event
                                   else f"player {event.get('player', 0) + 1} line")
        return str(t)

    def result(self, state: CatState) -> dict[str, Any] | None:
        verdict = self.rules.verdict(state.game)
        if not verdict:
            return None
        return {**verdict, "summary": verdict.get("text", "game over")}

    def share_png(self, state: CatState, record: Any,
                  photos: Mapping[tuple[int, int], Any] | None = None) -> bytes:
        from companion.session.share import share_png
        return share_png(self.view(state), title=getattr(record, "title", "Doom Cat"),
                         photos=photos)


def _pair(line: Sequence[int]) -> tuple[int, int]:
    a, b = int(line[0]), int(line[1])
    if a == b:
        raise Refused("a line joins two different candles")
    return (a, b) if a < b else (b, a)


def _fits(p: Pieces, option: Mapping[str, Any]) -> bool:
    return ((p.card is None or p.card == option["card"])
            and (p.value is None or p.value == option["value"])
            and (p.line is None or tuple(sorted(option["line"])) == p.line)
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
                    "lines": sorted({tuple(sorted(o["line"])) for o in fit}),
                    "crosses": sorted({o["cross"] for o in fit}),
                    "count": len(fit)})
    return out
