"""``callbluff train KIND``: build a reference system from a dataset spec and save it with its metadata.

Every reference model follows one shape: ``Model(**params)``, ``fit(records, prompts)`` (scorers), ``save(dir)``
writing ``model.json`` (kind, data, parameters, versions, clean metrics) next to its weights, and
``Model.load(dir)``; :func:`callbluff.models.load_model` loads any of them, so a trained directory is a suite
target (``type = "model"``).
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

SCORERS: dict[str, tuple[str, str]] = {
    "content-scorer": ("callbluff.models.content", "ContentScorer"),
    "essay-scorer": ("callbluff.models.essay", "EssayScorer"),
    "neural-scorer": ("callbluff.models.neural", "NeuralScorer"),
}
READERS: dict[str, tuple[str, str]] = {
    "sliding-window-qa": ("callbluff.models.qa", "SlidingWindowQA"),
}
KINDS = (*SCORERS, "retriever", *READERS)


def _cls(module: str, name: str) -> Any:
    return getattr(importlib.import_module(module), name)


def train_model(kind: str, data: str, out_dir: str | Path, *, prompts: Sequence[str] | None = None,
                **params: Any) -> dict[str, Any]:
    """Train ``kind`` on dataset spec ``data`` (only ``prompts`` if given), save to ``out_dir``; returns the
    saved metadata (``model.json``) plus the training time."""
    from callbluff.datasets import DataError, load

    out = Path(out_dir)
    t0 = time.perf_counter()
    if kind in SCORERS:
        ds = load(data)
        if ds.task not in ("essay", "content"):
            raise DataError(f"{kind} trains on scored responses (essay or content data); {data} is {ds.task!r}")
        wanted = {str(p) for p in prompts} if prompts else None
        if wanted and not wanted <= set(ds.prompts):
            raise DataError(f"{data}: unknown prompt(s) {', '.join(sorted(wanted - set(ds.prompts)))}; "
                            f"the data has {', '.join(sorted(ds.prompts))}")
        records = [r for r in ds if wanted is None or r.prompt_id in wanted]
        model = _cls(*SCORERS[kind])(**params)
        model.data_spec = data
        model.fit(records, {k: v for k, v in ds.prompts.items() if wanted is None or k in wanted})
    elif kind in READERS:
        model = _cls(*READERS[kind])(**params)  # no training: a fixed algorithm with its settings
    elif kind == "retriever":
        from callbluff.datasets.base import parse_spec
        from callbluff.models.retriever import RetrieverReader

        name, path, _ = parse_spec(data)
        if name == "demo":
            from callbluff.datasets.demo import FILES, data_path

            path = str(data_path(FILES[path]))
        elif name != "squad":
            raise DataError(f"retriever: index a SQuAD JSON (squad:PATH or demo:squad), got {data!r}")
        model = RetrieverReader.from_squad([p for p in path.split(",") if p], **params)
    else:
        raise ValueError(f"unknown model kind {kind!r}; allowed: {', '.join(KINDS)}")
    model.save(out)
    meta = json.loads((out / "model.json").read_text())
    meta["train_seconds"] = round(time.perf_counter() - t0, 2)
    return meta
