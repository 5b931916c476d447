"""Doom Cat: the session glue (pieces of a turn, camera events, corrections), the API and the
page, over the real engine when it is installed and the fake rules otherwise."""

from __future__ import annotations

import numpy as np
import pytest

from companion.doomcat.layouts import load_layout
from companion.errors import BadInput
from companion.session.engine import EngineMissing
from companion.web import WebConfig, create_app

from .browser import serve, shot

cat_module = pytest.importorskip("companion.session.cat",
                                 reason="the Doom Cat layouts are not on main yet")
CatAdapter = cat_module.CatAdapter

SETUP = {"players": [{"name": "Ann"}, {"name": "Bo"}], "cards": ["A", "B"], "goals": [1, 2, 3]}


def cat_engine() -> CatAdapter:
    try:
        return CatAdapter()
    except EngineMissing as exc:
        pytest.skip(str(exc))


@pytest.fixture
def hub(make_hub):
    return make_hub(cat=cat_engine())


def test_the_pieces_of_a_turn_are_stored_one_by_one_then_played(hub):
    s = hub.create_game("cat", "t", SETUP)
    assert s.submit({"type": "roll", "dice": [3, 5, 5]}).ok
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 5}).ok
    view = s.view()["state"]
    assert view["players"][0]["pieces"]["value"] == 5
    assert view["players"][0]["options"][0]["card"] == 0     # the rest goes on card 1
    assert s.submit({"type": "line", "player": 0, "card": 0, "line": [7, 2]}).ok
    assert s.submit({"type": "cross", "player": 0, "card": 0, "candle": 4}).ok
    p0 = s.view()["state"]["players"][0]
    assert p0["done"] and p0["cards"][0]["sigil"]["lines"] == [[2, 7]]
    assert p0["cards"][0]["sigil"]["crossed"] == [4]


@pytest.mark.parametrize(("events", "reason"), [
    ([{"type": "write", "player": 0, "card": 0, "value": 5}], "roll the dice first"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "write", "player": 0, "card": 0, "value": 5},
      {"type": "write", "player": 0, "card": 0, "value": 3}], "already written"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "write", "player": 0, "card": 0, "value": 5},
      {"type": "line", "player": 0, "card": 1, "line": [2, 7]}], "same Sigil Card"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "line", "player": 0, "card": 0, "line": [0, 1]}],
     "line left 1 – upper 2 does not match"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "write", "player": 0, "card": 0, "value": 5},
      {"type": "cross", "player": 0, "card": 0, "candle": 9}],
     "move: candle right 3 shows 3, not 5"),
    ([{"type": "roll", "dice": [3, None, 5]},
      {"type": "write", "player": 0, "card": 0, "value": 5}], "unread die"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "write", "player": 5, "card": 0, "value": 5}], "no player 6"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "write", "player": 0, "card": 0, "value": 5},
      {"type": "roll", "dice": [1, 1, 1]}], "still using this roll"),
    ([{"type": "tiebreak", "dice": [1, 2]}], "no tie"),
    ([{"type": "roll", "dice": [3, 5, 5]},
      {"type": "cross", "player": 0, "card": 0, "cross": None}], "a cross needs candle"),
])
def test_refusals_give_the_reason_and_keep_the_state(hub, events, reason):
    s = hub.create_game("cat", "t", SETUP)
    *legal, last = events
    for e in legal:
        assert s.submit(e).ok, e
    before = s.view()["state"]
    out = s.submit(last)
    assert not out.ok and reason in out.reason
    assert s.view()["state"] == before


@pytest.mark.parametrize("event", [
    {"type": "write", "player": 0, "card": 0, "value": 3.0},
    {"type": "cross", "player": 0, "card": 0.0, "candle": 4},
])
def test_a_number_where_a_whole_number_belongs_is_refused(hub, event):
    s = hub.create_game("cat", "t", SETUP)
    assert s.submit({"type": "roll", "dice": [3, 5, 5]}).ok
    with pytest.raises(BadInput, match="is not of type 'integer'"):
        s.submit(event)
    assert len(s.log.active) == 1


def test_an_unread_die_is_corrected_by_amending_the_roll(hub):
    s = hub.create_game("cat", "t", SETUP)
    rid = s.submit({"type": "roll", "dice": [3, None, 5], "source": "camera"}).event_id
    assert s.view()["state"]["phase"] == "roll"
    assert s.amend(rid, {"type": "roll", "dice": [3, 5, 5], "source": "camera"}).ok
    assert s.view()["state"]["phase"] == "turn"
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 5}).ok


