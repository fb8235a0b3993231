"""The Task descriptor and its registry: everything callbluff does differently per task, in one object.

A task (``essay``, ``content``, ``reading``, ``questions``, or a third party's) is one :class:`Task` subclass in
one module, registered with :func:`register_task`. The descriptor says:

- what the task's records are (``record_type``) and what its targets return (``output``: ``"score"`` or
  ``"answer"``; an ``output = "auto"`` target is checked against it);
- how a record and an adversarial example become target inputs (:meth:`Task.original_input`,
  :meth:`Task.adversarial_input`) and what the gold is (:meth:`Task.gold`);
- how metric rows are computed (:meth:`Task.accumulator` for tasks whose rows stream chunk by chunk,
  :meth:`Task.metric_rows` for rows built from one target's tables), and which fields they have in which order
  (``fields`` for the report, ``terminal_fields`` for the terminal, ``clean_fields`` / ``robust_fields`` for
  the scorecard and ``callbluff compare``);
- the headline of a metric row (:meth:`Task.sentence`), the clean-quality cells of the scorecard
  (:meth:`Task.clean_quality`) and the paper-shaped report views (:meth:`Task.views`);
- the hand-made records the attack conformance kit runs on (:meth:`Task.kit_records`);
- the column mapping of the generic loaders (``columns``: ``jsonl:x.jsonl?task=NAME``).

Dispatching code (the engine, the report, the CLI, the kit) asks :func:`get_task` and never compares task
names. Layering: this package sits above records, metrics, datasets, targets and attacks (which it may import)
and below the engine and the report's page (which import it); nothing it imports imports it back.

Third-party tasks register at import, or through the ``callbluff.tasks`` entry point group (loaded on the
first lookup, like attacks' ``callbluff.attacks`` group).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

import pandas as pd

from callbluff.datasets.generic import RecordColumns, register_columns, unregister_columns
from callbluff.records import Perturbed, Prompt, Record
from callbluff.targets.base import TASK_OUTPUTS, Input, TaskOutput, register_slots

if TYPE_CHECKING:
    from callbluff.render.views import View

Gold = tuple["float | None", list[str], str]
"""(gold score, gold answers, answer type) of a record: what originals.parquet / examples.parquet store."""


class MetricAccumulator(Protocol):
    """Metric rows streamed from a run's tables one chunk at a time (only the metric columns, never the texts):
    :class:`callbluff.metrics.streaming.ScoringAccumulator` is one."""

    task: str

    def add_originals(self, originals: pd.DataFrame) -> None: ...

    def add_examples(self, examples: pd.DataFrame) -> None: ...

    def rows(self) -> list[dict[str, Any]]: ...


class Task(ABC):
    """One task's descriptor. Subclass, set the class attributes, implement the abstract methods, and
    :func:`register_task` an instance (see the module docstring for what each part is for)."""

    name: ClassVar[str]
    """The task's name: ``Dataset.task``, ``Attack.task``, ``Input.task`` and the ``task`` of metric rows."""
    description: ClassVar[str]
    """One line: what the task is and the paper it follows."""
    record_type: ClassVar[type]
    """The record class the task's datasets yield and its attacks read."""
    output: ClassVar[TaskOutput]
    """What the task's targets return: ``"score"`` (on the prompt's scale) or ``"answer"`` (text)."""
    inputs: ClassVar[tuple[str, ...]] = ("text", "context")
    """The input slots the task's targets read: ``text`` first, then e.g. ``context`` or a pairwise task's second
    response ``text_b``; slots beyond ``text`` / ``context`` travel in :attr:`Input.extra` and are template fields of
    the chat / HTTP targets (``${text_b}``), keys of a command target's JSON line, part of the cache key."""
    prompt_rows: ClassVar[bool] = False
    """Metric rows per prompt plus a pooled ``all`` row (scoring tasks); False: only ``all`` rows."""
    fields: ClassVar[tuple[str, ...]]
    """The metric fields of the task's rows, in display order (report tables; metrics.json may hold more)."""
    terminal_fields: ClassVar[tuple[str, ...]]
    """The compact subset of :attr:`fields` printed on the terminal."""
    clean_fields: ClassVar[tuple[str, ...]]
    """The clean-data metrics of ``attack = "clean"`` rows (``callbluff compare``)."""
    robust_fields: ClassVar[tuple[tuple[str, str], ...]]
    """(field, label) of the robustness metrics the scorecard shows next to ``failure_pct``."""
    columns: ClassVar[RecordColumns]
    """The generic loaders' column mapping (:class:`callbluff.datasets.generic.RecordColumns`)."""
    clean_vs_robust: ClassVar[str] = "clean quality next to robustness under attack"
    """What the report's scorecard sets side by side for this task, with the paper that asks for it (the
    report's findings note)."""

    @property
    def scoring(self) -> bool:
        """True for a task whose targets return scores (essay and short-answer scoring)."""
        return self.output == "score"

    # -- inputs and gold -----------------------------------------------------------------------------
    @abstractmethod
    def original_input(self, record: Record) -> Input:
        """The unmodified record as the target sees it."""

    def adversarial_input(self, example: Perturbed, record: Record) -> Input:
        """The source record with ``example.field`` replaced by the adversarial text: ``field`` names the part
        of the record that becomes one of the input's slots (:meth:`input_slot`). An example that changes several
        slots (e.g. swaps a pair's two responses) gives the others as ``meta["slots"]`` = {field: text}."""
        inp = self.original_input(record)
        for field, text in [*dict(example.meta.get("slots") or {}).items(), (example.field, example.text)]:
            slot = self.input_slot(field)
            if slot is None:
                raise ValueError(f"example {example.id}: cannot replace field {field!r} of {type(record).__name__} "
                                 f"(task {self.name!r} reads the slots {', '.join(self.inputs)})")
            inp = inp.with_slot(slot, str(text))
        return inp

    def input_slot(self, field: str) -> str | None:
        """Which input slot a record field feeds, None for a field an adversarial example cannot replace.
        Default: a field named as one of :attr:`inputs` feeds that slot."""
        return field if field in self.inputs else None

    def generated_input(self, example: Perturbed) -> Input:
        """A prompt-level generator's answer (no source record) as the target sees it: its text, for its prompt."""
        return Input(task=self.name, text=example.text, prompt_id=example.prompt_id)

    @abstractmethod
    def gold(self, record: Record) -> Gold:
        """(gold score, gold answers, answer type) of a record."""

    # -- verdicts -------------------------------------------------------------------------------------
    worst_case: ClassVar[frozenset[str]] = frozenset()
    """Expectations whose failure rate counts sources, not examples: a source fails when any of its adversarial
    versions fools the target (Jia & Liang's worst case; :func:`callbluff.metrics.expectations.failure_unit`)."""

    def correct(self, answer: str, golds: Sequence[str], answer_type: str) -> bool | None:
        """Whether ``answer`` is a correct answer given the gold answers; the verdicts of ``same-answer`` /
        ``wrong-answer`` attacks rest on it. Default: for an answer task, equal to one of the gold answers (override
        for the task's own matching, e.g. SQuAD's normalised exact match); for a scoring task, None."""
        return answer in golds if self.output == "answer" else None

    # -- metrics --------------------------------------------------------------------------------------
    def accumulator(self, prompts: Mapping[str, Prompt]) -> MetricAccumulator | None:
        """A streaming accumulator of the task's metric rows, or None when rows need one target's tables at
        once (:meth:`metric_rows`; e.g. a worst case over each question's adversarial versions)."""
        return None

    def metric_rows(self, examples: pd.DataFrame, originals: pd.DataFrame,
                    prompts: Mapping[str, Prompt]) -> list[dict[str, Any]]:
        """The metric rows (before :func:`callbluff.metrics.rows.metric_row`) of the examples and originals
        tables (all columns but the texts); the engine calls it one target at a time. The default feeds the
        :meth:`accumulator`."""
        acc = self.accumulator(prompts)
        if acc is None:
            raise NotImplementedError(f"task {self.name!r}: implement metric_rows or accumulator")
        acc.add_originals(originals)
        acc.add_examples(examples)
        return acc.rows()

    # -- report ---------------------------------------------------------------------------------------
    @abstractmethod
    def sentence(self, row: Mapping[str, Any]) -> str | None:
        """One plain sentence for an attack's metric row (what happened, in the paper's terms); None when the
        row has nothing to say (e.g. an attack that failed on every record)."""

    @abstractmethod
    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """The clean metric(s) of one target's ``attack = "clean"`` rows, as (label, value) pairs."""

    def headline_figures(self, clean: Sequence[Mapping[str, Any]], originals: pd.DataFrame,
                         prompts: Mapping[str, Prompt]) -> list[tuple[str, str]]:
        """The figures ``callbluff evaluate`` prints for one target on a clean dataset, as (label, value) pairs:
        the task's own measure of what the set is for (``originals``: one target's rows of originals.parquet,
        without the texts). Default: :meth:`clean_quality`."""
        return self.clean_quality(clean)

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        """The paper-shaped report views of the task's rows (none by default)."""
        return []

    # -- conformance kit ------------------------------------------------------------------------------
    @abstractmethod
    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        """Small hand-made records (and the prompts they answer) the attack conformance kit
        (:mod:`callbluff.testing`) runs the task's attacks on; fresh objects on every call."""

    def __repr__(self) -> str:
        return f"<task {self.name}: {self.record_type.__name__} -> {self.output}>"


