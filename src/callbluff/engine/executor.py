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
    workers_fork: bool
    """Whether the workers :meth:`map` starts fork from this process (and so inherit what it holds)."""

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        """``fn`` over ``items``, results in input order."""
        ...

    def map_beside(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """``fn`` over ``items``, the first item in *this* process while the others run on workers; results in
        input order. What the first call leaves in this process (e.g. spaCy parses in the shared resources)
        is there for workers that fork from it afterwards (the fit step, then generation)."""
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

    def __enter__(self) -> Executor: ...

    def __exit__(self, *exc: object) -> None: ...


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
        self.workers_fork = "fork" in mp.get_all_start_methods()
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _new_pool(self, workers: int) -> ProcessPoolExecutor:
        method = "fork" if self.workers_fork else "spawn"
        return ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context(method),
                                   initializer=_exit_with_parent, initargs=(os.getpid(),))

    def _get_pool(self) -> ProcessPoolExecutor:
        with self._lock:  # threads generating two chunks at once share one pool
            if self._pool is None:
                self._pool = self._new_pool(self.workers)
            return self._pool

    def map(self, fn: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
        if self.workers == 1:
            return map(fn, items)
        return self._get_pool().map(fn, items)

    def map_beside(self, fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """The items shared between this process and ``workers - 1`` processes started for this call alone and
        ended before it returns: this process runs the first item, then, from the last, every item no worker
        has started yet, while the workers take them from the second on. The pool :meth:`map` starts later
        forks from this process *after* the call and inherits what it left (the fit step's spaCy parses, which
        generation then finds instead of parsing the same texts again; workers already running would not)."""
        todo = list(items)
        if self.workers == 1 or len(todo) < 2:
            return [fn(x) for x in todo]
        pool = self._new_pool(min(self.workers - 1, len(todo) - 1))
        try:
            futures = {i: pool.submit(fn, x) for i, x in enumerate(todo) if i}
            here = {0: fn(todo[0])}
            for i in sorted(futures, reverse=True):
                if futures[i].cancel():  # no worker has started it: run it here
                    here[i] = fn(todo[i])
            return [here[i] if i in here else futures[i].result() for i in range(len(todo))]
        finally:
            pool.shutdown(cancel_futures=True)

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