def test_a_misread_line_is_corrected_and_the_turn_refolds(hub):
    s = hub.create_game("cat", "t", SETUP)
    s.submit({"type": "roll", "dice": [3, 5, 5]})
    s.submit({"type": "write", "player": 0, "card": 0, "value": 5})
    lid = s.submit({"type": "line", "player": 0, "card": 0, "line": [2, 7]}).event_id
    s.submit({"type": "cross", "player": 0, "card": 0, "candle": 4})
    assert s.amend(lid, {"type": "line", "player": 0, "card": 0, "line": [7, 9]}).ok
    assert s.view()["state"]["players"][0]["cards"][0]["sigil"]["lines"] == [[7, 9]]
    refused = s.amend(lid, {"type": "line", "player": 0, "card": 0, "line": [0, 1]})
    assert not refused.ok and "correction refused" in refused.reason


def test_camera_events_become_pieces_of_the_watched_card(hub):
    s = hub.create_game("cat", "t", SETUP)
    hub.set_camera_choice(1, 1)
    assert hub.camera_card() == (f"g{s.game_id}p1c1", "B", "Bo, card 2")
    assert hub.feed_tracker({"kind": "roll", "values": [3, 5, 5]}).ok
    hub.set_camera_choice(0, 0)
    card = f"g{s.game_id}p0c0"
    assert hub.feed_tracker({"kind": "digit", "card": card, "box": 0, "value": 5}).ok
    assert hub.feed_tracker({"kind": "line", "card": card, "line": [2, 7]}).ok
    assert hub.feed_tracker({"kind": "crossed", "card": card, "candle": 4}).ok
    assert s.view()["state"]["players"][0]["done"]
    # an event read on a card of an older game is dropped
    assert hub.feed_tracker({"kind": "line", "card": "g999p0c0", "line": [0, 1]}) is None
    refused = hub.feed_tracker({"kind": "roll", "values": [1, 2]})
    assert not refused.ok and "three" in refused.reason
    # nobody clicked: the game says the camera's reading was refused, and why
    assert s.view()["warning"] == "camera reading refused: " + refused.reason


def test_a_camera_roll_with_dice_to_check_is_taken_and_shown_as_the_warning(hub):
    s = hub.create_game("cat", "t", SETUP)
    text = "roll settled: 3 5 5; check the red 5 (read at 50%)"
    assert hub.feed_tracker({"kind": "roll", "values": [3, 5, 5], "check": [2],
                             "text": text}).ok
    view = s.view()
    assert view["log"][-1]["event"]["dice"] == [3, 5, 5]  # the value counts
    assert view["warning"] == "camera: " + text
    # the next move clears it
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 5}).ok
    assert s.view()["warning"] == ""


@pytest.mark.parametrize(("player", "card"), [(2, 0), (0, 2)])
def test_the_camera_card_must_exist(hub, player, card):
    hub.create_game("cat", "t", SETUP)
    from companion.errors import BadInput
    with pytest.raises(BadInput):
        hub.set_camera_choice(player, card)


@pytest.mark.parametrize(("setup", "match"), [
    ({"players": [{"name": "Ann"}], "cards": ["A", "Z"], "goals": [1, 2]}, "'Z'"),
    ({"players": [{"name": "Ann"}, {"name": "Ann"}], "cards": ["A", "A"], "goals": [1, 2]},
     "same name"),
    ({"players": [{"name": "Ann"}, {"name": "Bo"}], "cards": ["A", "A"], "goals": [1, 2],
      "familiar_mode": "solo", "familiar": "F01"}, "one player"),
    ({"players": [{"name": "Ann"}], "cards": ["A", "A"], "goals": [1, 2],
      "familiar_mode": "one-for-all"}, "familiar"),
    # a goal picked in two of the page's selects: named, not the schema's "at $.goals:
    # [1, 1, 3] has non-unique elements"
    ({"players": [{"name": "Ann"}], "cards": ["A", "B"], "goals": [1, 1, 3]},
     r"^setup: goal #01 Wards is chosen twice: a game uses 2 or 3 different goal cards$"),
])
def test_bad_setups_are_refused_with_the_reason(hub, setup, match):
    from companion.errors import BadInput
    with pytest.raises(BadInput, match=match):
        hub.create_game("cat", "t", setup)
    assert hub.store.games() == []


def test_a_bad_setup_is_refused_before_anything_is_stored(hub):
    from companion.errors import BadInput
    with pytest.raises(BadInput, match=r"\$\.goals"):
        hub.create_game("cat", "t", {**SETUP, "goals": [1]})
    assert hub.store.games() == []


