"""The rows of a run directory's Parquet files: one dataclass per file, whose fields are its columns and whose
annotations give its Parquet types (the one place the columns are defined; :data:`SCHEMAS` derives from them).

``examples.parquet`` holds one :class:`ExampleRow` per (adversarial example, target); ``originals.parquet`` one
:class:`OriginalRow` per (source record, target). Prompt-level generator answers have no source: their
``original_*`` and ``orig_*`` fields are empty. Gold answers are a list of strings and ranked candidates a list of
``{text, score}`` structs (run-directory format 2; format 1 stored both as JSON strings, which
:func:`callbluff.tasks.frames.gold_list` and :func:`~callbluff.tasks.frames.candidate_texts` still read, for
reports of old runs).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa

from callbluff.engine.chunk_id import ChunkId
from callbluff.engine.inputs import gold_of
from callbluff.records import Perturbed, Record, canonical_json
from callbluff.targets.base import Output


@dataclass
class ExampleRow:
    """One adversarial example as one target saw it (examples.parquet)."""

    example_id: str
    source_id: str
    prompt_id: str | None
    task: str
    attack: str
    params: str  # canonical JSON
    index: int
    field: str
    original_text: str | None
    adversarial_text: str
    meta: str  # canonical JSON
    gold: float | None
    gold_answers: list[str] | None
    target: str
    orig_score: float | None
    adv_score: float | None
    orig_answer: str | None
    adv_answer: str | None
    orig_candidates: list[Ranked] | None
    adv_candidates: list[Ranked] | None
    orig_error: str | None
    adv_error: str | None
    queries: int
    chunk: int
    """The number of the row's chunk within its kind (:class:`~callbluff.engine.chunk_id.ChunkId`): a record chunk,
    or a generator piece for an answer without a source (``prompt:`` source ids; parts written before the two kinds
    had their own id spaces number generator pieces from 900,000)."""
    verdict: bool | None = None
    """The attack's declared expectation judged on this example (:mod:`callbluff.metrics.expectations`): True
    robust, False fooled, None not judged (a failed prediction, or a case the expectation does not judge)."""
    question: str | None = None
    """The question the source record asks when the example changes another field (a reading passage), so
    that a reader of the example can judge the change against it; None otherwise."""
    orig_samples: list[float] | None = None
    adv_samples: list[float] | None = None
    """The ``n`` scores a sampling target drew for the input (``Output.samples``; its score aggregates them), in
    order; None for a target that does not sample (``n = 1``)."""


@dataclass
class OriginalRow:
    """One source record as one target saw it (originals.parquet)."""

    source_id: str
    prompt_id: str | None
    task: str
    gold: float | None
    gold_answers: list[str] | None
    answer_type: str
    target: str
    score: float | None
    answer: str | None
    candidates: list[Ranked] | None
    error: str | None
    chunk: int
    samples: list[float] | None = None
    """The ``n`` scores a sampling target drew (``Output.samples``); None for a target that does not sample."""


RUN_FORMAT = 2
"""The run-directory format this version writes (run.json ``format``): 2 = list columns; 1 (no ``format`` key) =
gold answers and candidates as JSON strings. A run directory of another format is not resumed (--restart)."""

Ranked = dict[str, Any]
"""One ranked candidate: ``{"text": str, "score": float | None}``."""

_ARROW = {"str": pa.string(), "float": pa.float64(), "int": pa.int64(), "bool": pa.bool_(), "list[str]": pa.list_(pa.string()),
          "list[float]": pa.list_(pa.float64()),
          "list[Ranked]": pa.list_(pa.struct([("text", pa.string()), ("score", pa.float64())]))}


def _schema(row: type) -> pa.Schema:
    return pa.schema([(f.name, _ARROW[str(f.type).split(" |")[0]]) for f in fields(row)])


EXAMPLE_COLUMNS: list[str] = [f.name for f in fields(ExampleRow)]
ORIGINAL_COLUMNS: list[str] = [f.name for f in fields(OriginalRow)]
SCHEMAS: dict[str, pa.Schema] = {"examples": _schema(ExampleRow), "originals": _schema(OriginalRow)}


def output_fields(out: Output | None) -> dict[str, Any]:
    """The score / answer / candidates / error of one output (all None for no output)."""
    if out is None:
        return {"score": None, "answer": None, "candidates": None, "error": None, "samples": None}
    samples = getattr(out, "samples", None)  # Output.samples: the n sampled scores (the chat target's ``n``)
    return {
        "samples": [float(x) for x in samples] if samples else None,
        "score": out.score,
        "answer": out.answer,
        "candidates": [{"text": c.text, "score": c.score} for c in out.candidates] if out.candidates else None,
        "error": out.error,
    }


def original_row(record: Record, task: str, target: str, out: Output, chunk: ChunkId | int) -> dict[str, Any]:
    """One originals.parquet row (as a dict in column order)."""
    gold, answers, answer_type = gold_of(record, task)
    o = output_fields(out)
    return vars(OriginalRow(
        source_id=record.id, prompt_id=getattr(record, "prompt_id", None), task=task, gold=gold,
        gold_answers=list(answers) if answers else None, answer_type=answer_type, target=target,
        score=o["score"], answer=o["answer"], candidates=o["candidates"], error=o["error"], chunk=ChunkId.of(chunk).n,
        samples=o["samples"]))


def example_row(ex: Perturbed, src: Record | None, task: str, target: str, orig: Output | None, adv: Output,
                queries: int, chunk: ChunkId | int, verdict: bool | None = None) -> dict[str, Any]:
    """One examples.parquet row (as a dict in column order). ``src``/``orig`` are None for prompt-level generator
    answers (no source)."""
    gold, answers, _ = gold_of(src, task) if src is not None else (None, [], "score")
    o, a = output_fields(orig), output_fields(adv)
    return vars(ExampleRow(
        example_id=ex.id, source_id=ex.source_id, prompt_id=ex.prompt_id, task=task, attack=ex.attack,
        params=canonical_json(dict(ex.params)), index=ex.index, field=ex.field,
        original_text=getattr(src, ex.field) if src is not None else None, adversarial_text=ex.text,
        meta=canonical_json(dict(ex.meta)), gold=gold, gold_answers=list(answers) if answers else None,
        target=target, orig_score=o["score"], adv_score=a["score"], orig_answer=o["answer"], adv_answer=a["answer"],
        orig_candidates=o["candidates"], adv_candidates=a["candidates"], orig_error=o["error"],
        adv_error=a["error"], queries=queries, chunk=ChunkId.of(chunk).n, verdict=verdict,
        orig_samples=o["samples"], adv_samples=a["samples"],
        question=getattr(src, "question", None) if src is not None and ex.field not in ("question", "text") else None))

