"""The games' store: SQLite in WAL mode, one append-only operation log per game.

A game is a row of metadata (kind, title, created, setup) and an append-only log of
operations. An operation is one of

- ``action``: an event for the game's engine (a roll, a turn, an allocation, ...);
- ``amend``: a correction that replaces the event of an earlier ``action`` (its ``target``);
- ``undo`` / ``redo``: step back over the last action or amendment, or forward again.

Nothing is ever deleted or rewritten: the events that count now (the *active* events) are
computed by :func:`resolve_log`, a pure fold over the operations. A new action after an undo
drops the redo branch (as an editor does) but the dropped operations stay in the log.

Every write is its own transaction, so that closing the browser, restarting the server or
killing it mid-turn loses nothing: the game resumes from the log.

Examples
--------
>>> store = Store(":memory:")
>>> gid = store.create_game("cat", "Friday", {"players": ["Ann"]})
>>> _ = store.append(gid, {"type": "roll", "dice": [3, 5, 5]})
>>> _ = store.append(gid, {"type": "roll", "dice": [1, 2, 3]})
>>> store.undo(gid)
True
>>> [e.event["dice"] for e in store.log(gid).active]
[[3, 5, 5]]
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from companion.errors import BadInput

SCHEMA_VERSION = 1
GAME_KINDS = ("cat", "machine")
OPS = ("action", "amend", "undo", "redo")
MAX_ID = 2**63 - 1   # the largest integer SQLite holds: no row has a larger id
EXPORT_FORMAT = "doomcompanion-game"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    created TEXT NOT NULL,
    setup TEXT NOT NULL,
    campaign_id INTEGER,
    result TEXT
);
CREATE TABLE IF NOT EXISTS ops (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL REFERENCES games(id),
    op TEXT NOT NULL,
    target INTEGER,
    body TEXT,
    created TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ops_by_game ON ops (game_id, id);
CREATE TABLE IF NOT EXISTS campaigns (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    created TEXT NOT NULL,
    setup TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


def _tables(db: sqlite3.Connection) -> set[str]:
    """The names of a database's own tables (not SQLite's)."""
    return {row[0] for row in db.execute(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")}


@cache
def _schema_tables() -> dict[str, frozenset[str]]:
    """The tables of :data:`_SCHEMA` and the columns of each (as SQLite makes them)."""
    db = sqlite3.connect(":memory:")
    try:
        db.executescript(_SCHEMA)
        return {name: frozenset(row[1] for row in db.execute(f"PRAGMA table_info({name})"))
                for name in _tables(db)}
    finally:
        db.close()


def default_db_path() -> Path:
    """``$DOOMCOMPANION_HOME/games.sqlite``, else ``~/.local/share/doomcompanion/games.sqlite``.

    ``$XDG_DATA_HOME`` is honoured when set (``$XDG_DATA_HOME/doomcompanion``).
    """
    home = os.environ.get("DOOMCOMPANION_HOME")
    if home:
        return Path(home).expanduser() / "games.sqlite"
    xdg = os.environ.get("XDG_DATA_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "share"
    return base / "doomcompanion" / "games.sqlite"


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Damaged(BadInput):
    """Stored data that cannot be used (a row edited by hand, a game an older version stored):
    the message names the game or campaign and what is wrong with it."""


class StoreUnavailable(BadInput):
    """The database file cannot be read or written now (damaged, or locked by another
    program); the message names the file."""


@dataclass(frozen=True)
class Op:
    """One row of a game's operation log."""

    id: int
    op: str
    target: int | None
    event: dict[str, Any] | None
    created: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "op": self.op, "target": self.target, "event": self.event,
                "created": self.created}


@dataclass(frozen=True)
class Entry:
    """An active event: the action's id (stable across amendments) and its current body."""

    id: int
    event: dict[str, Any]
    amended: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "event": self.event, "amended": self.amended}


@dataclass(frozen=True)
class LogView:
    """The fold of an operation log: what counts now, and what undo/redo would do."""

    active: tuple[Entry, ...] = ()
    undo_depth: int = 0
    redo_depth: int = 0

    @property
    def can_undo(self) -> bool:
        return self.undo_depth > 0

    @property
    def can_redo(self) -> bool:
        return self.redo_depth > 0

    @property
    def events(self) -> list[dict[str, Any]]:
        return [e.event for e in self.active]