def test_share_png_and_catalogue_and_camera_endpoints(tmp_path, make_hub):
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none", live=False),
                     hub=make_hub(cat=cat_engine()))
    c = app.test_client()
    gid = c.post("/api/games", json={"kind": "cat", "setup": SETUP}).json["game"]["id"]
    c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll", "dice": [3, 5, 5]}})
    c.post(f"/api/games/{gid}/events", json={"event": {
        "type": "turn", "player": 0, "card": 0, "value": 5, "line": [2, 7], "cross": 4}})
    png = c.get(f"/api/games/{gid}/share.png")
    assert png.status_code == 200 and png.data[:8] == b"\x89PNG\r\n\x1a\n"
    import cv2
    image = cv2.imdecode(np.frombuffer(png.data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[0] > 600 and image.shape[1] >= 900
    assert c.get("/api/catalogue/cat").json["goals"]
    assert c.get("/api/catalogue/machine").json == {}
    assert c.get("/api/catalogue/chess").status_code == 404
    assert c.post("/api/cat/camera", json={"player": 1, "card": 1}).status_code == 200
    assert c.get("/api/games/current/cat").json["camera_card"] == {"player": 1, "card": 1}
    assert c.post("/api/cat/camera", json={"player": 4, "card": 0}).status_code == 400
    assert c.post("/api/cat/camera", json={"player": 0}).status_code == 400
    assert c.post("/api/live/feeds", json={"kind": "cat"}).status_code == 200
    assert c.post("/api/live/feeds", json={"kind": "chess"}).status_code == 400
    app.extensions["doom"].close()


def play_to_the_end(s, seed=4):
    import random
    rng = random.Random(seed)
    for _ in range(14):
        state = s.view()["state"]
        assert state["phase"] == "roll"
        for _ in range(50):
            dice = [rng.randint(1, 6) for _ in range(3)]
            if s.submit({"type": "roll", "dice": dice}).ok:
                break
        opts = s.engine.rules.options(s.state.game, 0)
        o = opts[0]
        out = s.submit({"type": "turn", "player": 0, "card": o["card"], "value": o["value"],
                        "line": o["line"], "cross": o["cross"]})
        assert out.ok, out.reason


def test_a_whole_solo_game_reaches_a_verdict_and_a_result(hub):
    s = hub.create_game("cat", "t", {"players": [{"name": "Ann"}], "cards": ["A", "B"],
                                     "goals": [1, 2, 3]})
    play_to_the_end(s)
    view = s.view()["state"]
    assert view["phase"] == "over" and view["verdict"]["text"].startswith("Solo")
    assert hub.store.game(s.game_id).result["summary"] == view["verdict"]["text"]
    assert not s.submit({"type": "roll", "dice": [1, 2, 3]}).ok


def test_a_campaign_game_takes_its_goals_from_the_grid_and_counts_in_the_standings(hub):
    from companion.errors import BadInput
    from companion.session.campaigns import standings
    grid = [4, 5, 6, 7, 8, 9, 1, 2, 3]
    cid = hub.store.create_campaign("Winter", {"goals": grid, "players": ["Ann"]})
    setup = {"players": [{"name": "Ann"}], "cards": ["A", "B"], "goals": [1, 2],
             "campaign_line": "column 1"}
    s = hub.create_game("cat", "c1", setup, campaign_id=cid)
    assert s.record.setup["goals"] == [5, 8, 2]
    assert s.record.title == "Winter, column 2: c1"
    with pytest.raises(BadInput, match="players are Ann"):
        hub.create_game("cat", "c2", {**setup, "players": [{"name": "Bo"}],
                                      "campaign_line": "row 0"}, campaign_id=cid)
    play_to_the_end(s, seed=9)
    with pytest.raises(BadInput, match="column 2 of this campaign has been played already"):
        hub.create_game("cat", "c2", setup, campaign_id=cid)
    table = standings(hub.store, cid)
    assert table["played"] == ["column 1"]
    assert table["totals"]["Ann"] == s.view()["state"]["players"][0]["total"]


@pytest.mark.browser
@pytest.mark.parametrize(("typed", "title"), [("", "Winter, row 2"),
                                              ("Snow day", "Winter, row 2: Snow day")])
def test_a_campaign_game_started_by_clicks_is_named_by_its_campaign_and_line(
        tmp_path, page, make_hub, typed, title):
    # with no title typed the page sent its own "2 players", and the game was called
    # "Winter, row 2: 2 players"
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    hub.store.create_campaign("Winter", {"goals": list(range(1, 10)), "players": ["Ann", "Bo"]})
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#setup-campaign option:text('Winter')", state="attached")
        page.fill("#setup-title", typed)
        page.select_option("#setup-campaign", label="Winter")
        page.select_option("#setup-campaign-line", "row 1")
        page.click("#start-cat")
        page.wait_for_selector("svg.sigil")
        assert page.locator("#game-title").text_content() == f"{title} · game 1"
        assert hub.store.game(1).title == title


@pytest.mark.browser
def test_the_line_choices_cut_short_say_how_many_more_and_where(tmp_path, page, make_hub):
    # rolled triples (wild) allow all 66 lines of a card: the page listed 12 and said nothing
    # of the other 54, which a player looked for in vain
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "t", {**SETUP, "players": [{"name": "Ann"}]})
    assert s.submit({"type": "roll", "dice": [2, 2, 2]}).ok
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("[data-line^='0-0-']")
        assert page.locator("[data-line^='0-0-']").count() == 12
        more = page.locator("[data-more-lines='0-0']")
        assert more.text_content() == "+54 more: click two candles on card 1"
        # a candle click still draws any of them
        page.click("svg.sigil[data-card='0'] .candle[data-candle='10']")
        page.click(".picker button[data-value='line']")       # not "cross it out"
        page.click("svg.sigil[data-card='0'] .candle[data-candle='11']")
        page.wait_for_function("document.querySelector('#events').textContent.includes('line')")
        assert s.view()["state"]["players"][0]["pieces"]["line"] == [10, 11]


@pytest.mark.browser
def test_a_turn_by_clicks_then_a_correction_an_undo_and_a_restart(tmp_path, page, make_hub):
    db = tmp_path / "g.sqlite"
    app = create_app(WebConfig(db_path=db, source="none"),
                     hub=make_hub(cat=cat_engine(), path=db))
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#start-cat")
        shot(page, "cat-setup")
        page.select_option("#setup-set", "0")
        page.click("#start-cat")
        page.wait_for_selector("#roll")
        for i, v in enumerate([3, 5, 6]):     # the third die is misread as a 6
            page.click(f"#roll button[data-roll='{i}']")
            page.click(f".picker button[data-value='{v}']")
        page.wait_for_selector("[data-write='0-0-6']")
        # the correction, in two clicks: the die shows a 5
        page.click("#roll button[data-roll='2']")
        page.click(".picker button[data-value='5']")
        page.wait_for_selector("#events li.amended")
        page.click("[data-write='0-0-5']")
        page.wait_for_selector("[data-write='0-0-5']", state="detached")   # redrawn
        page.click("[data-line='0-0-2-7']")
        page.wait_for_selector("svg.sigil[data-player='0'][data-card='0'] line.ink")
        # undo the line, then draw it again by clicking the two candles on the card
        page.click("#undo")
        page.wait_for_selector("[data-line='0-0-2-7']")
        assert page.locator("svg.sigil[data-player='0'][data-card='0'] line.ink").count() == 0
        page.click("svg.sigil[data-player='0'][data-card='0'] g[data-candle='2']")
        page.click("svg.sigil[data-player='0'][data-card='0'] g[data-candle='7']")
        page.wait_for_selector("svg.sigil[data-player='0'][data-card='0'] line[data-line='2-7'],"
                               "svg.sigil[data-player='0'][data-card='0'] line.ink")
        # candles are named as a player sees them (printed number and side), not by index
        assert page.locator("[data-cross='0-0-4']").inner_text() == "✕ upper 5"
        page.click("[data-cross='0-0-4']")
        # solo: the turn is played, the next roll is awaited
        page.wait_for_selector("#events li:nth-child(4)")
        log = page.locator("#events").inner_text()
        assert "line left 3 – lower 5" in log and "candle upper 5" in log, log
        page.wait_for_selector("#turn:text('2')")
        total = page.locator("[data-total='0']").inner_text()
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, "cat-turn")
        assert page.errors == []
    # the server is killed and restarted: the game resumes where it was
    app2 = create_app(WebConfig(db_path=db, source="none"),
                      hub=make_hub(cat=cat_engine(), path=db))
    with serve(app2) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#turn:text('2')")
        page.wait_for_selector("svg.sigil[data-player='0'][data-card='0'] line.ink")
        assert page.locator("[data-total='0']").inner_text() == total
        assert page.locator("#events li").count() == 4


