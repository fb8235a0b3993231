"""The prediction cache: SQLite in WAL mode keyed by (target fingerprint, input key).

One row per prediction: ``fingerprint`` (:attr:`Target.fingerprint`), ``key`` (:meth:`Input.key`, a hash of
task, prompt, context and text), the :class:`Output` as JSON and the time it was stored. Only successful
outputs belong here (:class:`~callbluff.targets.wrappers.CachedTarget` never stores errors, so a later run
retries them).

Durable and cheap writes: :meth:`PredictionCache.put_many` commits each batch to an append-only ``journal``
table (sequential rows: a commit writes one or two pages, where inserting 64 hash keys into the keyed table
would dirty ~60 random pages), and keeps the batch in memory for this process's lookups. The journal is
merged into the keyed ``predictions`` table in one transaction every ``merge_every`` rows and when a cache is
opened (so predictions committed just before a kill, or by a run that has ended, are found by the next run). Another process
sees a journaled prediction once it is merged (before that it is a cache miss: safe, never a wrong answer).

Concurrency: WAL lets readers work while one process writes; ``busy_timeout`` makes a writer wait for the
lock instead of failing, and writes use ``BEGIN IMMEDIATE`` so two writers never deadlock on a lock upgrade.
Each process (and each thread) gets its own connection, opened lazily, so a cache object can be handed to
worker processes (it pickles as its path) and survives ``fork``. The same file can be shared across runs.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from callbluff.targets.base import Output

SCHEMA_VERSION = 1
_CHUNK = 500  # keys per SELECT (well under SQLite's host-parameter limit)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS predictions (
    fingerprint TEXT NOT NULL,
    key TEXT NOT NULL,
    output TEXT NOT NULL,
    created REAL NOT NULL,
    PRIMARY KEY (fingerprint, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS journal (
    fingerprint TEXT NOT NULL,
    key TEXT NOT NULL,
    output TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def _output_json(o: Output) -> str:
    if o.answer is None and not o.candidates and o.score is not None and o.error is None and not o.samples:
        return '{"score":%r}' % float(o.score)  # the common case, without json.dumps
    return json.dumps(o.to_dict(), ensure_ascii=False, separators=(",", ":"))


class CacheWriteError(OSError):
    """Writing the prediction cache failed (a full disk, a read-only file): the machine's I/O, never the target's.
    ``filename`` is the cache file and ``strerror`` SQLite's own cause (not the rollback's that may follow)."""


def _write_failed(conn: sqlite3.Connection, path: Path, exc: BaseException) -> CacheWriteError | None:
    """Roll back what SQLite has not rolled back itself (on SQLITE_FULL it already has: a second ROLLBACK would
    hide the cause behind "cannot rollback"), and say what failed."""
    if conn.in_transaction:
        try:
            conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass
    if isinstance(exc, sqlite3.Error):
        return CacheWriteError(None, f"cannot write the prediction cache: {exc}", str(path))
    return None


class PredictionCache:
    """A SQLite prediction cache at ``path`` (created with its parent directory if missing).

    ``busy_timeout`` is how long (seconds) a write waits for another process's lock before failing.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 60.0, merge_every: int = 65536) -> None:
        self.path = Path(path)
        self.busy_timeout = float(busy_timeout)
        self.merge_every = max(1, int(merge_every))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._pid = os.getpid()
        self._conns: list[sqlite3.Connection] = []
        self._conns_lock = threading.Lock()
        self._recent: dict[tuple[str, str], tuple[str, float]] = {}  # journaled here, not merged yet: (json, created)
        self._recent_lock = threading.Lock()
        self._conn()  # create the schema now, so errors (bad path, not a database) surface here
        self.merge()  # journal rows left by a killed process

    # -- connections ---------------------------------------------------------------------------------------
    def _conn(self) -> sqlite3.Connection:
        if self._pid != os.getpid():  # forked: never reuse the parent's connections
            self._local = threading.local()
            self._conns = []
            self._conns_lock = threading.Lock()
            self._pid = os.getpid()
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        try:
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout, isolation_level=None)
            conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.executescript(_SCHEMA)
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
        except sqlite3.DatabaseError as exc:
            raise sqlite3.DatabaseError(
                f"prediction cache {self.path}: {exc} (is it a callbluff predictions.sqlite? delete or move "
                "it to start a fresh cache)") from exc
        if str(mode).lower() != "wal":
            raise sqlite3.OperationalError(
                f"prediction cache {self.path}: cannot switch to WAL mode (got {mode!r}); put the cache on a "
                "local file system")
        self._local.conn = conn
        with self._conns_lock:
            self._conns.append(conn)
        return conn

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "busy_timeout": self.busy_timeout, "merge_every": self.merge_every}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.path = state["path"]
        self.busy_timeout = state["busy_timeout"]
        self.merge_every = state.get("merge_every", 65536)
        self._recent = {}
        self._recent_lock = threading.Lock()
        self._local = threading.local()
        self._pid = os.getpid()
        self._conns = []
        self._conns_lock = threading.Lock()

    def close(self) -> None:
        """Close this process's connections (the cache reopens on next use). The journal is left as it is:
        the next open merges it, so closing costs nothing at the end of a run."""
        if self._pid != os.getpid():
            return
        with self._conns_lock:
            for conn in self._conns:
                try:
                    conn.close()
                except sqlite3.Error:
                    pass
            self._conns.clear()
        self._local = threading.local()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"PredictionCache({str(self.path)!r})"

    def check(self) -> None:
        """Raise :class:`sqlite3.DatabaseError` (naming the file) when the cache file is damaged (truncated,
        overwritten): SQLite's ``quick_check`` reads every page once, a few seconds for millions of rows."""
        try:
            result = self._conn().execute("PRAGMA quick_check").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise sqlite3.DatabaseError(f"prediction cache {self.path}: {exc}") from exc
        if result != "ok":
            raise sqlite3.DatabaseError(f"prediction cache {self.path}: integrity check failed ({result})")

    # -- reads ---------------------------------------------------------------------------------------------
    def get_many(self, fingerprint: str, keys: Iterable[str]) -> dict[str, Output]:
        """The cached outputs among ``keys`` (missing keys are absent from the result)."""
        return {k: o for k, (o, _) in self.get_many_dated(fingerprint, keys).items()}

    def get_many_dated(self, fingerprint: str, keys: Iterable[str]) -> dict[str, tuple[Output, float]]:
        """The cached outputs among ``keys`` with the time each was stored (seconds since the epoch, UTC): what
        says a run's reused predictions are from an earlier run, and from when."""
        conn = self._conn()
        uniq = list(dict.fromkeys(keys))
        found: dict[str, tuple[Output, float]] = {}
        for k in range(0, len(uniq), _CHUNK):
            part = uniq[k:k + _CHUNK]
            marks = ",".join("?" * len(part))
            rows = conn.execute(
                f"SELECT key, output, created FROM predictions WHERE fingerprint = ? AND key IN ({marks})",
                [fingerprint, *part]).fetchall()
            for key, text, created in rows:
                found[key] = (Output.from_dict(json.loads(text)), float(created))
        if self._recent and len(found) < len(uniq):
            with self._recent_lock:
                for k in uniq:
                    if k not in found and (fingerprint, k) in self._recent:
                        text, created = self._recent[(fingerprint, k)]
                        found[k] = (Output.from_dict(json.loads(text)), created)
        return found

    def get(self, fingerprint: str, key: str) -> Output | None:
        return self.get_many(fingerprint, [key]).get(key)

    def count(self, fingerprint: str | None = None) -> int:
        """Number of cached predictions (for one target fingerprint, or all)."""
        self.merge()
        conn = self._conn()
        if fingerprint is None:
            return int(conn.execute("SELECT COUNT(*) FROM predictions").fetchone()[0])
        return int(conn.execute("SELECT COUNT(*) FROM predictions WHERE fingerprint = ?",
                                (fingerprint,)).fetchone()[0])

    def stored_between(self, fingerprint: str) -> tuple[float, float] | None:
        """(earliest, latest) time a prediction of ``fingerprint`` was stored, or None when it has none."""
        self.merge()
        lo, hi = self._conn().execute("SELECT MIN(created), MAX(created) FROM predictions WHERE fingerprint = ?",
                                      (fingerprint,)).fetchone()
        return None if lo is None else (float(lo), float(hi))

    def fingerprints(self) -> dict[str, int]:
        """Every fingerprint in the cache with its number of predictions."""
        self.merge()
        rows = self._conn().execute("SELECT fingerprint, COUNT(*) FROM predictions GROUP BY fingerprint")
        return {fp: int(n) for fp, n in rows}

    # -- writes --------------------------------------------------------------------------------------------
    def put_many(self, fingerprint: str, items: Mapping[str, Output] | Sequence[tuple[str, Output]]) -> int:
        """Store outputs (one transaction); error outputs are refused. Returns the number of rows written."""
        pairs = list(items.items()) if isinstance(items, Mapping) else list(items)
        bad = [k for k, o in pairs if o.error is not None]
        if bad:
            raise ValueError(f"PredictionCache.put_many: {len(bad)} error outputs (e.g. key {bad[0][:12]}...); "
                             "errors are never cached so that a later run retries them")
        if not pairs:
            return 0
        now = time.time()
        rows = [(fingerprint, k, _output_json(o), now) for k, o in pairs]
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT INTO journal VALUES (?, ?, ?, ?)", rows)
            conn.execute("COMMIT")  # durable from here: a kill loses nothing of this batch
        except BaseException as exc:
            if (err := _write_failed(conn, self.path, exc)) is None:
                raise
            raise err from exc
        with self._recent_lock:
            self._recent.update(((fingerprint, k), (text, t)) for _, k, text, t in rows)
            full = len(self._recent) >= self.merge_every
        if full:
            self.merge()
        return len(rows)

    def merge(self) -> int:
        """Move the journal into the keyed table (one transaction); returns how many rows moved."""
        with self._recent_lock:  # committed to the journal already (put_many commits before remembering)
            merged = list(self._recent)
        conn = self._conn()
        conn.execute("BEGIN IMMEDIATE")
        try:
            last = conn.execute("SELECT MAX(rowid) FROM journal").fetchone()[0]
            if last is None:
                conn.execute("COMMIT")
                return 0
            conn.execute("INSERT OR REPLACE INTO predictions SELECT fingerprint, key, output, created FROM journal "
                         "WHERE rowid <= ? ORDER BY rowid", (last,))
            moved = conn.execute("DELETE FROM journal WHERE rowid <= ?", (last,)).rowcount
            conn.execute("COMMIT")
        except BaseException as exc:
            if (err := _write_failed(conn, self.path, exc)) is None:
                raise
            raise err from exc
        with self._recent_lock:
            for k in merged:
                self._recent.pop(k, None)
        return int(moved)

    def put(self, fingerprint: str, key: str, output: Output) -> None:
        self.put_many(fingerprint, [(key, output)])

    def delete(self, fingerprint: str) -> int:
        """Forget every prediction of one target fingerprint; returns how many rows went."""
        self.merge()
        conn = self._conn()
        cur = conn.execute("DELETE FROM predictions WHERE fingerprint = ?", (fingerprint,))
        return int(cur.rowcount)
