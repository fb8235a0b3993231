"""The end of a run in one pass over its chunk parts.

:func:`finalize` merges the parts into examples.parquet / originals.parquet; as each
part goes by, a :class:`RunTally` takes from it everything else the run directory needs, so each part is read
from disk and converted once (not once for the merge, once for the counts, once for errors.jsonl and once for
the metrics):

- the counts of ``run.json`` (inputs, valid predictions and errors per target; the invariant: every
  original and adversarial input is exactly one of a valid prediction or an error row);
- the failed-prediction lines of ``errors.jsonl`` (originals, then adversarial inputs, each in chunk order);
- for tasks with a streaming accumulator (scoring tasks), the metric sufficient statistics
  (:class:`~callbluff.metrics.streaming.ScoringAccumulator`). Reading and questions need each question's
  versions together and are computed afterwards by :func:`~callbluff.engine.metrics_rows.stream_metrics`.

Only the columns these need are converted to pandas (never the texts), so memory holds one part.
"""

from __future__ import annotations

import json
import os
import statistics
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from callbluff.engine.manifest import json_default
from callbluff.engine.metrics_rows import accumulated_metrics, qa_metrics, verdict_tallies
from callbluff.metrics.expectations import VerdictTallies
from callbluff.engine.store import RunDir, write_atomic
from callbluff.metrics.streaming import EXAMPLE_METRIC_COLUMNS, ORIGINAL_METRIC_COLUMNS
from callbluff.records import Prompt, Task
from callbluff.tasks import get_task

ORIGINAL_TALLY_COLUMNS = list(dict.fromkeys([*ORIGINAL_METRIC_COLUMNS, "source_id"]))
EXAMPLE_TALLY_COLUMNS = list(dict.fromkeys([*EXAMPLE_METRIC_COLUMNS, *VerdictTallies.COLUMNS, "example_id"]))
_ZERO = {"original_inputs": 0, "original_ok": 0, "n_errors_original": 0, "adversarial_inputs": 0,
         "adversarial_ok": 0, "n_errors_adversarial": 0}


def _per_target(target: pd.Series, failed: pd.Series) -> list[tuple[str, int, int]]:
    """(target, rows, failed rows) per target, in order of first appearance. Grouped by column name: grouping
    by a Series makes pandas format it for a KeyError it catches, which cost more than the count itself."""
    g = pd.DataFrame({"t": target, "f": failed}).groupby("t", sort=False)["f"]
    return [(str(name), int(n), int(k)) for (name, n), k in zip(g.size().items(), g.sum().tolist(), strict=True)]


