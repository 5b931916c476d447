"""Doom Cat familiars through the session, the API and the page (the rulebook's "Familiar
Cards" section): Asymmetric Player Powers picked in roll order, and the one-off powers of our
catalogue used from the page, each at most once per game."""

from __future__ import annotations

import pytest

from companion.session.engine import EngineMissing
from companion.web import WebConfig, create_app

from .browser import serve, shot

cat_module = pytest.importorskip("companion.session.cat")


@pytest.fixture
def hub(make_hub):
    try:
        return make_hub(cat=cat_module.CatAdapter())
    except EngineMissing as exc:
        pytest.skip(str(exc))


def players(*names):
    return [{"name": n} for n in names]


def asymmetric(*names):
    return {"players": players(*names), "cards": ["B", "B"], "goals": [1, 2, 3],
            "familiar_mode": "asymmetric"}


def solo(familiar):
    return {"players": players("Ann"), "cards": ["B", "B"], "goals": [1, 2, 3],
            "familiar_mode": "solo", "familiar": familiar}


def refused(s, event, reason):
    out = s.submit(event)
    assert not out.ok, event
    assert reason in out.reason, out.reason


# -- Asymmetric Player Powers ------------------------------------------------------------
# "Each player has their own power. Players roll three dice and the player who rolled the
# highest sum chooses one Familiar, and other players choose in clockwise order. At the end of
# the game, players subtract their Familiar's "Score Cost" from each of their Sigil Card
# scores."

def test_asymmetric_players_roll_then_pick_in_order_and_pay_their_own_cost(hub):
    s = hub.create_game("cat", "t", asymmetric("Ann", "Bo", "Cy"))
    view = s.view()["state"]
    assert view["phase"] == "picking"
    assert view["picking"] == {"order": None, "next": None, "taken": {}}
    refused(s, {"type": "roll", "dice": [1, 2, 3]}, "familiar")
    refused(s, {"type": "pick", "player": 0, "familiar": "F01"}, "roll for the pick order")
    refused(s, {"type": "pick_roll", "rolls": [[6, 6, 6], [6, 6, 6], [1, 1, 1]]},
            "tie for the highest")
    refused(s, {"type": "pick_roll", "rolls": [[6, 6, 6], [1, 1, 1]]}, "three dice for each")
    assert s.submit({"type": "pick_roll", "rolls": [[1, 1, 1], [6, 6, 5], [2, 2, 2]]}).ok
    view = s.view()["state"]
    assert view["picking"]["order"] == [1, 2, 0] and view["picking"]["next"] == 1  # clockwise
    refused(s, {"type": "pick", "player": 0, "familiar": "F01"}, "Bo's pick")
    assert s.submit({"type": "pick", "player": 1, "familiar": "F01"}).ok
    refused(s, {"type": "pick", "player": 2, "familiar": "F01"}, "already taken")
    assert s.submit({"type": "pick", "player": 2, "familiar": "F02"}).ok
    assert s.view()["state"]["picking"]["taken"] == {"F01": 1, "F02": 2}
    assert s.submit({"type": "pick", "player": 0, "familiar": "F09"}).ok
    view = s.view()["state"]
    assert view["phase"] == "roll" and view["picking"] is None
    assert [p["familiar"]["id"] for p in view["players"]] == ["F09", "F01", "F02"]
    costs = [[c["score"]["familiar_cost"] for c in p["cards"]] for p in view["players"]]
    assert costs == [[2, 2], [5, 5], [6, 6]]          # each player's own, on each sigil
    assert [p["total"] for p in view["players"]] == [-4, -10, -12]
    assert s.submit({"type": "roll", "dice": [1, 2, 3]}).ok


@pytest.mark.parametrize(("setup", "reason"), [
    ({**asymmetric("Ann")}, "two or more players"),
    ({**asymmetric("Ann", "Bo"), "familiar": "F01"}, "only for one-for-all or solo"),
])
def test_bad_asymmetric_setups_are_refused(hub, setup, reason):
    from companion.errors import BadInput
    with pytest.raises(BadInput, match=reason):
        hub.create_game("cat", "t", setup)


