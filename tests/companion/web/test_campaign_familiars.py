"""Campaigns with familiars (the rulebook's optional rule): "Subtract the Familiar's cost from
the score of each Sigil from each player after each game. Between games, in lowest to highest
score order, players may choose to keep their Familiar or take a different Familiar, which must
be either unused or from a player with a higher total score." """

from __future__ import annotations

import pytest

from companion.session.engine import EngineMissing
from companion.web import WebConfig, create_app

from .browser import serve, shot

cat_module = pytest.importorskip("companion.session.cat")

GRID = list(range(1, 10))


@pytest.fixture
def app(make_hub, tmp_path):
    try:
        hub = make_hub(cat=cat_module.CatAdapter())
    except EngineMissing as exc:
        pytest.skip(str(exc))
    application = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none",
                                       live=False), hub=hub)
    yield application
    application.extensions["doom"].close()


def setup(line, mode="asymmetric", **more):
    return {"players": [{"name": "Ann"}, {"name": "Bo"}], "cards": ["B", "B"],
            "goals": [1, 2], "familiar_mode": mode, "campaign_line": line, **more}


def first_game(c, cid):
    """Game 1 (row 0): Ann picks the Raven (F02, cost 6), Bo the Bat (F06, cost 2); the game
    ends with net sigil totals Ann 50 + 40, Bo 30 + 20 (Ann leads)."""
    res = c.post("/api/games", json={"kind": "cat", "setup": setup("row 0"),
                                      "campaign_id": cid})
    assert res.status_code == 201, res.json
    gid = res.json["game"]["id"]
    for event in ({"type": "pick_roll", "rolls": [[6, 6, 6], [1, 1, 1]]},
                  {"type": "pick", "player": 0, "familiar": "F02"},
                  {"type": "pick", "player": 1, "familiar": "F06"}):
        assert c.post(f"/api/games/{gid}/events", json={"event": event}).status_code == 200
    hub = c.application.extensions["doom"].hub
    session = hub.session(gid)
    verdict = session.engine._verdict(session.state, session.engine.rules.scores(
        session.state.game))
    assert verdict["familiars"] == {"Ann": {"id": "F02", "cost": 6},
                                    "Bo": {"id": "F06", "cost": 2}}
    # the game is played out at the table; its result as the session records it
    hub.store.set_result(gid, {**verdict, "summary": "Ann wins with 90 VP",
                               "sigils": {"Ann": [50, 40], "Bo": [30, 20]}})
    return gid


def new_campaign(c, familiars=True):
    res = c.post("/api/campaigns", json={"title": "Winter", "goals": GRID,
                                         "players": ["Ann", "Bo"], "familiars": familiars})
    assert res.status_code == 201
    return res.json["id"]


def test_between_games_the_lowest_total_chooses_first_and_the_rule_refuses_with_reasons(app):
    c = app.test_client()
    cid = new_campaign(c)
    first_game(c, cid)
    st = c.get(f"/api/campaigns/{cid}").json["standings"]
    # the costs are already off each sigil's score: 90 and 50
    assert st["totals"] == {"Ann": 90, "Bo": 50}
    assert st["familiars"] == {"Ann": "F02", "Bo": "F06"}
    assert st["phase"] == "choosing" and st["choose_order"] == ["Bo", "Ann"]
    options = {o["id"]: o for o in st["options"]}
    assert options["F06"]["keep"] and options["F06"]["ok"]
    assert options["F02"]["ok"]          # Ann's, whose total is higher
    # the next game waits for the choices
    res = c.post("/api/games", json={"kind": "cat", "setup": setup("row 1"),
                                      "campaign_id": cid})
    assert res.status_code == 400 and "Bo must first keep or change" in res.json["error"]
    # Ann's turn is after Bo's
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F01"})
    assert res.status_code == 409 and "it is Bo's choice" in res.json["error"]
    # Bo takes the Raven from Ann (higher total)
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Bo", "familiar": "F02"})
    assert res.status_code == 200, res.json
    st = res.json["standings"]
    assert st["familiars"] == {"Ann": None, "Bo": "F02"} and st["choose_order"] == ["Ann"]
    options = {o["id"]: o for o in st["options"]}
    assert not options["F02"]["ok"] and "not higher than yours" in options["F02"]["reason"]
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F02"})
    assert res.status_code == 409 and "belongs to Bo" in res.json["error"]
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F06"})
    assert res.status_code == 200
    st = res.json["standings"]
    assert st["phase"] == "playing" and st["familiars"] == {"Ann": "F06", "Bo": "F02"}
    # no more choices until the next game ends
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F01"})
    assert res.status_code == 409 and "between games" in res.json["error"]
    # the next game starts with the familiars chosen: nobody picks
    res = c.post("/api/games", json={"kind": "cat", "setup": setup("row 1", "none"),
                                      "campaign_id": cid})
    assert res.status_code == 201, res.json
    game = res.json["state"]
    assert game["phase"] == "roll"
    assert [p["familiar"]["id"] for p in game["players"]] == ["F06", "F02"]


def test_the_first_game_of_a_campaign_with_familiars_is_played_with_them(app):
    c = app.test_client()
    cid = new_campaign(c)
    res = c.post("/api/games", json={"kind": "cat", "setup": setup("row 0", "none"),
                                      "campaign_id": cid})
    assert res.status_code == 400 and "familiar mode 'asymmetric'" in res.json["error"]


def test_a_campaign_without_familiars_has_no_choices(app):
    c = app.test_client()
    cid = new_campaign(c, familiars=False)
    first_game(c, cid)
    st = c.get(f"/api/campaigns/{cid}").json["standings"]
    assert st["with_familiars"] is False and "options" not in st
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Bo", "familiar": "F02"})
    assert res.status_code == 409


