"""The run directory (DESIGN.md "Runs").

``run.json`` (suite, seed, versions, target fingerprints, timings, counts; never secrets),
``parts/`` (one finished chunk = ``NNNNNN.originals.parquet`` + ``NNNNNN.examples.parquet``, each written
atomically, examples last, so a chunk whose examples part exists is complete), ``examples.parquet`` (all
parts merged), ``predictions.sqlite`` (the prediction cache), ``errors.jsonl``, ``metrics.json`` and
``report.html``. Re-running the same suite into the same directory skips finished chunks, and the cache
answers every prediction made before an interruption.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

_FLOAT = ("gold", "orig_score", "adv_score", "score")
_INT = ("index", "queries", "chunk")


def _schema(columns: list[str]) -> pa.Schema:
    return pa.schema([(c, pa.float64() if c in _FLOAT else pa.int64() if c in _INT else pa.string())
                      for c in columns])


EXAMPLE_COLUMNS = [
    "example_id", "source_id", "prompt_id", "task", "attack", "params", "index", "field", "original_text",
    "adversarial_text", "meta", "gold", "gold_answers", "target", "orig_score", "adv_score", "orig_answer",
    "adv_answer", "orig_candidates", "adv_candidates", "orig_error", "adv_error", "queries", "chunk",
]
ORIGINAL_COLUMNS = [
    "source_id", "prompt_id", "task", "gold", "gold_answers", "answer_type", "target", "score", "answer",
    "candidates", "error", "chunk",
]
SCHEMAS = {"examples": _schema(EXAMPLE_COLUMNS), "originals": _schema(ORIGINAL_COLUMNS)}


class RunDir:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.parts = self.path / "parts"

    def create(self) -> None:
        self.parts.mkdir(parents=True, exist_ok=True)

    # --- files -----------------------------------------------------------------------------------------
    @property
    def run_json(self) -> Path:
        return self.path / "run.json"

    @property
    def examples(self) -> Path:
        return self.path / "examples.parquet"

    @property
    def originals(self) -> Path:
        return self.path / "originals.parquet"

    @property
    def metrics(self) -> Path:
        return self.path / "metrics.json"

    @property
    def errors(self) -> Path:
        return self.path / "errors.jsonl"

    @property
    def report(self) -> Path:
        return self.path / "report.html"

    @property
    def cache(self) -> Path:
        return self.path / "predictions.sqlite"

    # --- run.json -----------------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any] | None:
        if not self.run_json.exists():
            return None
        return json.loads(self.run_json.read_text())

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_atomic(self.run_json, json.dumps(meta, indent=2, sort_keys=True, default=str))

    # --- chunk parts ---------------------------------------------------------------------------------------
    def part_path(self, chunk: int, kind: str) -> Path:
        return self.parts / f"{chunk:06d}.{kind}.parquet"

    def chunk_done(self, chunk: int) -> bool:
        return self.part_path(chunk, "examples").exists()

    def write_chunk(self, chunk: int, originals: list[dict[str, Any]], examples: list[dict[str, Any]]) -> None:
        write_table_atomic(self.part_path(chunk, "originals"), rows_table(originals, "originals"))
        write_table_atomic(self.part_path(chunk, "examples"), rows_table(examples, "examples"))

    def done_chunks(self) -> list[int]:
        return sorted(int(p.name.split(".")[0]) for p in self.parts.glob("*.examples.parquet"))

    def merge(self, kind: str) -> pa.Table:
        """All finished chunks' ``kind`` parts as one table, in chunk order."""
        tables = [pq.read_table(self.part_path(c, kind), schema=SCHEMAS[kind]) for c in self.done_chunks()]
        return pa.concat_tables(tables) if tables else SCHEMAS[kind].empty_table()


def rows_table(rows: list[dict[str, Any]], kind: str) -> pa.Table:
    schema = SCHEMAS[kind]
    return pa.Table.from_pydict({c: [r.get(c) for r in rows] for c in schema.names}, schema=schema)


def write_table_atomic(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp)
    os.replace(tmp, path)


class BackgroundWriter:
    """Writes chunk parts on one background thread so that the next chunk's predictions need not wait for
    Parquet encoding and disk. :meth:`close` waits for every write and re-raises the first failure."""

    def __init__(self) -> None:
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="callbluff-part-writer")
        self._pending: list[Future[Any]] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> None:
        self._pending = [f for f in self._pending if not f.done() or f.exception() is not None]
        self._pending.append(self._pool.submit(fn, *args))

    def close(self) -> None:
        try:
            for f in self._pending:
                f.result()
        finally:
            self._pending = []
            self._pool.shutdown(wait=True)


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
