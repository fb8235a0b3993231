"""Statistics for graders that are language models, paired with each answer's clean score, as streaming
accumulators (``update`` / ``merge`` / ``result``, like :class:`~callbluff.metrics.scoring.DiffStats`): memory
independent of the number of answers, the same figures however the rows are split into chunks.

Fields (``metrics.json`` names; every ``*_pct`` is a percentage, of answers or of the prompt's score range as
said):

======================  ==============================================================================================
``max_out_pct``         % of the pairs whose human (gold) score is low, at most the scale's midpoint, that the grader
                        scored at the scale's maximum after the attack (rounded half up, as QWK and ARR round): a
                        weak answer lifted to full marks
``n_low``               those low-scored pairs (the denominator of ``max_out_pct``)
``ceiling_pct``         % of the valid pairs already at the maximum when clean: they cannot be raised, so a
                        "not raised" share is read against it
``parse_fail_pct``      % of the row's calls whose error is an unparseable reply (:func:`is_parse_failure`): the
                        grader answered, but no score could be read from it (never a 0)
``sample_spread_pct``   mean over the answers graded with ``n`` > 1 samples of (largest - smallest sample), % of the
                        range: how much one grading of the same text varies
``n_sampled``           those answers
``variant_spread_pct``  mean over the answers graded by two or more targets (prompt variants: e.g. the same grader
                        with the rubric's items in another order) of (largest - smallest score across targets), % of
                        the range; the same value on every target's row
``mean_diff_pct_ci_low`` / ``_high``, ``pos_pct_ci_low`` / ``_high``
                        95 % bootstrap confidence intervals of the mean score change (% of range) and of the raised
                        share (``pos_pct``), from :data:`BOOTSTRAP_REPLICATES` Poisson-bootstrap replicates
======================  ==============================================================================================

The bootstrap is the Poisson bootstrap (Hanley & MacGibbon 2006; Chamandy et al. 2012, "Estimating uncertainty
for massive data streams"): each pair gets, in replicate ``b``, a weight drawn from Poisson(1) instead of
a multinomial count, which needs no pass over the whole sample and so streams and merges. The weights are a
function of the pair's id, the replicate and :data:`BOOTSTRAP_SEED` (SplitMix64 of a BLAKE2b hash of the id): the
same pairs give the same interval in any order, chunking or process. The interval is the 2.5th and 97.5th
percentiles of the replicate statistics (the percentile method; Efron & Tibshirani 1993, Ch. 13).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from callbluff.metrics._common import pct
from callbluff.metrics.scoring import TOL, round_half_up

BOOTSTRAP_REPLICATES = 200
BOOTSTRAP_SEED = 29
PARSE_FAILURE = re.compile(r"unparseable|could not parse|cannot parse|can't parse|no score (found|in)|parse error"
                           r"|not valid JSON|invalid JSON|JSONDecodeError|no match for score", re.IGNORECASE)
"""What an unparseable grader reply's error says. The chat target's parse errors begin "unparseable reply";
the other forms are what other adapters and users' graders write."""

GRADER_FIELDS: tuple[str, ...] = (
    "max_out_pct", "n_low", "ceiling_pct", "parse_fail_pct", "sample_spread_pct", "n_sampled", "variant_spread_pct",
    "mean_diff_pct_ci_low", "mean_diff_pct_ci_high", "pos_pct_ci_low", "pos_pct_ci_high",
)

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
# Poisson(1) CDF for k = 0..15 (P(K > 15) < 1e-13): a uniform u maps to the first k with u < CDF(k)
_POISSON1_CDF = np.cumsum([math.exp(-1.0) / math.factorial(k) for k in range(16)])


def is_parse_failure(error: object) -> bool:
    """Whether a prediction's error is an unparseable reply (:data:`PARSE_FAILURE`)."""
    return isinstance(error, str) and bool(PARSE_FAILURE.search(error))


def _id_hashes(ids: Iterable[object]) -> np.ndarray:
    return np.array([int.from_bytes(hashlib.blake2b(str(i).encode("utf-8", "surrogatepass"), digest_size=8,
                                                    key=b"callbluff-bootstrap").digest(), "little") for i in ids],
                    dtype=np.uint64)


