"""A run directory read for the report: run.json, metrics.json, errors.jsonl, gates and annotation results.

examples.parquet is read separately (and only the columns the example browser needs) by
:mod:`callbluff.report.browser`, so that 100,000 examples cost one column scan, not a DataFrame of everything.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from callbluff.gates import check_gates, gates_of_run
from callbluff.metrics.rows import ROW_KEYS


class ReportError(ValueError):
    """A run directory the report cannot read: the message names the file and the fix."""


ANNOTATIONS_FILE = "annotations/results.json"
"""Where ``callbluff annotate import`` writes its Table 6 / comprehension results in a run directory."""


@dataclass
class RunData:
    path: Path
    meta: dict[str, Any]
    metrics: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    n_errors: int
    annotations: dict[str, Any] | None = None
    gates: list[Any] = field(default_factory=list)  # callbluff.gates.GateResult
    causes: dict[str, Counter[str]] = field(default_factory=dict)
    """Per target, how often each cause of a failed prediction occurs in errors.jsonl (every line, not only the
    first ``max_errors``): the failed-run banner names the top ones."""

    @property
    def name(self) -> str:
        return str(self.meta.get("name") or self.path.name)

    @property
    def task(self) -> str:
        return str((self.meta.get("dataset") or {}).get("task", "content"))

    @property
    def targets(self) -> list[str]:
        names = list((self.meta.get("targets") or {}).keys())
        return names or sorted({str(r["target"]) for r in self.metrics})


RERUN = ("re-run the suite into this directory (`callbluff run SUITE.toml --out DIR`) to rewrite it, or copy the run "
         "directory again")
"""The fix named for a run directory's damaged file."""


def _json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ReportError(f"{path}: {what} is not valid JSON ({e}); re-run the suite into this directory "
                          "(`callbluff run SUITE.toml --out DIR`) to rewrite it") from None


def load_run(run_dir: str | Path, max_errors: int = 50) -> RunData:
    """Read a run directory (errors.jsonl: the first ``max_errors`` rows and the count)."""
    path = Path(run_dir)
    if not (path / "run.json").exists():
        raise ReportError(f"{path}: not a run directory (no run.json); run `callbluff run SUITE.toml --out {path}`")
    meta = _json(path / "run.json", "run.json")
    if not isinstance(meta, dict):
        raise ReportError(f"{path / 'run.json'}: expected a JSON object (a callbluff run.json), got a "
                          f"{type(meta).__name__}; {RERUN}")
    metrics = _json(path / "metrics.json", "metrics.json") if (path / "metrics.json").exists() else []
    if not isinstance(metrics, list):
        raise ReportError(f"{path / 'metrics.json'}: expected a JSON list of metric rows; {RERUN}")
    for i, row in enumerate(metrics):
        lacking = [k for k in ROW_KEYS if k != "task"] if not isinstance(row, dict) else \
            [k for k in ROW_KEYS if k != "task" and k not in row]
        if lacking:
            what = "is not a JSON object" if not isinstance(row, dict) else f"lacks the key(s) {', '.join(lacking)}"
            raise ReportError(f"{path / 'metrics.json'}: metric row {i} {what} (every row names its attack, params, "
                              f"prompt and target); {RERUN}")
    errors: list[dict[str, Any]] = []
    causes: dict[str, Counter[str]] = {}
    n_errors = 0
    if (path / "errors.jsonl").exists():
        with open(path / "errors.jsonl", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                n_errors += 1
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    row = {"stage": "?", "cause": line.strip()}
                if not isinstance(row, dict):
                    row = {"stage": "?", "cause": line.strip()}
                if len(errors) < max_errors:
                    errors.append(row)
                if str(row.get("stage", "")).startswith("predict") and row.get("target") is not None:
                    causes.setdefault(str(row["target"]), Counter())[str(row.get("cause"))] += 1
    annotations = None
    if (path / ANNOTATIONS_FILE).exists():
        annotations = _json(path / ANNOTATIONS_FILE, "the annotation results")
    try:
        gates = check_gates(gates_of_run(path), metrics)
    except ValueError as e:
        raise ReportError(str(e)) from None
    return RunData(path, meta, metrics, errors, n_errors, annotations, gates, causes)
