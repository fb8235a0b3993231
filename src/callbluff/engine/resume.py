"""The run directory as the engine uses it: resume or refuse (a run of another suite, or written by another
version, stops with the fix and what differs), ``--restart``, the prediction cache (damaged: the fix), and the
finished chunks that cannot be used (recomputed, one note per reason). A room of
:class:`~callbluff.engine.run.Engine` (a mixin)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from callbluff.engine.rows import RUN_FORMAT
from callbluff.engine.store import RESTART_HINT, RunDir, RunDirError
from callbluff.engine.suite import IDENTITY_KEYS, Suite, SuiteError
from callbluff.targets.cache import PredictionCache


class RunDirectory:
    """The engine's run-directory methods (``Engine`` provides ``suite``, ``run``, ``notes``, ``restart``,
    ``limit``, ``retry_errors`` and ``fingerprint()``)."""

    suite: Suite
    run: RunDir
    notes: list[str]
    restart: bool
    limit: int | None
    retry_errors: bool

    def fingerprint(self) -> str:
        raise NotImplementedError

    def _check_resume(self) -> dict[str, Any] | None:
        if self.restart:
            removed = self.run.clear(keep_cache=self._cache_readable())
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
        if meta.get("fingerprint") != self.fingerprint():
            raise SuiteError(
                f"{self.run.path} holds a run of a different suite (or --limit): its fingerprint is "
                f"{meta.get('fingerprint')}, this suite's is {self.fingerprint()}{self._differences(meta)}. Use "
                "another --out directory, or --restart to start over in this one (the prediction cache is kept)."
            )
        return meta

    def _differences(self, meta: dict[str, Any]) -> str:
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

    def _cache_path(self) -> Path:
        return Path(self.suite.resolve(self.suite.output.cache)) if self.suite.output.cache else self.run.cache

    def _cache_readable(self) -> bool:
        path = self._cache_path()
        if not path.exists():
            return True
        try:
            with PredictionCache(path) as cache:
                cache.check()
            return True
        except sqlite3.DatabaseError:
            return False

    def _open_cache(self) -> PredictionCache:
        path = self._cache_path()
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

    def _recover_parts(self) -> None:
        """Forget the finished chunks that cannot be used (damaged, or made by another run or another version of
        a target): one note per reason, naming the chunks."""
        by_reason: dict[str, list[int]] = {}
        for chunk, why in self.run.damaged_chunks().items():
            self.run.forget_chunk(chunk)
            by_reason.setdefault(why, []).append(chunk)
        for why, chunks in by_reason.items():
            self.notes.append(f"{chunk_count(chunks)}: {why}; recomputed (valid predictions of an unchanged target "
                              "come from the cache)")

    def _needs_run(self, idx: int) -> bool:
        if not self.run.chunk_done(idx):
            return True
        return bool(self.retry_errors and self.run.chunk_status(idx).get("prediction_errors", 0))


def _comparable(key: str, value: Any) -> Any:
    """A suite part as the fingerprint sees it: targets without their identity keys."""
    if key == "target" and isinstance(value, list):
        return [{k: v for k, v in t.items() if k not in IDENTITY_KEYS} for t in value if isinstance(t, dict)]
    return value


def chunk_count(chunks: list[int]) -> str:
    """Finished parts of a run counted for people: one is named ("chunk 7"), several are counted without the
    engine's internal numbers ("3 record chunks and 2 generator pieces"; pieces are numbered from
    ``GENERATOR_CHUNK0``)."""
    from callbluff.engine.generate import GENERATOR_CHUNK0

    if len(chunks) == 1:  # one chunk: its number, which its reason's file name carries too
        return f"chunk {chunks[0]}"
    records = sum(c < GENERATOR_CHUNK0 for c in chunks)
    pieces = len(chunks) - records
    parts = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in ((records, "record chunk"),
                                                                  (pieces, "generator piece")) if n]
    return " and ".join(parts) or "no chunk"
