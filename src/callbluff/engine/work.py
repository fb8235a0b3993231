"""The work units of generation, pure and picklable, as an executor runs them (see :mod:`callbluff.engine.generate`,
the one generation path that makes and orders them).

:class:`GenerationTask` runs the static attacks over a batch of records; :class:`GeneratorTask` makes answers
``start .. stop-1`` of one prompt-level generator for one prompt. Both take the fit states computed once per
(attack configuration, prompt) by :func:`fit_states`, and both are pure given the seed, so any split of the work
over chunks, workers or executors gives the same bytes.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from callbluff.attacks.base import Attack, PromptGenerator, StaticAttack, get_attack
from callbluff.resources import fit_cache
from callbluff.records import Perturbed, Prompt, Record, canonical_json, record_size
from callbluff.resources.context import DependencyParses, default_resources
from callbluff.seeding import record_rng

_LOG = logging.getLogger("callbluff.engine")


@dataclass(frozen=True)
class AttackSpec:
    """One attack configuration of a plan: a registered name and one point of its parameter grid (for search
    attacks the grid point includes ``query_budget``, so it is part of every example id and metrics row)."""

    name: str
    params_json: str  # canonical JSON of the user-given params (hashable, picklable)
    instance: Attack | None = field(default=None, compare=False, hash=False, repr=False)
    """An attack object to use as it is (the conformance kit checks attacks that need not be registered);
    None: instantiated from the registry by name."""

    @classmethod
    def make(cls, name: str, params: Mapping[str, Any]) -> AttackSpec:
        return cls(name, canonical_json(dict(params)))

    @classmethod
    def of(cls, attack: Attack) -> AttackSpec:
        """The configuration of an attack object, which generation then uses as it is."""
        return cls(attack.name, canonical_json(attack.params_dict), attack)


def instantiate(spec: AttackSpec) -> Attack:
    """The attack of a configuration: its own object if it carries one, else one built from the registry (one
    per configuration and process)."""
    return spec.instance if spec.instance is not None else _from_registry(spec)


@lru_cache(maxsize=256)
def _from_registry(spec: AttackSpec) -> Attack:
    return get_attack(spec.name)(**json.loads(spec.params_json))


FitStates = Mapping[tuple[AttackSpec, str | None], Any]
"""Fit states by (attack configuration, prompt id); ``None`` keys a dataset without prompts."""


@dataclass(frozen=True)
class GenerationTask:
    """A unit of work for an executor: records (with their prompts) x static attack configurations."""

    records: Sequence[Record]
    prompts: Mapping[str, Prompt]
    attacks: Sequence[AttackSpec]
    seed: int
    states: FitStates = field(default_factory=dict)
    raise_errors: bool = False  # the failure policy: False records a failing record as an error entry


@dataclass(frozen=True)
class GeneratorTask:
    """Answers ``start .. stop-1`` of the prompt-level generator ``spec`` for ``prompt``."""

    spec: AttackSpec
    prompt: Prompt
    state: Any
    seed: int
    start: int
    stop: int
    raise_errors: bool = False


@dataclass(frozen=True)
class GenerationResult:
    examples: list[Perturbed]
    errors: list[dict[str, Any]]


def fit_states(specs: Sequence[AttackSpec], records: Iterable[Record], prompts: Mapping[str, Prompt],
               res: Any = None,
               on_error: Callable[[AttackSpec, str | None, Exception], None] | None = None,
               ) -> dict[tuple[AttackSpec, str | None], Any]:
    """The fit step (attack contract v2) for the configurations that need it: each attack's ``fit`` once per
    prompt, on that prompt's ``records`` (prompts with no records are fitted on none). Keys: (spec, prompt id).
    With ``on_error``, a prompt an attack cannot learn from is reported there and left out; else it raises."""
    fitting = [s for s in specs if instantiate(s).needs_fit]
    if not fitting:
        return {}
    by_prompt: dict[str | None, list[Record]] = {}
    for r in records:
        by_prompt.setdefault(getattr(r, "prompt_id", None), []).append(r)
    res = res if res is not None else default_resources()
    pids: list[str | None] = sorted(prompts) if prompts else sorted(by_prompt, key=str)
    states: dict[tuple[AttackSpec, str | None], Any] = {}
    for spec in fitting:
        for pid in pids:
            try:
                states[(spec, pid)] = _fit(spec, by_prompt.get(pid, []), prompts.get(pid) if pid is not None else None,
                                           res)
            except Exception as e:
                if on_error is None:
                    raise
                on_error(spec, pid, e)
    return states


@dataclass(frozen=True)
class FitTask:
    """A unit of the fit step for an executor: configurations of one attack module (which may share work within
    a process, e.g. AddWikiRelated and AddWikiUnrelated the prompt's noun-phrase counts) on the records of
    ``prompts``. ``origin``: the id of the engine's process when its generation workers fork from it (a task run
    in another process then sends back the dependency parses it made); 0 otherwise."""

    specs: Sequence[AttackSpec]
    records: Sequence[Record]
    prompts: Mapping[str, Prompt]
    origin: int = 0


FitErrors = list[tuple[AttackSpec, "str | None", Exception]]
FitResult = tuple[dict[tuple[AttackSpec, "str | None"], Any], FitErrors, DependencyParses | None]


def fit_task(task: FitTask) -> FitResult:
    """:func:`fit_states` of one :class:`FitTask` in the process that runs it; a prompt a configuration cannot
    learn from is returned as an error (the caller applies its failure policy), its exception made picklable.
    Run away from ``task.origin``, it also returns the dependency parses the fit made
    (:meth:`Resources.export_dependency_docs`), for the engine's process to keep for its generation workers."""
    res = default_resources()
    ship = bool(task.origin) and os.getpid() != task.origin
    before = set(res.dependency_texts()) if ship else set()
    errors: FitErrors = []

    def keep(spec: AttackSpec, pid: str | None, e: Exception) -> None:
        try:
            pickle.loads(pickle.dumps(e))
        except Exception:  # noqa: BLE001 - an exception that does not survive pickling travels as its text
            e = RuntimeError(f"{type(e).__name__}: {e}")
        errors.append((spec, pid, e))

    states = fit_states(task.specs, task.records, task.prompts, res, on_error=keep)
    parses = res.export_dependency_docs([t for t in res.dependency_texts() if t not in before]) if ship else None
    return states, errors, parses


