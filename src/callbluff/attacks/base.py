"""The attack contract (v2): three kinds of attack, their expectations, the fit step, and the registry.

An attack (docs/design.md "Attacks") has a ``name``, a ``task``, a ``family``, the ``paper`` it comes from,
a one-line ``description`` and a pydantic ``Params`` model whose defaults follow the paper. It is one of
three kinds:

- :class:`StaticAttack` (``kind="static"``): ``generate(record, rng, res, prompt, state)``, pure given ``rng``
  (Kumar et al. 2020 Sec. 3.2-3.3 edits, Ding et al. 2020 Sec. 2.2 Shuffle, Jia & Liang 2017 AddSent...).
- :class:`SearchAttack` (``kind="search"``): ``search(record, oracle, rng, res, prompt, state)`` queries the
  system under test only through an :class:`~callbluff.attacks.oracle.Oracle` that enforces the query budget
  (``Params.query_budget``; Jia & Liang Sec. 3.3 AddAny/AddCommon, DPAEG's search).
- :class:`PromptGenerator` (``kind="generator"``): makes ``count`` answers per *prompt* from corpus
  statistics learnt by ``fit`` (Ding et al. Sec. 2.2 random / n-gram / burst answers, Kumar et al. Sec. 3.4
  BabelGen), with ``source_id = "prompt:<id>"``.

Every attack declares what a robust system should do with its output, ``expect`` (CheckList's
"expectation", Ribeiro et al. 2020 Sec. 2): the engine and the report derive the headline failure rate from
it. ``requires`` names the resources it needs (:mod:`callbluff.resources.requirements`), checked once before
a run. The engine and the conformance kit (:mod:`callbluff.testing`) call the template methods
``examples`` / ``examples_for``, which check the record type and ``applies_to`` so ``generate`` need not.
"""

from __future__ import annotations

import hashlib
import json
import pickle
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar, cast

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from callbluff.metrics.expectations import BUILTIN, check_expectation
from callbluff.records import Perturbed, Prompt, Record, Task
from callbluff.resources.requirements import REQUIREMENTS
from callbluff.seeding import prompt_rng

if TYPE_CHECKING:
    from callbluff.attacks.oracle import Oracle
    from callbluff.resources.context import Resources

Expectation = str
"""The name of a registered expectation, or ``NAME:VALUE`` for one that takes a parameter (:mod:`callbluff.metrics.expectations`, an open registry: a third
party's :func:`~callbluff.metrics.expectations.register_expectation` makes its name valid here too): what a
robust system does with an adversarial input (CheckList's expectation function). The built-in ones
(:data:`EXPECTATIONS`):

- ``"lower"``: the score drops below the original's (Kumar et al. 2020 Sec. 3.1: "no adversary should
  increase the quality of the response"; a scorer whose score does not drop is overstable);
- ``"bottom"``: the score is the prompt's scale minimum (Ding et al. 2020 Sec. 3.2, ARR);
- ``"same-score"``: a benign change, the score stays the same;
- ``"same-answer"``: a QA system still returns a correct answer (Jia & Liang 2017 Sec. 2; DPAEG);
- ``"wrong-answer"``: a robust QA system must NOT return the gold answer (the question no longer asks for it);
- ``"not-higher"``: the score does not rise above the original's (text that adds no content, such as an
  instruction to the grader, a claim of quality or a fake score, must not raise it: the LLM-grader family,
  :mod:`callbluff.attacks.llm`).
"""
EXPECTATIONS: tuple[str, ...] = BUILTIN
"""The built-in expectations; :func:`~callbluff.metrics.expectations.expectation_names` lists every registered
one (what an attack's ``expect`` is checked against)."""
Kind = Literal["static", "search", "generator"]

class AttackParams(BaseModel):
    """Base for attack parameter models: unknown keys are errors, values are validated, instances frozen.

    ``added_later``: parameters added after an attack was released, left out of ``params_dict`` while they have
    their default, so that the configurations made before keep their example ids and random streams (both are
    derived from ``params_dict``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    added_later: ClassVar[frozenset[str]] = frozenset()


class SearchParams(AttackParams):
    """Parameters of every search attack: ``query_budget`` is how many target queries one record may cost.

    Being a parameter, the budget is part of each example's id and of its metrics row, so two configurations
    that differ only in their budget stay apart."""

    query_budget: int = Field(200, ge=1)


class GeneratorParams(AttackParams):
    """Parameters of every prompt-level generator: ``count`` answers are made per prompt."""

    count: int = Field(100, ge=1)


def state_hash(state: Any) -> str:
    """A stable SHA-256 of a fit state (the provenance ``meta["fit_state"]`` of every example made with it).

    JSON-able states hash their canonical JSON (stable across Python versions); anything else its pickle
    (protocol 4). ``None`` hashes too (an attack whose fit learnt nothing)."""
    try:
        data = canonical_json_strict(state).encode()
    except (TypeError, ValueError):
        data = pickle.dumps(state, protocol=4)
    return hashlib.sha256(data).hexdigest()[:16]


def canonical_json_strict(obj: Any) -> str:
    """Canonical JSON that refuses non-JSON values instead of stringifying them (``default=str``)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _type_names(t: type | tuple[type, ...]) -> str:
    types = t if isinstance(t, tuple) else (t,)
    return " or ".join(x.__name__ for x in types)


