from __future__ import annotations

import json
from functools import cache

import pytest

from companion.datafiles import DATA_DIR
from companion.machine.catalogue import _default
from companion.web import WebConfig, create_app

from .conftest import counter_hub


def new_game(client, target=10):
    res = client.post("/api/games", json={"kind": "cat", "title": "t",
                                          "setup": {"target": target}})
    assert res.status_code == 201, res.json
    return res.json["game"]["id"]


@pytest.mark.parametrize("path", ["/", "/cat", "/machine", "/history"])
def test_every_page_is_served(client, path):
    res = client.get(path)
    assert res.status_code == 200
    assert b"Doom Companion" in res.data
    assert b"common.js" in res.data


def test_static_files_and_favicon(client):
    for path in ("/static/style.css", "/static/common.js", "/static/cat.js",
                 "/static/machine.js", "/static/live.js", "/static/history.js", "/favicon.ico"):
        res = client.get(path)
        assert res.status_code == 200, path
        res.close()


def test_status_names_engines_and_what_is_unavailable(client):
    doc = client.get("/api/status").json
    assert doc["engines"]["cat"]["available"]
    assert not doc["engines"]["machine"]["available"]
    assert "missing" in doc["engines"]["machine"]["reason"]
    assert doc["live"]["source"]["state"] == "none"
    assert doc["token_required"] is False


def test_a_game_is_created_played_undone_redone_and_listed(client):
    gid = new_game(client)
    res = client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 4}})
    assert res.status_code == 200 and res.json["state"]["total"] == 4
    assert res.json["outcome"]["ok"]
    assert client.post(f"/api/games/{gid}/undo", json={}).json["state"]["total"] == 0
    assert client.post(f"/api/games/{gid}/redo", json={}).json["state"]["total"] == 4
    games = client.get("/api/games").json["games"]
    assert games[0]["id"] == gid and games[0]["current"] and games[0]["events"] == 1
    assert client.get("/api/games/current/cat").json["current"]["game"]["id"] == gid
    assert client.get(f"/api/games/{gid}").json["can_undo"]


def test_a_rules_refusal_is_409_with_the_reason_and_changes_nothing(client):
    gid = new_game(client, target=5)
    res = client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 6}})
    assert res.status_code == 409
    assert "over the target" in res.json["outcome"]["reason"]
    assert res.json["state"]["total"] == 0


def test_a_correction_and_its_refusal(client):
    gid = new_game(client, target=10)
    eid = client.post(f"/api/games/{gid}/events",
                      json={"event": {"type": "add", "n": 3}}).json["outcome"]["event_id"]
    client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 6}})
    ok = client.post(f"/api/games/{gid}/events/{eid}", json={"event": {"type": "add", "n": 4}})
    assert ok.status_code == 200 and ok.json["state"]["total"] == 10
    bad = client.post(f"/api/games/{gid}/events/{eid}", json={"event": {"type": "add", "n": 5}})
    assert bad.status_code == 409
    assert bad.json["outcome"]["reason"].startswith("correction refused")
    assert bad.json["state"]["total"] == 10
    missing = client.post(f"/api/games/{gid}/events/999", json={"event": {"type": "add", "n": 1}})
    assert missing.status_code == 400 and "999" in missing.json["error"]