def resolve_log(ops: Iterable[Op]) -> LogView:
    """Fold operations into the active events (pure; the store's single source of truth).

    ``undo`` pops the last applied action or amendment onto a redo stack, ``redo`` pushes it
    back, any new action or amendment clears the redo stack. An amendment replaces the event of
    its target action while the target is applied; an amendment whose target is not applied
    (undone) is ignored. An undo with nothing to undo is a no-op, likewise redo.
    """
    applied: list[Op] = []
    redo: list[Op] = []
    for op in ops:
        if op.op in ("action", "amend"):
            applied.append(op)
            redo.clear()
        elif op.op == "undo":
            if applied:
                redo.append(applied.pop())
        elif op.op == "redo":
            if redo:
                applied.append(redo.pop())
        else:
            raise ValueError(f"unknown operation {op.op!r} (row {op.id})")
    bodies: dict[int, dict[str, Any]] = {}
    order: list[int] = []
    amended: set[int] = set()
    for op in applied:
        if op.op == "action":
            if not isinstance(op.event, dict):
                raise ValueError(f"action {op.id} has no event object")
            bodies[op.id] = op.event
            order.append(op.id)
        elif op.target in bodies and op.event is not None:
            bodies[op.target] = op.event
            amended.add(op.target)
    return LogView(active=tuple(Entry(i, bodies[i], i in amended) for i in order),
                   undo_depth=len(applied), redo_depth=len(redo))


@dataclass(frozen=True)
class GameRecord:
    """A game's metadata (the log lives in ``ops``)."""

    id: int
    kind: str
    title: str
    created: str
    setup: dict[str, Any]
    campaign_id: int | None = None
    result: dict[str, Any] | None = None
    damaged: str = ""   # why the row cannot be used ("" when it can)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "title": self.title, "created": self.created,
                "setup": self.setup, "campaign_id": self.campaign_id, "result": self.result,
                "damaged": self.damaged}


@dataclass(frozen=True)
class CampaignRecord:
    id: int
    title: str
    created: str
    setup: dict[str, Any] = field(default_factory=dict)
    damaged: str = ""   # why the row cannot be used ("" when it can)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "created": self.created,
                "setup": self.setup, "damaged": self.damaged}


