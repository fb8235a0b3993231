"""Shared helper for attacks that reorder units (sentences, tokens): a permutation that really moves."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def changing_permutation(units: Sequence[str], rng: np.random.Generator, max_tries: int = 100) -> list[int] | None:
    """A random order of ``units`` whose text sequence differs from the original.

    Returns ``None`` when no reordering can change the sequence (fewer than two distinct units). A uniform
    permutation is drawn; identity-equivalent draws are redrawn (bounded), and a rotation is the fallback.
    """
    n = len(units)
    if n < 2 or len(set(units)) < 2:
        return None
    for _ in range(max_tries):
        order = [int(i) for i in rng.permutation(n)]
        if [units[i] for i in order] != list(units):
            return order
    return list(range(1, n)) + [0]  # pragma: no cover - only for pathological repeats
