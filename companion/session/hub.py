"""The hub: the store, the rules engines, the current game of each kind, and change signals.

The web app holds one :class:`Hub`. It opens game sessions on demand (a restarted server
re-opens the current games from the store), routes the tracker's events to the current game,
and wakes the pages' server-sent-event streams through :class:`Bus` when anything changes.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from companion.errors import BadInput
from companion.session.core import GameSession, Outcome, prepare, schema_error
from companion.session.engine import GAME_KINDS, EngineAdapter, Refused, Unavailable, load_engine
from companion.store import Damaged, Store, StoreUnavailable

_CARD_ID = re.compile(r"^g(\d+)p(\d+)c(\d+)$")
IMPORTED = " (imported)"   # the mark on an imported game's title
TITLE_MAX = 80             # a game's title, as the API takes it
MIN_ROLL_AREA = 0.05   # smallest side of the roll area, as a fraction of the image


class Bus:
    """A change counter that threads can wait on (no polling, no sleeps)."""

    def __init__(self, cond: threading.Condition | None = None) -> None:
        self._cond = cond or threading.Condition()
        self.version = 0
        self.closed = False

    def publish(self) -> None:
        with self._cond:
            self.version += 1
            self._cond.notify_all()

    def wait(self, since: int, timeout: float) -> int:
        """Block until the version differs from ``since`` (or timeout/close); the version."""
        with self._cond:
            self._cond.wait_for(lambda: self.version != since or self.closed, timeout)
            return self.version

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()


def wait_any(buses: list[Bus], seen: list[int], timeout: float) -> bool:
    """Wait until any of buses sharing one condition moves past ``seen`` (True) or timeout."""
    cond = buses[0]._cond
    with cond:
        return cond.wait_for(lambda: any(b.version != s or b.closed
                                         for b, s in zip(buses, seen, strict=True)), timeout)


class CameraCard(NamedTuple):
    """The Doom Cat sigil card the camera watches."""

    id: str      # the tracker's key: game, player and card ("g3p0c1"), new for each game
    layout: str  # the card's layout (a letter A-D or a registered card's name)
    name: str    # as players say it: "Ann, card 2"


class Hub:
    """Games, engines and change signals shared by the web app's threads."""

    def __init__(self, store: Store, engines: Mapping[str, EngineAdapter | Unavailable]
                 | None = None) -> None:
        self.store = store
        self.engines: dict[str, EngineAdapter | Unavailable] = (
            dict(engines) if engines is not None else {k: load_engine(k) for k in GAME_KINDS})
        cond = threading.Condition()
        self.games_bus = Bus(cond)
        self.live_bus = Bus(cond)
        self._sessions: dict[int, GameSession] = {}
        self._lock = threading.RLock()
        self.demo = False       # the bundled demo is playing (set by the live loop's maker)
        self._camera_card: tuple[str, str] | None = None

    def close(self) -> None:
        self.games_bus.close()
        self.live_bus.close()

    # -- engines -------------------------------------------------------------------------
    def engine(self, kind: str) -> EngineAdapter:
        if kind not in self.engines:
            raise BadInput(f"unknown game kind {kind!r} (expected one of {', '.join(GAME_KINDS)})")
        engine = self.engines[kind]
        if isinstance(engine, Unavailable):
            raise EngineUnavailable(engine.reason)
        return engine

    def engine_status(self) -> dict[str, dict[str, Any]]:
        return {k: ({"available": False, "title": e.title, "reason": e.reason}
                    if isinstance(e, Unavailable) else
                    {"available": True, "title": e.title, "reason": ""})
                for k, e in self.engines.items()}

    # -- games ---------------------------------------------------------------------------
    def create_game(self, kind: str, title: str, setup: Mapping[str, Any], *,
                    campaign_id: int | None = None) -> GameSession:
        engine = self.engine(kind)
        if campaign_id is not None:
            if kind != "cat":
                raise BadInput("campaigns are Doom Cat campaigns")
            from companion.session.campaigns import line_name, prepare_game
            setup = prepare_game(self.store, campaign_id, setup)
            # named by its campaign and line, then by what the players called it
            title = (f"{self.store.campaign(campaign_id).title}, "
                     f"{line_name(setup['campaign_line'])}"
                     + (f": {title}" if title else ""))[:TITLE_MAX]
        try:
            prepared = prepare(engine, setup)[0]
        except Refused as exc:
            raise BadInput(exc.reason) from None
        with self._lock:
            gid = self.store.create_game(kind, title or engine.title, prepared,
                                         campaign_id=campaign_id)
            self.store.set_meta(f"current.{kind}", str(gid))
            self.store.set_meta("active.kind", kind)
            session = self.session(gid)
        self.games_bus.publish()
        return session

    def session(self, game_id: int) -> GameSession:
        """The session of a stored game (opened and folded on first use)."""
        with self._lock:
            if game_id not in self._sessions:
                try:
                    record = self.store.game(game_id)
                except KeyError:
                    raise NoSuchGame(f"no game {game_id}") from None
                self._sessions[game_id] = GameSession(
                    self.store, game_id, self.engine(record.kind),
                    on_change=lambda _gid: self.games_bus.publish())
            return self._sessions[game_id]

    def current(self, kind: str) -> GameSession | None:
        """The game of this kind being played (restored from the store after a restart)."""
        return self.opened(kind)[0]

    def opened(self, kind: str) -> tuple[GameSession | None, str]:
        """The current game of this kind, or None and why it cannot be opened ("" when there
        is none, or its engine is missing: the engine's status says so)."""
        value = self.store.get_meta(f"current.{kind}")
        if value is None:
            return None, ""
        if not value.isdigit():
            return None, f"the current {kind} game is stored as {value!r}, not a game id"
        try:
            return self.session(int(value)), ""
        except (NoSuchGame, EngineUnavailable):
            return None, ""
        except Damaged as exc:
            return None, str(exc)

    def make_current(self, game_id: int) -> GameSession:
        session = self.session(game_id)
        self.store.set_meta(f"current.{session.record.kind}", str(game_id))
        self.store.set_meta("active.kind", session.record.kind)
        self.games_bus.publish()
        return session

    def import_game(self, doc: Mapping[str, Any]) -> int:
        """Store an exported game (checked against the export schema by the caller) as a new
        game, checked as creating it and playing its events would be: refused (BadInput,
        nothing stored) when it would not open or replay. Its title is marked " (imported)"
        (once: a copy of a copy is not marked twice), its start time is the original's. It is
        the player's game: an export of the demo's game loses the demo's mark, so History
        lists it and the demo's director never takes it over."""
        engine = self.engine(doc["game"]["kind"])
        try:
            setup = prepare(engine, doc["game"]["setup"])[0]
        except Refused as exc:
            raise BadInput(f"import: {exc.reason}") from None
        setup = {k: v for k, v in setup.items() if k != "demo"}
        for i, op in enumerate(doc["ops"]):
            problem = op.get("event") is not None and schema_error(
                op["event"], engine.event_schema(), f"import: ops[{i}].event")
            if problem:
                raise BadInput(problem)

        def replays(gid: int) -> None:
            broken = GameSession(self.store, gid, engine).broken
            if broken:
                raise BadInput(f"import: {broken}")

        title = doc["game"]["title"].removesuffix(IMPORTED)[:TITLE_MAX - len(IMPORTED)]
        gid = self.store.import_game(
            {**doc, "game": {**doc["game"], "setup": setup, "title": title + IMPORTED}},
            check=replays)
        self.games_bus.publish()
        return gid

    # -- readings from the camera --------------------------------------------------------
    def active_kind(self) -> str | None:
        """The game the camera feeds: the kind of the game started or resumed last."""
        kind = self.store.get_meta("active.kind")
        return kind if kind in self.engines else None

    def set_active_kind(self, kind: str) -> None:
        if kind not in self.engines:
            raise BadInput(f"unknown game kind {kind!r}")
        self.store.set_meta("active.kind", kind)
        self._camera_card = None
        self.games_bus.publish()

    def camera_choice(self) -> tuple[int, int]:
        """(player, card) of the Doom Cat card the camera reads (0-based; default 0, 0)."""
        value = self.store.get_meta("camera.card") or "0:0"
        try:
            player, card = (int(v) for v in value.split(":"))
        except ValueError:
            return 0, 0
        return player, card

    def camera_familiar(self) -> str | None:
        """The familiar (``"F04"``) of the player whose card the camera watches; None when that
        player has none or no Doom Cat game is played."""
        session = self.current("cat")
        familiar_of = None if session is None else getattr(session.engine, "player_familiar",
                                                             None)
        if session is None or familiar_of is None:
            return None
        return familiar_of(session.state, self.camera_choice()[0])

    def set_camera_choice(self, player: int, card: int) -> None:
        session = self.current("cat")
        if session is None:
            raise BadInput("there is no Doom Cat game to watch")
        layout_of = getattr(session.engine, "card_layout", None)
        if layout_of is None or layout_of(session.state, player, card) is None:
            raise BadInput(f"there is no card {card + 1} of player {player + 1} in this game")
        self.store.set_meta("camera.card", f"{player}:{card}")
        self.games_bus.publish()

    def roll_area(self) -> tuple[float, float, float, float] | None:
        """The roll area the player set on the live page, or None (the whole image).

        Convention: ``(x0, y0, x1, y1)`` as fractions (0-1) of the frame's width and height,
        origin top-left, so it holds at any camera resolution. Dice outside it are not read
        into rolls (Doom Machine's HP dice resting on the part cards).
        """
        value = self.store.get_meta("camera.roll_area")
        if value is None:
            return None
        try:
            x0, y0, x1, y1 = (float(v) for v in json.loads(value))
        except (ValueError, TypeError):
            return None
        return x0, y0, x1, y1

    def set_roll_area(self, area: tuple[float, float, float, float] | None) -> None:
        """Store the roll area (None: the whole image); refused when it is not a rectangle
        inside the image at least ``MIN_ROLL_AREA`` of each side."""
        if area is not None:
            x0, y0, x1, y1 = (float(v) for v in area)
            if not (0.0 <= x0 < x1 <= 1.0 and 0.0 <= y0 < y1 <= 1.0):
                raise BadInput("the roll area must be [x0, y0, x1, y1] within the image "
                               "(fractions 0-1) with x0 < x1 and y0 < y1")
            if x1 - x0 < MIN_ROLL_AREA or y1 - y0 < MIN_ROLL_AREA:
                raise BadInput(f"the roll area is too small: each side must be at least "
                               f"{MIN_ROLL_AREA:.0%} of the image")
            value: str | None = json.dumps([round(v, 4) for v in (x0, y0, x1, y1)])
        else:
            value = None
        self.store.set_meta("camera.roll_area", value)
        self.games_bus.publish()

    def camera_card(self) -> CameraCard | None:
        """The sigil card the camera watches, or None when no Doom Cat game is played.

        The tracker card id names the game, the player and the card (``g3p0c1``), so that a
        new game's card starts a new history in the tracker. The card is read while Doom
        Machine is played too: its outline keeps its printed candles from being taken for dice.
        """
        session = self.current("cat")
        layout_of = None if session is None else getattr(session.engine, "card_layout", None)
        if session is None or layout_of is None:
            return None
        player, card = self.camera_choice()
        letter = layout_of(session.state, player, card)
        if letter is None:
            return None
        return CameraCard(f"g{session.game_id}p{player}c{card}", letter,
                          session.engine.card_name(session.state, player, card))

    def feed(self, kind: str, event: Mapping[str, Any]) -> Outcome | None:
        """Submit a game event to the current game of ``kind`` (None when there is none)."""
        session = self.current(kind)
        if session is None:
            return None
        try:
            return session.submit(event)
        except BadInput as exc:
            return Outcome(False, str(exc))

    def feed_tracker(self, doc: Mapping[str, Any]) -> Outcome | None:
        """Route a tracker event (its ``to_json()``) to the game the camera feeds.

        The game's adapter turns it into a game event (``from_tracker``); None when no game
        takes it (no game, or an event that game has no use for). A taken event that names
        dice to check (read with little confidence, its ``check``) shows its text as the
        game's warning, so the player looks at those dice and corrects them if need be; so
        does a reading the rules refuse ("camera reading refused: ...").

        Raises :class:`companion.store.StoreUnavailable` when the games database cannot be
        written now (locked by another program): nothing is stored, the game is as it was,
        and the caller may feed the same reading again later.
        """
        kind = self.active_kind()
        if kind is None:
            return None
        session = self.current(kind)
        translate = None if session is None else getattr(session.engine, "from_tracker", None)
        if session is None or translate is None:
            return None
        card = _CARD_ID.match(str(doc.get("card", "")))
        if card is not None:
            if int(card.group(1)) != session.game_id:
                return None   # read on the card of an earlier game
            doc = {**doc, "player": int(card.group(2)), "card_index": int(card.group(3))}
        with session.lock:
            try:
                event = translate(session.state, doc)
            except Refused as exc:
                outcome = Outcome(False, exc.reason)
            else:
                if event is None:
                    return None
                try:
                    outcome = session.submit(event)
                except StoreUnavailable:
                    raise   # not the rules' answer: the caller keeps the reading for later
                except BadInput as exc:
                    return Outcome(False, str(exc))
            # nobody clicked: a reading the rules refused stays said until the next move, as
            # do dice to check
            warning = (f"camera reading refused: {outcome.reason}" if not outcome.ok
                       else f"camera: {doc.get('text', '')}" if doc.get("check") else "")
            if warning:
                session.warning = warning
                self.games_bus.publish()
            return outcome


class NoSuchGame(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


class EngineUnavailable(RuntimeError):
    """The game's rules engine is not installed (the reason is shown to the user)."""