def poisson_weights(ids: Sequence[object], replicates: int = BOOTSTRAP_REPLICATES,
                    seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """The ``(len(ids), replicates)`` Poisson(1) bootstrap weights of ``ids`` (module docstring): SplitMix64 of
    (id hash + seed + replicate), mapped to a uniform and through the Poisson(1) CDF."""
    h = _id_hashes(ids)
    with np.errstate(over="ignore"):
        z = (h[:, None] + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
             + np.arange(1, replicates + 1, dtype=np.uint64)[None, :] * np.uint64(0x9E3779B97F4A7C15)) & _M64
        z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return np.searchsorted(_POISSON1_CDF, u, side="right").astype(np.float64)


def _percentiles(values: np.ndarray) -> tuple[float, float]:
    v = values[np.isfinite(values)]
    if v.size == 0:
        return math.nan, math.nan
    lo, hi = np.percentile(v, [2.5, 97.5])
    return float(lo), float(hi)


@dataclass
class SpreadStats:
    """Mean (largest - smallest) of groups of scores, % of their range: :attr:`n` groups, :attr:`total` sum."""

    n: int = 0
    total: float = 0.0

    def add(self, spreads_pct: ArrayLike) -> None:
        s = np.asarray(spreads_pct, dtype=float)
        s = s[np.isfinite(s)]
        self.n += int(s.size)
        self.total += float(s.sum())

    def merge(self, other: SpreadStats) -> None:
        self.n += other.n
        self.total += other.total

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else math.nan


def sample_spreads(samples: Iterable[object], width: ArrayLike) -> np.ndarray:
    """(largest - smallest) of each row's samples as % of its ``width``; NaN for rows with fewer than two."""
    w = np.asarray(width, dtype=float)
    out = np.full(w.shape, np.nan)
    for k, s in enumerate(samples):
        if s is None or isinstance(s, float):
            continue
        vals = [float(x) for x in s if x is not None and math.isfinite(float(x))]
        if len(vals) >= 2:
            out[k] = (max(vals) - min(vals)) / w[k] * 100.0
    return out


@dataclass
class GraderStats:
    """The grader statistics of one metric row (module docstring), streamed: :meth:`update` with a chunk of the
    row's pairs, :meth:`merge` another accumulator, :meth:`result` the fields."""

    replicates: int = BOOTSTRAP_REPLICATES
    seed: int = BOOTSTRAP_SEED
    n: int = 0
    n_low: int = 0
    low_max: int = 0
    ceiling: int = 0
    calls: int = 0
    parse_failures: int = 0
    samples: SpreadStats = field(default_factory=SpreadStats)
    variants: SpreadStats = field(default_factory=SpreadStats)
    w: np.ndarray = field(default_factory=lambda: np.zeros(BOOTSTRAP_REPLICATES))
    wd: np.ndarray = field(default_factory=lambda: np.zeros(BOOTSTRAP_REPLICATES))
    wpos: np.ndarray = field(default_factory=lambda: np.zeros(BOOTSTRAP_REPLICATES))

    def __post_init__(self) -> None:
        if self.w.shape != (self.replicates,):
            self.w, self.wd, self.wpos = (np.zeros(self.replicates) for _ in range(3))

    def update(self, ids: Sequence[object], original: ArrayLike, adversarial: ArrayLike, gold: ArrayLike,
               score_min: ArrayLike, score_max: ArrayLike, errors: Sequence[object] | None = None,
               samples: Sequence[object] | None = None) -> None:
        """Add a chunk of pairs: their ids (bootstrap weights), clean and attacked scores (None/NaN: failed),
        human scores (None: none), each pair's scale, the attacked predictions' errors (``parse_fail_pct``) and
        their samples (``sample_spread_pct``)."""
        o = np.asarray(original, dtype=float)
        a = np.asarray(adversarial, dtype=float)
        g = np.asarray(gold, dtype=float)
        lo = np.asarray(score_min, dtype=float)
        hi = np.asarray(score_max, dtype=float)
        width = hi - lo
        self.calls += int(a.size)
        if errors is not None:
            self.parse_failures += sum(is_parse_failure(e) for e in errors)
        if samples is not None:
            self.samples.add(sample_spreads(samples, width))
        ok = ~(np.isnan(o) | np.isnan(a))
        if not ok.any():
            return
        top = round_half_up(hi[ok])
        self.n += int(ok.sum())
        self.ceiling += int((round_half_up(o[ok]) >= top).sum())
        low = ~np.isnan(g[ok]) & (g[ok] <= lo[ok] + width[ok] / 2.0)
        self.n_low += int(low.sum())
        self.low_max += int((low & (round_half_up(a[ok]) >= top)).sum())
        d_pct = (a[ok] - o[ok]) / width[ok] * 100.0
        raised = (a[ok] - o[ok] > TOL).astype(float)
        weights = poisson_weights([i for i, k in zip(ids, ok) if k], self.replicates, self.seed)
        self.w += weights.sum(axis=0)
        self.wd += weights.T @ d_pct
        self.wpos += weights.T @ raised

    def add_variant_spreads(self, spreads_pct: ArrayLike) -> None:
        """Spreads across prompt variants (targets) of this row's answers (computed by the caller, which sees
        every target's rows of a chunk)."""
        self.variants.add(spreads_pct)

    def merge(self, other: GraderStats) -> None:
        if (other.replicates, other.seed) != (self.replicates, self.seed):
            raise ValueError("cannot merge grader statistics with different bootstrap replicates or seeds")
        for name in ("n", "n_low", "low_max", "ceiling", "calls", "parse_failures"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.samples.merge(other.samples)
        self.variants.merge(other.variants)
        self.w += other.w
        self.wd += other.wd
        self.wpos += other.wpos

    def result(self) -> dict[str, Any]:
        with np.errstate(invalid="ignore", divide="ignore"):
            mean_d = np.where(self.w > 0, self.wd / self.w, np.nan)
            pos = np.where(self.w > 0, self.wpos / self.w * 100.0, np.nan)
        d_lo, d_hi = _percentiles(mean_d) if self.n >= 2 else (math.nan, math.nan)
        p_lo, p_hi = _percentiles(pos) if self.n >= 2 else (math.nan, math.nan)
        return {
            "max_out_pct": pct(self.low_max, self.n_low), "n_low": self.n_low,
            "ceiling_pct": pct(self.ceiling, self.n),
            "parse_fail_pct": pct(self.parse_failures, self.calls),
            "sample_spread_pct": self.samples.mean, "n_sampled": self.samples.n,
            "variant_spread_pct": self.variants.mean,
            "mean_diff_pct_ci_low": d_lo, "mean_diff_pct_ci_high": d_hi,
            "pos_pct_ci_low": p_lo, "pos_pct_ci_high": p_hi,
        }


@dataclass
class CleanGraderStats:
    """The clean-side grader statistics of one (target, prompt): parse failures over calls, the spread of the
    ``n`` samples, and the spread across prompt variants (targets)."""

    calls: int = 0
    parse_failures: int = 0
    samples: SpreadStats = field(default_factory=SpreadStats)
    variants: SpreadStats = field(default_factory=SpreadStats)

    def update(self, errors: Sequence[object], samples: Sequence[object] | None, width: ArrayLike) -> None:
        self.calls += len(errors)
        self.parse_failures += sum(is_parse_failure(e) for e in errors)
        if samples is not None:
            self.samples.add(sample_spreads(samples, width))

    def merge(self, other: CleanGraderStats) -> None:
        self.calls += other.calls
        self.parse_failures += other.parse_failures
        self.samples.merge(other.samples)
        self.variants.merge(other.variants)

    def result(self) -> dict[str, Any]:
        return {"parse_fail_pct": pct(self.parse_failures, self.calls), "sample_spread_pct": self.samples.mean,
                "n_sampled": self.samples.n, "variant_spread_pct": self.variants.mean}


def variant_spreads(keys: Sequence[object], scores: ArrayLike, width: ArrayLike) -> tuple[list[object], np.ndarray]:
    """Per key (an answer or example id) graded by two or more targets: the key and (largest - smallest score
    across the targets) as % of its ``width``. ``keys`` repeat once per target; failed scores (NaN) are left out."""
    s = np.asarray(scores, dtype=float)
    w = np.asarray(width, dtype=float)
    groups: dict[object, list[float]] = {}
    widths: dict[object, float] = {}
    for k, v, ww in zip(keys, s, w):
        if math.isfinite(v):
            groups.setdefault(k, []).append(float(v))
            widths[k] = float(ww)
    out_keys = [k for k, v in groups.items() if len(v) >= 2]
    return out_keys, np.array([(max(groups[k]) - min(groups[k])) / widths[k] * 100.0 for k in out_keys])