class Store:
    """The SQLite store (one connection shared by the server's threads, behind a lock).

    Parameters
    ----------
    path : str or Path
        The database file (made with its folder when missing), or ``":memory:"``.
    clock : callable, optional
        Returns the timestamp written with each row (ISO 8601, UTC by default).
    """

    def __init__(self, path: str | Path, *, clock: Callable[[], str] = utc_now) -> None:
        self.path = str(path)
        self._clock = clock
        self._lock = threading.RLock()
        if self.path != ":memory:":
            try:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise BadInput(f"{self.path}: cannot make its folder: {exc}") from None
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False,
                                       isolation_level=None, timeout=10.0)
            self._refuse_another_programs()
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
            row = self._db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        except sqlite3.DatabaseError as exc:
            raise BadInput(f"{self.path}: not a usable games database: {exc}") from None
        if row is None:
            self._db.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)",
                             (str(SCHEMA_VERSION),))
        elif not str(row[0]).isdigit():
            raise BadInput(f"{self.path}: its schema_version is {row[0]!r}, not a number: "
                           "not a games database this program wrote, or a damaged one")
        elif int(row[0]) > SCHEMA_VERSION:
            raise BadInput(f"{self.path}: made by a newer version (schema {row[0]}), "
                           f"this one reads schema {SCHEMA_VERSION}")

    def _refuse_another_programs(self) -> None:
        """Refuse, before anything is written to it, a database that holds tables this program
        does not make (``--db`` given another program's file): its tables would be added to
        it, its journal switched to WAL."""
        tables = _tables(self._db)
        if "meta" in tables and self._db.execute(
                "SELECT 1 FROM meta WHERE key='schema_version'").fetchone():
            return   # written by this program (a newer version: said by the caller)
        ours = _schema_tables()
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(games)")}
        if tables - set(ours) or (columns and columns != ours["games"]):
            self._db.close()
            raise BadInput(f"{self.path}: not a Doom Companion games database (it holds the "
                           f"tables {', '.join(sorted(tables))} of another program); give --db "
                           "a new file or a games database this program wrote")

    @contextmanager
    def _using(self) -> Iterator[None]:
        """Hold the store's lock; a database that fails (a damaged file, a lock another
        program holds past the timeout) is :class:`StoreUnavailable` naming the file."""
        with self._lock:
            try:
                yield
            except sqlite3.DatabaseError as exc:
                raise StoreUnavailable(f"{self.path}: the games database cannot be used: "
                                       f"{exc}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @property
    def journal_mode(self) -> str:
        with self._using():
            return str(self._db.execute("PRAGMA journal_mode").fetchone()[0])

    # -- games ---------------------------------------------------------------------------
    def create_game(self, kind: str, title: str, setup: Mapping[str, Any], *,
                    campaign_id: int | None = None) -> int:
        if kind not in GAME_KINDS:
            raise BadInput(f"game kind must be one of {', '.join(GAME_KINDS)}, got {kind!r}")
        with self._using():
            cur = self._db.execute(
                "INSERT INTO games (kind, title, created, setup, campaign_id) VALUES (?,?,?,?,?)",
                (kind, title, self._clock(), _dump(setup), campaign_id))
            return int(cur.lastrowid)

    def _by_id(self, sql: str, row_id: int) -> tuple[Any, ...] | None:
        """The row ``sql`` selects ``WHERE id=?``; None when there is none (an id outside
        SQLite's integer range names no row, rather than failing to bind)."""
        if not 0 < row_id <= MAX_ID:
            return None
        with self._using():
            return self._db.execute(sql + " WHERE id=?", (row_id,)).fetchone()

    def game(self, game_id: int) -> GameRecord:
        row = self._by_id("SELECT id, kind, title, created, setup, campaign_id, result "
                          "FROM games", game_id)
        if row is None:
            raise KeyError(f"no game {game_id}")
        record = _game(row)
        if record.damaged:
            raise Damaged(record.damaged)
        return record

    def games(self, *, kind: str | None = None, campaign_id: int | None = None,
              ) -> list[GameRecord]:
        """Every game, newest first (a row that cannot be read is listed with ``damaged``)."""
        sql = "SELECT id, kind, title, created, setup, campaign_id, result FROM games"
        where, args = [], []
        if kind is not None:
            where.append("kind=?")
            args.append(kind)
        if campaign_id is not None:
            where.append("campaign_id=?")
            args.append(campaign_id)
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self._using():
            rows = self._db.execute(sql + " ORDER BY id DESC", args).fetchall()
        return [_game(r) for r in rows]

    def set_result(self, game_id: int, result: Mapping[str, Any] | None) -> None:
        """Record (or clear) the outcome shown in the history; the log stays the truth."""
        with self._using():
            self._db.execute("UPDATE games SET result=? WHERE id=?",
                             (None if result is None else _dump(result), game_id))

    # -- the log -------------------------------------------------------------------------
    def _add(self, game_id: int, op: str, target: int | None,
             event: Mapping[str, Any] | None) -> int:
        with self._using():
            self.game(game_id)
            cur = self._db.execute(
                "INSERT INTO ops (game_id, op, target, body, created) VALUES (?,?,?,?,?)",
                (game_id, op, target, None if event is None else _dump(event), self._clock()))
            return int(cur.lastrowid)

    def append(self, game_id: int, event: Mapping[str, Any]) -> int:
        """Append an action; returns its id (the id its amendments target)."""
        return self._add(game_id, "action", None, event)

    def amend(self, game_id: int, target: int, event: Mapping[str, Any]) -> int:
        """Replace the event of active action ``target``; KeyError when it is not active."""
        with self._using():
            if all(e.id != target for e in self.log(game_id).active):
                raise KeyError(f"event {target} is not an active event of game {game_id}")
            return self._add(game_id, "amend", target, event)

    def undo(self, game_id: int) -> bool:
        """Step back over the last action or amendment; False when there is none."""
        with self._using():
            if not self.log(game_id).can_undo:
                return False
            self._add(game_id, "undo", None, None)
            return True

    def redo(self, game_id: int) -> bool:
        with self._using():
            if not self.log(game_id).can_redo:
                return False
            self._add(game_id, "redo", None, None)
            return True

    def ops(self, game_id: int) -> list[Op]:
        with self._using():
            rows = self._db.execute(
                "SELECT id, op, target, body, created FROM ops WHERE game_id=? ORDER BY id",
                (game_id,)).fetchall()
        return [Op(r[0], r[1], r[2], _loads(r[3], f"game {game_id}: operation {r[0]}"), r[4])
                for r in rows]

    def log(self, game_id: int) -> LogView:
        """The game's active events; :class:`Damaged` when its operations do not fold."""
        ops = self.ops(game_id)
        try:
            return resolve_log(ops)
        except ValueError as exc:
            raise Damaged(f"game {game_id}: {exc}") from None

    # -- campaigns -----------------------------------------------------------------------
    def create_campaign(self, title: str, setup: Mapping[str, Any]) -> int:
        with self._using():
            cur = self._db.execute(
                "INSERT INTO campaigns (title, created, setup) VALUES (?,?,?)",
                (title, self._clock(), _dump(setup)))
            return int(cur.lastrowid)

    def campaign(self, campaign_id: int) -> CampaignRecord:
        row = self._by_id("SELECT id, title, created, setup FROM campaigns", campaign_id)
        if row is None:
            raise KeyError(f"no campaign {campaign_id}")
        record = _campaign(row)
        if record.damaged:
            raise Damaged(record.damaged)
        return record

    def campaigns(self) -> list[CampaignRecord]:
        with self._using():
            rows = self._db.execute(
                "SELECT id, title, created, setup FROM campaigns ORDER BY id DESC").fetchall()
        return [_campaign(r) for r in rows]

    # -- small settings (the current game of each kind, ...) ------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._using():
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        with self._using():
            if value is None:
                self._db.execute("DELETE FROM meta WHERE key=?", (key,))
            else:
                self._db.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                                 "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                                 (key, value))

    # -- export / import -----------------------------------------------------------------
    def export_game(self, game_id: int) -> dict[str, Any]:
        """The game as one JSON document: metadata and the whole operation log."""
        record = self.game(game_id)
        return {"format": EXPORT_FORMAT, "version": SCHEMA_VERSION,
                "game": {k: v for k, v in record.to_json().items()
                         if k not in ("id", "campaign_id", "damaged")},
                "ops": [{k: v for k, v in op.to_json().items() if k != "id"} | {"ref": op.id}
                        for op in self.ops(game_id)]}

    def import_game(self, doc: Mapping[str, Any],
                    check: Callable[[int], None] | None = None) -> int:
        """Add an exported game as a new game (ids are renumbered); returns its id.

        The document must have been checked against the export schema by the caller; this
        checks the references between operations (an amendment targets an earlier action).
        ``check`` is called with the new game's id before it is committed: whatever it raises
        leaves nothing stored.
        """
        game = doc["game"]
        with self._using():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                cur = self._db.execute(
                    "INSERT INTO games (kind, title, created, setup, result) VALUES (?,?,?,?,?)",
                    (game["kind"], game["title"], game.get("created") or self._clock(),
                     _dump(game.get("setup", {})),
                     None if game.get("result") is None else _dump(game["result"])))
                new_id = int(cur.lastrowid)
                ids: dict[int, int] = {}
                for i, op in enumerate(doc["ops"]):
                    target = op.get("target")
                    if op["op"] == "amend":
                        if target not in ids:
                            raise BadInput(f"import: at $.ops[{i}]: amendment of event "
                                           f"{target}, which is not an earlier action")
                        target = ids[target]
                    else:
                        target = None
                    if op["op"] in ("action", "amend") and not isinstance(op.get("event"), dict):
                        raise BadInput(f"import: at $.ops[{i}]: an {op['op']} needs an event")
                    body = op.get("event") if op["op"] in ("action", "amend") else None
                    cur = self._db.execute(
                        "INSERT INTO ops (game_id, op, target, body, created) "
                        "VALUES (?,?,?,?,?)",
                        (new_id, op["op"], target, None if body is None else _dump(body),
                         op.get("created") or self._clock()))
                    if op["op"] == "action" and op.get("ref") is not None:
                        ids[int(op["ref"])] = int(cur.lastrowid)
                if check is not None:
                    check(new_id)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        return new_id


def _dump(doc: Any) -> str:
    return json.dumps(doc, separators=(",", ":"), sort_keys=True)


def _loads(text: str | None, what: str) -> Any:
    """A stored JSON column (None stays None); :class:`Damaged` naming ``what`` otherwise."""
    try:
        return None if text is None else json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise Damaged(f"{what}: not valid JSON ({exc})") from None


def _object(text: str | None, what: str) -> dict[str, Any]:
    doc = _loads(text, what)
    if not isinstance(doc, dict):
        raise Damaged(f"{what}: not a JSON object")
    return doc


def _game(row: tuple[Any, ...]) -> GameRecord:
    """A games row; one that cannot be read keeps its id, kind and title, and says why."""
    record = GameRecord(id=row[0], kind=row[1], title=row[2], created=row[3], setup={},
                        campaign_id=row[5])
    try:
        result = None if row[6] is None else _object(row[6], f"game {row[0]}: its result")
        return replace(record, setup=_object(row[4], f"game {row[0]}: its setup"),
                       result=result)
    except Damaged as exc:
        return replace(record, damaged=str(exc))


def _campaign(row: tuple[Any, ...]) -> CampaignRecord:
    record = CampaignRecord(row[0], row[1], row[2])
    try:
        return replace(record, setup=_object(row[3], f"campaign {row[0]}: its setup"))
    except Damaged as exc:
        return replace(record, damaged=str(exc))
