"""Model-in-the-loop attacks reach the target only through an Oracle over the engine's cached Target, within
the query budget of their params (DESIGN.md: AddAny, AddCommon, worst-case AddSent and DPAEG plug in this way)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from callbluff.attacks.base import SearchAttack, SearchParams, registered
from callbluff.attacks.oracle import Oracle
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.targets import CallableTarget

WORDS = ["bamboo", "koala", "habitat", "zebra", "granite", "panda"]


class _Params(SearchParams):
    tries: int = 6


class _AppendBestWord(SearchAttack):
    """Test-only search attack: append the word (of a few random ones) that raises the score most."""

    name = "TestAppendBestWord"
    task = "content"
    family = "test"
    paper = "test"
    description = "test-only model-in-the-loop attack"
    Params = _Params
    record_type = ScoredResponse
    expect = "same-score"

    def search(self, record: Record, oracle: Oracle, rng: np.random.Generator, res: Resources,
               prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        best, best_score = None, -1.0
        for word in rng.permutation(WORDS)[: self.params.tries]:
            text = f"{record.text} {word}"
            out = oracle.ask_one(text)  # one query at a time, as a greedy search would
            if out is None:
                break
            if out.ok and out.score > best_score:
                best, best_score = text, out.score
        return [self.perturbed(record, best, appended=best.rsplit(" ", 1)[1])] if best else []


def test_search_attack_spends_budget_through_the_cached_target(tmp_path: Path) -> None:
    with registered(_AppendBestWord):
        _run_search(tmp_path)


def _run_search(tmp_path: Path) -> None:
    data = tmp_path / "a.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "prompt_id": "p", "text": f"pandas eat {i}", "score": 1})
                            + "\n" for i in range(10)))
    seen: list[str] = []

    def scorer(text: str) -> float:
        seen.append(text)
        return float(sum(w in text for w in ("bamboo", "koala", "panda")))

    suite = parse_suite({"name": "search", "seed": 1,
                         "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
                         "attack": [{"name": "TestAppendBestWord", "params": {"tries": 6, "query_budget": 4}}]},
                        source="test")
    result = Engine(suite, tmp_path / "run", targets={"fn": CallableTarget(scorer)}).execute()
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    assert len(ex) == 10 and (ex["queries"] == 4).all()  # budget 4 < 6 tries
    assert set(ex["adversarial_text"].str.rsplit(" ", n=1).str[1]) <= {"bamboo", "koala", "panda", "habitat",
                                                                        "zebra", "granite"}
    # 10 originals + 40 search queries; the chosen adversarial texts were already asked: cache hits, no call
    # (and the pre-flight's 3 originals, read back from the cache by their chunk: 3 more hits, no more calls)
    assert len(seen) == 50 and result.target_stats["fn"]["cache_hits"] == 10 + 3
    row = next(r for r in result.metrics if r["attack"] == "TestAppendBestWord" and r["prompt"] == "p")
    assert row["queries_mean"] == 4
