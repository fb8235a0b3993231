"""PredictionCache: SQLite WAL, shared across runs, safe with concurrent worker processes."""

from __future__ import annotations

import multiprocessing as mp
import pickle
import sqlite3
import time
from pathlib import Path

import pytest

from callbluff.targets import Candidate, Input, Output, PredictionCache


def key(i: int) -> str:
    return Input("content", f"answer {i}", prompt_id="1").key()


def test_round_trip_count_and_persistence(tmp_path: Path):
    path = tmp_path / "sub" / "predictions.sqlite"
    cache = PredictionCache(path)
    qa = Output(answer="Normandy", candidates=(Candidate("Normandy", 9.5), Candidate("France", 3.25)))
    assert cache.put_many("fp-a", [(key(1), Output(score=2.0)), (key(2), qa)]) == 2
    cache.put("fp-b", key(1), Output(score=0.5))
    got = cache.get_many("fp-a", [key(1), key(2), key(3), key(1)])
    assert got == {key(1): Output(score=2.0), key(2): qa}
    assert cache.get("fp-b", key(1)) == Output(score=0.5) and cache.get("fp-b", key(2)) is None
    assert cache.count("fp-a") == 2 and cache.count("fp-b") == 1 and cache.count() == 3
    assert cache.fingerprints() == {"fp-a": 2, "fp-b": 1}
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    cache.close()
    again = PredictionCache(path)  # a later run sees everything
    assert again.get_many("fp-a", [key(2)]) == {key(2): qa}
    assert again.delete("fp-b") == 1 and again.count() == 2
    again.close()


def test_errors_are_refused(tmp_path: Path):
    cache = PredictionCache(tmp_path / "p.sqlite")
    with pytest.raises(ValueError, match="errors are never cached"):
        cache.put_many("fp", [(key(1), Output(score=1.0)), (key(2), Output(error="HTTP 500 after 4 attempts"))])
    assert cache.count() == 0  # nothing half-written


def test_many_keys_in_one_lookup(tmp_path: Path):
    cache = PredictionCache(tmp_path / "p.sqlite")
    cache.put_many("fp", {key(i): Output(score=float(i % 4)) for i in range(2500)})
    got = cache.get_many("fp", [key(i) for i in range(3000)])
    assert len(got) == 2500 and got[key(2499)] == Output(score=3.0)


def test_not_a_database_names_the_file(tmp_path: Path):
    bad = tmp_path / "predictions.sqlite"
    bad.write_text("this is not sqlite " * 100)
    with pytest.raises(sqlite3.DatabaseError, match=r"predictions\.sqlite.*delete or move it"):
        PredictionCache(bad)


def _writer(path: str, worker: int, n: int, batch: int, barrier: object, q: mp.Queue) -> None:
    cache = PredictionCache(path, busy_timeout=30)
    barrier.wait(timeout=60)  # type: ignore[attr-defined] - both start writing at the same moment
    t0 = time.monotonic()
    written = 0
    for start in range(0, n, batch):
        # half the keys are shared with the other worker (same answers), half are this worker's own
        items = [(key(i if i % 2 == 0 else 100_000 * (worker + 1) + i), Output(score=float(i % 4)))
                 for i in range(start, min(n, start + batch))]
        written += cache.put_many("fp", items)
        cache.get_many("fp", [k for k, _ in items])  # read while the other writes
    cache.close()
    q.put((worker, written, t0, time.monotonic()))


@pytest.mark.parametrize("method", ["spawn", "fork"])
def test_two_processes_write_concurrently(tmp_path: Path, method: str):
    path = str(tmp_path / "shared.sqlite")
    PredictionCache(path).close()  # schema created by the parent, as the engine does
    n, batch = 3000, 25
    ctx = mp.get_context(method)
    barrier, q = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(path, w, n, batch, barrier, q)) for w in (0, 1)]
    for p in procs:
        p.start()
    results = sorted(q.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert [r[1] for r in results] == [n, n]
    (_, _, s0, e0), (_, _, s1, e1) = results
    assert max(s0, s1) < min(e0, e1), "the two writers did not overlap in time"
    cache = PredictionCache(path)
    assert cache.count("fp") == n // 2 + 2 * (n // 2)  # shared evens once, each worker's odds
    got = cache.get_many("fp", [key(i) for i in range(0, n, 2)] + [key(100_000 + i) for i in range(1, n, 2)])
    assert len(got) == n
    assert all(got[key(i)].score == float(i % 4) for i in range(0, n, 2))
    assert all(got[key(100_000 + i)].score == float(i % 4) for i in range(1, n, 2))


def _child_uses(cache: PredictionCache, q: mp.Queue) -> None:
    cache.put("fp", key(7), Output(score=3.0))
    q.put(cache.count("fp"))


def test_cache_pickles_and_survives_fork(tmp_path: Path):
    cache = PredictionCache(tmp_path / "p.sqlite")
    cache.put("fp", key(1), Output(score=1.0))  # the parent holds an open connection
    clone = pickle.loads(pickle.dumps(cache))
    assert clone.count("fp") == 1
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child_uses, args=(cache, q))
    p.start()
    assert q.get(timeout=20) == 2
    p.join(timeout=20)
    assert p.exitcode == 0
    assert cache.count("fp") == 2 and cache.get("fp", key(7)) == Output(score=3.0)
