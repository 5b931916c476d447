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


@pytest.fixture
def served_app(tmp_path):
    """The app as `run` makes it (camera loop on, no source), served by the real WSGI server."""
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source="none"),
                     hub=Hub(Store(tmp_path / "m.sqlite")))
    with serve(app) as served:
        yield app, served
    app.extensions["doom"].close()


def start_by_clicks(page, url: str, parts: list[str]) -> None:
    """Open the machine page, name the three cards turned over and start the game."""
    page.goto(url + "/machine", wait_until="domcontentloaded")
    page.wait_for_selector(f"select[data-revealed='{len(parts) - 1}'] "
                           f"option[value='{parts[-1]}']", state="attached")
    for k, part in enumerate(parts):
        page.select_option(f"select[data-revealed='{k}']", part)
    page.click("#start-machine")


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


@pytest.mark.parametrize(("event", "message"), [
    # the value at fault and the rule it breaks, not "... is not valid under any of the given
    # schemas" about the whole object; written in JSON (true, null, "x"), as it was sent
    ({"type": "roll", "dice": {"0": 7}}, "event: at $.dice.0: 7 is greater than the maximum of 6"),
    ({"type": "roll", "dice": {"0": True}}, "event: at $.dice.0: true is not of type 'integer'"),
    ({"type": "roll", "dice": {"0": None}}, "event: at $.dice.0: null is not of type 'integer'"),
    ({"type": "roll", "dice": "abc"},
     "event: at $.dice: \"abc\" is not of type 'object' or 'array'"),
    ({"type": "shuffle"}, "event: at $.type: \"shuffle\" is not one of [\"roll\", \"modify\", "),
])
def test_a_bad_event_is_refused_naming_the_value_at_fault(machine_app, event, message):
    c = machine_app.test_client()
    gid = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 1}}).json["game"]["id"]
    before = c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll"}}).json
    for url in (f"/api/games/{gid}/events", f"/api/games/{gid}/events/{before['log'][0]['id']}"):
        res = c.post(url, json={"event": event})
        assert res.status_code == 400
        assert res.json["error"].startswith(message), res.json["error"]
    after = c.get(f"/api/games/{gid}").json
    assert (after["log"], after["state"]) == (before["log"], before["state"])


@pytest.mark.parametrize("event", [{"type": "modify"}, {"type": "reroll"},
                                   {"type": "shield"}, {"type": "attack", "part": "x"}])
def test_a_correction_to_an_event_without_its_die_is_refused_with_the_reason(machine_app,
                                                                             event):
    c = machine_app.test_client()
    gid = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 1}}).json["game"]["id"]
    done = c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll"}})
    res = c.post(f"/api/games/{gid}/events/{done.json['outcome']['event_id']}",
                 json={"event": event})
    assert res.status_code == 409
    assert res.json["outcome"]["reason"].startswith("correction refused: event 1 (")
    assert "die ?" in res.json["outcome"]["reason"]
    assert res.json["log"][0]["event"] == done.json["log"][0]["event"]


def test_a_cycle_sent_without_its_part_is_logged_with_the_part_that_cycled(machine_app):
    # the API takes {"type": "cycle"} (the next part, left to right); the log said
    # "machine: None cycles" for it
    c = machine_app.test_client()
    res = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 1}})
    gid, first = res.json["game"]["id"], res.json["state"]["row"][0]
    for event in ({"type": "roll"}, {"type": "end_turn"}, {"type": "cycle"}):
        res = c.post(f"/api/games/{gid}/events", json={"event": event})
        assert res.status_code == 200, res.json
    entry = res.json["log"][-1]
    assert entry["event"]["part"] == first["part"]
    assert entry["text"] == f"machine: {first['name']} cycles"
    assert "None" not in c.get(f"/api/games/{gid}").json["log"][-1]["text"]


