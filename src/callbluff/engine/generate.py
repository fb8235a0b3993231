"""The one generation path: attack configurations x records -> adversarial examples, in chunks.

:func:`generate` (and :class:`Generation`, its parts for the engine) is the only place that instantiates attack
configurations, checks the resources their *instances* need, fits each configuration once per prompt, cuts the
records into chunks, runs the static attacks over each chunk on the executor (one chunk ahead on a background
thread), cuts prompt-level generators' answers into pieces, and applies the failure policy (an attack failing on
one record, or a generator piece failing, is an error entry naming the record and cause, never a crash). The
engine, ``callbluff generate``, ``augment``, the defence battery, the conformance kit, the benchmarks and the
findings scripts all generate through it; model-in-the-loop searches run through the engine's one search
runner (:func:`callbluff.engine.search.search_one`), never here.

The work units an executor runs are :class:`GenerationTask` (the static attacks over a batch of records) and
:class:`GeneratorTask` (answers ``start .. stop-1`` of one prompt-level generator for one prompt). Both take the
fit states computed once per (attack configuration, prompt), and both are pure given the seed, so any split of
the work over chunks, workers or executors gives the same bytes.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any, Literal

from callbluff.attacks.base import Attack, PromptGenerator, SearchAttack, StaticAttack
from callbluff.engine.chunk_id import ChunkId
from callbluff.engine.executor import Executor, LocalExecutor
from callbluff.engine.work import (
    AttackSpec,
    FitStates,
    GenerationResult,
    GenerationTask,
    GeneratorTask,
    fit_order,
    fit_states,
    fit_task,
    fit_tasks,
    generate_examples,
    generate_prompt_examples,
    instantiate,
)
from callbluff.engine.limit import limited
from callbluff.iterutil import chunked, split_weighted
from callbluff.records import Perturbed, Prompt, Record, record_size
from callbluff.resources.context import default_resources
from callbluff.resources.requirements import check_requirements

__all__ = ["AttackSpec", "Chunk", "ChunkId", "Generation", "GenerationResult", "MissingResources",
           "fit_states", "generate", "instantiate"]

@dataclass(frozen=True)
class Chunk:
    """One piece of generated work, in the order :meth:`Generation.chunks` yields them.

    ``index`` is a :class:`~callbluff.engine.chunk_id.ChunkId`: record chunks and prompt-level generator pieces are
    each numbered from 0 in their own id space;
    ``records`` are the chunk's records (empty for a generator piece); ``skipped`` chunks were not generated
    because the caller's ``skip`` said they are done (their records are still given, for counting)."""

    index: ChunkId
    records: list[Record]
    examples: list[Perturbed]
    errors: list[dict[str, Any]]
    skipped: bool = False

    @property
    def is_generator(self) -> bool:
        return self.index.is_generator


PARALLEL_FIT_MAX_RECORDS = 50_000
"""Above this many records the fit step stays in this process: each worker's task would carry every record
(pickled), which for a large dataset costs more memory and time than fitting side by side saves."""


class MissingResources(ValueError):
    """Attack configurations need resources that are not usable here (one line per problem, with the fix)."""


