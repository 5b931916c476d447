"""A game session: one stored game, its rules engine and its live state.

The session is the only writer of a game's log. Every event (a settled roll from the tracker,
a click on the page) is first checked against the event schema and the rules engine; only a
legal event is stored, so the log always folds to a legal state. Corrections (amendments of an
earlier event), undo and redo re-fold the whole log and are refused, state unchanged, when the
corrected history breaks a rule. A refusal is answered to whoever asked (the page's click,
the camera's reading); the game's ``warning`` is for what stands until the players see to it
(dice read with little confidence, a camera reading refused).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from companion.errors import BadInput
from companion.session.engine import EngineAdapter, Refused
from companion.store import Damaged, LogView, Store


@dataclass(frozen=True)
class Outcome:
    """What happened to a submitted event: ``ok`` or the rules' ``reason``."""

    ok: bool
    reason: str = ""
    event_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "reason": self.reason, "event_id": self.event_id}


# "integer" means a whole number written as one: 3.0 is refused, not stored as a float
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _checker, v: isinstance(v, int) and not isinstance(v, bool)))


def schema_error(doc: Any, schema: Mapping[str, Any], what: str) -> str | None:
    """The first schema violation of ``doc`` as one line naming the JSON path, or None.

    A value that fits none of the alternatives of an ``anyOf``/``oneOf`` is reported by the
    alternative it comes closest to (``$.dice.0: 7 is greater than the maximum of 6``, not
    "... is not valid under any of the given schemas" about the whole object), and values are
    written in JSON, as they were sent (``true``, ``null``, ``"x"``).
    """
    validator = _Validator(schema)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    err = errors[0]
    if err.context and all(e.validator == "type" and not e.path for e in err.context):
        # of none of the types the alternatives take: name them all
        types = " or ".join(f"'{e.validator_value}'" for e in err.context)
        message = f"{_json(err.instance)} is not of type {types}"
    elif err.validator == "uniqueItems" and isinstance(err.instance, list):
        message = f"{_first_repeated(err.instance)} is listed twice: each must be different"
    else:
        if err.context:
            err = jsonschema.exceptions.best_match([err])
        message = err.message
        if message.startswith(repr(err.instance)):
            message = _json(err.instance) + message[len(repr(err.instance)):]
        if err.validator == "enum" and message.endswith(repr(err.validator_value)):
            message = message[:-len(repr(err.validator_value))] + _json(err.validator_value)
    path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
    return f"{what}: at {path}: {message}"


def _first_repeated(items: list[Any]) -> str:
    """The first item of ``items`` met a second time, in JSON (``1`` and ``true`` differ)."""
    seen: set[str] = set()
    for item in items:
        key = json.dumps(item, sort_keys=True)
        if key in seen:
            return _json(item)
        seen.add(key)
    return _json(items)


