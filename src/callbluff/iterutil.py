"""The one ``chunked``: consecutive lists of ``size`` items from any iterable (optionally the first ``limit``);
``split_evenly``: a sequence cut into near-equal contiguous parts (work for an executor's workers);
``map_threads``: an ordered map over a thread pool (what every executor does for I/O-bound work in-process)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def chunked(items: Iterable[T], size: int, limit: int | None = None) -> Iterator[list[T]]:
    """Lists of ``size`` consecutive items (the last may be shorter), from the first ``limit`` items only."""
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    it = iter(items) if limit is None else islice(items, limit)
    while chunk := list(islice(it, size)):
        yield chunk


def map_threads(fn: Callable[[T], R], items: Iterable[T], concurrency: int,
                thread_name_prefix: str = "callbluff-search") -> Iterator[R]:
    """``fn`` over ``items`` with up to ``concurrency`` calls at once in this process; results in input order.
    One item or ``concurrency <= 1``: a plain ``map`` (no thread)."""
    items = list(items)
    if concurrency <= 1 or len(items) <= 1:
        return map(fn, items)
    with ThreadPoolExecutor(max_workers=min(concurrency, len(items)), thread_name_prefix=thread_name_prefix) as tp:
        return iter(list(tp.map(fn, items)))


def split_evenly(items: Sequence[T], parts: int) -> list[Sequence[T]]:
    """``items`` cut into at most ``parts`` contiguous slices of near-equal size (order kept)."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(items[start:stop])
        start = stop
    return [s for s in out if len(s)]
