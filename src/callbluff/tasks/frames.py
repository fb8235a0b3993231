"""Helpers the task descriptors share to read a run's tables (pandas frames of examples.parquet /
originals.parquet rows). Gold answers and ranked candidates are list columns (run-directory format 2, see
:mod:`callbluff.engine.rows`); format 1 stored them as JSON strings, which these readers still take, so reports
of old runs render."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pandas as pd


def gold_list(cell: Any) -> list[str]:
    """The gold answers of one ``gold_answers`` cell as read back (a list or array; a JSON string in format 1;
    None: no gold answers)."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return []
    if isinstance(cell, str):
        return [str(a) for a in json.loads(cell)]
    return [str(a) for a in cell]


def candidate_texts(cell: Any) -> list[str] | None:
    """The ranked candidate texts of one ``*candidates`` cell as read back (``{text, score}`` structs;
    ``[[text, score], ...]`` JSON in format 1); None when the output had no candidates."""
    if cell is None or (isinstance(cell, float) and cell != cell):
        return None
    items: Sequence[Any] = json.loads(cell) if isinstance(cell, str) else cell
    return [str(c["text"] if isinstance(c, dict) else c[0]) for c in items]


def golds_of(col: pd.Series) -> list[list[str]]:
    """The gold answers of each row (none: ``[]``)."""
    return [gold_list(g) for g in col]


def error_fields(g: pd.DataFrame) -> dict[str, int]:
    """Failed predictions among a group of examples, split: the source's original input, the adversarial one."""
    return {"n_errors_original": int(g["orig_error"].notna().sum()),
            "n_errors_adversarial": int(g["adv_error"].notna().sum()), "n_errors_generate": 0}