@pytest.mark.parametrize(("path", "payload", "status", "fragment"), [
    ("/api/games", {"kind": "chess", "setup": {}}, 400, "$.kind"),
    ("/api/games", {"kind": "cat"}, 400, "'setup' is a required property"),
    ("/api/games", {"kind": "cat", "setup": {}, "evil": 1}, 400, "Additional properties"),
    ("/api/games", {"kind": "cat", "setup": {"target": "x"}}, 400, "setup: at $.target"),
    ("/api/games", {"kind": "cat", "setup": {"target": 13}}, 400, "unlucky"),
    ("/api/games", {"kind": "machine", "setup": {}}, 503, "engine is missing"),
    ("/api/games", {"kind": "cat", "setup": {}, "campaign_id": 7}, 400, "no campaign 7"),
    ("/api/games", [1, 2], 400, "is not of type 'object'"),
    ("/api/games", {"kind": True, "setup": {}}, 400, "body: at $.kind: true is not one of"),
    ("/api/campaigns", {"title": "x", "goals": [1, 2, 3]}, 400, "$.goals"),
    # which value is repeated, not "[1, 1, 1, ...] has non-unique elements"
    ("/api/campaigns", {"title": "x", "goals": [1] * 9}, 400,
     "body: at $.goals: 1 is listed twice: each must be different"),
    ("/api/campaigns", {"title": "x", "goals": [1, 2, 3, 4, 5, 6, 7, 8, 3]}, 400,
     "body: at $.goals: 3 is listed twice"),
    ("/api/campaigns", {"title": "x", "goals": list(range(1, 10)), "players": ["a", "a"]},
     400, '$.players: "a" is listed twice: each must be different'),
    ("/api/campaigns", {"title": "x", "goals": list(range(1, 10)), "players": [" "]},
     400, "$.players[0]"),
    ("/api/campaigns", {"title": "x", "goals": list(range(1, 10)), "players": ["Ann "]},
     400, "$.players[0]"),
    ("/api/games/import", {"format": "zip"}, 400, "this is not a Doom Companion game export"),
    ("/api/games/import", [1, 2], 400, "this is not a Doom Companion game export"),
    ("/api/games/import", {"format": "doomcompanion-game", "version": 2}, 400,
     "body: at $.version: 1 was expected"),
    ("/api/games/import", {"format": "doomcompanion-game", "version": 1}, 400,
     "body: at $: 'game' is a required property"),
])
def test_invalid_bodies_are_refused_with_a_message(client, path, payload, status, fragment):
    res = client.post(path, json=payload)
    assert res.status_code == status
    assert fragment in res.json["error"]


def test_a_schema_error_writes_the_value_as_json_was_sent(client):
    # Python's spelling of the value ("None is not of type 'object'") puzzled a JSON client
    res = client.post("/api/games", data="null", content_type="application/json")
    assert res.status_code == 400
    assert res.json["error"] == "body: at $: null is not of type 'object'"


@pytest.mark.parametrize(("method", "path", "status", "message"), [
    # Flask's "The requested URL was not found on the server. If you entered the URL
    # manually..." said neither what was asked nor what is wrong with it
    ("get", "/api/games/1/events", 405, "GET is not allowed on /api/games/1/events: use POST"),
    ("delete", "/api/games/1", 405, "DELETE is not allowed on /api/games/1: use GET"),
    ("post", "/api/games/abc/undo", 404, "no API endpoint POST /api/games/abc/undo (a game's, "
                                         "an event's or a campaign's id is a whole number)"),
    ("get", "/api/games/-3", 404, "no API endpoint GET /api/games/-3 (a game's"),
    ("get", "/api/nothing", 404, "no API endpoint GET /api/nothing"),
])
def test_an_unknown_endpoint_or_method_is_named(client, method, path, status, message):
    gid = new_game(client)
    assert gid == 1
    res = getattr(client, method)(path, json={} if method != "get" else None)
    assert res.status_code == status
    assert res.json["error"].startswith(message), res.json["error"]
    if status == 405:   # HTTP's own way of saying it, for clients that read headers
        assert res.headers["Allow"] == message.rsplit("use ", 1)[1].replace(" or ", ", ")


