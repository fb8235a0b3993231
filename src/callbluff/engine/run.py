"""The engine: plan -> fit -> generate -> predict originals -> search -> predict adversarials -> finalize.

The only module that wires datasets, attacks, targets and metrics together (docs/design.md "Data flow"). Its
rooms: :mod:`~callbluff.engine.plan` (attack configurations, fingerprint, targets),
:mod:`~callbluff.engine.generate` (the one generation path: fit, record chunks, generator pieces),
:mod:`~callbluff.engine.search` (the one search runner), :mod:`~callbluff.engine.chunks` (a chunk's predictions
and parts), :mod:`~callbluff.engine.manifest` (run.json), :mod:`~callbluff.engine.store` (the run directory; its lock in
:mod:`~callbluff.engine.runlock`) and :mod:`~callbluff.engine.finalize` (merged files, errors, metrics, counts).
The :class:`Engine` holds two objects of its own: a :class:`~callbluff.engine.resume.RunDirectory` (resume, refuse
or restart; the prediction cache) and a :class:`~callbluff.engine.provenance.TargetWatch` (the targets' identity,
pre-flight and what was reused).

The engine writes no report: ``on_finished(run_dir)``, when given, is called once the run is finished and its
records released (the ``callbluff run`` command and :func:`callbluff.api.run_suite` pass the report writer).

Records stream in chunks of ``output.chunk_size``; while one chunk's predictions run, the next chunk is read and
its static examples generated in the background (the target's time hides the harness's). Each finished chunk is
written atomically to the run directory and every prediction is committed to the SQLite cache before the next
call to its target, so a run killed at any point and started again into the same directory recomputes nothing
it finished and repeats at most the calls in flight.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from itertools import islice
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from callbluff.datasets.base import Dataset, load
from callbluff.engine.chunks import ChunkRunner
from callbluff.engine.executor import Executor, LocalExecutor, make_executor
from callbluff.engine.finalize import RunResult, finalize
from callbluff.engine.generate import Generation, MissingResources
from callbluff.engine.limit import Limited, limited
from callbluff.engine.manifest import Manifest
from callbluff.engine.plan import Plan, build_targets
from callbluff.engine.resume import RunDirectory
from callbluff.engine.provenance import TargetUnavailable, TargetWatch, preflight_records
from callbluff.engine.search import SearchRunner
from callbluff.engine.store import BackgroundWriter, RunDir, local_io_error
from callbluff.engine.suite import Suite, SuiteError, load_suite, parse_suite
from callbluff.engine.verdicts import Judge
from callbluff.records import Record
from callbluff.engine.work import AttackSpec, instantiate
from callbluff.targets.base import Target
from callbluff.targets.config import TargetConfigError, check_environment
from callbluff.targets.wrappers import CachedTarget

__all__ = ["ChunkCounters", "Engine", "RunResult", "TargetUnavailable", "preflight_records", "run_suite"]


@dataclass
class ChunkCounters:
    """What a run did with the chunks it found finished: ``skipped`` (resumed) and ``retried`` (finished, but
    run again for their failed predictions)."""

    skipped: int = 0
    retried: int = 0


class Engine:
    """Runs one suite into one run directory."""

    def __init__(self, suite: Suite, out_dir: str | Path, *, executor: Executor | None = None,
                 limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
                 targets: Mapping[str, Target | Callable[..., Any]] | None = None, retry_errors: bool = True,
                 restart: bool = False, on_finished: Callable[[Path], None] | None = None) -> None:
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise SuiteError(f"--limit {limit!r}: the number of records to run must be 1 or more"
                             + ("; --limit 0 would measure nothing" if limit == 0 else ""))
        self.suite = suite
        self.run = RunDir(out_dir)
        self.executor = executor or LocalExecutor(1)
        self.limit = limit if limit is not None else suite.limit
        self.progress = progress or (lambda stage, done, total: None)
        self._given_targets = targets
        self.on_finished = on_finished
        self.notes: list[str] = []  # what was recovered or retried, for run.json and the terminal
        self.plan = Plan.of(suite, self.limit)
        self._limited: Iterable[Record] | None = None
        self.specs = self.plan.specs
        self.run.fingerprint = self.fingerprint()  # in every chunk status: another run's parts told apart
        self.directory = RunDirectory(self.run, suite, fingerprint=self.fingerprint(), limit=self.limit,
                                      restart=restart, retry_errors=retry_errors, notes=self.notes)
        self.watch = TargetWatch(self.run, suite, fingerprint=self.fingerprint(), notes=self.notes)

    def fingerprint(self) -> str:
        return self.plan.fingerprint()

    # -- the steps ----------------------------------------------------------------------------------------
    def _generation(self, dataset: Dataset) -> Generation:
        """The one generation path for this run, with every configuration's resources checked before any work
        (one message, not one error row per record)."""
        gen = Generation(self.specs, dataset.prompts, seed=self.suite.seed, executor=self.executor,
                         chunk_size=self.suite.output.chunk_size)
        try:
            gen.check_resources()
        except MissingResources as e:
            raise SuiteError(str(e).replace("the attacks need", "the suite's attacks need", 1)) from None
        return gen

    def _fit(self, gen: Generation, dataset: Dataset) -> None:
        """Every configuration that needs it, fitted once per prompt on its ``fit_on`` corpus or on the run's
        records of that prompt; a prompt a configuration cannot learn from is a note, and that configuration
        makes nothing there."""
        corpora: dict[str, Dataset] = {}  # each fit_on corpus loaded once
        sources: dict[AttackSpec, Dataset] = {}
        for spec, src in self.plan.fit_on.items():
            if src is not None and instantiate(spec).needs_fit:
                if src not in corpora:
                    corpora[src] = load(self.suite.resolve_spec(src))
                sources[spec] = corpora[src]

        def note(spec: AttackSpec, pid: str | None, e: Exception) -> None:
            self.notes.append(f"{spec.name} could not fit on prompt {pid}: {type(e).__name__}: {e}")

        gen.fit(self._records(dataset), sources=sources, on_error=note)
        self.progress("fit", len(gen.states), None)

    def execute(self) -> RunResult:
        dataset = load(self.suite.dataset_spec(), **self.suite.dataset.options)
        self.plan.check_tasks(dataset)
        self._check_measures_something(dataset)
        self._check_environment()
        gen = self._generation(dataset)
        try:
            with self.run.lock() as lock:  # before anything in the directory is read or written; released at the end
                if lock.stale:
                    self.notes.append(f"took over the lock left by a process that is gone (pid "
                                      f"{lock.stale.get('pid')}, started {lock.stale.get('started')})")
                result = self._execute(dataset, gen)
                # the kept records are released before the caller's report reads its example sample, so the two
                # do not add up in the run's peak memory (docs/scale-out.md: 200,000 short answers)
                del dataset, gen
                self._limited = None
                if self.on_finished is not None:
                    self.on_finished(self.run.path)
                return result
        except OSError as e:  # targets' errors are error rows: an OSError here is the machine's own I/O
            raise local_io_error(e, self.run.path) from e

    def _records(self, dataset: Dataset) -> Iterable[Record]:
        """The run's records: all, or what ``limit`` takes across the prompts (:mod:`callbluff.engine.limit`),
        which a note says."""
        if self._limited is None:
            self._limited = limited(dataset, self.limit)
            if isinstance(self._limited, Limited):
                self.notes.append(self._limited.describe())
        return self._limited

    def _check_environment(self) -> None:
        """Every ``${VAR}`` the suite's targets read from the environment is set, before the run directory is
        touched (exit 2 naming the key and the variable)."""
        if self._given_targets:
            return
        for i, cfg in enumerate(self.suite.target):
            try:
                check_environment(cfg, f"target[{i}]")
            except TargetConfigError as e:
                raise SuiteError(f"key `target[{i}]` ({cfg.name}): {e}") from None

    def _check_measures_something(self, dataset: Dataset) -> None:
        """A run that would measure nothing is bad input (exit 2 with the reason), not a green exit 0: a suite
        without targets, or data without a single record (e.g. a CSV file with only its header)."""
        if not (self._given_targets or self.suite.target):
            raise SuiteError("the suite has no target, so the run would measure nothing; add the system under "
                             "test as a [[target]] table (README, 'Targets')")
        if next(iter(islice(dataset, 1)), None) is None:
            raise SuiteError(f"dataset {self.suite.dataset.spec} has no records (an empty file, or only a header "
                             "line), so the run would measure nothing")

    def _execute(self, dataset: Dataset, gen: Generation) -> RunResult:
        previous = self.directory.check_resume()
        self.run.create()
        cache = self.directory.open_cache()
        targets = build_targets(self.suite, cache, dataset, self._given_targets)
        self.watch.identify(targets, previous)
        self.directory.recover_parts()
        for t in targets.values():  # on Ray, in-process targets predict as tasks (the cache stays here)
            t.target = self.executor.remote_target(t.target)
        manifest = Manifest(self.run)
        manifest.start(suite=self.suite, fingerprint=self.fingerprint(), limit=self.limit, task=dataset.task,
                       prompts=sorted(dataset.prompts), specs=self.specs, targets=targets, executor=self.executor,
                       previous=previous)
        t0 = time.perf_counter()
        counters = ChunkCounters()
        writer = BackgroundWriter()
        try:
            try:
                if previous is None:  # a fresh run: a dead target is found before the fit; else before a chunk
                    self.watch.preflight(dataset.task, self._records(dataset), targets)
                self._fit(gen, dataset)
                self._chunks(gen, dataset, targets, writer, counters)
            finally:  # every finished chunk on disk before we go on, and every target closed, whatever fails first
                close_all([writer.close, *(t.close for t in targets.values())])
            if counters.retried:
                self.notes.append(f"retried the failed predictions of {counters.retried} finished chunk(s)")
            result = finalize(self.run, dataset.task, dataset.prompts, self.plan.expectations())
            self.notes.extend(result.notes)  # examples made by a documented fallback, per cause
        except BaseException as e:
            manifest.stop(e, self.notes)
            raise
        finally:
            cache.close()
        target_stats = {name: _scrubbed(t, {**t.stats.to_dict(), "clipped": t.check.clipped if t.check else 0})
                        for name, t in targets.items()}
        predictions = self.watch.provenance(targets)
        manifest.finish(seconds=time.perf_counter() - t0, resumed=counters.skipped, retried=counters.retried,
                        counts=result.counts, notes=self.notes, states=gen.states, target_stats=target_stats,
                        predictions=predictions)
        result.target_stats = target_stats
        result.predictions = predictions
        result.notes = list(self.notes)
        return result

    def _chunks(self, gen: Generation, dataset: Dataset, targets: dict[str, CachedTarget], writer: BackgroundWriter,
                counters: ChunkCounters) -> None:
        """Record chunks (originals, static examples, searches), then generator chunks; a finished chunk is
        skipped (resume) unless it has failed predictions to retry."""
        searches = SearchRunner(gen.search, seed=self.suite.seed, prompts=dataset.prompts, states=gen.states,
                                executor=self.executor, concurrency=self.suite.output.search_concurrency,
                                task=dataset.task) if gen.search else None
        judge = Judge(dataset.task, self.plan.expectations(), dataset.prompts)
        runner = ChunkRunner(self.run, dataset.task, targets, searches, writer, judge)
        n_pieces = len(gen.generator_work())
        for chunk in gen.chunks(self._records(dataset), skip=lambda i: not self.directory.needs_run(i)):
            if chunk.skipped:
                counters.skipped += 1
                self.watch.reused_chunk(chunk.index)
            else:
                if not chunk.is_generator:
                    self.watch.preflight(dataset.task, chunk.records, targets)
                counters.retried += self.run.chunk_done(chunk.index)
                (runner.generator if chunk.is_generator else runner.records)(chunk)
            if not chunk.is_generator:
                self.progress("chunk", chunk.index.n + 1, None)
            elif not chunk.skipped:
                self.progress("generator chunk", chunk.index.n + 1, n_pieces)


def _scrubbed(target: CachedTarget, stats: dict[str, Any]) -> dict[str, Any]:
    """``stats`` with the target's secrets scrubbed from every string (a chat server may echo its key into the
    ``model`` or ``finish_reason`` values its statistics keep), before they reach run.json."""
    scrub = getattr(target.check, "scrub_value", None)
    return scrub(stats) if callable(scrub) else stats


def close_all(closers: list[Callable[[], None]]) -> None:
    """Call every closer, even after one has failed (a command target left open aborts the interpreter at
    exit), then re-raise the first failure."""
    first: BaseException | None = None
    for close in closers:
        try:
            close()
        except BaseException as e:  # noqa: BLE001 - re-raised below, once the others are closed
            if first is None:
                first = e
    if first is not None:
        raise first


def run_suite(suite: Suite | Mapping[str, Any] | str | Path, out_dir: str | Path, *, workers: int = 1,
              limit: int | None = None, progress: Callable[[str, int, int | None], None] | None = None,
              retry_errors: bool = True, restart: bool = False, executor: str = "local",
              ray_address: str | None = None,
              targets: Mapping[str, Target | Callable[..., Any]] | None = None,
              on_finished: Callable[[Path], None] | None = None) -> RunResult:
    """Run ``suite`` into ``out_dir`` with ``executor`` ``local`` (``workers`` processes) or ``ray`` (a local
    Ray runtime of ``workers`` CPUs, or the cluster at ``ray_address``); resumes if possible; recorded
    prediction errors are retried unless ``retry_errors`` is False; ``restart`` starts over.

    ``suite``: a :class:`Suite`, a suite file's path, or its tables as a dict (as in a notebook). ``targets``: the
    systems under test given from Python instead of the suite's ``[[target]]`` tables, by name: any Target, or a
    plain function ``text -> score`` (or answer), e.g. ``run_suite(suite, "runs/mine", targets={"mine": f})``;
    wrap it in :class:`~callbluff.targets.callables.CallableTarget` for ``batched`` or ``pass_input``.
    ``on_finished(run_dir)`` is called once the run is finished (:func:`callbluff.api.run_suite` writes the report
    there); this function writes none."""
    if isinstance(suite, (str, Path)):
        suite = load_suite(suite)
    elif isinstance(suite, Mapping):
        suite = parse_suite(dict(suite), source="run_suite", base_dir=Path.cwd())
    with make_executor(executor, workers, ray_address) as ex:
        return Engine(suite, out_dir, executor=ex, limit=limit, progress=progress, retry_errors=retry_errors,
                      restart=restart, targets=targets, on_finished=on_finished).execute()
