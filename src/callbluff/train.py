"""``callbluff train KIND``: build a reference system from a dataset spec and save it with its metadata.

Every reference model follows one shape: ``Model(**params)``, ``fit(records, prompts)`` (scorers), ``save(dir)``
writing ``model.json`` (kind, data, parameters, versions, clean metrics) next to its weights, and
``Model.load(dir)``; :func:`callbluff.models.load_model` loads any of them, so a trained directory is a suite
target (``type = "model"``). It sits above the engine (it measures the saved model through a suite run), so the
models themselves never import the engine.
"""

from __future__ import annotations

import importlib
import json
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from callbluff.datasets import DataError, load
from callbluff.datasets.base import parse_spec
from callbluff.datasets.demo import FILES, data_path
from callbluff.engine.run import run_suite
from callbluff.engine.suite import parse_suite
from callbluff.models.retriever import RetrieverReader
from callbluff.progress import Progress, prefixed
from callbluff.tasks import all_tasks, get_task

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
                eval_spec: str | None = None, progress: Progress | None = None, **params: Any) -> dict[str, Any]:
    """Train ``kind`` on dataset spec ``data`` (only ``prompts`` if given), save to ``out_dir``; returns the
    saved metadata (``model.json``) plus the training time. With ``eval_spec`` the saved model is also
    measured on that held-out data (:func:`evaluate_saved`) and the figures are stored in ``model.json``.
    ``progress`` (:mod:`callbluff.progress`) hears the fit's stages (the scorers' prompts and steps, the
    retriever's documents), then the evaluation's records (stage ``evaluation: records``)."""
    out = Path(out_dir)
    if eval_spec:
        load(eval_spec)  # a wrong evaluation spec fails now, not after a long training
    t0 = time.perf_counter()
    if kind in SCORERS:
        ds = load(data)
        if not get_task(ds.task).scoring:
            scoring = ", ".join(t.name for t in all_tasks() if t.scoring)
            raise DataError(f"{kind} trains on scored responses ({scoring} data); {data} is {ds.task!r}")
        wanted = {str(p) for p in prompts} if prompts else None
        if wanted and not wanted <= set(ds.prompts):
            raise DataError(f"{data}: unknown prompt(s) {', '.join(sorted(wanted - set(ds.prompts)))}; "
                            f"the data has {', '.join(sorted(ds.prompts))}")
        records = [r for r in ds if wanted is None or r.prompt_id in wanted]
        model = _cls(*SCORERS[kind])(**params)
        model.data_spec = data
        model.fit(records, {k: v for k, v in ds.prompts.items() if wanted is None or k in wanted}, progress=progress)
    elif kind in READERS:
        model = _cls(*READERS[kind])(**params)  # no training: a fixed algorithm with its settings
    elif kind == "retriever":

        name, path, _ = parse_spec(data)
        if name == "demo":
            path = str(data_path(FILES[path]))
        elif name != "squad":
            raise DataError(f"retriever: index a SQuAD JSON (squad:PATH or demo:squad), got {data!r}")
        model = RetrieverReader.from_squad([p for p in path.split(",") if p], progress=progress, **params)
    else:
        raise ValueError(f"unknown model kind {kind!r}; allowed: {', '.join(KINDS)}")
    model.save(out)
    meta = json.loads((out / "model.json").read_text())
    meta["train_seconds"] = round(time.perf_counter() - t0, 2)
    if eval_spec:
        meta["metrics"] = evaluate_saved(out, eval_spec, prompts=prompts, progress=prefixed(progress, "evaluation"))
    return meta


def evaluate_saved(out_dir: str | Path, eval_spec: str, *, prompts: Sequence[str] | None = None,
                   progress: Progress | None = None) -> dict[str, Any]:
    """Clean metrics of the model saved in ``out_dir`` on dataset ``eval_spec``, measured through the engine
    exactly as ``callbluff evaluate`` does, and written into its ``model.json`` under ``metrics``:
    ``eval_data``, ``eval_rows`` (the metric rows) and, for scorers, ``metrics[prompt]["eval_qwk"]`` /
    ``["eval_n"]`` per prompt and ``eval_mean_qwk``. The metric rows of prompts the model was not trained on
    (or not in ``prompts``) are dropped: they would only hold errors. ``progress`` hears stage ``records`` with the records
    measured so far. Returns the updated ``metrics``."""
    out = Path(out_dir)
    meta_file = out / "model.json"
    meta = json.loads(meta_file.read_text(encoding="utf-8"))
    trained = [str(p) for p in (prompts or meta.get("prompts") or [])]
    suite = parse_suite({"name": "train-eval", "dataset": {"spec": eval_spec},
                         "target": [{"name": "model", "type": "model", "path": str(out.resolve())}],
                         "output": {"report": False}}, source=f"evaluation data {eval_spec}", base_dir=Path.cwd())
    hook: Progress | None = None
    if progress is not None:
        report, size, n = progress, suite.output.chunk_size, sum(1 for _ in load(eval_spec))

        def chunks(stage: str, done: int, total: int | None) -> None:
            if stage == "chunk":  # the engine streams chunks of `size` records and reports them without a total
                report("records", min(done * size, n), n)

        hook = chunks
        report("records", 0, n)

    with tempfile.TemporaryDirectory(prefix="callbluff-train-eval-") as tmp:
        rows = run_suite(suite, Path(tmp) / "run", progress=hook).metrics
    if trained:  # a prompt the model was not trained on would only show up as a row of errors
        rows = [r for r in rows if r.get("prompt") in (None, "", "all") or str(r["prompt"]) in trained]
    metrics = dict(meta.get("metrics") or {})
    metrics["eval_data"] = eval_spec
    metrics["eval_rows"] = rows
    per = {str(r["prompt"]): r for r in rows if r.get("qwk") is not None and r.get("prompt") not in (None, "", "all")}
    for pid, r in per.items():
        metrics.setdefault(pid, {})
        metrics[pid]["eval_qwk"] = round(float(r["qwk"]), 4)
        metrics[pid]["eval_n"] = int(r["n"])
    if per:
        metrics["eval_mean_qwk"] = round(sum(m["eval_qwk"] for p, m in metrics.items() if p in per) / len(per), 4)
    meta["metrics"] = metrics
    meta_file.write_text(json.dumps(meta, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    return metrics


def train_content_scorer(data_spec: str, out_dir: str | Path, prompts: Sequence[str] | None = None,
                         features: Iterable[str] | str | None = None, *, eval_spec: str | None = None,
                         **kw: Any) -> dict[str, Any]:
    """Train a :class:`ContentScorer` on dataset spec ``data_spec`` (e.g. ``asap-sas:train.tsv.gz``), save
    it to ``out_dir`` and return its metadata (``model.json``) with ``train_seconds``. With ``eval_spec``
    (e.g. the public leaderboard), per-prompt QWK on that data is added under ``metrics[pid]["eval_qwk"]``
    and saved. ``kw`` go to :class:`~callbluff.models.content.ContentScorer`."""
    if features is not None:
        kw["features"] = features
    return train_model("content-scorer", data_spec, out_dir, prompts=prompts, eval_spec=eval_spec, **kw)
