"""What the terminal shows of a finished run: a compact metrics table, the provenance of its predictions, the
causes of its errors and its ``[[expect]]`` gates; used by ``run``, ``evaluate``, ``report`` and ``demo``.

Light at import (the lazy-import rule of :mod:`callbluff.cli`): the report, render and gate modules are imported
where a table or gate is printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from callbluff.console import console, fail, out, say

REPORT_ROWS_PER_RUN = 10
"""Metric rows per run when ``callbluff report`` combines several (the whole summary fits about two screens)."""
METRIC_ROWS = 20
"""Metric rows the terminal prints per run (a summary that fits a screen; every row is in metrics.json and
report.html)."""


def summary_rows(rows: list[dict[str, Any]], max_rows: int = METRIC_ROWS) -> tuple[list[dict[str, Any]], int]:
    """The rows a terminal summary shows: each target's clean rows, then each attack configuration's pooled row
    (prompt ``all``, or its only prompt), worst failure share first (a share on fewer than the report's minimum
    of judged cases after the measured ones), at most ``max_rows`` in all; and how many rows of metrics.json are
    not shown."""
    from callbluff.render.text import num, pooled_rows
    from callbluff.report.scorecard import too_few

    clean = [r for r in rows if r.get("attack") == "clean"]
    if len(clean) > max(2, max_rows // 3):  # many prompts: the pooled clean rows, else the first few
        clean = [r for r in clean if r.get("prompt") == "all"] or clean[:max(2, max_rows // 3)]
    attacks = sorted(pooled_rows(rows), key=lambda r: (num(r.get("failure_pct")) is None, too_few(r),
                                                       -(num(r.get("failure_pct")) or 0.0), str(r["attack"]),
                                                       str(r["params"]), str(r["target"])))
    shown = (clean + attacks)[:max_rows]
    return shown, len(rows) - len(shown)


def print_metrics(rows: list[dict[str, Any]], title: str = "metrics", max_rows: int = METRIC_ROWS) -> None:
    """A compact metrics table: the clean rows and each attack configuration's pooled row, worst first, at most
    ``max_rows`` (:func:`summary_rows`); the rest are counted and named by file (all fields are in metrics.json
    and report.html)."""
    from callbluff.report.html import _fmt, short_params
    from callbluff.tasks import get_task

    if not rows:
        out.print("(no metric rows)")
        return
    shown, hidden = summary_rows(rows, max_rows)
    present = {k for r in shown for k, v in r.items() if v is not None}
    fields = [f for f in get_task(rows[0]["task"]).terminal_fields if f in present]
    table = Table(title=title)
    for col in ["attack", "params", "prompt", "target", *fields]:
        table.add_column(col, overflow="fold")
    for r in shown:
        table.add_row(str(r["attack"]), short_params(r["params"], str(r["attack"])), str(r["prompt"]), str(r["target"]),
                      *[_fmt(r.get(f)) for f in fields])
    out.print(table)
    if hidden:
        out.print(f"... and {hidden} more metric rows (per prompt, every field): metrics.json and report.html",
                  highlight=False)


GATE_FAILED = 3
"""The exit code of a run or report whose suite has a failed ``[[expect]]`` gate."""


def check_and_print_gates(run_dir: Path, junit: Path | None, suite_name: str) -> bool:
    """Print each ``[[expect]]`` gate of the run as PASS/FAIL (and write JUnit XML); True when all passed."""
    from callbluff.gates import check_gates, gates_of_run, junit_xml
    from callbluff.render.tables import load_metrics

    try:
        gates = gates_of_run(run_dir)
        results = check_gates(gates, load_metrics(run_dir)) if gates else []
    except (ValueError, FileNotFoundError) as e:
        fail(str(e))
        raise
    for r in results:
        tag = ("PASS", "bold green") if r.passed else ("FAIL", "bold red")
        say("gate ", tag, f" {r.name}" + ("" if r.passed else f": {r.message}"))
    if junit is not None:
        junit.parent.mkdir(parents=True, exist_ok=True)
        junit.write_text(junit_xml(results, suite_name), encoding="utf-8")
        console.print(f"JUnit XML: {junit} ({len(results)} gates)", highlight=False)
    return all(r.passed for r in results)


def print_provenance(result: Any) -> None:
    """One line per target: how many predictions were reused from an earlier run (and from when), how many asked
    now; a reused answer is never presented as fresh (``result``: a RunResult, or run.json as a dict)."""
    from callbluff.terminal import reuse_sentence

    preds = (result.get("predictions") if isinstance(result, dict) else getattr(result, "predictions", None)) or {}
    for name, p in preds.items():
        say(("predictions:", "cyan" if not p.get("reused") else "bold yellow"),
            f" {reuse_sentence(name if len(preds) > 1 else None, p)}")


def print_error_causes(result: Any) -> None:
    """The first distinct causes of failure with their counts, and how many other causes there are (errors.jsonl
    has every one)."""
    causes = result.counts.get("error_causes") or []
    if not causes:
        return
    total = result.counts.get("errors", sum(c["n"] for c in causes))
    say(("errors:", "bold red"), f" {total:,} in all; the most frequent causes:")
    for c in causes:
        who = f"{c['target']}: " if c.get("target") else ""
        console.print(f"  {c['n']:,} x {who}{c['cause']}", highlight=False, markup=False)
    distinct = _distinct_causes(getattr(result, "run_dir", None))
    shown = sum(c["n"] for c in causes)
    if distinct is not None and distinct > len(causes):
        console.print(f"  ... and {distinct - len(causes)} more distinct causes ({total - shown:,} errors): "
                      "errors.jsonl", highlight=False, markup=False)
    elif total > shown:
        console.print(f"  ... and {total - shown:,} more errors: errors.jsonl", highlight=False, markup=False)


def _distinct_causes(run_dir: Path | None) -> int | None:
    """Distinct (target, cause) pairs in a run's errors.jsonl (attack failures by attack and cause); None when
    there is no file to read."""
    path = Path(run_dir) / "errors.jsonl" if run_dir is not None else None
    if path is None or not path.exists():
        return None
    seen: set[tuple[str, str]] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if isinstance(e, dict):
                seen.add((str(e.get("target") or e.get("attack")), str(e.get("cause") or e.get("error"))))
    return len(seen)


def finish_run(result: Any, out_dir: Path | None, max_error_rate: float, title: str, junit: Path | None = None,
               suite_name: str = "suite", report: bool = True, headline: list[str] | None = None) -> None:
    """Print a finished run's metrics (and ``headline`` lines), counts, provenance, notes, error causes, run
    directory (``out_dir``: None when the directory is not kept) and gates; exit 1 for a failed target, 3 for a
    failed gate."""
    print_metrics(result.metrics, title=title)
    for line in headline or ():
        say(("headline:", "bold"), f" {line}")
    c = result.counts
    console.print(f"counts: {c['records']} records, {c['examples']} adversarial examples, {c['predictions']} "
                  f"predictions; errors: {c['n_errors_original']} original, {c['n_errors_adversarial']} "
                  f"adversarial, {c['n_errors_generate']} attack failures", highlight=False)
    print_provenance(result)
    for note in result.notes:
        say(("note:", "yellow"), f" {note}")
    print_error_causes(result)
    if out_dir is not None:
        written = out_dir / "report.html"
        say("run directory: ", (str(out_dir), "bold"),
            f" (report: {written})" if report and written.exists() else " (no report: callbluff report DIR writes one)")
    gates_ok = check_and_print_gates(out_dir, junit, suite_name) if out_dir is not None else True
    problems = result.failed_targets(max_error_rate)
    if problems:
        for p in problems:
            if out_dir is None:  # no errors.jsonl to point at: the causes are printed above
                p = p.replace(" (see errors.jsonl)", "").replace("; see errors.jsonl", "")
            say(("failed:", "bold red"), f" {p}")
        raise typer.Exit(1)
    if not gates_ok:
        raise typer.Exit(GATE_FAILED)
