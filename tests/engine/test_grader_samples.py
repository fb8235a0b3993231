"""A sampling chat grader (n = 3) through the engine: the samples of every prediction are stored (originals.parquet
``samples``, examples.parquet ``orig_samples`` / ``adv_samples``) and their spread is the metric rows'
``sample_spread_pct``, recomputed here from the stored samples. The grader is the 127.0.0.1 stand-in chat server."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from helpers.chat_server import ChatStandIn

from callbluff.api import run_suite
from callbluff.engine.suite import load_suite


def test_samples_are_stored_and_their_spread_reported(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"
    rows = [{"id": f"a{i}", "prompt_id": "q1", "text": t, "score": s, "question": "What is a stack?",
             "reference": "A last-in first-out list.", "rubric": "5: names LIFO; 0: wrong."}
            for i, (t, s) in enumerate([("a stack is last in first out", 5), ("it is a list", 2),
                                        ("push and pop at the top", 4)])]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with ChatStandIn() as srv:
        suite = tmp_path / "suite.toml"
        suite.write_text(f"""
name = "samples"
seed = 0
[dataset]
spec = "jsonl:{data}?prompt_text=question&score_min=0&score_max=5"
[[target]]
name = "chat"
type = "openai"
base_url = "{srv.base_url}"
model = "stand-in"
response_format = "json_object"
n = 3
seed = 10
temperature = 0.7
retries = 0
[[attack]]
name = "InjectInstruction"
[output]
report = false
""")
        run_suite(load_suite(suite), tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    assert all(len(s) == 3 for s in orig["samples"]) and all(len(s) == 3 for s in ex["adv_samples"])
    assert all(len(s) == 3 for s in ex["orig_samples"])
    for s, score in zip(orig["samples"], orig["score"]):
        assert score == pytest.approx(sum(s) / 3)  # the score is the samples' mean
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    clean = next(r for r in metrics if r["attack"] == "clean")
    attack = next(r for r in metrics if r["attack"] == "InjectInstruction")
    spread = lambda col: sum((max(s) - min(s)) / 5 * 100 for s in col) / len(col)  # noqa: E731
    assert clean["n_sampled"] == 3 and clean["sample_spread_pct"] == pytest.approx(spread(orig["samples"]))
    assert attack["n_sampled"] == 3 and attack["sample_spread_pct"] == pytest.approx(spread(ex["adv_samples"]))
    assert clean["sample_spread_pct"] > 0  # the stand-in varies with the per-sample seed: a spread to measure
