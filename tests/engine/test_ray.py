"""The Ray executor (issue 15) on a 2-CPU local Ray runtime shared by the module: the same run gives the same
bytes as the local executor; a Ray run whose driver is killed mid-run resumes to the same result; work really
runs in Ray worker processes, in input order."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (scripts/setup.sh installs it)")

from callbluff.engine.executor import LocalExecutor, make_executor  # noqa: E402
from callbluff.engine.ray_executor import RayExecutor, RemoteTarget  # noqa: E402
from callbluff.engine.run import Engine  # noqa: E402
from callbluff.engine.suite import load_suite  # noqa: E402
from callbluff.targets import CallableTarget, Input  # noqa: E402
from callbluff.targets.cache import PredictionCache  # noqa: E402

from helpers import REPO, pythonpath_env  # noqa: E402
from helpers.data import write_answers  # noqa: E402

SUITE = """
name = "ray-test"
seed = 7
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "kw"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[[attack]]
name = "RandomWords"
[output]
chunk_size = {chunk}
batch_size = 40
report = false
"""
FILES = ("examples.parquet", "originals.parquet", "metrics.json", "errors.jsonl")


@pytest.fixture(scope="module")
def ray_runtime() -> Iterator[str]:
    """One local Ray runtime (2 CPUs) for the module, started by RayExecutor itself; its workers import the
    test scorers (PYTHONPATH set before the runtime starts). Yields the cluster address for other drivers."""
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = pythonpath_env()["PYTHONPATH"]
    if ray.is_initialized():
        ray.shutdown()
    ex = RayExecutor(2)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ex.close()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old


@pytest.fixture(scope="module")
def suite_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("ray-suite")
    data = write_answers(tmp / "answers.jsonl", n=160)
    path = tmp / "suite.toml"
    path.write_text(SUITE.format(data=data, chunk=16))
    return path


@pytest.fixture(scope="module")
def local_reference(suite_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same suite run with the local executor (one process)."""
    out = tmp_path_factory.mktemp("ray-ref") / "run"
    with LocalExecutor(1) as ex:
        Engine(load_suite(suite_file), out, executor=ex).execute()
    return out


def digest(run: Path) -> dict[str, str]:
    return {f: hashlib.sha256((run / f).read_bytes()).hexdigest() for f in FILES}


def test_ray_tasks_run_in_workers_in_input_order(ray_runtime: str) -> None:
    ex = RayExecutor(2)  # joins the module's runtime; closing it leaves the runtime up
    got = list(ex.map(lambda x: (x * x, os.getpid()), range(9)))
    assert [v for v, _ in got] == [x * x for x in range(9)]
    assert os.getpid() not in {pid for _, pid in got}
    target = ex.remote_target(CallableTarget(lambda text: float(os.getpid()), name="pid"))
    assert isinstance(target, RemoteTarget) and target.fingerprint.startswith("callable:")
    outs = target.predict([Input("content", f"t{i}", "p1") for i in range(6)])
    assert len(outs) == 6 and os.getpid() not in {o.score for o in outs}
    ex.close()
    assert ray.is_initialized()


def test_ray_run_equals_local_run_byte_for_byte(ray_runtime: str, suite_file: Path, local_reference: Path,
                                                tmp_path: Path) -> None:
    with RayExecutor(2) as ex:
        Engine(load_suite(suite_file), tmp_path / "run", executor=ex).execute()
    assert digest(tmp_path / "run") == digest(local_reference)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["executor"] == {"kind": "RayExecutor", "workers": 2}
    assert json.loads((tmp_path / "run" / "metrics.json").read_text())  # not an empty run


def _cli(args: list[str]) -> subprocess.Popen:
    env = pythonpath_env()
    return subprocess.Popen([sys.executable, "-m", "callbluff.cli", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)


@pytest.mark.slow
def test_killed_ray_driver_resumes_to_the_same_result(ray_runtime: str, suite_file: Path, local_reference: Path,
                                                      tmp_path: Path) -> None:
    run = tmp_path / "run"
    args = ["run", str(suite_file), "--out", str(run), "--quiet", "--executor", "ray", "--workers", "2",
            "--ray-address", ray_runtime]
    proc = _cli(args)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((run / "parts").glob("*.examples.parquet"))) < 2:
        if proc.poll() is not None:
            pytest.fail(f"the Ray run ended before it could be killed: {proc.stdout.read()}")
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the driver (and anything it started), mid-run
    proc.wait(10)
    done_before = len(list((run / "parts").glob("*.examples.parquet")))
    assert 2 <= done_before < 10, "the run should have been killed mid-way (160 records in chunks of 16)"
    assert not (run / "metrics.json").exists()
    again = _cli(args)
    assert again.wait(180) == 0, again.stdout.read()
    assert digest(run) == digest(local_reference)
    meta = json.loads((run / "run.json").read_text())
    assert meta["resumed"] is True and meta["chunks_resumed"] == done_before
    assert meta["executor"]["kind"] == "RayExecutor" and meta["executor"]["address"] == ray_runtime