def test_a_part_drawn_for_the_player_is_named_in_the_log_and_can_be_corrected(machine_app):
    # "Draw for me" sends {"type": "grow"}: the log said "machine grows: a new part is drawn"
    # without naming it, and offered no correction for it
    c = machine_app.test_client()
    gid = c.post("/api/games", json={"kind": "machine", "setup": {"seed": 4}}).json["game"]["id"]
    for event in ({"type": "roll"}, {"type": "end_turn"}):
        assert c.post(f"/api/games/{gid}/events", json={"event": event}).status_code == 200
    state = c.get(f"/api/games/{gid}").json["state"]
    while state["next_step"]["type"] == "cycle":
        res = c.post(f"/api/games/{gid}/events", json={"event": state["next_step"]})
        assert res.status_code == 200, res.json
        state = res.json["state"]
    assert state["next_step"] == {"type": "grow"}
    deck = c.get(f"/api/games/{gid}").json["game"]["setup"]["setup_event"]["deck"]
    res = c.post(f"/api/games/{gid}/events", json={"event": {"type": "grow"}})
    assert res.status_code == 200, res.json
    entry = res.json["log"][-1]
    name = next(p["name"] for p in res.json["state"]["row"] if p["part"] == deck[3])
    assert entry["event"]["part"] == deck[3]          # the top of the deck after the three
    assert entry["text"] == f"machine grows: {name} drawn"
    assert res.json["state"]["row"][0]["part"] == deck[3]
    other = next(p["part"] for p in state["drawable"] if p["part"] != deck[3])
    fixed = c.post(f"/api/games/{gid}/events/{entry['id']}",
                   json={"event": {**entry["event"], "part": other}})
    assert fixed.status_code == 200, fixed.json
    assert fixed.json["state"]["row"][0]["part"] == other


def test_a_starting_part_named_twice_is_refused_by_its_name(machine_app):
    # the page's toast said 'setup: at $.revealed: ["chain-lash", "chain-lash"] has
    # non-unique elements' when a player picked Chain Lash in two of the three selects
    c = machine_app.test_client()
    res = c.post("/api/games", json={"kind": "machine", "title": "x", "setup": {
        "revealed": ["gear-grinder", "chain-lash", "chain-lash"]}})
    assert res.status_code == 400
    assert res.json["error"] == ("setup: Chain Lash is named twice among the starting parts: "
                                 "each card is turned over once")
    assert c.get("/api/games").json["games"] == []


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
def test_every_die_on_the_page_says_which_die_the_log_means(served_app, page):
    # the log says "shield with die 4", "dice 1, 2, 5 are spent", but the dice showed only
    # their faces: "die 4" could be found only by hovering it (no hover on a phone)
    from playwright.sync_api import expect

    _app, served = served_app
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    page.fill("#setup-seed", "5")
    page.click("#start-machine")
    page.click("#roll-random")
    # the page is redrawn from the server's answers: each check waits for its state (under a
    # loaded CPU the log can be drawn a moment after the dice)
    for k in range(5):
        slot = page.locator(f".hand .die-slot:has(button.die[data-die='{k}'])")
        expect(slot.locator(".die-n")).to_have_text(f"die {k + 1}")
    page.click(".hand button.die[data-die='3']")
    page.click("#slot-shield")
    expect(page.locator(".small-row .die-slot:has(.die[data-die='3']) .die-n")).to_have_text(
        "die 4")
    expect(page.locator("#events")).to_contain_text("shield with die 4")
    expect(page.locator(".hand .die-slot")).to_have_count(4)
    shot(page, "machine-dice-named")


@pytest.mark.browser
def test_a_machine_round_by_clicks_with_a_correction_and_an_undo(served_app, page):
    _app, served = served_app
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    shot(page, "machine-setup")
    page.fill("#setup-seed", "5")
    page.click("#start-machine")
    page.wait_for_selector("#roll-manual")
    # the roll picker counts dice as players do, from one (the data keeps ids from 0)
    assert page.locator("label.roll-pick").first.text_content().startswith("die 1")
    assert page.get_attribute("select[data-roll='0']", "aria-label") == "die 1"
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


# -- the part cards turned over at the table ---------------------------------------------
# "Draw the top 3 cards from the machine deck and place them face up" and, each machine
# phase, "Draw a new machine part card and slot it into the available space": the player
# names the card the table shows; the catalogue and the deck decide whether it can be.

