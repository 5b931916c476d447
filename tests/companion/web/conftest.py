"""Fixtures of the dashboard tests: an app over a throw-away store and the counter engine."""

from __future__ import annotations

import pytest

from companion.session import Hub, Unavailable
from companion.session.testing import CounterEngine
from companion.store import Store
from companion.web import WebConfig, create_app


def counter_hub(path) -> Hub:
    return Hub(Store(path), {"cat": CounterEngine("cat", "Doom Cat"),
                             "machine": Unavailable("machine", "Doom Machine",
                                                    "the Doom Machine engine is missing")})


@pytest.fixture
def app(tmp_path):
    application = create_app(WebConfig(db_path=tmp_path / "g.sqlite", source="none",
                                       live=False, max_body_bytes=64 * 1024),
                             hub=counter_hub(tmp_path / "g.sqlite"))
    yield application
    application.extensions["doom"].close()


@pytest.fixture
def client(app):
    return app.test_client()