def test_the_asymmetric_pick_is_undone_and_corrected_like_any_reading(hub):
    s = hub.create_game("cat", "t", asymmetric("Ann", "Bo"))
    s.submit({"type": "pick_roll", "rolls": [[6, 6, 6], [1, 1, 1]]})
    out = s.submit({"type": "pick", "player": 0, "familiar": "F04"})
    assert s.amend(out.event_id, {"type": "pick", "player": 0, "familiar": "F06"}).ok
    assert s.view()["state"]["picking"]["taken"] == {"F06": 0}
    assert s.undo()                                  # the correction is undone first
    assert s.view()["state"]["picking"]["taken"] == {"F04": 0}
    assert s.undo()
    assert s.view()["state"]["picking"]["taken"] == {}


# -- one-off powers ----------------------------------------------------------------------

def test_the_owl_knocks_over_no_candle_once_per_game(hub):
    s = hub.create_game("cat", "t", solo("F04"))
    fam = s.view()["state"]["players"][0]["familiar"]
    assert fam["id"] == "F04" and fam["used"] is False and fam["usable"] is False  # no roll
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    assert s.view()["state"]["players"][0]["familiar"]["usable"] is True
    assert s.submit({"type": "power", "player": 0, "familiar": "F04"}).ok
    pieces = s.view()["state"]["players"][0]["pieces"]
    assert pieces["power"] == {"familiar": "F04"}
    refused(s, {"type": "power", "player": 0, "familiar": "F04"}, "already")
    refused(s, {"type": "cross", "player": 0, "card": 0, "candle": 0}, "Owl")
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 1}).ok
    assert s.submit({"type": "line", "player": 0, "card": 0, "line": [1, 2]}).ok
    view = s.view()["state"]
    assert view["turn"] == 2 and view["players"][0]["cards"][0]["sigil"]["crossed"] == []
    assert view["players"][0]["familiar"]["used"] is True
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    assert s.view()["state"]["players"][0]["familiar"]["usable"] is False
    refused(s, {"type": "power", "player": 0, "familiar": "F04"}, "once per game")


def test_the_black_cat_turns_a_die_for_its_player_only(hub):
    s = hub.create_game("cat", "t", solo("F01"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    refused(s, {"type": "write", "player": 0, "card": 0, "value": 4}, "")
    assert s.submit({"type": "power", "player": 0, "familiar": "F01", "die": 0, "to": 4}).ok
    options = s.view()["state"]["players"][0]["options"]
    assert 4 in options[0]["values"]                   # the legal choices follow the new die
    assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 4, "line": [1, 2],
                     "cross": 3}).ok
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["top"][0]["value"] == 4


def test_a_black_cat_three_of_a_kind_is_no_rolled_triples_on_the_page(hub):
    # Rolling Triples: "If three matching numbers are rolled, they are considered wild for
    # all players." A die the Black Cat turned was not rolled: 4 4 5 turned to 4 4 4 offers
    # only 4 to write, and a 1 is refused with the reason.
    s = hub.create_game("cat", "t", solo("F01"))
    s.submit({"type": "roll", "dice": [4, 4, 5]})
    assert s.submit({"type": "power", "player": 0, "familiar": "F01", "die": 2, "to": 4}).ok
    view = s.view()["state"]
    assert view["wild_roll"] is False
    assert {v for o in view["players"][0]["options"] for v in o["values"]} == {4}
    refused(s, {"type": "turn", "player": 0, "card": 0, "value": 1, "line": [1, 2],
                "cross": 0}, "no Rolling Triples")


def test_the_raven_draws_an_extra_line_named_with_the_power(hub):
    s = hub.create_game("cat", "t", solo("F02"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    assert [4, 5] in s.view()["state"]["players"][0]["cards"][0]["open_lines"]
    refused(s, {"type": "power", "player": 0, "familiar": "F02"}, "extra line")
    assert s.view()["state"]["players"][0]["cards"][0]["score"]["goals"]["03"] == 0
    assert s.submit({"type": "power", "player": 0, "familiar": "F02", "card": 0,
                     "extra_line": [4, 5]}).ok
    live = s.view()["state"]["players"][0]["cards"][0]["score"]   # counted at once:
    assert live["pending"] and live["goals"]["03"] == 2           # #03, 1 VP a used candle
    refused(s, {"type": "write", "player": 0, "card": 1, "value": 1}, "card 1")
    assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 1, "line": [1, 2],
                     "cross": 0}).ok
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"] == [[1, 2], [4, 5]]


