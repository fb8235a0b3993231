"""Shared fixtures. Real data lives in ../shared (beside the repository); tests that need it skip with a
clear message when it is absent, as on a user's machine."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("CALLBLUFF_SHARED", REPO.parent / "shared"))
SHARED_DATA = SHARED / "data"
SHARED_MODELS = SHARED / "models"


def shared_path(*parts: str) -> Path:
    """Path under ../shared, or skip the test saying what is missing and how to provide it."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"needs {p} (the project's shared data/models beside the repo; "
                    "set CALLBLUFF_SHARED to point elsewhere)")
    return p


@pytest.fixture
def shared_data() -> Path:
    return shared_path("data")


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep callbluff's user cache out of the real home directory for the whole session (session scope,
    so module- and session-scoped fixtures that train or encode are isolated too). A user-set
    ``CALLBLUFF_HOME`` is respected."""
    if "CALLBLUFF_HOME" in os.environ:
        yield
        return
    os.environ["CALLBLUFF_HOME"] = str(tmp_path_factory.getbasetemp() / "callbluff-home")
    try:
        yield
    finally:
        os.environ.pop("CALLBLUFF_HOME", None)
