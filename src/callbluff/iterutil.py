"""The one ``chunked``: consecutive lists of ``size`` items from any iterable (optionally the first ``limit``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TypeVar

T = TypeVar("T")


def chunked(items: Iterable[T], size: int, limit: int | None = None) -> Iterator[list[T]]:
    """Lists of ``size`` consecutive items (the last may be shorter), from the first ``limit`` items only."""
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    it = iter(items) if limit is None else islice(items, limit)
    while chunk := list(islice(it, size)):
        yield chunk
