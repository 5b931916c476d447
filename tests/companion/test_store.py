from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from companion.errors import BadInput
from companion.store import Op, Store, default_db_path, resolve_log

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "games.sqlite", clock=lambda: "2026-01-01T00:00:00+00:00")
    yield s
    s.close()


def test_the_database_is_in_wal_mode(store):
    assert store.journal_mode.lower() == "wal"


def test_a_game_keeps_its_metadata(store):
    gid = store.create_game("cat", "Friday night", {"players": ["Ann", "Bo"]})
    game = store.game(gid)
    assert (game.kind, game.title, game.setup) == ("cat", "Friday night",
                                                    {"players": ["Ann", "Bo"]})
    assert game.created == "2026-01-01T00:00:00+00:00"
    assert [g.id for g in store.games()] == [gid]
    assert store.games(kind="machine") == []


def test_an_unknown_kind_is_refused(store):
    with pytest.raises(BadInput, match="kind"):
        store.create_game("chess", "x", {})


def test_undo_redo_and_a_new_action_drops_the_redo_branch(store):
    gid = store.create_game("machine", "solo", {})
    a = store.append(gid, {"n": 1})
    store.append(gid, {"n": 2})
    assert store.undo(gid)
    assert store.log(gid).events == [{"n": 1}]
    assert store.redo(gid)
    assert store.log(gid).events == [{"n": 1}, {"n": 2}]
    assert not store.redo(gid)
    store.undo(gid)
    store.append(gid, {"n": 3})
    view = store.log(gid)
    assert view.events == [{"n": 1}, {"n": 3}]
    assert not view.can_redo
    assert view.active[0].id == a
    # the log itself is append-only: every operation is still there
    assert [o.op for o in store.ops(gid)] == ["action", "action", "undo", "redo", "undo",
                                              "action"]


def test_an_amendment_replaces_an_event_and_can_be_undone(store):
    gid = store.create_game("cat", "t", {})
    roll = store.append(gid, {"type": "roll", "dice": [3, 5, 5]})
    store.append(gid, {"type": "turn"})
    store.amend(gid, roll, {"type": "roll", "dice": [3, 5, 6]})
    view = store.log(gid)
    assert view.events[0]["dice"] == [3, 5, 6]
    assert view.active[0].amended and view.active[0].id == roll
    store.undo(gid)
    assert store.log(gid).events[0]["dice"] == [3, 5, 5]


def test_amending_an_event_that_is_not_active_is_refused(store):
    gid = store.create_game("cat", "t", {})
    e = store.append(gid, {"n": 1})
    store.undo(gid)
    with pytest.raises(KeyError):
        store.amend(gid, e, {"n": 2})


def test_undo_with_nothing_to_undo_changes_nothing(store):
    gid = store.create_game("cat", "t", {})
    assert not store.undo(gid)
    assert store.ops(gid) == []


def test_a_restart_resumes_every_game(tmp_path):
    path = tmp_path / "g.sqlite"
    s = Store(path)
    gid = s.create_game("cat", "t", {"a": 1})
    s.append(gid, {"n": 1})
    s.append(gid, {"n": 2})
    s.undo(gid)
    s.close()
    again = Store(path)
    assert again.log(gid).events == [{"n": 1}]
    assert again.log(gid).can_redo
    again.close()


def test_a_killed_process_loses_no_committed_event(tmp_path):
    path = tmp_path / "g.sqlite"
    code = (
        "import os, sys\n"
        "from companion.store import Store\n"
        "s = Store(sys.argv[1])\n"
        "g = s.create_game('machine', 'k', {})\n"
        "for i in range(5): s.append(g, {'n': i})\n"
        "os._exit(9)\n")
    proc = subprocess.run([sys.executable, "-c", code, str(path)], cwd=REPO)
    assert proc.returncode == 9
    s = Store(path)
    assert [e["n"] for e in s.log(1).events] == [0, 1, 2, 3, 4]
    s.close()


def test_export_then_import_gives_the_same_game(store):
    gid = store.create_game("cat", "t", {"goals": [1, 2, 3]})
    roll = store.append(gid, {"type": "roll", "dice": [1, 1, 2]})
    store.append(gid, {"type": "x"})
    store.amend(gid, roll, {"type": "roll", "dice": [1, 1, 3]})
    store.undo(gid)
    store.redo(gid)
    store.set_result(gid, {"winner": "Ann"})
    doc = store.export_game(gid)
    new = store.import_game(doc)
    assert new != gid
    assert store.log(new).events == store.log(gid).events
    assert store.game(new).setup == {"goals": [1, 2, 3]}
    assert store.game(new).result == {"winner": "Ann"}


def test_import_refuses_an_amendment_of_nothing(store):
    doc = {"game": {"kind": "cat", "title": "t", "setup": {}},
           "ops": [{"op": "amend", "target": 7, "event": {"n": 1}}]}
    with pytest.raises(BadInput, match=r"ops\[0\]"):
        store.import_game(doc)
    assert store.games() == []


