"""``report.html``: one self-contained page per run directory (or one for several runs).

Inline CSS, inline SVG charts (matplotlib), one small inline script for the example browser that reads only
embedded JSON; no network, no CDN; printable (print CSS shows the examples already rendered). Every piece of
user or adversarial text is escaped: Jinja's autoescape for HTML, :func:`~callbluff.report.browser.script_json`
for the embedded data, and the script inserts text with ``textContent`` only.

Sections: findings (gates, scorecard per target: clean quality next to robustness, worst attack first), the
paper-shaped views (:mod:`callbluff.render.views`), human evaluation results when imported
(:mod:`callbluff.annotate`), the example browser (:mod:`callbluff.report.browser`), configuration, versions,
counts, target statistics and errors.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader

from callbluff.report.browser import sample_examples, script_json
from callbluff.report.load import ReportError, RunData, load_run
from callbluff.metrics.expectations import expectation_text
from callbluff.report.scorecard import MIN_N, headlines, llm_graders, scorecards, too_few
from callbluff.render.catalogue import reading_runs
from callbluff.render.text import fmt, num, pct, pooled_rows, short_params
from callbluff.render.views import View, failure_chart
from callbluff.tasks import get_task

__all__ = ["ReportError", "headlines", "short_params", "write_report", "render_report", "fmt", "_fmt"]

_fmt = fmt  # the CLI's metrics table imports this name
PER_ATTACK = 200
"""Examples embedded per attack configuration when the run's suite does not say (a deterministic sample; all
are in examples.parquet)."""
EXAMPLES_KEY = "output.examples_in_report"


def examples_per_attack(run: RunData) -> int:
    """The suite's ``output.examples_in_report`` recorded in the run's run.json (the number of examples per
    attack configuration the example browser embeds; 0 leaves the browser out), or :data:`PER_ATTACK` for a
    run.json without it. The browser still caps the total per run (:data:`~callbluff.report.browser.MAX_EMBEDDED`).
    Raises :class:`ReportError` naming the key and the file when the recorded value is not an integer >= 0."""
    output = (run.meta.get("suite") or {}).get("output") or {}
    if not isinstance(output, dict) or "examples_in_report" not in output:
        return PER_ATTACK
    value = output["examples_in_report"]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReportError(f"{run.path / 'run.json'}: key `{EXAMPLES_KEY}` must be an integer >= 0 (examples per "
                          f"attack in the report), got {value!r}; fix it in the suite (and run.json) and re-render")
    return value


def _fields_for(task: str, rows: Sequence[dict[str, Any]]) -> list[str]:
    base = get_task(task).fields
    present = {k for r in rows for k, v in r.items() if v is not None}
    return [f for f in base if f in present]


def _environment() -> Environment:
    env = Environment(loader=PackageLoader("callbluff.report", "templates"),
                      autoescape=True)  # user text (essays, answers, names, errors) is always escaped
    env.filters["fmt"] = fmt
    env.filters["short_params"] = short_params
    env.filters["script_json"] = script_json
    return env


def failed_to_score(run: RunData) -> list[tuple[str, int]]:
    """(attack, configurations) of run.json's attacks that made adversarial examples none of which was scored:
    every prediction failed (``n_errors_adversarial`` on its rows, ``n`` 0). The report names them apart from the
    attacks that made no example, since the cause is the target, not the attack."""
    scored: set[tuple[str, str]] = set()
    failed: dict[str, set[str]] = {}
    for r in run.metrics:
        if r.get("attack") == "clean":
            continue
        key = (str(r["attack"]), str(r["params"]))
        if (num(r.get("n")) or 0) > 0:
            scored.add(key)
        elif (num(r.get("n_errors_adversarial")) or 0) > 0:
            failed.setdefault(key[0], set()).add(key[1])
    out = [(a, len({p for p in ps if (a, p) not in scored})) for a, ps in failed.items()]
    return [(a, n) for a, n in out if n]


def without_examples(run: RunData) -> list[tuple[str, int, int]]:
    """(attack, configurations with a metric row, configurations in the suite) for every attack of run.json's
    ``attacks`` of which some configuration produced no adversarial example (no metric row), e.g. Kumar et al.'s
    AddRC on prompts without a reading passage: the report says so instead of leaving them out silently."""
    suite: dict[str, int] = {}
    for a in run.meta.get("attacks") or []:
        if isinstance(a, dict) and a.get("name"):
            suite[str(a["name"])] = suite.get(str(a["name"]), 0) + 1
    seen: dict[str, set[str]] = {}
    for r in run.metrics:
        if r.get("attack") != "clean" and ((num(r.get("n")) or 0) > 0 or (num(r.get("n_errors_adversarial")) or 0) > 0):
            seen.setdefault(str(r["attack"]), set()).add(str(r["params"]))  # made examples (scored or not)
    return [(name, len(seen.get(name, ())), n) for name, n in suite.items() if len(seen.get(name, ())) < n]


ARR_VIEW = "ARR per generator"
"""Ding et al.'s ARR view, left out of a run whose targets are all LLM graders (the grader table's "at minimum %"
and its sentences say the same in the grader's words)."""
GRADER_CLEAN_VS_ROBUST = ("QWK on the clean answers next to what each bluff did to the grader's score: the share of "
                         "answers it raised, weak answers lifted to full marks, and replies it gave that could not be "
                         "read")
