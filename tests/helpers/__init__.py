"""Helpers shared by the tests, importable as ``helpers`` (``pythonpath = ["tests"]`` in pyproject.toml's
``[tool.pytest.ini_options]``; subprocesses get ``PYTHONPATH=TESTS``):

- here: where the repository, the tests and the shared data/models (``../shared``) are, and
  :func:`shared_path`, which skips a test that needs a missing shared file, saying what is missing;
- :mod:`helpers.data`: hand-made short-answer data written to temporary files;
- :mod:`helpers.scorers`: simple real systems under test, named ``helpers.scorers:NAME`` in suites;
- :mod:`helpers.fault_server`: a deliberately flaky HTTP scoring server on 127.0.0.1;
- :mod:`helpers.chat_server`: a stand-in OpenAI-compatible chat server on 127.0.0.1 (429s with each Retry-After
  form, 5xx, unreadable replies, the structured-output dialects' request bodies);
- :mod:`helpers.local_llm`: the real local LLM grader (the session fixture ``local_llm``, registered through
  ``pytest_plugins`` in conftest.py) and ``chat_target_toml`` for suites against it;
- :mod:`helpers.runs`: tiny suites run through the engine (behind the ``small_run`` fixture of conftest.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
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


def pythonpath_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with the tests directory first on ``PYTHONPATH``, so a
    subprocess (``callbluff run``, a Ray worker) can import ``helpers.scorers`` as this process does."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])])
    return env