class RunTally:
    """Counts, error lines and (tasks with a streaming accumulator) metric statistics of a run, fed its parts one at a time: all
    originals parts first, then all examples parts (the order of errors.jsonl)."""

    def __init__(self, task: Task, prompts: Mapping[str, Prompt], errors: IO[str],
                 verdicts: VerdictTallies | None = None) -> None:
        self.task = task
        self.accumulator = get_task(task).accumulator(prompts)
        self.verdicts = verdicts
        self.errors = errors
        self.n_error_lines = 0
        self.records = 0
        self.examples = 0
        self.per_target: dict[str, dict[str, int]] = {}
        self.targets: set[str] = set()
        self.causes: Counter[tuple[str, str]] = Counter()  # (target, cause) of the failed predictions
        self.degraded: dict[str, set[str]] = {}  # why an attack fell back (meta "degraded") -> example ids

    def _count(self, target: pd.Series, failed: pd.Series, inputs: str, ok: str, errors: str) -> None:
        """Add one part's rows, valid predictions and failed ones per target to the ``inputs`` / ``ok`` /
        ``errors`` counts."""
        for name, n, n_failed in _per_target(target, failed):
            c = self.per_target.setdefault(name, dict(_ZERO))
            c[inputs] += n
            c[ok] += n - n_failed
            c[errors] += n_failed

    def _write(self, obj: dict[str, Any]) -> None:
        self.errors.write(json.dumps(obj, sort_keys=True) + "\n")
        self.n_error_lines += 1
        self.causes[(str(obj.get("target")), str(obj.get("cause")))] += 1

    def top_causes(self, gen_errors: list[dict[str, Any]], n: int = 3) -> list[dict[str, Any]]:
        """The ``n`` most frequent distinct causes of failure (failed predictions per target, then attack
        failures), each with its count: what the terminal prints instead of only pointing at errors.jsonl."""
        gen = Counter(f"{e.get('attack', 'attack')}: {e.get('cause') or e.get('error')}" for e in gen_errors)
        rows = [{"target": t, "cause": c, "n": k} for (t, c), k in self.causes.most_common()]
        rows += [{"target": None, "cause": c, "n": k} for c, k in gen.most_common()]
        return sorted(rows, key=lambda r: -r["n"])[:n]

    def _degraded(self, table: pa.Table) -> None:
        """Examples an attack made by a documented fallback carry ``meta["degraded"]`` (why; e.g. AddSent ranked
        structurally because its language model's process died): remembered per cause for run.json's notes.
        Only the rows whose meta names the key are parsed."""
        if "meta" not in table.column_names:
            return
        hit = pc.match_substring(table.column("meta"), '"degraded"')
        if not pc.any(hit).as_py():
            return
        rows = table.filter(hit).select(["example_id", "meta"]).to_pylist()
        for row in rows:
            why = json.loads(row["meta"]).get("degraded")
            if why:
                self.degraded.setdefault(str(why), set()).add(row["example_id"])

    def degraded_notes(self) -> list[str]:
        """One note per cause of a fallback, with the number of examples it made."""
        return [f"{len(ids)} example(s): {why}" for why, ids in sorted(self.degraded.items())]

    def add_originals(self, table: pa.Table) -> None:
        if not table.num_rows:  # e.g. a chunk whose records all lacked a prompt: nothing to count
            return
        o = table.select(ORIGINAL_TALLY_COLUMNS).to_pandas()
        self.records += int(o["source_id"].nunique())
        failed = o["error"].notna()
        self._count(o["target"], failed, "original_inputs", "original_ok", "n_errors_original")
        self.targets.update(o["target"].unique())
        for row in o[failed].itertuples() if failed.any() else ():
            self._write({"stage": "predict_original", "source_id": row.source_id, "target": row.target,
                         "prompt_id": row.prompt_id, "cause": row.error})
        if self.accumulator is not None:
            self.accumulator.add_originals(o)

    def add_examples(self, table: pa.Table) -> None:
        if not table.num_rows:  # a run without attacks, or a chunk no attack applied to
            return
        x = table.select(EXAMPLE_TALLY_COLUMNS).to_pandas()
        self.examples += int(x["example_id"].nunique())
        self._degraded(table)
        failed = x["adv_error"].notna()
        self._count(x["target"], failed, "adversarial_inputs", "adversarial_ok", "n_errors_adversarial")
        for row in x[failed].itertuples() if failed.any() else ():
            self._write({"stage": "predict_adversarial", "example_id": row.example_id, "source_id": row.source_id,
                         "attack": row.attack, "target": row.target, "prompt_id": row.prompt_id,
                         "cause": row.adv_error})
        if self.accumulator is not None:
            self.accumulator.add_examples(x)
            if self.verdicts is not None:
                self.verdicts.add(x)

    def counts(self, gen_errors: list[dict[str, Any]], chunks: int) -> dict[str, Any]:
        """``run.json`` counts. ``records`` / ``examples`` count distinct ids per chunk and add them up: chunks
        partition the records (datasets reject duplicate ids) and example ids carry their source's id, so no id
        is in two chunks."""
        per_target = {name: {**self.per_target[name],
                             "n_errors_search": sum(1 for e in gen_errors if e.get("target") == name)}
                      for name in sorted(self.per_target)}
        return {
            "records": self.records,
            "examples": self.examples,
            "predictions": sum(c["original_inputs"] + c["adversarial_inputs"] for c in per_target.values()),
            "n_errors_original": sum(c["n_errors_original"] for c in per_target.values()),
            "n_errors_adversarial": sum(c["n_errors_adversarial"] for c in per_target.values()),
            "n_errors_generate": len(gen_errors),
            "chunks": chunks,
            "per_target": per_target,
        }