@pytest.mark.parametrize("stored", ["{broken", '[{"player": "Bo"}]', '{"after": 1}'])
def test_damaged_familiar_choices_are_said_and_kept(app, stored):
    """The choices between games are a row of the store: edited by hand (or damaged), it made
    every campaign request a 500 and ended the history page's stream. Now the campaign says
    what is wrong, the others are listed, and no choice is written over it."""
    c = app.test_client()
    cid = new_campaign(c)
    other = new_campaign(c, familiars=False)
    first_game(c, cid)
    assert c.post(f"/api/campaigns/{cid}/familiar",
                  json={"player": "Bo", "familiar": "F02"}).status_code == 200
    store = app.extensions["doom"].hub.store
    store.set_meta(f"campaign.{cid}.familiar_choices", stored)
    res = c.get(f"/api/campaigns/{cid}")
    assert res.status_code == 200
    error = res.json["standings"]["error"]
    assert error.startswith(f"campaign {cid}: its familiar choices: ")
    listed = {x["id"]: x["standings"] for x in c.get("/api/campaigns").json["campaigns"]}
    assert listed[cid]["error"] == error and listed[other]["error"] == ""
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F06"})
    assert res.status_code == 400 and res.json["error"] == error
    assert store.get_meta(f"campaign.{cid}.familiar_choices") == stored


@pytest.mark.parametrize(("doc", "status", "message"), [
    ({"player": "Bo"}, 400, "familiar"),
    ({"player": "Bo", "familiar": "F10"}, 400, "$.familiar"),
    ({"player": "", "familiar": "F01"}, 400, "$.player"),
    ({"player": "Bo", "familiar": "F01", "x": 1}, 400, "x"),
])
def test_familiar_choices_are_checked(app, doc, status, message):
    c = app.test_client()
    cid = new_campaign(c)
    res = c.post(f"/api/campaigns/{cid}/familiar", json=doc)
    assert res.status_code == status and message in res.json["error"]
    assert c.post("/api/campaigns/99/familiar",
                  json={"player": "Bo", "familiar": "F01"}).status_code == 404


@pytest.mark.browser
def test_the_choice_between_games_is_made_on_the_history_page(app, page):
    c = app.test_client()
    cid = new_campaign(c)
    first_game(c, cid)
    with serve(app) as served:
        page.goto(served.url + "/history", wait_until="domcontentloaded")
        card = page.locator(f".campaign[data-campaign='{cid}']")
        card.locator(".familiar-choice").wait_for()
        assert "Bo chooses" in card.locator(".familiar-choice").inner_text()
        shot(page, "campaign-familiar-choice")
        card.locator("button[data-familiar='F02']").click()
        page.wait_for_function(
            "document.querySelector('.familiar-choice') && "
            "document.querySelector('.familiar-choice').innerText.includes('Ann chooses')")
        # the Raven is Bo's now and Ann's total is higher: refused, with the reason shown
        raven = card.locator("button[data-familiar='F02']")
        assert raven.is_disabled()
        assert "not higher than yours" in card.locator(".familiar-choice").inner_text()
        shot(page, "campaign-familiar-refused")
        card.locator("button[data-familiar='F06']").click()
        page.wait_for_function("!document.querySelector('.familiar-choice')")
        assert "Ann: Bat" in card.inner_text() and "Bo: Raven" in card.inner_text()
        shot(page, "campaign-familiars-chosen")
        assert page.errors == []


def test_a_solo_campaign_keeps_its_familiar_between_games(app):
    # "Solo Campaign with Familiars: Subtract the Familiar's cost from each Sigil Card's score
    # after each game. Try to win a campaign with each Familiar." The change between games is
    # the multiplayer campaign's.
    c = app.test_client()
    res = c.post("/api/campaigns", json={"title": "Alone", "goals": GRID,
                                         "players": ["Ann"], "familiars": True})
    cid = res.json["id"]
    solo = {"players": [{"name": "Ann"}], "cards": ["B", "B"], "goals": [1, 2],
            "familiar_mode": "solo", "familiar": "F09", "campaign_line": "column 0"}
    res = c.post("/api/games", json={"kind": "cat", "setup": solo, "campaign_id": cid})
    assert res.status_code == 201, res.json
    gid = res.json["game"]["id"]
    hub = app.extensions["doom"].hub
    session = hub.session(gid)
    verdict = session.engine._verdict(session.state, session.engine.rules.scores(
        session.state.game))
    assert verdict["familiars"] == {"Ann": {"id": "F09", "cost": 2}}
    hub.store.set_result(gid, {**verdict, "summary": "solo", "sigils": {"Ann": [70, 72]}})
    st = c.get(f"/api/campaigns/{cid}").json["standings"]
    assert st["totals"] == {"Ann": 142} and st["error"] == ""
    assert st["phase"] == "playing" and st["choose_order"] == [] and st["options"] == []
    res = c.post(f"/api/campaigns/{cid}/familiar", json={"player": "Ann", "familiar": "F04"})
    assert res.status_code == 409
    assert "a solo campaign keeps its familiar" in res.json["error"]
    assert "Solo Campaign with Familiars" in res.json["error"]
    solo.update(campaign_line="column 1", familiar="F04")   # the campaign's familiar wins
    res = c.post("/api/games", json={"kind": "cat", "setup": solo, "campaign_id": cid})
    assert res.status_code == 201, res.json
    assert res.json["state"]["players"][0]["familiar"]["id"] == "F09"
