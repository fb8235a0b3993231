"""The one ``chunked``: consecutive lists of ``size`` items from any iterable (optionally the first ``limit``);
``split_evenly``: a sequence cut into near-equal contiguous parts (work for an executor's workers), or of
near-equal total weight (``split_weighted``);
``map_threads``: an ordered map over a thread pool (what every executor does for I/O-bound work in-process)."""

from __future__ import annotations

import bisect
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


def split_weighted(items: Sequence[T], parts: int, weight: Callable[[T], float]) -> list[Sequence[T]]:
    """``items`` cut into at most ``parts`` contiguous, non-empty slices of near-equal total ``weight`` (order
    kept): each cut falls where the running total is nearest a multiple of ``total / parts``. Items of weight
    <= 0 count as 1/1000 of the mean, so a run of empty items still spreads."""
    n = len(items)
    parts = max(1, min(parts, n))
    if parts == 1:
        return [items] if n else []
    raw = [max(0.0, float(weight(x))) for x in items]
    floor = (sum(raw) / n or 1.0) / 1000
    running, cum = 0.0, []
    for w in raw:
        running += w if w > 0 else floor
        cum.append(running)
    cuts, last = [], 0
    for k in range(1, parts):
        goal = cum[-1] * k / parts
        i = bisect.bisect_left(cum, goal)  # cum[i] >= goal: cut after item i or before it, whichever is nearer
        stop = i + 1 if i == 0 or cum[i] - goal <= goal - cum[i - 1] else i
        stop = min(max(stop, last + 1), n - (parts - k))
        cuts.append(stop)
        last = stop
    bounds = [0, *cuts, n]
    return [items[a:b] for a, b in zip(bounds, bounds[1:]) if b > a]


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