P = TypeVar("P", bound=AttackParams)
"""An attack's parameter model: ``class Mine(StaticAttack[MyParams])`` types ``self.params`` as ``MyParams``."""
SP = TypeVar("SP", bound=SearchParams)
GP = TypeVar("GP", bound=GeneratorParams)


class Attack(ABC, Generic[P]):
    """What every kind of attack has: identity, params, expectation, requirements, the fit step.

    Generic in its parameter model: ``class Mine(StaticAttack[MyParams])`` with ``Params = MyParams`` types
    ``self.params`` as ``MyParams`` (a subclass that names no model has ``Any`` parameters)."""

    name: ClassVar[str]
    task: ClassVar[Task]
    """The attack's task; an attack that serves several lists them all in :attr:`tasks` (``task`` is one of them:
    what code that reads one task gets)."""
    tasks: ClassVar[tuple[Task, ...]] = ()
    """Every task the attack serves, when more than ``task`` (e.g. the LLM-grader family: content and essay);
    empty: ``task`` alone. Ask :meth:`serves` / :meth:`served`."""
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other names the attack is found by (``get_attack``, suites): e.g. the per-task names it had when an attack
    served one task (``InjectInstructionEssay``). Its examples carry :attr:`name`."""
    family: ClassVar[str]
    paper: ClassVar[str]
    description: ClassVar[str]
    Params: ClassVar[type[AttackParams]] = AttackParams
    kind: ClassVar[Kind]
    record_type: ClassVar[type | tuple[type, ...]]
    requires: ClassVar[tuple[str, ...]] = ()
    expect: ClassVar[Expectation]
    needs_fit: ClassVar[bool] = False
    model_in_the_loop: ClassVar[bool] = False
    field: ClassVar[str] = "text"
    """The record field the attack's texts replace: ``"text"`` (responses, questions) or ``"context"``
    (reading comprehension paragraphs, e.g. AddSent / AddAny append to the context)."""

    params: P

    def __init__(self, **params: Any) -> None:
        try:
            # ``Params`` is a class attribute, which cannot name the type variable (a ClassVar holds no type
            # variable), so its instance is declared to be the ``P`` the subclass names
            self.params = cast(P, self.Params(**params))
        except ValidationError as e:
            problems = "; ".join(
                f"{'.'.join(str(x) for x in err['loc']) or '(params)'}: {err['msg']}" for err in e.errors()
            )
            allowed = ", ".join(
                f"{k} (default {v.default!r})" for k, v in self.Params.model_fields.items()
            ) or "none"
            raise ValueError(f"attack {self.name}: bad parameters: {problems}. Allowed: {allowed}") from None
        self._hashed: tuple[Any, str] | None = None

    @classmethod
    def served(cls) -> tuple[Task, ...]:
        """The tasks the attack serves: :attr:`tasks`, or ``(task,)``."""
        return cls.tasks or (cls.task,)

    @classmethod
    def serves(cls, name: str) -> bool:
        """Whether the attack serves task ``name``."""
        return name in cls.served()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.params_dict.items())})"

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """What a report needs of the attack without loading it: ``family``, ``paper`` and ``defaults`` (each
        parameter's default as a JSON value; required parameters and defaults that are not JSON are left out).
        The engine records it for each attack in run.json, so a run's report reads the run, not the registry of
        the machine that renders it (an attack from a plugin that is not installed there keeps its family)."""
        defaults: dict[str, Any] = {}
        for k, f in cls.Params.model_fields.items():
            if f.is_required():
                continue
            try:
                defaults[k] = json.loads(json.dumps(f.get_default(call_default_factory=True), default=list))
            except (TypeError, ValueError):
                continue
        return {"family": cls.family, "paper": cls.paper or None, "defaults": defaults}

    @property
    def params_dict(self) -> dict[str, Any]:
        d = self.params.model_dump(mode="json")
        fields = type(self.params).model_fields
        for name in getattr(self.params, "added_later", ()):
            if name in d and getattr(self.params, name) == fields[name].get_default(call_default_factory=True):
                del d[name]
        return d

    # -- the fit step --------------------------------------------------------------------------------
    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> Any:
        """Corpus statistics learnt once per (attack config, prompt) from ``records`` (that prompt's records,
        or a declared corpus); the state is passed back to ``generate`` / ``search`` / ``generate_one``.

        Must be deterministic and picklable (it is shipped to workers). Default: nothing to learn."""
        return None

    def fit_fingerprint(self) -> str | None:
        """Opt in to persisting fitted states across runs (:mod:`callbluff.resources.fit_cache`): a string naming
        everything ``fit`` reads besides its records, prompt, params and its family package's code (versions of
        data files and libraries, ``fit_cache.source_stamp`` of helper modules elsewhere), so that a state is reused only where ``fit`` would compute the same one. ``None`` (default): the state
        is fitted on every run."""
        return None

    def state_hash(self, state: Any) -> str:
        """:func:`state_hash` of ``state``, remembered for the last state seen (one hash per chunk, not per record)."""
        if self._hashed is None or self._hashed[0] is not state:
            self._hashed = (state, state_hash(state))
        return self._hashed[1]

    def _check_state(self, state: Any) -> None:
        if self.needs_fit and state is None:
            raise ValueError(f"attack {self.name} needs fit: call fit(records, prompt, res) once per prompt and "
                             "pass its state (the engine does this before the first chunk)")

    def _stamp(self, examples: Sequence[Perturbed], state: Any) -> list[Perturbed]:
        """Put the fit state's hash in each example's provenance (``meta["fit_state"]``) when the attack fits."""
        if not self.needs_fit:
            return list(examples)
        h = self.state_hash(state)
        return [replace(ex, meta={**dict(ex.meta), "fit_state": h}) for ex in examples]

    def prefetch(self, records: Sequence[Record], res: Resources) -> None:
        """Optional batch work for ``records`` before the per-record calls (one ``nlp.pipe`` of a chunk's texts,
        AddSent's candidates): the engine calls it once per batch of records, before ``generate`` / ``search`` of
        each. It must change no output (the per-record calls give the same examples without it) and leave out
        what it cannot batch (e.g. a text longer than the parser takes); when it raises, the records are still
        attacked one at a time. Default: nothing."""
        return None

    # -- records -------------------------------------------------------------------------------------
    def check_record(self, record: Record) -> None:
        """TypeError when ``record`` is not of this attack's ``record_type``."""
        if not isinstance(record, self.record_type):
            raise TypeError(f"{self.name} attacks {_type_names(self.record_type)}, got {type(record).__name__} "
                            f"(record {getattr(record, 'id', '?')}); is the dataset's task {self.task!r}?")

    def applies_to(self, record: Record, prompt: Prompt | None) -> bool:
        """Whether this attack makes examples from ``record`` (e.g. Shuffle takes only correct answers)."""
        return True

    def perturbed(self, record: Record, text: str, *, field: str | None = None, index: int = 0,
                  prompt_id: str | None = None, **meta: Any) -> Perturbed:
        """Build a :class:`Perturbed` carrying this attack's name and params (``field`` defaults to the
        class's :attr:`field`)."""
        return Perturbed(
            source_id=record.id, attack=self.name, params=self.params_dict, text=text, field=field or self.field,
            index=index, prompt_id=prompt_id if prompt_id is not None else getattr(record, "prompt_id", None),
            meta=meta,
        )


class StaticAttack(Attack[P]):
    """An attack that needs no model: pure given ``rng``, resources and the fit state."""

    kind = "static"

    @abstractmethod
    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        """Adversarial examples derived from ``record`` (possibly none). The record's type and
        ``applies_to`` were checked by :meth:`examples`."""

    def examples(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        """What the engine calls: check the record type, skip records the attack does not apply to,
        generate, and stamp the fit state's hash."""
        self.check_record(record)
        self._check_state(state)
        if not self.applies_to(record, prompt):
            return []
        return self._stamp(self.generate(record, rng, res, prompt, state), state)


class SearchAttack(Attack[SP]):
    """A model-in-the-loop attack: searches for the worst case through an oracle with a fixed query budget."""

    kind = "search"
    model_in_the_loop = True
    Params: ClassVar[type[AttackParams]] = SearchParams

    @abstractmethod
    def search(self, record: Record, oracle: Oracle, rng: np.random.Generator, res: Resources,
               prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        """The adversarial example(s) found for ``record``; ``oracle.ask(texts)`` is the only way to the target."""

    def examples(self, record: Record, oracle: Oracle, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        """What the engine calls (see :meth:`StaticAttack.examples`); the oracle's budget is ``query_budget``."""
        self.check_record(record)
        self._check_state(state)
        if not self.applies_to(record, prompt):
            return []
        return self._stamp(self.search(record, oracle, rng, res, prompt, state), state)


class PromptGenerator(Attack[GP]):
    """Makes ``count`` answers per prompt from what ``fit`` learnt on the prompt's records (or a corpus).

    Its examples have no source record: ``source_id = "prompt:<prompt id>"``; they are measured by the score
    distribution and ARR (Ding et al. 2020 Sec. 3.2), not by (original, adversarial) pairs."""

    kind = "generator"
    needs_fit = True
    Params: ClassVar[type[AttackParams]] = GeneratorParams

    @abstractmethod
    def generate_one(self, index: int, prompt: Prompt, state: Any, rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        """Answer number ``index`` for ``prompt`` (use :meth:`generated`), or None when none can be made."""

    def generated(self, prompt: Prompt, text: str, index: int, **meta: Any) -> Perturbed:
        """Build the :class:`Perturbed` for answer ``index`` of ``prompt``."""
        return Perturbed(source_id=f"prompt:{prompt.id}", attack=self.name, params=self.params_dict, text=text,
                         field="text", index=index, prompt_id=prompt.id, meta=meta)

    def check_prompt(self, prompt: Prompt) -> None:
        if not self.serves(prompt.task):
            raise TypeError(f"{self.name} generates {' or '.join(map(repr, self.served()))} answers, got prompt "
                            f"{prompt.id} of task {prompt.task!r}")

    def examples_for(self, prompt: Prompt, state: Any, seed: int, res: Resources, start: int = 0,
                     stop: int | None = None) -> list[Perturbed]:
        """Answers ``start .. min(stop, count) - 1`` of ``prompt``; answer ``i`` draws from
        ``prompt_rng(seed, prompt.id, name, params, i)``, so any split of the range gives the same bytes."""
        self.check_prompt(prompt)
        self._check_state(state)
        count = int(self.params.count)
        stop = count if stop is None else min(stop, count)
        out: list[Perturbed] = []
        for i in range(max(0, start), stop):
            ex = self.generate_one(i, prompt, state, prompt_rng(seed, prompt.id, self.name, self.params_dict, i), res)
            if ex is None:
                continue
            if ex.index != i or ex.source_id != f"prompt:{prompt.id}":
                raise ValueError(f"{self.name}.generate_one({i}) returned index {ex.index} / source "
                                 f"{ex.source_id!r}; build it with self.generated(prompt, text, {i})")
            out.append(ex)
        return self._stamp(out, state)


# -- the registry -------------------------------------------------------------------------------------

_REGISTRY: dict[str, type[Attack]] = {}
_ALIASES: dict[str, str] = {}
"""Lower-cased alias -> lower-cased registered name (:attr:`Attack.aliases`)."""
_ENTRY_POINTS_LOADED = False
A = TypeVar("A", bound=type[Attack])
_KIND_PARAMS: dict[str, type[AttackParams]] = {
    "static": AttackParams, "search": SearchParams, "generator": GeneratorParams,
}


def validate_attack_class(cls: type[Attack]) -> None:
    """TypeError naming the attribute and the fix when ``cls`` does not follow the contract."""
    who = f"attack class {cls.__name__}"
    for attr in ("name", "task", "family", "paper", "description"):
        if not getattr(cls, attr, None):
            raise TypeError(f"{who} must set class attribute {attr!r}")
    if not isinstance(cls.task, str):
        raise TypeError(f"{who}: task must be a task name (a string), got {cls.task!r}")
    if not isinstance(cls.tasks, tuple) or not all(isinstance(t, str) and t for t in cls.tasks):
        raise TypeError(f"{who}: tasks must be a tuple of task names, got {cls.tasks!r}")
    if cls.tasks and cls.task not in cls.tasks:
        raise TypeError(f"{who}: task {cls.task!r} must be one of its tasks {cls.tasks!r}")
    if not isinstance(cls.aliases, tuple) or not all(isinstance(a, str) and a for a in cls.aliases):
        raise TypeError(f"{who}: aliases must be a tuple of names, got {cls.aliases!r}")
    kind = getattr(cls, "kind", None)
    if kind not in _KIND_PARAMS:
        raise TypeError(f"{who} must subclass StaticAttack, SearchAttack or PromptGenerator")
    problem = check_expectation(getattr(cls, "expect", None))
    if problem is not None:
        raise TypeError(f"{who} must declare expect, a registered expectation: what a robust system does with its "
                        f"examples (register_expectation adds one; NAME:VALUE for one that takes a parameter): "
                        f"{problem} (got {getattr(cls, 'expect', None)!r})")
    if not (isinstance(cls.Params, type) and issubclass(cls.Params, _KIND_PARAMS[kind])):
        raise TypeError(f"{who}: Params must subclass {_KIND_PARAMS[kind].__name__} for a {kind} attack")
    rt = getattr(cls, "record_type", None)
    if rt is None:
        raise TypeError(f"{who} must set record_type, the record class its task's datasets yield (e.g. "
                        "ScoredResponse for essay/content, QAExample for reading, OpenQuestion for questions)")
    types = rt if isinstance(rt, tuple) else (rt,)
    if not types or not all(isinstance(t, type) for t in types):
        raise TypeError(f"{who}: record_type must be a record class or a tuple of them, got {rt!r}")
    if not isinstance(cls.requires, tuple) or not all(isinstance(r, str) for r in cls.requires):
        raise TypeError(f"{who}: requires must be a tuple of names, got {cls.requires!r}")
    unknown = [r for r in cls.requires if r not in REQUIREMENTS]
    if unknown:
        raise TypeError(f"{who}: unknown requirement(s) {', '.join(unknown)}; known: {', '.join(sorted(REQUIREMENTS))}")
    if kind == "generator" and not cls.needs_fit:
        raise TypeError(f"{who}: a prompt-level generator learns from a corpus: keep needs_fit = True")


def register(cls: A) -> A:
    """Class decorator: check ``cls`` against the contract and make it available by ``name`` (case-insensitive).

    ``task`` names a task (:mod:`callbluff.tasks`, which sits above attacks: the name is checked where the attack
    meets a dataset, and by the conformance kit); ``record_type`` is required."""
    validate_attack_class(cls)
    key = cls.name.lower()
    for name in (cls.name, *cls.aliases):
        taken = _REGISTRY.get(name.lower()) or _REGISTRY.get(_ALIASES.get(name.lower(), ""))
        if taken is not None and taken is not cls:
            raise ValueError(f"attack name {name!r} is registered twice ({taken.__name__}, {cls.__name__})")
    _REGISTRY[key] = cls
    for alias in cls.aliases:
        _ALIASES[alias.lower()] = key
    return cls


def unregister(name: str) -> type[Attack] | None:
    """Remove attack ``name`` (and its aliases) from the registry (for tests); returns the class that was
    registered, if any."""
    cls = _REGISTRY.pop(name.lower(), None)
    for alias in [a for a, k in _ALIASES.items() if k == name.lower()]:
        del _ALIASES[alias]
    return cls


@contextmanager
def registered(*classes: type[Attack]) -> Iterator[tuple[type[Attack], ...]]:
    """Register ``classes`` for the duration of a ``with`` block (tests, the writing-attacks guide)."""
    done: list[type[Attack]] = []
    try:
        for cls in classes:
            register(cls)
            done.append(cls)
        yield tuple(classes)
    finally:
        for cls in done:
            if _REGISTRY.get(cls.name.lower()) is cls:
                unregister(cls.name)


def _load_builtin_and_plugins() -> None:
    # the built-in attacks are registered by ``callbluff.attacks``, which Python imports before this module
    global _ENTRY_POINTS_LOADED
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
    """The attack class registered as ``name`` (or with ``name`` among its aliases); a clear error listing the
    known names otherwise."""
    _load_builtin_and_plugins()
    try:
        return _REGISTRY[_ALIASES.get(name.lower(), name.lower())]
    except KeyError:
        raise KeyError(f"unknown attack {name!r}; known attacks: {', '.join(attack_names())} "
                       "(see `callbluff list`)") from None


def make_attack(name: str, **params: Any) -> Attack:
    return get_attack(name)(**params)


def parse_param_value(raw: str) -> Any:
    """CLI ``--param key=value`` value: JSON when it parses (numbers, bools, lists), else the string."""
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


def requirements_of(attacks: Sequence[Attack | type[Attack]]) -> tuple[str, ...]:
    """The union of the ``requires`` of ``attacks``, in first-seen order (for ``check_requirements``)."""
    return tuple(dict.fromkeys(r for a in attacks for r in a.requires))
