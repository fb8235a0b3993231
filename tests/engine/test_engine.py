"""Engine acceptance tests (issue 3): end-to-end run, determinism, resume after SIGKILL, HTTP faults,
secrets, model-in-the-loop plumbing. Real components throughout: real processes, a real HTTP server on
127.0.0.1, real SQLite, real spaCy."""

from __future__ import annotations

import hashlib
import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from callbluff.api import run_suite
from callbluff.engine.suite import SuiteError, load_suite

from helpers import REPO, pythonpath_env
from helpers.data import write_answers
from helpers.fault_server import FaultServer, expected_score


def suite_text(data: Path, *, target: str, seed: int = 7, chunk: int = 40, extra: str = "",
               attack: str = 'name = "Shuffle"\nparams = { tokenizer = "whitespace" }') -> str:
    return f"""
name = "engine-test"
seed = {seed}
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
{target}
[[attack]]
{attack}
[output]
chunk_size = {chunk}
batch_size = 8
{extra}
"""


CALLABLE = """[[target]]
name = "kw"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
"""


def write_suite(tmp_path: Path, text: str, name: str = "suite.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def rows_hash(path: Path) -> str:
    df = pd.read_parquet(path)
    df = df.sort_values(list(df.columns)).reset_index(drop=True)
    return hashlib.sha256(df.to_csv(index=False).encode()).hexdigest()


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    return write_answers(tmp_path / "answers.jsonl", n=160)


def test_end_to_end_run_directory(tmp_path: Path, answers: Path) -> None:
    suite = load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE)))
    result = run_suite(suite, tmp_path / "run")
    run = tmp_path / "run"
    for name in ("run.json", "examples.parquet", "predictions.sqlite", "metrics.json", "errors.jsonl",
                 "report.html"):
        assert (run / name).exists(), name
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "finished" and meta["seed"] == 7
    assert meta["targets"]["kw"]["fingerprint"].startswith("callable:")
    ex = pd.read_parquet(run / "examples.parquet")
    src = {json.loads(line)["id"]: json.loads(line) for line in answers.read_text().splitlines()}
    # Shuffle takes only fully correct answers (gold 3) and every example traces to its source
    assert len(ex) == sum(1 for r in src.values() if r["score"] == 3 and len(set(r["text"].split())) > 1)
    for row in ex.itertuples():
        assert row.gold == 3 and row.source_id in src and row.original_text == src[row.source_id]["text"]
        assert sorted(row.adversarial_text.split()) == sorted(row.original_text.split())
        assert row.orig_score is not None and row.adv_score is not None
    rows = json.loads((run / "metrics.json").read_text())
    shuffle = [r for r in rows if r["attack"] == "Shuffle"]
    assert {r["prompt"] for r in shuffle} == {"p1", "p2", "all"}
    for r in shuffle:
        for f in ("task", "params", "target", "n", "neg_pct", "pos_pct", "mean_diff_pct", "ttest_p", "arr", "qwk"):
            assert f in r
    assert result.counts["records"] == 160 and result.counts["errors"] == 0
    assert "Shuffle" in (run / "report.html").read_text()


def test_same_seed_same_bytes_and_workers_do_not_matter(tmp_path: Path, answers: Path) -> None:
    suite = load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE)))
    h1 = rows_hash(run_suite(suite, tmp_path / "a", workers=1).run_dir / "examples.parquet")
    h2 = rows_hash(run_suite(suite, tmp_path / "b", workers=1).run_dir / "examples.parquet")
    h3 = rows_hash(run_suite(suite, tmp_path / "c", workers=2).run_dir / "examples.parquet")
    assert h1 == h2 == h3
    other = load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE, seed=8), "s8.toml"))
    assert rows_hash(run_suite(other, tmp_path / "d").run_dir / "examples.parquet") != h1


@pytest.mark.slow
def test_determinism_on_real_essays_across_workers(tmp_path: Path) -> None:
    from helpers import shared_path

    data = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    text = f"""
seed = 11
limit = 120
[dataset]
spec = "asap-aes:{data}?prompts=1,3"
[[target]]
name = "len"
type = "callable"
function = "helpers.scorers:length_scorer"
[[attack]]
name = "ShuffleSent"
[output]
chunk_size = 50
"""
    suite = load_suite(write_suite(tmp_path, text))
    h1 = rows_hash(run_suite(suite, tmp_path / "w1", workers=1).run_dir / "examples.parquet")
    h2 = rows_hash(run_suite(suite, tmp_path / "w2", workers=2).run_dir / "examples.parquet")
    assert h1 == h2
    ex = pd.read_parquet(tmp_path / "w1" / "examples.parquet")
    assert len(ex) > 100 and (ex["adversarial_text"] != ex["original_text"]).all()


def _cli(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "callbluff.cli", *args], env=env, cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _cached_keys(db: Path) -> set[str]:
    """Every key committed to the cache: the keyed table and the journal (not merged after a kill)."""
    with sqlite3.connect(db) as con:
        return {r[0] for r in con.execute("select key from predictions union select key from journal")}


