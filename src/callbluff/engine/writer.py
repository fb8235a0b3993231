"""The background writer of chunk parts: Parquet encoding and disk off the critical path of the next chunk's
target calls (:mod:`callbluff.engine.chunks` submits each finished chunk's writes)."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class BackgroundWriter:
    """Writes chunk parts on one background thread so that the next chunk's predictions need not wait for
    Parquet encoding and disk. :meth:`close` waits for every write and re-raises the first failure."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callbluff-part-writer")
        self._pending: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self._pending = [f for f in self._pending if not f.done() or f.exception() is not None]
        self._pending.append(self._pool.submit(fn, *args))

    def close(self) -> None:
        try:
            for f in self._pending:
                f.result()
        finally:
            self._pending = []
            self._pool.shutdown(wait=True)