def start(c, setup):
    return c.post("/api/games", json={"kind": "machine", "setup": setup})


def to_the_draw(c, gid):
    """Roll sixes, shield with them, end the player phase and cycle the row: the state
    before the grow."""
    state = c.get(f"/api/games/{gid}").json["state"]
    dice = {str(i): 6 for i in state["to_roll"]}
    c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll", "dice": dice}})
    for die in state["to_roll"][:state["shield_cap"]]:
        c.post(f"/api/games/{gid}/events", json={"event": {"type": "shield", "die": die}})
    c.post(f"/api/games/{gid}/events", json={"event": {"type": "end_turn"}})
    for _ in range(30):
        state = c.get(f"/api/games/{gid}").json["state"]
        assert state["phase"] == "machine"
        if state["next_step"]["type"] == "grow":
            return state
        assert c.post(f"/api/games/{gid}/events",
                      json={"event": state["next_step"]}).status_code == 200
    raise AssertionError("the machine phase did not reach its draw")


@pytest.mark.parametrize("hard", [False, True])
def test_the_starting_parts_are_the_cards_turned_over(machine_app, hard):
    c = machine_app.test_client()
    named = ["power-ram", "chain-lash", "mind-lance"]
    res = start(c, {"seed": 3, "hard": hard, "revealed": named})
    assert res.status_code == 201, res.json
    state = res.json["state"]
    assert [p["part"] for p in state["row"]] == named     # in a line, left to right
    assert state["deck_size"] == (15 if hard else 9) + 1 - 3   # the core under the others


@pytest.mark.parametrize(("revealed", "status", "reason"), [
    (["doom-core"], 400, "bottom of the deck"),
    (["no-such-part"], 400, "unknown part"),
    (["power-ram", "power-ram"], 400, "Power Ram is named twice"),
    (["power-ram", "chain-lash", "mind-lance", "rage-engine"], 400, "revealed"),
    (["../etc"], 400, "revealed"),
])
def test_impossible_starting_parts_are_refused_with_the_reason(machine_app, revealed, status,
                                                               reason):
    c = machine_app.test_client()
    res = start(c, {"seed": 3, "revealed": revealed})
    assert res.status_code == status
    assert reason in res.json["error"]
    assert c.get("/api/games").json["games"] == []


def test_the_part_drawn_by_the_machine_is_named_or_refused_with_the_reason(machine_app):
    c = machine_app.test_client()
    gid = start(c, {"seed": 4}).json["game"]["id"]
    state = to_the_draw(c, gid)
    drawable = [p["part"] for p in state["drawable"]]
    in_play = [p["part"] for p in state["row"]]
    assert drawable and "doom-core" not in drawable        # the core is at the bottom
    assert not set(drawable) & set(in_play)
    assert all(p["name"] and p["name"] != p["part"] for p in state["drawable"])
    for part, reason in [(in_play[0], "already in play"),
                         ("doom-core", "bottom of the deck"),
                         ("no-such-part", "unknown part")]:
        res = c.post(f"/api/games/{gid}/events", json={"event": {"type": "grow", "part": part}})
        assert res.status_code == 409 and reason in res.json["outcome"]["reason"], part
    last = drawable[-1]
    res = c.post(f"/api/games/{gid}/events", json={"event": {"type": "grow", "part": last}})
    assert res.status_code == 200
    assert res.json["state"]["row"][0]["part"] == last      # slotted in next to the deck
    assert res.json["log"][-1]["text"].endswith(res.json["state"]["row"][0]["name"] + " drawn")
    # a wrong name is corrected in the log: the game folds again with the right card
    entry = res.json["log"][-1]
    other = drawable[0]
    res = c.post(f"/api/games/{gid}/events/{entry['id']}",
                 json={"event": {"type": "grow", "part": other}})
    assert res.status_code == 200 and res.json["state"]["row"][0]["part"] == other


def test_the_catalogue_lists_every_part_card(machine_app):
    parts = machine_app.test_client().get("/api/catalogue/machine").json["parts"]
    assert len(parts) == 16 and sum(bool(p.get("core")) for p in parts) == 1
    assert all(p["id"] and p["name"] for p in parts)


