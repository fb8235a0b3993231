"""The run directory (DESIGN.md "Runs").

``run.json`` (suite, seed, versions, target fingerprints, timings, counts; never secrets),
``parts/`` (one finished chunk = ``STEM.originals.parquet`` + ``STEM.status.json`` (its error counts) +
``STEM.examples.parquet``, each written atomically; ``STEM`` is ``NNNNNN`` for a record chunk and ``gNNNNNN`` for a
generator piece, :mod:`callbluff.engine.chunk_id`, examples last, so a chunk whose examples part exists is
complete), ``examples.parquet`` (all parts merged), ``predictions.sqlite`` (the prediction cache),
``errors.jsonl``, ``metrics.json`` and ``report.html``. Re-running the same suite into the same directory
skips finished chunks (re-running those with failed predictions, unless told not to), and the cache answers
every prediction made before an interruption.

A damaged directory is handled where it can be: a chunk part that is missing or unreadable is
removed with its siblings and the chunk recomputed (its predictions come from the cache, so the target is not
asked again); a damaged ``run.json`` or cache raises :class:`RunDirError` naming the file and the fix
(``--restart``, which starts over but keeps a readable cache, or which file to remove).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from callbluff.engine.chunk_id import ChunkId, legacy_generator_stem
from callbluff.engine.rows import EXAMPLE_COLUMNS, ORIGINAL_COLUMNS, SCHEMAS  # noqa: F401  (one definition: rows.py)
from callbluff.engine.runlock import (  # noqa: F401  (re-exported: the run directory's errors and lock)
    LocalIOError,
    RunDirError,
    RunDirLocked,
    RunLock,
    local_io_error,
)
from callbluff.engine.writer import BackgroundWriter  # noqa: F401  (re-exported: where chunk parts are written)

RESTART_HINT = "re-run with --restart (starts over; a readable prediction cache is kept, so no target call is repeated)"


FINGERPRINT_KEY = b"callbluff.fingerprint"
"""The Parquet key-value metadata of a chunk part that holds the fingerprint of the run that wrote it."""


class RunDir:
    """``path`` as a run directory; ``fingerprint`` (the run's, when known) is written into every chunk's status
    and into each of its Parquet parts (their key-value metadata, :data:`FINGERPRINT_KEY`), so that a part of
    another run (copied in alone or with its siblings, or left by another suite) is told apart and recomputed."""

    def __init__(self, path: str | Path, fingerprint: str | None = None) -> None:
        self.path = Path(path)
        self.parts = self.path / "parts"
        self.fingerprint = fingerprint

    def create(self) -> None:
        self.parts.mkdir(parents=True, exist_ok=True)

    def lock(self) -> RunLock:
        """The directory's lock (created with the directory), not yet taken: ``with run.lock(): ...``."""
        self.path.mkdir(parents=True, exist_ok=True)
        return RunLock(self.path / ".lock")

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
    def timings(self) -> Path:
        """Wall-clock cost of the run's searches (``timings.json``): kept out of examples.parquet and
        metrics.json, which must be the same bytes for the same seed on any machine and executor."""
        return self.path / "timings.json"

    @property
    def cache(self) -> Path:
        return self.path / "predictions.sqlite"

    # --- run.json -----------------------------------------------------------------------------------------
    def read_meta(self) -> dict[str, Any] | None:
        if not self.run_json.exists():
            return None
        try:
            meta = json.loads(self.run_json.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise RunDirError(f"{self.run_json} is damaged ({e}); {RESTART_HINT}, or delete {self.run_json}") from None
        if not isinstance(meta, dict):
            raise RunDirError(f"{self.run_json} is not a callbluff run.json (a JSON object); {RESTART_HINT}")
        return meta

    def write_meta(self, meta: dict[str, Any]) -> None:
        write_atomic(self.run_json, json.dumps(meta, indent=2, sort_keys=True, default=str))

    # --- chunk parts (a chunk is a ChunkId; a plain number is a record chunk) -------------------------------
    def part_path(self, chunk: ChunkId | int, kind: str) -> Path:
        return self.parts / f"{ChunkId.of(chunk).stem}.{kind}.parquet"

    def chunk_done(self, chunk: ChunkId | int) -> bool:
        return self.part_path(chunk, "examples").exists()

    def status_path(self, chunk: ChunkId | int) -> Path:
        return self.parts / f"{ChunkId.of(chunk).stem}.status.json"

    def generr_path(self, chunk: ChunkId | int) -> Path:
        return self.parts / f"{ChunkId.of(chunk).stem}.generr.json"

    def timings_path(self, chunk: ChunkId | int) -> Path:
        return self.parts / f"{ChunkId.of(chunk).stem}.timings.json"

    def chunk_files(self, chunk: ChunkId | int) -> tuple[Path, ...]:
        """Every file of a chunk, the examples part (which marks it done) first."""
        return (self.part_path(chunk, "examples"), self.part_path(chunk, "originals"), self.status_path(chunk),
                self.generr_path(chunk), self.timings_path(chunk))

    def adopt_legacy_parts(self) -> int:
        """Rename the generator pieces of a run directory written when they were numbered among the record chunks
        from 900,000 (``900003.*`` -> ``g000003.*``), so that it resumes: the chunks' contents are unchanged.
        Returns the number of files renamed; a rename cut short by a kill is finished by the next call."""
        renamed = 0
        for path in sorted(self.parts.glob("*.*")) if self.parts.is_dir() else ():
            stem, _, rest = path.name.partition(".")
            chunk = legacy_generator_stem(stem)
            if chunk is not None:
                os.replace(path, self.parts / f"{chunk.stem}.{rest}")
                renamed += 1
        return renamed

    def write_chunk(self, chunk: ChunkId | int, originals: list[dict[str, Any]], examples: list[dict[str, Any]],
                    status: dict[str, Any]) -> None:
        mark: dict[bytes, bytes] = {}
        if self.fingerprint is not None:
            status = {**status, "fingerprint": self.fingerprint}
            mark = {FINGERPRINT_KEY: self.fingerprint.encode()}
        write_table_atomic(self.part_path(chunk, "originals"),
                           rows_table(originals, "originals").replace_schema_metadata(mark or None))
        write_atomic(self.status_path(chunk), json.dumps(status, sort_keys=True))
        write_table_atomic(self.part_path(chunk, "examples"),
                           rows_table(examples, "examples").replace_schema_metadata(mark or None))

    def chunk_status(self, chunk: ChunkId | int) -> dict[str, Any]:
        """The error counts of a finished chunk (``prediction_errors``, ``generate_errors``)."""
        try:
            return dict(json.loads(self.status_path(chunk).read_text(encoding="utf-8")))
        except (OSError, ValueError):  # absent or damaged: count from the parts themselves
            ex = pq.read_table(self.part_path(chunk, "examples"), columns=["adv_error"])
            orig = pq.read_table(self.part_path(chunk, "originals"), columns=["error"])
            return {"prediction_errors": (len(ex) - ex["adv_error"].null_count) + (len(orig) - orig["error"].null_count),
                    "generate_errors": 0}

    def forget_chunk(self, chunk: ChunkId | int) -> None:
        for path in self.chunk_files(chunk):
            path.unlink(missing_ok=True)

    def clear(self, keep_cache: bool = True) -> list[str]:
        """Remove the run's files for ``--restart`` (the prediction cache is kept when ``keep_cache``)."""
        import shutil

        removed = []
        for path in (self.run_json, self.examples, self.originals, self.metrics, self.errors, self.report,
                     self.timings):
            if path.exists():
                path.unlink()
                removed.append(path.name)
        if self.parts.exists():
            shutil.rmtree(self.parts)
            removed.append("parts/")
        if not keep_cache:
            for suffix in ("", "-wal", "-shm"):
                p = self.cache.with_name(self.cache.name + suffix)
                if p.exists():
                    p.unlink()
            removed.append(self.cache.name)
        return removed

    def done_chunks(self) -> list[ChunkId]:
        """The finished chunks (their examples part exists): record chunks, then generator pieces, in order."""
        found = (ChunkId.parse(p.name.split(".")[0]) for p in self.parts.glob("*.examples.parquet"))
        return sorted((c for c in found if c is not None), key=ChunkId.sort_key)

    def merge(self, kind: str) -> pa.Table:
        """All finished chunks' ``kind`` parts as one table, in chunk order (in memory: for small runs and
        tests; the engine streams with :meth:`write_merged`, :meth:`frames` and :meth:`frame`)."""
        tables = [read_part(self.part_path(c, kind), kind) for c in self.done_chunks()]
        return pa.concat_tables(tables) if tables else SCHEMAS[kind].empty_table()

    def write_merged(self, kind: str, path: Path, visit: Callable[[pa.Table], None] | None = None) -> int:
        """Write every finished chunk's ``kind`` part to ``path`` (atomically) by streaming one part at a time
        through a :class:`pyarrow.parquet.ParquetWriter` (one row group per chunk, in chunk order): memory
        holds one part, whatever the run's size. ``visit`` is called with each part's table after it is
        written, so that a caller tallying the run (counts, errors, metrics) reads each part once, not once per
        tally. Returns the number of rows."""
        tmp = path.with_name(path.name + ".tmp")
        rows = 0
        try:
            with pq.ParquetWriter(tmp, SCHEMAS[kind]) as writer:
                for chunk in self.done_chunks():
                    table = read_part(self.part_path(chunk, kind), kind)
                    writer.write_table(table)
                    rows += table.num_rows
                    if visit is not None:
                        visit(table)
            os.replace(tmp, path)
        except OSError as e:  # pyarrow's errors name no file
            tmp.unlink(missing_ok=True)
            raise local_io_error(e, path) from e
        return rows

    def frames(self, kind: str, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """Each finished chunk's ``kind`` part, only ``columns`` (read column-wise), in chunk order."""
        for chunk in self.done_chunks():
            with pq.ParquetFile(self.part_path(chunk, kind)) as f:
                present = set(f.schema_arrow.names)  # a part written before a column was added: it is empty
                frame = f.read(columns=[c for c in columns if c in present]).to_pandas()
            for c in columns:
                if c not in present:
                    frame[c] = None
            yield frame[list(columns)]

    def frame(self, kind: str, columns: Sequence[str], target: str) -> pd.DataFrame:
        """The ``columns`` of every ``kind`` row of ``target`` over all finished chunks, in chunk order."""
        schema = pa.schema([SCHEMAS[kind].field(c) for c in columns])
        tables = [pq.read_table(self.part_path(c, kind), columns=list(columns), filters=[("target", "=", target)])
                  for c in self.done_chunks()]
        return (pa.concat_tables(tables) if tables else schema.empty_table()).to_pandas()


def read_part(path: Path, kind: str) -> pa.Table:
    """One chunk part with the ``kind`` schema. :class:`pyarrow.parquet.ParquetFile` reads a single file at a
    third of ``pq.read_table``'s cost (no dataset discovery); parts are written with the schema, so the cast
    only serves parts whose stored types differ (e.g. an all-null column read back as ``null``)."""
    with pq.ParquetFile(path) as f:
        table = f.read()
    return table if table.schema.equals(SCHEMAS[kind]) else pq.read_table(path, schema=SCHEMAS[kind])


def rows_table(rows: list[dict[str, Any]], kind: str) -> pa.Table:
    schema = SCHEMAS[kind]
    return pa.Table.from_pydict({c: [r.get(c) for r in rows] for c in schema.names}, schema=schema)


def write_table_atomic(path: Path, table: pa.Table) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    except OSError as e:  # pyarrow's errors name no file
        raise local_io_error(e, path) from e


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
