"""The engine side of attack contract v2 (issue 9): query budgets in provenance, concurrent searches with the
same results, fit step and prompt-level generators through a real run (with resume), declared requirements
checked once, and failure rates derived from declared expectations."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from callbluff.attacks.base import (
    AttackParams,
    GeneratorParams,
    PromptGenerator,
    SearchAttack,
    SearchParams,
    StaticAttack,
    registered,
)
from callbluff.attacks.oracle import Oracle
from callbluff.engine.executor import LocalExecutor
from callbluff.engine.run import Engine
from callbluff.engine.suite import SuiteError, parse_suite
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.targets import CallableTarget

WORDS = ["bamboo", "koala", "habitat", "zebra", "granite", "panda", "forest", "leaf"]


class _Params(SearchParams):
    tries: int = 8


class GreedyAppend(SearchAttack):
    """Test search attack (Sec. test): append each of ``tries`` words, one query each; keep the best score.
    It asks for more than its budget on purpose: the oracle must stop it."""

    name = "TestGreedyAppend"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only search"
    Params = _Params
    expect = "bottom"
    record_type = ScoredResponse

    def search(self, record: Record, oracle: Oracle, rng: np.random.Generator, res: Resources,
               prompt: Prompt | None = None, state: Any = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        texts = [f"{record.text} {w}" for w in rng.permutation(WORDS)[: self.params.tries]]
        outs = oracle.ask(texts)  # one batched ask of 8; the oracle cuts it to the budget
        scored = [(o.score, t) for t, o in zip(texts, outs) if o.ok]
        if not scored:
            return []
        return [self.perturbed(record, max(scored)[1])]


class _GenParams(GeneratorParams):
    length: int = 4


class VocabGenerator(PromptGenerator):
    """Test prompt-level generator (Sec. test): ``length`` words drawn from the prompt's answer vocabulary."""

    name = "TestVocabGenerator"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only generator"
    Params = _GenParams
    expect = "bottom"
    record_type = ScoredResponse
    fits: list[str] = []

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> Any:
        VocabGenerator.fits.append(prompt.id if prompt else "-")
        return sorted({w for r in records for w in r.text.split()})

    def generate_one(self, index: int, prompt: Prompt, state: Any, rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        if not state:
            return None
        return self.generated(prompt, " ".join(rng.choice(state, size=self.params.length)), index)


class NeedsMissing(StaticAttack):
    """Test static attack (Sec. test) that declares a resource this machine cannot have."""

    name = "TestNeedsMissing"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only"
    Params = AttackParams
    expect = "lower"
    record_type = ScoredResponse
    requires = ("wordnet", "test-missing")

    def generate(self, record: Record, rng: np.random.Generator, res: Resources, prompt: Prompt | None = None,
                 state: Any = None) -> list[Perturbed]:  # pragma: no cover - never reached
        raise AssertionError("requirements are checked before the first chunk")


def answers(tmp_path: Path, n: int = 30) -> Path:
    data = tmp_path / "a.jsonl"
    rng = np.random.default_rng(0)
    data.write_text("".join(json.dumps({"id": f"r{i}", "prompt_id": f"p{i % 2}",
                                        "text": " ".join(rng.choice(WORDS, 3)) + f" {i}", "score": i % 4}) + "\n"
                            for i in range(n)))
    return data


def suite(data: Path, attacks: list[dict[str, Any]], **output: Any) -> Any:
    return parse_suite({"name": "v2", "seed": 5, "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
                        "attack": attacks, "output": {"chunk_size": 8, **output}}, source="test")


def scorer(text: str) -> float:
    return float(sum(w in text for w in ("bamboo", "koala", "panda")))


def test_query_budget_is_provenance_and_cannot_be_exceeded(tmp_path: Path) -> None:
    calls: list[str] = []

    def counting(text: str) -> float:
        calls.append(text)
        return scorer(text)

    with registered(GreedyAppend):
        s = suite(answers(tmp_path), [{"name": "TestGreedyAppend", "query_budget": 3},
                                      {"name": "TestGreedyAppend", "query_budget": 5}])
        result = Engine(s, tmp_path / "run", targets={"fn": CallableTarget(counting)}).execute()
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    by_budget = {b: g for b, g in ex.groupby(ex["params"].map(lambda p: json.loads(p)["query_budget"]))}
    assert set(by_budget) == {3, 5}
    assert (by_budget[3]["queries"] == 3).all() and (by_budget[5]["queries"] == 5).all()
    assert not set(by_budget[3]["example_id"]) & set(by_budget[5]["example_id"])  # distinct ids
    rows = [r for r in result.metrics if r["attack"] == "TestGreedyAppend" and r["prompt"] == "p0"]
    assert sorted(r["queries_mean"] for r in rows) == [3, 5]  # distinct rows
    # the target never answered more than budget per record: 30 originals + 30 x (3 + 5) queries at most
    assert len(calls) <= 30 + 30 * 8


def test_searches_give_the_same_results_at_any_concurrency(tmp_path: Path) -> None:
    data = answers(tmp_path, 40)
    outs = []
    with registered(GreedyAppend):
        for conc in (1, 8):
            s = suite(data, [{"name": "TestGreedyAppend", "query_budget": 4}], search_concurrency=conc)
            Engine(s, tmp_path / f"c{conc}", targets={"fn": CallableTarget(scorer)}).execute()
            ex = pd.read_parquet(tmp_path / f"c{conc}" / "examples.parquet")
            outs.append(ex.drop(columns=["chunk"]).sort_values("example_id").reset_index(drop=True))
    pd.testing.assert_frame_equal(outs[0], outs[1])


def test_concurrent_searches_overlap_a_slow_target(tmp_path: Path) -> None:
    """Not a timing assertion: the target records how many calls were in flight at once."""
    import threading

    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    def slow(text: str) -> float:
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.01)
        with lock:
            state["now"] -= 1
        return scorer(text)

    with registered(GreedyAppend):
        s = suite(answers(tmp_path, 16), [{"name": "TestGreedyAppend", "query_budget": 2}], search_concurrency=4)
        Engine(s, tmp_path / "run", executor=LocalExecutor(1), targets={"fn": CallableTarget(slow)}).execute()
    assert state["max"] > 1


