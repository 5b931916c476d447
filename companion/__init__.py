"""Doom Companion: rules engines, card catalogue, tracker, game session, store, dashboard and CLI.

The data flows one way (see DESIGN.md): frame source -> vision readers -> tracker -> game
session (rules engines) -> store -> web dashboard.
"""

from __future__ import annotations

__version__ = "0.1.0"