def test_game_endpoints_refuse_bad_events_and_unknown_games(client):
    gid = new_game(client)
    res = client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 9}})
    assert res.status_code == 400 and "event: at $.n" in res.json["error"]
    assert client.post(f"/api/games/{gid}/events", json={}).status_code == 400
    assert client.post("/api/games/42/events",
                       json={"event": {"type": "add", "n": 1}}).status_code == 404
    assert client.get("/api/games/42").status_code == 404
    assert client.post(f"/api/games/{gid}/undo", json={}).status_code == 409
    assert client.post(f"/api/games/{gid}/redo", json={}).status_code == 409
    assert client.post(f"/api/games/{gid}/undo", json={"x": 1}).status_code == 400
    assert client.get("/api/games/current/chess").status_code == 404
    assert client.get("/api/games/42/export").status_code == 404
    assert client.get("/api/nothing").status_code == 404
    assert client.get(f"/api/games/{gid}/share.png").status_code == 404


HUGE = 99999999999999999999999   # beyond SQLite's integers


@pytest.mark.parametrize(("method", "path", "payload"), [
    ("get", f"/api/games/{HUGE}", None),
    ("post", f"/api/games/{HUGE}/events", {"event": {"type": "add", "n": 1}}),
    ("post", f"/api/games/{HUGE}/current", {}),
    ("post", f"/api/games/{HUGE}/undo", {}),
    ("get", f"/api/games/{HUGE}/export", None),
    ("get", f"/api/campaigns/{HUGE}", None),
    ("post", f"/api/campaigns/{HUGE}/familiar", {"player": "a", "familiar": "F01"}),
])
def test_an_id_beyond_the_databases_integers_is_no_such_game(client, method, path, payload):
    res = getattr(client, method)(path, json=payload)
    assert res.status_code == 404 and str(HUGE) in res.json["error"]


def test_a_campaign_id_beyond_the_databases_integers_is_refused(client):
    res = client.post("/api/games", json={"kind": "cat", "setup": {"target": 5},
                                          "campaign_id": 10**30})
    assert res.status_code == 400 and "no campaign" in res.json["error"]


def test_a_body_that_is_not_json_is_refused(client):
    assert client.post("/api/games", data="kind=cat").status_code == 415
    res = client.post("/api/games", data="{nope", content_type="application/json")
    assert res.status_code == 400 and "not valid JSON" in res.json["error"]
    res = client.post("/api/games", data='{"kind": "cat", "seed": NaN}',
                      content_type="application/json")
    assert res.status_code == 400
    assert res.json["error"] == "the body: at $.seed: NaN is not a number JSON allows"


def test_a_body_nested_too_deeply_is_refused(client):
    gid = new_game(client)
    deep = b'{"event":' + b"[" * 20000 + b"]" * 20000 + b"}"
    res = client.post(f"/api/games/{gid}/events", data=deep, content_type="application/json")
    assert res.status_code == 400 and "nested too deeply" in res.json["error"]


def test_a_body_over_the_limit_is_413(client):
    res = client.post("/api/games/import", data=b"{" + b" " * (70 * 1024) + b"}",
                      content_type="application/json")
    assert res.status_code == 413 and "too large" in res.json["error"]


@pytest.mark.parametrize(("area", "error"), [
    # a choice of schemas (null or four fractions): the error inside the closest one, as data
    # files say it (datafiles.validate), not "is not valid under any of the given schemas"
    ([0.1, 0.5, 0.9, 1.5], "body: at $.area[3]: 1.5 is greater than the maximum of 1"),
    ([0.1, 0.5, 0.9], "body: at $.area: [0.1, 0.5, 0.9] is too short (at least 4 items)"),
])
def test_a_body_error_inside_a_choice_names_the_value_at_fault(client, area, error):
    res = client.post("/api/live/roll-area", json={"area": area})
    assert res.status_code == 400 and res.json["error"] == error


def test_a_schema_error_on_a_large_value_stays_short(client):
    res = client.post("/api/games/import", json={
        "format": "doomcompanion-game", "version": 1, "ops": [],
        "game": [{"kind": "cat", "title": f"game {i}", "setup": {}} for i in range(200)]})
    assert res.status_code == 400
    assert res.json["error"] == "body: at $.game: a list of 200 items is not of type 'object'"


