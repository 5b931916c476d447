"""Shared test fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """../shared beside the checkout (CI has it); tests that need it skip without it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not present: it holds the real photographs and rulebooks")
    return SHARED