@pytest.mark.slow
def test_resume_after_sigkill_repeats_no_cached_call(tmp_path: Path, answers: Path) -> None:
    suite = write_suite(tmp_path, suite_text(answers, target=CALLABLE, chunk=20))
    env = {**pythonpath_env(), "CALLBLUFF_TEST_SLEEP": "0.01"}
    # reference: an uninterrupted run
    env_ref = {**env, "CALLBLUFF_TEST_CALL_LOG": str(tmp_path / "calls-ref.log")}
    ref = _cli(["run", str(suite), "--out", str(tmp_path / "ref"), "--quiet"], env_ref)
    assert ref.wait(120) == 0, ref.stdout.read()
    # interrupted run: SIGKILL once a few chunks are finished
    log = tmp_path / "calls.log"
    env_run = {**env, "CALLBLUFF_TEST_CALL_LOG": str(log)}
    run_dir = tmp_path / "run"
    proc = _cli(["run", str(suite), "--out", str(run_dir), "--quiet"], env_run)
    deadline = time.time() + 60
    while time.time() < deadline and len(list((run_dir / "parts").glob("*.examples.parquet"))) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    parts_before = len(list((run_dir / "parts").glob("*.examples.parquet")))
    assert 3 <= parts_before < 160 // 20, "the run should have been killed mid-way"
    cached = _cached_keys(run_dir / "predictions.sqlite")
    calls_before = log.read_text().splitlines()
    assert cached and not (run_dir / "metrics.json").exists()
    # resume
    again = _cli(["run", str(suite), "--out", str(run_dir), "--quiet"], env_run)
    assert again.wait(120) == 0, again.stdout.read()
    calls_after = log.read_text().splitlines()[len(calls_before):]
    assert not set(calls_after) & cached, "a cached prediction was asked of the target again"
    ref_calls = (tmp_path / "calls-ref.log").read_text().splitlines()
    assert len(set(calls_before) | set(calls_after)) == len(set(ref_calls))
    assert json.loads((run_dir / "metrics.json").read_text()) == json.loads((tmp_path / "ref" / "metrics.json").read_text())
    assert rows_hash(run_dir / "examples.parquet") == rows_hash(tmp_path / "ref" / "examples.parquet")
    meta = json.loads((run_dir / "run.json").read_text())
    assert meta["resumed"] is True and meta["chunks_resumed"] == parts_before


def test_rerun_of_finished_run_calls_nothing(tmp_path: Path, answers: Path) -> None:
    suite = load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE)))
    first = run_suite(suite, tmp_path / "run")
    second = run_suite(suite, tmp_path / "run")
    assert second.target_stats["kw"]["calls"] == 0
    assert first.metrics == second.metrics


def test_resume_refuses_a_different_suite(tmp_path: Path, answers: Path) -> None:
    run_suite(load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE))), tmp_path / "run")
    other = load_suite(write_suite(tmp_path, suite_text(answers, target=CALLABLE, seed=99), "b.toml"))
    with pytest.raises(SuiteError, match="different suite"):
        run_suite(other, tmp_path / "run")


def _http_target(url: str, extra: str = "") -> str:
    return f"""[[target]]
name = "api"
type = "http"
url = "{url}/score"
body_template = {{ text = "${{text}}" }}
response_path = "score"
timeout = 0.4
retries = 2
backoff = 0.01
concurrency = 4
{extra}
"""


@pytest.mark.slow
def test_flaky_http_target_every_input_predicted_or_listed(tmp_path: Path, answers: Path) -> None:
    with FaultServer(fault_rate=0.2, seed=3, hang=1.0, always={"koala koala": "500"}) as srv:
        # one poison input that can never succeed
        with open(answers, "a") as fh:
            fh.write(json.dumps({"id": "poison", "prompt_id": "p1", "text": "koala koala bamboo panda",
                                 "score": 3}) + "\n")
        suite = load_suite(write_suite(tmp_path, suite_text(answers, target=_http_target(srv.url))))
        result = run_suite(suite, tmp_path / "run")
        assert srv.faults and sum(srv.faults.values()) > 5, "the server should have injected faults"
    run = tmp_path / "run"
    orig = pd.read_parquet(run / "originals.parquet")
    ex = pd.read_parquet(run / "examples.parquet")
    errors = [json.loads(line) for line in (run / "errors.jsonl").read_text().splitlines()]
    err_orig = {e["source_id"] for e in errors if e["stage"] == "predict_original"}
    err_adv = {e["example_id"] for e in errors if e["stage"] == "predict_adversarial"}
    assert len(orig) == 161
    for row in orig.itertuples():
        if row.error is None:
            assert row.score == expected_score(_text_of(answers, row.source_id))
        else:
            assert row.score is None or np.isnan(row.score)  # never a silent 0
            assert row.source_id in err_orig
    for row in ex.itertuples():
        if row.adv_error is None:
            assert row.adv_score == expected_score(row.adversarial_text)
        else:
            assert row.adv_score is None or np.isnan(row.adv_score)
            assert row.example_id in err_adv
    assert "poison" in err_orig
    assert all(e["cause"] for e in errors)
    assert result.counts["errors"] == len(errors)


def _text_of(path: Path, rid: str) -> str:
    for line in path.read_text().splitlines():
        d = json.loads(line)
        if d["id"] == rid:
            return d["text"]
    raise KeyError(rid)


def test_secret_from_env_never_written(tmp_path: Path, answers: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "s3cr3t-" + hashlib.sha256(str(tmp_path).encode()).hexdigest()[:16]
    monkeypatch.setenv("CALLBLUFF_TEST_TOKEN", token)
    with FaultServer() as srv:
        extra = 'headers = { Authorization = "Bearer ${CALLBLUFF_TEST_TOKEN}" }'
        suite = load_suite(write_suite(tmp_path, suite_text(answers, target=_http_target(srv.url, extra))))
        run_suite(suite, tmp_path / "run")
        assert f"Bearer {token}" in srv.auth_headers
    for f in (tmp_path / "run").rglob("*"):
        if f.is_file():
            assert token.encode() not in f.read_bytes(), f"token leaked into {f}"
