"""The demo director: while the bundled demo video plays, keep a demo game of each kind.

The demo (``companion.demo``) loops a Doom Cat turn and then a Doom Machine round. The director
follows the video's time: it points the camera at the Doom Cat game during the cat part and at
the Doom Machine game during the machine part, and starts fresh demo games when the video loops
(the same turn again would break the rules in the old game). It only manages games it made
(their setup says ``"demo": true``): once a player starts a game of their own, the director
leaves that kind alone.
"""

from __future__ import annotations

from typing import Any

from companion.errors import BadInput
from companion.session.engine import Unavailable
from companion.session.hub import EngineUnavailable, Hub

CAT_SETUP = {"players": [{"name": "Demo witch"}], "cards": ["A", "A"], "goals": [1, 2, 3],
             "demo": True}
MACHINE_SETUP = {"seed": 6, "demo": True}


class DemoDirector:
    """Switch the camera between the demo's two games as the video plays.

    Parameters
    ----------
    hub : Hub
    description : dict
        ``companion.demo.demo_description()`` (``duration_s`` and the ``timeline``).
    """

    def __init__(self, hub: Hub, description: dict[str, Any]) -> None:
        self.hub = hub
        self.duration = float(description["duration_s"])
        machine = [s["from"] for s in description.get("timeline", [])
                   if "machine" in s.get("what", "")]
        self.machine_from = min(machine) - 0.5 if machine else self.duration
        self.loop: int | None = None
        self.errors: list[str] = []

    def _is_demo(self, kind: str) -> bool | None:
        """True: the current game of ``kind`` is a demo game; None: there is none."""
        session = self.hub.current(kind)
        if session is None:
            return None
        return bool(session.record.setup.get("demo"))

    def _fresh(self, kind: str, setup: dict[str, Any], title: str) -> None:
        if isinstance(self.hub.engines.get(kind), Unavailable):
            return
        if self._is_demo(kind) is False:
            return   # a player's own game: leave it alone
        session = self.hub.current(kind)
        if session is not None and not session.log.active:
            return   # the current demo game is still untouched
        try:
            self.hub.create_game(kind, title, setup)
        except (BadInput, EngineUnavailable) as exc:
            self.errors.append(f"{kind}: {exc}")

    def on_frame(self, t: float) -> None:
        """Called with each frame's time (seconds, continuing across loops)."""
        loop = int(t // self.duration)
        if loop != self.loop:
            self.loop = loop
            self._fresh("cat", CAT_SETUP, "Demo: Doom Cat")
            self._fresh("machine", MACHINE_SETUP, "Demo: Doom Machine")
        kind = "machine" if t % self.duration >= self.machine_from else "cat"
        if self.hub.active_kind() != kind and self._is_demo(kind):
            other = "cat" if kind == "machine" else "machine"
            if self._is_demo(other) is not False:
                self.hub.set_active_kind(kind)