@pytest.mark.browser
def test_history_shows_games_campaign_standings_and_the_share_image(tmp_path, page, make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    cid = hub.store.create_campaign("Winter", {"goals": [4, 5, 6, 7, 8, 9, 1, 2, 3],
                                               "players": ["Ann"]})
    s = hub.create_game("cat", "Winter, game 1", {
        "players": [{"name": "Ann"}], "cards": ["A", "B"], "goals": [1, 2],
        "campaign_line": "row 0"}, campaign_id=cid)
    play_to_the_end(s, seed=2)
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/history", wait_until="domcontentloaded")
        page.wait_for_selector(f"tr[data-game='{s.game_id}']")
        row = page.locator(f"tr[data-game='{s.game_id}']").inner_text()
        assert "Solo" in row
        standings = page.locator(f"[data-campaign='{cid}']").inner_text()
        total = s.view()["state"]["players"][0]["total"]
        assert f"{total} VP" in standings
        assert "played: row 1" in standings     # counted from 1 (stored as "row 0")
        shot(page, "history")
        page.goto(f"{served.url}/api/games/{s.game_id}/share.png", wait_until="load")
        shot(page, "share-image")
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#verdict")
        page.evaluate("window.scrollTo(0, 0)")
        shot(page, "cat-over")
        assert page.errors == []


def play_to_a_tie(s, seed=3):
    """Two players make the same moves for 14 turns: the game goes to the tie-break."""
    import random
    rng = random.Random(seed)
    for _ in range(14):
        while not s.submit({"type": "roll", "dice": [rng.randint(1, 6) for _ in range(3)]}).ok:
            pass
        o = s.engine.rules.options(s.state.game, 0)[0]
        for p in (0, 1):
            assert s.submit({"type": "turn", "player": p, "card": o["card"], "value": o["value"],
                             "line": o["line"], "cross": o["cross"]}).ok


TIED = {"players": [{"name": "Ann"}, {"name": "Bo"}], "cards": ["A", "B"], "goals": [1, 2, 3]}


def test_a_tie_goes_to_the_tie_break_and_ends(hub):
    s = hub.create_game("cat", "t", TIED)
    play_to_a_tie(s)
    view = s.view()["state"]
    assert view["phase"] == "tiebreak" and view["tiebreak"]["tied"] == [0, 1]
    assert view["tiebreak"]["options"] == {}          # nobody draws before the 2 dice
    assert not s.submit({"type": "roll", "dice": [1, 2, 3]}).ok
    assert s.submit({"type": "tiebreak", "dice": [1, 2]}).ok
    tb = s.view()["state"]["tiebreak"]
    assert tb["waiting"] == [0, 1] and sorted(tb["options"]) == ["0", "1"]
    for p in (0, 1):   # "Roll 2 dice and tied players draw 1 more line": each offered line
        options = s.view()["state"]["tiebreak"]["options"][str(p)]
        assert options, "a waiting player always has a choice (a null line when none fits)"
        for o in options:   # joins candles matching the two dice (a wild die: any candle)
            if o["line"] is not None:
                card = s.view()["state"]["players"][p]["cards"][o["card"]]
                na, nb = (card["layout"]["candles"][c]["number"] for c in o["line"])
                fits = [(1 in card["wild"] or x == 1) and (2 in card["wild"] or y == 2)
                        for x, y in ((na, nb), (nb, na))]
                assert any(fits), o
        o = options[-1]
        assert s.submit({"type": "tiebreak", "player": p, "card": o["card"],
                         "line": o["line"]}).ok
    assert s.view()["state"]["phase"] in ("over", "tiebreak")
    after = s.view()["state"]["tiebreak"]
    assert after is None or after["dice"] is None   # drawn: a new roll if still tied


@pytest.mark.browser
def test_the_tie_break_is_played_by_clicks(tmp_path, page, make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "Tied", TIED)
    play_to_a_tie(s)
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#tiebreak")
        for k, v in enumerate([1, 2]):     # the two tie-break dice, by clicks
            page.click(f"#tiebreak button[data-tiebreak='{k}']")
            page.click(f".picker button[data-value='{v}']")
        page.wait_for_selector("#tiebreak [data-tb-line^='0-']")
        shot(page, "cat-tiebreak")
        for p in (0, 1):
            chip = page.locator(f"#tiebreak [data-tb-line^='{p}-']").first
            _, c, a, b = map(int, chip.get_attribute("data-tb-line").split("-"))
            layout = load_layout(TIED["cards"][c])
            assert chip.inner_text() == layout.line_name(a, b)   # candle names, not indices
            chip.click()
            page.wait_for_selector(f"#tiebreak [data-tb-line^='{p}-']", state="detached")
        page.wait_for_function("document.querySelectorAll('#events li').length >= 31")
        texts = page.locator("#events li").all_inner_texts()
        assert sum("tie-break" in t for t in texts) == 3   # the roll and two lines
        assert page.errors == []


# -- games that cannot be opened: imported, or stored before their card went away ---------

def real_app(tmp_path):
    from companion.session import Hub
    from companion.store import Store
    cat_engine()
    return create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none", live=False),
                      hub=Hub(Store(tmp_path / "g.sqlite")))


