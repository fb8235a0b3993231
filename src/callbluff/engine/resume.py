"""The run directory as the engine uses it: resume or refuse (a run of another suite, or written by another
version, stops with the fix and what differs), ``--restart``, the prediction cache (damaged: the fix), and the
finished chunks that cannot be used (recomputed, one note per reason). The engine holds one
:class:`RunDirectory`."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from callbluff.engine.chunk_id import ChunkId
from callbluff.engine.rows import RUN_FORMAT
from callbluff.engine.store import FINGERPRINT_KEY, RESTART_HINT, RunDir, RunDirError
from callbluff.engine.suite import IDENTITY_KEYS, Suite, SuiteError
from callbluff.targets.cache import PredictionCache


class RunDirectory:
    """A run directory as one run of ``suite`` uses it: whether it resumes (:meth:`check_resume`), its prediction
    cache (:meth:`open_cache`), the finished chunks it cannot use (:meth:`recover_parts`) and which chunks still
    need to run (:meth:`needs_run`). What it finds worth saying goes to ``notes`` (the run's list, shared)."""

    def __init__(self, run: RunDir, suite: Suite, *, fingerprint: str, limit: int | None, restart: bool = False,
                 retry_errors: bool = True, notes: list[str] | None = None) -> None:
        self.run = run
        self.suite = suite
        self.fingerprint = fingerprint
        self.limit = limit
        self.restart = restart
        self.retry_errors = retry_errors
        self.notes = notes if notes is not None else []

    def check_resume(self) -> dict[str, Any] | None:
        if self.restart:
            removed = self.run.clear(keep_cache=self.cache_readable())
            if removed:
                self.notes.append(f"--restart: removed {', '.join(removed)}")
            return None
        meta = self.run.read_meta()
        if meta is None:
            return None
        if meta.get("format", 1) != RUN_FORMAT:
            raise RunDirError(
                f"{self.run.run_json}: this run directory was written by another version of callbluff (run-directory "
                f"format {meta.get('format', 1)}; this version reads and writes format {RUN_FORMAT}), so it cannot be "
                f"resumed. Fix: {RESTART_HINT}, or use another --out directory.")
        if meta.get("fingerprint") != self.fingerprint:
            raise SuiteError(
                f"{self.run.path} holds a run of a different suite (or --limit): its fingerprint is "
                f"{meta.get('fingerprint')}, this suite's is {self.fingerprint}{self.differences(meta)}. Use "
                "another --out directory, or --restart to start over in this one (the prediction cache is kept)."
            )
        self.run.adopt_legacy_parts()  # generator pieces numbered from 900,000 by earlier versions: same chunks
        return meta

    def differences(self, meta: dict[str, Any]) -> str:
        """`` (what differs: attack, seed)``: the parts of the suite that changed since the run directory was
        made (run.json keeps the suite as run); empty when run.json cannot say."""
        before = meta.get("suite")
        if not isinstance(before, dict):
            return ""
        now = self.suite.model_dump(exclude={"base_dir"})
        keys = ("dataset", "attack", "target", "seed", "limit")
        changed = [k for k in keys if _comparable(k, before.get(k)) != _comparable(k, now.get(k))]
        if meta.get("limit") != self.limit and "limit" not in changed:
            changed.append("--limit")
        if (before.get("output") or {}).get("chunk_size") != self.suite.output.chunk_size:
            changed.append("output.chunk_size")
        return f" (what differs: {', '.join(changed)})" if changed else ""

    def cache_path(self) -> Path:
        return Path(self.suite.resolve(self.suite.output.cache)) if self.suite.output.cache else self.run.cache

    def cache_readable(self) -> bool:
        path = self.cache_path()
        if not path.exists():
            return True
        try:
            with PredictionCache(path) as cache:
                cache.check()
            return True
        except sqlite3.DatabaseError:
            return False

    def open_cache(self) -> PredictionCache:
        path = self.cache_path()
        if path.is_dir():
            raise RunDirError(f"{path}: the prediction cache (output.cache) is a directory, not a file. Fix: point "
                              f"output.cache at a file, e.g. {path / 'predictions.sqlite'}")
        try:
            cache = PredictionCache(path)
            cache.check()
        except sqlite3.DatabaseError as e:
            raise RunDirError(
                f"{path}: the prediction cache is damaged ({e}). Fix: {RESTART_HINT.split(' (')[0]} (a damaged "
                f"cache is removed; every prediction is asked again), or delete {path} and re-run (finished "
                "chunks are kept; only unfinished predictions are asked again)") from None
        return cache

    def recover_parts(self) -> None:
        """Forget the finished chunks that cannot be used (damaged, or made by another run or another version of
        a target): one note per reason, naming the chunks."""
        by_reason: dict[str, list[ChunkId]] = {}
        for chunk, why in damaged_chunks(self.run).items():
            self.run.forget_chunk(chunk)
            by_reason.setdefault(why, []).append(chunk)
        for why, chunks in by_reason.items():
            self.notes.append(f"{chunk_count(chunks)}: {why}; recomputed (valid predictions of an unchanged target "
                              "come from the cache)")

    def needs_run(self, idx: ChunkId) -> bool:
        if not self.run.chunk_done(idx):
            return True
        return bool(self.retry_errors and self.run.chunk_status(idx).get("prediction_errors", 0))


def _comparable(key: str, value: Any) -> Any:
    """A suite part as the fingerprint sees it: targets without their identity keys."""
    if key == "target" and isinstance(value, list):
        return [{k: v for k, v in t.items() if k not in IDENTITY_KEYS} for t in value if isinstance(t, dict)]
    return value


def chunk_count(chunks: list[ChunkId]) -> str:
    """Finished parts of a run counted for people: one is named ("chunk 7", "generator piece 2"), several are
    counted ("3 record chunks and 2 generator pieces")."""
    if len(chunks) == 1:  # one chunk: its number, which its reason's file name carries too
        return str(chunks[0])
    pieces = sum(c.is_generator for c in chunks)
    records = len(chunks) - pieces
    parts = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in ((records, "record chunk"),
                                                                  (pieces, "generator piece")) if n]
    return " and ".join(parts) or "no chunk"


