"""Shared fixtures and hooks. Helpers (paths, data, scorers, servers, tiny runs) live in the ``helpers``
package (tests/helpers, importable through ``pythonpath`` in pyproject.toml); import them from there, never
from this file. Real data lives in ../shared (beside the repository); tests that need it skip with a clear
message when it is absent, as on a user's machine."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType
from typing import TYPE_CHECKING, Any

import pytest
from helpers import SHARED, shared_path
from helpers.runs import SMALL_SUITE, run_small_suite

if TYPE_CHECKING:
    from callbluff.engine.run import RunResult

pytest_plugins = ("helpers.local_llm",)  # the `local_llm` fixture: the real local chat grader, one per session


@pytest.fixture
def shared_data() -> Path:
    return shared_path("data")


@pytest.fixture(scope="session")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., RunResult]:
    """Run a tiny suite through the engine: ``small_run()`` runs ``helpers.runs.SMALL_SUITE`` (eight demo
    essays, a length scorer, DelRand and ShuffleSent), ``small_run(toml_text, **run_suite_kwargs)`` the given
    suite; each call writes into a fresh temporary directory and returns the ``RunResult`` (its ``run_dir``
    is ``<that directory>/run``). Session-scoped, so module-scoped fixtures can share one run."""

    def run(suite: str = SMALL_SUITE, **kwargs: Any) -> RunResult:
        return run_small_suite(tmp_path_factory.mktemp("small-run"), suite, **kwargs)

    return run


# -- parallel runs (`make test` runs `pytest -n 2`, pytest-xdist) -------------------------------------------

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")
"""The native thread pools a test process may start (torch's intra-op pool, BLAS, numexpr)."""


def pytest_configure(config: pytest.Config) -> None:
    """Under ``-n N`` (pytest-xdist), give each worker its share of the CPUs: the controller sets the thread
    variables before it starts the workers, so they (and every process a test starts: the local LLM server, Ray,
    command targets) inherit them before numpy or torch reads them. Without it, two workers each start one torch
    thread per CPU, and on the 2-core machines the project runs on the spinning pools made the neural and AddSent
    tests many times slower (measured under load: the neural scorer's fixture took 424 s). A variable the
    user set is kept."""
    workers = getattr(config.option, "numprocesses", None)
    if not workers or hasattr(config, "workerinput"):  # serial run, or this is already a worker
        return
    n = workers if isinstance(workers, int) else os.cpu_count() or 1
    per_worker = str(max(1, (os.cpu_count() or 1) // max(1, n)))
    for var in THREAD_VARS:
        os.environ.setdefault(var, per_worker)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# -- the `shared` marker and the end-of-run line about skipped real-data tests ---------------------------

_SHARED_NAMES = frozenset({"shared_path", "shared_data", "SHARED", "SHARED_DATA", "SHARED_MODELS"})


def _uses_shared(code: CodeType) -> bool:
    """Whether ``code`` (or a function nested in it) names this module's ../shared helpers."""
    if _SHARED_NAMES & (set(code.co_names) | set(code.co_varnames)):
        return True
    return any(_uses_shared(c) for c in code.co_consts if isinstance(c, CodeType))


def _needs_shared(item: pytest.Item) -> bool:
    funcs = [getattr(item, "obj", None)]
    info = getattr(item, "_fixtureinfo", None)
    if info is not None:
        if "shared_data" in info.names_closure:
            return True
        funcs += [d.func for defs in info.name2fixturedefs.values() for d in defs]
    for fn in funcs:
        code = getattr(inspect.unwrap(fn), "__code__", None) if fn is not None else None
        if code is not None and _uses_shared(code):
            return True
    return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test that reads ../shared (through ``shared_path``, the ``shared_data`` fixture or
    ``SHARED``, in the test or in any fixture it uses) as ``shared``, so ``-m "not shared"`` (``make
    test-fast``) leaves them all out without each test having to remember the marker."""
    for item in items:
        if item.get_closest_marker("shared") is None and _needs_shared(item):
            item.add_marker(pytest.mark.shared)


def _is_shared_skip(report: pytest.TestReport) -> bool:
    """A skip of a ``shared`` test because ../shared (or a file in it) is missing."""
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    return "shared" in getattr(report, "keywords", {}) and ("shared" in reason.lower() or str(SHARED) in reason)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, exitstatus: int,
                            config: pytest.Config) -> Iterator[None]:
    """One line saying how many real-data tests were skipped and why, printed last (after pytest's own
    short summary, just before the final counts): this is the outermost wrapper of the hook."""
    result = yield
    n = sum(_is_shared_skip(r) for r in terminalreporter.stats.get("skipped", []))
    if n:
        if not SHARED.is_dir():
            why = (f"the shared data/models directory {SHARED} does not exist; put the project's shared "
                   "directory beside the repository or set CALLBLUFF_SHARED to it to run them")
        else:
            why = f"files they need are missing under {SHARED} (run with -rs to see which)"
        terminalreporter.write_line(f"callbluff: {n} real-data test{'s' if n != 1 else ''} skipped: {why}",
                                    yellow=True, bold=True)
    return result
