"""Metrics for systems that *grade*: QWK, Kumar et al.'s overstability statistics, Ding et al.'s ARR.

Units follow the papers: ``qwk`` is a kappa in [-1, 1]; every ``*_pct`` field and ``arr`` are
percentages (0-100), of samples or of the prompt's score range as each field says.

Missing values: ``None`` / NaN stands for a failed prediction (DESIGN.md: an error row, never a silent
zero). :func:`overstability` and :func:`arr` leave such items out and say how many (``n_missing``);
:func:`qwk` refuses them unless ``nan_policy="omit"``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from callbluff.metrics._common import as_float_array, pct, same_length

OVERSTABILITY_FIELDS: tuple[str, ...] = (
    "n",
    "n_missing",
    "neg_pct",
    "pos_pct",
    "not_lowered_pct",
    "mean_diff_pct",
    "abs_mean_diff_pct",
    "std_diff_pct",
    "mean_neg_diff_pct",
    "mean_pos_diff_pct",
    "ttest_p",
)


def round_half_up(values: ArrayLike) -> np.ndarray:
    """Round to the nearest integer, halves upwards (2.5 -> 3, unlike numpy's banker's rounding 2.5 -> 2).

    This is how a real-valued scorer's output is put on an integer scale everywhere in callbluff
    (``qwk``, ``arr``); the papers do not say which rounding they used.
    """
    return np.floor(np.asarray(values, dtype=float) + 0.5)


def at_minimum(scores: ArrayLike, score_min: ArrayLike) -> np.ndarray:
    """Ding et al.'s rejection (2020 Sec. 3.2: "scored as zero by the system"): each score, put on the integer
    scale with :func:`round_half_up`, at or below its scale's minimum (``score_min`` a number or one per score).
    The one place of this rule: ARR (:func:`arr`, the streaming ``Bottom`` counts), the ``bottom`` expectation
    and the short-answer report's headline all call it. NaN scores are never at the minimum."""
    return round_half_up(scores) <= round_half_up(score_min)


def _check_range(score_min: float, score_max: float) -> None:
    if not (math.isfinite(score_min) and math.isfinite(score_max)) or score_max <= score_min:
        raise ValueError(
            f"score range [{score_min}, {score_max}] is invalid: score_max must be greater than score_min "
            "(take them from the prompt, e.g. ASAP-AES set 1 is 2-12)"
        )


