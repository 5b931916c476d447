"""Doom Machine through the API and in the browser (needs the engine, companion.machine)."""

from __future__ import annotations

import pytest

from companion.session import Hub
from companion.store import Store
from companion.web import WebConfig, create_app

from .browser import serve, shot

pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main yet")


def faces_for(condition: dict) -> list[int]:
    """Dice faces that meet a roll condition (the catalogue's six kinds)."""
    kind, n = condition["kind"], condition["dice"]
    if kind == "either_or":
        return [condition["values"][0]]
    if kind == "doubles":
        return [4, 4]
    if kind == "exact_pair":
        return list(condition["values"])
    if kind == "exact_greater":
        return [condition["value"], min(6, condition["value"] + 1)]
    if kind == "all_match":
        return [condition["value"]] * n
    return [1, 2, 3]   # sum


@pytest.fixture
def machine_app(tmp_path):
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source="none", live=False),
                     hub=Hub(Store(tmp_path / "m.sqlite")))
    yield app
    app.extensions["doom"].close()


def test_a_machine_round_through_the_api(machine_app):
    c = machine_app.test_client()
    res = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 5}})
    assert res.status_code == 201
    gid = res.json["game"]["id"]
    state = res.json["state"]
    assert state["phase"] == "roll" and len(state["row"]) == 3
    part = state["row"][0]
    faces = faces_for(part["condition"])
    values = faces + [6] * (len(state["to_roll"]) - len(faces))
    roll = {"type": "roll", "dice": {str(i): v for i, v in zip(state["to_roll"], values,
                                                                 strict=True)}}
    assert c.post(f"/api/games/{gid}/events", json={"event": roll}).status_code == 200
    attack = {"type": "attack", "part": part["part"], "dice": list(range(len(faces)))}
    res = c.post(f"/api/games/{gid}/events", json={"event": attack})
    assert res.status_code == 200, res.json
    hp = next(p["hp"] for p in res.json["state"]["row"] if p["part"] == part["part"]) \
        if any(p["part"] == part["part"] for p in res.json["state"]["row"]) else 0
    assert hp == part["hp"] - 1
    assert c.post(f"/api/games/{gid}/events",
                  json={"event": {"type": "end_turn"}}).status_code == 200
    for _ in range(30):
        state = c.get(f"/api/games/{gid}").json["state"]
        if state["phase"] != "machine":
            break
        assert c.post(f"/api/games/{gid}/events",
                      json={"event": state["next_step"]}).status_code == 200
    assert state["phase"] in ("roll", "over")
    assert any("turn 1" in line or "cycle" in line.lower() for line in state["log"])


@pytest.mark.parametrize(("event", "status"), [
    ({"type": "modify", "die": 0, "delta": 2}, 400),
    ({"type": "attack", "part": "../../etc/passwd", "dice": [0]}, 400),
    ({"type": "setup", "deck": []}, 400),
    ({"type": "roll", "dice": {"0": 7}}, 400),
    ({"type": "end_turn"}, 409),                      # before the roll
    ({"type": "modify", "die": 0, "delta": 1}, 409),  # before the roll
])
def test_machine_events_are_checked(machine_app, event, status):
    c = machine_app.test_client()
    gid = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 1}}).json["game"]["id"]
    res = c.post(f"/api/games/{gid}/events", json={"event": event})
    assert res.status_code == status
    message = res.json.get("error") or res.json["outcome"]["reason"]
    assert message


def test_roll_for_me_stores_the_values(machine_app):
    c = machine_app.test_client()
    gid = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 2}}).json["game"]["id"]
    res = c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll"}})
    assert res.status_code == 200
    stored = res.json["log"][-1]["event"]
    assert stored["source"] == "random" and len(stored["dice"]) == 5
    hand = {str(d["id"]): d["value"] for d in res.json["state"]["dice"] if d["at"] == "hand"}
    assert hand == stored["dice"]


@pytest.mark.browser
def test_a_machine_round_by_clicks_with_a_correction_and_an_undo(tmp_path, page):
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source="none"),
                     hub=Hub(Store(tmp_path / "m.sqlite")))
    with serve(app) as served:
        page.goto(served.url + "/machine", wait_until="domcontentloaded")
        shot(page, "machine-setup")
        page.fill("#setup-seed", "5")
        page.click("#start-machine")
        page.wait_for_selector("#roll-manual")
        state = page.evaluate("fetch('/api/games/current/machine').then(r => r.json())")
        state = state["current"]["state"]
        part = state["row"][0]
        faces = faces_for(part["condition"])
        values = faces + [6] * (len(state["to_roll"]) - len(faces))
        for die, value in zip(state["to_roll"], values, strict=True):
            page.select_option(f"select[data-roll='{die}']", str(value))
        page.click("#roll-manual")
        page.wait_for_selector(".hand button.die")
        # correction: die 4 was misread, it shows a 5 (two clicks in the log)
        page.click("#events li[data-event] button[data-fix='4']")
        page.click(".picker button[data-value='5']")
        page.wait_for_selector(".hand button.die[data-die='4']:text('5')")
        assert page.locator("#events li.amended").count() == 1
        # allocation: the dice that meet the first part's condition, then the part
        for die in range(len(faces)):
            page.click(f".hand button.die[data-die='{die}']")
        page.click(f".part[data-part='{part['part']}']")
        card = f".part[data-part='{part['part']}']"
        if part["hp"] > 1:
            page.wait_for_selector(f"{card} .part-hp .die:text('{part['hp'] - 1}')")
        else:
            page.wait_for_selector(card, state="detached")
        # undo the attack, then redo it
        page.click("#undo")
        page.wait_for_selector(f"{card} .part-hp .die:text('{part['hp']}')")
        page.click("#redo")
        page.wait_for_selector("#end-turn")
        shot(page, "machine-turn")
        page.click("#end-turn")
        page.wait_for_selector("#step")
        for _ in range(40):   # the machine phase, one step per click
            if not page.locator("#step").count():
                break
            before = page.locator("#events li").count()
            page.click("#step")
            page.wait_for_function("n => document.querySelectorAll('#events li').length > n",
                                   arg=before)
        page.wait_for_selector("#roll-manual, #verdict")
        assert page.locator("#machine-log li").count() >= 3
        shot(page, "machine-after-round")
        assert page.errors == []
