"""Issue 27: a target's identity (declared ``fingerprint`` / ``version``, the content of its files) keys the
prediction cache; cache answers carry the time they were stored; the circuit breaker stops a failing target;
the pre-flight tells a dead target from one input it cannot handle."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from callbluff.engine.target_factory import Identified, from_config
from callbluff.resources import paths
from callbluff.resources.paths import file_sha256, hashing_once
from callbluff.targets import CachedTarget, CallableTarget, CommandTarget, HttpTarget, Input, Output, PredictionCache
from callbluff.terminal import reuse_sentence

SCORER = """import json, sys
for line in sys.stdin:
    req = json.loads(line)
    print(json.dumps({"id": req["id"], "score": len(req["text"].split()) % 4}), flush=True)
"""


def _inputs(n: int) -> list[Input]:
    return [Input("content", f"answer number {i}", f"p{i % 2 + 1}") for i in range(n)]


def test_version_is_added_to_the_computed_or_declared_identity() -> None:
    plain = HttpTarget("http://127.0.0.1:9/score")
    v2 = HttpTarget("http://127.0.0.1:9/score", version="2")
    assert v2.fingerprint == f"{plain.fingerprint}|version=2"
    assert HttpTarget("http://127.0.0.1:9/score", fingerprint="scorer", version="3").fingerprint == "scorer|version=3"
    assert CallableTarget(len, version="b").fingerprint.endswith("|version=b")


def test_a_command_identity_is_the_content_of_its_executable_script_files_and_model_directory(tmp_path: Path) -> None:
    script = tmp_path / "score.py"
    script.write_text(SCORER)
    model = tmp_path / "model"
    model.mkdir()
    (model / "weights.bin").write_bytes(b"\x00" * 1000)
    fp = CommandTarget([sys.executable, "score.py", "model"], cwd=str(tmp_path)).fingerprint
    assert CommandTarget([sys.executable, "score.py", "model"], cwd=str(tmp_path)).fingerprint == fp
    # same size and modification time, other bytes: still another identity (the bytes are hashed)
    st = (model / "weights.bin").stat()
    (model / "weights.bin").write_bytes(b"\x01" * 1000)
    os.utime(model / "weights.bin", ns=(st.st_atime_ns, st.st_mtime_ns))
    fp_weights = CommandTarget([sys.executable, "score.py", "model"], cwd=str(tmp_path)).fingerprint
    assert fp_weights != fp
    script.write_text(SCORER + "\n# v2\n")
    assert CommandTarget([sys.executable, "score.py", "model"], cwd=str(tmp_path)).fingerprint != fp_weights
    # the executable itself, found on PATH by name
    exe = tmp_path / "bin" / "myscorer"
    exe.parent.mkdir()
    exe.write_text("#!/bin/sh\necho one\n")
    exe.chmod(0o755)
    env_path = os.environ["PATH"]
    try:
        os.environ["PATH"] = f"{exe.parent}{os.pathsep}{env_path}"
        a = CommandTarget(["myscorer"], cwd=str(tmp_path)).fingerprint
        exe.write_text("#!/bin/sh\necho two\n")
        assert CommandTarget(["myscorer"], cwd=str(tmp_path)).fingerprint != a
    finally:
        os.environ["PATH"] = env_path


def test_a_file_is_read_once_per_run_and_again_by_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "model.joblib"
    f.write_bytes(b"weights" * 1000)
    reads: list[str] = []
    real = paths._sha256
    monkeypatch.setattr(paths, "_sha256", lambda p: reads.append(str(p)) or real(p))
    with hashing_once():
        first = file_sha256(f)
        assert file_sha256(f) == first and len(reads) == 1  # two targets naming one file: read once
    with hashing_once():  # the next run: the bytes are read again, never trusted from size and time
        assert file_sha256(f) == first and len(reads) == 2
    assert file_sha256(f) == first and len(reads) == 3


def test_a_saved_model_takes_a_declared_version(tmp_path: Path) -> None:
    from callbluff.datasets import load
    from callbluff.models import ContentScorer

    ds = load("demo:content?split=train")
    records = [r for r in ds if r.prompt_id == "demo-1"][:40]
    path = ContentScorer(features="word_2_5,length", tune=False, C=0.1).fit(
        records, ds.prompts["demo-1"]).save(tmp_path / "m")
    plain = from_config({"type": "model", "path": str(path)})
    versioned = from_config({"type": "model", "path": str(path), "version": "7"})
    assert isinstance(versioned, Identified) and versioned.fingerprint == f"{plain.fingerprint}|version=7"
    inp = Input("content", records[0].text, "demo-1")
    assert versioned.predict([inp]) == plain.predict([inp])


def test_cached_answers_carry_when_they_were_stored_and_count_as_reused_only_from_an_earlier_run(
        tmp_path: Path) -> None:
    cache = PredictionCache(tmp_path / "p.sqlite")
    t0 = time.time()
    first = CachedTarget(CallableTarget(lambda s: len(s) % 4, fingerprint="f"), cache)
    first.predict(_inputs(5))
    first.predict(_inputs(5))  # this run's own answers again: not "reused"
    assert first.reused.n == 0 and first.stats.cache_hits == 5
    later = CachedTarget(CallableTarget(lambda s: len(s) % 4, fingerprint="f"), cache)
    time.sleep(0.01)
    later.predict(_inputs(7))
    assert later.reused.n == 5 and later.stats.inputs == 2
    assert t0 <= later.reused.first <= later.reused.last <= later.since
    dated = cache.get_many_dated("f", [i.key() for i in _inputs(5)])
    assert len(dated) == 5 and all(t0 <= t <= time.time() for _, t in dated.values())
    line = reuse_sentence(None, {"reused": 1234, "reused_first": 1795946520.0, "reused_last": 1795947300.0,
                                 "asked": 56})
    assert line == "reused 1,234 predictions cached 2026-11-29 10:02-10:15 UTC; asked 56 new"
    assert reuse_sentence("api", {"reused": 0, "asked": 3}) == "api: asked 3 new predictions (none reused)"


def test_the_circuit_breaker_stops_a_failing_target_and_records_the_rest(tmp_path: Path) -> None:
    calls: list[str] = []

    def dead_after_three(text: str) -> float:
        calls.append(text)
        if len(calls) > 3:
            raise ConnectionError("connection refused")
        return 1.0

    cache = PredictionCache(tmp_path / "p.sqlite")
    target = CachedTarget(CallableTarget(dead_after_three, fingerprint="d"), cache, batch_size=8,
                          max_consecutive_failures=5)
    outs = target.predict(_inputs(100))
    assert [o.error is None for o in outs[:3]] == [True] * 3
    assert len(calls) <= 3 + 5 + 8  # the allowance: at most one batch past the bound
    assert target.stopped is not None and "stopped after 5 failed predictions in a row" in target.stopped
    assert "last cause: ConnectionError: connection refused" in target.stopped
    skipped = [o for o in outs if o.error == target.stopped]
    assert len(skipped) >= 100 - 16 and all(o.score is None for o in outs[3:])  # error rows, never zeros
    assert cache.count("d") == 3  # only the valid answers are cached: the next run asks the rest again
    # the next predict call is refused at once, without a call
    n = len(calls)
    assert all(o.error == target.stopped for o in target.predict(_inputs(120)[100:]))
    assert len(calls) == n
    # 0 turns it off: every input is sent
    calls.clear()
    off = CachedTarget(CallableTarget(dead_after_three, fingerprint="e"), None, batch_size=8,
                       max_consecutive_failures=0)
    off.predict(_inputs(30))
    assert len(calls) == 30 and off.stopped is None


def test_a_streak_within_one_prompt_stops_that_prompt_only() -> None:
    def no_model_for_px(inp: Input) -> float:
        if inp.prompt_id == "px":
            raise KeyError("no estimator for prompt 'px'")
        return 1.0

    inputs = ([Input("content", f"first {i}", "p1") for i in range(3)]
              + [Input("content", f"x {i}", "px") for i in range(30)]
              + [Input("content", f"later {i}", "p1") for i in range(30)])
    target = CachedTarget(CallableTarget(no_model_for_px, pass_input=True, fingerprint="q"), None, batch_size=8,
                          max_consecutive_failures=5)
    outs = target.predict(inputs)
    assert target.stopped is None and set(target.stopped_prompts) == {"px"}
    assert all(o.error is None for o in outs[:3] + outs[33:])  # the other prompt is still asked
    assert all(o.error is not None and o.score is None for o in outs[3:33])
    assert sum("stopped for prompt px after 5 failed predictions" in (o.error or "") for o in outs) >= 30 - 5 - 8
    # a target that never answered is stopped whole, even within one prompt
    dead = CachedTarget(CallableTarget(lambda s: 1 / 0, fingerprint="z"), None, batch_size=4,
                        max_consecutive_failures=5)
    dead.predict(inputs)
    assert dead.stopped is not None and not dead.stopped_prompts


def test_the_preflight_tells_a_dead_target_from_an_input_it_cannot_handle() -> None:
    def picky(text: str) -> float:
        if text.endswith(" 0"):
            raise ValueError("cannot score this one")
        return 2.0

    ok = CachedTarget(CallableTarget(picky, fingerprint="p"), None)
    assert ok.preflight(_inputs(3)) is None  # answered two of three: the run goes on
    dead = CachedTarget(CallableTarget(lambda s: Output(error="HTTP 503"), fingerprint="x"), None)
    assert dead.preflight(_inputs(3)) == "HTTP 503"
    # an answer the output check refuses is an answer: the target is reachable
    refused = CachedTarget(CallableTarget(lambda s: 99.0, fingerprint="r"), None,
                           check=lambda i, o: Output(error="score 99 outside 0-3"))
    assert refused.preflight(_inputs(3)) is None
