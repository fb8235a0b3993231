"""Each example's verdict (its attack's declared expectation judged on the target's outputs) is in
examples.parquet, the metric rows' failure_pct is the share judged False, and the report's browser puts the
examples that fooled the target first and can show only those."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from callbluff.report.browser import sample_examples


@pytest.fixture(scope="module")
def run(small_run: Callable[..., Any]) -> Any:
    return small_run()


def test_verdicts_are_stored_and_add_up_to_failure_pct(run: Any) -> None:
    ex = pd.read_parquet(run.run_dir / "examples.parquet")
    assert ex["verdict"].notna().all()  # every prediction succeeded: every example is judged
    # ShuffleSent and DelRand expect a lower score (Kumar et al.): fooled = not lowered
    lowered = ex["adv_score"] < ex["orig_score"] - 1e-9
    assert (ex["verdict"] == lowered).all()
    metrics = json.loads((run.run_dir / "metrics.json").read_text())
    for attack in ("ShuffleSent", "DelRand"):
        [row] = [r for r in metrics if r["attack"] == attack]  # the demo essays answer one prompt: one row
        g = ex[ex["attack"] == attack]
        assert row["failure_pct"] == pytest.approx(100.0 * float((~g["verdict"].astype(bool)).mean()))
        assert row["failure_pct"] == pytest.approx(row["not_lowered_pct"])


def test_browser_puts_fooled_examples_first(run: Any) -> None:
    items, _, _ = sample_examples(run.run_dir, 50, seed=5)
    ex = pd.read_parquet(run.run_dir / "examples.parquet")
    fooled_ids = set(ex.loc[ex["verdict"] == False, "example_id"])  # noqa: E712
    assert fooled_ids and any(not it["fooled"] for it in items)  # both kinds are there to order
    for it in items:
        assert it["fooled"] == (it["example_id"] in fooled_ids)
        assert it["fooled"] == any(o["verdict"] is False for o in it["out"])
    for attack in {it["attack"] for it in items}:
        flags = [it["fooled"] for it in items if it["attack"] == attack]
        assert flags == sorted(flags, reverse=True), attack  # within an attack: fooled first
    page = (run.run_dir / "report.html").read_text(encoding="utf-8")
    assert 'class="cb-fooled"' in page and "only examples that fooled a target" in page


def test_cards_cite_each_attacks_own_paper(run: Any) -> None:
    from callbluff.report.scorecard import paper_of

    assert paper_of("BabelGen").startswith("Kumar et al. 2020")  # a bottom-expecting attack of Kumar's, not Ding's
    assert paper_of("RandomChars").startswith("Ding et al. 2020") and paper_of("NotAnAttack") is None
    page = (run.run_dir / "report.html").read_text(encoding="utf-8")
    assert "a robust scorer lowers the score; Kumar et al. 2020" in page
    assert "QWK on the original essays next to overstability" in page  # the essay task's own words


def test_content_views_are_not_titled_as_kumars_tables() -> None:
    from callbluff.tasks import get_task

    rows = [{"task": "content", "attack": "Shuffle", "params": "{}", "prompt": "1", "target": "t", "neg_pct": 10.0,
             "pos_pct": 0.0, "mean_diff_pct": -5.0, "not_lowered_pct": 90.0, "arr": 20.0},
            {"task": "content", "attack": "RandomChars", "params": "{}", "prompt": "1", "target": "t",
             "mean_score_pct": 30.0, "arr": 70.0}]
    titles = [v.title for v in get_task("content").views(rows, ["t"])]
    assert titles and not any("Kumar et al. Table" in t for t in titles), titles
    essay = [v.title for v in get_task("essay").views([{**r, "task": "essay"} for r in rows], ["t"])]
    assert any("Kumar et al. Table 5 shape" in t for t in essay), essay


def test_reading_cards_carry_the_question_and_the_distractor(tmp_path: Any) -> None:
    """A reading example changes the passage: its card shows the question it is judged against, the perturbed
    question and the added sentence; gold answers as text."""
    from callbluff.engine.run import Engine
    from callbluff.engine.suite import parse_suite
    from callbluff.models.qa import SlidingWindowQA

    context = "In January 1880, Tesla left Gospic for Prague. He studied in Graz before that."
    data = {"version": "1.1", "data": [{"title": "Tesla", "paragraphs": [{"context": context, "qas": [
        {"id": "q1", "question": "Which city did Tesla leave in 1880?",
         "answers": [{"text": "Gospic", "answer_start": context.index("Gospic")}]}]}]}]}
    p = tmp_path / "squad.json"
    p.write_text(json.dumps(data))
    suite = parse_suite({"name": "r", "seed": 0, "dataset": {"spec": f"squad:{p}"}, "attack": [{"name": "AddOneSent"}]},
                        source="test")
    Engine(suite, tmp_path / "run", targets={"reader": SlidingWindowQA()}).execute()
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    assert list(ex["question"]) == ["Which city did Tesla leave in 1880?"]
    [item] = sample_examples(tmp_path / "run", 10, seed=0)[0]
    assert item["question"] == "Which city did Tesla leave in 1880?" and item["gold_answers"] == "Gospic"
    meta = json.loads(ex["meta"].iloc[0])
    assert item["distractor"] == meta["distractor"] and item["perturbed_question"] == meta["perturbed_question"]
    assert item["perturbed_question"] != item["question"]