def test_a_file_that_is_not_a_database_is_bad_input(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(BadInput, match=r"junk\.sqlite"):
        Store(path)


def test_meta_and_campaigns(store):
    store.set_meta("current.cat", "4")
    assert store.get_meta("current.cat") == "4"
    store.set_meta("current.cat", None)
    assert store.get_meta("current.cat") is None
    cid = store.create_campaign("Winter", {"grid": list(range(1, 10))})
    assert store.campaign(cid).setup["grid"][8] == 9
    gid = store.create_game("cat", "g1", {}, campaign_id=cid)
    assert [g.id for g in store.games(campaign_id=cid)] == [gid]


@pytest.mark.parametrize(("env", "expected"), [
    ({"DOOMCOMPANION_HOME": "/data/dc"}, "/data/dc/games.sqlite"),
    ({"XDG_DATA_HOME": "/x"}, "/x/doomcompanion/games.sqlite"),
    ({"HOME": "/home/u"}, "/home/u/.local/share/doomcompanion/games.sqlite"),
])
def test_default_db_path(monkeypatch, env, expected):
    for key in ("DOOMCOMPANION_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert str(default_db_path()) == expected


# A model of undo/redo: a list of snapshots and a cursor.
_op = st.one_of(st.just(("undo", None)), st.just(("redo", None)),
                st.tuples(st.just("action"), st.integers(0, 99)),
                st.tuples(st.just("amend"), st.integers(0, 99)))


@given(st.lists(_op, max_size=40))
def test_resolve_log_matches_a_snapshot_model(script):
    ops: list[Op] = []
    history: list[list[tuple[int, int]]] = [[]]   # snapshots of (action id, value)
    cursor = 0
    for i, (kind, value) in enumerate(script, start=1):
        current = history[cursor]
        if kind == "action":
            ops.append(Op(i, "action", None, {"v": value}, ""))
            history = [*history[:cursor + 1], [*current, (i, value)]]
            cursor += 1
        elif kind == "amend":
            if not current:
                continue
            target = current[len(current) // 2][0]
            ops.append(Op(i, "amend", target, {"v": value}, ""))
            history = [*history[:cursor + 1],
                       [(t, value if t == target else v) for t, v in current]]
            cursor += 1
        elif kind == "undo":
            ops.append(Op(i, "undo", None, None, ""))
            cursor = max(0, cursor - 1)
        else:
            ops.append(Op(i, "redo", None, None, ""))
            cursor = min(len(history) - 1, cursor + 1)
    view = resolve_log(ops)
    assert [(e.id, e.event["v"]) for e in view.active] == history[cursor]
    assert view.can_undo == (cursor > 0)
    assert view.can_redo == (cursor < len(history) - 1)


def test_a_schema_version_that_is_no_number_is_bad_input_and_serve_exits_2(tmp_path):
    path = tmp_path / "games.sqlite"
    Store(path).set_meta("schema_version", "abc")
    with pytest.raises(BadInput, match=r"games\.sqlite: its schema_version is 'abc'"):
        Store(path)
    proc = subprocess.run([sys.executable, "-m", "companion", "serve", "--db", str(path),
                           "--source", "none", "--port", "65001"],
                          capture_output=True, text=True, timeout=60, cwd=REPO)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"doomcompanion: error: {path}: its schema_version is 'abc', not a number: not a "
        "games database this program wrote, or a damaged one"]


@pytest.mark.parametrize("tables", [["games (x TEXT)"], ["notes (body TEXT)", "tags (t)"]])
def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path, tables):
    """--db pointed at the wrong file (another program's SQLite database): the store added its
    tables to it and switched it to WAL, and served from it; a 'games' table of its own
    broke every page. Refused now, the file untouched."""
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    for table in tables:
        db.execute(f"CREATE TABLE {table}")
    db.commit()
    db.close()
    before = path.read_bytes()
    names = ", ".join(sorted(t.split()[0] for t in tables))
    with pytest.raises(BadInput) as exc:
        Store(path)
    assert str(exc.value) == (
        f"{path}: not a Doom Companion games database (it holds the tables {names} of "
        "another program); give --db a new file or a games database this program wrote")
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == [
        "other.sqlite"]


def test_an_empty_sqlite_file_becomes_a_games_database(tmp_path):
    path = tmp_path / "empty.sqlite"
    sqlite3.connect(path).close()    # a file of zero bytes: an empty database
    assert Store(path).games() == []


@pytest.mark.parametrize(("sql", "fragment"), [
    ("UPDATE games SET setup='{broken' WHERE id=1", "game 1: its setup: not valid JSON"),
    ("UPDATE games SET result='[1]' WHERE id=1", "game 1: its result: not a JSON object"),
    ("UPDATE ops SET body='[1,' WHERE game_id=1", "game 1: operation 1: not valid JSON"),
    ("UPDATE ops SET op='zap' WHERE game_id=1", "game 1: unknown operation 'zap'"),
    ("UPDATE ops SET body=NULL WHERE game_id=1", "game 1: action 1 has no event object"),
])
def test_a_damaged_row_is_damaged_naming_its_game_and_the_others_read(store, sql, fragment):
    from companion.store import Damaged
    first = store.create_game("cat", "first", {"target": 5})
    store.append(first, {"type": "add", "n": 1})
    second = store.create_game("cat", "second", {"target": 5})
    store._db.execute(sql)
    with pytest.raises(Damaged, match=fragment):
        store.game(first) if "games" in sql else store.log(first)
    listed = {g.id: g.damaged for g in store.games()}
    assert listed[second] == "" and (fragment in listed[first] or "games" not in sql)
    assert store.game(second).title == "second"


def test_a_damaged_database_file_is_store_unavailable_naming_it(tmp_path):
    from companion.store import StoreUnavailable
    path = tmp_path / "games.sqlite"
    s = Store(path)
    s.create_game("cat", "t", {})
    s.close()
    data = bytearray(path.read_bytes())
    data[4096:8192] = b"\xff" * 4096          # the games table's page
    path.write_bytes(bytes(data))
    s = Store(path)
    with pytest.raises(StoreUnavailable, match=r"games\.sqlite: .*malformed"):
        s.games()
    s.close()