"""The Findings' lead for a run whose targets are all LLM graders."""
FAILED_SHARE_WARN = 0.1
"""A target that failed at least this share of its predictions gets a banner at the top of its run."""
FAILED_SHARE_RED = 0.5
"""... and above this share (the default ``--max-error-rate``, at which ``callbluff run`` exits non-zero) a red
one: its rates are computed on the few answers left."""
TOP_CAUSES = 3


@dataclass
class FailedTarget:
    """One target's share of failed predictions, for the banner (:func:`failed_targets`)."""

    target: str
    failed: int
    total: int
    causes: list[tuple[str, int]]
    more_causes: int
    stopped: str | None = None

    @property
    def share(self) -> float:
        return self.failed / self.total if self.total else 0.0

    @property
    def severe(self) -> bool:
        return self.share > FAILED_SHARE_RED


def failed_targets(run: RunData) -> list[FailedTarget]:
    """Targets that failed at least :data:`FAILED_SHARE_WARN` of their predictions (originals and adversarial
    inputs, run.json ``counts.per_target``), worst first, each with its :data:`TOP_CAUSES` most frequent causes
    (errors.jsonl) and how many other causes there are."""
    per_target = ((run.meta.get("counts") or {}).get("per_target") or {})
    out = []
    for name, c in per_target.items() if isinstance(per_target, dict) else ():
        if not isinstance(c, dict):
            continue
        total = int(num(c.get("original_inputs")) or 0) + int(num(c.get("adversarial_inputs")) or 0)
        failed = int(num(c.get("n_errors_original")) or 0) + int(num(c.get("n_errors_adversarial")) or 0)
        if not total or failed / total < FAILED_SHARE_WARN:
            continue
        causes = run.causes.get(str(name), Counter()).most_common()
        stopped = ((run.meta.get("predictions") or {}).get(name) or {}).get("stopped")
        out.append(FailedTarget(str(name), failed, total, causes[:TOP_CAUSES], max(0, len(causes) - TOP_CAUSES),
                                str(stopped) if stopped else None))
    return sorted(out, key=lambda f: -f.share)


