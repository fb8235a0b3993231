"""Tiny suites run through the engine: a few demo essays, a callable scorer from :mod:`helpers.scorers`,
one or two cheap attacks, in a fresh directory (the ``small_run`` fixture of conftest.py runs them)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from callbluff.api import run_suite
from callbluff.engine.suite import load_suite

if TYPE_CHECKING:
    from callbluff.engine.run import RunResult

SMALL_SUITE = """
name = "small"
seed = 5
limit = 8
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelRand"
params = { percent = 25 }
[[attack]]
name = "ShuffleSent"
[output]
chunk_size = 8
"""
"""Eight demo essays scored 1-6 by length (overstable to shuffling, lowered by deletion), DelRand 25% and
ShuffleSent, the report written."""


def run_small_suite(directory: Path, suite: str = SMALL_SUITE, **run: Any) -> RunResult:
    """Write ``suite`` (TOML text) to ``directory/suite.toml`` and run it with :func:`run_suite` into
    ``directory/run``; ``run`` are :func:`run_suite`'s keyword arguments (``workers``, ``limit``, ...)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "suite.toml"
    path.write_text(suite, encoding="utf-8")
    return run_suite(load_suite(path), directory / "run", **run)


def versions_suite(function: str, *, name: str, target: str, seed: int = 1, limit: int = 6) -> str:
    """A suite for comparing versions of one scorer: ``limit`` demo essays, DelRand 30 % and ShuffleSent, the
    callable target ``target`` = :mod:`helpers.scorers` ``function``, no report."""
    return f"""
name = "{name}"
seed = {seed}
limit = {limit}
[dataset]
spec = "demo:essay"
[[target]]
name = "{target}"
type = "callable"
function = "helpers.scorers:{function}"
[[attack]]
name = "DelRand"
params = {{ percent = 30 }}
[[attack]]
name = "ShuffleSent"
[output]
report = false
"""
