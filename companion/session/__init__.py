"""Game sessions: the glue between the tracker's readings, the page's clicks, the rules
engines and the store (see :mod:`companion.session.core`)."""

from __future__ import annotations

from companion.session.core import GameSession, Outcome
from companion.session.engine import EngineAdapter, Refused, Unavailable, load_engine
from companion.session.hub import Bus, Hub

__all__ = ["Bus", "EngineAdapter", "GameSession", "Hub", "Outcome", "Refused", "Unavailable",
           "load_engine"]