class Generation:
    """Attack configurations prepared for generation over one dataset's prompts (see the module docstring).

    ``specs`` may include search attacks: they are instantiated, checked and fitted here (the engine's search
    runner reads :attr:`states`), but only static attacks and prompt-level generators make examples here.
    ``chunk_size`` is the number of records per record chunk and of answers per generator piece. The failure
    policy ``failures``: ``record`` (an attack failing on one record, or a generator piece failing, becomes an
    error entry of its chunk and the rest goes on) or ``raise`` (the exception propagates: the conformance
    kit)."""

    def __init__(self, specs: Sequence[AttackSpec], prompts: Mapping[str, Prompt], *, seed: int,
                 executor: Executor | None = None, res: Any = None, chunk_size: int = 256,
                 allow_search: bool = True, failures: Literal["record", "raise"] = "record") -> None:
        if chunk_size < 1:
            raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
        self.specs = list(dict.fromkeys(specs))
        self.prompts = prompts
        self.seed = seed
        self.executor: Executor = executor if executor is not None else LocalExecutor(1)
        self.res = res
        self.chunk_size = chunk_size
        if failures not in ("record", "raise"):
            raise ValueError(f"failures must be 'record' or 'raise', got {failures!r}")
        self.raise_errors = failures == "raise"
        self.attacks: dict[AttackSpec, Attack] = {s: instantiate(s) for s in self.specs}
        searches = [a.name for a in self.attacks.values() if isinstance(a, SearchAttack)]
        if searches and not allow_search:
            raise ValueError(f"{', '.join(dict.fromkeys(searches))} is model-in-the-loop: it needs a target; use "
                             "`callbluff run` with a suite")
        self.static = [s for s, a in self.attacks.items() if isinstance(a, StaticAttack)]
        self.search = [s for s, a in self.attacks.items() if isinstance(a, SearchAttack)]
        self.generators = [s for s, a in self.attacks.items() if isinstance(a, PromptGenerator)]
        self.states: dict[tuple[AttackSpec, str | None], Any] = {}

    def missing_resources(self) -> list[str]:
        """One line per resource the configurations' *instances* need and cannot use here (an instance may need
        less than its class, e.g. DPAEG without typos), naming the attacks that need it; [] when all are
        usable."""
        needed: dict[str, list[str]] = {}
        for a in self.attacks.values():
            for name in a.requires:
                needed.setdefault(name, [])
                if a.name not in needed[name]:
                    needed[name].append(a.name)
        return [f"{problem} (needed by {', '.join(sorted(users))})"
                for name, users in needed.items() for problem in check_requirements([name])]

    def check_resources(self) -> None:
        """Raise :class:`MissingResources` listing every missing resource (before any work)."""
        lines = self.missing_resources()
        if lines:
            raise MissingResources("the attacks need resources that are missing here:\n"
                                   + "\n".join(f"  - {line}" for line in lines))

    def fit(self, records: Iterable[Record], *, sources: Mapping[AttackSpec, Iterable[Record]] | None = None,
            on_error: Callable[[AttackSpec, str | None, Exception], None] | None = None) -> None:
        """The fit step (attack contract v2): every configuration that needs it, once per prompt, on that
        prompt's ``records`` (or on ``sources[spec]`` for a configuration given its own corpus). With
        ``on_error`` a prompt a configuration cannot learn from is reported and left out (its generator makes
        nothing there); else the exception propagates."""
        sources = sources or {}
        fitting = [s for s in self.specs if self.attacks[s].needs_fit]
        own = [s for s in fitting if s not in sources]
        res = self.res if self.res is not None else default_resources()
        recs = list(records) if own and self.executor.workers > 1 and self.res is None else None
        waves = (fit_tasks(own, recs, self.prompts, os.getpid() if self.executor.workers_fork else 0)
                 if recs is not None and len(recs) <= PARALLEL_FIT_MAX_RECORDS else [])
        if sum(len(w) for w in waves) > 1:
            # side by side (the fits are pure: the same states in any process): each wave's first task here, the
            # others on workers; the parses the workers made come back here, for the workers forked later
            got: dict[tuple[AttackSpec, str | None], Any] = {}
            errors: list[tuple[AttackSpec, str | None, Exception]] = []
            for wave in waves:
                for states, errs, parses in self.executor.map_beside(fit_task, wave):
                    got.update(states)
                    errors += errs
                    if parses is not None:
                        res.import_dependency_docs(parses)
            key = fit_order(own, self.prompts)  # states and errors in the order of one process
            self.states.update(sorted(got.items(), key=lambda kv: key(kv[0])))
            for spec, pid, e in sorted(errors, key=lambda x: key(x[:2])):
                if on_error is None:
                    raise e
                on_error(spec, pid, e)
        elif own:
            self.states.update(fit_states(own, records if recs is None else recs, self.prompts, res,
                                          on_error=on_error))
        by_source: dict[int, tuple[Iterable[Record], list[AttackSpec]]] = {}
        for s in fitting:
            if s in sources:
                by_source.setdefault(id(sources[s]), (sources[s], []))[1].append(s)
        for corpus, specs in by_source.values():
            self.states.update(fit_states(specs, corpus, self.prompts, res, on_error=on_error))

    def _states_for(self, specs: Sequence[AttackSpec], pids: set[str | None]) -> FitStates:
        return {k: v for k, v in self.states.items() if k[1] in pids and k[0] in specs}

    def generate_records(self, records: Sequence[Record]) -> tuple[list[Perturbed], list[dict[str, Any]]]:
        """The static attacks on ``records``, split over the executor's workers; examples in (record, attack)
        order whatever the split."""
        if not self.static or not records:
            return [], []
        work = []
        parts = self.executor.workers * 4 if self.executor.workers > 1 else 1  # 4 per worker: no long tail
        for part in split_weighted(records, parts, record_size):  # of near-equal text
            pids = {getattr(r, "prompt_id", None) for r in part}
            work.append(GenerationTask(part, {p: self.prompts[p] for p in pids if p in self.prompts}, self.static,
                                       self.seed, self._states_for(self.static, pids), self.raise_errors))
        examples: list[Perturbed] = []
        errors: list[dict[str, Any]] = []
        for result in self.executor.map(generate_examples, work):
            examples.extend(result.examples)
            errors.extend(result.errors)
        return examples, errors

    def record_chunks(self, records: Iterable[Record], *, limit: int | None = None,
                      skip: Callable[[ChunkId], bool] | None = None, ahead: bool = True) -> Iterator[Chunk]:
        """The first ``limit`` records in chunks of ``chunk_size``, each with its static examples; a chunk for
        which ``skip(index)`` is true is yielded unread by the attacks (``skipped``). With ``ahead`` the next
        chunks are generated on background threads while the caller works on this one: one, or two when the
        executor has several workers, so that they take the next chunk's tasks as soon as they finish this
        one's (no worker waits for the slowest task of a chunk); chunks are yielded in order."""
        # records are read and ``skip`` asked in the caller's thread; only generation runs in the background
        chunks = ((idx, recs, skip is not None and skip(idx))
                  for idx, recs in ((ChunkId.records(n), recs)
                                    for n, recs in enumerate(chunked(records, self.chunk_size, limit))))

        def prepare(idx: ChunkId, recs: list[Record], skipped: bool) -> Chunk:
            if skipped:
                return Chunk(idx, recs, [], [], skipped=True)
            examples, errors = self.generate_records(recs)
            return Chunk(idx, recs, examples, errors)

        if not ahead:
            for item in chunks:
                yield prepare(*item)
            return
        depth = 2 if self.executor.workers > 1 else 1
        with ThreadPoolExecutor(max_workers=depth, thread_name_prefix="callbluff-prefetch") as pool:
            pending = deque(pool.submit(prepare, *item) for item in islice(chunks, depth))
            while pending:
                chunk = pending.popleft().result()
                pending.extend(pool.submit(prepare, *item) for item in islice(chunks, 1))
                yield chunk

    def generator_work(self, prompt_ids: Iterable[str] | None = None) -> list[GeneratorTask]:
        """The prompt-level generators' answers cut into pieces of at most ``chunk_size`` (deterministic order:
        configuration, prompt, answer index); a (configuration, prompt) that could not fit is left out."""
        pids = sorted(self.prompts) if prompt_ids is None else sorted(set(prompt_ids) & set(self.prompts))
        work = []
        for spec in self.generators:
            count = int(self.attacks[spec].params.count)
            for pid in pids:
                if (spec, pid) not in self.states:
                    continue
                for start in range(0, count, self.chunk_size):
                    work.append(GeneratorTask(spec, self.prompts[pid], self.states[(spec, pid)], self.seed, start,
                                              min(count, start + self.chunk_size), self.raise_errors))
        return work

    def generator_chunks(self, *, prompt_ids: Iterable[str] | None = None,
                         skip: Callable[[ChunkId], bool] | None = None) -> Iterator[Chunk]:
        """The generator pieces as chunks (``ChunkId.generator(0)``, ``(1)``, ...; ``skip`` as for records);
        up to ``workers`` pieces run at once, yielded in order."""
        work = list(enumerate(self.generator_work(prompt_ids)))
        todo = [(k, piece) for k, piece in work if not (skip is not None and skip(ChunkId.generator(k)))]
        results = dict(zip((k for k, _ in todo), self.executor.map(generate_prompt_examples, [p for _, p in todo])))
        for k, _ in work:
            result = results.get(k)
            if result is None:
                yield Chunk(ChunkId.generator(k), [], [], [], skipped=True)
            else:
                yield Chunk(ChunkId.generator(k), [], result.examples, list(result.errors))

    def chunks(self, records: Iterable[Record], *, limit: int | None = None,
               skip: Callable[[ChunkId], bool] | None = None, ahead: bool = True,
               prompt_ids: Iterable[str] | None = None) -> Iterator[Chunk]:
        """Record chunks (with the static attacks' examples; a run without static attacks still reads its
        records: the engine predicts their originals and searches them), then generator pieces."""
        yield from self.record_chunks(records, limit=limit, skip=skip, ahead=ahead)
        if self.generators:
            yield from self.generator_chunks(prompt_ids=prompt_ids, skip=skip)


