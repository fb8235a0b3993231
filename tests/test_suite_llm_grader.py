"""`callbluff suite llm-grader`: the written suite loads through the suite loader, its chat target validates with
every key of the openai target, and it holds the task's seed bluffs and the whole LLM-grader family."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.attacks.llm import llm_configurations
from callbluff.cli import app
from callbluff.engine.suite import load_suite
from callbluff.suites.llm_grader import SEED_BLUFFS
from helpers import shared_path


@pytest.mark.parametrize("task", ["content", "essay"])
def test_suite_command_writes_a_suite_that_loads(tmp_path: Path, task: str) -> None:
    out = tmp_path / "suites" / "grader.toml"
    r = CliRunner().invoke(app, ["suite", "llm-grader", "--out", str(out), "--task", task, "--base-url",
                                 "http://127.0.0.1:9/v1", "--model", "smollm2", "--api-key-env", "GRADER_KEY",
                                 "--response-format", "json_object", "--variants", "--n", "3"])
    assert r.exit_code == 0, r.output
    suite = load_suite(out)
    assert [t.name for t in suite.target] == ["llm-grader", "llm-grader-answer-first"]
    t = suite.target[0]
    cfg = t.model_dump() if hasattr(t, "model_dump") else dict(t)
    assert {cfg["type"], cfg["base_url"], cfg["model"], cfg["api_key_env"], cfg["response_format"], cfg["n"]} >= {
        "openai", "http://127.0.0.1:9/v1", "smollm2", "GRADER_KEY", "json_object", 3}
    assert "${rubric}" in cfg["user"] and "${reference}" in cfg["user"] and "${text}" in cfg["user"]
    names = [a.name for a in suite.attack]
    assert [c["attack"] for c in SEED_BLUFFS[task]] == names[:len(SEED_BLUFFS[task])]
    assert sorted(set(names[len(SEED_BLUFFS[task]):])) == sorted({c["attack"] for c in llm_configurations(task)})
    assert "GRADER_KEY" in out.read_text() and "sk-" not in out.read_text()


def test_suite_on_the_real_mohler_data_loads_and_a_bad_task_exits_2(tmp_path: Path) -> None:
    root = shared_path("data", "mohler-unt-sag")
    out = tmp_path / "s.toml"
    r = CliRunner().invoke(app, ["suite", "llm-grader", "--out", str(out), "--data", f"mohler:{root}"])
    assert r.exit_code == 0, r.output
    suite = load_suite(out)
    assert suite.dataset_spec().startswith("mohler:") and len(suite.target) == 1
    r = CliRunner().invoke(app, ["suite", "llm-grader", "--out", str(tmp_path / "x.toml"), "--task", "reading"])
    assert r.exit_code == 2 and "content" in r.output