def qwk(
    y_true: ArrayLike,
    y_pred: ArrayLike,
    *,
    score_min: float | None = None,
    score_max: float | None = None,
    labels: Sequence[int] | None = None,
    clip: bool = True,
    nan_policy: Literal["raise", "omit"] = "raise",
) -> float:
    """Quadratic weighted kappa between gold scores and predictions (Kumar et al. Sec. 2.3; Ding et al. 3.2).

    Computed by :func:`sklearn.metrics.cohen_kappa_score` with ``weights="quadratic"`` after putting both
    sides on the integer scale with :func:`round_half_up`.

    - **Scale.** Give the prompt's ``score_min``/``score_max`` (or explicit integer ``labels``): sklearn's
      quadratic weights are computed on *label indices*, so without the full scale a score that nobody
      used (e.g. 2 on a 0-3 scale) shrinks the distance between its neighbours and changes the kappa.
      Without either, the labels are the values that occur (sklearn's default).
    - **Out-of-scale predictions** (a regressor saying 3.6 on a 0-3 scale) are clipped to the scale when
      ``clip`` is true (the usual practice in AES), otherwise they raise. Gold scores outside the scale
      always raise: that is a data error.
    - **Constant ratings.** When both sides give one and the same score to every item, the kappa is 0/0
      (sklearn returns NaN); callbluff returns **1.0**, since the raters agree perfectly. Both constant
      but different gives 0.0, as sklearn does.
    - **Missing predictions** (None/NaN) raise unless ``nan_policy="omit"``, which drops those pairs.

    Raises:
        ValueError: on empty input, unequal lengths, missing values (``nan_policy="raise"``), an invalid
            scale, or scores outside the scale / not among ``labels``.
    """
    t = as_float_array(y_true, "y_true")
    p = as_float_array(y_pred, "y_pred")
    same_length("y_true", t, "y_pred", p)
    bad = np.isnan(t) | np.isnan(p)
    if bad.any():
        if nan_policy != "omit":
            where = np.flatnonzero(bad)[:10].tolist()
            raise ValueError(
                f"qwk: {int(bad.sum())} missing score(s) (None/NaN, e.g. failed predictions) at positions "
                f"{where}{'...' if bad.sum() > 10 else ''}; drop them or pass nan_policy='omit'"
            )
        t, p = t[~bad], p[~bad]
        if t.size == 0:
            raise ValueError("qwk: every pair has a missing score; nothing to compare")
    t, p = round_half_up(t), round_half_up(p)

    if labels is None and (score_min is not None or score_max is not None):
        if score_min is None or score_max is None:
            raise ValueError("qwk: give both score_min and score_max (or neither)")
        _check_range(score_min, score_max)
        lo, hi = math.ceil(score_min), math.floor(score_max)
        labels = list(range(lo, hi + 1))
    if labels is not None:
        labels = [int(x) for x in labels]
        if len(labels) < 2:
            raise ValueError(f"qwk: the scale needs at least two labels, got {labels}")
        allowed = np.asarray(labels, dtype=float)
        out_true = ~np.isin(t, allowed)
        if out_true.any():
            i = int(np.flatnonzero(out_true)[0])
            raise ValueError(
                f"qwk: gold score {t[i]:g} at position {i} is outside the scale {labels[0]}..{labels[-1]} "
                f"({int(out_true.sum())} such); check the prompt's score range"
            )
        if clip:
            p = np.clip(p, min(labels), max(labels))
        out_pred = ~np.isin(p, allowed)
        if out_pred.any():
            i = int(np.flatnonzero(out_pred)[0])
            raise ValueError(
                f"qwk: predicted score {p[i]:g} at position {i} is not on the scale {labels} "
                f"({int(out_pred.sum())} such); pass clip=True to clip to the scale"
            )

    if np.all(t == t[0]) and np.all(p == t[0]):
        return 1.0  # perfect agreement of two constant raters (sklearn: 0/0 -> NaN)
    from sklearn.metrics import cohen_kappa_score  # here, not at import: the CLI starts without scikit-learn

    ti, pi = t.astype(int), p.astype(int)
    return float(cohen_kappa_score(ti, pi, weights="quadratic", labels=labels))


TOL = 1e-9
"""A score change of at most this counts as unchanged (Kumar et al.'s statistics, the verdicts of
:mod:`callbluff.metrics.expectations`): float noise from a regressor is not a change."""