def test_prompt_generator_fits_once_per_prompt_and_resumes(tmp_path: Path) -> None:
    VocabGenerator.fits.clear()
    data = answers(tmp_path, 20)
    with registered(VocabGenerator):
        s = suite(data, [{"name": "TestVocabGenerator", "params": {"count": 11}}])
        result = Engine(s, tmp_path / "run", targets={"fn": CallableTarget(scorer)}).execute()
        assert VocabGenerator.fits == ["p0", "p1"]
        ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
        assert len(ex) == 22 and set(ex["source_id"]) == {"prompt:p0", "prompt:p1"}
        assert sorted(ex[ex["prompt_id"] == "p0"]["index"]) == list(range(11))
        vocab = {p: {w for line in data.read_text().splitlines() if json.loads(line)["prompt_id"] == p
                     for w in json.loads(line)["text"].split()} for p in ("p0", "p1")}
        for row in ex.itertuples():
            assert set(row.adversarial_text.split()) <= vocab[row.prompt_id]
            assert json.loads(row.meta)["fit_state"] and row.original_text is None and row.orig_score != row.orig_score
        meta = json.loads((tmp_path / "run" / "run.json").read_text())
        assert len(meta["fit_states"]) == 2
        rows = {r["prompt"]: r for r in result.metrics if r["attack"] == "TestVocabGenerator"}
        assert set(rows) == {"p0", "p1", "all"}
        g0 = ex[ex["prompt_id"] == "p0"]["adv_score"]
        assert rows["p0"]["n"] == 11 and rows["p0"]["arr"] == pytest.approx(100 * (g0 == 0).mean())
        assert rows["p0"]["mean_score_pct"] == pytest.approx(g0.mean() / 3 * 100)
        assert rows["p0"]["failure_pct"] == pytest.approx(100 - rows["p0"]["arr"])
        # a second run into the same directory: nothing regenerated, nothing asked (a target that would fail if
        # asked, under the first one's identity: another identity would be asked again, issue 27)
        same = CallableTarget(lambda t: 1 / 0, fingerprint=CallableTarget(scorer).fingerprint)
        again = Engine(s, tmp_path / "run", targets={"fn": same}).execute()
        assert again.target_stats["fn"]["calls"] == 0 and again.metrics == result.metrics


def test_missing_requirements_stop_the_run_once_with_one_message(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.resources import requirements as R

    monkeypatch.setitem(R.REQUIREMENTS, "test-missing", R.Requirement(
        "test-missing", "a resource no machine has", lambda: "test-missing: not installed: apt-get install nothing"))
    with registered(NeedsMissing):
        s = suite(answers(tmp_path), [{"name": "TestNeedsMissing"}])
        with pytest.raises(SuiteError) as e:
            Engine(s, tmp_path / "run", targets={"fn": CallableTarget(scorer)}).execute()
    assert "test-missing: not installed: apt-get install nothing (needed by TestNeedsMissing)" in str(e.value)
    assert not (tmp_path / "run" / "parts").exists()


def test_failure_rate_follows_the_declared_expectation(tmp_path: Path) -> None:
    data = answers(tmp_path, 40)
    s = suite(data, [{"name": "Shuffle", "params": {"tokenizer": "whitespace", "min_score": 0}}])
    result = Engine(s, tmp_path / "run", targets={"fn": CallableTarget(scorer)}).execute()
    for r in result.metrics:
        if r["attack"] == "Shuffle":
            assert r["expect"] == "bottom" and r["failure_pct"] == pytest.approx(100 - r["arr"])
    with pytest.raises(SuiteError, match="not model-in-the-loop"):
        suite(data, [{"name": "Shuffle", "query_budget": 3}])


def test_cli_generate_fits_and_runs_prompt_generators(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from callbluff.cli import app

    data = answers(tmp_path, 20)
    with registered(VocabGenerator):
        out = tmp_path / "gen.jsonl"
        res = CliRunner().invoke(app, ["generate", "--attack", "TestVocabGenerator", "--param", "count=3",
                                       "--data", f"jsonl:{data}?task=content&score_min=0&score_max=3",
                                       "--out", str(out), "--seed", "4"])
        assert res.exit_code == 0, res.output
        again = tmp_path / "gen2.jsonl"
        CliRunner().invoke(app, ["generate", "--attack", "TestVocabGenerator", "--param", "count=3", "--data",
                                 f"jsonl:{data}?task=content&score_min=0&score_max=3", "--out", str(again),
                                 "--seed", "4", "--workers", "2"])
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 6 and {x["source_id"] for x in lines} == {"prompt:p0", "prompt:p1"}
    assert out.read_bytes() == again.read_bytes()