# -- the registry -------------------------------------------------------------------------------------

_REGISTRY: dict[str, Task] = {}
_PLUGINS_LOADED = False
T = TypeVar("T", bound=Task)


def validate_task(task: Task) -> None:
    """TypeError naming the attribute when ``task`` does not follow the descriptor contract."""
    who = f"task descriptor {type(task).__name__}"
    for attr in ("name", "description", "record_type", "output", "fields", "terminal_fields", "clean_fields",
                 "robust_fields", "columns"):
        if getattr(task, attr, None) is None:
            raise TypeError(f"{who} must set class attribute {attr!r}")
    if not isinstance(task.name, str) or not task.name or task.name != task.name.strip():
        raise TypeError(f"{who}: name must be a non-empty string without spaces around it, got {task.name!r}")
    if task.output not in TASK_OUTPUTS:
        raise TypeError(f"{who}: output must be one of {', '.join(TASK_OUTPUTS)}, got {task.output!r}")
    if not isinstance(task.record_type, type):
        raise TypeError(f"{who}: record_type must be a record class, got {task.record_type!r}")
    if not isinstance(task.columns, RecordColumns):
        raise TypeError(f"{who}: columns must be a callbluff.datasets.generic.RecordColumns")
    if not (isinstance(task.inputs, tuple) and task.inputs and task.inputs[0] == "text"
            and len(set(task.inputs)) == len(task.inputs)):
        raise TypeError(f"{who}: inputs must be a tuple of distinct slot names starting with 'text', got "
                        f"{task.inputs!r}")
    try:
        register_slots(task.inputs)
    except ValueError as exc:
        raise TypeError(f"{who}: {exc}") from None
    unknown = [f for f in task.terminal_fields if f not in task.fields]
    if unknown:
        raise TypeError(f"{who}: terminal_fields not in fields: {', '.join(unknown)}")


