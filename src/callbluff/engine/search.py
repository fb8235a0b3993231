"""Model-in-the-loop searches (attack contract v2's :class:`~callbluff.attacks.base.SearchAttack`), one record at
a time, wherever they run.

:func:`search_one` is the one place a search is run: an :class:`~callbluff.attacks.oracle.Oracle` (budget
``query_budget``, every query counted, the original output given free) over a cached target, the record's own
random generator (:func:`~callbluff.seeding.record_rng`), the wall time and queries recorded, an exception turned
into an error row, within a :class:`SearchContext` (the configuration, the target's name, the run's seed, prompts
and fit states) that the searches of one configuration against one target share. The engine calls it

- in driver threads (``output.search_concurrency`` at once) with the run's :class:`CachedTarget`: the local
  executor, and targets that stream their outputs (HTTP, command: I/O-bound, called from the driver);
- in Ray tasks (:func:`run_search_piece`) for in-process targets on the Ray executor: each task runs the
  searches of a piece of a chunk's records in a worker, with the target loaded once per worker process and a
  :class:`CachedTarget` whose cache is the driver's SQLite file served by one cache actor on the driver's node
  (:class:`~callbluff.engine.ray_executor.ActorCache`). Every query's output is committed through the actor before
  the next query is sent, exactly as locally, so a killed driver leaves what a killed local run leaves and a
  resumed run repeats no committed call; the searches' results are the same bytes as with the local executor.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from callbluff.attacks.base import SearchAttack
from callbluff.attacks.oracle import Oracle
from callbluff.engine.executor import Executor
from callbluff.engine.ray_executor import RayExecutor, RemoteTarget
from callbluff.engine.inputs import adversarial_input
from callbluff.engine.work import AttackSpec, instantiate, prefetch
from callbluff.iterutil import split_evenly
from callbluff.records import Perturbed, Prompt, Record, canonical_json
from callbluff.resources.context import Resources, default_resources
from callbluff.seeding import record_rng
from callbluff.targets.cache import CacheWriteError
from callbluff.targets.base import Output, Target
from callbluff.targets.wrappers import CachedTarget

SearchResult = tuple[list[tuple[Perturbed, int]], dict[str, Any] | None, dict[str, Any]]
"""One record's search: the examples found with the queries spent, an error row or None, the timing row."""


@dataclass(frozen=True)
class SearchContext:
    """What every search of one attack configuration against one target shares: the configuration, the target's
    name (in error and timing rows), the run's seed, prompts and fit states, its task (``task``: the records'
    task, which builds the target's inputs; default: the attack's ``task``) and the failure policy
    (``raise_errors``: the conformance kit lets a failing search's exception propagate; the engine records it as
    an error row). Picklable: the Ray pieces of a chunk share one in the object store."""

    spec: AttackSpec
    target_name: str
    seed: int = 0
    prompts: Mapping[str, Prompt] = field(default_factory=dict)
    states: Mapping[tuple[AttackSpec, str | None], Any] = field(default_factory=dict)
    task: str | None = None
    raise_errors: bool = False

    @property
    def attack(self) -> SearchAttack:
        attack = instantiate(self.spec)
        if not isinstance(attack, SearchAttack):
            raise TypeError(f"{attack.name} is not a search attack")
        return attack

    def prompt_of(self, record: Record) -> Prompt | None:
        pid = getattr(record, "prompt_id", None)
        return self.prompts.get(pid) if pid is not None else None

    def state_of(self, record: Record) -> Any:
        return self.states.get((self.spec, getattr(record, "prompt_id", None)))


def search_one(ctx: SearchContext, record: Record, target: Target, original: Output | None,
               res: Resources) -> SearchResult:
    """Run the search of ``ctx``'s attack on ``record`` against ``target`` (see the module docstring;
    ``original``: the target's output on the unmodified record, given to the oracle free). A failing search is
    an error row, or (``ctx.raise_errors``) its exception propagates."""
    attack = ctx.attack
    pid = getattr(record, "prompt_id", None)
    task = ctx.task or attack.task
    oracle = Oracle(target, lambda text: adversarial_input(attack.perturbed(record, text), record, task),
                    int(attack.params.query_budget), original=original)
    rng = record_rng(ctx.seed, record.id, attack.name, attack.params_dict)
    t0 = time.perf_counter()
    try:
        found = attack.examples(record, oracle, rng, res, ctx.prompt_of(record), ctx.state_of(record))
        error = None
    except CacheWriteError:  # the machine's disk, not this search: the run stops (exit 2 naming the cache)
        raise
    except Exception as e:  # noqa: BLE001 - recorded per record
        if ctx.raise_errors:
            raise
        found, error = [], {"stage": "search", "source_id": record.id, "prompt_id": pid, "attack": attack.name,
                            "params": attack.params_dict, "target": ctx.target_name,
                            "cause": f"{type(e).__name__}: {e}"}
    timing = {"target": ctx.target_name, "attack": attack.name, "params": canonical_json(attack.params_dict),
              "source_id": record.id, "seconds": round(time.perf_counter() - t0, 4), "queries": oracle.used}
    return [(ex, oracle.used) for ex in found], error, timing


