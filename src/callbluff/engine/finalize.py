"""The end of a run in one pass over its chunk parts (issue 8 overhead, issue 15 streaming).

:meth:`callbluff.engine.run.Engine.finalize` merges the parts into examples.parquet / originals.parquet; as each
part goes by, a :class:`RunTally` takes from it everything else the run directory needs, so each part is read
from disk and converted once (not once for the merge, once for the counts, once for errors.jsonl and once for
the metrics):

- the counts of ``run.json`` (inputs, valid predictions and errors per target; the issue 8 invariant: every
  original and adversarial input is exactly one of a valid prediction or an error row);
- the failed-prediction lines of ``errors.jsonl`` (originals, then adversarial inputs, each in chunk order);
- for tasks with a streaming accumulator (scoring tasks), the metric sufficient statistics
  (:class:`~callbluff.metrics.streaming.ScoringAccumulator`). Reading and questions need each question's
  versions together and are computed afterwards by :func:`~callbluff.engine.metrics_rows.stream_metrics`.

Only the columns these need are converted to pandas (never the texts), so memory holds one part.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

import pandas as pd
import pyarrow as pa

from callbluff.metrics.streaming import EXAMPLE_METRIC_COLUMNS, ORIGINAL_METRIC_COLUMNS
from callbluff.records import Prompt, Task
from callbluff.tasks import get_task

ORIGINAL_TALLY_COLUMNS = list(dict.fromkeys([*ORIGINAL_METRIC_COLUMNS, "source_id"]))
EXAMPLE_TALLY_COLUMNS = list(dict.fromkeys([*EXAMPLE_METRIC_COLUMNS, "example_id"]))
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

    def __init__(self, task: Task, prompts: Mapping[str, Prompt], errors: IO[str]) -> None:
        self.task = task
        self.accumulator = get_task(task).accumulator(prompts)
        self.errors = errors
        self.n_error_lines = 0
        self.records = 0
        self.examples = 0
        self.per_target: dict[str, dict[str, int]] = {}
        self.targets: set[str] = set()

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
        failed = x["adv_error"].notna()
        self._count(x["target"], failed, "adversarial_inputs", "adversarial_ok", "n_errors_adversarial")
        for row in x[failed].itertuples() if failed.any() else ():
            self._write({"stage": "predict_adversarial", "example_id": row.example_id, "source_id": row.source_id,
                         "attack": row.attack, "target": row.target, "prompt_id": row.prompt_id,
                         "cause": row.adv_error})
        if self.accumulator is not None:
            self.accumulator.add_examples(x)

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
