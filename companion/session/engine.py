"""What a game session needs from a rules engine, and the registry of the available engines.

A session speaks to an engine through an :class:`EngineAdapter`: the adapter turns the
session's events (readings and clicks, the vocabulary stored in the games' log) into calls to a
pure rules engine, and its state into the JSON view the dashboard shows. An engine that is not
installed (its package failed to import), or whose card catalogue (goals, familiars, sigil
layouts A-D, machine parts, player card) is refused on loading, is replaced by an
:class:`Unavailable` marker whose ``reason`` (for a data file: the file, the JSON path and the
rule broken) the page and ``/api/status`` show instead of breaking: the other game plays on.
An adapter reads its catalogue when it is made, when the server starts; the catalogue is kept
for the server's life, so an edit takes effect (or is refused) at the next start.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from companion.errors import BadInput


class Refused(Exception):
    """The rules refuse an event; ``reason`` is the rulebook's reason, shown to the players."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class EngineAdapter(Protocol):
    """The contract between a game session and a rules engine.

    Every method is pure: the same setup and events always give the same state.
    """

    kind: str
    title: str

    def setup_schema(self) -> dict[str, Any]:
        """JSON Schema of the setup document a new game takes."""
        ...

    def event_schema(self) -> dict[str, Any]:
        """JSON Schema of one event of this game (checked before :meth:`apply`)."""
        ...

    def prepare_setup(self, setup: Mapping[str, Any]) -> dict[str, Any]:
        """Check the setup beyond the schema and fill in defaults (raise :class:`Refused`)."""
        ...

    def initial(self, setup: Mapping[str, Any]) -> Any:
        ...

    def apply(self, state: Any, event: Mapping[str, Any]) -> Any:
        """The state after the event; :class:`Refused` with the reason when it is illegal."""
        ...

    def view(self, state: Any) -> dict[str, Any]:
        """The JSON the page renders (legal options, scores, log, verdict...)."""
        ...

    def describe(self, event: Mapping[str, Any], state: Any) -> str:
        """One line of the game's history in a player's words ("roll 3 5 5", "Ann, card 1:
        line left 3 – lower 5"); ``state`` is the game's state (its setup names the cards)."""
        ...

    def result(self, state: Any) -> dict[str, Any] | None:
        """The outcome once the game is over (for the history), else None."""
        ...


class EngineMissing(Exception):
    """Raised by an adapter's constructor when its engine lacks something it needs."""


@dataclass(frozen=True)
class Unavailable:
    """An engine that cannot run here; ``reason`` says why (shown on the page)."""

    kind: str
    title: str
    reason: str


GAME_KINDS = ("cat", "machine")
ADAPTERS = {
    "cat": ("companion.session.cat", "CatAdapter", "Doom Cat"),
    "machine": ("companion.session.machine", "MachineAdapter", "Doom Machine"),
}


def load_engine(kind: str) -> EngineAdapter | Unavailable:
    """The adapter of a game kind, or :class:`Unavailable` naming what is missing."""
    module_name, cls_name, title = ADAPTERS[kind]
    try:
        module = importlib.import_module(module_name)
        return getattr(module, cls_name)()
    except (EngineMissing, BadInput) as exc:   # BadInput: a broken catalogue (DataFileError)
        return Unavailable(kind, title, str(exc))
    except ImportError as exc:
        return Unavailable(kind, title, f"the {title} rules engine is not installed yet "
                                        f"({exc.name or exc})")
