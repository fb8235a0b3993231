"""``callbluff compare RUN_A RUN_B [...]``: is v2 better? A verdict per target and attack, then every figure.

Typical use: the same suite against two model versions (two runs), or two targets of one run. Each (run,
target) is a column; the first column is the *baseline* and every other column is compared with it (with the
first run's target of the same name when the runs share target names, so ``v1/a, v1/b`` vs ``v2/a, v2/b``
compares ``a`` with ``a``).

**Verdicts** (:func:`verdicts`): per compared column and attack configuration, pooled over prompts, whether the
column is *better*, *worse* or *unchanged* than the baseline beyond noise, on the share of cases that fooled
the target (``failure_pct``: CheckList-style per-case verdicts, Ribeiro et al. 2020 Sec. 2; a case is an
adversarial example, or for reading a question fooled by any of its versions, Jia & Liang 2017 Sec. 4.1, as
the run counted it). The test (a choice; the papers compare systems by their figures only):

- *paired* when the same cases are in both runs (the same example id with the same adversarial text: the same
  suite, seed and data give them): McNemar's
  exact test on the paired verdicts (McNemar 1947; the exact form is a two-sided binomial test of the discordant
  pairs, ``b`` cases fooled only in the baseline and ``c`` fooled only in the new column, against p = 1/2);
  cases a failed prediction left unjudged in either run are left out of the pairs;
- *unpaired* otherwise (no case id in common, e.g. another seed): Fisher's exact test on the two columns'
  (fooled, not fooled) counts.

The p-values of one comparison are adjusted for the number of tests with Holm's step-down method (Holm 1979;
a 171-configuration suite makes 171 tests, and at alpha = 0.05 about eight would differ by chance otherwise);
a verdict is *worse* when the adjusted p is below ``alpha`` (default 0.05) and the failure share rose, *better*
when it fell, *unchanged* otherwise. Every verdict carries its test's name, the pair counts and both p-values.

**Differences** (:func:`compare_runs`): rows aligned on (task, attack, params, prompt) across the columns: the
task's clean quality metrics (its descriptor's ``clean_fields``) for clean rows and, for attack rows,
``failure_pct`` and the task's ``robust_fields`` (:mod:`callbluff.tasks`), each with its signed difference to
the baseline (new - baseline; the field's declared direction, :mod:`callbluff.metrics.fields`, says which sign
is an improvement, for colour only: the verdicts are the test). A robust field that restates ``failure_pct`` (``arr``
= 100 - failure % under the ``bottom`` expectation, ``not_lowered_pct`` = failure % under ``lower``, see
:mod:`callbluff.metrics.expectations`) is left out when it equals it in every column, so a figure is listed once.
"Differences that matter first" (a choice): rows are sorted by their spread (max - min over the columns) on a
common scale; QWK, MRR and MAP (0-1) are multiplied by 100 for the sort so that 0.1 QWK weighs like 10 points
of a percentage. Rows a column lacks are shown as missing and sorted after the rest.

**Clean quality** (:func:`clean_verdicts`, scoring tasks): a v2 that scores everything lower is not fooled more
often, so the attack verdicts alone would pass it. Per compared column, the clean QWK (per prompt on the prompt's
scale, averaged over prompts, as the run reports it) and the mean absolute error (as % of each prompt's score
range) against its baseline, on the records both predicted (paired) or on each column's own (unpaired), with a 95 %
bootstrap interval of the difference (records resampled within each prompt, :data:`CLEAN_BOOTSTRAP` draws, seeded):
*worse* when the whole interval is on the losing side (QWK lower, MAE higher), *better* when on the winning side,
*unchanged* otherwise. A clean QWK drop beyond its interval is a regression for ``--fail-on-regression``.

Unrelated runs are not compared (a choice): runs of different tasks are refused, and so are runs of which no
row lines up with another column's ("nothing comparable", naming what each column has), since "0 differ"
would read as agreement. Runs on different data are compared with a note saying so (a held-out split is a
fair comparison; the user judges).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from callbluff.metrics.expectations import failure_unit, find_expectation
from callbluff.metrics.fields import metric_field
from callbluff.metrics.significance import fisher_exact, holm, mcnemar_exact
from callbluff.report.load import ReportError, RunData, load_run
from callbluff.tasks import get_task
from callbluff.render.text import config_labels, metric_value, num, pooled_rows, short_params

ALPHA = 0.05
"""Default significance level of the verdicts (Holm-adjusted p below it)."""
PAIRED_TEST = "McNemar exact (paired cases), Holm-adjusted"
UNPAIRED_TEST = "Fisher exact (unpaired counts), Holm-adjusted"
Outcome = Literal["better", "worse", "unchanged", "n/a"]


@dataclass(frozen=True)
class Difference:
    task: str
    attack: str
    params: str
    prompt: str
    metric: str
    values: tuple[float | None, ...]

    @property
    def spread(self) -> float | None:
        vals = [v for v in self.values if v is not None]
        if len(vals) < 2:
            return None
        s = max(vals) - min(vals)
        return s * 100.0 if unit_scale(self.metric) else s

    @property
    def complete(self) -> bool:
        return all(v is not None for v in self.values)


@dataclass(frozen=True)
class Verdict:
    """One compared column against its baseline on one attack configuration (prompts pooled)."""

    column: str
    baseline: str
    attack: str
    params: str
    baseline_failure_pct: float | None
    failure_pct: float | None
    n_pairs: int
    """Cases judged in both columns (paired test); for the unpaired test, the two columns' judged cases summed."""
    fooled_only_baseline: int
    """Paired: cases that fooled the baseline but not the column (improvements); unpaired: baseline's fooled."""
    fooled_only_column: int
    """Paired: cases that fooled the column but not the baseline (regressions); unpaired: the column's fooled."""
    test: str
    p_value: float | None
    p_adjusted: float | None
    verdict: Outcome
    untestable: str | None = None
    """Why no test was run where the figures say there is something to test (a run's examples.parquet missing
    and its metric rows without counts, or judged cases in one column only); ``--fail-on-regression`` exits 2
    on it rather than pass a gate it could not check."""

    @property
    def difference(self) -> float | None:
        if self.failure_pct is None or self.baseline_failure_pct is None:
            return None
        return self.failure_pct - self.baseline_failure_pct


