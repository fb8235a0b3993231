"""The chat target against the REAL local grader (llama-cpp-python serving SmolLM2-135M-Instruct on 127.0.0.1, the
session fixture ``local_llm`` of tests/helpers/local_llm.py): a clean run of a small suite on Mohler answers (demo
answers when ../shared is absent), a resumed run that asks the server nothing again, an unparseable reply as an error
row, and the API key in no file of the run directory. Kept to a handful of grading calls (~0.3-1 s each)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from helpers import SHARED_DATA
from helpers.local_llm import KEY, KEY_ENV, chat_target_toml

from callbluff.engine.run import run_suite
from callbluff.engine.suite import load_suite
from callbluff.records import Prompt
from callbluff.resources.local_llm import LocalLLMServer
from callbluff.targets import CachedTarget, Input, OpenAITarget
from callbluff.targets.validate import OutputCheck

MOHLER = SHARED_DATA / "mohler-unt-sag"


def dataset_spec() -> str:
    """Mohler's short answers (questions and 0-5 scores) when ../shared has them, else the demo short answers."""
    return f"mohler:{MOHLER}" if (MOHLER / "answers.tsv").is_file() else "demo:content"


def suite_text(srv: LocalLLMServer) -> str:
    return f"""
name = "llm-grader-smoke"
seed = 3
limit = 4
[dataset]
spec = "{dataset_spec()}"
{chat_target_toml(srv)}
[[attack]]
name = "Shuffle"
[output]
chunk_size = 2
report = false
"""


def test_clean_run_then_resume_asks_nothing_again_and_the_key_is_in_no_file(local_llm: LocalLLMServer,
                                                                           tmp_path: Path) -> None:
    path = tmp_path / "suite.toml"
    path.write_text(suite_text(local_llm), encoding="utf-8")
    suite = load_suite(path)
    run = tmp_path / "run"
    first = run_suite(suite, run)
    orig = pd.read_parquet(run / "originals.parquet")
    ex = pd.read_parquet(run / "examples.parquet")
    assert len(orig) == 4 and len(ex) >= 1  # Shuffle rewrites the correct answers only (Ding et al. 2020)
    lo, hi = 0, 5
    for score, error in zip(orig["score"], orig["error"]):
        assert error is None, error  # json_object + schema: every reply is readable and on the scale
        assert lo <= score <= hi and float(score).is_integer()
    assert ex["adv_error"].isna().all(), list(ex["adv_error"].dropna())
    stats = first.target_stats["smollm2"]
    asked = len(orig) + len(ex)
    # every distinct input asked once; the pre-flight's answers (the first record of each of the first three
    # prompts) are read back from the cache by their chunk
    preflight = min(3, orig["prompt_id"].nunique())
    assert stats["calls"] == asked and stats["cache_hits"] == preflight and stats["errors"] == 0
    usage = stats["usage"]
    assert usage["replies"] == stats["calls"] and usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert usage["models"] == [local_llm.model] and usage["finish_reasons"] == {"stop": stats["calls"]}
    meta = json.loads((run / "run.json").read_text())
    assert meta["target_stats"]["smollm2"]["usage"] == usage
    assert meta["targets"]["smollm2"]["type"] == "openai"

    # resume after losing the last chunk's results: its predictions come from the cache, the server is not asked
    last = sorted((run / "parts").glob("*.examples.parquet"))[-1]
    last.unlink()
    (run / "metrics.json").unlink()
    again = run_suite(load_suite(path), run)
    assert again.target_stats["smollm2"]["calls"] == 0 and again.target_stats["smollm2"]["cache_hits"] > 0
    assert "usage" not in again.target_stats["smollm2"] or not again.target_stats["smollm2"]["usage"].get("replies")
    assert again.metrics == first.metrics
    pd.testing.assert_frame_equal(pd.read_parquet(run / "examples.parquet"), ex)

    # the key reached the server (it refuses requests without it) and is in no file
    for f in [*run.rglob("*"), path]:
        if f.is_file():
            assert KEY.encode() not in f.read_bytes(), f"the API key is written in {f}"
    shutil.rmtree(run)


def test_unparseable_reply_is_an_error_row_with_a_snippet(local_llm: LocalLLMServer, monkeypatch:
                                                          pytest.MonkeyPatch) -> None:
    prompts = {"q": Prompt(id="q", task="content", text="What is a stack?", score_min=0, score_max=5,
                           reference="A last-in first-out list.")}
    # free text (no structured output) read by a JSON path the model never writes: a reply that cannot be read
    t = OpenAITarget(local_llm.base_url, local_llm.model, api_key_env=KEY_ENV, response_format="none",
                     score_path="verdict.points", max_tokens=24, retries=0)
    t.bind_prompts(prompts)
    ct = CachedTarget(t, None, check=OutputCheck("score", prompts=prompts))
    [o] = ct.predict([Input("content", "a list where the last one in is the first one out", prompt_id="q")])
    t.close()
    assert o.score is None and o.error is not None
    assert o.error.startswith("unparseable reply"), o.error
    assert "'" in o.error and len(o.error) > len("unparseable reply (not JSON): ''")  # the reply's snippet


def test_without_the_key_the_server_refuses_and_the_row_says_so(local_llm: LocalLLMServer) -> None:
    t = OpenAITarget(local_llm.base_url, local_llm.model, response_format="json_object", retries=0)
    t.bind_prompts({"q": Prompt(id="q", task="content", text="Q?", score_min=0, score_max=5)})
    [o] = t.predict([Input("content", "an answer", prompt_id="q")])
    t.close()
    assert o.error is not None and o.error.startswith("HTTP 401 (not retried)")


def test_a_dialect_the_server_refuses_is_an_error_row_naming_the_fix(local_llm: LocalLLMServer) -> None:
    t = OpenAITarget(local_llm.base_url, local_llm.model, api_key_env=KEY_ENV, response_format="json_schema",
                     retries=0)
    t.bind_prompts({"q": Prompt(id="q", task="content", text="Q?", score_min=0, score_max=5)})
    [o] = t.predict([Input("content", "an answer", prompt_id="q")])
    t.close()
    assert o.error is not None and o.error.startswith("HTTP 500: ")
    assert "json_object" in o.error and 'llama.cpp servers take "json_object"' in o.error


def test_server_is_stopped_by_pid_and_dies_with_a_killed_parent(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from helpers import pythonpath_env

    from callbluff.resources.local_llm import missing

    if (why := missing()) is not None:
        pytest.skip(f"the real local LLM grader is not set up here: {why}")
    with LocalLLMServer() as srv:
        pid = srv.pid
        assert pid is not None and os.path.exists(f"/proc/{pid}")
    assert not os.path.exists(f"/proc/{pid}") or _zombie(pid)
    # a parent killed with -9 cannot stop its server; the server goes with it
    pid_file = tmp_path / "pid"
    code = ("import time, pathlib; from callbluff.resources.local_llm import LocalLLMServer; "
            f"s = LocalLLMServer().start(); pathlib.Path({str(pid_file)!r}).write_text(str(s.pid)); time.sleep(120)")
    parent = subprocess.Popen([sys.executable, "-c", code], env=pythonpath_env())
    try:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        server = int(pid_file.read_text())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{server}") and not _zombie(server) and time.monotonic() < deadline:
        time.sleep(0.1)
    gone = not os.path.exists(f"/proc/{server}") or _zombie(server)
    if not gone:
        os.kill(server, signal.SIGKILL)
    assert gone, "the server outlived its killed parent"


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True
