"""A tiny reference engine adapter: the smallest thing that honours :class:`EngineAdapter`.

Tests of the session, the store and the web app use it so that they do not depend on the
real rules engines; it also documents the adapter contract by example. The "game": players add
dice values to a total that must reach ``target`` exactly; going over is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from companion.session.engine import Refused


@dataclass(frozen=True)
class CounterState:
    target: int
    total: int = 0
    moves: int = 0


class CounterEngine:
    """Reach the target total exactly (refusal: "that would go over the target")."""

    def __init__(self, kind: str = "cat", title: str = "Counter") -> None:
        self.kind = kind
        self.title = title

    def setup_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["target"], "additionalProperties": False,
                "properties": {"target": {"type": "integer", "minimum": 1, "maximum": 100}}}

    def event_schema(self) -> dict[str, Any]:
        return {"type": "object", "required": ["type", "n"], "additionalProperties": False,
                "properties": {"type": {"const": "add"},
                               "n": {"type": "integer", "minimum": 1, "maximum": 6}}}

    def prepare_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        if setup["target"] == 13:
            raise Refused("13 is unlucky")
        return dict(setup)

    def initial(self, setup: Mapping[str, Any]) -> CounterState:
        return CounterState(int(setup["target"]))

    def apply(self, state: CounterState, event: Mapping[str, Any]) -> CounterState:
        if state.total >= state.target:
            raise Refused("the game is over")
        if state.total + event["n"] > state.target:
            raise Refused(f"{state.total} + {event['n']} would go over the target "
                          f"{state.target}")
        return CounterState(state.target, state.total + event["n"], state.moves + 1)

    def view(self, state: CounterState) -> dict[str, Any]:
        return {"target": state.target, "total": state.total, "moves": state.moves,
                "over": state.total == state.target}

    def describe(self, event: Mapping[str, Any], state: CounterState) -> str:
        return f"add {event.get('n')}"

    def result(self, state: CounterState) -> dict[str, Any] | None:
        if state.total != state.target:
            return None
        return {"summary": f"reached {state.target} in {state.moves} moves"}


def testing_hub(path: Any, *, cat: Any = None, machine: Any = None) -> Any:
    """A :class:`~companion.session.Hub` over a store at ``path`` with the engines given.

    A game kind given no engine is :class:`~companion.session.Unavailable` ("the ... engine is
    missing"), so a test names exactly the engines it plays with. The caller closes the hub
    and its store (``hub.close(); hub.store.close()``), or hands the hub to the web app,
    which does.
    """
    from companion.session.engine import Unavailable
    from companion.session.hub import Hub
    from companion.store import Store

    return Hub(Store(path), {
        "cat": cat if cat is not None else Unavailable(
            "cat", "Doom Cat", "the Doom Cat engine is missing"),
        "machine": machine if machine is not None else Unavailable(
            "machine", "Doom Machine", "the Doom Machine engine is missing")})