def _json(value: Any, limit: int = 120) -> str:
    """A value as JSON writes it, cut to ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def prepare(engine: EngineAdapter, setup: Mapping[str, Any]) -> tuple[dict[str, Any], Any]:
    """A setup checked as a new game's is: its schema, the engine's own checks, its initial
    state. Returns the prepared setup and the initial state; :class:`Refused` says what is
    wrong ("setup: ..."). A prepared setup prepares to itself, so a stored game's is checked
    the same way when it is opened or imported."""
    problem = schema_error(setup, engine.setup_schema(), "setup")
    if problem:
        raise Refused(problem)
    try:
        prepared = engine.prepare_setup(setup)
        return prepared, engine.initial(prepared)
    except Refused as exc:
        raise Refused(f"setup: {exc.reason}") from None


class GameSession:
    """The live state of one stored game.

    Parameters
    ----------
    store : Store
    game_id : int
    engine : EngineAdapter
    on_change : callable, optional
        Called (with the game id) after every change, e.g. to push the page an update.
    """

    def __init__(self, store: Store, game_id: int, engine: EngineAdapter, *,
                 on_change: Callable[[int], None] | None = None) -> None:
        self.store = store
        self.game_id = game_id
        self.engine = engine
        self.record = store.game(game_id)
        if self.record.kind != engine.kind:
            raise ValueError(f"game {game_id} is {self.record.kind}, not {engine.kind}")
        self._on_change = on_change or (lambda _gid: None)
        self._lock = threading.RLock()
        self.lock = self._lock   # held by callers that read the state to build an event
        self.warning = ""
        try:
            prepare(engine, self.record.setup)
        except Refused as exc:   # stored by an older version, or its card is gone
            raise Damaged(f"game {game_id} cannot be opened: {exc.reason}") from None
        self._refold()

    # -- folding -------------------------------------------------------------------------
    def _check(self, event: Mapping[str, Any]) -> str | None:
        return schema_error(event, self.engine.event_schema(), "event")

    def _fold(self, events: list[dict[str, Any]]) -> tuple[Any, str]:
        """The state after the longest legal prefix of ``events``, and why the next event is
        refused (its number, what it is, the reason; "" when every event folds)."""
        state = self.engine.initial(self.record.setup)
        for i, event in enumerate(events):
            problem = self._check(event)
            if problem:
                return state, f"event {i + 1}: {problem}"
            try:
                state = self.engine.apply(state, event)
            except Refused as exc:
                return state, f"event {i + 1} ({self.engine.describe(event, state)}): {exc.reason}"
        return state, ""

    def _refold(self) -> None:
        # A log that no longer folds (an engine whose rules changed) keeps its longest legal
        # prefix and says which event breaks.
        self.log: LogView = self.store.log(self.game_id)
        self.state, self.broken = self._fold(self.log.events)

    def _changed(self) -> None:
        result = self.engine.result(self.state)
        if result != self.record.result:
            self.store.set_result(self.game_id, result)
            self.record = self.store.game(self.game_id)
        self._on_change(self.game_id)

    # -- changes -------------------------------------------------------------------------
    def submit(self, event: Mapping[str, Any]) -> Outcome:
        """Check an event (schema, then rules) and store it when legal."""
        problem = self._check(event)
        if problem:
            raise BadInput(problem)
        with self._lock:
            complete = getattr(self.engine, "complete", None)
            if complete is not None:
                # values the players asked the program for (a virtual roll) are drawn here,
                # once, and stored with the event: the fold stays deterministic
                event = complete(self.state, event)
            try:
                new_state = self.engine.apply(self.state, event)
            except Refused as exc:   # answered to the caller; the game is as it was
                return Outcome(False, exc.reason)
            event_id = self.store.append(self.game_id, dict(event))
            self.state = new_state
            self.log = self.store.log(self.game_id)
            self.warning = ""
            self._changed()
            return Outcome(True, event_id=event_id)

    def amend(self, event_id: int, event: Mapping[str, Any]) -> Outcome:
        """Correct an earlier event (a misread die, a line...): refused if history breaks."""
        problem = self._check(event)
        if problem:
            raise BadInput(problem)
        with self._lock:
            ids = [e.id for e in self.log.active]
            if event_id not in ids:
                raise BadInput(f"event {event_id} is not an active event of game "
                               f"{self.game_id}")
            n = ids.index(event_id)
            if dict(event) == self.log.active[n].event:   # not stored: no undo step for it
                return Outcome(False, f"nothing to correct: event {n + 1} "
                               f"({self.engine.describe(event, self.state)}) already says so")
            events = [dict(event) if e.id == event_id else e.event for e in self.log.active]
            state, problem = self._fold(events)
            if problem:
                return Outcome(False, f"correction refused: {problem}")
            self.store.amend(self.game_id, event_id, dict(event))
            self.state = state
            self.log = self.store.log(self.game_id)
            self.warning = ""
            self._changed()
            return Outcome(True, event_id=event_id)

    def undo(self) -> str:
        """Step back over the last action or correction: what was undone ("" when none)."""
        return self._step(self.store.undo, "undid")

    def redo(self) -> str:
        """Step forward again: what was redone ("" when none)."""
        return self._step(self.store.redo, "redid")

    def _step(self, step: Callable[[int], bool], what: str) -> str:
        with self._lock:
            before = self.log.active
            if not step(self.game_id):
                return ""
            self._refold()
            self.warning = ""
            self._changed()
            after = self.log.active
            if len(after) != len(before):   # an action
                n = max(len(before), len(after))
                entry = (before if len(before) > len(after) else after)[-1]
                return f"{what} event {n}: {self.engine.describe(entry.event, self.state)}"
            changed = [(n, new) for n, (old, new) in enumerate(zip(before, after, strict=True), 1)
                       if old.event != new.event]
            if not changed:   # stored before corrections that change nothing were refused
                return f"{what} a correction that changed nothing"
            n, entry = changed[0]
            return (f"{what} the correction of event {n}, which now reads: "
                    f"{self.engine.describe(entry.event, self.state)}")

    # -- views ---------------------------------------------------------------------------
    def view(self) -> dict[str, Any]:
        with self._lock:
            return {
                "game": self.record.to_json(),
                "state": self.engine.view(self.state),
                "log": [{"id": e.id, "event": e.event, "amended": e.amended,
                         # past the event a broken log stops at, an event may break
                         # its schema: say how instead of describing it
                         "text": (self.broken and self._check(e.event))
                         or self.engine.describe(e.event, self.state)}
                        for e in self.log.active],
                "can_undo": self.log.can_undo, "can_redo": self.log.can_redo,
                "warning": self.warning, "broken": self.broken,
            }