def damaged_chunks(run: RunDir) -> dict[ChunkId, str]:
    """Finished chunks whose parts are missing or unreadable, or whose status or one of whose Parquet parts
    names another run's fingerprint, or none (a part copied in from another run, alone or with its
    siblings), with the reason (they are recomputed: the cache answers an unchanged target's predictions). A
    status without a fingerprint (written before statuses carried one) is judged by its parts."""
    bad: dict[ChunkId, str] = {}
    for chunk in run.done_chunks():
        theirs = _status_fingerprint(run, chunk)
        if run.fingerprint is not None and theirs is not None and theirs != run.fingerprint:
            bad[chunk] = (f"its parts belong to another run (fingerprint {theirs}; this run's is "
                          f"{run.fingerprint})")
            continue
        for kind in ("originals", "examples"):
            path = run.part_path(chunk, kind)
            try:
                meta = pq.read_metadata(path)
            except FileNotFoundError:
                bad[chunk] = f"{path.name} is missing"
                break
            except (OSError, pa.ArrowException) as e:
                bad[chunk] = f"{path.name} is unreadable ({e})"
                break
            mark = (meta.metadata or {}).get(FINGERPRINT_KEY)
            if run.fingerprint is not None and mark != run.fingerprint.encode():
                bad[chunk] = (f"{path.name} belongs to another run (fingerprint "
                              f"{mark.decode(errors='replace') if mark else 'none'}; this run's is "
                              f"{run.fingerprint})")
                break
    return bad

def _status_fingerprint(run: RunDir, chunk: ChunkId) -> str | None:
    try:
        status = json.loads(run.status_path(chunk).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    fp = status.get("fingerprint") if isinstance(status, dict) else None
    return str(fp) if fp is not None else None

