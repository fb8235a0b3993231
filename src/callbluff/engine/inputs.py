"""How records and adversarial examples become target :class:`~callbluff.targets.base.Input` s."""

from __future__ import annotations

from callbluff.records import OpenQuestion, Perturbed, QAExample, Record, ScoredResponse, Task
from callbluff.targets.base import Input


def task_of(record: Record) -> Task:
    if isinstance(record, ScoredResponse):
        raise TypeError("a ScoredResponse is essay or content: take the task from the dataset")
    return "reading" if isinstance(record, QAExample) else "questions"


def original_input(record: Record, task: Task) -> Input:
    """The unmodified record as the target sees it."""
    if isinstance(record, ScoredResponse):
        return Input(task=task, text=record.text, prompt_id=record.prompt_id)
    if isinstance(record, QAExample):
        return Input(task="reading", text=record.question, context=record.context)
    if isinstance(record, OpenQuestion):
        return Input(task="questions", text=record.question)
    raise TypeError(f"no target input for {type(record).__name__}")


def adversarial_input(example: Perturbed, record: Record, task: Task) -> Input:
    """The source record with ``example.field`` replaced by the adversarial text."""
    base = original_input(record, task)
    if example.field == "text" or (example.field == "question" and not isinstance(record, ScoredResponse)):
        return Input(task=base.task, text=example.text, prompt_id=base.prompt_id, context=base.context)
    if example.field == "context":
        return Input(task=base.task, text=base.text, prompt_id=base.prompt_id, context=example.text)
    raise ValueError(f"example {example.id}: cannot replace field {example.field!r} of {type(record).__name__}")


def gold_of(record: Record) -> tuple[float | None, list[str], str]:
    """(gold score, gold answers, answer type) of a record."""
    if isinstance(record, ScoredResponse):
        return record.gold, [], "score"
    if isinstance(record, QAExample):
        return None, list(record.answers), "string"
    if isinstance(record, OpenQuestion):
        return None, list(record.answers), record.answer_type
    raise TypeError(type(record).__name__)