CLEAN_BOOTSTRAP = 1000
"""Bootstrap draws of the clean-quality interval."""
CLEAN_LEVEL = 0.95
"""Coverage of the clean-quality interval."""
CLEAN_METRICS = {"qwk": "clean QWK", "mae_pct": "clean MAE (% of the score range)"}


@dataclass(frozen=True)
class CleanVerdict:
    """One compared column against its baseline on clean data: a clean-quality figure, its difference and the
    difference's bootstrap interval (module docstring)."""

    column: str
    baseline: str
    metric: str
    """``qwk`` (higher is better) or ``mae_pct`` (lower is better)."""
    baseline_value: float | None
    value: float | None
    low: float | None
    high: float | None
    """The :data:`CLEAN_LEVEL` bootstrap interval of ``value - baseline_value``."""
    n: int
    """Records in the figure (paired: predicted in both columns)."""
    paired: bool
    verdict: Outcome

    @property
    def difference(self) -> float | None:
        if self.value is None or self.baseline_value is None:
            return None
        return self.value - self.baseline_value


@dataclass(frozen=True)
class Comparison:
    columns: list[str]
    runs: list[RunData]
    differences: list[Difference]
    notes: list[str] = field(default_factory=list)
    """What the user should know to read the figures (e.g. the runs used different data)."""
    verdicts: list[Verdict] = field(default_factory=list)
    baselines: list[int] = field(default_factory=list)
    """Per column, the index of the column it is compared with (itself for the baseline)."""
    alpha: float = ALPHA
    labels: dict[tuple[str, str], str] = field(default_factory=dict)
    """(attack, params) -> the configuration's label among the attack's others
    (:func:`~callbluff.render.text.config_labels`: the parameters that vary, written out)."""
    clean: list[CleanVerdict] = field(default_factory=list)
    """The clean-quality verdicts (scoring tasks; :func:`clean_verdicts`)."""

    def label(self, attack: str, params: str) -> str:
        return self.labels.get((attack, params)) or short_params(params, attack)

    @property
    def regressions(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.verdict == "worse"]

    @property
    def untestable(self) -> list[Verdict]:
        """Verdicts that could not be tested though one should have been (:attr:`Verdict.untestable`)."""
        return [v for v in self.verdicts if v.untestable]

    @property
    def clean_regressions(self) -> list[CleanVerdict]:
        """Clean QWK drops beyond their interval (what ``--fail-on-regression`` fails on, with the attacks')."""
        return [v for v in self.clean if v.verdict == "worse" and v.metric == "qwk"]


def _columns(runs: Sequence[RunData]) -> list[tuple[RunData, str, str]]:
    names = [r.name for r in runs]
    out = []
    for r in runs:
        label = r.name if names.count(r.name) == 1 else str(r.path)
        for t in r.targets:
            out.append((r, t, f"{label} / {t}" if len(runs) > 1 else t))
    return out


def _baselines(cols: Sequence[tuple[RunData, str, str]]) -> list[int]:
    """Per column, the column it is compared with (itself for a baseline). One run: its first target is the
    baseline of the others. Several runs: the first run's targets are baselines; another run's target is
    compared with the first run's target of the same name, or with the first column."""
    first = cols[0][0]
    if all(run is first for run, _, _ in cols):
        return [0] * len(cols)
    own = {t: k for k, (run, t, _) in enumerate(cols) if run is first}
    return [k if run is first else own.get(t, 0) for k, (run, t, _) in enumerate(cols)]


