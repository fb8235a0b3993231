"""The ``metrics.json`` row: who was attacked how, plus any metric fields a suite computes.

Every row has the keys :data:`ROW_KEYS` (``task``, ``attack``, ``params``, ``prompt``, ``target``) followed
by metric fields named as in :mod:`callbluff.metrics` (``qwk``, ``neg_pct``, ``arr``, ``em_adv``,
``recall_at_5``, ...). Suites add fields freely; a field may not reuse a key of the row schema. The engine
builds every row through :func:`metric_row`; each task's field lists (report, terminal) are its descriptor's
``fields`` / ``terminal_fields`` (:mod:`callbluff.tasks`).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from callbluff.records import canonical_json

ROW_KEYS: tuple[str, ...] = ("task", "attack", "params", "prompt", "target")

ERROR_FIELDS: tuple[str, ...] = ("n_errors_original", "n_errors_adversarial", "n_errors_generate")
"""Failed predictions of the sources' original inputs, of the adversarial inputs, and attack failures
(generation or search) in the row's (attack, params, prompt): three counts, never mixed."""


def _plain(value: Any) -> Any:
    """numpy scalars -> Python numbers, NaN/inf -> None (undefined; keeps metrics.json strict JSON)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


CLEAN = "clean"
ALL = "all"


def metric_row(
    task: str,
    attack: str | None,
    params: Mapping[str, Any] | str | None,
    prompt: str | None,
    target: str | None,
    **fields: Any,
) -> dict[str, Any]:
    """One ``metrics.json`` row: the one schema the engine, the CLI and the report use.

    ``attack`` is ``"clean"`` (or None) for rows about original inputs only (e.g. ``qwk`` on real answers);
    ``params`` is the attack's parameters (a mapping, or its canonical JSON), stored as canonical JSON (sorted
    keys) so that rows group and compare as strings; ``prompt`` is a prompt id, or ``"all"`` (or None) for rows
    pooled over prompts / a whole dataset; ``target`` names the system under test. Metric values are made
    JSON-ready: numpy numbers become Python numbers and NaN (undefined, e.g. no valid pair) becomes None.
    ``task`` is a task name (the engine checks it against the registered tasks, :func:`callbluff.tasks.get_task`).

    Raises:
        ValueError: for a task that is not a non-empty string.
    """
    if not isinstance(task, str) or not task:
        raise ValueError(f"task must be a task name, got {task!r}")
    if isinstance(params, str):
        params = json.loads(params) if params else {}
    row: dict[str, Any] = {
        "task": task,
        "attack": CLEAN if attack is None else attack,
        "params": canonical_json(_plain(dict(params or {}))),
        "prompt": ALL if prompt is None else str(prompt),
        "target": target,
    }
    for key, value in fields.items():
        row[key] = _plain(value)
    return row


def row_params(row: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters of a metric row as a dict."""
    return dict(json.loads(row["params"])) if row.get("params") else {}
