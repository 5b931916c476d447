"""What the Doom Cat session asks of the rules engine (``companion.doomcat``), in one place.

:class:`CatRules` is the narrow interface the adapter (:mod:`companion.session.cat`) uses;
:class:`EngineRules` (made by :func:`bind`) puts the installed engine behind it. Players and
cards are 0-based indices here (the engine names players); an option is a legal ``move``
``{"card", "value", "line": [a, b] | None, "cross": c | None, "event": <engine event>}``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from companion.session.engine import EngineMissing, Refused


class CatRules(Protocol):
    def catalogue(self) -> dict[str, Any]: ...
    def check_setup(self, setup: Mapping[str, Any]) -> None: ...
    def new(self, setup: Mapping[str, Any]) -> Any: ...
    def phase(self, game: Any) -> str:
        """``"roll"`` (waiting for dice), ``"turn"``, ``"setup"`` (Toad players choose wild
        numbers), ``"tiebreak"`` or ``"over"``."""
        ...
    def roll(self, game: Any, dice: list[int]) -> Any: ...
    def options(self, game: Any, player: int) -> list[dict[str, Any]]: ...
    def explain(self, game: Any, player: int, pieces: Mapping[str, Any]) -> str: ...
    def move(self, game: Any, player: int, option: Mapping[str, Any]) -> Any: ...
    def done(self, game: Any, player: int) -> bool: ...
    def engine_event(self, game: Any, event: Mapping[str, Any]) -> Any: ...
    def sigil(self, game: Any, player: int, card: int) -> dict[str, Any]: ...
    def wilds(self, game: Any, player: int, card: int) -> list[int]: ...
    def scores(self, game: Any) -> dict[str, Any]: ...
    def score_pending(self, game: Any, player: int, pieces: Mapping[str, Any],
                      ) -> dict[str, Any]:
        """The score of the card a player is drawing on, with this turn's pieces so far."""
        ...
    def familiar(self, game: Any, player: int) -> dict[str, Any] | None:
        """The player's familiar card (JSON) with ``used``: its one-off power is spent."""
        ...
    def picking(self, game: Any) -> dict[str, Any] | None:
        """Asymmetric picks: ``{"order", "next", "taken"}`` while familiars are picked."""
        ...
    def pick_roll(self, game: Any, rolls: list[list[int]]) -> Any: ...
    def pick(self, game: Any, player: int, familiar: str) -> Any: ...
    def check_power(self, game: Any, player: int, power: Mapping[str, Any]) -> None: ...
    def power_options(self, game: Any, player: int, power: Mapping[str, Any],
                      ) -> list[dict[str, Any]] | None:
        """The legal moves with this power, or None when the power's moves are not listed
        (the engine judges the whole move: :meth:`move_with_power`)."""
        ...
    def move_with_power(self, game: Any, player: int, pieces: Mapping[str, Any],
                        power: Mapping[str, Any]) -> Any: ...
    def chord_problem(self, game: Any, player: int, card: int, line: list[int],
                      ) -> str | None: ...
    def open_lines(self, game: Any, player: int, card: int) -> list[list[int]]: ...
    def turn_number(self, game: Any) -> int: ...
    def goals(self, game: Any) -> list[dict[str, Any]]: ...
    def tiebreak(self, game: Any) -> dict[str, Any] | None:
        """``{"tied", "dice", "waiting", "options"}`` during a tie-break, else None;
        ``options`` maps each waiting player (a string index) to the legal ``{"card",
        "line"}`` (a null line when no line fits)."""
        ...


