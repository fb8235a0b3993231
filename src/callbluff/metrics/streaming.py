"""Scoring-task metric rows from streamed sufficient statistics (memory independent of the run's size).

The run's parts are fed one chunk at a time (:meth:`ScoringAccumulator.add_originals` /
:meth:`ScoringAccumulator.add_examples`, only the metric columns, never the texts); each (target, attack,
params, prompt) group, and its pooled ``all`` group, keeps a fixed number of numbers, so memory grows with the
number of groups, not of records. :meth:`ScoringAccumulator.rows` gives the rows
:func:`callbluff.engine.metrics_rows.compute_metrics` documents (same fields, same order):

- **Kumar et al. Sec. 3.1 overstability** (:func:`callbluff.metrics.overstability`) from the differences
  ``d = adversarial - original`` of valid pairs: counts (``n``, ``n_missing``, down, up), sums (``d``,
  ``|d|``, ``d`` over the lowered and over the raised samples) for the means, Welford/Chan's mean and sum of
  squared deviations ``M2`` (merged per chunk, numerically stable) for ``std_diff_pct`` (``ddof = 0``, as
  there), and min/max of ``d`` for the t-test's degenerate cases (all equal; all zero). ``ttest_p`` is the
  two-sided paired t-test (:func:`scipy.stats.ttest_rel`) computed from the same sufficient statistics:
  ``t = mean(d) / sqrt(var(d, ddof=1) / n)`` on ``n - 1`` degrees of freedom. No statistic here needs a
  median or any other order statistic, so nothing is approximated; sums over several chunks may differ from
  one-pass numpy sums in the last bits (tests compare at 1e-12).
- **QWK** (Kumar et al. Sec. 2.3, Ding et al. 3.2) of the clean predictions per (target, prompt) from the
  confusion counts of (gold, prediction) on the integer scale (:func:`callbluff.metrics.round_half_up`, the
  prediction clipped to the prompt's scale), the quadratic weighted kappa computed by sklearn on the counts
  as sample weights: the same number :func:`callbluff.metrics.qwk` gives on the rows, with its conventions
  (constant raters agreeing -> 1.0; a gold score off the scale raises).
- **ARR** (Ding et al. Sec. 3.2): count of adversarial scores at the bottom of their prompt's scale and count of
  scored ones; pooled over prompts by summing both.
- prompt-level generator rows: ``n``, ARR, and ``mean_score_pct`` from the sum of scores as % of the scale.
- **graders** (:mod:`callbluff.metrics.grading`): max-out rate, ceiling share, parse failures, the
  spread of the ``n`` samples and across targets (prompt variants), bootstrap intervals of the mean change and
  of the raised share: :class:`~callbluff.metrics.grading.GraderStats` per row,
  :class:`~callbluff.metrics.grading.CleanGraderStats` per clean row.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from callbluff.metrics.grading import CleanGraderStats, GraderStats, SpreadStats, variant_spreads
from callbluff.metrics.rows import ALL
from callbluff.metrics.scoring import DiffStats, _check_range, at_minimum, round_half_up
from callbluff.records import Prompt, Task

ORIGINAL_METRIC_COLUMNS = ["target", "prompt_id", "gold", "score", "error", "source_id", "samples"]
EXAMPLE_METRIC_COLUMNS = ["target", "attack", "params", "prompt_id", "source_id", "orig_score", "adv_score",
                          "orig_error", "adv_error", "queries", "example_id", "gold", "adv_samples"]


@dataclass
class Bottom:
    """ARR counts (Ding et al. 3.2): scored adversarial answers and those at the bottom of their scale."""

    scored: int = 0
    rejected: int = 0
    scaled_total: float = 0.0  # sum of scores as % of their prompt's range (generator rows' mean_score_pct)

    def add(self, scores: np.ndarray, score_min: np.ndarray, width: np.ndarray) -> None:
        ok = ~np.isnan(scores)
        s = scores[ok]
        self.scored += int(s.size)
        self.rejected += int(at_minimum(s, score_min[ok]).sum())
        self.scaled_total += float(((s - score_min[ok]) / width[ok] * 100.0).sum())

    @property
    def arr(self) -> float:
        return 100.0 * float(self.rejected) / float(self.scored) if self.scored else math.nan

    @property
    def mean_score_pct(self) -> float:
        return self.scaled_total / self.scored if self.scored else math.nan


@dataclass
class Group:
    """Everything one (target, attack, params, prompt or ``all``) row needs."""

    diffs: DiffStats = field(default_factory=DiffStats)
    bottom: Bottom = field(default_factory=Bottom)
    grader: GraderStats = field(default_factory=GraderStats)
    rows: int = 0
    queries: int = 0
    any_queries: bool = False
    n_errors_original: int = 0
    n_errors_adversarial: int = 0

    def add_common(self, g: pd.DataFrame) -> None:
        q = g["queries"].to_numpy()
        self.rows += len(g)
        self.queries += int(q.sum())
        self.any_queries = self.any_queries or bool((q > 0).any())
        self.n_errors_original += int(g["orig_error"].notna().sum())
        self.n_errors_adversarial += int(g["adv_error"].notna().sum())

    def common_fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n_errors_original": self.n_errors_original,
                               "n_errors_adversarial": self.n_errors_adversarial, "n_errors_generate": 0}
        return out


@dataclass
class Clean:
    """The clean predictions of one (target, prompt): counts and the (gold, prediction) confusion counts."""

    n: int = 0
    n_errors_original: int = 0
    pairs: dict[tuple[float, float], int] = field(default_factory=dict)
    grader: CleanGraderStats = field(default_factory=CleanGraderStats)

    def qwk(self, prompt: Prompt) -> float:
        """:func:`callbluff.metrics.qwk` (``score_min``/``score_max`` of the prompt, clipping on) from counts."""
        total = sum(self.pairs.values())
        if total < 2:
            return math.nan
        lo, hi = math.ceil(prompt.score_min), math.floor(prompt.score_max)
        _check_range(prompt.score_min, prompt.score_max)
        labels = list(range(lo, hi + 1))
        if len(labels) < 2:
            raise ValueError(f"qwk: the scale needs at least two labels, got {labels} (prompt {prompt.id})")
        merged: dict[tuple[int, int], int] = {}
        for (g, p), c in self.pairs.items():
            if g not in labels:
                raise ValueError(f"qwk: gold score {g:g} of prompt {prompt.id} is outside the scale {lo}..{hi} "
                                 f"({c} such); check the prompt's score range")
            key = (int(g), int(min(max(p, lo), hi)))
            merged[key] = merged.get(key, 0) + c
        first = next(iter(merged))
        if len(merged) == 1 and first[0] == first[1]:
            return 1.0  # perfect agreement of two constant raters, as in metrics.qwk
        # Cohen's kappa with quadratic weights straight from the counts: the arithmetic of sklearn's
        # cohen_kappa_score, step for step (so the figure is the same float as metrics.qwk's), without its
        # per-call validation and confusion-matrix building (this runs at the end of every run)
        k = len(labels)
        confusion = np.zeros((k, k), dtype=np.float64)
        for (g, p), c in merged.items():
            confusion[g - lo, p - lo] += c
        sum0, sum1 = np.sum(confusion, axis=0), np.sum(confusion, axis=1)
        expected = np.outer(sum0, sum1) / np.sum(sum0)
        w_mat = np.zeros([k, k], dtype=int) + np.arange(k)
        w_mat = (w_mat - w_mat.T) ** 2
        return float(1 - np.sum(w_mat * confusion) / np.sum(w_mat * expected))


class ScoringAccumulator:
    """Streams a scoring run's originals and examples (chunk by chunk) into its metric rows.

    ``task`` names the rows' task; ``pair_arr`` adds ``arr`` (Ding et al. 3.2) to the rows of response-level
    attacks too (content scoring), not only to the prompt-level generators' rows. The task descriptors
    (:mod:`callbluff.tasks`) build it."""

    def __init__(self, prompts: Mapping[str, Prompt], task: Task, *, pair_arr: bool = False) -> None:
        self.prompts = prompts
        self.task = task
        self.pair_arr = pair_arr
        self.clean: dict[tuple[str, str], Clean] = {}
        self.groups: dict[tuple[str, str, str, str], Group] = {}
        self.generated: dict[tuple[str, str, str], bool] = {}  # (target, attack, params): only prompt answers
        self.prompts_seen: dict[tuple[str, str, str], set[str]] = {}
        self.clean_variants: dict[str, SpreadStats] = {}  # prompt -> spread of an answer's scores across targets
        self.variants: dict[tuple[str, str, str], SpreadStats] = {}  # (attack, params, prompt or all) -> the same

    def _scale(self, pids: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        lo = pids.map(lambda p: self.prompts[p].score_min).to_numpy(float)
        width = pids.map(lambda p: self.prompts[p].score_range or 1.0).to_numpy(float)
        return lo, width

    def add_originals(self, orig: pd.DataFrame) -> None:
        """One chunk of originals rows (at least :data:`ORIGINAL_METRIC_COLUMNS`)."""
        orig = orig[orig["prompt_id"].notna()]
        if not len(orig):
            return
        # a few whole-chunk operations rather than several per (target, prompt) group: this runs once per chunk
        # at the end of every run, on its critical path
        scored = orig["score"].notna()
        # grouped by column names: grouping by Series objects makes pandas format each one for a KeyError it
        # catches (a third of this function's time)
        counts = pd.DataFrame({"t": orig["target"], "p": orig["prompt_id"], "n": scored, "e": orig["error"].notna()}
                              ).groupby(["t", "p"], sort=False).sum()
        for (target, pid), n, n_err in zip(counts.index, counts["n"].tolist(), counts["e"].tolist()):
            c = self.clean.setdefault((target, pid), Clean())
            c.n += int(n)
            c.n_errors_original += int(n_err)
        self._clean_grader(orig)
        ok = orig[scored & orig["gold"].notna()]
        if not len(ok):
            return
        pairs = pd.DataFrame({"t": ok["target"], "p": ok["prompt_id"],
                              "g": round_half_up(ok["gold"].to_numpy(float)),
                              "s": round_half_up(ok["score"].to_numpy(float))}).value_counts(sort=False)
        for (target, pid, gv, pv), cnt in zip(pairs.index, pairs.tolist()):
            c = self.clean[(target, pid)]
            c.pairs[(float(gv), float(pv))] = c.pairs.get((float(gv), float(pv)), 0) + int(cnt)

    def _clean_grader(self, orig: pd.DataFrame) -> None:
        """Parse failures and sample spreads per (target, prompt); spreads across targets per prompt."""
        has_samples = "samples" in orig.columns
        _, width = self._scale(orig["prompt_id"])
        orig = orig.assign(_width=width)
        for (target, pid), g in orig.groupby(["target", "prompt_id"], sort=False):
            self.clean[(target, pid)].grader.update(g["error"].tolist(), g["samples"].tolist() if has_samples else None,
                                                    g["_width"].to_numpy())
        if "source_id" in orig.columns and orig["target"].nunique() > 1:
            for pid, g in orig.groupby("prompt_id", sort=False):
                _, spreads = variant_spreads(g["source_id"].tolist(), g["score"].to_numpy(float), g["_width"].to_numpy())
                self.clean_variants.setdefault(pid, SpreadStats()).add(spreads)

    def _example_variants(self, ex: pd.DataFrame) -> None:
        """Spread of each adversarial example's scores across targets, per (attack, params, prompt) and pooled."""
        if "example_id" not in ex.columns or ex["target"].nunique() < 2:
            return
        for (attack, params), g in ex.groupby(["attack", "params"], sort=False):
            for pid, gp in g.groupby("prompt_id", sort=False):
                _, spreads = variant_spreads(gp["example_id"].tolist(), gp["adv_score"].to_numpy(float),
                                             gp["_width"].to_numpy())
                self.variants.setdefault((attack, params, pid), SpreadStats()).add(spreads)
                self.variants.setdefault((attack, params, ALL), SpreadStats()).add(spreads)

    @staticmethod
    def _grader_update(grader: GraderStats, g: pd.DataFrame) -> None:
        lo = g["_lo"].to_numpy()
        grader.update(g["example_id"].tolist() if "example_id" in g.columns else g["source_id"].tolist(),
                      g["orig_score"].to_numpy(float), g["adv_score"].to_numpy(float),
                      g["gold"].to_numpy(float) if "gold" in g.columns else np.full(len(g), np.nan),
                      lo, lo + g["_width"].to_numpy(), g["adv_error"].tolist(),
                      g["adv_samples"].tolist() if "adv_samples" in g.columns else None)

    def add_examples(self, ex: pd.DataFrame) -> None:
        """One chunk of examples rows (at least :data:`EXAMPLE_METRIC_COLUMNS`)."""
        ex = ex[ex["prompt_id"].notna()]
        if not len(ex):
            return
        lo, width = self._scale(ex["prompt_id"])
        ex = ex.assign(_lo=lo, _width=width)
        self._example_variants(ex)
        for (target, attack, params), g in ex.groupby(["target", "attack", "params"], sort=False):
            key = (target, attack, params)
            self.generated[key] = self.generated.get(key, True) and bool(g["source_id"].str.startswith("prompt:").all())
            self.prompts_seen.setdefault(key, set()).update(g["prompt_id"].unique())
            o_raw, a_raw = g["orig_score"].to_numpy(float), g["adv_score"].to_numpy(float)
            glo, gw = g["_lo"].to_numpy(), g["_width"].to_numpy()
            pooled = self.groups.setdefault((*key, ALL), Group())
            pooled.add_common(g)
            pooled.diffs.update((o_raw - glo) / gw * 100.0, (a_raw - glo) / gw * 100.0)
            pooled.bottom.add(a_raw, glo, gw)
            self._grader_update(pooled.grader, g)
            for pid, gp in g.groupby("prompt_id", sort=False):
                grp = self.groups.setdefault((*key, pid), Group())
                grp.add_common(gp)
                grp.diffs.update(gp["orig_score"].to_numpy(float), gp["adv_score"].to_numpy(float))
                grp.bottom.add(gp["adv_score"].to_numpy(float), gp["_lo"].to_numpy(), gp["_width"].to_numpy())
                self._grader_update(grp.grader, gp)

    def rows(self) -> list[dict[str, Any]]:
        """The metric rows (before :func:`callbluff.metrics.rows.metric_row`), in the documented order: per
        target, its clean rows by prompt, then each (attack, params) with its prompts and its pooled row."""
        rows: list[dict[str, Any]] = []
        task = self.task
        for target in sorted({t for t, _ in self.clean}):
            qwks: dict[str, float] = {}
            for pid in sorted(p for t, p in self.clean if t == target):
                c = self.clean[(target, pid)]
                qwks[pid] = c.qwk(self.prompts[pid])
                c.grader.variants = self.clean_variants.get(pid, SpreadStats())
                rows.append({"task": task, "attack": "clean", "params": "{}", "prompt": pid, "target": target,
                             "n": c.n, "n_errors_original": c.n_errors_original, "qwk": qwks[pid],
                             **c.grader.result()})
            for key in sorted(k for k in self.generated if k[0] == target):
                _, attack, params = key
                generated = self.generated[key]
                pids = sorted(self.prompts_seen[key])
                for pid in [*pids, *([ALL] if len(pids) > 1 else [])]:
                    grp = self.groups[(*key, pid)]
                    row: dict[str, Any] = {"task": task, "attack": attack, "params": params, "prompt": pid,
                                           "target": target}
                    grp.grader.variants = self.variants.get((attack, params, pid), SpreadStats())
                    graded = grp.grader.result()
                    if generated:
                        row.update(n=grp.bottom.scored, arr=grp.bottom.arr, mean_score_pct=grp.bottom.mean_score_pct,
                                   **{k: graded[k] for k in ("parse_fail_pct", "sample_spread_pct", "n_sampled",
                                                             "variant_spread_pct")})
                    elif pid == ALL:
                        row.update(grp.diffs.result(0.0, 100.0))
                        if self.pair_arr:
                            row["arr"] = grp.bottom.arr
                    else:
                        p = self.prompts[pid]
                        row.update(grp.diffs.result(p.score_min, p.score_max))
                        if self.pair_arr:
                            row["arr"] = grp.bottom.arr
                    if not generated:
                        row.update(graded)
                    row.update(grp.common_fields())
                    if pid == ALL:
                        defined = [q for q in qwks.values() if not math.isnan(q)]  # no numpy "Mean of empty slice"
                        row.update(qwk=float(np.mean(defined)) if defined else math.nan, qwk_mean_over_prompts=True)
                    else:
                        row["qwk"] = qwks.get(pid, math.nan)
                    if pid != ALL and grp.any_queries:
                        row["queries_mean"] = grp.queries / grp.rows
                    rows.append(row)
        return rows
