"""How records and adversarial examples become target :class:`~callbluff.targets.base.Input` s: the task
descriptor's (:mod:`callbluff.tasks`) builders, by task name."""

from __future__ import annotations

from callbluff.records import Perturbed, Record, Task
from callbluff.targets.base import Input
from callbluff.tasks import get_task
from callbluff.tasks.base import Gold


def original_input(record: Record, task: Task) -> Input:
    """The unmodified record as the target sees it."""
    return get_task(task).original_input(record)


def adversarial_input(example: Perturbed, record: Record, task: Task) -> Input:
    """The source record with ``example.field`` replaced by the adversarial text."""
    return get_task(task).adversarial_input(example, record)


def generated_input(example: Perturbed, task: Task) -> Input:
    """A prompt-level generator's answer as the target sees it."""
    return get_task(task).generated_input(example)


def gold_of(record: Record, task: Task) -> Gold:
    """(gold score, gold answers, answer type) of a record."""
    return get_task(task).gold(record)
