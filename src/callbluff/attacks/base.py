"""Attack protocols, the registry, and the criteria shared by attack families.

An attack (DESIGN.md "Core contracts") has a ``name``, a ``task``, a ``family``, the ``paper`` it comes
from, a one-line ``description`` and a pydantic ``Params`` model whose defaults follow the paper. It is
either *static* (``generate(record, rng, res) -> list[Perturbed]``, pure and deterministic given ``rng``)
or *model in the loop* (``search(record, target, rng, res, budget) -> list[Perturbed]``), which queries the
system under test only through the cached Target it is given, within a :class:`QueryBudget`.

Kumar et al. 2020, Sec. 3.1: an adversary changes a response ``r`` into ``r'`` under a bounded *size
criterion* (how much of the response may change, in %: 10, 15, 20, 25) and a *position criterion*
(beginning, middle or end third of the response). Those are :class:`Budget` and :class:`Position`.
"""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from callbluff.records import Perturbed, Prompt, Record, Task

if TYPE_CHECKING:
    from callbluff.resources.context import Resources
    from callbluff.targets.base import Target


class Position(str, enum.Enum):
    """Where a perturbation goes: one of three equal-sized portions of the response (Kumar et al. 3.1)."""

    beginning = "beginning"
    middle = "middle"
    end = "end"

    def slice_bounds(self, n: int) -> tuple[int, int]:
        """``[start, stop)`` indices of this third of a sequence of length ``n`` (units split evenly)."""
        k = {"beginning": 0, "middle": 1, "end": 2}[self.value]
        return (k * n) // 3, ((k + 1) * n) // 3


class Budget(BaseModel):
    """Size criterion (Kumar et al. 3.1): the perturbation changes at most ``percent`` % of the response."""

    model_config = ConfigDict(frozen=True)
    percent: float = Field(15.0, gt=0, le=100)

    def units(self, n: int) -> int:
        """How many of ``n`` units (words, sentences) may change: at least 1 when ``n > 0``."""
        return max(1, round(n * self.percent / 100.0)) if n > 0 else 0


@dataclass
class QueryBudget:
    """How many target queries a model-in-the-loop attack may spend on one record."""

    max_queries: int
    used: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.max_queries - self.used)

    def spend(self, n: int = 1) -> bool:
        """Reserve ``n`` queries; False (and nothing reserved) when that would exceed the budget."""
        if self.used + n > self.max_queries:
            return False
        self.used += n
        return True


class AttackParams(BaseModel):
    """Base for attack parameter models: unknown keys are errors, values are validated."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class Attack(ABC):
    """Common part of static and search attacks."""

    name: ClassVar[str]
    task: ClassVar[Task]
    family: ClassVar[str]
    paper: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[AttackParams]] = AttackParams
    model_in_the_loop: ClassVar[bool] = False

    def __init__(self, **params: Any) -> None:
        try:
            self.params = self.Params(**params)
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or '(params)'}: {err['msg']}" for err in e.errors()
            )
            allowed = ", ".join(
                f"{k} (default {v.default!r})" for k, v in self.Params.model_fields.items()
            ) or "none"
            raise ValueError(f"attack {self.name}: bad parameters: {problems}. Allowed: {allowed}") from None

    @property
    def params_dict(self) -> dict[str, Any]:
        return self.params.model_dump(mode="json")

    def applies_to(self, record: Record, prompt: Prompt | None) -> bool:
        """Whether this attack makes examples from ``record`` (e.g. Shuffle takes only correct answers)."""
        return True

    def perturbed(self, record: Record, text: str, *, field: str = "text", index: int = 0,
                  prompt_id: str | None = None, **meta: Any) -> Perturbed:
        """Build a :class:`Perturbed` carrying this attack's name and params."""
        return Perturbed(
            source_id=record.id, attack=self.name, params=self.params_dict, text=text, field=field,
            index=index, prompt_id=prompt_id if prompt_id is not None else getattr(record, "prompt_id", None),
            meta=meta,
        )


class StaticAttack(Attack):
    """An attack that needs no model: pure given ``rng`` and resources."""

    @abstractmethod
    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None) -> list[Perturbed]:
        """Adversarial examples derived from ``record`` (possibly none, e.g. when it does not apply)."""


class SearchAttack(Attack):
    """A model-in-the-loop attack: searches for the worst case by querying ``target`` within ``budget``."""

    model_in_the_loop = True

    @abstractmethod
    def search(self, record: Record, target: Target, rng: np.random.Generator, res: Resources,
               budget: QueryBudget, prompt: Prompt | None = None) -> list[Perturbed]:
        """The adversarial example(s) found for ``record``."""


_REGISTRY: dict[str, type[Attack]] = {}
_ENTRY_POINTS_LOADED = False
A = TypeVar("A", bound=type[Attack])


def register(cls: A) -> A:
    """Class decorator: make an attack available by its ``name`` (case-insensitive lookup)."""
    for attr in ("name", "task", "family", "paper", "description"):
        if not getattr(cls, attr, None):
            raise TypeError(f"attack class {cls.__name__} must set class attribute {attr!r}")
    key = cls.name.lower()
    if key in _REGISTRY and _REGISTRY[key] is not cls:
        raise ValueError(f"attack name {cls.name!r} is registered twice ({_REGISTRY[key].__name__}, {cls.__name__})")
    _REGISTRY[key] = cls
    return cls


def _load_builtin_and_plugins() -> None:
    global _ENTRY_POINTS_LOADED
    import callbluff.attacks  # noqa: F401  (registers the built-in attacks)

    if not _ENTRY_POINTS_LOADED:
        _ENTRY_POINTS_LOADED = True
        for ep in entry_points(group="callbluff.attacks"):
            ep.load()


def attack_names() -> list[str]:
    _load_builtin_and_plugins()
    return sorted(cls.name for cls in _REGISTRY.values())


def attack_classes() -> list[type[Attack]]:
    _load_builtin_and_plugins()
    return sorted(_REGISTRY.values(), key=lambda c: (c.task, c.family, c.name))


def get_attack(name: str) -> type[Attack]:
    """The attack class registered as ``name``; a clear error listing the known names otherwise."""
    _load_builtin_and_plugins()
    try:
        return _REGISTRY[name.lower()]
    except KeyError:
        raise KeyError(f"unknown attack {name!r}; known attacks: {', '.join(attack_names())} "
                       "(see `callbluff list`)") from None


def make_attack(name: str, **params: Any) -> Attack:
    return get_attack(name)(**params)


def parse_param_value(raw: str) -> Any:
    """CLI ``--param key=value`` value: JSON when it parses (numbers, bools, lists), else the string."""
    import json

    try:
        return json.loads(raw)
    except ValueError:
        return raw


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"--param {item!r}: expected key=value, e.g. --param percent=20")
        k, v = item.split("=", 1)
        out[k.strip()] = parse_param_value(v.strip())
    return out


Generator = Callable[..., list[Perturbed]]
