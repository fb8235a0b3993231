"""Pure generation of adversarial examples for a batch of records (runs inside executor workers)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from callbluff.attacks.base import Attack, StaticAttack, get_attack
from callbluff.records import Perturbed, Prompt, Record, canonical_json
from callbluff.resources.context import default_resources
from callbluff.seeding import record_rng


@dataclass(frozen=True)
class AttackSpec:
    """One attack configuration of a plan: a registered name and one point of its parameter grid."""

    name: str
    params_json: str  # canonical JSON of the user-given params (hashable, picklable)
    query_budget: int = 200

    @classmethod
    def make(cls, name: str, params: Mapping[str, Any], query_budget: int = 200) -> AttackSpec:
        return cls(name, canonical_json(dict(params)), query_budget)


@lru_cache(maxsize=256)
def instantiate(spec: AttackSpec) -> Attack:
    import json

    return get_attack(spec.name)(**json.loads(spec.params_json))


@dataclass(frozen=True)
class GenerationTask:
    """A unit of work for an executor: records (with their prompts) x static attack configurations."""

    records: Sequence[Record]
    prompts: Mapping[str, Prompt]
    attacks: Sequence[AttackSpec]
    seed: int


@dataclass(frozen=True)
class GenerationResult:
    examples: list[Perturbed]
    errors: list[dict[str, Any]]


def generate_examples(task: GenerationTask) -> GenerationResult:
    """Every static attack on every record, in (record, attack) order. Pure given the seed.

    An attack that fails on one record becomes an error entry (record, attack, cause), never a crash.
    """
    res = default_resources()
    examples: list[Perturbed] = []
    errors: list[dict[str, Any]] = []
    for record in task.records:
        pid = getattr(record, "prompt_id", None)
        prompt = task.prompts.get(pid) if pid is not None else None
        for spec in task.attacks:
            attack = instantiate(spec)
            if not isinstance(attack, StaticAttack):
                continue
            rng = record_rng(task.seed, record.id, attack.name, attack.params_dict)
            try:
                examples.extend(attack.examples(record, rng, res, prompt))
            except Exception as e:  # noqa: BLE001 - recorded, not swallowed
                errors.append({"stage": "generate", "source_id": record.id, "attack": attack.name,
                               "params": attack.params_dict, "cause": f"{type(e).__name__}: {e}"})
    return GenerationResult(examples, errors)


def split_evenly(items: Sequence[Any], parts: int) -> list[Sequence[Any]]:
    """``items`` cut into at most ``parts`` contiguous slices of near-equal size (order kept)."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(items[start:stop])
        start = stop
    return [s for s in out if len(s)]


def chunked(records: Iterable[Record], size: int, limit: int | None = None) -> Iterable[list[Record]]:
    """Stream ``records`` in lists of ``size`` (the first ``limit`` only)."""
    chunk: list[Record] = []
    for i, r in enumerate(records):
        if limit is not None and i >= limit:
            break
        chunk.append(r)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
