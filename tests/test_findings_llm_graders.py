"""scripts/findings/llm_graders.py: the Mohler slice it grades and the suite it runs (which must load), without the
server (the script itself runs against the real local model; docs/findings/llm-graders.md is its output)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from callbluff.datasets import load
from callbluff.engine.suite import load_suite
from helpers import REPO, shared_path


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("llm_graders_findings", REPO / "scripts" / "findings" / "llm_graders.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_slice_takes_weak_and_ordinary_answers_with_the_prompts_fields(script, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(script, "MOHLER", shared_path("data", "mohler-unt-sag"))
    info = script.write_slice(2, 6, tmp_path / "slice.jsonl")
    rows = [json.loads(x) for x in (tmp_path / "slice.jsonl").read_text().splitlines()]
    assert info["prompts"] == ["1.1", "1.2"] and info["answers"] == len(rows) == 12
    full = load(f"mohler:{script.MOHLER}")
    for pid in info["prompts"]:
        golds = sorted(r.gold for r in full.records() if r.prompt_id == pid)
        mine = sorted(x["score"] for x in rows if x["prompt_id"] == pid)
        assert mine[:3] == golds[:3]  # half of each prompt's answers are its lowest-scored ones
    ds = load(script.slice_spec(tmp_path / "slice.jsonl"))
    p = ds.prompts["1.1"]
    assert p.reference == full.prompts["1.1"].reference and p.rubric == full.prompts["1.1"].rubric
    assert p.text == full.prompts["1.1"].text and (p.score_min, p.score_max) == (0, 5)


def test_the_suites_it_runs_load(script, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(script, "CACHE", tmp_path)
    srv = SimpleNamespace(base_url="http://127.0.0.1:9/v1", model="smollm2-135m-instruct")
    spec = f"jsonl:{tmp_path / 'slice.jsonl'}?prompt_text=question&score_min=0&score_max=5"
    main = tmp_path / "main.toml"
    main.write_text(script.main_suite_text(srv, spec, tmp_path / "filter", 2, 48, length=2, train_answers=2))
    suite = load_suite(main)
    assert [t.name for t in suite.target] == ["smollm2", "smollm2+injection-filter"]
    universal = next(a for a in suite.attack if a.name == "UniversalPhrase")
    assert dict(universal.params) == {"query_budget": 48, "length": 2, "train_answers": 2}
    var = tmp_path / "variants.toml"
    var.write_text(script.variants_suite_text(srv, spec))
    assert [t.name for t in load_suite(var).target] == ["llm-grader", "llm-grader-answer-first"]
