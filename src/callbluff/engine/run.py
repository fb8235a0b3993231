"""The engine: plan -> fit -> generate -> predict originals -> search -> predict adversarials -> metrics.

The only module that wires datasets, attacks, targets and metrics together (DESIGN.md "Data flow"; the
living design is docs/design.md). Records stream in chunks of ``output.chunk_size``; while one chunk's
predictions run, the next chunk is read and its static examples generated in the background (the target's
time hides the harness's). Each finished chunk is written atomically to the run directory and every prediction
is committed to the SQLite cache before the next call to its target, so a run killed at any point and started
again into the same directory recomputes nothing it finished and repeats at most the calls in flight.

Attack contract v2 (attacks/base.py): requirements are checked once before the first chunk; attacks that fit
are fitted once per (configuration, prompt) before it; prompt-level generators make ``count`` answers per
prompt in *generator chunks* after the record chunks; model-in-the-loop searches get an
:class:`~callbluff.attacks.oracle.Oracle` per record and run concurrently (``output.search_concurrency``)
through the executor, sharing the cached target.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from callbluff import __version__
from callbluff.attacks.base import PromptGenerator, SearchAttack, StaticAttack, requirements_of
from callbluff.datasets.base import Dataset, load
from callbluff.engine.executor import Executor, LocalExecutor, make_executor
from callbluff.engine.generate import (
    AttackSpec,
    GenerationTask,
    GeneratorTask,
    generate_examples,
    fit_states,
    generate_prompt_examples,
    instantiate,
    split_evenly,
)
from callbluff.engine.inputs import adversarial_input, gold_of, original_input
from callbluff.engine.search import SearchJob, SearchPiece, SearchResult, prefetch, run_search_piece, search_one
from callbluff.engine.store import (
    GENERATOR_CHUNK0,
    RESTART_HINT,
    BackgroundWriter,
    RunDir,
    RunDirError,
    write_atomic,
)
from callbluff.engine.suite import Suite, SuiteError
from callbluff.iterutil import chunked
from callbluff.records import Perturbed, Prompt, Record, canonical_json
from callbluff.resources.context import default_resources
from callbluff.targets.base import Input, Output, Target
from callbluff.targets.cache import PredictionCache
from callbluff.engine.target_factory import from_config
from callbluff.targets.validate import OutputCheck, secret_values
from callbluff.targets.wrappers import CachedTarget


@dataclass
class RunResult:
    run_dir: Path
    metrics: list[dict[str, Any]]
    counts: dict[str, Any]
    target_stats: dict[str, dict[str, Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

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


def build_targets(suite: Suite, cache: PredictionCache, dataset: Dataset,
                  given: dict[str, Target] | None = None) -> dict[str, CachedTarget]:
    """The suite's targets (or ``given`` Python targets), each behind the prediction cache with its output check.

    The check (:class:`~callbluff.targets.validate.OutputCheck`) validates every output against the target's
    declared kind and the prompt's scale and scrubs the secrets its settings reference through ``${VAR}``.
    """
    out: dict[str, CachedTarget] = {}
    batch = suite.output.batch_size
    if given:
        for name, t in given.items():
            cfg = getattr(t, "config", None)
            check = OutputCheck(dataset.task, kind=getattr(cfg, "output", "auto"),
                                out_of_range=getattr(cfg, "out_of_range", "error"), prompts=dataset.prompts)
            out[name] = CachedTarget(t, cache, batch_size=batch, check=check)
        return out
    for i, cfg in enumerate(suite.target):
        try:
            inner = from_config(cfg, base_dir=suite.base_dir, where=f"target[{i}]")
        except Exception as e:
            raise SuiteError(f"key `target[{i}]` ({cfg.name}): cannot build target: {e}") from e
        check = OutputCheck(dataset.task, kind=cfg.output, out_of_range=cfg.out_of_range, prompts=dataset.prompts,
                            secrets=secret_values(cfg.model_dump()))
        out[cfg.name or f"target{i}"] = CachedTarget(inner, cache, batch_size=batch, check=check)
    return out


def _output_fields(out: Output) -> dict[str, Any]:
    return {
        "score": out.score,
        "answer": out.answer,
        "candidates": json.dumps([[c.text, c.score] for c in out.candidates]) if out.candidates else None,
        "error": out.error,
    }


def _example_row(ex: Perturbed, src: Record | None, task: str, target: str, orig: Output | None, adv: Output,
                 queries: int, chunk: int) -> dict[str, Any]:
    """One examples.parquet row. ``src``/``orig`` are None for prompt-level generator answers (no source)."""
    gold, answers, _ = gold_of(src) if src is not None else (None, [], "score")
    o = _output_fields(orig) if orig is not None else {"score": None, "answer": None, "candidates": None, "error": None}
    a = _output_fields(adv)
    return {
        "example_id": ex.id, "source_id": ex.source_id, "prompt_id": ex.prompt_id, "task": task,
        "attack": ex.attack, "params": canonical_json(dict(ex.params)), "index": ex.index, "field": ex.field,
        "original_text": getattr(src, ex.field) if src is not None else None, "adversarial_text": ex.text,
        "meta": canonical_json(dict(ex.meta)), "gold": gold, "gold_answers": json.dumps(answers) if answers else None,
        "target": target, "orig_score": o["score"], "adv_score": a["score"], "orig_answer": o["answer"],
        "adv_answer": a["answer"], "orig_candidates": o["candidates"], "adv_candidates": a["candidates"],
        "orig_error": o["error"], "adv_error": a["error"], "queries": queries, "chunk": chunk,
    }


@dataclass(frozen=True)
class _Prepared:
    """A record chunk read and (unless it is to be skipped) its static examples generated."""

    idx: int
    records: list[Record]
    skip: bool
    examples: list[Perturbed]
    errors: list[dict[str, Any]]


class Engine:
    """Runs one suite into one run directory."""

    def __init__(self, suite: Suite, out_dir: str | Path, *, executor: Executor | None = None,
                 limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
                 targets: dict[str, Target] | None = None, retry_errors: bool = True,
                 restart: bool = False) -> None:
        self.suite = suite
        self.run = RunDir(out_dir)
        self.executor = executor or LocalExecutor(1)
        self.limit = limit if limit is not None else suite.limit
        self.progress = progress or (lambda stage, done, total: None)
        self._given_targets = targets
        self.retry_errors = retry_errors
        self.restart = restart
        self.notes: list[str] = []  # what was recovered or retried, for run.json and the terminal
        self.specs: list[AttackSpec] = []
        self.fit_on: dict[AttackSpec, str | None] = {}
        for a in suite.attack:
            for point in a.expand():
                spec = AttackSpec.make(a.name, point)
                self.specs.append(spec)
                self.fit_on[spec] = a.fit_on
        self.static_specs = [s for s in self.specs if isinstance(instantiate(s), StaticAttack)]
        self.search_specs = [s for s in self.specs if isinstance(instantiate(s), SearchAttack)]
        self.generator_specs = [s for s in self.specs if isinstance(instantiate(s), PromptGenerator)]
        self.states: dict[tuple[AttackSpec, str | None], Any] = {}

    # ------------------------------------------------------------------------------------------------
    def fingerprint(self) -> str:
        import hashlib

        return hashlib.sha256(f"{self.suite.fingerprint()}|limit={self.limit}".encode()).hexdigest()[:16]

    def _check_resume(self) -> dict[str, Any] | None:
        if self.restart:
            removed = self.run.clear(keep_cache=self._cache_readable())
            if removed:
                self.notes.append(f"--restart: removed {', '.join(removed)}")
            return None
        meta = self.run.read_meta()
        if meta is None:
            return None
        if meta.get("fingerprint") != self.fingerprint():
            raise SuiteError(
                f"{self.run.path} holds a run of a different suite (or --limit): its fingerprint is "
                f"{meta.get('fingerprint')}, this suite's is {self.fingerprint()}. Use another --out "
                "directory, or --restart to start over in this one."
            )
        return meta

    def _cache_path(self) -> Path:
        return Path(self.suite.resolve(self.suite.output.cache)) if self.suite.output.cache else self.run.cache

    def _cache_readable(self) -> bool:
        path = self._cache_path()
        if not path.exists():
            return True
        try:
            with PredictionCache(path) as cache:
                cache.check()
            return True
        except sqlite3.DatabaseError:
            return False

    def _open_cache(self) -> PredictionCache:
        path = self._cache_path()
        try:
            cache = PredictionCache(path)
            cache.check()
        except sqlite3.DatabaseError as e:
            raise RunDirError(
                f"{path}: the prediction cache is damaged ({e}). Fix: {RESTART_HINT.split(' (')[0]} (a damaged "
                f"cache is removed; every prediction is asked again), or delete {path} and re-run (finished "
                "chunks are kept; only unfinished predictions are asked again)") from None
        return cache

    def _recover_parts(self) -> None:
        for chunk, why in self.run.damaged_chunks().items():
            self.run.forget_chunk(chunk)
            self.notes.append(f"chunk {chunk}: {why}; recomputed (predictions from the cache)")

    def _check_requirements(self) -> None:
        """Every attack's declared resources, checked once before the first chunk (one message, not one error
        row per record)."""
        from callbluff.resources.requirements import check_requirements

        attacks = [instantiate(s) for s in self.specs]
        lines = [f"  - {problem} (needed by {', '.join(sorted({a.name for a in attacks if name in a.requires}))})"
                 for name in requirements_of(attacks) for problem in check_requirements([name])]
        if lines:
            raise SuiteError("the suite's attacks need resources that are missing here:\n" + "\n".join(lines))

    def _fit(self, dataset: Dataset) -> None:
        """Fit every attack that needs it once per (configuration, prompt), on its ``fit_on`` corpus or on the
        run's records of that prompt; states are shipped to the workers with the work."""
        by_source: dict[str | None, list[AttackSpec]] = {}
        for spec in self.specs:
            if instantiate(spec).needs_fit:
                by_source.setdefault(self.fit_on[spec], []).append(spec)

        def note(spec: AttackSpec, pid: str | None, e: Exception) -> None:  # a prompt it cannot learn from
            self.notes.append(f"{spec.name} could not fit on prompt {pid}: {type(e).__name__}: {e}")

        for source, specs in by_source.items():
            corpus = dataset if source is None else load(self.suite.resolve_spec(source))
            records = islice(corpus, self.limit) if source is None else iter(corpus)
            self.states.update(fit_states(specs, records, dataset.prompts, default_resources(), on_error=note))
            self.progress("fit", len(self.states), None)

    def execute(self) -> RunResult:
        dataset = load(self.suite.dataset_spec(), **self.suite.dataset.options)
        self._check_tasks(dataset)
        self._check_requirements()
        previous = self._check_resume()
        self.run.create()
        cache = self._open_cache()
        self._recover_parts()
        targets = build_targets(self.suite, cache, dataset, self._given_targets)
        for t in targets.values():  # on Ray, in-process targets predict as tasks (the cache stays here)
            t.target = self.executor.remote_target(t.target)
        started = datetime.now(UTC).isoformat()
        meta: dict[str, Any] = {
            "suite": self.suite.model_dump(exclude={"base_dir"}),
            "name": self.suite.name,
            "seed": self.suite.seed,
            "limit": self.limit,
            "fingerprint": self.fingerprint(),
            "dataset": {"spec": self.suite.dataset.spec, "task": dataset.task, "prompts": sorted(dataset.prompts)},
            "attacks": [{"name": s.name, "params": instantiate(s).params_dict, "kind": instantiate(s).kind,
                         "expect": instantiate(s).expect} for s in self.specs],
            "targets": {name: {"fingerprint": t.fingerprint, "type": cfg_type(self.suite, name)}
                        for name, t in targets.items()},
            "versions": versions(),
            "started": (previous or {}).get("started", started),
            "resumed": previous is not None,
            "status": "running",
            "executor": {"kind": type(self.executor).__name__, "workers": self.executor.workers,
                         **({"address": self.executor.address} if getattr(self.executor, "address", None) else {})},
        }
        self.run.write_meta(meta)
        t0 = time.perf_counter()
        counters = {"skipped": 0, "retried": 0}
        writer = BackgroundWriter()
        try:
            try:
                self._fit(dataset)
                for prep in self._prepared_chunks(dataset):
                    if prep.skip:
                        counters["skipped"] += 1
                    else:
                        counters["retried"] += self.run.chunk_done(prep.idx)
                        self._run_chunk(prep, dataset, targets, writer)
                    self.progress("chunk", prep.idx + 1, None)
                self._run_generators(dataset, targets, writer, counters)
            finally:
                writer.close()  # every finished chunk is on disk before we go on (or re-raise)
                for t in targets.values():
                    t.close()
            if counters["retried"]:
                self.notes.append(f"retried the failed predictions of {counters['retried']} finished chunk(s)")
            result = self.finalize(dataset)
        except BaseException as e:
            interrupted = isinstance(e, KeyboardInterrupt)
            meta.update(status="interrupted" if interrupted else "failed",
                        error=None if interrupted else f"{type(e).__name__}: {e}", notes=self.notes,
                        stopped=datetime.now(UTC).isoformat())
            self.run.write_meta(meta)
            raise
        finally:
            cache.close()
        meta.update(
            status="finished", finished=datetime.now(UTC).isoformat(),
            seconds_this_session=round(time.perf_counter() - t0, 3), chunks_resumed=counters["skipped"],
            chunks_retried=counters["retried"], counts=result.counts, notes=self.notes,
            fit_states={f"{s.name} {s.params_json} prompt={pid}": instantiate(s).state_hash(st)
                        for (s, pid), st in sorted(self.states.items(), key=lambda kv: (kv[0][0].name,
                                                                                        kv[0][0].params_json,
                                                                                        str(kv[0][1])))},
            target_stats={name: {**t.stats.to_dict(), "clipped": t.check.clipped if t.check else 0}
                          for name, t in targets.items()},
        )
        meta.pop("error", None)
        result.target_stats = meta["target_stats"]
        result.notes = list(self.notes)
        self.run.write_meta(meta)
        if self.suite.output.report:
            from callbluff.report.html import write_report

            write_report(self.run.path)
        return result

    def _check_tasks(self, dataset: Dataset) -> None:
        for s in self.specs:
            attack = instantiate(s)
            if attack.task != dataset.task:
                raise SuiteError(
                    f"attack {attack.name} is for task {attack.task!r} but dataset {self.suite.dataset.spec} "
                    f"is {dataset.task!r}; pick attacks listed for {dataset.task!r} by `callbluff list`"
                )

    # -- record chunks ---------------------------------------------------------------------------------
    def _needs_run(self, idx: int) -> bool:
        if not self.run.chunk_done(idx):
            return True
        return bool(self.retry_errors and self.run.chunk_status(idx).get("prediction_errors", 0))

    def _generate(self, records: list[Record], dataset: Dataset) -> tuple[list[Perturbed], list[dict[str, Any]]]:
        prompts = dataset.prompts
        work = []
        for part in split_evenly(records, self.executor.workers * 2):
            pids = {getattr(r, "prompt_id", None) for r in part}
            work.append(GenerationTask(part, {p: prompts[p] for p in pids if p in prompts}, self.static_specs,
                                       self.suite.seed,
                                       {k: v for k, v in self.states.items() if k[1] in pids
                                        and k[0] in self.static_specs}))
        examples: list[Perturbed] = []
        errors: list[dict[str, Any]] = []
        for res in self.executor.map(generate_examples, work):
            examples.extend(res.examples)
            errors.extend(res.errors)
        return examples, errors

    def _prepared_chunks(self, dataset: Dataset) -> Iterator[_Prepared]:
        """Record chunks, each read and generated one step ahead on a background thread (prefetch), so that
        reading and generation overlap the previous chunk's target calls."""
        chunks = enumerate(chunked(dataset, self.suite.output.chunk_size, self.limit))

        def prepare() -> _Prepared | None:
            item = next(chunks, None)
            if item is None:
                return None
            idx, records = item
            if not self._needs_run(idx):
                return _Prepared(idx, records, True, [], [])
            examples, errors = self._generate(records, dataset) if self.static_specs else ([], [])
            return _Prepared(idx, records, False, examples, errors)

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="callbluff-prefetch") as pool:
            future = pool.submit(prepare)
            while (prep := future.result()) is not None:
                future = pool.submit(prepare)
                yield prep

    def _run_chunk(self, prep: _Prepared, dataset: Dataset, targets: dict[str, CachedTarget],
                   writer: BackgroundWriter) -> None:
        """Predict one chunk's originals, search, predict its adversarial inputs; the rows are built and written
        by the background writer (off the critical path: the next chunk's target calls are already running)."""
        task, records = dataset.task, prep.records
        errors = list(prep.errors)
        timings: list[dict[str, Any]] = []
        by_id = {r.id: r for r in records}
        predicted: list[tuple[str, list[Output], list[tuple[Perturbed, int]], list[Output]]] = []
        for tname, target in targets.items():
            outs = target.predict([original_input(r, task) for r in records])
            orig_by_id = {r.id: o for r, o in zip(records, outs)}
            found: list[tuple[Perturbed, int]] = [(ex, 0) for ex in prep.examples]
            for spec in self.search_specs:
                found.extend(self._search(spec, records, dataset.prompts, target, tname, orig_by_id, errors,
                                          timings))
            adv_outs = target.predict([adversarial_input(ex, by_id[ex.source_id], task) for ex, _ in found])
            predicted.append((tname, outs, found, adv_outs))
        writer.submit(self._write_record_chunk, prep.idx, task, records, predicted, errors, timings)

    def _write_record_chunk(self, idx: int, task: str, records: list[Record],
                            predicted: list[tuple[str, list[Output], list[tuple[Perturbed, int]], list[Output]]],
                            errors: list[dict[str, Any]], timings: list[dict[str, Any]]) -> None:
        by_id = {r.id: r for r in records}
        originals_rows: list[dict[str, Any]] = []
        example_rows: list[dict[str, Any]] = []
        for tname, outs, found, adv_outs in predicted:
            orig_by_id = {}
            for r, out in zip(records, outs):
                orig_by_id[r.id] = out
                gold, answers, answer_type = gold_of(r)
                originals_rows.append({
                    "source_id": r.id, "prompt_id": getattr(r, "prompt_id", None), "task": task, "gold": gold,
                    "gold_answers": json.dumps(answers) if answers else None, "answer_type": answer_type,
                    "target": tname, **_output_fields(out), "chunk": idx,
                })
            for (ex, queries), out in zip(found, adv_outs):
                example_rows.append(_example_row(ex, by_id[ex.source_id], task, tname, orig_by_id[ex.source_id],
                                                 out, queries, idx))
        self._write_chunk(idx, by_id, originals_rows, example_rows, errors, timings)

    def _search(self, spec: AttackSpec, records: Sequence[Record], prompts: dict[str, Prompt], target: Target,
                tname: str, originals: dict[str, Output],
                errors: list[dict[str, Any]], timings: list[dict[str, Any]]) -> list[tuple[Perturbed, int]]:
        """A model-in-the-loop attack on every record (:func:`~callbluff.engine.search.search_one`): as Ray tasks
        when the executor can run them against this target (:meth:`_search_tasks`), else
        ``output.search_concurrency`` searches at once in driver threads over the shared cached target. Results
        are in record order, whatever runs them. Each search's wall time goes to ``timings`` (timings.json),
        never into the examples: they stay the same bytes for a seed."""
        attack = instantiate(spec)
        assert isinstance(attack, SearchAttack)
        seed = self.suite.seed
        results = self._search_tasks(spec, records, prompts, target, tname, originals)
        if results is None:
            res = default_resources()
            prefetch(attack, records, res)
            results = self.executor.map_concurrent(
                lambda record: search_one(attack, record, target, tname, seed, prompts, self.states, spec,
                                          originals.get(record.id), res),
                records, self.suite.output.search_concurrency)
        out: list[tuple[Perturbed, int]] = []
        for found, error, timing in results:
            out.extend(found)
            timings.append(timing)
            if error is not None:
                errors.append(error)
        return out

    def _search_tasks(self, spec: AttackSpec, records: Sequence[Record], prompts: dict[str, Prompt], target: Target,
                      tname: str, originals: dict[str, Output]) -> list[SearchResult] | None:
        """The searches as Ray tasks, when the executor is Ray and ``target`` is a cached in-process target it
        ships to workers; None otherwise. Exactly ``workers`` pieces (contiguous runs of records): a task waiting
        on the cache actor releases its CPU to Ray, which would start any queued piece in a new worker process
        (importing everything and loading the model again), so none is left queued. The cache journal is merged
        before (the actor sees what the driver committed) and after (the driver sees the searches' queries)."""
        from callbluff.engine.ray_executor import RayExecutor, RemoteTarget

        ex = self.executor
        if not (isinstance(ex, RayExecutor) and isinstance(target, CachedTarget)
                and isinstance(target.target, RemoteTarget)) or not records:
            return None
        cache = target.cache
        if cache is not None:
            cache.merge()
        job = SearchJob(spec=spec, tname=tname, seed=self.suite.seed, prompts=prompts,
                        states={k: v for k, v in self.states.items() if k[0] == spec},
                        target_ref=target.target.ref, target_key=target.target.ref.hex(),
                        cache=ex.cache_proxy(cache), batch_size=target.batch_size, check=target.check)
        job_ref = ex.put(job)
        pieces = [SearchPiece(job_ref, part, [originals.get(r.id) for r in part])
                  for part in split_evenly(list(records), ex.workers) if part]
        results: list[SearchResult] = []
        for found, counts in ex.map_all(run_search_piece, pieces):
            results.extend(found)
            target.add_counts(counts)
        if cache is not None:
            cache.merge()
        return results

    def _write_chunk(self, idx: int, by_id: dict[str, Record], originals_rows: list[dict[str, Any]],
                     example_rows: list[dict[str, Any]], errors: list[dict[str, Any]],
                     timings: Sequence[dict[str, Any]] = ()) -> None:
        """Write one chunk's error list, status and parts (the examples part last: it marks the chunk done)."""
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
        self.run.write_chunk(idx, originals_rows, example_rows, status)

    # -- generator chunks --------------------------------------------------------------------------------
    def _generator_work(self, dataset: Dataset) -> list[GeneratorTask]:
        """The prompt-level generators' answers cut into pieces of at most ``chunk_size`` (deterministic order:
        configuration, prompt, answer index), so that they resume like record chunks."""
        size = self.suite.output.chunk_size
        work = []
        for spec in self.generator_specs:
            count = int(instantiate(spec).params.count)  # type: ignore[attr-defined]
            for pid in sorted(dataset.prompts):
                if (spec, pid) not in self.states:
                    continue  # could not fit on this prompt (a note says why)
                for start in range(0, count, size):
                    work.append(GeneratorTask(spec, dataset.prompts[pid], self.states[(spec, pid)], self.suite.seed,
                                              start, min(count, start + size)))
        return work

    def _run_generators(self, dataset: Dataset, targets: dict[str, CachedTarget], writer: BackgroundWriter,
                        counters: dict[str, int]) -> None:
        work = self._generator_work(dataset)
        for k, piece in enumerate(work):
            idx = GENERATOR_CHUNK0 + k
            if not self._needs_run(idx):
                counters["skipped"] += 1
                continue
            counters["retried"] += self.run.chunk_done(idx)
            [result] = list(self.executor.map(generate_prompt_examples, [piece]))
            example_rows: list[dict[str, Any]] = []
            for tname, target in targets.items():
                outs = target.predict([Input(dataset.task, ex.text, ex.prompt_id) for ex in result.examples])
                for ex, out in zip(result.examples, outs):
                    example_rows.append(_example_row(ex, None, dataset.task, tname, None, out, 0, idx))
            writer.submit(self._write_chunk, idx, {}, [], example_rows, list(result.errors))
            self.progress("generator chunk", k + 1, len(work))

    def finalize(self, dataset: Dataset) -> RunResult:
        """Merge the chunk parts into examples.parquet / originals.parquet, write errors.jsonl and metrics.json,
        count every input; all in one pass that reads each part once (:class:`~callbluff.engine.finalize.RunTally`)
        and holds one part at a time, so memory does not grow with the number of records (issue 15).

        Invariant (issue 8): for each target, every original and every adversarial input is exactly one of a
        valid prediction or an error row; ``counts`` says so and the numbers add up.
        """
        from callbluff.engine.finalize import RunTally
        from callbluff.engine.metrics_rows import accumulated_metrics, qa_metrics

        gen_errors = self._generation_errors()
        expectations = {s.name: instantiate(s).expect for s in self.specs}
        tmp = self.run.errors.with_name(self.run.errors.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for e in gen_errors:  # attack failures first, then failed predictions (originals, adversarial)
                fh.write(json.dumps(e, sort_keys=True, default=str) + "\n")
            tally = RunTally(dataset.task, dataset.prompts, fh)
            self.run.write_merged("originals", self.run.originals, tally.add_originals)
            self.run.write_merged("examples", self.run.examples, tally.add_examples)
        os.replace(tmp, self.run.errors)
        if tally.accumulator is not None:
            metrics = accumulated_metrics(tally.accumulator, tally.targets, gen_errors, expectations)
        else:
            metrics = qa_metrics(self.run, dataset.task, tally.targets, gen_errors, expectations)
        write_atomic(self.run.metrics, json.dumps(metrics, indent=2, default=_json_default))
        self._write_timings()
        counts = tally.counts(gen_errors, len(self.run.done_chunks()))
        counts["errors"] = len(gen_errors) + tally.n_error_lines
        return RunResult(self.run.path, metrics, counts)

    def _write_timings(self) -> None:
        """timings.json: per (target, attack, params), the searches' wall time per attacked record (Jia & Liang's
        cost per question: ``seconds_mean`` / ``seconds_median`` / ``seconds_max`` / ``seconds_total``) and
        their target queries. Wall-clock figures depend on the machine, so they live here and not in
        metrics.json. Absent when the run has no search attack."""
        groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for idx in self.run.done_chunks():
            p = self.run.timings_path(idx)
            if p.exists():
                for t in json.loads(p.read_text(encoding="utf-8")):
                    groups.setdefault((t["target"], t["attack"], t["params"]), []).append(t)
        if not groups:
            self.run.timings.unlink(missing_ok=True)
            return
        rows = []
        for (tname, attack, params), ts in sorted(groups.items()):
            secs = [float(t["seconds"]) for t in ts]
            rows.append({"target": tname, "attack": attack, "params": params, "n": len(secs),
                         "seconds_mean": statistics.fmean(secs), "seconds_median": statistics.median(secs),
                         "seconds_max": max(secs), "seconds_total": round(sum(secs), 4),
                         "queries_total": int(sum(int(t["queries"]) for t in ts))})
        write_atomic(self.run.timings, json.dumps(rows, indent=2))

    def _generation_errors(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for idx in self.run.done_chunks():
            p = self.run.generr_path(idx)
            if p.exists():
                out.extend(json.loads(p.read_text(encoding="utf-8")))
        return out


def _json_default(o: Any) -> Any:
    import math

    import numpy as np

    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        v = float(o)
        return None if math.isnan(v) else v
    return str(o)


def cfg_type(suite: Suite, name: str) -> str:
    for t in suite.target:
        if t.name == name:
            return t.type
    return "python"


_VERSIONED = {"numpy": "numpy", "pandas": "pandas", "scikit-learn": "sklearn", "spacy": "spacy", "torch": "torch",
              "transformers": "transformers", "httpx": "httpx"}
"""Distributions whose versions go into run.json, with their import names."""


def versions() -> dict[str, str]:
    """Versions of Python, callbluff and the main libraries (run.json provenance); see :func:`_versions`."""
    return dict(_versions())


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: an already imported module's ``__version__``, else the installed distribution's
    metadata (parsing a large METADATA file, as torch's, costs tens of milliseconds)."""
    import importlib.metadata as md

    out = {"callbluff": __version__, "python": platform.python_version()}
    for dist, module in _VERSIONED.items():
        loaded = getattr(sys.modules.get(module), "__version__", None)
        if isinstance(loaded, str):
            out[dist] = loaded
            continue
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            pass
    return tuple(out.items())


def run_suite(suite: Suite, out_dir: str | Path, *, workers: int = 1, limit: int | None = None,
              progress: Callable[[str, int, int | None], None] | None = None, retry_errors: bool = True,
              restart: bool = False, executor: str = "local", ray_address: str | None = None) -> RunResult:
    """Run ``suite`` into ``out_dir`` with ``executor`` ``local`` (``workers`` processes) or ``ray`` (a local
    Ray runtime of ``workers`` CPUs, or the cluster at ``ray_address``); resumes if possible; recorded
    prediction errors are retried unless ``retry_errors`` is False; ``restart`` starts over."""
    with make_executor(executor, workers, ray_address) as ex:  # type: ignore[attr-defined]
        return Engine(suite, out_dir, executor=ex, limit=limit, progress=progress, retry_errors=retry_errors,
                      restart=restart).execute()