class EngineRules:
    """``companion.doomcat.game`` behind :class:`CatRules`."""

    def __init__(self) -> None:
        try:
            from companion.doomcat import catalogue, game, layouts
        except ImportError as exc:
            raise EngineMissing("the Doom Cat rules engine is not installed yet "
                                f"({exc.name or exc})") from exc
        self.g, self.cat, self.layouts = game, catalogue, layouts
        # read now, when the server starts: a broken file makes Doom Cat unavailable, saying
        # why (DataFileError), instead of every request failing later
        catalogue.goals()
        catalogue.familiars()
        for name in layouts.BUILTIN:
            layouts.load_layout(name)

    def _names(self, game: Any) -> list[str]:
        return [p.name for p in game.players]

    def _call(self, fn: Any, *args: Any) -> Any:
        try:
            return fn(*args)
        except self.g.IllegalMove as exc:
            raise Refused(str(exc)) from None

    def catalogue(self) -> dict[str, Any]:
        return {
            "goals": [g.to_json() for g in self.cat.goals().values()],
            "familiars": [f.to_json() for f in self.cat.familiars().values()],
            "sets": [{"name": k, "goals": list(v)} for k, v in self.cat.SUGGESTED_SETS.items()],
            "layouts": [{"name": n} for n in self.layouts.layout_names()],
        }

    def _config(self, setup: Mapping[str, Any]) -> Any:
        return self.g.GameConfig(
            players=tuple(p["name"] for p in setup["players"]), cards=tuple(setup["cards"]),
            goals=tuple(setup["goals"]), familiar_mode=setup.get("familiar_mode", "none"),
            familiar=setup.get("familiar"),
            familiars=tuple(setup["familiars"].items()) if setup.get("familiars") else None)

    def check_setup(self, setup: Mapping[str, Any]) -> None:
        try:
            self.g.new_game(self._config(setup))
        except Exception as exc:   # IllegalMove / BadInput: the reason is the message
            raise Refused(str(exc)) from None

    def new(self, setup: Mapping[str, Any]) -> Any:
        return self._call(self.g.replay, self.g.new_game(self._config(setup)))

    def phase(self, game: Any) -> str:
        if game.phase == "playing":
            return "roll" if game.dice is None else "turn"
        return str(game.phase)

    def roll(self, game: Any, dice: list[int]) -> Any:
        return self._call(self.g.apply, game, {"type": "roll", "dice": list(dice)})

    def options(self, game: Any, player: int) -> list[dict[str, Any]]:
        name = self._names(game)[player]
        return [{"card": o["card"], "value": o["write"], "line": o["line"], "cross": o["cross"],
                 "event": o} for o in self.g.legal_options(game, name)]

    def explain(self, game: Any, player: int, pieces: Mapping[str, Any],
                power: Mapping[str, Any] | None = None) -> str:
        """The engine's own reason, from the move these pieces would make."""
        name = self._names(game)[player]
        dice = list(self._dice(game, power))
        value = pieces.get("value")
        die = dice.index(value) if value in dice else 0
        others = [d for i, d in enumerate(dice) if i != die]
        layout = game.players[player].cards[pieces.get("card") or 0].layout
        line = pieces.get("line")
        if line is None and len(others) == 2:   # any line of the other two dice's numbers
            a = next((i for i, c in enumerate(layout.candles) if c.number == others[0]), 0)
            b = next((i for i, c in enumerate(layout.candles)
                      if c.number == others[1] and i != a), 1)
            line = sorted([a, b])
        cross = pieces.get("cross")
        if cross is None and value is not None:
            cross = next((i for i, c in enumerate(layout.candles) if c.number == value), None)
        event = {"type": "move", "player": name, "card": pieces.get("card") or 0, "die": die,
                 "write": value if value is not None else dice[die] if dice else 1,
                 "line": line, "cross": cross}
        if power:
            event["power"] = dict(power)
        try:
            self.g.apply(game, event)
        except self.g.IllegalMove as exc:
            return str(exc)
        return "no legal turn has these pieces together"

    def move(self, game: Any, player: int, option: Mapping[str, Any]) -> Any:
        return self._call(self.g.apply, game, option["event"])

    def done(self, game: Any, player: int) -> bool:
        return bool(game.players[player].moved) if game.dice is not None or \
            game.phase == "tiebreak" else False

    def engine_event(self, game: Any, event: Mapping[str, Any]) -> Any:
        return self._call(self.g.apply, game, dict(event))

    def sigil(self, game: Any, player: int, card: int) -> dict[str, Any]:
        return game.players[player].cards[card].sigil_state().to_json()

    def wilds(self, game: Any, player: int, card: int) -> list[int]:
        return sorted(game.players[player].cards[card].wild)

    def scores(self, game: Any) -> dict[str, Any]:
        return self.g.scores(game)

    def score_pending(self, game: Any, player: int, pieces: Mapping[str, Any],
                      ) -> dict[str, Any]:
        p = game.players[player]
        card = p.cards[pieces["card"]]
        lines = list(card.lines)
        power = pieces.get("power") or {}
        if power.get("erase") and tuple(power["erase"]) in lines:   # the Snake's
            lines.remove(tuple(power["erase"]))
        for line in (pieces.get("line"), power.get("extra_line")):  # and the Raven's
            if line is not None and tuple(line) not in lines:
                lines.append(tuple(line))
        crossed = set(card.crossed)
        if pieces.get("cross") is not None:
            crossed.add(pieces["cross"])
        top = list(card.top)
        value = pieces.get("value")
        if value is not None and None in top:
            top[top.index(None)] = self._box(value, card.written(value) >= 1)
        try:
            sigil = self.cat.Sigil(card.layout, lines, crossed, top)
        except Exception:   # a piece the geometry refuses: keep the stored score
            sigil = card.sigil()
        fam = self.cat.familiar(p.familiar) if (
            p.familiar and game.familiar_mode in ("asymmetric", "solo")) else None
        return self.cat.score_sigil(sigil, self.cat.parse_goals(game.goals), fam)

    @staticmethod
    def _box(value: int, circled: bool) -> Any:
        from vision.readings import TopBox
        return TopBox(value, circled)

    def familiar(self, game: Any, player: int) -> dict[str, Any] | None:
        p = game.players[player]
        if p.familiar is None:
            return None
        return {**self.cat.familiar(p.familiar).to_json(), "used": p.familiar in p.powers_used}

    # -- familiars: asymmetric picks and one-off powers ----------------------------------
    def picking(self, game: Any) -> dict[str, Any] | None:
        if game.phase != "picking":
            return None
        names = self._names(game)
        order = [names.index(n) for n in game.pick_order] or None
        return {"order": order, "next": order[0] if order else None,
                "taken": {p.familiar: i for i, p in enumerate(game.players) if p.familiar}}

    def pick_roll(self, game: Any, rolls: list[list[int]]) -> Any:
        names = self._names(game)
        if len(rolls) != len(names):
            raise Refused(f"the pick roll gives three dice for each of the {len(names)} "
                          f"players, got {len(rolls)} rolls")
        return self._call(self.g.apply, game, {"type": "pick_roll", "rolls": {
            n: list(r) for n, r in zip(names, rolls, strict=True)}})

    def pick(self, game: Any, player: int, familiar: str) -> Any:
        return self._call(self.g.apply, game, {"type": "pick", "player": self._names(game)[player],
                                               "familiar": familiar})

    def check_power(self, game: Any, player: int, power: Mapping[str, Any]) -> None:
        self._call(self.g.check_power, game, self._names(game)[player], dict(power))

    def _dice(self, game: Any, power: Mapping[str, Any] | None) -> tuple[int, ...]:
        """The dice as the player uses them (the engine's ``effective_dice``: the Black Cat's
        turned die, the Bat's re-roll)."""
        return self._call(self.g.effective_dice, game, power)

    def power_options(self, game: Any, player: int, power: Mapping[str, Any],
                      ) -> list[dict[str, Any]] | None:
        fam = power.get("familiar")
        name = self._names(game)[player]
        if fam in ("F01", "F06"):   # the dice as the power leaves them, triples as rolled
            raw = self._call(self.g.legal_options, game, name, dict(power))
        elif fam == "F04":   # the Owl: the same moves, crossing no candle
            seen: set[Any] = set()
            raw = []
            for o in self.g.legal_options(game, name):
                key = (o["card"], o["die"], o["write"], None if o["line"] is None
                       else tuple(o["line"]))
                if key not in seen:
                    seen.add(key)
                    raw.append({**o, "cross": None})
        else:
            return None
        return [{"card": o["card"], "value": o["write"], "line": o["line"], "cross": o["cross"],
                 "event": {**o, "power": dict(power)}} for o in raw]

    def move_with_power(self, game: Any, player: int, pieces: Mapping[str, Any],
                        power: Mapping[str, Any]) -> Any:
        """The move of these pieces with the power, whichever die the number was written
        from; the engine's reason when no die makes it legal."""
        reasons = []
        for die in range(3):
            event = {"type": "move", "player": self._names(game)[player],
                     "card": pieces["card"], "die": die, "write": pieces["value"],
                     "line": pieces["line"], "cross": pieces["cross"], "power": dict(power)}
            try:
                return self.g.apply(game, event)
            except self.g.IllegalMove as exc:
                reasons.append(str(exc))
        raise Refused(next((r for r in reasons if "but die" not in r), reasons[0]))

    def chord_problem(self, game: Any, player: int, card: int, line: list[int],
                      ) -> str | None:
        c = game.players[player].cards[card]
        return c.chord_problem((min(line), max(line)))

    def open_lines(self, game: Any, player: int, card: int) -> list[list[int]]:
        return [list(x) for x in sorted(game.players[player].cards[card].open_chords)]

    def turn_number(self, game: Any) -> int:
        return min(self.g.TURNS, game.turn + (1 if game.dice is None else 0))

    def goals(self, game: Any) -> list[dict[str, Any]]:
        return [{**self.cat.goal(n).to_json(), "label": f"{n:02d}"} for n in game.goals]

    def tiebreak(self, game: Any) -> dict[str, Any] | None:
        if game.phase != "tiebreak":
            return None
        names = self._names(game)
        waiting = [names.index(n) for n in game.waiting_for]
        return {"tied": [names.index(n) for n in game.tied],
                "dice": None if game.tiebreak_dice is None else list(game.tiebreak_dice),
                "waiting": waiting,
                "options": {str(p): [{"card": o["card"], "line": o["line"]}
                                     for o in self.g.tiebreak_options(game, names[p])]
                            for p in waiting}}


def bind() -> CatRules:
    """The installed Doom Cat engine behind :class:`CatRules`."""
    return EngineRules()