@pytest.mark.browser
def test_the_cards_turned_over_are_named_by_clicks(served_app, page):
    _app, served = served_app
    start_by_clicks(page, served.url, ["power-ram", "chain-lash", "mind-lance"])
    page.wait_for_selector("#roll-manual")
    row = page.locator("#row .part").evaluate_all("els => els.map(e => e.dataset.part)")
    assert row == ["power-ram", "chain-lash", "mind-lance"]
    # sixes on the shield, end the phase, run the cycles: the draw waits for its card
    for die in range(5):
        page.select_option(f"select[data-roll='{die}']", "6")
    page.click("#roll-manual")
    for die in range(4):
        page.click(f".hand button.die[data-die='{die}']")
        page.click("#slot-shield")
        page.wait_for_selector(f".small-row .die[data-die='{die}']")
    page.click("#end-turn")
    page.click("#run-phase")
    page.wait_for_selector("#name-part")
    # a card already in play is refused with the reason, by the engine
    page.click("#name-part")
    names = page.locator(".picker button").all_inner_texts()
    assert "Power Ram" not in names and "Doom Core" not in names
    shot(page, "machine-name-part")
    choice = names[0]
    page.click(f".picker button:text-is('{choice}')")
    page.wait_for_selector("#roll-manual")
    assert page.locator("#row .part .part-name").first.inner_text() == choice
    assert f"{choice} drawn" in page.locator("#events").inner_text()
    # named wrongly: two clicks in the log put the right card in its place
    page.click("#events button[data-fix-grow]")
    page.click(".picker button:text-is('Rage Engine')")
    page.wait_for_selector("#events li.amended")
    assert page.locator("#row .part .part-name").first.inner_text() == "Rage Engine"
    shot(page, "machine-named")
    assert page.errors == []


# "Lock — Choose one of your dice and set it aside. It does not get rolled or placed on your
# next turn": the player chooses which die.

def test_the_player_chooses_the_die_a_lock_icon_sets_aside(machine_app):
    c = machine_app.test_client()
    gid = start(c, {"seed": 1, "revealed": ["grasping-claw", "power-ram", "mind-lance"]}
                ).json["game"]["id"]
    dice = {str(i): 6 for i in range(5)}
    c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll", "dice": dice}})
    c.post(f"/api/games/{gid}/events", json={"event": {"type": "end_turn"}})
    state = c.get(f"/api/games/{gid}").json["state"]
    step = state["next_step"]
    assert step["part"] == "grasping-claw" and "lock" in state["row"][0]["next"]["icons"]
    res = c.post(f"/api/games/{gid}/events", json={"event": {**step, "locks": [7]}})
    assert res.status_code == 409 and "locks" in res.json["outcome"]["reason"]
    res = c.post(f"/api/games/{gid}/events", json={"event": {**step, "locks": [99]}})
    assert res.status_code == 400
    res = c.post(f"/api/games/{gid}/events", json={"event": {**step, "locks": [3]}})
    assert res.status_code == 200
    assert [d["id"] for d in res.json["state"]["dice"] if d["at"] == "locked"] == [3]
    # players count dice from one: id 3 is the fourth die
    assert res.json["log"][-1]["text"].endswith("(lock: die 4)")
    assert any("locks die 4" in line for line in res.json["state"]["log"])


@pytest.mark.browser
def test_the_die_a_lock_sets_aside_is_chosen_and_corrected_by_clicks(served_app, page):
    _app, served = served_app
    start_by_clicks(page, served.url, ["grasping-claw", "power-ram", "mind-lance"])
    for die in range(5):
        page.select_option(f"select[data-roll='{die}']", "6")
    page.click("#roll-manual")
    page.click("#end-turn")
    page.wait_for_selector("#step:has-text('choose the die to lock')")
    assert page.locator("#run-phase").count() == 0
    page.click("#step")
    page.click(".picker button[data-value='3']")
    page.wait_for_selector(".small-row .die.locked[data-die='3']")
    shot(page, "machine-lock")
    page.click("#events button[data-fix-lock]")          # it was die 1, in fact
    page.click(".picker button[data-value='1']")
    page.wait_for_selector(".small-row .die.locked[data-die='1']")
    assert page.locator(".small-row .die.locked").count() == 1
    assert page.errors == []