def _chart_rows(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The metric rows the failure chart draws: a rate on fewer than :data:`MIN_N` cases is left out (no bar)."""
    return [{**r, "failure_pct": None} if too_few(r) else r for r in rows]


def grader_view(rows: Sequence[dict[str, Any]], graders: Sequence[str]) -> View | None:
    """The LLM grader's own table: per attack configuration and grader, the share of answers raised with its
    bootstrap interval, the mean change, weak answers lifted to full marks, answers already at the maximum and
    unreadable replies (the grader statistics of :mod:`callbluff.metrics.grading`, otherwise only in
    metrics.json). None without a grader row."""
    out = []
    for r in pooled_rows([r for r in rows if str(r.get("target")) in graders]):
        def cell(f: str, ci: str | None = None, r: dict[str, Any] = r) -> str:
            v = pct(r.get(f))
            lo, hi = (num(r.get(f"{ci}_ci_low")), num(r.get(f"{ci}_ci_high"))) if ci else (None, None)
            return v + (f" [{pct(lo)}, {pct(hi)}]" if lo is not None and hi is not None else "")
        weak = f"{pct(r.get('max_out_pct'))} of {r.get('n_low')}" if r.get("n_low") else "–"
        out.append([str(r["attack"]), short_params(r["params"], str(r["attack"])), str(r["target"]),
                    fmt(r.get("n")), cell("pos_pct", "pos_pct"), cell("mean_diff_pct", "mean_diff_pct"), weak,
                    pct(r.get("ceiling_pct")), pct(r.get("arr")), pct(r.get("mean_score_pct")),
                    pct(r.get("parse_fail_pct")), pct(r.get("failure_pct"))])
    if not out:
        return None
    out.sort(key=lambda row: (row[0], row[1], row[2]))
    return View("The LLM grader, per attack",
                "Per attack configuration (prompts pooled): answers scored, % scored higher than their clean version "
                "[95% bootstrap interval], mean score change as % of the scale [interval], weak answers (gold at most "
                "the scale's midpoint) that reached full marks, % already at the maximum when clean (they cannot be "
                "raised), % scored at the scale's minimum (what a robust grader gives a content-free answer), the mean "
                "score of content-free answers, % of replies the grader gave that could not be read "
                "(error rows, never zeros), and the failure % by the attack's expectation.",
                ["attack", "params", "grader", "n", "raised %", "mean change %", "weak → max", "at max %",
                 "at minimum %", "content-free score %", "unreadable %", "failure %"], out)


def _run_context(run: RunData, index: int, per_attack: int) -> dict[str, Any]:
    targets = run.targets
    graders = llm_graders(run.meta) if get_task(run.task).scoring else set()
    configured = per_attack
    items, totals, per_attack = sample_examples(run.path, per_attack, int(run.meta.get("seed") or 0))
    suite = run.meta.get("suite") or {}
    return {
        "run": run, "id": f"run{index}", "task": run.task, "meta": run.meta,
        "cards": scorecards(run.task, run.metrics, targets, graders),
        "failure_svg": failure_chart(run.task, _chart_rows(run.metrics), targets),
        "failed_targets": failed_targets(run), "min_n": MIN_N,
        "without_examples": without_examples(run), "failed_to_score": failed_to_score(run),
        "views": ([v] if (v := grader_view(run.metrics, sorted(graders))) else [])
        + [v for v in get_task(run.task).views(run.metrics, targets)  # an all-grader run: its table says it
           if not (graders and set(graders) >= set(targets) and v.title.startswith(ARR_VIEW))],
        "clean_vs_robust": (GRADER_CLEAN_VS_ROBUST if graders and set(graders) >= set(targets)
                            else get_task(run.task).clean_vs_robust),
        "fields": _fields_for(run.task, run.metrics), "metrics": run.metrics,
        "headlines": headlines(run.task, run.metrics),
        "examples": {"items": items, "totals": totals, "per_attack": per_attack, "configured": configured},
        "n_examples_shown": len(items),
        "config": json.dumps(suite, indent=2, sort_keys=True, default=str),
        "gates": run.gates,
    }


def render_report(runs: Sequence[RunData], per_attack: int | None = None) -> str:
    """The report's HTML for one or more loaded runs; ``per_attack`` (examples per attack configuration)
    overrides each run's ``output.examples_in_report`` (:func:`examples_per_attack`)."""
    with reading_runs(r.meta for r in runs):  # families, papers, defaults as the runs recorded them
        contexts = [_run_context(r, i, examples_per_attack(r) if per_attack is None else per_attack)
                    for i, r in enumerate(runs)]
        title = runs[0].name if len(runs) == 1 else f"{len(runs)} runs: " + ", ".join(r.name for r in runs)
        return _environment().get_template("report.html.j2").render(
            title=title, runs=contexts, expect_text=expectation_text, min_n=MIN_N,
            n_gates=sum(len(c["gates"]) for c in contexts),
            n_failed=sum(not g.passed for c in contexts for g in c["gates"]))


def write_report(run_dir: str | Path | Sequence[str | Path], out: str | Path | None = None,
                 per_attack: int | None = None,
                 progress: Callable[[str, int, int | None], None] | None = None) -> Path:
    """Render ``report.html`` from run.json, metrics.json, examples.parquet, errors.jsonl (and imported
    annotations). One run directory: written into it unless ``out`` is given; several: one combined report
    at ``out`` (required). ``per_attack`` overrides the runs' ``output.examples_in_report``. ``progress``
    (:mod:`callbluff.progress`'s hook) hears ``report: runs read`` after each run directory and ``report:
    written`` at the end."""
    dirs = [Path(run_dir)] if isinstance(run_dir, str | Path) else [Path(d) for d in run_dir]
    if not dirs:
        raise ReportError("no run directory given")
    if out is None:
        if len(dirs) > 1:
            raise ReportError("several run directories make one combined report: give an output file")
        out = dirs[0] / "report.html"
    report = progress or (lambda stage, done, total: None)
    runs = []
    report("report: runs read", 0, len(dirs))
    for k, d in enumerate(dirs, 1):
        runs.append(load_run(d))
        report("report: runs read", k, len(dirs))
    html = render_report(runs, per_attack)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(out)
    report("report: written", 1, 1)
    return out