def test_export_then_import(client):
    gid = new_game(client)
    client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 2}})
    res = client.get(f"/api/games/{gid}/export")
    assert res.status_code == 200 and "attachment" in res.headers["Content-Disposition"]
    doc = json.loads(res.data)
    imported = client.post("/api/games/import", json=doc)
    assert imported.status_code == 201
    new = imported.json["id"]
    copy = client.get(f"/api/games/{new}").json
    assert copy["state"]["total"] == 2
    # marked as imported (once, also when a copy is imported again), started when it was
    assert copy["game"]["title"] == doc["game"]["title"] + " (imported)"
    assert copy["game"]["created"] == doc["game"]["created"]
    again = client.post("/api/games/import", json=client.get(f"/api/games/{new}/export").json)
    assert client.get(f"/api/games/{again.json['id']}").json["game"]["title"] \
        == copy["game"]["title"]


def test_an_imported_demo_game_is_listed(tmp_path):
    # History hides the demo's past loops, not a game the player imported from one
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none", live=False))
    client = app.test_client()
    setup = {"players": [{"name": "Ann"}], "cards": ["A", "B"], "goals": [1, 2, 3]}
    try:
        demo = client.post("/api/games", json={"kind": "cat", "title": "Demo: Doom Cat",
                                               "setup": {**setup, "demo": True}})
        assert demo.status_code == 201, demo.json
        demo_id = demo.json["game"]["id"]
        doc = client.get(f"/api/games/{demo_id}/export").json
        own = client.post("/api/games", json={"kind": "cat", "setup": setup})
        assert own.status_code == 201   # the demo game is no longer the current one
        imported = client.post("/api/games/import", json=doc).json["id"]
        listed = [g["id"] for g in client.get("/api/games").json["games"]]
        assert imported in listed
        assert demo_id not in listed
        # the copy is the player's: not the demo's, so the demo's director leaves it alone
        assert "demo" not in client.get(f"/api/games/{imported}/export").json["game"]["setup"]
    finally:
        app.extensions["doom"].close()


def test_campaigns(client):
    res = client.post("/api/campaigns", json={"title": "Winter", "goals": list(range(1, 10)),
                                              "players": ["Ann"]})
    assert res.status_code == 201
    cid = res.json["id"]
    doc = client.get(f"/api/campaigns/{cid}").json
    assert doc["setup"]["goals"][0] == 1 and doc["games"] == []
    assert doc["standings"]["totals"] == {"Ann": 0}
    assert client.get("/api/campaigns").json["campaigns"][0]["title"] == "Winter"
    assert client.get("/api/campaigns/99").status_code == 404
    # a campaign takes Doom Cat games only
    res = client.post("/api/games", json={"kind": "cat", "setup": {"target": 3},
                                          "campaign_id": cid})
    assert res.status_code == 400 and "row or column" in res.json["error"]


def test_make_current(client):
    first = new_game(client)
    second = new_game(client)
    assert client.get("/api/games/current/cat").json["current"]["game"]["id"] == second
    assert client.post(f"/api/games/{first}/current", json={}).status_code == 200
    assert client.get("/api/games/current/cat").json["current"]["game"]["id"] == first


def test_the_stream_pushes_the_state_of_the_view(client):
    new_game(client)
    res = client.get("/api/stream?view=cat", buffered=False)
    assert res.mimetype == "text/event-stream"
    chunks = iter(res.response)
    assert next(chunks).startswith(b"retry:")
    first = next(chunks).decode()
    assert first.startswith("data: ")
    payload = json.loads(first[6:])
    assert payload["current"]["state"]["total"] == 0
    assert payload["engine"]["available"]
    res.close()
    assert client.get("/api/stream?view=nope").status_code == 400


