"""``callbluff compare RUN_A RUN_B [...]``: runs side by side, the differences that matter first.

Typical use: the same suite against two model versions (two runs), or two targets of one run. Each (run,
target) is a column; rows are aligned on (task, attack, params, prompt), so the same suite run against
differently named targets still lines up. Compared per row: the task's clean quality metrics (QWK, EM/F1, top-1
and MRR: its descriptor's ``clean_fields``) for clean rows and, for attack rows, ``failure_pct`` (the share of
adversarial inputs handled wrongly, engine/metrics_rows.py) and the task's ``robust_fields`` (:mod:`callbluff.tasks`).
"Differences that matter first" (a choice): rows are sorted by their spread (max - min over the columns) on a
common scale; QWK, MRR and MAP (0-1) are multiplied by 100 for the sort so that 0.1 QWK weighs like 10 points
of a percentage. Rows a column lacks are shown as missing and sorted after the rest.

Unrelated runs are not compared (a choice): runs of different tasks are refused, and so are runs of which no
row lines up with another column's ("nothing comparable", naming what each column has), since "0 differ"
would read as agreement. Runs on different data are compared with a note saying so (a held-out split is a
fair comparison; the user judges).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbluff.report.load import RunData, load_run
from callbluff.tasks import get_task
from callbluff.render.text import fmt, num, short_params

UNIT_SCALE = {"qwk", "mrr", "map", "mrr_adv", "map_adv", "recall_at_1", "recall_at_5", "recall_at_20",
              "recall_at_1_adv", "recall_at_5_adv", "recall_at_20_adv"}
"""Metrics on a 0-1 scale (x100 when ranking differences)."""


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
        return s * 100.0 if self.metric in UNIT_SCALE else s

    @property
    def complete(self) -> bool:
        return all(v is not None for v in self.values)


@dataclass(frozen=True)
class Comparison:
    columns: list[str]
    runs: list[RunData]
    differences: list[Difference]
    notes: list[str] = field(default_factory=list)
    """What the user should know to read the figures (e.g. the runs used different data)."""


def _columns(runs: Sequence[RunData]) -> list[tuple[RunData, str, str]]:
    names = [r.name for r in runs]
    out = []
    for r in runs:
        label = r.name if names.count(r.name) == 1 else str(r.path)
        for t in r.targets:
            out.append((r, t, f"{label} / {t}" if len(runs) > 1 else t))
    return out


def compare_runs(run_dirs: Sequence[str | Path]) -> Comparison:
    """Load the runs and build every aligned difference, largest spread first."""
    runs = [load_run(d) for d in run_dirs]
    cols = _columns(runs)
    if len(cols) < 2:
        raise ValueError("nothing to compare: give two run directories, or one run with two targets")
    if len({r.task for r in runs}) > 1:
        raise ValueError("runs of different tasks cannot be compared (their rows and metrics differ): "
                         + "; ".join(f"{r.path} is task {r.task}" for r in runs)
                         + ". Fix: compare runs of one task, e.g. the same suite against two versions of a model")
    table: dict[tuple[str, str, str, str, str], dict[int, float | None]] = {}
    for k, (run, target, _) in enumerate(cols):
        for r in run.metrics:
            if str(r.get("target")) != target:
                continue
            task = str(r.get("task", run.task))
            if r.get("attack") == "clean":
                fields = get_task(task).clean_fields
            else:
                fields = ("failure_pct", *(f for f, _ in get_task(task).robust_fields))
            for f in fields:
                if f in r:
                    key = (task, str(r["attack"]), str(r["params"]), str(r["prompt"]), f)
                    table.setdefault(key, {})[k] = num(r.get(f))
    diffs = [Difference(*key, tuple(vals.get(k) for k in range(len(cols)))) for key, vals in table.items()]
    if not any(sum(v is not None for v in d.values) >= 2 for d in diffs):
        raise ValueError(_nothing_comparable(cols, table))
    diffs.sort(key=lambda d: (d.spread is None, -(d.spread or 0.0), d.attack != "clean", d.attack, d.params,
                              d.prompt, d.metric))
    specs = {str((r.meta.get("dataset") or {}).get("spec")) for r in runs}
    notes = [f"the runs used different data ({', '.join(sorted(specs))}): their figures measure different "
             "inputs"] if len(specs) > 1 else []
    return Comparison([c[2] for c in cols], runs, diffs, notes)


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


def rows_for_display(c: Comparison, limit: int | None = None) -> list[list[str]]:
    """Strings per difference: attack, params, prompt, metric, one value per column, and the spread."""
    out = []
    for d in c.differences[:limit]:
        spread = d.spread
        if spread is not None and d.metric in UNIT_SCALE:
            spread /= 100.0
        out.append([d.attack, short_params(d.params), d.prompt, d.metric, *[fmt(v) for v in d.values],
                    fmt(spread)])
    return out


def write_compare_html(c: Comparison, out: str | Path) -> Path:
    """The comparison as a self-contained HTML page (escaped like the report)."""
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("callbluff.report", "templates"), autoescape=True)
    html = env.get_template("compare.html.j2").render(
        columns=c.columns, rows=rows_for_display(c), runs=c.runs,
        n_changed=sum(1 for d in c.differences if d.spread), n=len(c.differences))
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out


def summary_lines(c: Comparison, top: int = 5) -> list[str]:
    """Plain sentences for the largest differences (the terminal's headline)."""
    lines: list[str] = []
    for d in c.differences[:top]:
        if not d.spread:
            break
        vals = ", ".join(f"{col}: {fmt(v)}" for col, v in zip(c.columns, d.values))
        where = "clean data" if d.attack == "clean" else f"{d.attack} ({short_params(d.params)})"
        lines.append(f"{where}, prompt {d.prompt}: {d.metric} {vals}")
    return lines


def as_dict(c: Comparison) -> dict[str, Any]:
    return {"columns": c.columns, "differences": [
        {"task": d.task, "attack": d.attack, "params": d.params, "prompt": d.prompt, "metric": d.metric,
         "values": list(d.values), "spread": d.spread} for d in c.differences]}