def exported(kind, setup, *events):
    return {"format": "doomcompanion-game", "version": 1,
            "game": {"kind": kind, "title": "t", "setup": setup},
            "ops": [{"op": "action", "event": e, "ref": i + 1} for i, e in enumerate(events)]}


ROLL = {"type": "roll", "dice": [1, 2, 3]}


@pytest.mark.parametrize(("doc", "fragment"), [
    (exported("cat", {}), "import: setup: at $: 'players' is a required property"),
    (exported("cat", SETUP, {}), "import: ops[0].event: at $: 'type' is a required property"),
    (exported("cat", SETUP, ROLL, {"type": "write", "player": 0, "card": 5, "value": 3}),
     "import: ops[1].event: at $.card: 5 is greater than the maximum of 1"),
    (exported("cat", SETUP, ROLL, {"type": "write", "player": 0, "card": 0, "value": 6}),
     "import: event 2 (Ann, card 1: writes 6)"),
    (exported("cat", {**SETUP, "cards": ["Z", "Q"]}), "import: setup: sigil card 'Z'"),
    (exported("cat", {**SETUP, "goals": [99, 100]}), "import: setup: at $.goals[0]"),
    (exported("machine", {"setup_event": {"type": "setup", "deck": []}}),
     "import: setup: the Doom Core"),
])
def test_an_import_that_would_not_open_or_replay_is_refused_and_nothing_stored(
        tmp_path, doc, fragment):
    app = real_app(tmp_path)
    c = app.test_client()
    res = c.post("/api/games/import", json=doc)
    assert res.status_code == 400 and fragment in res.json["error"], res.json
    assert c.get("/api/games").json["games"] == []
    app.extensions["doom"].close()


