"""Significance tests and intervals shared by ``compare`` and the findings scripts: one place for each.

- :func:`mcnemar_exact`: the paired test of two runs over the same cases (McNemar 1947, exact form: a binomial
  test of the discordant pairs against 1/2), used when both runs judged the same examples;
- :func:`fisher_exact`: the unpaired test of two (fooled, not fooled) counts (Fisher's exact test), used when the
  runs' cases differ or only the metric rows' counts are left;
- :func:`holm`: Holm's (1979) step-down adjustment of a family of p-values (one per attack configuration);
- :func:`wilson_interval`: the Wilson (1927) score interval of a proportion, in percent (the findings' success
  rates).

SciPy is imported inside the tests that need it, so that importing :mod:`callbluff.metrics` stays light (the CLI's
start-up imports the metric registry).
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def mcnemar_exact(improved: int, regressed: int) -> float:
    """Two-sided exact McNemar p-value from the discordant pairs (a binomial test of ``regressed`` of
    ``improved + regressed`` against 1/2); 1 when there is no discordant pair."""
    n = improved + regressed
    if n == 0:
        return 1.0
    from scipy.stats import binomtest

    return float(binomtest(regressed, n, 0.5).pvalue)


def fisher_exact(fooled_a: int, judged_a: int, fooled_b: int, judged_b: int) -> float:
    """Two-sided Fisher exact p-value of two (fooled, not fooled) counts."""
    from scipy.stats import fisher_exact as fisher

    return float(fisher([[fooled_a, judged_a - fooled_a], [fooled_b, judged_b - fooled_b]]).pvalue)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (Holm 1979), in the input order."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def wilson_interval(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials, in percent (``z = 1.96``: 95 %); NaNs when
    ``n`` is 0."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (100 * (centre - half), 100 * (centre + half))
