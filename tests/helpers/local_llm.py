"""The real local LLM grader for tests: one llama-cpp-python server running SmolLM2-135M-Instruct on 127.0.0.1 for the
whole session (:class:`callbluff.resources.local_llm.LocalLLMServer`, stopped by PID at the end), registered as the
``local_llm`` fixture through ``pytest_plugins`` in tests/conftest.py.

The server requires the API key :data:`KEY` (so a test proves the chat target sends it); the fixture puts it in the
environment variable :data:`KEY_ENV`, which a suite names with ``api_key_env``. :func:`chat_target_toml` writes the
``[[target]]`` table of a chat grader against it. Tests using the fixture skip, saying why, only when llama_cpp or
the GGUF file is missing (``make setup`` installs both). One grading call costs about 0.3-1 s on one thread, so keep
the inputs to a handful.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from callbluff.resources.local_llm import LocalLLMServer, missing

KEY_ENV = "CALLBLUFF_LOCAL_LLM_KEY"
KEY = "sk-local-7Qe2Zr9LmX4w"


@pytest.fixture(scope="session")
def local_llm() -> Iterator[LocalLLMServer]:
    """A running local grader (``.base_url``, ``.model``), the key in ``$CALLBLUFF_LOCAL_LLM_KEY``."""
    why = missing()
    if why is not None:
        pytest.skip(f"the real local LLM grader is not set up here: {why}")
    os.environ[KEY_ENV] = KEY
    try:
        with LocalLLMServer(api_key=KEY, startup_timeout=120) as srv:
            yield srv
    finally:
        os.environ.pop(KEY_ENV, None)


def chat_target_toml(srv: LocalLLMServer, name: str = "smollm2", **settings: Any) -> str:
    """A ``[[target]]`` table for a chat grader against ``srv`` (``json_object`` + schema: the dialect llama.cpp
    servers accept); ``settings`` add or override keys (strings, numbers and booleans)."""
    table: dict[str, Any] = {"name": name, "type": "openai", "base_url": srv.base_url, "model": srv.model,
                             "api_key_env": KEY_ENV, "response_format": "json_object", "max_tokens": 32,
                             "concurrency": 1, "timeout": 60, **settings}

    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            return repr(v)
        return '"' + str(v).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    return "[[target]]\n" + "".join(f"{k} = {value(v)}\n" for k, v in table.items())