def test_an_exported_game_of_each_kind_imports_again(tmp_path):
    app = real_app(tmp_path)
    c = app.test_client()
    fresh = c.post("/api/games/import", json=exported("machine", {})).json["id"]
    assert c.get(f"/api/games/{fresh}").json["state"]["phase"] == "roll"   # prepared as new
    for kind, setup in (("cat", SETUP), ("machine", {"revealed": ["chain-lash"]})):
        gid = c.post("/api/games", json={"kind": kind, "setup": setup}).json["game"]["id"]
        c.post(f"/api/games/{gid}/events", json={"event": {"type": "roll"} if kind == "machine"
                                                 else {"type": "roll", "dice": [3, 5, 5]}})
        res = c.post("/api/games/import", json=c.get(f"/api/games/{gid}/export").json)
        assert res.status_code == 201, res.json
        again = c.get(f"/api/games/{res.json['id']}").json
        assert again["state"] == c.get(f"/api/games/{gid}").json["state"]
        assert again["broken"] == ""
    app.extensions["doom"].close()


def gone_card(tmp_path, monkeypatch) -> int:
    """A cat game on a registered card whose folder then disappears, and a machine game
    (current, fed by the camera); the id of the cat game."""
    import shutil

    from companion.doomcat.layouts import LAYOUTS_DIR
    monkeypatch.setenv("DOOMCOMPANION_HOME", str(tmp_path / "home"))
    card = tmp_path / "home" / "cards" / "good1"
    card.mkdir(parents=True)
    shutil.copy(LAYOUTS_DIR / "A.json", card / "layout.json")
    app = real_app(tmp_path)
    c = app.test_client()
    gid = c.post("/api/games", json={"kind": "cat", "setup": {**SETUP, "cards": ["good1", "B"]}}
                 ).json["game"]["id"]
    c.post("/api/games", json={"kind": "machine", "setup": {"seed": 1}})
    app.extensions["doom"].close()
    shutil.rmtree(card)
    return gid


def test_a_game_whose_card_is_gone_says_so_and_the_other_game_plays_on(tmp_path, monkeypatch):
    import json
    gid = gone_card(tmp_path, monkeypatch)
    app = real_app(tmp_path)          # the server restarted after the card went away
    c = app.test_client()
    res = c.get(f"/api/games/{gid}")
    assert res.status_code == 422
    assert f"game {gid} cannot be opened: setup: sigil card 'good1'" in res.json["error"]
    for view in ("cat", "live"):
        stream = c.get(f"/api/stream?view={view}", buffered=False)
        chunks = iter(stream.response)
        next(chunks)
        payload = json.loads(next(chunks).decode()[6:])
        stream.close()
        problem = payload["problem"] if view == "cat" else payload["cat"]["problem"]
        assert "sigil card 'good1'" in problem
    assert payload["machine"]["problem"] == "" and payload["feeds"] == "machine"
    assert c.get("/api/games/current/machine").json["current"]["state"]["phase"] == "roll"
    app.extensions["doom"].close()


def test_the_cat_page_shows_why_its_game_cannot_be_opened(tmp_path, monkeypatch, page):
    gone_card(tmp_path, monkeypatch)
    app = real_app(tmp_path)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        notice = page.locator("#unavailable")
        notice.wait_for(state="visible", timeout=10_000)
        assert "cannot be opened" in notice.inner_text()
        assert "good1" in notice.inner_text()
        page.locator("#start-cat").wait_for(timeout=10_000)   # a new game can be started
        assert page.errors == []
    app.extensions["doom"].close()


@pytest.mark.browser
def test_a_campaign_created_while_the_setup_form_is_open_appears_in_it(tmp_path, page, hub):
    app = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#setup-campaign")
        page.evaluate("""fetch('/api/campaigns', {method: 'POST', headers: {'Content-Type':
            'application/json'}, body: JSON.stringify({title: 'Winter', goals: [4, 5, 6, 7, 8,
            9, 1, 2, 3]})})""")   # as the History page, in another tab, does
        page.wait_for_selector("#setup-campaign option:text('Winter')", state="attached")
        page.select_option("#setup-campaign", label="Winter")
        lines = page.locator("#setup-campaign-line option").all_inner_texts()
        assert lines[0] == "row 1: goals 4, 5, 6" and lines[-1] == "column 3: goals 6, 9, 3"