def test_the_video_is_mjpeg(client):
    res = client.get("/video.mjpg", buffered=False)
    assert res.mimetype == "multipart/x-mixed-replace"
    part = next(iter(res.response))
    assert part.startswith(b"--frame\r\nContent-Type: image/jpeg")
    assert b"\xff\xd8" in part
    res.close()
    still = client.get("/api/live/frame.jpg")
    assert still.data[:2] == b"\xff\xd8"


def test_a_token_guards_every_state_change(tmp_path):
    app = create_app(WebConfig(db_path=tmp_path / "t.sqlite", source="none", live=False,
                               host="0.0.0.0"), hub=counter_hub(tmp_path / "t.sqlite"))
    token = app.extensions["doom"].config.token
    assert token
    client = app.test_client()
    body = {"kind": "cat", "setup": {"target": 3}}
    assert client.post("/api/games", json=body).status_code == 403
    assert client.post("/api/games", json=body,
                       headers={"X-Doom-Token": "wrong"}).status_code == 403
    assert client.post("/api/games", json=body,
                       headers={"X-Doom-Token": token}).status_code == 201
    assert client.get("/api/games").status_code == 200   # reading needs no token
    assert client.get("/api/status").json["token_required"]
    app.extensions["doom"].close()


@pytest.mark.parametrize(("host", "needs_token"), [
    ("127.0.0.1", False), ("localhost", False), ("::1", False), ("0.0.0.0", True),
    ("192.168.1.20", True),
])
def test_the_token_is_on_only_off_loopback(host, needs_token):
    assert bool(WebConfig(host=host).token) is needs_token


def edit_db(path, sql):
    import sqlite3
    from contextlib import closing
    with closing(sqlite3.connect(path)) as db:
        db.execute(sql)
        db.commit()


def restarted(path):
    return create_app(WebConfig(db_path=path, source="none", live=False), hub=counter_hub(path))


def first_payload(client, view):
    res = client.get(f"/api/stream?view={view}", buffered=False)
    chunks = iter(res.response)
    next(chunks)
    payload = json.loads(next(chunks).decode()[6:])
    res.close()
    return payload


@pytest.mark.parametrize(("sql", "fragment"), [
    ("UPDATE games SET setup='{broken' WHERE id=1", "game 1: its setup: not valid JSON"),
    ("UPDATE games SET setup='{}' WHERE id=1", "game 1 cannot be opened: setup: at $"),
    ("UPDATE ops SET body='[1,' WHERE game_id=1", "game 1: operation 1: not valid JSON"),
    ("UPDATE ops SET op='zap' WHERE game_id=1", "game 1: unknown operation 'zap'"),
    ("UPDATE meta SET value='abc' WHERE key='current.cat'", "stored as 'abc', not a game id"),
])
def test_a_damaged_row_harms_only_its_own_game_and_the_streams_say_why(
        client, tmp_path, sql, fragment):
    first = new_game(client)
    client.post(f"/api/games/{first}/events", json={"event": {"type": "add", "n": 1}})
    second = new_game(client)
    client.post(f"/api/games/{first}/current", json={})
    path = tmp_path / "g.sqlite"
    edit_db(path, sql)
    app = restarted(path)
    c = app.test_client()
    games = {g["id"]: g for g in c.get("/api/games").json["games"]}
    assert set(games) == {first, second} and games[second]["damaged"] == ""
    assert c.get(f"/api/games/{second}").status_code == 200
    problem = c.get("/api/games/current/cat").json["problem"]
    assert fragment in problem and first_payload(c, "cat")["problem"] == problem
    assert first_payload(c, "live")["cat"]["problem"] == problem
    assert len(first_payload(c, "history")["games"]) == 2
    if "meta" not in sql:
        res = c.get(f"/api/games/{first}")
        assert res.status_code == 422 and fragment in res.json["error"]
        assert c.post(f"/api/games/{first}/current", json={}).status_code == 422
    if "'{broken'" in sql or "ops" in sql:
        assert fragment in games[first]["damaged"]
    app.extensions["doom"].close()