# A gear cycles its neighbours: a neighbour landing on its lock icon asks for the die too.

def to_the_gear_lock(c, gid):
    """Play sixes (nothing attacked, shield off) until the next step is a cycle that fires a
    lock through a gear; its state."""
    for _ in range(40):
        state = c.get(f"/api/games/{gid}").json["state"]
        if state["phase"] == "roll":
            dice = {str(i): 6 for i in state["to_roll"]}
            c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll", "dice": dice}})
            c.post(f"/api/games/{gid}/events", json={"event": {"type": "end_turn"}})
            continue
        step = state["next_step"]
        part = next((p for p in state["row"] if p["part"] == step.get("part")), None)
        if step["type"] == "cycle" and state["lock_choices"] \
                and "lock" not in part["next"]["icons"]:
            return state
        res = c.post(f"/api/games/{gid}/events", json={"event": step})
        assert res.status_code == 200, res.json
    raise AssertionError("no gear fired a lock")


GEAR_LOCK = {"seed": 0, "revealed": ["grasping-claw", "gear-grinder", "mind-lance"]}


def test_a_lock_fired_through_a_gear_is_the_players_choice(machine_app):
    c = machine_app.test_client()
    gid = start(c, GEAR_LOCK).json["game"]["id"]
    state = to_the_gear_lock(c, gid)
    step = state["next_step"]
    assert step["part"] == "gear-grinder"
    assert state["lock_choices"] == [[0, 1, 2, 3, 4]]
    res = c.post(f"/api/games/{gid}/events", json={"event": {**step, "locks": [2]}})
    assert res.status_code == 200
    assert [d["id"] for d in res.json["state"]["dice"] if d["at"] == "locked"] == [2]
    assert any("Grasping Claw locks die 3" in line for line in res.json["state"]["log"])
    # corrected from the log: id 4 (die 5), in fact
    event_id = res.json["log"][-1]["id"]
    res = c.post(f"/api/games/{gid}/events/{event_id}",
                 json={"event": {**step, "locks": [4]}})
    assert res.status_code == 200
    assert [d["id"] for d in res.json["state"]["dice"] if d["at"] == "locked"] == [4]


def test_lock_choices_are_empty_when_no_lock_fires(machine_app):
    c = machine_app.test_client()
    gid = start(c, GEAR_LOCK).json["game"]["id"]
    c.post(f"/api/games/{gid}/events",
           json={"event": {"type": "roll", "dice": {str(i): 6 for i in range(5)}}})
    state = c.get(f"/api/games/{gid}").json["state"]
    assert state["phase"] == "player" and state["lock_choices"] == []


@pytest.mark.browser
def test_a_lock_through_a_gear_is_chosen_by_clicks(served_app, page):
    app, served = served_app
    c = app.test_client()
    gid = start(c, GEAR_LOCK).json["game"]["id"]
    to_the_gear_lock(c, gid)
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    page.wait_for_selector("#step:has-text('choose the die to lock')")
    assert "Gear Grinder" in page.locator("#step").inner_text()
    assert page.locator("#run-phase").count() == 0
    page.click("#step")
    page.wait_for_selector(".picker button[data-value='2']")
    shot(page, "machine-gear-lock")
    page.click(".picker button[data-value='2']")
    page.wait_for_selector(".small-row .die.locked[data-die='2']")
    page.click("#events button[data-fix-lock]")
    page.click(".picker button[data-value='0']")
    page.wait_for_selector(".small-row .die.locked[data-die='0']")
    assert page.errors == []