def test_executor_choice_errors_name_the_fix() -> None:
    with pytest.raises(ValueError, match="--ray-address needs --executor ray"):
        make_executor("local", 1, "auto")
    with pytest.raises(ValueError, match="allowed: local, ray"):
        make_executor("dask", 1)
    with pytest.raises(ValueError, match="--workers must be >= 1"):
        RayExecutor(0)


SEARCH_SUITE = """
name = "ray-search"
seed = 3
[dataset]
spec = "squad:{data}"
[[target]]
name = "toy"
type = "callable"
function = "helpers.scorers:toy_reader"
pass_input = true
[[attack]]
name = "AddAny"
params = {{ query_budget = 200 }}
[[attack]]
name = "AddCommon"
params = {{ query_budget = 40 }}
[output]
chunk_size = 4
batch_size = 16
report = false
cache = "{cache}"
"""
CITIES = ("Prague", "Vienna", "Berlin", "Madrid", "Lisbon", "Oslo", "Dublin", "Athens")
NAMES = ("Tesla", "Curie", "Bohr", "Planck", "Noether", "Fermi", "Dirac", "Pauli")


def write_squad(path: Path) -> Path:
    """Eight one-question paragraphs the toy reader answers correctly ("Which city did X move to in YEAR?")."""
    paragraphs = []
    for i, (name, city) in enumerate(zip(NAMES, CITIES)):
        year = 1880 + i
        context = f"In January {year}, the physicist {name} moved to {city} for study at the university."  # city: 2
        q = f"Which city did {name} move to in {year}?"
        paragraphs.append({"context": context, "qas": [{"id": f"q{i}", "question": q, "answers": [
            {"text": city, "answer_start": context.index(city)}]}]})
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "toy", "paragraphs": paragraphs}]}))
    return path


def test_searches_run_as_ray_tasks_same_bytes_every_query_committed(ray_runtime: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_squad(tmp_path / "squad.json")

    def suite(name: str) -> Path:
        p = tmp_path / f"{name}.toml"
        p.write_text(SEARCH_SUITE.format(data=data, cache=tmp_path / f"{name}.sqlite"))
        return p

    log = tmp_path / "calls.log"
    monkeypatch.setenv("CALLBLUFF_TEST_CALL_LOG", str(log))
    with LocalExecutor(1) as ex:
        Engine(load_suite(suite("local")), tmp_path / "local", executor=ex).execute()
    local_calls = log.read_text().count("\n")
    log.unlink()
    ray_suite = suite("ray")
    with RayExecutor(2) as ex:
        Engine(load_suite(ray_suite), tmp_path / "ray", executor=ex).execute()
        assert ex.tasks["map_all"] >= 2  # the searches ran as tasks (pieces of each chunk's records)
    assert digest(tmp_path / "ray") == digest(tmp_path / "local")
    examples = pd.read_parquet(tmp_path / "ray" / "examples.parquet")
    assert set(examples["attack"]) == {"AddAny", "AddCommon"} and (examples["queries"] > 1).all()
    assert (examples["adv_answer"] != examples["orig_answer"]).any()  # the toy reader was fooled somewhere
    # the worker-side queries were committed through the cache actor (the workers do not see this test's call
    # log: they started before it was set): the Ray run's cache holds exactly the local run's predictions, and
    # the same run from that cache calls the target no more
    local_cache, ray_cache = PredictionCache(tmp_path / "local.sqlite"), PredictionCache(tmp_path / "ray.sqlite")
    assert ray_cache.count() == local_cache.count() == local_calls > 0
    local_cache.close()
    ray_cache.close()
    with LocalExecutor(1) as ex:
        Engine(load_suite(ray_suite), tmp_path / "again", executor=ex).execute()
    assert not log.exists()
    assert digest(tmp_path / "again") == digest(tmp_path / "local")
