"""Issue 28 (Hardening II), the run directory and the engine: each defect reproduced first (every test here
failed before its fix): the run-directory lock, local I/O errors, robust closing, runs that measure nothing,
a chunk part of another run, the cache's own failures, pool workers outliving a killed run."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from callbluff.engine.store import RunDirLocked, RunLock

from helpers import REPO, TESTS
from helpers.data import write_answers


def suite_text(data: Path, target: str, *, attack: bool = True, extra: str = "", limit: str = "") -> str:
    attack_table = '[[attack]]\nname = "Shuffle"\nparams = { tokenizer = "whitespace" }\n' if attack else ""
    return f"""
name = "guard-{target}"
seed = 3
{limit}
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "{target}"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
{attack_table}
{extra}
[output]
chunk_size = 10
report = false
"""


def write_suite(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def cli_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    src = str(REPO / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, str(TESTS), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def start_cli(args: list[str], env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "callbluff.cli", *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


# -- 1: one run per directory -----------------------------------------------------------------------------------
def test_two_runs_into_one_directory_one_runs_the_other_exits_2_naming_the_holder(tmp_path: Path) -> None:
    """Two different suites started at once into one --out: one runs, the other exits 2 naming the lock
    holder's pid; the finished run holds only its own suite's examples."""
    data = write_answers(tmp_path / "answers.jsonl", n=40)
    suites = {name: write_suite(tmp_path, f"{name}.toml", suite_text(data, name)) for name in ("alpha", "beta")}
    out = tmp_path / "run"
    env = cli_env(CALLBLUFF_TEST_SLEEP="0.1")  # a run of ~8 s: the two surely overlap
    procs = {name: start_cli(["run", str(path), "--out", str(out), "--quiet"], env) for name, path in suites.items()}
    results = {name: (p.communicate(timeout=300)[0], p.returncode) for name, p in procs.items()}
    codes = sorted(rc for _, rc in results.values())
    assert codes == [0, 2], results
    winner = next(n for n, (_, rc) in results.items() if rc == 0)
    loser = next(n for n, (_, rc) in results.items() if rc == 2)
    message = results[loser][0]
    assert "in use by another callbluff process" in message and f"pid {procs[winner].pid}" in message, message
    assert "another --out directory" in message
    examples = pd.read_parquet(out / "examples.parquet")
    originals = pd.read_parquet(out / "originals.parquet")
    assert len(examples) and set(examples["target"]) == {winner}
    assert set(originals["target"]) == {winner}
    assert json.loads((out / "run.json").read_text())["status"] == "finished"
    assert (out / ".lock").read_text() == ""  # released at the end


def test_a_held_lock_names_its_holder_and_a_released_one_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / ".lock"
    first = RunLock(path)
    first.acquire()
    holder = json.loads(path.read_text())
    assert holder["pid"] == os.getpid() and holder["started"] and holder["host"]
    with pytest.raises(RunDirLocked, match=rf"pid {os.getpid()} on .*, started {holder['started']}"):
        RunLock(path).acquire()
    first.release()
    with RunLock(path) as second:
        assert second.stale is None  # released cleanly: nothing stale
    assert path.read_text() == ""


def test_a_stale_lock_of_a_dead_process_is_taken_over_with_a_note(tmp_path: Path) -> None:
    """A lock file left by a process killed with -9 names a dead pid and holds no flock: the next run takes
    it over and says so."""
    from helpers.runs import run_small_suite

    run = tmp_path / "run"
    run.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (run / ".lock").write_text(json.dumps({"pid": dead.pid, "host": "h", "started": "2026-01-01T00:00:00Z",
                                           "command": "callbluff run"}))
    result = run_small_suite(tmp_path)
    assert any(f"pid {dead.pid}" in n and "took over the lock" in n for n in result.notes), result.notes


def test_a_second_process_is_refused_while_the_lock_is_held(tmp_path: Path) -> None:
    """The lock is an OS lock: another process holding it (here a plain flock) stops a run before it writes
    anything."""
    from helpers.runs import run_small_suite

    run = tmp_path / "run"
    run.mkdir()
    fd = os.open(run / ".lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        with pytest.raises(RunDirLocked, match="holder unknown"):
            run_small_suite(tmp_path)
        assert sorted(p.name for p in run.iterdir()) == [".lock"]
    finally:
        os.close(fd)


# -- 4: local I/O errors are exit 2 with the path and the cause ------------------------------------------------
def run_cli_in_process(args: list[str]) -> Any:
    from typer.testing import CliRunner

    from callbluff.cli import app

    return CliRunner().invoke(app, args)


@pytest.mark.parametrize("where", ["is-a-file", "under-a-file"])
def test_out_that_is_a_file_or_under_one_is_exit_2_with_the_path(tmp_path: Path, where: str) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw", attack=False))
    blocker = tmp_path / "afile"
    blocker.write_text("not a directory")
    out = blocker if where == "is-a-file" else blocker / "run"
    res = run_cli_in_process(["run", str(suite), "--out", str(out), "--quiet"])
    assert res.exit_code == 2, res.output
    assert "local I/O error" in res.output and str(blocker) in res.output
    assert ("File exists" in res.output) or ("Not a directory" in res.output), res.output
    assert blocker.read_text() == "not a directory"


def test_disk_full_during_the_final_merge_is_exit_2_naming_the_file(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    import pyarrow.parquet as pq

    real = pq.ParquetWriter.write_table

    def full(self: Any, table: Any, *a: Any, **k: Any) -> Any:
        if Path(str(self.where)).name == "examples.parquet.tmp":  # the merged file only: the parts were written
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, table, *a, **k)

    monkeypatch.setattr(pq.ParquetWriter, "write_table", full)
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw"))
    out = tmp_path / "run"
    res = run_cli_in_process(["run", str(suite), "--out", str(out), "--quiet"])
    assert res.exit_code == 2, res.output
    assert str(out / "examples.parquet") in res.output and "No space left on device" in res.output, res.output
    assert not (out / "examples.parquet.tmp").exists()
    assert json.loads((out / "run.json").read_text())["status"] == "failed"


# -- 8: every target closed whatever fails first ----------------------------------------------------------------
class ClosingTarget:
    """A real callable target that records its close, and can fail in it."""

    def __init__(self, log: list[str], name: str, fail: bool = False) -> None:
        from callbluff.targets.callables import CallableTarget

        self._inner = CallableTarget(lambda text: float(len(text.split()) % 4), name=name)
        self.log, self.name_, self.fail = log, name, fail
        self.fingerprint = f"closing:{name}"

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._inner, attr)

    def predict(self, inputs: Any) -> Any:
        return self._inner.predict(inputs)

    def close(self) -> None:
        self.log.append(self.name_)
        if self.fail:
            raise RuntimeError(f"{self.name_} could not close")


def test_a_failing_chunk_write_still_closes_every_target(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from callbluff.engine.run import Engine
    from callbluff.engine.store import LocalIOError, RunDir
    from callbluff.engine.suite import load_suite

    def disk_full(self: Any, *a: Any, **k: Any) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(RunDir, "write_chunk", disk_full)
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    suite = load_suite(write_suite(tmp_path, "s.toml", suite_text(data, "kw")))
    closed: list[str] = []
    targets = {"kw": ClosingTarget(closed, "kw", fail=True), "other": ClosingTarget(closed, "other")}
    with pytest.raises(LocalIOError, match="No space left on device"):
        Engine(suite, tmp_path / "run", targets=targets).execute()  # type: ignore[arg-type]
    assert sorted(closed) == ["kw", "other"]
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "failed"


# -- 11, 12: runs that measure nothing, --limit -1 ---------------------------------------------------------------
@pytest.mark.parametrize("case", ["csv-header-only", "asap-header-only", "limit-0", "no-target", "empty-grid"])
def test_runs_that_would_measure_nothing_are_exit_2_with_the_reason(tmp_path: Path, case: str) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    header_only = tmp_path / "header.csv"
    header_only.write_text("id,prompt_id,text,score\n", encoding="utf-8")
    asap_header = tmp_path / "training_set.tsv"
    asap_header.write_text("essay_id\tessay_set\tessay\trater1_domain1\trater2_domain1\tdomain1_score\n",
                           encoding="utf-8")
    asap = suite_text(asap_header, "kw", attack=False).replace(
        f"jsonl:{asap_header}?task=content&score_min=0&score_max=3", f"asap-aes:{asap_header}")
    no_target = suite_text(data, "kw").split("[[target]]")[0] + '[[attack]]\nname = "Shuffle"\n'
    empty_grid = suite_text(data, "kw", attack=False).replace(
        "[output]", '[[attack]]\nname = "Shuffle"\ngrid = { tokenizer = [] }\n[output]')
    text, extra, reason = {
        "csv-header-only": (suite_text(header_only, "kw").replace("jsonl:", "csv:"), [], "no data rows"),
        "asap-header-only": (asap, [], "has no records"),
        "limit-0": (suite_text(data, "kw"), ["--limit", "0"], "--limit 0 would measure nothing"),
        "no-target": (no_target, [], "the suite has no target"),
        "empty-grid": (empty_grid, [], "attack[0].grid.tokenizer"),
    }[case]
    suite = write_suite(tmp_path, f"{case}.toml", text)
    res = run_cli_in_process(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet", *extra])
    assert res.exit_code == 2 and reason in res.output, res.output
    assert not (tmp_path / "run").exists()


def test_a_negative_limit_names_the_option(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw"))
    res = run_cli_in_process(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet", "--limit", "-1"])
    assert res.exit_code == 2 and "--limit -1" in res.output and "islice" not in res.output, res.output
    assert not (tmp_path / "run").exists()


# -- 13, 20: the prediction cache's own failures ------------------------------------------------------------------
@pytest.fixture
def full_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every cache connection may not grow the file past its size when opened: SQLite's own SQLITE_FULL
    ("database or disk is full"), as on a full disk."""
    from callbluff.targets.cache import PredictionCache

    real = PredictionCache._conn

    def conn(self: Any) -> Any:
        c = real(self)
        pages = c.execute("PRAGMA page_count").fetchone()[0]
        c.execute(f"PRAGMA max_page_count = {pages}")
        return c

    monkeypatch.setattr(PredictionCache, "_conn", conn)