@pytest.mark.parametrize(("setup", "fragment"), [
    ("{}", "campaign 1: its setup: at $: 'goals' is a required property"),
    ("{broken", "campaign 1: its setup: not valid JSON"),
])
def test_a_damaged_campaign_is_listed_with_the_reason(client, tmp_path, setup, fragment):
    client.post("/api/campaigns", json={"title": "A", "goals": list(range(1, 10))})
    client.post("/api/campaigns", json={"title": "B", "goals": list(range(1, 10))})
    edit_db(tmp_path / "g.sqlite", f"UPDATE campaigns SET setup='{setup}' WHERE id=1")
    listed = {c["title"]: c for c in client.get("/api/campaigns").json["campaigns"]}
    assert fragment in listed["A"]["standings"]["error"]
    assert listed["B"]["standings"]["error"] == ""
    assert first_payload(client, "history")["campaigns"][1]["standings"]["error"]
    res = client.get("/api/campaigns/1")
    assert res.status_code == 422 and fragment in res.json["error"]


def test_a_locked_or_damaged_database_is_503_naming_the_file(client, app, tmp_path):
    import sqlite3
    gid = new_game(client)
    client.post(f"/api/games/{gid}/events", json={"event": {"type": "add", "n": 1}})
    store = app.extensions["doom"].store
    store._db.execute("PRAGMA busy_timeout=50")   # not the 10 s a player would wait
    other = sqlite3.connect(tmp_path / "g.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    res = client.post(f"/api/games/{gid}/undo", json={})
    assert res.status_code == 503
    assert "g.sqlite" in res.json["error"] and "locked" in res.json["error"]
    other.execute("ROLLBACK")
    other.close()
    assert client.post(f"/api/games/{gid}/undo", json={}).status_code == 200


def _broken_goals(tmp_path, monkeypatch):
    doc = json.loads((DATA_DIR / "goals.json").read_text())
    doc[11]["tier"] = 3
    broken = tmp_path / "goals.json"
    broken.write_text(json.dumps(doc))
    monkeypatch.setattr("companion.doomcat.catalogue.GOALS_FILE", broken)
    return "cat", (f"{broken}: at $[11].tier: goal 12 is a tier 2 goal (tier 2 holds goals "
                   "10-18), the file says 3")


def _broken_parts(tmp_path, monkeypatch):
    doc = json.loads((DATA_DIR / "machine" / "parts.json").read_text())
    doc["parts"][7]["number"] = 5
    broken = tmp_path / "parts.json"
    broken.write_text(json.dumps(doc))
    monkeypatch.setattr("companion.machine.catalogue.PARTS_FILE", broken)
    monkeypatch.setattr("companion.machine.catalogue._default", cache(_default.__wrapped__))
    return "machine", f"{broken}: at $.parts[7].number: 5 is used twice, also at $.parts[4]"


@pytest.mark.parametrize("break_it", [_broken_goals, _broken_parts])
def test_a_broken_catalogue_makes_its_game_unavailable_saying_why(tmp_path, monkeypatch,
                                                                   break_it):
    """The dashboard starts with the game whose data file is broken unavailable, the reason
    (file, JSON path, rule) on the status and on every request for that game; the other game
    plays."""
    kind, reason = break_it(tmp_path, monkeypatch)
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none", live=False))
    try:
        client = app.test_client()
        engines = client.get("/api/status").json["engines"]
        title = {"cat": "Doom Cat", "machine": "Doom Machine"}[kind]
        assert engines[kind] == {"available": False, "title": title, "reason": reason}
        other = "machine" if kind == "cat" else "cat"
        assert engines[other]["available"]
        res = client.post("/api/games", json={"kind": kind, "setup": {}})
        assert res.status_code == 503 and res.json["error"] == reason
        assert client.get(f"/api/catalogue/{kind}").json == {}   # as for an engine missing
        assert client.get(f"/{kind}").status_code == 200
    finally:
        app.extensions["doom"].close()