@dataclass
class DiffStats:
    """Kumar et al.'s overstability statistics (Sec. 3.1) as a streaming accumulator: :meth:`update` with
    (original, adversarial) score arrays as they come, :meth:`merge` two accumulators, :meth:`result` the fields
    of :func:`overstability`. It keeps sufficient statistics only: counts (``n``, ``n_missing``, down, up), sums
    of ``d = adversarial - original`` (all, ``|d|``, over the lowered and over the raised samples), Welford /
    Chan's mean and sum of squared deviations ``m2`` (numerically stable under merging) for the standard
    deviation, and the extremes of ``d`` for the t-test's degenerate cases. The paired t-test is computed from
    the same statistics: ``t = mean(d) / sqrt(var(d, ddof=1) / n)`` on ``n - 1`` degrees of freedom (what
    :func:`scipy.stats.ttest_rel` computes). No order statistic is needed, so nothing is approximated."""

    tol: float = TOL
    n: int = 0
    n_missing: int = 0
    neg: int = 0
    pos: int = 0
    total: float = 0.0
    abs_total: float = 0.0
    neg_total: float = 0.0
    pos_total: float = 0.0
    mean: float = 0.0
    m2: float = 0.0
    lo: float = math.inf
    hi: float = -math.inf
    abs_hi: float = 0.0

    def update(self, original: ArrayLike, adversarial: ArrayLike) -> None:
        """Add pairs (None/NaN in either: a failed prediction, counted in ``n_missing``)."""
        original, adversarial = np.asarray(original, dtype=float), np.asarray(adversarial, dtype=float)
        ok = ~(np.isnan(original) | np.isnan(adversarial))
        self.n_missing += int((~ok).sum())
        d = adversarial[ok] - original[ok]
        if d.size == 0:
            return
        neg, pos = d < -self.tol, d > self.tol
        mean_k = float(d.mean())
        self._add(int(d.size), int(neg.sum()), int(pos.sum()), float(d.sum()), float(np.abs(d).sum()),
                  float(d[neg].sum()), float(d[pos].sum()), mean_k, float(((d - mean_k) ** 2).sum()),
                  float(d.min()), float(d.max()), float(np.abs(d).max()))

    def merge(self, other: DiffStats) -> None:
        """Add another accumulator's pairs (same ``tol``)."""
        if other.tol != self.tol:
            raise ValueError("cannot merge overstability statistics computed with different tolerances")
        self.n_missing += other.n_missing
        if other.n:
            self._add(other.n, other.neg, other.pos, other.total, other.abs_total, other.neg_total, other.pos_total,
                      other.mean, other.m2, other.lo, other.hi, other.abs_hi)

    def _add(self, k: int, neg: int, pos: int, total: float, abs_total: float, neg_total: float, pos_total: float,
             mean_k: float, m2_k: float, lo: float, hi: float, abs_hi: float) -> None:
        self.neg += neg
        self.pos += pos
        self.total += total
        self.abs_total += abs_total
        self.neg_total += neg_total
        self.pos_total += pos_total
        self.lo, self.hi = min(self.lo, lo), max(self.hi, hi)
        self.abs_hi = max(self.abs_hi, abs_hi)
        n = self.n + k  # Chan et al.'s pairwise merge of (count, mean, M2)
        delta = mean_k - self.mean
        self.mean += delta * k / n
        self.m2 += m2_k + delta * delta * self.n * k / n
        self.n = n

    def result(self, score_min: float, score_max: float, *, ddof: int = 0) -> dict[str, float | int]:
        """The fields of :func:`overstability` (see there), differences as % of ``score_max - score_min``."""
        _check_range(score_min, score_max)
        n = self.n
        out: dict[str, float | int] = {"n": n, "n_missing": self.n_missing}
        if n == 0:
            out.update({k: math.nan for k in OVERSTABILITY_FIELDS[2:]})
            return out
        rng = float(score_max - score_min)
        out["neg_pct"] = pct(self.neg, n)
        out["pos_pct"] = pct(self.pos, n)
        out["not_lowered_pct"] = pct(n - self.neg, n)
        out["mean_diff_pct"] = pct(self.total / n, rng)
        out["abs_mean_diff_pct"] = pct(self.abs_total / n, rng)
        out["std_diff_pct"] = pct(math.sqrt(max(self.m2, 0.0) / (n - ddof)), rng) if n > ddof else math.nan
        out["mean_neg_diff_pct"] = pct(self.neg_total / self.neg, rng) if self.neg else 0.0
        out["mean_pos_diff_pct"] = pct(self.pos_total / self.pos, rng) if self.pos else 0.0
        if n < 2:
            p = math.nan
        elif self.abs_hi <= self.tol:
            p = 1.0
        elif self.lo == self.hi:
            p = 0.0
        else:
            var = max(self.m2, 0.0) / (n - 1)
            t = (self.total / n) / math.sqrt(var / n) if var > 0 else math.inf
            from scipy import stats  # here, not at import: the CLI starts without SciPy

            p = float(2.0 * stats.t.sf(abs(t), n - 1))
        out["ttest_p"] = p
        return out