def test_disk_full_in_the_cache_is_exit_2_naming_the_cache_not_a_target_error(tmp_path: Path,
                                                                              full_cache: None) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=200)
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw"))
    res = run_cli_in_process(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"])
    assert res.exit_code == 2, res.output
    assert str(tmp_path / "run" / "predictions.sqlite") in res.output, res.output
    assert "database or disk is full" in res.output and "cannot rollback" not in res.output, res.output
    assert "target raised" not in res.output


class StreamingTarget:
    """A real streaming target (as HTTP and command targets are): each output handed over as it is made."""

    name = "stream"
    fingerprint = "stream:len"

    def predict(self, inputs: Any) -> Any:
        from callbluff.targets.base import Output

        return [Output(score=float(len(i.text.split()) % 4)) for i in inputs]

    def predict_stream(self, inputs: Any, emit: Any) -> None:
        for i, out in enumerate(self.predict(inputs)):
            emit(i, out)


def test_disk_full_in_the_cache_of_a_streaming_target_is_not_blamed_on_the_target(tmp_path: Path,
                                                                                  full_cache: None) -> None:
    from callbluff.engine.run import Engine
    from callbluff.engine.store import LocalIOError
    from callbluff.engine.suite import load_suite

    data = write_answers(tmp_path / "answers.jsonl", n=200)
    suite = load_suite(write_suite(tmp_path, "s.toml", suite_text(data, "stream")))
    with pytest.raises(LocalIOError, match="database or disk is full") as e:
        Engine(suite, tmp_path / "run", targets={"stream": StreamingTarget()}).execute()  # type: ignore[dict-item]
    assert str(tmp_path / "run" / "predictions.sqlite") in str(e.value)
    assert "target raised" not in str(e.value) and "cannot rollback" not in str(e.value)
    assert not (tmp_path / "run" / "errors.jsonl").exists()


def test_a_cache_path_that_is_a_directory_is_called_a_directory(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    cache_dir = tmp_path / "cachedir"
    cache_dir.mkdir()
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw").replace(
        "[output]", f'[output]\ncache = "{cache_dir}"'))
    res = run_cli_in_process(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"])
    assert res.exit_code == 2, res.output
    assert f"{cache_dir}: the prediction cache (output.cache) is a directory" in res.output, res.output
    assert "damaged" not in res.output and "--restart" not in res.output


# -- 18: a chunk part of another run is recomputed, not merged ----------------------------------------------------
def test_a_chunk_part_copied_in_from_another_suites_run_is_recomputed_with_a_note(tmp_path: Path) -> None:
    import shutil

    from callbluff.api import run_suite
    from callbluff.engine.suite import load_suite

    data = write_answers(tmp_path / "answers.jsonl", n=30)
    mine = load_suite(write_suite(tmp_path, "alpha.toml", suite_text(data, "alpha")))
    other = load_suite(write_suite(tmp_path, "beta.toml", suite_text(data, "beta")))
    run_suite(mine, tmp_path / "mine")
    run_suite(other, tmp_path / "other")
    for p in (tmp_path / "other" / "parts").glob("000001.*"):
        shutil.copy(p, tmp_path / "mine" / "parts" / p.name)
    result = run_suite(mine, tmp_path / "mine")
    assert set(pd.read_parquet(tmp_path / "mine" / "examples.parquet")["target"]) == {"alpha"}
    assert set(pd.read_parquet(tmp_path / "mine" / "originals.parquet")["target"]) == {"alpha"}
    assert any(n.startswith("chunk 1: its parts belong to another run") for n in result.notes), result.notes
    assert json.loads((tmp_path / "mine" / "parts" / "000001.status.json").read_text())["fingerprint"]


# -- 10: pool workers end with their run ---------------------------------------------------------------------
def _children(pid: int) -> set[int]:
    kids: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids |= {int(k) for k in (task / "children").read_text().split()}
        except OSError:
            pass
    return kids


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from /proc (Linux)")
def test_kill_9_of_a_workers_2_run_ends_its_pool_workers(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=400)
    suite = write_suite(tmp_path, "s.toml", suite_text(data, "kw"))
    log = open(tmp_path / "log.txt", "w")  # not a pipe: orphaned workers would hold it open
    proc = subprocess.Popen([sys.executable, "-m", "callbluff.cli", "run", str(suite), "--out", str(tmp_path / "run"),
                             "--quiet", "--workers", "2"], cwd=REPO, env=cli_env(CALLBLUFF_TEST_SLEEP="0.05"),
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
            workers = {k for k in _children(proc.pid) if _alive(k)}
            time.sleep(0.2)
        assert len(workers) >= 2, f"the run never started its pool: {proc.poll()}"
    finally:
        proc.kill()
        proc.wait(timeout=60)
        log.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for w in left:  # never leave them behind, even when the test fails
        os.kill(w, 9)
    assert not left, f"pool workers {left} outlived their killed run"
