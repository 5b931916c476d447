"""Doom Machine: the part catalogue, the rules engine, policies and the simulator.

See :mod:`companion.machine.game` for the engine API the dashboard drives.
"""

from __future__ import annotations

from companion.machine.catalogue import Catalogue, Condition, Part, PlayerCard, load_catalogue
from companion.machine.game import (
    Game,
    IllegalAction,
    apply,
    complete,
    legal_actions,
    new_game,
    replay,
    view,
)

__all__ = ["Catalogue", "Condition", "Game", "IllegalAction", "Part", "PlayerCard", "apply",
           "complete", "legal_actions", "load_catalogue", "new_game", "replay", "view"]