PARSES = frozenset({"spacy", "spacy-parse"})
"""Requirements of attacks that read texts through the shared spaCy pipeline (``Resources``' parse caches)."""


def fit_groups(specs: Sequence[AttackSpec]) -> list[list[AttackSpec]]:
    """The configurations that need a fit, grouped by the module of their attack class (configurations of one
    module may share work within a process, e.g. AddWiki's noun-phrase counts), in plan order."""
    groups: dict[str, list[AttackSpec]] = {}
    for spec in specs:
        attack = instantiate(spec)
        if attack.needs_fit:
            groups.setdefault(type(attack).__module__, []).append(spec)
    return list(groups.values())


def fit_order(specs: Sequence[AttackSpec], prompts: Mapping[str, Prompt]) -> Callable[[tuple[Any, ...]], int]:
    """A sort key for (configuration, prompt id) pairs: the order in which :func:`fit_states` fits them in one
    process (configurations in plan order, prompts sorted); pairs it does not know go last, in their order."""
    rank = {(s, p): i for i, (s, p) in enumerate((s, p) for s in specs for p in [*sorted(prompts), None])}
    return lambda pair: rank.get((pair[0], pair[1]), len(rank))


def fit_tasks(specs: Sequence[AttackSpec], records: Sequence[Record], prompts: Mapping[str, Prompt],
              origin: int = 0) -> list[list[FitTask]]:
    """The fit step as waves of tasks, each wave for one ``Executor.map_beside``: a :func:`fit_groups` group
    that parses with spaCy is split per prompt (its fits are per prompt; their parses travel back to the
    engine's process), the others stay whole. The first wave holds the first prompt of each parsing group
    (run in the engine's process: it builds what every fit of the group shares, e.g. AddWiki's corpus index)
    and the whole groups (taken by the workers); the second the other prompts, shared by workers that fork
    after the first wave, so they find what it built instead of building it again."""
    by_prompt: dict[str | None, list[Record]] = {}
    for r in records:
        by_prompt.setdefault(getattr(r, "prompt_id", None), []).append(r)
    firsts: list[FitTask] = []
    whole: list[FitTask] = []
    rest: list[FitTask] = []
    for group in fit_groups(specs):
        if prompts and PARSES & {req for s in group for req in instantiate(s).requires}:
            split = [FitTask(group, by_prompt.get(pid, []), {pid: prompts[pid]}, origin) for pid in sorted(prompts)]
            firsts.append(split[0])
            rest += split[1:]
        else:
            whole.append(FitTask(group, records, prompts, origin))
    rest.sort(key=lambda t: -sum(record_size(r) for r in t.records))  # the longest first: no long last task
    return [wave for wave in ([*firsts, *whole], rest) if wave]