def overstability(
    original: ArrayLike,
    adversarial: ArrayLike,
    score_min: float,
    score_max: float,
    *,
    tol: float = TOL,
    ddof: int = 0,
) -> dict[str, float | int]:
    """Kumar et al.'s statistics of the score change from original to adversarial responses (Sec. 3.1).

    The difference is ``d = adversarial - original`` per pair. Returned fields (the ``metrics.json`` names):

    ============================  =====================================================================
    ``n``                         valid pairs (both scores present)
    ``n_missing``                 pairs left out because a score is None/NaN (a failed prediction)
    ``neg_pct`` / ``pos_pct``     % of the ``n`` samples whose score went down (``d < -tol``) / up
                                  (``d > tol``); the rest are unchanged
    ``not_lowered_pct``           % of the ``n`` samples whose score was *not* lowered (``d >= -tol``:
                                  went up or stayed): the adversarial responses a robust scorer should
                                  have scored lower but did not (Sec. 3.1: "the score of an adversarial
                                  response should always be lesser than the score of the original
                                  response"; Sec. 4 reads the results this way). Equal to
                                  ``100 - neg_pct``; reported as its own field because it is the
                                  headline failure rate of an attack whose expectation is "lower"
    ``mean_diff_pct``             mean of ``d``, as % of the score range ``score_max - score_min``
    ``abs_mean_diff_pct``         mean of ``|d|``, % of range
    ``std_diff_pct``              standard deviation of ``d`` (``ddof=0``, numpy's default; the paper
                                  does not say), % of range
    ``mean_neg_diff_pct``         mean of ``d`` over the negatively impacted samples only (a negative
                                  number), % of range; 0.0 when there are none (``neg_pct`` is then 0)
    ``mean_pos_diff_pct``         mean of ``d`` over the positively impacted samples, % of range; 0.0
                                  when there are none
    ``ttest_p``                   two-sided paired t-test p-value (:func:`scipy.stats.ttest_rel`) of
                                  adversarial vs original scores
    ============================  =====================================================================

    Computed by the streaming :class:`DiffStats` (the one implementation; a run's metric rows stream their
    chunks into it). Conventions where the t-test is undefined: all differences zero (within ``tol``) -> ``ttest_p = 1.0``
    (no evidence of any change; scipy would return NaN); all differences equal and non-zero ->
    ``0.0`` (a systematic shift with no variance); fewer than 2 valid pairs -> NaN. With no valid pair
    at all (every prediction failed) every statistic is NaN and ``n = 0``.

    Raises:
        ValueError: on empty input, unequal lengths or an invalid score range.
    """
    _check_range(score_min, score_max)
    o = as_float_array(original, "original")
    a = as_float_array(adversarial, "adversarial")
    same_length("original", o, "adversarial", a)
    acc = DiffStats(tol=tol)
    acc.update(o, a)
    return acc.result(score_min, score_max, ddof=ddof)


def arr(
    adversarial_scores: ArrayLike,
    score_min: float,
    *,
    rounding: bool = True,
) -> float:
    """Adversarial Rejection Rate (Ding et al. 2020, Sec. 3.2): % of adversarial answers scored at the
    bottom of the scale ("rejected, i.e. scored as zero by the system"; on ASAP-SAS the bottom is 0).

    A score counts as a rejection when, put on the integer scale with :func:`round_half_up`, it is at or
    below ``score_min`` (so a regressor's 0.4 on a 0-3 scale is a rejection, 0.5 is not). With
    ``rounding=False`` the raw score is compared with ``score_min + 1e-9`` instead (for scorers whose
    scale is not integer). Missing scores (None/NaN, failed predictions) are left out of the
    denominator; if every score is missing the result is NaN.

    Raises:
        ValueError: on empty input.
    """
    s = as_float_array(adversarial_scores, "adversarial_scores")
    s = s[~np.isnan(s)]
    if s.size == 0:
        return math.nan
    if rounding:
        rejected = at_minimum(s, score_min)
    else:
        rejected = s <= score_min + 1e-9
    return pct(rejected.sum(), s.size)