def test_a_raven_line_from_a_candle_to_itself_is_refused(hub):
    s = hub.create_game("cat", "t", solo("F02"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    refused(s, {"type": "power", "player": 0, "familiar": "F02", "card": 0,
                "extra_line": [3, 3]}, "Raven: line 3-3 does not join two different candles")


def test_the_snake_erases_a_drawn_line_and_a_refused_power_says_why(hub):
    s = hub.create_game("cat", "t", solo("F07"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    refused(s, {"type": "power", "player": 0, "familiar": "F07", "card": 0, "erase": [4, 5]},
            "Snake: line upper 5 – left 6 is not drawn on card 1")
    s.submit({"type": "turn", "player": 0, "card": 0, "value": 1, "line": [1, 2], "cross": 0})
    s.submit({"type": "roll", "dice": [4, 2, 3]})
    assert s.submit({"type": "power", "player": 0, "familiar": "F07", "card": 0,
                     "erase": [1, 2]}).ok
    assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 4, "line": [7, 8],
                     "cross": 3}).ok
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"] == [[7, 8]]


def test_the_moth_ends_a_line_at_a_crossed_candle(hub):
    s = hub.create_game("cat", "t", solo("F08"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    s.submit({"type": "turn", "player": 0, "card": 0, "value": 1, "line": [1, 2], "cross": 0})
    s.submit({"type": "roll", "dice": [4, 1, 3]})
    refused(s, {"type": "line", "player": 0, "card": 0, "line": [0, 2]}, "crossed")
    assert s.submit({"type": "power", "player": 0, "familiar": "F08"}).ok
    assert s.submit({"type": "line", "player": 0, "card": 0, "line": [0, 2]}).ok
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 4}).ok
    assert s.submit({"type": "cross", "player": 0, "card": 0, "candle": 3}).ok
    assert [0, 2] in s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"]


@pytest.mark.parametrize(("setup", "event", "reason"), [
    (solo("F05"), {"type": "power", "player": 0, "familiar": "F05"}, "not a one-off power"),
    (solo("F04"), {"type": "power", "player": 0, "familiar": "F01", "die": 0, "to": 4},
     "does not have F01"),
    (solo("F01"), {"type": "power", "player": 0, "familiar": "F01"}, "which die"),
    (solo("F06"), {"type": "power", "player": 0, "familiar": "F06"}, "three dice"),
])
def test_powers_the_rules_refuse(hub, setup, event, reason):
    s = hub.create_game("cat", "t", setup)
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    refused(s, event, reason)


@pytest.mark.parametrize(("event", "where"), [
    ({"type": "power", "player": 0, "familiar": "F10"}, "familiar"),
    ({"type": "power", "player": 0, "familiar": "F01", "die": 3, "to": 4}, "die"),
    ({"type": "pick_roll", "rolls": [[1, 2, 7], [1, 1, 1]]}, "rolls"),
])
def test_malformed_familiar_events_are_bad_input(hub, event, where):
    app = create_app(WebConfig(db_path=":memory:", source="none", live=False), hub=hub)
    c = app.test_client()
    gid = c.post("/api/games", json={"kind": "cat", "setup": asymmetric("Ann", "Bo")}
                 ).json["game"]["id"]
    res = c.post(f"/api/games/{gid}/events", json={"event": event})
    assert res.status_code == 400 and where in res.json["error"]


@pytest.mark.browser
def test_asymmetric_familiars_are_picked_and_used_by_clicks(tmp_path, page, hub):
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#start-cat")
        page.click("#add-player")
        page.fill("[data-player-name='0']", "Ann")
        page.fill("[data-player-name='1']", "Bo")
        page.select_option("#setup-set", "0")
        page.select_option("#setup-familiar-mode", "asymmetric")
        assert page.locator("#setup-familiar").is_hidden()
        page.click("#start-cat")
        page.wait_for_selector("#picking")
        # the pick roll: Bo's 13 beats Ann's 6
        for p, faces in enumerate([[1, 2, 3], [6, 4, 3]]):
            for k, v in enumerate(faces):
                page.click(f"#picking [data-pick-roll='{p}-{k}']")
                page.click(f".picker button[data-value='{v}']")
        page.wait_for_selector("#picking h3:text('Bo picks')")
        page.click("#picking [data-pick='F01']")
        page.wait_for_selector("#picking h3:text('Ann picks')")
        assert page.locator("#picking [data-pick='F01']").is_disabled()   # taken by Bo
        shot(page, "cat-familiar-pick")
        page.click("#picking [data-pick='F04']")
        page.wait_for_selector("#picking", state="detached")
        assert "F04 Owl −3" in page.locator("[data-familiar='0']").text_content()
        # the roll, then Ann's Owl: no candle knocked over this turn
        for i, v in enumerate([1, 2, 3]):
            page.click(f"#roll button[data-roll='{i}']")
            page.click(f".picker button[data-value='{v}']")
        page.click("[data-power='0']")
        page.wait_for_selector("[data-power-on='0']")
        assert "no candle" in page.locator(".player-panel[data-player='0'] [data-power-note]"
                                           ).inner_text()
        assert page.locator(".player-panel[data-player='0'] [data-cross]").count() == 0
        page.locator(".player-panel[data-player='0'] [data-write]").first.click()
        # the written value redraws the panel (its row of values goes): click a line after it,
        # not into the redraw, where the line buttons move under the pointer
        page.wait_for_selector(".player-panel[data-player='0'] [data-write]", state="detached")
        page.locator(".player-panel[data-player='0'] button[data-line]").first.click()
        page.wait_for_selector("[data-power-used='0']")
        # Bo's Black Cat turns die 1 to a 6: a 6 can be written
        assert page.locator("[data-write^='1-'][data-write$='-6']").count() == 0
        page.click("[data-power='1']")
        page.click(".picker button[data-value='0']")
        page.click(".picker button[data-value='6']")
        page.wait_for_selector("[data-write^='1-'][data-write$='-6']")
        shot(page, "cat-familiar-power")
        assert page.errors == []
        cards = hub.current("cat").view()["state"]["players"][0]["cards"]
        assert sum(len(c["sigil"]["crossed"]) for c in cards) == 0   # the Owl's turn


def test_only_a_power_the_engine_judges_whole_frees_the_candles(hub):
    s = hub.create_game("cat", "t", solo("F08"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    assert s.view()["state"]["players"][0]["power_free"] is False
    s.submit({"type": "power", "player": 0, "familiar": "F08"})
    assert s.view()["state"]["players"][0]["power_free"] is True


@pytest.mark.browser
def test_the_raven_extra_line_is_chosen_and_drawn_by_clicks(tmp_path, page, hub):
    s = hub.create_game("cat", "Raven", solo("F02"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.click("[data-power='0']")
        page.click(".picker button[data-value='0']")      # on card 1
        # lines named by their candles as everywhere else, not by the candles' indices
        assert page.locator(".picker button[data-value='4,5']").inner_text() == "upper 5 – left 6"
        page.click(".picker button[data-value='4,5']")    # the extra line 4-5
        page.wait_for_selector("svg.sigil[data-card='0'] line[data-extra-line='4-5']")
        note = page.locator("[data-power-note]").inner_text()
        assert "Raven: extra line upper 5 – left 6" in note
        page.click("[data-write='0-0-1']")
        page.wait_for_selector("[data-write='0-0-1']", state="detached")   # redrawn
        page.click("[data-line='0-0-1-2']")
        page.wait_for_selector("[data-line='0-0-1-2']", state="detached")
        page.click("[data-cross='0-0-0']")
        page.wait_for_selector("[data-power-used='0']")
        lines = page.locator("svg.sigil[data-card='0'] line.ink").evaluate_all(
            "els => els.map(e => e.dataset.line)")
        assert lines == ["1-2", "4-5"]
        assert page.errors == []


@pytest.mark.browser
def test_a_familiar_picked_wrongly_is_corrected_in_the_log(tmp_path, page, hub):
    s = hub.create_game("cat", "Picks", asymmetric("Ann", "Bo"))
    s.submit({"type": "pick_roll", "rolls": [[6, 6, 6], [1, 1, 1]]})
    wrong = s.submit({"type": "pick", "player": 0, "familiar": "F04"}).event_id
    s.submit({"type": "pick", "player": 1, "familiar": "F05"})
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("[data-familiar='0']:has-text('F04')")
        page.click(f"#events li[data-event='{wrong}'] button[data-fix]")
        page.click(".picker button[data-value='F08']")
        page.wait_for_selector("[data-familiar='0']:has-text('F08 Moth')")
        refused_pick = page.locator(f"#events li[data-event='{wrong}'] button[data-fix]")
        refused_pick.click()
        page.click(".picker button[data-value='F05']")      # Bo has the Spider
        page.wait_for_selector("#toast:has-text('already taken')")   # answered to the click
        assert "F08" in page.locator("[data-familiar='0']").text_content()
        assert page.locator("#warning").count() == 0    # not the game's standing warning
        assert [e for e in page.errors if "409 (CONFLICT)" not in e] == []   # the refusal


# -- the camera: a second line in a turn is the Raven's, an erased line the Snake's ------

def camera(s, doc):
    """What the session makes of a tracker event on Ann's card 1 (None: nothing)."""
    return s.engine.from_tracker(s.state, {"player": 0, "card_index": 0, **doc})


def test_a_second_line_read_in_a_turn_is_the_ravens_extra_line(hub):
    s = hub.create_game("cat", "t", solo("F02"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    first = camera(s, {"kind": "line", "line": [1, 2]})
    assert first["type"] == "line" and s.submit(first).ok
    second = camera(s, {"kind": "line", "line": [4, 5]})
    assert second == {"type": "power", "player": 0, "card": 0, "familiar": "F02",
                      "extra_line": [4, 5], "source": "camera"}
    assert s.submit(second).ok
    assert camera(s, {"kind": "line", "line": [4, 5]}) is None   # seen again: nothing new
    s.submit({"type": "write", "player": 0, "card": 0, "value": 1})
    s.submit({"type": "cross", "player": 0, "card": 0, "candle": 0})
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"] == [[1, 2], [4, 5]]


def test_a_line_erased_during_a_turn_is_the_snakes_power(hub):
    s = hub.create_game("cat", "t", solo("F07"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    s.submit({"type": "turn", "player": 0, "card": 0, "value": 1, "line": [1, 2], "cross": 0})
    erased = {"kind": "erased", "elements": ["line 1-2"], "wiped": False,
              "text": "erased line 1-2 on card A"}
    with pytest.raises(Exception, match="undo it here"):   # no roll yet: not a power
        camera(s, erased)
    s.submit({"type": "roll", "dice": [4, 2, 3]})
    power = camera(s, erased)
    assert power == {"type": "power", "player": 0, "card": 0, "familiar": "F07",
                     "erase": [1, 2], "source": "camera"}
    assert s.submit(power).ok
    assert camera(s, erased) is None
    assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 4, "line": [7, 8],
                     "cross": 3}).ok
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"] == [[7, 8]]


def test_without_the_power_a_second_line_is_still_refused(hub):
    s = hub.create_game("cat", "t", solo("F04"))
    s.submit({"type": "roll", "dice": [1, 2, 3]})
    s.submit(camera(s, {"kind": "line", "line": [1, 2]}))
    out = s.submit(camera(s, {"kind": "line", "line": [4, 5]}))
    assert not out.ok and "one line per turn" in out.reason


def test_the_camera_knows_the_watched_players_familiar(hub):
    """The live loop turns the sigil reader's bookkeeping off for the Owl's cards and the like
    (companion.session.camera.FAMILIARS_BREAKING_COUNTS): it asks the hub."""
    assert hub.camera_familiar() is None
    hub.create_game("cat", "t", solo("F04"))
    assert hub.camera_familiar() == "F04"


@pytest.mark.browser
def test_a_power_never_used_is_not_ready_once_the_game_is_over(tmp_path, page, hub):
    # the verdict screen still said "power ready" beside the Owl of a finished game
    import random
    s = hub.create_game("cat", "t", solo("F04"))
    rng = random.Random(4)
    while s.view()["state"]["phase"] != "over":
        while not s.submit({"type": "roll", "dice": [rng.randint(1, 6) for _ in range(3)]}).ok:
            pass
        o = s.engine.rules.options(s.state.game, 0)[0]
        assert s.submit({"type": "turn", "player": 0, "card": o["card"], "value": o["value"],
                         "line": o["line"], "cross": o["cross"]}).ok
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#verdict")
        assert page.locator("[data-power-ready]").count() == 0
        assert page.locator("[data-power-unused='0']").text_content() == "power not used"
        shot(page, "cat-familiar-over")