# every message of the page's stream, recorded once the page has rendered it
RECORD_STREAM = """
window.__rendered = [];
const Source = window.EventSource;
window.EventSource = class extends Source {
  constructor(url) {
    super(url);
    this.addEventListener("message", (m) => setTimeout(() => window.__rendered.push(m.data)));
  }
};
"""


@pytest.mark.browser
def test_the_new_game_form_keeps_what_is_typed_while_the_game_changes(tmp_path, page, make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "t", SETUP)
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    page.add_init_script(RECORD_STREAM)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector("#roll")
        page.click("button:text('New game')")
        page.fill("#setup-title", "Friday night")
        page.fill("[data-player-name='0']", "Cy")
        page.focus("[data-player-name='0']")
        assert s.submit({"type": "roll", "dice": [3, 5, 5]}).ok   # the game changes meanwhile
        page.wait_for_function("window.__rendered.some((d) => d.includes('roll 3 5 5'))")
        assert page.input_value("#setup-title") == "Friday night"
        assert page.input_value("[data-player-name='0']") == "Cy"
        assert page.evaluate("document.activeElement.dataset.playerName") == "0"
        page.click("button:text('Back to the game')")   # the game as it is now
        page.wait_for_selector("#roll button[data-roll='0']:text('3')")
        assert page.errors == []


def _room(layout, a, b, points) -> float:
    """How far (mm) ``points`` keep from the outline of every candle but a and b."""
    return min(float(np.linalg.norm(np.asarray(points) - c["center"], axis=1).min()) - c["radius"]
               for k, c in enumerate(layout["candles"]) if k not in (a, b))


@pytest.mark.parametrize("letter", ["A", "B", "C", "D"])
def test_a_line_that_must_curve_is_drawn_clear_of_the_other_candles(letter):
    from companion.session.share import line_path
    layout = cat_engine().layout(letter)
    assert sorted(layout["curves"]) == sorted(f"{a}-{b}" for a, b in layout["must_curve"])
    for a, b in layout["must_curve"]:
        path = line_path(layout, a, b, 200)
        assert _room(layout, a, b, path) >= 1.5, (a, b)
        assert path[0].tolist() == layout["candles"][a]["center"]
        assert path[-1].tolist() == layout["candles"][b]["center"]
    straight = next(iter(set(range(12)) - {x for p in layout["must_curve"] for x in p}), None)
    if straight is not None:   # other lines stay straight
        assert len(line_path(layout, straight, (straight + 1) % 12)) == 2


CURVED = {"players": [{"name": "Ann"}], "cards": ["C", "D"], "goals": [1, 2, 3]}


def play_curved_lines(s) -> None:
    """Card C: lines left 4 – right 2 (candles 1-5) and left 3 – right 4 (7-11), both of which
    must curve round another candle."""
    for dice, line, cross in (([4, 2, 6], [1, 5], 8), ([3, 4, 6], [7, 11], 10)):
        assert s.submit({"type": "roll", "dice": dice}).ok
        assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 6, "line": line,
                         "cross": cross}).ok


def test_the_share_image_draws_a_must_curve_line_as_its_curve(hub):
    from companion.session.share import INK, PX_PER_MM, draw_sigil, line_path
    s = hub.create_game("cat", "t", CURVED)
    play_curved_lines(s)
    card = s.view()["state"]["players"][0]["cards"][0]
    assert card["sigil"]["lines"] == [[1, 5], [7, 11]]
    img = draw_sigil(card)
    layout = card["layout"]
    for a, b in ((1, 5), (7, 11)):
        peak = line_path(layout, a, b, 33)[16]
        x, y = (round(v * PX_PER_MM) for v in peak)
        assert img[y, x].tolist() == list(INK), (a, b)
        mid = (np.array(layout["candles"][a]["center"]) + layout["candles"][b]["center"]) / 2
        x, y = (round(v * PX_PER_MM) for v in mid)
        assert img[y, x].tolist() != list(INK), (a, b)   # not the straight chord


@pytest.mark.browser
def test_the_page_draws_a_must_curve_line_as_a_curve_clear_of_the_candles(tmp_path, page,
                                                                          make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "t", CURVED)
    play_curved_lines(s)
    layout = s.view()["state"]["players"][0]["cards"][0]["layout"]
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        card = "svg.sigil[data-player='0'][data-card='0']"
        for a, b in ((1, 5), (7, 11)):
            ink = page.wait_for_selector(f"{card} path.ink[data-line='{a}-{b}']")
            points = ink.evaluate("(p) => Array.from({ length: 101 }, (_, i) => { const q ="
                                  " p.getPointAtLength(p.getTotalLength() * i / 100);"
                                  " return [q.x, q.y]; })")
            assert _room(layout, a, b, points) >= 1.5, (a, b)
        shot(page, "cat-curves")
        assert page.errors == []


