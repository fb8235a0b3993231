"""Small helpers shared by the metric modules (input checking, missing values)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike


def as_float_array(values: ArrayLike, name: str) -> np.ndarray:
    """``values`` as a 1-D float array; ``None`` becomes NaN (a failed prediction). Empty input is an error."""
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: expected numbers (None/NaN for failed predictions), got {values!r:.200}") from exc
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D sequence of numbers, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: a metric needs at least one score")
    return arr


def same_length(name_a: str, a: Sequence[Any] | np.ndarray, name_b: str, b: Sequence[Any] | np.ndarray) -> None:
    if len(a) != len(b):
        raise ValueError(
            f"{name_a} has {len(a)} items but {name_b} has {len(b)}: they must be aligned pairwise "
            "(item i of both refers to the same response / question)"
        )


def is_missing(value: Any) -> bool:
    """``None`` or a float NaN: a failed prediction (an error row), never a silent zero."""
    return value is None or (isinstance(value, float | np.floating) and math.isnan(value))


def pct(num: float, den: float) -> float:
    """``100 * num / den``, NaN when ``den`` is 0."""
    return 100.0 * float(num) / float(den) if den else math.nan
