"""Task records: the units every loader yields, every attack reads and every target is asked about.

All records are frozen dataclasses with a stable string ``id`` (taken from the dataset where it has one,
so that an adversarial example can always be traced back to its source row). ``meta`` dictionaries are
excluded from hashing and equality so records stay hashable.

Tasks (DESIGN.md; descriptors in :mod:`callbluff.tasks`): ``essay`` (AES, Kumar et al. 2020), ``content``
(short-answer content scoring, Ding et al. 2020), ``reading`` (extractive reading comprehension, Jia & Liang
2017), ``questions`` (open-domain Q&A bots, DPAEG).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from dataclasses import field as dc_field
from typing import Any, Literal, Union

Task = str
"""A task's name: one registered in :mod:`callbluff.tasks` (built in: ``essay``, ``content``, ``reading``,
``questions``), whose descriptor says what else differs per task."""


def _meta() -> dict[str, Any]:
    return {}


@dataclass(frozen=True, slots=True)
class Prompt:
    """A question / essay prompt with its score scale (scoring tasks) and optional source passage.

    ``reference`` (a model answer) and ``rubric`` (the scoring guide's text) are what a grader that reads
    instructions is shown (the chat target's ``${reference}`` and ``${rubric}``); ``None`` where the data has
    none."""

    id: str
    task: Task
    text: str = ""
    source: str | None = None
    score_min: float = 0.0
    score_max: float = 1.0
    reference: str | None = None
    rubric: str | None = None
    meta: Mapping[str, Any] = dc_field(default_factory=_meta, compare=False, hash=False)

    @property
    def score_range(self) -> float:
        """Width of the scale (``score_max - score_min``); the denominator of Kumar et al.'s % statistics."""
        return float(self.score_max - self.score_min)

    def in_range(self, score: float) -> bool:
        return self.score_min <= score <= self.score_max


@dataclass(frozen=True, slots=True)
class ScoredResponse:
    """A student response (essay or short answer) to ``prompt_id`` with its gold score(s).

    ``scores[0]`` is the gold score used for evaluation (ASAP-AES ``domain1_score``, ASAP-SAS ``Score1``,
    Mohler ``score_avg``); further entries are other raters where the dataset has them.
    """

    id: str
    prompt_id: str
    text: str
    scores: tuple[float, ...] = ()
    meta: Mapping[str, Any] = dc_field(default_factory=_meta, compare=False, hash=False)

    @property
    def gold(self) -> float | None:
        return self.scores[0] if self.scores else None

    @property
    def input_text(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class QAExample:
    """An extractive reading-comprehension example (SQuAD): question, context and gold answer spans."""

    id: str
    question: str
    context: str
    answers: tuple[str, ...] = ()
    answer_starts: tuple[int, ...] = ()
    title: str = ""
    meta: Mapping[str, Any] = dc_field(default_factory=_meta, compare=False, hash=False)


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """An open-domain question (CuratedTREC, WebQuestions, ...) with gold answers.

    ``answer_type`` is ``"string"`` (answers are strings, matched after SQuAD normalisation) or ``"regex"``
    (CuratedTREC: an answer is correct when a pattern matches it, case-insensitively).
    """

    id: str
    question: str
    answers: tuple[str, ...] = ()
    answer_type: Literal["string", "regex"] = "string"
    meta: Mapping[str, Any] = dc_field(default_factory=_meta, compare=False, hash=False)


Record = Union[ScoredResponse, QAExample, OpenQuestion]


def record_size(record: Record) -> int:
    """The characters of a record's text fields (its id and gold answers included): what the work on it
    grows with, to share records among workers by size (``iterutil.split_weighted``)."""
    total = 0
    for f in fields(record):
        value = getattr(record, f.name)
        if isinstance(value, str):
            total += len(value)
        elif isinstance(value, tuple):
            total += sum(len(v) for v in value if isinstance(v, str))
    return total


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys and no whitespace: the stable text form used for ids, hashes and seeds."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def params_key(params: Mapping[str, Any]) -> str:
    """Short stable hash of an attack's parameters (part of every ``Perturbed.id``)."""
    return hashlib.sha256(canonical_json(dict(params)).encode()).hexdigest()[:10]


@dataclass(frozen=True, slots=True)
class Perturbed:
    """An adversarial example derived from record ``source_id`` by ``attack`` with ``params``.

    ``field`` names the part of the source that ``text`` replaces: ``"text"`` for responses, ``"context"``
    for reading comprehension (AddSent appends to the paragraph), ``"question"`` for Q&A bots.
    ``meta`` says exactly what was inserted / deleted / replaced and where (character offsets into the
    source text, tokens, sentence order...), so the report can explain every example. ``index`` numbers
    the examples one attack makes from one record (some attacks make several).
    """

    source_id: str
    attack: str
    params: Mapping[str, Any]
    text: str
    field: str = "text"
    index: int = 0
    prompt_id: str | None = None
    meta: Mapping[str, Any] = dc_field(default_factory=_meta, compare=False, hash=False)

    @property
    def id(self) -> str:
        return f"{self.source_id}~{self.attack}~{params_key(self.params)}~{self.index}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["params"] = dict(self.params)
        d["meta"] = dict(self.meta)
        return {"id": self.id, **d}


def record_to_dict(record: Record | Prompt) -> dict[str, Any]:
    """A JSON-ready dict of any record, with ``kind`` naming its class."""
    d = asdict(record)
    d["meta"] = dict(record.meta)
    return {"kind": type(record).__name__, **d}
