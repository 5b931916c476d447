"""Every page on a phone's screen (390x844): no sideways scroll of the page."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from companion.session import Hub
from companion.store import Store
from companion.web import WebConfig, create_app

from .browser import serve, shot

pytestmark = pytest.mark.browser
pytest.importorskip("companion.session.cat", reason="the Doom Cat engine is not on main yet")
pytest.importorskip("companion.machine", reason="the Doom Machine engine is not on main yet")

CAT = {"players": [{"name": "Ann"}, {"name": "Bo"}], "cards": ["A", "B"], "goals": [1, 2, 3]}
READY = {"/": "#engines li", "/cat": "svg.sigil", "/machine": ".part",
         "/history": "#games tbody tr"}


@contextmanager
def opened(browser: Any, url: str, ready: str, width: int = 390, height: int = 844,
           ) -> Iterator[Any]:
    """A page of ``width`` x ``height`` at ``url``, once the selector ``ready`` is on it."""
    context = browser.new_context(viewport={"width": width, "height": height})
    try:
        page = context.new_page()
        page.goto(url, wait_until="domcontentloaded")
        page.wait_for_selector(ready, timeout=10_000)
        yield page
    finally:
        context.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """Games in progress of both kinds and a few in History."""
    path = tmp_path_factory.mktemp("phone") / "g.sqlite"
    hub = Hub(Store(path))
    hub.create_game("machine", "Doom Machine", {"seed": 3}).submit({"type": "roll"})
    cat = hub.create_game("cat", "Ann and Bo's long evening game", CAT)
    cat.submit({"type": "roll", "dice": [3, 5, 5]})
    cat.submit({"type": "write", "player": 0, "card": 0, "value": 5})
    app = create_app(WebConfig(db_path=path, source="none"), hub=hub)
    with serve(app) as s:
        yield s


@pytest.mark.parametrize(("width", "height"), [(390, 844), (1400, 1000)])
@pytest.mark.parametrize("path", ["/", "/cat", "/machine", "/history"])
def test_no_page_scrolls_sideways(served, browser, path, width, height):
    with opened(browser, served.url + path, READY[path], width, height) as page:
        sizes = page.evaluate("[document.documentElement.scrollWidth, "
                              "document.documentElement.clientWidth]")
        shot(page, f"phone-{width}{path.replace('/', '-') if path != '/' else '-live'}")
        assert sizes[0] <= sizes[1], f"{path} is {sizes[0]} px wide in {sizes[1]} px"
        # the camera's status pill is inside the screen, not cut off at its edge
        pill = page.locator("#source-status").bounding_box()
        assert pill["x"] + pill["width"] <= width
        if path == "/history":   # each game's buttons too
            for button in page.locator("#games td.actions > *").all():
                box = button.bounding_box()
                assert box["x"] + box["width"] <= width


def test_a_players_two_cards_are_stacked_on_a_phone(served, browser):
    with opened(browser, served.url + "/cat", "svg.sigil[data-card='1']") as page:
        first, second = (page.locator(".player-panel").first.locator("svg.sigil").nth(k)
                         .bounding_box() for k in (0, 1))
        assert second["y"] >= first["y"] + first["height"]      # below, not beside
        assert second["x"] + second["width"] <= 390
        candle = page.locator(".player-panel").first.locator("svg.sigil .candle circle").first
        assert candle.bounding_box()["width"] >= 22               # a finger can hit it


def test_on_a_phone_the_top_bar_does_not_stay_over_the_game(served, browser):
    # the bar wraps to three lines on a phone (about 160 of its 844 px): kept stuck at the top
    # it hid a fifth of the screen over the cards at every scroll
    with opened(browser, served.url + "/cat", "svg.sigil[data-card='1']") as page:
        page.evaluate("window.scrollTo(0, 1200)")
        bar = page.locator(".topbar").bounding_box()
        assert bar["y"] + bar["height"] <= 0, bar


def test_on_a_phone_a_long_picker_scrolls_inside_the_screen(served, browser):
    # the line picker of a correction lists all 66 lines of a card: on a phone it ran
    # 1900 px down the page, past the end of the screen and over everything below it
    with opened(browser, served.url + "/cat", "[data-player='0'] [data-line^='0-0']",
                ) as page:
        page.locator("[data-player='0'] [data-line^='0-0']").first.click()
        page.wait_for_selector("#events [data-fix]")
        # click() scrolls the button into view itself, and finds it again when the log is
        # drawn anew under it (a separate scroll_into_view_if_needed failed when the log
        # redrew between the two: "Element is not attached to the DOM")
        page.locator("#events li", has_text="line").locator("[data-fix]").first.click()
        picker = page.locator(".picker")
        assert picker.locator(".picker-options button").count() == 66
        box = picker.bounding_box()
        assert box["height"] <= 0.7 * 844, box
        assert box["x"] + box["width"] <= 390
        last = picker.locator(".picker-options button").last
        last.scroll_into_view_if_needed()
        box, last_box = picker.bounding_box(), last.bounding_box()   # reached in the box
        assert box["y"] <= last_box["y"]
        assert last_box["y"] + last_box["height"] <= box["y"] + box["height"] + 1


@pytest.mark.parametrize("width", [390, 1400])
@pytest.mark.parametrize(("path", "title"), [("/cat", "Ann and Bo's long evening game"),
                                             ("/machine", "Doom Machine")])
def test_a_game_page_names_the_game_that_is_open(served, browser, width, path, title):
    # the title typed at setup (or a campaign's "row 2" game) was shown only in History:
    # a player who resumed a game could not see on the page which game it was
    with opened(browser, served.url + path, READY[path], width) as page:
        name = page.locator("#game-title")
        assert name.inner_text().startswith(title)
        box = name.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width


@pytest.mark.parametrize("width", [390, 1400])
def test_a_suggested_goal_set_is_not_taken_for_the_goal_of_the_same_name(served, browser,
                                                                           width):
    # "Crossroads: 7, 8, 9" (the rulebook's set) read as goal #02 Crossroads, which it does
    # not hold; "Star Shepherd: 1, 4, 7" likewise beside goal #07 Star Shepherd
    with opened(browser, served.url + "/cat", "svg.sigil", width) as page:
        page.click("button:text('New game')")
        options = page.locator("#setup-set option").all_text_contents()
        assert "Set “Crossroads”: goals #07, #08, #09" in options
        assert "Set “Circle of Protection”: goals #01, #02, #03" in options
        page.select_option("#setup-set", label="Set “Crossroads”: goals #07, #08, #09")
        assert "#07 Star Shepherd" in page.locator(".goal-preview").inner_text()
        box = page.locator("#setup-set").bounding_box()
        assert box["x"] + box["width"] <= width


def test_the_new_game_form_fits_a_phone_with_its_longest_choices(served, browser):
    # "asymmetric (each player picks their own; its cost on each of their sigils)" made the
    # familiar's select 510 px wide: the page scrolled sideways to 535 px
    with opened(browser, served.url + "/cat", "svg.sigil") as page:
        page.click("button:text('New game')")
        page.select_option("#setup-familiar-mode", "asymmetric")
        page.select_option("#setup-set", index=15)
        sizes = page.evaluate("[document.documentElement.scrollWidth, "
                              "document.documentElement.clientWidth]")
        assert sizes[0] <= sizes[1], sizes
        for select in page.locator(".setup-grid select:visible").all():
            box = select.bounding_box()
            assert box["x"] + box["width"] <= 390
        shot(page, "phone-390-cat-setup")


@pytest.mark.parametrize("width", [390, 1400])
def test_the_campaign_familiars_checkbox_sits_beside_its_text(served, browser, width):
    # it stood alone in the middle of a line above the text it ticks
    with opened(browser, served.url + "/history", "#games tbody tr", width) as page:
        page.click("#new-campaign")
        label = page.locator("label:has(#campaign-familiars)").bounding_box()
        box = page.locator("#campaign-familiars").bounding_box()
        assert box["width"] <= 30, box                           # a box, not a whole line
        assert abs(box["x"] - label["x"]) <= 4, (box, label)      # at the start of the line
        assert box["y"] - label["y"] <= 6, (box, label)           # of the text's first line


def test_a_long_toast_uses_the_width_of_a_phone(served, browser):
    # a rules refusal in a toast was squeezed into half the screen's width (195 px): ten
    # lines over the machine row for seven seconds
    with opened(browser, served.url + "/machine", ".part") as page:
        page.evaluate("Doom.toast('correction refused: event 2 (attack Mender Array with dice "
                      "3, 4): dice 3, 4 show 4 and 6, which do not meet Mender Array\\'s "
                      "condition: 2 dice: a 5 and a 6', 'warn')")
        box = page.locator("#toast").bounding_box()
        assert box["width"] >= 340, box
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        assert box["height"] <= 140, box
        page.evaluate("Doom.toast('Corrected die 1 to 3', 'ok')")   # a short one stays short
        assert page.locator("#toast").bounding_box()["width"] < 250