@dataclass
class RunResult:
    run_dir: Path
    metrics: list[dict[str, Any]]
    counts: dict[str, Any]
    target_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    predictions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per target: reused predictions (and when they were made), inputs asked now (run.json ``predictions``)."""

    def failed_targets(self, max_error_rate: float = 0.5) -> list[str]:
        """Why the run should exit non-zero: targets all of whose calls failed, or whose share of failed
        predictions (original + adversarial) exceeds ``max_error_rate``. Empty when the run is fine."""
        problems = []
        for name, c in self.counts.get("per_target", {}).items():
            total = c["original_inputs"] + c["adversarial_inputs"]
            failed = c["n_errors_original"] + c["n_errors_adversarial"]
            if total and failed == total:
                problems.append(f"target {name}: all {total} predictions failed (see errors.jsonl)")
            elif total and failed / total > max_error_rate:
                problems.append(f"target {name}: {failed} of {total} predictions failed "
                                f"({failed / total:.0%} > --max-error-rate {max_error_rate:.0%}; see errors.jsonl)")
        return problems


def finalize(run: RunDir, task: Task, prompts: Mapping[str, Prompt], expectations: Mapping[str, str]) -> RunResult:
    """Merge the chunk parts into examples.parquet / originals.parquet, write errors.jsonl and metrics.json,
    count every input; all in one pass that reads each part once (:class:`RunTally`) and holds one part at a
    time, so memory does not grow with the number of records.

    Invariant: for each target, every original and every adversarial input is exactly one of a valid
    prediction or an error row; ``counts`` says so and the numbers add up.
    """
    gen_errors = generation_errors(run)
    tmp = run.errors.with_name(run.errors.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for e in gen_errors:  # attack failures first, then failed predictions (originals, adversarial)
            fh.write(json.dumps(e, sort_keys=True, default=str) + "\n")
        tally = RunTally(task, prompts, fh, verdict_tallies(task, expectations))
        run.write_merged("originals", run.originals, tally.add_originals)
        run.write_merged("examples", run.examples, tally.add_examples)
    os.replace(tmp, run.errors)
    if tally.accumulator is not None:
        metrics = accumulated_metrics(tally.accumulator, tally.targets, gen_errors, dict(expectations), tally.verdicts)
    else:
        metrics = qa_metrics(run, task, tally.targets, gen_errors, dict(expectations), prompts)
    write_atomic(run.metrics, json.dumps(metrics, indent=2, default=json_default))
    write_timings(run)
    counts = tally.counts(gen_errors, len(run.done_chunks()))
    counts["errors"] = len(gen_errors) + tally.n_error_lines
    counts["error_causes"] = tally.top_causes(gen_errors)
    return RunResult(run.path, metrics, counts, notes=tally.degraded_notes())


def write_timings(run: RunDir) -> None:
    """timings.json: per (target, attack, params), the searches' wall time per attacked record (Jia & Liang's
    cost per question: ``seconds_mean`` / ``seconds_median`` / ``seconds_max`` / ``seconds_total``) and their
    target queries. Wall-clock figures depend on the machine, so they live here and not in metrics.json.
    Absent when the run has no search attack."""
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for idx in run.done_chunks():
        p = run.timings_path(idx)
        if p.exists():
            for t in json.loads(p.read_text(encoding="utf-8")):
                groups.setdefault((t["target"], t["attack"], t["params"]), []).append(t)
    if not groups:
        run.timings.unlink(missing_ok=True)
        return
    rows = []
    for (tname, attack, params), ts in sorted(groups.items()):
        secs = [float(t["seconds"]) for t in ts]
        rows.append({"target": tname, "attack": attack, "params": params, "n": len(secs),
                     "seconds_mean": statistics.fmean(secs), "seconds_median": statistics.median(secs),
                     "seconds_max": max(secs), "seconds_total": round(sum(secs), 4),
                     "queries_total": int(sum(int(t["queries"]) for t in ts))})
    write_atomic(run.timings, json.dumps(rows, indent=2))


def generation_errors(run: RunDir) -> list[dict[str, Any]]:
    """The attack failures of every finished chunk, in chunk order."""
    out: list[dict[str, Any]] = []
    for idx in run.done_chunks():
        p = run.generr_path(idx)
        if p.exists():
            out.extend(json.loads(p.read_text(encoding="utf-8")))
    return out