def test_the_log_and_the_camera_card_name_players_by_their_names(hub):
    s = hub.create_game("cat", "t", {**SETUP, "familiar_mode": "asymmetric"})
    for event in ({"type": "pick_roll", "rolls": [[6, 6, 6], [1, 1, 1]]},
                  {"type": "pick", "player": 0, "familiar": "F01"},
                  {"type": "pick", "player": 1, "familiar": "F04"},
                  {"type": "roll", "dice": [3, 5, 5]},
                  {"type": "power", "player": 1, "familiar": "F04"},
                  {"type": "write", "player": 0, "card": 0, "value": 5}):
        assert s.submit(event).ok, event
    assert [e["text"] for e in s.view()["log"]] == [
        "familiar pick rolls: Ann 18, Bo 3", "Ann: picks familiar F01", "Bo: picks familiar F04",
        "roll 3 5 5", "Bo: uses F04", "Ann, card 1: writes 5"]
    hub.set_camera_choice(0, 1)
    assert hub.camera_card().name == "Ann, card 2"


def test_a_write_refused_after_a_die_is_corrected_names_the_roll_as_it_now_stands(hub):
    s = hub.create_game("cat", "t", {**SETUP, "players": [{"name": "Ann"}]})
    rid = s.submit({"type": "roll", "dice": [5, 1, 4]}).event_id
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 5}).ok
    out = s.amend(rid, {"type": "roll", "dice": [6, 1, 4]})
    assert not out.ok and "you wrote 5 but the roll is 6 1 4" in out.reason, out.reason


@pytest.mark.browser
def test_a_number_written_a_second_time_is_circled_while_the_turn_is_open(tmp_path, page,
                                                                         make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "t", {**SETUP, "players": [{"name": "Ann"}]})
    assert s.submit({"type": "roll", "dice": [3, 5, 5]}).ok
    assert s.submit({"type": "turn", "player": 0, "card": 0, "value": 5, "line": [2, 7],
                     "cross": 4}).ok
    assert s.submit({"type": "roll", "dice": [5, 1, 2]}).ok
    assert s.submit({"type": "write", "player": 0, "card": 0, "value": 5}).ok   # open turn
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)
    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        card = "svg.sigil[data-player='0'][data-card='0']"
        page.wait_for_selector(f"{card} text.digit.pending")
        assert page.locator(f"{card} text.digit").all_text_contents() == ["5", "5"]
        assert page.locator(f"{card} circle.ring").count() == 1   # the second 5, circled
        assert page.errors == []


@pytest.mark.browser
def test_the_fix_pickers_offer_the_likely_readings_first(tmp_path, page, make_hub):
    db = tmp_path / "g.sqlite"
    hub = make_hub(cat=cat_engine(), path=db)
    s = hub.create_game("cat", "t", {**SETUP, "players": [{"name": "Ann"}]})
    ids = [s.submit({"player": 0, "card": 0, **e}).event_id for e in (
        {"type": "roll", "dice": [3, 5, 5]}, {"type": "write", "value": 5},
        {"type": "line", "line": [2, 7]}, {"type": "cross", "candle": 4},
        {"type": "roll", "dice": [5, 1, 2]}, {"type": "write", "value": 5},
        {"type": "line", "line": [0, 1]}, {"type": "cross", "candle": 7})]
    assert None not in ids
    write, line, cross = ids[5:]
    app = create_app(WebConfig(db_path=db, source="none"), hub=hub)

    def offered(event_id):
        page.click(f"[data-fix='{event_id}']")
        values = page.locator(".picker button").evaluate_all("els => els.map(e => e.dataset.value)")
        current = page.locator(".picker button.current").get_attribute("data-value")
        # a click elsewhere closes the picker, once its listener is on (it is added just after
        # the click that opened it): click the page until it has closed
        page.wait_for_function("""() => !document.querySelector('.picker')
                                 || (document.body.click(), false)""")
        return values, current

    with serve(app) as served:
        page.goto(served.url + "/cat", wait_until="domcontentloaded")
        page.wait_for_selector(f"[data-fix='{cross}']")
        # a number: the dice of its roll first
        assert offered(write) == (["5", "1", "2", "3", "4", "6"], "5")
        # a candle: not one already crossed out (candle 4, the turn before)
        values, current = offered(cross)
        assert current == "7" and "4" not in values and len(values) == 11
        # a line: every line, the nearest first; a line with both ends misread is one click
        values, current = offered(line)
        assert current == "0,1" and values[0] == "0,1" and len(values) == 66
        page.click(f"[data-fix='{line}']")
        page.click(".picker button[data-value='10,11']")
        page.wait_for_selector(f"#events li.amended[data-event='{line}']")
        assert "line right 1 – lower 2" in page.locator(f"[data-event='{line}']").inner_text()
        assert page.errors == []