def register_task(task: T) -> T:
    """Check ``task`` against the contract and make it available as ``get_task(task.name)``; its column
    mapping becomes the generic loaders' ``task=NAME``. Registering the same descriptor class again replaces
    the instance (module reloads); another class under a taken name is an error."""
    validate_task(task)
    old = _REGISTRY.get(task.name)
    if old is not None and type(old) is not type(task):
        raise ValueError(f"task name {task.name!r} is registered twice ({type(old).__name__}, {type(task).__name__})")
    _REGISTRY[task.name] = task
    register_columns(task.name, task.columns)
    return task


def unregister_task(name: str) -> Task | None:
    """Remove task ``name`` from the registry (for tests); returns the descriptor that was registered, if any."""
    unregister_columns(name)
    return _REGISTRY.pop(name, None)


def _load_plugins() -> None:
    """Load the ``callbluff.tasks`` entry points once. The built-in tasks are registered already: importing this
    module imports the ``callbluff.tasks`` package first, which registers them."""
    global _PLUGINS_LOADED
    if not _PLUGINS_LOADED:
        _PLUGINS_LOADED = True
        for ep in entry_points(group="callbluff.tasks"):
            ep.load()


def task_names() -> list[str]:
    """The registered task names, sorted."""
    _load_plugins()
    return sorted(_REGISTRY)


def all_tasks() -> list[Task]:
    """Every registered task descriptor, by name."""
    _load_plugins()
    return [_REGISTRY[n] for n in sorted(_REGISTRY)]


def get_task(name: str) -> Task:
    """The task registered as ``name``; a KeyError listing the known tasks otherwise."""
    _load_plugins()
    try:
        return _REGISTRY[name]
    except (KeyError, TypeError):
        raise KeyError(f"unknown task {name!r}; known tasks: {', '.join(sorted(_REGISTRY))} (a third-party task "
                       "registers with callbluff.tasks.register_task or the `callbluff.tasks` entry point group)"
                       ) from None
