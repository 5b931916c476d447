"""Fixtures shared by the session and dashboard tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from companion.session import Hub
from companion.session.testing import testing_hub


@pytest.fixture
def make_hub(tmp_path) -> Iterator[Callable[..., Hub]]:
    """``make_hub(cat=..., machine=..., path=...)``: a hub over a throw-away store.

    Kinds given no engine are unavailable. Hubs still open at the end are closed with their
    stores (a hub handed to the web app is closed by the app; closing twice is harmless).
    """
    made: list[Hub] = []

    def make(*, cat: Any = None, machine: Any = None, path: Any = None) -> Hub:
        hub = testing_hub(path if path is not None else tmp_path / "g.sqlite",
                          cat=cat, machine=machine)
        made.append(hub)
        return hub

    yield make
    for hub in made:
        hub.close()
        hub.store.close()