@dataclass
class SearchJob:
    """What every Ray piece of one (attack, target, chunk) search shares; put once in Ray's object store: the
    search context and how a worker reaches the target and the driver's cache."""

    context: SearchContext
    target_ref: Any  # ObjectRef of the in-process target (RemoteTarget's)
    target_key: str  # the target's object-store id, for the per-worker memo
    cache: Any  # ActorCache (or None: no prediction cache in this run)
    batch_size: int
    check: Any  # the run's OutputCheck for this target (or None)


@dataclass
class SearchPiece:
    """A few records of a chunk with their original outputs, searched in one Ray task."""

    job: Any  # ObjectRef of the SearchJob
    records: Sequence[Record]
    originals: Sequence[Output | None]


_WORKER_TARGETS: dict[str, Any] = {}
"""Targets deserialised in this worker process, by ``SearchJob.target_key``: a model is loaded once per worker,
not once per task."""


def run_search_piece(piece: SearchPiece) -> tuple[list[SearchResult], dict[str, Any]]:
    """A Ray task: the searches of ``piece.records`` in order, against the worker's copy of the target behind a
    :class:`CachedTarget` over the actor-served cache. Returns the results and the wrapper's counters (and the
    check's ``clipped`` count) for the driver to add to its own."""
    import ray

    job: SearchJob = ray.get(piece.job) if isinstance(piece.job, ray.ObjectRef) else piece.job
    inner = _WORKER_TARGETS.get(job.target_key)
    if inner is None:
        if len(_WORKER_TARGETS) >= 4:  # a long-lived worker serving many runs keeps only the latest targets
            _WORKER_TARGETS.pop(next(iter(_WORKER_TARGETS)))
        inner = _WORKER_TARGETS[job.target_key] = ray.get(job.target_ref)
    clipped0 = getattr(job.check, "clipped", 0)
    target = CachedTarget(inner, job.cache, batch_size=job.batch_size, check=job.check)
    ctx = job.context
    res = default_resources()
    prefetch(ctx.attack, piece.records, res)
    results = [search_one(ctx, r, target, o, res) for r, o in zip(piece.records, piece.originals)]
    stats = target.stats.to_dict()
    stats["clipped"] = getattr(job.check, "clipped", 0) - clipped0
    return results, stats


class SearchRunner:
    """The run's model-in-the-loop attacks over one chunk of records, for one target at a time: as Ray tasks
    when the executor can run them against that target (:meth:`_ray_results`), else
    ``concurrency`` searches at once in driver threads over the shared cached target. Results are in record
    order, whatever runs them; each search's wall time goes to ``timings`` (timings.json), never into the
    examples, which stay the same bytes for a seed."""

    def __init__(self, specs: Sequence[AttackSpec], *, seed: int, prompts: Mapping[str, Prompt],
                 states: Mapping[tuple[AttackSpec, str | None], Any], executor: Executor, concurrency: int,
                 task: str | None = None) -> None:
        self.specs = list(specs)
        self.task = task
        self.seed = seed
        self.prompts = prompts
        self.states = states
        self.executor = executor
        self.concurrency = concurrency

    def run(self, records: Sequence[Record], target: Target, tname: str, originals: dict[str, Output],
            errors: list[dict[str, Any]], timings: list[dict[str, Any]]) -> list[tuple[Perturbed, int]]:
        """Every search configuration on every record of the chunk: the examples found with their queries;
        failed searches appended to ``errors``."""
        out: list[tuple[Perturbed, int]] = []
        for spec in self.specs:
            out.extend(self._one_spec(spec, records, target, tname, originals, errors, timings))
        return out

    def _one_spec(self, spec: AttackSpec, records: Sequence[Record], target: Target, tname: str,
                  originals: dict[str, Output], errors: list[dict[str, Any]],
                  timings: list[dict[str, Any]]) -> list[tuple[Perturbed, int]]:
        ctx = SearchContext(spec, tname, self.seed, self.prompts, self.states, task=self.task)
        results: Iterable[SearchResult] | None = self._ray_results(ctx, records, target, originals)
        if results is None:
            res = default_resources()
            prefetch(ctx.attack, records, res)
            results = self.executor.map_concurrent(
                lambda record: search_one(ctx, record, target, originals.get(record.id), res),
                records, self.concurrency)
        out: list[tuple[Perturbed, int]] = []
        for found, error, timing in results:
            out.extend(found)
            timings.append(timing)
            if error is not None:
                errors.append(error)
        return out

    def _ray_results(self, ctx: SearchContext, records: Sequence[Record], target: Target,
                     originals: dict[str, Output]) -> list[SearchResult] | None:
        """The searches as Ray tasks, when the executor is Ray and ``target`` is a cached in-process target it
        ships to workers; None otherwise. Exactly ``workers`` pieces (contiguous runs of records): a task waiting
        on the cache actor releases its CPU to Ray, which would start any queued piece in a new worker process
        (importing everything and loading the model again), so none is left queued. The cache journal is merged
        before (the actor sees what the driver committed) and after (the driver sees the searches' queries)."""
        ex = self.executor
        if not (isinstance(ex, RayExecutor) and isinstance(target, CachedTarget)
                and isinstance(target.target, RemoteTarget)) or not records:
            return None
        cache = target.cache
        if cache is not None:
            cache.merge()
        job = SearchJob(context=replace(ctx, states={k: v for k, v in ctx.states.items() if k[0] == ctx.spec}),
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
