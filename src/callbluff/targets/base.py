"""The Target contract: what callbluff asks a system under test and what it gets back.

DESIGN.md "Core contracts": ``predict(inputs) -> outputs`` plus a ``fingerprint`` identifying the model
version (it keys the prediction cache). Scores are numbers on the prompt's scale; QA answers are strings,
optionally with ranked candidates (for Recall@k, MRR, MAP). A failed prediction is an :class:`Output` with
``error`` set: never an exception that kills a run and never a silent zero.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from callbluff.records import Task

# -- output kinds: the one table ----------------------------------------------------------------------------
TaskOutput = Literal["score", "answer"]
"""What a task's targets return (a task descriptor's ``output``): a score on the prompt's scale, or an answer."""
OutputKind = Literal[TaskOutput, "both", "auto"]
"""What a target declares it returns (a ``[[target]]`` table's ``output``): one of the task outputs, ``both``, or
``auto`` (what the run's task needs)."""
TASK_OUTPUTS: tuple[str, ...] = get_args(TaskOutput)
OUTPUT_KINDS: tuple[str, ...] = get_args(OutputKind)


_SLOTS: dict[str, None] = {"text": None, "context": None}
RESERVED = ("task", "prompt_id", "extra")
"""Names an input slot cannot have (the other fields of :class:`Input`)."""


def register_slots(names: Sequence[str]) -> None:
    """Make ``names`` known input slots (done by :func:`callbluff.tasks.register_task` for the slots a task
    declares): the targets' templates may then use ``${NAME}``."""
    for n in names:
        if not isinstance(n, str) or not n.isidentifier() or n in RESERVED:
            raise ValueError(f"input slot {n!r}: a slot is an identifier other than {', '.join(RESERVED)}")
        _SLOTS[n] = None


def input_slots() -> tuple[str, ...]:
    """The known input slots: ``text``, ``context`` and those the registered tasks declare, in that order."""
    return tuple(_SLOTS)


@dataclass(frozen=True)
class Input:
    """One question put to a target.

    ``text`` is the response (scoring tasks) or the question (QA tasks); ``context`` is the paragraph for
    reading comprehension; ``prompt_id`` tells a per-prompt scorer which model/scale to use. ``extra``: the
    further texts of a task that declares more input slots (:attr:`callbluff.tasks.Task.inputs`, e.g. a pairwise
    task's ``text_b``), as sorted (slot, text) pairs; a mapping is accepted and sorted."""

    task: Task
    text: str
    prompt_id: str | None = None
    context: str | None = None
    extra: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if self.extra:
            pairs = tuple(sorted(dict(self.extra).items()))
            bad = [k for k, _ in pairs if k in ("text", "context", *RESERVED)]
            if bad:
                raise ValueError(f"Input.extra: {bad[0]!r} is not an extra slot (text and context are fields)")
            object.__setattr__(self, "extra", pairs)

    def slot(self, name: str) -> str | None:
        """The text of slot ``name`` (``text``, ``context`` or an extra slot); None when the input has none."""
        if name == "text":
            return self.text
        if name == "context":
            return self.context
        return dict(self.extra).get(name)

    def with_slot(self, name: str, value: str) -> Input:
        """This input with slot ``name`` set to ``value``."""
        if name == "text":
            return replace(self, text=value)
        if name == "context":
            return replace(self, context=value)
        return replace(self, extra={**dict(self.extra), name: value})

    def slots(self) -> dict[str, str]:
        """Every slot the input has a text for, ``text`` first."""
        d = {"text": self.text}
        if self.context is not None:
            d["context"] = self.context
        d.update(self.extra)
        return d

    def key(self) -> str:
        """Stable content hash of this input (the prediction cache key, with the target fingerprint).

        SHA-256 over the length-prefixed fields, with a distinct marker for ``None``: unambiguous, and
        cheaper than JSON encoding on this hot path. The extra slots follow as (name, text) pairs only when there
        are any, so the key of an input without them is what it always was (cached predictions stay valid)."""
        h = hashlib.sha256()
        for part in (self.task, self.prompt_id, self.context, self.text):
            if part is None:
                h.update(b"\x00N")
            else:
                b = part.encode("utf-8", "surrogatepass")
                h.update(b"\x00S%d:" % len(b))
                h.update(b)
        for name, value in self.extra:
            for part in (name, value):
                b = part.encode("utf-8", "surrogatepass")
                h.update(b"\x00X%d:" % len(b))
                h.update(b)
        return h.hexdigest()

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"task": self.task, "text": self.text}
        if self.prompt_id is not None:
            d["prompt_id"] = self.prompt_id
        if self.context is not None:
            d["context"] = self.context
        d.update(self.extra)
        return d


