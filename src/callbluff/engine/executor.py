"""Executors: where the pure, parallel parts of a run (generation) execute.

An :class:`Executor` maps a picklable function over items and yields the results *in input order*, so a
run's output never depends on the executor or its number of workers. :class:`LocalExecutor` uses worker
processes; :class:`~callbluff.engine.ray_executor.RayExecutor` runs the same work as Ray tasks.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Protocol, TypeVar

from callbluff.engine.ray_executor import RayExecutor
from callbluff.iterutil import map_threads

T = TypeVar("T")
R = TypeVar("R")


class Executor(Protocol):
    workers: int

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn`` over ``items``, results in input order."""
        ...

    def map_concurrent(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[R]:
        """``fn`` over ``items`` with up to ``concurrency`` calls at once *in this process* (I/O-bound work that
        shares live objects, e.g. model-in-the-loop searches sharing the run's cached target); results in input
        order."""
        ...

    def remote_target(self, target: T) -> T:
        """``target`` as the executor calls it: unchanged locally; on Ray, its predictions become tasks."""
        ...

    def close(self) -> None: ...


PARENT_POLL_SECONDS = 0.5


def _exit_with_parent(parent: int) -> None:
    """Pool worker initializer: a daemon thread that ends this worker once its parent is gone (the parent killed
    with -9 cannot shut its pool down, and an orphaned worker would otherwise wait on its queue forever).
    Polling :func:`os.getppid` works on every POSIX system and whatever thread started the worker (Linux's
    ``PR_SET_PDEATHSIG`` fires when the *thread* that forked exits, which the engine's background chunk thread
    does)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_SECONDS)
        os._exit(1)

    if os.getppid() != parent:  # the parent died before we got here
        os._exit(1)
    threading.Thread(target=watch, name="callbluff-parent-watch", daemon=True).start()


class LocalExecutor:
    """In-process for ``workers=1``; a pool of ``workers`` processes otherwise (fork where available)."""

    def __init__(self, workers: int = 1) -> None:
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, got {workers}")
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None

    def _get_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            method = "fork" if "fork" in mp.get_all_start_methods() else "spawn"
            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=mp.get_context(method),
                                             initializer=_exit_with_parent, initargs=(os.getpid(),))
        return self._pool

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        if self.workers == 1:
            return map(fn, items)
        return self._get_pool().map(fn, items)

    def map_concurrent(self, fn: Callable[[T], R], items: Iterable[T], concurrency: int) -> Iterator[R]:
        return map_threads(fn, items, concurrency)

    def remote_target(self, target: T) -> T:
        return target

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self) -> LocalExecutor:  # noqa: PYI034
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def make_executor(kind: str = "local", workers: int = 1, ray_address: str | None = None) -> Executor:
    """``--executor local`` (``workers`` processes) or ``ray`` (a local Ray runtime of ``workers`` CPUs, or the
    cluster at ``ray_address``)."""
    if kind == "local":
        if ray_address:
            raise ValueError("--ray-address needs --executor ray")
        return LocalExecutor(workers)
    if kind == "ray":
        return RayExecutor(workers, ray_address)
    raise ValueError(f"--executor {kind!r} is unknown; allowed: local, ray")