def compare_runs(run_dirs: Sequence[str | Path], alpha: float = ALPHA) -> Comparison:
    """Load the runs, build every aligned difference (largest spread first) and the verdicts (:func:`verdicts`)."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1 (exclusive), got {alpha}")
    runs = [load_run(d) for d in run_dirs]
    cols = _columns(runs)
    if len(cols) < 2:
        raise ValueError("nothing to compare: give two run directories, or one run with two targets")
    if len({r.task for r in runs}) > 1:
        raise ValueError("runs of different tasks cannot be compared (their rows and metrics differ): "
                         + "; ".join(f"{r.path} is task {r.task}" for r in runs)
                         + ". Fix: compare runs of one task, e.g. the same suite against two versions of a model")
    table: dict[tuple[str, str, str, str, str], dict[int, float | None]] = {}
    expects: dict[tuple[str, str, str, str], set[str]] = {}
    for k, (run, target, _) in enumerate(cols):
        for r in run.metrics:
            if str(r.get("target")) != target:
                continue
            task = str(r.get("task", run.task))
            if r.get("attack") == "clean":
                fields: tuple[str, ...] = get_task(task).clean_fields
            else:
                fields = ("failure_pct", *(f for f, _ in get_task(task).robust_fields))
                expects.setdefault((task, str(r["attack"]), str(r["params"]), str(r["prompt"])), set()).add(
                    str(r.get("expect")))
            for f in fields:
                if f in r:
                    key = (task, str(r["attack"]), str(r["params"]), str(r["prompt"]), f)
                    table.setdefault(key, {})[k] = num(r.get(f))
    _drop_restated(table, expects)
    diffs = [Difference(*key, tuple(vals.get(k) for k in range(len(cols)))) for key, vals in table.items()]
    if not any(sum(v is not None for v in d.values) >= 2 for d in diffs):
        raise ValueError(_nothing_comparable(cols, table))
    diffs.sort(key=lambda d: (d.spread is None, -(d.spread or 0.0), d.attack != "clean", d.attack, d.params,
                              d.prompt, d.metric))
    specs = {str((r.meta.get("dataset") or {}).get("spec")) for r in runs}
    notes = [f"the runs used different data ({', '.join(sorted(specs))}): their figures measure different "
             "inputs"] if len(specs) > 1 else []
    baselines = _baselines(cols)
    by_attack: dict[str, set[str]] = {}
    for d in diffs:
        if d.attack != "clean":
            by_attack.setdefault(d.attack, set()).add(d.params)
    labels = {(a, p): lab for a, ps in by_attack.items() for p, lab in config_labels(a, sorted(ps)).items()}
    clean = clean_verdicts(cols, baselines) if get_task(runs[0].task).scoring else []
    return Comparison([c[2] for c in cols], runs, diffs, notes, verdicts(cols, baselines, alpha), baselines, alpha,
                      labels, clean)


# -- clean quality ----------------------------------------------------------------------------------------------

def _scales(runs: Sequence[RunData], originals: Mapping[int, Any]) -> dict[str, tuple[int, int]]:
    """Per prompt, its integer scale: from the dataset where it loads here, else the range of the gold scores and
    predictions seen in the runs."""
    import math

    from callbluff.datasets import load

    out: dict[str, tuple[int, int]] = {}
    for run in runs:
        cfg = (run.meta.get("suite") or {}).get("dataset") or {}
        spec = cfg.get("spec") or (run.meta.get("dataset") or {}).get("spec")
        try:
            prompts = load(spec, **(cfg.get("options") or {})).prompts if spec else {}
        except Exception:  # noqa: BLE001 - data that moved: the scale is inferred from the scores below
            prompts = {}
        for pid, p in prompts.items():
            if p.score_min is not None and p.score_max is not None:
                out.setdefault(str(pid), (math.ceil(p.score_min), math.floor(p.score_max)))
    for df in originals.values():
        for pid, g in df.groupby("prompt_id"):
            if str(pid) not in out:
                vals = [float(x) for x in list(g["gold"]) + list(g["score"]) if x is not None and x == x]
                if vals:
                    out[str(pid)] = (math.floor(min(vals) + 0.5), math.floor(max(vals) + 0.5))
    return out


def fast_qwk(gold: Any, pred: Any, lo: int, hi: int) -> float:
    """Quadratic weighted kappa of integer-rounded scores on the scale ``lo..hi`` (:func:`callbluff.metrics.qwk`
    with the prompt's scale and clipping: round half up, clip, 1.0 when both sides agree on one constant score),
    from a confusion matrix: fast enough to bootstrap."""
    import numpy as np

    k = hi - lo + 1
    if k < 2 or len(gold) == 0:
        return float("nan")
    t = np.clip(np.floor(np.asarray(gold, dtype=float) + 0.5), lo, hi).astype(int) - lo
    p = np.clip(np.floor(np.asarray(pred, dtype=float) + 0.5), lo, hi).astype(int) - lo
    observed = np.bincount(t * k + p, minlength=k * k).reshape(k, k).astype(float)
    idx = np.arange(k)
    weights = (idx[:, None] - idx[None, :]) ** 2 / (k - 1) ** 2
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    denom = float((weights * expected).sum())
    if denom == 0.0:
        return 1.0 if float((weights * observed).sum()) == 0.0 else 0.0
    return 1.0 - float((weights * observed).sum()) / denom


def _clean_table(run: RunData, target: str) -> Any:
    import pandas as pd

    path = run.path / "originals.parquet"
    if not path.exists():
        return pd.DataFrame(columns=["source_id", "prompt_id", "gold", "score"])
    df = pd.read_parquet(path, columns=["source_id", "prompt_id", "gold", "score", "error", "target"],
                         filters=[("target", "==", target)])
    df = df[df["error"].isna() & df["score"].notna() & df["gold"].notna()]
    return df[["source_id", "prompt_id", "gold", "score"]].assign(source_id=df["source_id"].astype(str),
                                                                prompt_id=df["prompt_id"].astype(str))


def _clean_figures(groups: Sequence[tuple[Any, Any, Any, tuple[int, int]]]) -> tuple[float | None, float | None]:
    """(QWK averaged over prompts, MAE as % of each prompt's range over all records) of (gold, prediction) groups."""
    import numpy as np

    qwks = [fast_qwk(g, p, lo, hi) for g, p, _, (lo, hi) in groups if len(g) >= 2]
    qwks = [q for q in qwks if q == q]
    errs = [np.abs(np.asarray(p, float) - np.asarray(g, float)) / max(hi - lo, 1) * 100 for g, p, _, (lo, hi) in groups]
    n = sum(len(e) for e in errs)
    return (float(np.mean(qwks)) if qwks else None, float(sum(e.sum() for e in errs) / n) if n else None)


def clean_verdicts(cols: Sequence[tuple[RunData, str, str]], baselines: Sequence[int],
                   draws: int = CLEAN_BOOTSTRAP, level: float = CLEAN_LEVEL, seed: int = 0) -> list[CleanVerdict]:
    """Clean QWK and MAE of every non-baseline column against its baseline, with a bootstrap interval of the
    difference (module docstring). Paired on the records both predicted when there are any (the same source ids:
    the same data), else each column resampled on its own records."""
    import numpy as np

    tables = {k: _clean_table(cols[k][0], cols[k][1]) for k in set(range(len(cols)))}
    scales = _scales(list({id(c[0]): c[0] for c in cols}.values()), tables)
    rng = np.random.default_rng(seed)
    out: list[CleanVerdict] = []
    tail = (1 - level) / 2 * 100
    for k, b in enumerate(baselines):
        if k == b:
            continue
        base, col = tables[b], tables[k]
        common = set(base["source_id"]) & set(col["source_id"])
        paired = bool(common)
        groups_b, groups_c = [], []
        for pid in sorted(set(base["prompt_id"]) | set(col["prompt_id"])):
            if pid not in scales:
                continue
            xb, xc = base[base["prompt_id"] == pid], col[col["prompt_id"] == pid]
            if paired:
                xb = xb[xb["source_id"].isin(common)].sort_values("source_id")
                xc = xc[xc["source_id"].isin(common)].sort_values("source_id")
            groups_b.append((xb["gold"].to_numpy(float), xb["score"].to_numpy(float), len(xb), scales[pid]))
            groups_c.append((xc["gold"].to_numpy(float), xc["score"].to_numpy(float), len(xc), scales[pid]))
        point_b, point_c = _clean_figures(groups_b), _clean_figures(groups_c)
        diffs: list[tuple[float, float]] = []
        for _ in range(draws):
            rb, rc = [], []
            for gb, gc in zip(groups_b, groups_c):
                ib = rng.integers(0, gb[2], gb[2]) if gb[2] else np.zeros(0, int)
                ic = ib if paired else (rng.integers(0, gc[2], gc[2]) if gc[2] else np.zeros(0, int))
                rb.append((gb[0][ib], gb[1][ib], gb[2], gb[3]))
                rc.append((gc[0][ic], gc[1][ic], gc[2], gc[3]))
            fb, fc = _clean_figures(rb), _clean_figures(rc)
            diffs.append(tuple(np.nan if x is None or y is None else y - x for x, y in zip(fb, fc)))  # type: ignore[arg-type]
        n = sum(g[2] for g in groups_c)
        for m, (metric, higher_better) in enumerate((("qwk", True), ("mae_pct", False))):
            vb, vc = point_b[m], point_c[m]
            ds = np.array([d[m] for d in diffs], dtype=float)
            ds = ds[~np.isnan(ds)]
            if vb is None or vc is None or len(ds) < draws // 2:
                out.append(CleanVerdict(cols[k][2], cols[b][2], metric, vb, vc, None, None, n, paired, "n/a"))
                continue
            low, high = float(np.percentile(ds, tail)), float(np.percentile(ds, 100 - tail))
            if high < 0:
                outcome: Outcome = "worse" if higher_better else "better"
            elif low > 0:
                outcome = "better" if higher_better else "worse"
            else:
                outcome = "unchanged"
            out.append(CleanVerdict(cols[k][2], cols[b][2], metric, vb, vc, low, high, n, paired, outcome))
    return out


def clean_line(v: CleanVerdict) -> str:
    """One clean-quality verdict as a sentence: "v2 vs v1: clean QWK 0.981 -> 0.612 (-0.369, 95 % interval -0.41
    to -0.33, 120 records paired): worse"."""
    unit = "" if v.metric == "qwk" else " points"
    interval = (f", {CLEAN_LEVEL:.0%} interval {signed(v.low, v.metric)} to {signed(v.high, v.metric)}"
                if v.low is not None and v.high is not None else "")
    return (f"{v.column} vs {v.baseline}: {CLEAN_METRICS[v.metric]} {value(v.baseline_value, v.metric)} -> "
            f"{value(v.value, v.metric)} ({signed(v.difference, v.metric)}{unit}{interval}, {v.n} records "
            f"{'paired' if v.paired else 'unpaired'}): {v.verdict}")


def _drop_restated(table: dict[tuple[str, str, str, str, str], dict[int, float | None]],
                   expects: Mapping[tuple[str, str, str, str], set[str]]) -> None:
    """Leave out robust fields that restate ``failure_pct`` in every column (the expectation's ``restates``:
    the field is ``|offset - failure_pct|`` under it, :mod:`callbluff.metrics.expectations`)."""
    for row, exp in expects.items():
        e = find_expectation(next(iter(exp))) if len(exp) == 1 else None
        if e is None or e.restates is None:
            continue
        metric, offset = e.restates
        failure, other = table.get((*row, "failure_pct"), {}), table.get((*row, metric))
        if other is None:
            continue
        if all(failure.get(k) is not None and v is not None and abs(abs(offset - failure[k]) - v) < 1e-6
               for k, v in other.items()):
            del table[(*row, metric)]


# -- verdicts -------------------------------------------------------------------------------------------------

_CASE_COLUMNS = ["example_id", "source_id", "attack", "params", "target", "verdict", "adversarial_text"]


def _text_key(text: Any) -> str:
    return hashlib.blake2b(str(text).encode("utf-8"), digest_size=8).hexdigest()


def _cases(run: RunData, target: str) -> dict[tuple[str, str], dict[str, bool]]:
    """(attack, params) -> case key -> fooled, for one target's judged cases in examples.parquet. A case is an
    example, or a source when the run counted its attack per source (:func:`~callbluff.metrics.expectations.
    failure_unit`, the expectation recorded in the metric rows). The key holds a hash of the adversarial
    text(s) as well as the id, so two runs pair a case only when it is the same input (another seed keeps an
    example's id but changes its text)."""
    import pandas as pd

    path = run.path / "examples.parquet"
    if _cases_missing(run) is not None:
        return {}
    df = pd.read_parquet(path, columns=_CASE_COLUMNS, filters=[("target", "==", target)])
    df = df[df["verdict"].notna()]
    worst = get_task(run.task).worst_case
    unit = {(str(r["attack"]), str(r["params"])): failure_unit(r.get("expect"), worst)
            for r in run.metrics if r.get("attack") != "clean"}
    out: dict[tuple[str, str], dict[str, bool]] = {}
    for (attack, params), g in df.groupby(["attack", "params"], sort=False):
        key = (str(attack), str(params))
        texts = [_text_key(t) for t in g["adversarial_text"]]
        fooled = [not bool(v) for v in g["verdict"]]
        if unit.get(key, "example") == "source":
            by_source: dict[str, list[tuple[str, bool]]] = {}
            for sid, t, f in zip(g["source_id"].astype(str), texts, fooled):
                by_source.setdefault(sid, []).append((t, f))
            out[key] = {f"{sid}/{_text_key(sorted(t for t, _ in xs))}": any(f for _, f in xs)
                        for sid, xs in by_source.items()}
        else:
            out[key] = {f"{e}/{t}": f for e, t, f in zip(g["example_id"].astype(str), texts, fooled)}
    return out


def _cases_missing(run: RunData) -> str | None:
    """Why ``run`` has no per-example verdicts to pair (its examples.parquet is missing, or lacks the columns),
    or None."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = run.path / "examples.parquet"
    if not path.exists():
        return f"{path} is missing"
    try:
        lacking = sorted(set(_CASE_COLUMNS) - set(pq.read_schema(path).names))
    except (OSError, pa.ArrowException) as e:
        raise ReportError(f"{path}: not a readable Parquet file ({e}); copy the run directory's examples.parquet "
                          "again, or re-run the suite into it (`callbluff run SUITE.toml --out DIR`)") from None
    return f"{path} lacks the column(s) {', '.join(lacking)}" if lacking else None


def _pooled_counts(run: RunData, target: str) -> dict[tuple[str, str], tuple[int, int] | None]:
    """(attack, params) -> (fooled, judged) of the configuration's pooled metric row, from its ``n_judged`` and
    ``failure_pct`` (None when the row lacks them: written before rows carried ``n_judged``)."""
    rows = [r for r in run.metrics if str(r.get("target")) == target]
    out: dict[tuple[str, str], tuple[int, int] | None] = {}
    for r in pooled_rows(rows):
        key = (str(r["attack"]), str(r["params"]))
        judged, failure = num(r.get("n_judged")), num(r.get("failure_pct"))
        counts = None if judged is None or (failure is None and judged) else \
            (round((failure or 0.0) * judged / 100.0), int(judged))
        out[key] = counts if key not in out else None
    return out


def _pooled_failure(run: RunData, target: str) -> dict[tuple[str, str], float | None]:
    """(attack, params) -> the configuration's pooled ``failure_pct`` (the ``all`` row, or the only prompt's)."""
    rows = [r for r in run.metrics if str(r.get("target")) == target]
    out: dict[tuple[str, str], float | None] = {}
    for r in pooled_rows(rows):
        key = (str(r["attack"]), str(r["params"]))
        out[key] = num(r.get("failure_pct")) if key not in out else None  # unpooled prompts: no single figure
    return out


def verdicts(cols: Sequence[tuple[RunData, str, str]], baselines: Sequence[int],
             alpha: float = ALPHA) -> list[Verdict]:
    """Every non-baseline column against its baseline, per attack configuration (see the module docstring)."""
    cache: dict[int, dict[tuple[str, str], dict[str, bool]]] = {}

    def cases(k: int) -> dict[tuple[str, str], dict[str, bool]]:
        if k not in cache:
            cache[k] = _cases(cols[k][0], cols[k][1])
        return cache[k]

    missing = [_cases_missing(run) for run, _, _ in cols]

    raw: list[dict[str, Any]] = []
    for k, b in enumerate(baselines):
        if k == b:
            continue
        base_fail, col_fail = _pooled_failure(cols[b][0], cols[b][1]), _pooled_failure(cols[k][0], cols[k][1])
        for key in sorted(set(base_fail) & set(col_fail)):
            a, c = cases(b).get(key, {}), cases(k).get(key, {})
            common = a.keys() & c.keys()
            row: dict[str, Any] = {"column": cols[k][2], "baseline": cols[b][2], "attack": key[0], "params": key[1],
                                   "baseline_failure_pct": base_fail[key], "failure_pct": col_fail[key]}
            if common:
                improved = sum(a[i] and not c[i] for i in common)
                regressed = sum(c[i] and not a[i] for i in common)
                row.update(n_pairs=len(common), fooled_only_baseline=improved, fooled_only_column=regressed,
                           test=PAIRED_TEST, p_value=mcnemar_exact(improved, regressed),
                           _sign=regressed - improved)
            elif a and c:
                fa, fc = sum(a.values()), sum(c.values())
                row.update(n_pairs=len(a) + len(c), fooled_only_baseline=fa, fooled_only_column=fc,
                           test=UNPAIRED_TEST, p_value=fisher_exact(fa, len(a), fc, len(c)),
                           _sign=fc / len(c) - fa / len(a))
            elif missing[b] or missing[k]:  # no per-example file: the metric rows' counts, or no test at all
                row.update(_counts_test(cols, b, k, key, "; ".join(m for m in (missing[b], missing[k]) if m)))
            else:
                row.update(n_pairs=0, fooled_only_baseline=0, fooled_only_column=0,
                           test="no judged cases in one of the columns", p_value=None, _sign=0)
                if bool(a) != bool(c):
                    row["untestable"] = (f"judged cases in {cols[b][2] if a else cols[k][2]} only (every "
                                         f"prediction of the other failed, or it made no examples)")
            raw.append(row)
    tested = [i for i, r in enumerate(raw) if r["p_value"] is not None]
    adjusted = dict(zip(tested, holm([raw[i]["p_value"] for i in tested])))
    out = []
    for i, r in enumerate(raw):
        sign = r.pop("_sign")
        p_adj = adjusted.get(i)
        if p_adj is None:
            outcome: Outcome = "n/a"
        elif p_adj < alpha and sign > 0:
            outcome = "worse"
        elif p_adj < alpha and sign < 0:
            outcome = "better"
        else:
            outcome = "unchanged"
        out.append(Verdict(**r, p_adjusted=p_adj, verdict=outcome))
    order = {"worse": 0, "better": 1, "unchanged": 2, "n/a": 3}
    out.sort(key=lambda v: (order[v.verdict], v.p_adjusted if v.p_adjusted is not None else 2.0,
                            -abs(v.difference or 0.0), v.column, v.attack, v.params))
    return out


def _counts_test(cols: Sequence[tuple[RunData, str, str]], b: int, k: int, key: tuple[str, str],
                 why: str) -> dict[str, Any]:
    """Fisher's exact test on the two pooled metric rows' (fooled, judged) counts, for a column without
    per-example verdicts (``why``: its examples.parquet is missing); untestable when a row lacks the counts."""
    counts_b = _pooled_counts(cols[b][0], cols[b][1]).get(key)
    counts_k = _pooled_counts(cols[k][0], cols[k][1]).get(key)
    if counts_b is None or counts_k is None:
        return {"n_pairs": 0, "fooled_only_baseline": 0, "fooled_only_column": 0, "p_value": None, "_sign": 0,
                "test": f"not testable: {why}", "untestable": f"{why}, and the metric rows carry no n_judged "
                f"count to test instead (restore the file, or re-run the suite with this callbluff)"}
    (fa, na), (fc, nc) = counts_b, counts_k
    if not na or not nc:
        return {"n_pairs": na + nc, "fooled_only_baseline": fa, "fooled_only_column": fc, "p_value": None,
                "_sign": 0, "test": f"no judged cases in one of the columns ({why})",
                **({"untestable": f"{why}; judged cases in one column only"} if na or nc else {})}
    return {"n_pairs": na + nc, "fooled_only_baseline": fa, "fooled_only_column": fc,
            "test": f"Fisher exact on the metric rows' counts ({why}), Holm-adjusted",
            "p_value": fisher_exact(fa, na, fc, nc), "_sign": fc / nc - fa / na}


def _nothing_comparable(cols: Sequence[tuple[RunData, str, str]],
                        table: Mapping[tuple[str, str, str, str, str], Mapping[int, float | None]]) -> str:
    """The refusal when no row is in two columns: what each column has, so the user sees why."""
    parts = []
    for k, (_, _, label) in enumerate(cols):
        keys = [key for key, vals in table.items() if k in vals]
        if not keys:
            parts.append(f"{label}: no metric rows")
            continue
        attacks = sorted({key[1] for key in keys})
        prompts = sorted({key[3] for key in keys})
        parts.append(f"{label}: {', '.join(attacks)} on prompt(s) {', '.join(prompts)}")
    return ("nothing comparable: no metric row of one column lines up with another column's (rows align on "
            "task, attack, params and prompt). " + "; ".join(parts)
            + ". Fix: compare runs of the same suite (attacks and data) against different targets")


# -- output ---------------------------------------------------------------------------------------------------

def value(v: float | None, metric: str = "failure_pct") -> str:
    """A figure as compare prints it: percentages to 1 decimal, 0-1 metrics (QWK, MRR, ...) to 3 places."""
    return metric_value(metric, v)


def signed(v: float | None, metric: str = "failure_pct") -> str:
    """A signed difference ("+3.5", "-0.02", "0"); "–" when undefined."""
    if v is None:
        return "–"
    if abs(v) < 1e-12 or value(abs(v), metric) == "0":
        return "0"
    return ("+" if v > 0 else "-") + value(abs(float(v)), metric)


def direction(metric: str, diff: float | None) -> Literal["better", "worse", ""]:
    """Whether a signed difference of ``metric`` is an improvement (colour only; the verdicts are the test)."""
    if diff is None or abs(diff) < 1e-12:
        return ""
    field = metric_field(metric)
    if field is None or field.better is None:
        return ""
    return "better" if (diff > 0) == (field.better == "higher") else "worse"


def unit_scale(metric: str) -> bool:
    """A 0-1 metric (QWK, MRR, MAP, Recall@k; its declared unit), printed to 3 decimals and x100 in the sort."""
    field = metric_field(metric)
    return field is not None and field.unit_scale


def difference_columns(c: Comparison) -> list[str]:
    """Header of the signed-difference columns: one per compared (non-baseline) column."""
    return [f"Δ {c.columns[k]}" if len(c.columns) > 2 else "difference"
            for k, b in enumerate(c.baselines) if k != b]


def row_differences(c: Comparison, d: Difference) -> list[tuple[float | None, str]]:
    """(signed difference to its baseline, direction) per compared column of one row."""
    out = []
    for k, b in enumerate(c.baselines):
        if k == b:
            continue
        x, y = d.values[k], d.values[b]
        diff = None if x is None or y is None else x - y
        out.append((diff, direction(d.metric, diff)))
    return out


def rows_for_display(c: Comparison, limit: int | None = None) -> list[list[str]]:
    """Strings per difference: attack, params, prompt, metric, one value per column, then the signed
    difference of each compared column to its baseline."""
    out = []
    for d in c.differences[:limit]:
        out.append([d.attack, c.label(d.attack, d.params), d.prompt, d.metric,
                    *[value(v, d.metric) for v in d.values], *[signed(diff, d.metric) for diff, _ in row_differences(c, d)]])
    return out


def verdict_counts(c: Comparison) -> dict[str, int]:
    counts = {"worse": 0, "better": 0, "unchanged": 0, "n/a": 0}
    for v in c.verdicts:
        counts[v.verdict] += 1
    return counts


def test_sentence(c: Comparison) -> str:
    """Which test(s) the verdicts used, in one sentence."""
    tests = sorted({v.test for v in c.verdicts if v.p_value is not None})
    if not tests:
        return "no attack configuration had judged cases in both columns: no test was run"
    return (f"failure share per attack configuration (prompts pooled), {'; '.join(tests)} over "
            f"{sum(v.p_value is not None for v in c.verdicts)} tests, alpha = {c.alpha:g}")


def as_dict(c: Comparison) -> dict[str, Any]:
    """The comparison as plain JSON data (``--json``)."""
    return {
        "columns": c.columns,
        "baselines": {c.columns[k]: c.columns[b] for k, b in enumerate(c.baselines) if k != b},
        "alpha": c.alpha, "test": test_sentence(c), "counts": verdict_counts(c),
        "regressions": [f"{v.column}: {v.attack} {c.label(v.attack, v.params)}" for v in c.regressions],
        "clean_regressions": [f"{v.column}: {CLEAN_METRICS[v.metric]}" for v in c.clean_regressions],
        "clean": [{**asdict(v), "difference": v.difference, "line": clean_line(v)} for v in c.clean],
        "verdicts": [{**asdict(v), "difference": v.difference, "label": c.label(v.attack, v.params)}
                     for v in c.verdicts],
        "differences": [
            {"task": d.task, "attack": d.attack, "params": d.params, "prompt": d.prompt, "metric": d.metric,
             "values": dict(zip(c.columns, d.values)), "spread": d.spread,
             "differences": {c.columns[k]: diff for (diff, _), k in
                             zip(row_differences(c, d), [k for k, b in enumerate(c.baselines) if k != b])}}
            for d in c.differences],
        "notes": c.notes,
    }


CSV_COLUMNS = ("kind", "baseline", "column", "attack", "params", "prompt", "metric", "baseline_value", "value",
               "difference", "n_pairs", "fooled_only_baseline", "fooled_only_column", "p_value", "p_adjusted",
               "test", "verdict")


def as_csv(c: Comparison) -> str:
    """The comparison as one CSV table (``--csv``): ``kind = verdict`` rows (one per compared column and attack
    configuration, the test's figures filled in), then ``kind = difference`` rows (one per compared column and
    aligned figure, the test columns empty)."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for v in c.verdicts:
        w.writerow({"kind": "verdict", "baseline": v.baseline, "column": v.column, "attack": v.attack,
                    "params": v.params, "prompt": "all", "metric": "failure_pct",
                    "baseline_value": v.baseline_failure_pct, "value": v.failure_pct, "difference": v.difference,
                    "n_pairs": v.n_pairs, "fooled_only_baseline": v.fooled_only_baseline,
                    "fooled_only_column": v.fooled_only_column, "p_value": v.p_value, "p_adjusted": v.p_adjusted,
                    "test": v.test, "verdict": v.verdict})
    for d in c.differences:
        for k, b in enumerate(c.baselines):
            if k == b:
                continue
            x, y = d.values[k], d.values[b]
            w.writerow({"kind": "difference", "baseline": c.columns[b], "column": c.columns[k], "attack": d.attack,
                        "params": d.params, "prompt": d.prompt, "metric": d.metric, "baseline_value": y, "value": x,
                        "difference": None if x is None or y is None else x - y})
    return buf.getvalue()


def write_text(text: str, out: str | Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return out


def write_compare_html(c: Comparison, out: str | Path) -> Path:
    """The comparison as a self-contained HTML page (escaped like the report)."""
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("callbluff.report", "templates"), autoescape=True)
    diff_rows = []
    for d in c.differences:
        diffs = row_differences(c, d)
        diff_rows.append({"cells": [d.attack, c.label(d.attack, d.params), d.prompt, d.metric],
                          "values": [value(v, d.metric) for v in d.values],
                          "diffs": [(signed(x, d.metric), cls) for x, cls in diffs],
                          "same": all(x is None or abs(x) < 1e-12 for x, _ in diffs)})
    verdict_rows = [{"column": v.column, "baseline": v.baseline, "attack": v.attack,
                     "params": c.label(v.attack, v.params), "base": value(v.baseline_failure_pct),
                     "value": value(v.failure_pct), "diff": signed(v.difference),
                     "diff_class": direction("failure_pct", v.difference), "pairs": v.n_pairs,
                     "b": v.fooled_only_baseline, "c": v.fooled_only_column, "test": v.test.split(" (")[0],
                     "p": _p(v.p_value), "p_adj": _p(v.p_adjusted), "verdict": v.verdict} for v in c.verdicts]
    pairs = sorted({(v.column, v.baseline) for v in c.verdicts})
    html = env.get_template("compare.html.j2").render(
        columns=c.columns, diff_header=difference_columns(c), rows=diff_rows, runs=c.runs,
        changed=[v for v in verdict_rows if v["verdict"] != "unchanged"],
        unchanged=[v for v in verdict_rows if v["verdict"] == "unchanged"], pairs=pairs,
        one_pair=len(pairs) == 1, one_test=len({v.test for v in c.verdicts}) <= 1,
        clean=[{"line": clean_line(v), "verdict": v.verdict, "metric": CLEAN_METRICS[v.metric]} for v in c.clean],
        counts=verdict_counts(c), test=test_sentence(c), notes=c.notes,
        n_changed=sum(1 for d in c.differences if d.spread), n=len(c.differences))
    return write_text(html, out)


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return "<0.0001" if p < 1e-4 else f"{p:.4f}".rstrip("0").rstrip(".") if p < 1 else "1"


def summary_lines(c: Comparison, top: int = 5) -> list[str]:
    """Plain sentences for the largest differences (the terminal's headline)."""
    lines: list[str] = []
    for d in c.differences[:top]:
        if not d.spread:
            break
        vals = ", ".join(f"{col}: {value(v, d.metric)}" for col, v in zip(c.columns, d.values))
        where = "clean data" if d.attack == "clean" else f"{d.attack} ({c.label(d.attack, d.params)})"
        lines.append(f"{where}, prompt {d.prompt}: {d.metric} {vals}")
    return lines


def verdict_line(c: Comparison, v: Verdict) -> str:
    """One verdict as a sentence (the terminal's regression list and ``--fail-on-regression``'s message)."""
    return (f"{v.column} vs {v.baseline}: {v.attack} ({c.label(v.attack, v.params)}) failure "
            f"{value(v.baseline_failure_pct)}% -> {value(v.failure_pct)}% ({signed(v.difference)} points; "
            f"{v.fooled_only_column} cases newly fooled, {v.fooled_only_baseline} no longer fooled of "
            f"{v.n_pairs}; {v.test} p = {_p(v.p_adjusted)})")


def as_json(c: Comparison) -> str:
    return json.dumps(as_dict(c), indent=2, allow_nan=False, default=_nan_free)


def _nan_free(o: Any) -> Any:
    raise TypeError(f"not JSON: {type(o).__name__}")
