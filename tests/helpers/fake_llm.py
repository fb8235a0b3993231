"""A :class:`~callbluff.resources.local_llm.LocalLLMServer` whose process is the stand-in server of
``fake_llm_server.py`` (stdlib HTTP on 127.0.0.1, chat replies of :mod:`helpers.chat_server`, an optional native
crash after N chat requests): LocalLLMServer's own start, registry, death watch and stop, without llama.cpp."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from callbluff.resources.local_llm import LocalLLMServer

SCRIPT = Path(__file__).resolve().with_name("fake_llm_server.py")


class FakeLLMServer(LocalLLMServer):
    """``FakeLLMServer(model_file, calls_file, crash_after=0)``: every chat request is appended to ``calls_file``;
    the ``crash_after + 1``-th kills the server with SIGSEGV (0: never)."""

    def __init__(self, model_path: Path, calls: Path, crash_after: int = 0, **kw: Any) -> None:
        kw.setdefault("startup_timeout", 30)
        kw.setdefault("stop_timeout", 5)
        super().__init__(model_path, **kw)
        self.calls, self.crash_after = calls, crash_after

    def argv(self, port: int) -> list[str]:
        return [sys.executable, str(SCRIPT), str(port), str(self.crash_after), str(self.calls)]
