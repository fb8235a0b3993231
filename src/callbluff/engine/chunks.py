"""One chunk of a run, from generated examples to parts on disk (docs/design.md "Data flow").

A record chunk: predict the originals with each target, run the model-in-the-loop searches
(:class:`~callbluff.engine.search.SearchRunner`), predict every adversarial input; a generator chunk: predict the
prompt-level answers. The rows (:mod:`callbluff.engine.rows`) are built and the parts written by the background
writer, off the critical path (the next chunk's target calls are already running). A chunk's parts are written
with its error list and status, the examples part last: it marks the chunk done.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from callbluff.engine.generate import Chunk
from callbluff.engine.inputs import adversarial_input, generated_input, original_input
from callbluff.engine.rows import example_row, original_row
from callbluff.engine.search import SearchRunner
from callbluff.engine.store import BackgroundWriter, RunDir, write_atomic
from callbluff.engine.verdicts import Judge
from callbluff.records import Perturbed, Record
from callbluff.targets.base import Output
from callbluff.targets.wrappers import CachedTarget

Predicted = tuple[str, list[Output], list[tuple[Perturbed, int]], list[Output]]
"""One target's outputs for a chunk: (target name, original outputs, (example, queries) pairs, their outputs)."""


class ChunkRunner:
    """Runs chunks of one run against its targets and hands their rows to the background writer."""

    def __init__(self, run: RunDir, task: str, targets: dict[str, CachedTarget], searches: SearchRunner | None,
                 writer: BackgroundWriter, judge: Judge | None = None) -> None:
        self.judge = judge
        self.run = run
        self.task = task
        self.targets = targets
        self.searches = searches
        self.writer = writer

    def records(self, chunk: Chunk) -> None:
        """Predict a record chunk's originals, search, predict its adversarial inputs; write its parts."""
        task, records = self.task, chunk.records
        errors = list(chunk.errors)
        timings: list[dict[str, Any]] = []
        by_id = {r.id: r for r in records}
        predicted: list[Predicted] = []
        for tname, target in self.targets.items():
            outs = target.predict([original_input(r, task) for r in records])
            orig_by_id = {r.id: o for r, o in zip(records, outs)}
            found: list[tuple[Perturbed, int]] = [(ex, 0) for ex in chunk.examples]
            if self.searches is not None:
                found.extend(self.searches.run(records, target, tname, orig_by_id, errors, timings))
            adv_outs = target.predict([adversarial_input(ex, by_id[ex.source_id], task) for ex, _ in found])
            predicted.append((tname, outs, found, adv_outs))
        made = self._made()
        self.writer.submit(self._write_records, chunk.index, records, predicted, errors, timings, made)

    def generator(self, chunk: Chunk) -> None:
        """Predict a generator chunk's answers (no source records, no originals); write its parts."""
        rows: list[dict[str, Any]] = []
        for tname, target in self.targets.items():
            outs = target.predict([generated_input(ex, self.task) for ex in chunk.examples])
            rows.extend(example_row(ex, None, self.task, tname, None, out, 0, chunk.index,
                                    self.judge(ex, None, None, out) if self.judge else None)
                        for ex, out in zip(chunk.examples, outs))
        self.writer.submit(self.write, chunk.index, {}, [], rows, list(chunk.errors), (), self._made())

    def _made(self) -> dict[str, dict[str, Any]]:
        """When each target's valid answers of this chunk were made (stored in the cache, or asked now)."""
        return {name: t.take_window() for name, t in self.targets.items()}

    def _write_records(self, idx: int, records: list[Record], predicted: list[Predicted],
                       errors: list[dict[str, Any]], timings: list[dict[str, Any]],
                       made: dict[str, dict[str, Any]] | None = None) -> None:
        by_id = {r.id: r for r in records}
        originals_rows: list[dict[str, Any]] = []
        example_rows: list[dict[str, Any]] = []
        for tname, outs, found, adv_outs in predicted:
            orig_by_id = {}
            for r, out in zip(records, outs):
                orig_by_id[r.id] = out
                originals_rows.append(original_row(r, self.task, tname, out, idx))
            for (ex, queries), out in zip(found, adv_outs):
                src, orig = by_id[ex.source_id], orig_by_id[ex.source_id]
                verdict = self.judge(ex, src, orig, out) if self.judge else None
                example_rows.append(example_row(ex, src, self.task, tname, orig, out, queries, idx, verdict))
        self.write(idx, by_id, originals_rows, example_rows, errors, timings, made)

    def write(self, idx: int, by_id: dict[str, Record], originals_rows: list[dict[str, Any]],
              example_rows: list[dict[str, Any]], errors: list[dict[str, Any]],
              timings: Sequence[dict[str, Any]] = (), made: dict[str, dict[str, Any]] | None = None) -> None:
        """Write one chunk's error list, timings, status and parts (the examples part last). The status keeps,
        per target, its valid predictions and when they were made (``made``: ``answers``, ``first``, ``last``),
        which a later run that skips this chunk reports as reused."""
        for e in errors:  # attack failures: traced to their prompt so metric rows can count them
            src = by_id.get(e.get("source_id", ""))
            if e.get("prompt_id") is None and src is not None:
                e["prompt_id"] = getattr(src, "prompt_id", None)
        if timings:
            write_atomic(self.run.timings_path(idx), json.dumps(list(timings)))
        else:
            self.run.timings_path(idx).unlink(missing_ok=True)
        generr = self.run.generr_path(idx)
        if errors:
            write_atomic(generr, json.dumps(errors, default=str))
        else:
            generr.unlink(missing_ok=True)
        status = {"prediction_errors": sum(r["error"] is not None for r in originals_rows)
                  + sum(r["adv_error"] is not None for r in example_rows),
                  "generate_errors": len(errors)}
        if made is not None:
            valid: dict[str, int] = {}
            for r in originals_rows:
                valid[r["target"]] = valid.get(r["target"], 0) + (r["error"] is None)
            for r in example_rows:
                valid[r["target"]] = valid.get(r["target"], 0) + (r["adv_error"] is None)
            status["made"] = {name: {"answers": valid.get(name, 0), "first": w["first"], "last": w["last"]}
                              for name, w in made.items()}
        self.run.write_chunk(idx, originals_rows, example_rows, status)