@pytest.mark.browser
def test_what_the_player_is_entering_survives_the_camera_updates(tmp_path, page):
    """With the camera feeding the page several times a second, the starting parts being
    chosen and the dice values being entered stay as the player set them until sent."""
    import cv2
    import numpy as np

    from companion.session.camera import Processor
    from vision.readings import DiceReading

    frames = tmp_path / "frames"
    frames.mkdir()
    for i in range(80):
        cv2.imwrite(str(frames / f"f{i:02d}.png"), np.full((240, 320, 3), 90 + i, np.uint8))
    hub = Hub(Store(tmp_path / "m.sqlite"))
    app = create_app(WebConfig(db_path=tmp_path / "m.sqlite", source=str(frames)), hub=hub,
                     processor=Processor(hub, read_dice=lambda image: DiceReading(()),
                                         read_sigil=None))

    def camera_updates(n):
        seen = page.evaluate("window.__doomLatencies.length")
        page.wait_for_function(f"window.__doomLatencies.length >= {seen + n}")

    with serve(app) as served:
        page.goto(served.url + "/machine", wait_until="domcontentloaded")
        page.wait_for_selector("select[data-revealed='2'] option[value='mind-lance']",
                               state="attached")
        camera_updates(1)
        page.select_option("select[data-revealed='0']", "power-ram")
        camera_updates(3)
        assert page.input_value("select[data-revealed='0']") == "power-ram"
        page.select_option("select[data-revealed='1']", "chain-lash")
        page.select_option("select[data-revealed='2']", "mind-lance")
        page.click("#start-machine")
        page.wait_for_selector("select[data-roll='4']")
        for die in range(3):
            page.select_option(f"select[data-roll='{die}']", "6")
        camera_updates(3)
        # and a redraw of the page (here: a look at the setup and back) keeps them too
        page.click("button:text-is('New run')")
        page.click("button:text-is('Back to the game')")
        assert [page.input_value(f"select[data-roll='{d}']") for d in range(5)] == \
            ["6", "6", "6", "", ""]
        for die in (3, 4):
            page.select_option(f"select[data-roll='{die}']", "6")
        page.click("#roll-manual")
        page.wait_for_selector("#end-turn")
        assert page.errors == []
    app.extensions["doom"].close()


@pytest.mark.browser
def test_the_slots_the_stage_no_longer_allows_are_disabled(served_app, page):
    """Shields come after the utilities: once a die is on the shield, +1, -1 and Re-roll are
    off (the engine's legal actions say so), and the stage is shown in the player phase only."""
    app, served = served_app
    s = app.extensions["doom"].hub.create_game("machine", "t", {"seed": 4})
    s.submit({"type": "roll", "dice": {"0": 2, "1": 3, "2": 4, "3": 5, "4": 6}})
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    page.wait_for_selector(".player .panel-head:has-text('stage: utilities')")
    assert all(page.is_enabled(f"#slot-{k}") for k in ("plus", "minus", "reroll", "shield"))
    page.click(".hand button.die[data-die='4']")
    page.click("#slot-shield")
    page.wait_for_selector(".player .panel-head:has-text('stage: shields')")
    assert [page.is_enabled(f"#slot-{k}") for k in ("plus", "minus", "reroll", "shield")] \
        == [False, False, False, True]
    page.click("#end-turn")
    page.wait_for_selector("#step")
    assert "stage" not in page.locator(".player .panel-head").inner_text()
    assert not any(page.is_enabled(f"#slot-{k}") for k in ("plus", "minus", "reroll", "shield"))
    assert page.errors == []


@pytest.mark.browser
def test_a_correction_to_the_same_value_is_refused_and_undo_names_what_it_undid(served_app,
                                                                               page):
    app, served = served_app
    s = app.extensions["doom"].hub.create_game("machine", "t", {"seed": 4})
    s.submit({"type": "roll", "dice": {"0": 2, "1": 3, "2": 4, "3": 5, "4": 6}})
    page.goto(served.url + "/machine", wait_until="domcontentloaded")
    page.click("#events li[data-event] button[data-fix='1']")
    page.click(".picker button[data-value='3']")          # what it already shows
    page.wait_for_selector("#toast:has-text('nothing to correct: event 1')")
    assert page.locator("#events li.amended").count() == 0
    page.click("#undo")
    page.wait_for_selector("#toast:has-text('Undid event 1: roll 2 3 4 5 6')")
    page.wait_for_selector("#roll-manual")
    assert [e for e in page.errors if "409 (CONFLICT)" not in e] == []
