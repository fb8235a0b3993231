"""Helpers the task descriptors share to read a run's tables (pandas frames of examples.parquet /
originals.parquet rows)."""

from __future__ import annotations

import json

import pandas as pd


def golds_of(col: pd.Series) -> list[list[str]]:
    """The gold answers of each row (stored as a JSON list; none: ``[]``)."""
    return [json.loads(g) if isinstance(g, str) else [] for g in col]


def error_fields(g: pd.DataFrame) -> dict[str, int]:
    """Failed predictions among a group of examples, split: the source's original input, the adversarial one."""
    return {"n_errors_original": int(g["orig_error"].notna().sum()),
            "n_errors_adversarial": int(g["adv_error"].notna().sum()), "n_errors_generate": 0}
