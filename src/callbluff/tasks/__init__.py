"""Task descriptors (:mod:`callbluff.tasks.base`): one module per task; importing this package registers the
built-in ones (essay, content, reading, questions)."""

from callbluff.tasks.base import (
    MetricAccumulator,
    Task,
    all_tasks,
    get_task,
    register_task,
    task_names,
    unregister_task,
)

# importing the task modules registers them
from callbluff.tasks import content, essay, questions, reading  # noqa: F401  isort: skip

__all__ = ["MetricAccumulator", "Task", "all_tasks", "get_task", "register_task", "task_names", "unregister_task"]
