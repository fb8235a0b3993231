"""AddSent's language model dies in its child process (a native crash such as an illegal instruction): the run
finishes with the documented fallback (the structural ranking), says why in each example's meta and in run.json's
notes, and the crash takes nothing else with it. The worker here is a stand-in process that answers ``ready``
and then kills itself with the signal a CPU raises for an unsupported instruction (SIGILL): what the real
llama.cpp worker did on a machine whose build used AMX; with the real model installed, the real worker is also
killed from outside."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pandas as pd
import pytest
from helpers.readers import ToyReader

from callbluff.attacks.reading import fluency
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite

CONTEXT = "In January 1880, Tesla left Gospic for Prague. He studied in Graz before that."
QAS = [
    ("q1", "What city did Tesla move to?", "Prague", CONTEXT.index("Prague")),
    ("q2", "Which city did Tesla reach after Gospic?", "Prague", CONTEXT.index("Prague")),
    ("q3", "What city did Tesla go to in 1880?", "Prague", CONTEXT.index("Prague")),
]
DIES_ON_FIRST_REQUEST = r"""
import os, signal, sys
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
sys.stderr.write("ggml: about to run an AMX tile instruction\n"); sys.stderr.flush()
os.kill(os.getpid(), signal.SIGILL)
"""


def _data(tmp_path: Path) -> Path:
    data = {"version": "1.1", "data": [{"title": "Tesla", "paragraphs": [{"context": CONTEXT, "qas": [
        {"id": i, "question": q, "answers": [{"text": a, "answer_start": s}]} for i, q, a, s in QAS]}]}]}
    p = tmp_path / "squad.json"
    p.write_text(json.dumps(data))
    return p


@pytest.fixture
def crashing_model(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The fluency model 'installed' (the requirement passes) but its process dies at the first sentence."""
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    monkeypatch.setenv(fluency.ENV, str(model))
    monkeypatch.setattr(fluency, "_check", lambda: None)
    monkeypatch.setattr(fluency, "WORKER_CODE", DIES_ON_FIRST_REQUEST)
    fluency.reset()
    yield model
    fluency.reset()


def test_a_dying_model_is_a_recorded_cause_not_a_crash(crashing_model: Path) -> None:
    scorer = fluency.FluencyScorer(crashing_model)
    with pytest.raises(fluency.ModelDied, match="killed by SIGILL") as err:
        scorer.scores(["Tesla moved to the city of Vienna."])
    assert "AMX tile instruction" in str(err.value)  # the last lines the child printed
    assert scorer.dead and "killed by SIGILL" in scorer.dead
    with pytest.raises(fluency.ModelDied):  # and it stays dead, without starting again
        scorer.score("Another sentence.")
    scorer.close()


def test_addsent_run_finishes_with_the_structural_ranking_and_says_why(crashing_model: Path,
                                                                        tmp_path: Path) -> None:
    suite = parse_suite({"name": "reading", "seed": 0, "dataset": {"spec": f"squad:{_data(tmp_path)}"},
                         "attack": [{"name": "AddSent", "params": {"candidates": 1, "fluency": "auto"}}]},
                        source="test")
    with pytest.warns(UserWarning, match="killed by SIGILL"):
        result = Engine(suite, tmp_path / "run", targets={"toy": ToyReader()}).execute()
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    assert len(ex) >= 1  # the run made its examples
    metas = [json.loads(m) for m in ex["meta"]]
    assert {m["fluency_scorer"] for m in metas} == {"structural"}
    degraded = [m for m in metas if "degraded" in m]
    assert degraded and all("killed by SIGILL" in m["degraded"] for m in degraded)
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    notes = [n for n in run["notes"] if "structural check" in n]
    assert notes and "killed by SIGILL" in notes[0] and notes[0].startswith(f"{len(degraded)} example(s)")
    assert any("killed by SIGILL" in n for n in result.notes)
    assert result.counts["n_errors_generate"] == 0


def test_required_model_that_dies_is_an_error_of_each_record(crashing_model: Path, tmp_path: Path) -> None:
    suite = parse_suite({"name": "reading", "seed": 0, "dataset": {"spec": f"squad:{_data(tmp_path)}"},
                         "attack": [{"name": "AddSent", "params": {"candidates": 1, "fluency": "lm"}}]},
                        source="test")
    result = Engine(suite, tmp_path / "run", targets={"toy": ToyReader()}).execute()
    assert result.counts["n_errors_generate"] >= 1
    errors = [json.loads(line) for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert any("killed by SIGILL" in json.dumps(e) for e in errors)


def test_the_real_model_killed_from_outside_falls_back() -> None:
    from callbluff.resources.requirements import check_requirements

    fluency.reset()
    if problems := check_requirements(["smollm2-lm"]):
        pytest.skip("; ".join(problems))
    scorer = fluency.fluency_scorer()
    assert scorer is not None
    assert scorer.score("Tesla moved to Prague in 1880.") < 0
    os.kill(scorer.pid, signal.SIGKILL)
    with pytest.raises(fluency.ModelDied, match="killed by SIGKILL"):
        scorer.score("A sentence it has not seen.")
    assert scorer.score("Tesla moved to Prague in 1880.") < 0  # remembered before it died
    with pytest.warns(UserWarning, match="killed by SIGKILL"):
        assert fluency.fluency_scorer() is None
    assert "killed by SIGKILL" in (fluency.died_reason() or "")
    fluency.reset()