def _fit(spec: AttackSpec, records: Sequence[Record], prompt: Prompt | None, res: Any) -> Any:
    """``fit`` of one (configuration, prompt), read from / written to :mod:`callbluff.resources.fit_cache` when the
    attack opts in (``fit_fingerprint``) and the cache is on."""
    attack = instantiate(spec)
    fingerprint = attack.fit_fingerprint() if fit_cache.enabled() else None
    if fingerprint is None:
        return attack.fit(records, prompt, res)
    key = fit_cache.fit_key(spec.name, spec.params_json, fingerprint, type(attack).__module__, prompt, records)
    state = fit_cache.load(key)
    if fit_cache.is_missing(state):
        state = attack.fit(records, prompt, res)
        fit_cache.store(key, state)
    return state


def prefetch(attack: Attack, records: Sequence[Record], res: Any) -> None:
    """``attack.prefetch(records, res)`` (:meth:`~callbluff.attacks.base.Attack.prefetch`: batch work for the records
    about to be attacked, which changes no output). Its failure does not stop the records: each per-record call
    that follows does the same work for its record alone and records its own failure as an error row; the batch
    failure itself is logged (``callbluff.engine`` logger, a warning naming the attack and the cause)."""
    try:
        attack.prefetch(records, res)
    except Exception as e:  # noqa: BLE001 - logged; the per-record calls record their own failures
        _LOG.warning("%s: batch work before %d record(s) failed (%s: %s); the records are attacked one at a time",
                     attack.name, len(records), type(e).__name__, e)


def _error(stage: str, attack: Attack, source_id: str, prompt_id: str | None, e: BaseException) -> dict[str, Any]:
    return {"stage": stage, "source_id": source_id, "prompt_id": prompt_id, "attack": attack.name,
            "params": attack.params_dict, "cause": f"{type(e).__name__}: {e}"}


def generate_examples(task: GenerationTask) -> GenerationResult:
    """Every static attack on every record, in (record, attack) order. Pure given the seed.

    An attack that fails on one record becomes an error entry (record, attack, cause), never a crash.
    """
    res = default_resources()
    examples: list[Perturbed] = []
    errors: list[dict[str, Any]] = []
    for spec in task.attacks:  # optional batch work shared by the records (DPAEG: one nlp.pipe of the questions)
        prefetch(instantiate(spec), task.records, res)
    for record in task.records:
        pid = getattr(record, "prompt_id", None)
        prompt = task.prompts.get(pid) if pid is not None else None
        for spec in task.attacks:
            attack = instantiate(spec)
            if not isinstance(attack, StaticAttack):
                continue
            rng = record_rng(task.seed, record.id, attack.name, attack.params_dict)
            try:
                examples.extend(attack.examples(record, rng, res, prompt, task.states.get((spec, pid))))
            except Exception as e:  # noqa: BLE001 - recorded, not swallowed
                if task.raise_errors:
                    raise
                errors.append(_error("generate", attack, record.id, pid, e))
    return GenerationResult(examples, errors)


def generate_prompt_examples(task: GeneratorTask) -> GenerationResult:
    """Answers ``start .. stop-1`` of one prompt-level generator for one prompt (pure given the seed)."""
    attack = instantiate(task.spec)
    assert isinstance(attack, PromptGenerator)
    try:
        ex = attack.examples_for(task.prompt, task.state, task.seed, default_resources(), task.start, task.stop)
    except Exception as e:  # noqa: BLE001 - recorded, not swallowed
        if task.raise_errors:
            raise
        return GenerationResult([], [_error("generate", attack, f"prompt:{task.prompt.id}", task.prompt.id, e)])
    return GenerationResult(ex, [])