def generate(specs: Sequence[AttackSpec], records: Iterable[Record], prompts: Mapping[str, Prompt], *,
             seed: int, executor: Executor | None = None, limit: int | None = None, res: Any = None,
             chunk_size: int = 256, fit_on: Iterable[Record] | None = None, states: FitStates | None = None,
             prompt_ids: Iterable[str] | None = None,
             on_fit_error: Callable[[AttackSpec, str | None, Exception], None] | None = None,
             ahead: bool = True) -> Iterator[Chunk]:
    """The adversarial examples of the static attacks and prompt-level generators ``specs`` on ``records``
    (``records`` is read twice when a configuration fits: pass a re-iterable dataset or a list).

    Checks every instance's resources (:class:`MissingResources`) and refuses search attacks before any work;
    fits once per (configuration, prompt) on the ``limit`` records taken across the prompts
    (:func:`callbluff.engine.limit.limited`; or on ``fit_on``) unless ``states`` are
    given; then yields :class:`Chunk` s: record chunks of ``chunk_size`` records, then generator pieces (for
    ``prompt_ids``, default every prompt). Same seed, same bytes, whatever the executor, workers or chunk size.
    """
    g = Generation(specs, prompts, seed=seed, executor=executor, res=res, chunk_size=chunk_size, allow_search=False)
    g.check_resources()
    records = limited(records, limit)  # across the prompts (callbluff.engine.limit)
    if states is not None:
        g.states = dict(states)
    else:
        g.fit(records if fit_on is None else fit_on, on_error=on_fit_error)
    return g.chunks(records, prompt_ids=prompt_ids, ahead=ahead)