@dataclass(frozen=True)
class Candidate:
    """A ranked answer candidate (best first in :attr:`Output.candidates`)."""

    text: str
    score: float = 0.0


@dataclass(frozen=True)
class Output:
    """A target's answer to one :class:`Input`: a ``score``, an ``answer`` (+ ``candidates``) or an ``error``.

    ``samples`` are the per-sample scores of a target that asks ``n > 1`` times per input (a chat grader's
    ``n``; ``score`` is then their mean): empty otherwise."""

    score: float | None = None
    answer: str | None = None
    candidates: tuple[Candidate, ...] = ()
    error: str | None = None
    samples: tuple[float, ...] = ()

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {}
        if self.score is not None:
            d["score"] = self.score
        if self.answer is not None:
            d["answer"] = self.answer
        if self.candidates:
            d["candidates"] = [[c.text, c.score] for c in self.candidates]
        if self.error is not None:
            d["error"] = self.error
        if self.samples:
            d["samples"] = list(self.samples)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Output:
        return cls(
            score=d.get("score"),
            answer=d.get("answer"),
            candidates=tuple(Candidate(str(t), float(s)) for t, s in d.get("candidates", [])),
            error=d.get("error"),
            samples=tuple(float(x) for x in d.get("samples", ())),
        )

    @classmethod
    def failed(cls, cause: str) -> Output:
        return cls(error=cause)


@runtime_checkable
class Target(Protocol):
    """Anything with ``fingerprint`` and ``predict``; adapters in this package make one from your system."""

    fingerprint: str

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        """One output per input, in order. Per-input failures are ``Output(error=...)``."""
        ...


class TargetUnavailable(RuntimeError):
    """A target that did not answer what a run needs before it starts (the pre-flight call, or its
    ``version_url`` after the retries): the run stops before any chunk, with the cause (exit 1, a target
    failure, not bad input)."""


@dataclass
class TargetStats:
    """Query accounting kept by every target wrapper: calls made, inputs sent, seconds inside the target."""

    calls: int = 0
    inputs: int = 0
    seconds: float = 0.0
    errors: int = 0
    cache_hits: int = 0
    retries: int = 0  # repeated attempts after a transient failure (HTTP), not counted in ``calls``
    usage: dict[str, Any] = field(default_factory=dict)
    """What a target reports of its own accounting, e.g. a chat grader's ``prompt_tokens``,
    ``completion_tokens`` and the ``system_fingerprints`` its server answered with; in run.json when not empty
    (the caching wrapper shares the wrapped target's dict: :func:`callbluff.targets.wrappers.inner_usage`)."""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"calls": self.calls, "inputs": self.inputs, "seconds": round(self.seconds, 6),
                             "errors": self.errors, "cache_hits": self.cache_hits, "retries": self.retries}
        if self.usage:
            d["usage"] = {k: (sorted(v) if isinstance(v, (set, frozenset)) else v) for k, v in self.usage.items()}
        return d


@dataclass
class Timer:
    """Context manager adding elapsed seconds to a :class:`TargetStats`."""

    stats: TargetStats
    _t0: float = field(default=0.0, init=False)

    def __enter__(self) -> Timer:
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stats.seconds += time.perf_counter() - self._t0
