from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.errors import BadInput
from companion.session import Hub
from companion.session.core import GameSession
from companion.session.hub import Bus, EngineUnavailable, NoSuchGame, wait_any
from companion.session.testing import CounterEngine
from companion.store import Store


@pytest.fixture
def hub(make_hub):
    return make_hub(cat=CounterEngine("cat"))


def test_a_legal_event_is_stored_and_changes_the_state(hub):
    s = hub.create_game("cat", "t", {"target": 10})
    out = s.submit({"type": "add", "n": 4})
    assert out.ok and out.event_id is not None
    assert s.view()["state"]["total"] == 4
    assert hub.store.log(s.game_id).events == [{"type": "add", "n": 4}]


def test_an_illegal_event_is_refused_with_the_reason_and_nothing_changes(hub):
    s = hub.create_game("cat", "t", {"target": 5})
    s.submit({"type": "add", "n": 4})
    out = s.submit({"type": "add", "n": 3})
    assert not out.ok
    assert "over the target" in out.reason
    assert s.view()["state"]["total"] == 4
    assert len(hub.store.log(s.game_id).events) == 1


def test_a_refusal_is_answered_and_does_not_stand_as_the_games_warning(hub):
    s = hub.create_game("cat", "t", {"target": 5})
    first = s.submit({"type": "add", "n": 4}).event_id
    version = hub.games_bus.version
    assert not s.submit({"type": "add", "n": 3}).ok
    refused = s.amend(first, {"type": "add", "n": 6})
    assert not refused.ok and refused.reason.startswith("correction refused: event 1")
    assert s.view()["warning"] == ""
    assert hub.games_bus.version == version   # nothing changed: no page is woken


@pytest.mark.parametrize(("event", "where"), [
    ({"type": "add"}, "$"), ({"type": "add", "n": 7}, "$.n"),
    ({"type": "remove", "n": 1}, "$.type"), ({"type": "add", "n": 1, "x": 0}, "$"),
])
def test_a_malformed_event_is_bad_input_naming_where(hub, event, where):
    s = hub.create_game("cat", "t", {"target": 5})
    with pytest.raises(BadInput, match=f"at {where.replace('$', '[$]')}"):
        s.submit(event)
    assert hub.store.log(s.game_id).events == []


def test_a_correction_refolds_and_is_refused_when_it_breaks_history(hub):
    s = hub.create_game("cat", "t", {"target": 10})
    first = s.submit({"type": "add", "n": 3}).event_id
    s.submit({"type": "add", "n": 6})
    assert s.amend(first, {"type": "add", "n": 4}).ok
    assert s.view()["state"]["total"] == 10
    assert s.view()["log"][0]["amended"]
    refused = s.amend(first, {"type": "add", "n": 5})
    assert not refused.ok and "event 2" in refused.reason
    assert s.view()["state"]["total"] == 10


def test_undo_and_redo_refold_the_state(hub):
    s = hub.create_game("cat", "t", {"target": 10})
    s.submit({"type": "add", "n": 3})
    s.submit({"type": "add", "n": 2})
    assert s.undo()
    assert s.view()["state"]["total"] == 3
    assert s.redo()
    assert s.view()["state"]["total"] == 5
    assert not s.redo()


def test_undo_and_redo_say_what_they_stepped_over(hub):
    s = hub.create_game("cat", "t", {"target": 10})
    first = s.submit({"type": "add", "n": 3}).event_id
    s.submit({"type": "add", "n": 2})
    assert s.undo() == "undid event 2: add 2"
    assert s.redo() == "redid event 2: add 2"
    assert s.amend(first, {"type": "add", "n": 4}).ok
    assert s.undo() == "undid the correction of event 1, which now reads: add 3"
    assert s.redo() == "redid the correction of event 1, which now reads: add 4"
    assert s.undo() and s.undo() and s.undo()
    assert s.undo() == ""


def test_a_correction_that_changes_nothing_is_refused_and_not_stored(hub):
    s = hub.create_game("cat", "t", {"target": 10})
    first = s.submit({"type": "add", "n": 3}).event_id
    ops = len(hub.store.ops(s.game_id))
    same = s.amend(first, {"type": "add", "n": 3})
    assert not same.ok and same.reason == "nothing to correct: event 1 (add 3) already says so"
    assert len(hub.store.ops(s.game_id)) == ops
    assert not s.view()["log"][0]["amended"]


def test_the_result_is_recorded_when_the_game_ends_and_cleared_by_undo(hub):
    s = hub.create_game("cat", "t", {"target": 2})
    s.submit({"type": "add", "n": 2})
    assert hub.store.game(s.game_id).result == {"summary": "reached 2 in 1 moves"}
    s.undo()
    assert hub.store.game(s.game_id).result is None


def test_a_restarted_hub_resumes_the_current_game(make_hub):
    h = make_hub(cat=CounterEngine("cat"))
    s = h.create_game("cat", "t", {"target": 10})
    s.submit({"type": "add", "n": 5})
    h.close()
    h.store.close()
    again = make_hub(cat=CounterEngine("cat"))
    current = again.current("cat")
    assert current is not None and current.game_id == s.game_id
    assert current.view()["state"]["total"] == 5


@pytest.mark.parametrize(("kind", "setup", "error", "match"), [
    ("cat", {"target": 0}, BadInput, r"setup: at \$\.target"),
    ("cat", {"target": 13}, BadInput, "unlucky"),
    ("chess", {}, BadInput, "unknown game kind"),
    ("machine", {}, EngineUnavailable, "engine is missing"),
])
def test_bad_setups_are_refused(hub, kind, setup, error, match):
    with pytest.raises(error, match=match):
        hub.create_game(kind, "t", setup)
    assert hub.store.games() == []


def test_an_unknown_game_is_no_such_game(hub):
    with pytest.raises(NoSuchGame):
        hub.session(99)


def test_feed_routes_a_reading_to_the_current_game(hub):
    assert hub.feed("cat", {"type": "add", "n": 1}) is None
    s = hub.create_game("cat", "t", {"target": 3})
    assert hub.feed("cat", {"type": "add", "n": 2}).ok
    assert not hub.feed("cat", {"type": "add", "n": 9}).ok
    assert s.view()["state"]["total"] == 2


def test_a_change_wakes_a_waiting_stream(hub):
    seen = hub.games_bus.version
    woke = threading.Event()

    def waiter():
        if wait_any([hub.games_bus, hub.live_bus], [seen, hub.live_bus.version], 5.0):
            woke.set()

    t = threading.Thread(target=waiter)
    t.start()
    hub.create_game("cat", "t", {"target": 3})
    t.join(5.0)
    assert woke.is_set()


def test_a_closed_bus_releases_waiters():
    bus = Bus()
    bus.close()
    assert bus.wait(bus.version, 5.0) == bus.version


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["add", "undo", "redo"]), st.integers(1, 6)),
                max_size=25))
def test_any_sequence_of_clicks_keeps_the_live_state_equal_to_the_stored_fold(script):
    store = Store(":memory:")
    hub = Hub(store, {"cat": CounterEngine("cat")})
    s = hub.create_game("cat", "t", {"target": 30})
    for op, n in script:
        if op == "add":
            s.submit({"type": "add", "n": n})
        elif op == "undo":
            s.undo()
        else:
            s.redo()
    fresh = GameSession(store, s.game_id, CounterEngine("cat"))
    assert fresh.view()["state"] == s.view()["state"]
    assert s.view()["state"]["total"] <= 30
    store.close()
