"""What a suite asks for, before anything runs: its attack configurations (every grid point of every
``[[attack]]``, each with its fit corpus), its fingerprint (what a run directory was made with), and its
targets built behind the prediction cache with their output checks."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from callbluff.datasets.base import Dataset
from callbluff.engine.suite import Suite, SuiteError
from callbluff.engine.work import AttackSpec, instantiate
from callbluff.resources.paths import hashing_once
from callbluff.targets.base import Target, TargetUnavailable
from callbluff.targets.cache import PredictionCache
from callbluff.targets.callables import CallableTarget
from callbluff.engine.target_factory import bind_prompts, from_config
from callbluff.targets.config import TargetSettings
from callbluff.targets.validate import OutputCheck, secret_values
from callbluff.targets.wrappers import CachedTarget
from callbluff.tasks import get_task


BREAKER = TargetSettings.model_fields["max_consecutive_failures"].default
"""The circuit breaker's default bound (a Python target without settings gets it too)."""


@dataclass
class Plan:
    """The attack configurations of ``suite`` in suite order, and each one's ``fit_on`` dataset spec (None:
    the run's own records)."""

    suite: Suite
    limit: int | None
    specs: list[AttackSpec] = field(default_factory=list)
    fit_on: dict[AttackSpec, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, suite: Suite, limit: int | None) -> Plan:
        plan = cls(suite, limit)
        for a in suite.attack:
            for point in a.expand():
                spec = AttackSpec.make(a.name, point)
                plan.specs.append(spec)
                plan.fit_on[spec] = a.fit_on
        return plan

    def fingerprint(self) -> str:
        """What identifies the run a directory holds: the suite's fingerprint and the record limit."""
        return hashlib.sha256(f"{self.suite.fingerprint()}|limit={self.limit}".encode()).hexdigest()[:16]

    def expectations(self) -> dict[str, str]:
        """Each attack's expectation by the name its rows carry (the attack's own: a suite may name it by an
        alias or in other letter case)."""
        return {instantiate(s).name: instantiate(s).expect for s in self.specs}

    def check_tasks(self, dataset: Dataset) -> None:
        """Every attack is for the dataset's task (else a :class:`SuiteError` naming both)."""
        for s in self.specs:
            attack = instantiate(s)
            if not attack.serves(dataset.task):
                raise SuiteError(
                    f"attack {attack.name} is for task {' or '.join(map(repr, attack.served()))} but dataset "
                    f"{self.suite.dataset.spec} "
                    f"is {dataset.task!r}; pick attacks listed for {dataset.task!r} by `callbluff list`"
                )


def as_target(name: str, t: Any) -> Target:
    """A Python target as given from a notebook: a :class:`~callbluff.targets.base.Target` as is, a plain function
    (``text -> score or answer``) as a :class:`~callbluff.targets.callables.CallableTarget` named ``name``."""
    if hasattr(t, "predict") and hasattr(t, "fingerprint"):
        return t
    if callable(t):
        return CallableTarget(t, name=name)
    raise SuiteError(f"target {name!r}: a {type(t).__name__} is neither a Target (predict() and fingerprint) nor a "
                     "function; pass e.g. targets={'mine': my_function} or CallableTarget(my_function, batched=True)")


BEHIND_FILTER = "|behind a filter"
"""The suffix of the cache namespace of a grader's own replies behind a filter (:func:`cache_behind_filter`)."""


def cache_behind_filter(target: Any, cache: PredictionCache, batch_size: int, check: OutputCheck) -> None:
    """When ``target`` is a :class:`~callbluff.defenses.filtered.FilteredTarget`, put the grader it wraps behind the
    prediction cache too, in a namespace of its own (the grader's fingerprint and :data:`BEHIND_FILTER`): the
    filter decides which answers reach the grader, never what the grader replies to one, so a refitted or changed
    filter re-asks the grader nothing it already answered behind a filter (the outer cache, keyed by the filter's
    fingerprint, still misses: the new filter reads every answer again). Its own namespace, not the bare grader's:
    the same grader on the same suite without the filter keeps its own calls, and each target's counts of calls
    (its ``defence`` and ``filter`` usage) stay its own."""
    from callbluff.defenses.filtered import FilteredTarget

    if isinstance(target, FilteredTarget) and not isinstance(target.target, CachedTarget):
        inner = target.target
        target.target = CachedTarget(inner, cache, batch_size=batch_size, check=check,
                                     fingerprint=f"{inner.fingerprint}{BEHIND_FILTER}")


def build_targets(suite: Suite, cache: PredictionCache, dataset: Dataset,
                  given: Mapping[str, Any] | None = None) -> dict[str, CachedTarget]:
    """The suite's targets (or ``given`` Python targets: Targets or plain functions, :func:`as_target`), each
    behind the prediction cache with its output check (a filtered one's grader too: :func:`cache_behind_filter`).

    Each is given the dataset's prompts (:func:`~callbluff.engine.target_factory.bind_prompts`: a chat grader's
    question, rubric, reference answer and scale). The check (:class:`~callbluff.targets.validate.OutputCheck`) validates every output against the target's
    declared kind and the prompt's scale and scrubs the secrets its settings reference through ``${VAR}``.
    """
    out: dict[str, CachedTarget] = {}
    batch = suite.output.batch_size
    if given:
        for name, given_target in given.items():
            t = as_target(name, given_target)
            cfg = getattr(t, "config", None)
            check = OutputCheck(get_task(dataset.task).output, kind=getattr(cfg, "output", "auto"),
                                out_of_range=getattr(cfg, "out_of_range", "error"), prompts=dataset.prompts)
            cache_behind_filter(t, cache, batch, check)
            out[name] = CachedTarget(t, cache, batch_size=batch, check=check,
                                     max_consecutive_failures=getattr(cfg, "max_consecutive_failures", BREAKER))
            bind_prompts(out[name], dataset.prompts)
        return out
    with hashing_once():  # a file two targets name (a shared model, a script) is read once in this run
        for i, cfg in enumerate(suite.target):
            try:
                inner = from_config(cfg, base_dir=suite.base_dir, where=f"target[{i}]")
            except TargetUnavailable as e:  # a server that stays down (its version_url): a target failure
                raise TargetUnavailable(f"key `target[{i}]` ({cfg.name}): {e}") from None
            except Exception as e:
                raise SuiteError(f"key `target[{i}]` ({cfg.name}): cannot build target: {e}") from e
            check = OutputCheck(get_task(dataset.task).output, kind=cfg.output, out_of_range=cfg.out_of_range,
                                prompts=dataset.prompts, secrets=secret_values(cfg.model_dump()))
            cache_behind_filter(inner, cache, batch, check)
            out[cfg.name or f"target{i}"] = CachedTarget(inner, cache, batch_size=batch, check=check,
                                                         max_consecutive_failures=cfg.max_consecutive_failures)
            bind_prompts(out[cfg.name or f"target{i}"], dataset.prompts)
    return out
