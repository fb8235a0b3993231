"""The example browser's parts: word diffs, script-safe JSON, deterministic sampling; the report's views."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from callbluff.report.browser import MAX_DIFF_CHARS, MAX_SHOWN_CHARS, sample_examples, script_json, word_diff
from callbluff.report.scorecard import scorecards
from callbluff.tasks import get_task


def _side(diff: list[list[str]], keep: str) -> str:
    return "".join(t for op, t in diff if op in ("=", keep))


def test_word_diff_marks_changed_words() -> None:
    d = word_diff("the cat sat on the mat", "the dog sat on the mat today")
    assert d == [["=", "the "], ["-", "cat "], ["+", "dog "], ["=", "sat on the mat"], ["+", " today"]]
    assert word_diff("a  b", "a b") == [["=", "a"], ["-", "  "], ["+", " "], ["=", "b"]]  # spacing changed
    assert word_diff("same", "same") == [["=", "same"]]
    assert word_diff(None, "generated text") == [["+", "generated text"]]


@given(st.text(max_size=200), st.text(max_size=200))
def test_word_diff_rebuilds_both_texts(a: str, b: str) -> None:
    d = word_diff(a, b)
    assert _side(d, "-") == a and _side(d, "+") == b


def test_long_texts_skip_the_diff_but_keep_the_texts() -> None:
    a = "word " * (MAX_DIFF_CHARS // 8)  # both together over the diff limit, each under the cut
    d = word_diff(a, a + "more")
    assert d == [["-", a], ["+", a + "more"]]  # shown whole, no diff
    long = "x" * (MAX_SHOWN_CHARS + 30_000)
    [(op_a, shown_a), (op_b, shown_b)] = word_diff(long, "short")
    assert (op_a, op_b) == ("-", "+") and shown_b == "short"
    assert shown_a.startswith("x" * MAX_SHOWN_CHARS) and shown_a.endswith("x … [30,000 more characters in examples.parquet]")


def test_script_json_cannot_close_the_element() -> None:
    payload = {"t": "</script><!-- <script>alert(1)</script> & \u2028"}
    text = script_json(payload)
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == payload


def _examples(path: Path, n: int) -> None:
    rows = [{"example_id": f"e{i}", "source_id": f"s{i}", "prompt_id": "p", "attack": "A" if i % 2 else "B",
             "params": "{}", "index": 0, "field": "text", "original_text": f"a b {i}", "adversarial_text": f"a c {i}",
             "gold": 1.0, "gold_answers": None, "target": t, "orig_score": 1.0, "adv_score": float(i % 3),
             "orig_answer": None, "adv_answer": None, "orig_error": None, "adv_error": None, "queries": 0}
            for i in range(n) for t in ("t1", "t2")]
    pd.DataFrame(rows).to_parquet(path / "examples.parquet")


def test_sample_is_deterministic_capped_and_grouped_by_example(tmp_path: Path) -> None:
    _examples(tmp_path, 50)
    items, totals, cap = sample_examples(tmp_path, 10, seed=3)
    assert cap == 10 and totals == {"A defaults": 25, "B defaults": 25} and len(items) == 20
    assert all(len(it["out"]) == 2 for it in items)  # one item per example, both targets' scores
    again, _, _ = sample_examples(tmp_path, 10, seed=3)
    other, _, _ = sample_examples(tmp_path, 10, seed=4)
    assert [i["example_id"] for i in again] == [i["example_id"] for i in items]
    assert {i["example_id"] for i in other} != {i["example_id"] for i in items}
    a = [it for it in items if it["attack"] == "A"]
    rises = [max(o["adv_score"] - o["orig_score"] for o in it["out"]) for it in a]
    assert rises == sorted(rises, reverse=True)  # most telling (score rose most) first


ROWS = [
    {"task": "essay", "attack": "clean", "params": "{}", "prompt": "1", "target": "m", "n": 10, "qwk": 0.8},
    {"task": "essay", "attack": "clean", "params": "{}", "prompt": "2", "target": "m", "n": 10, "qwk": 0.6},
    *[{"task": "essay", "attack": a, "params": "{}", "prompt": p, "target": "m", "n": 10, "neg_pct": neg,
       "pos_pct": 0.0, "mean_diff_pct": -d, "not_lowered_pct": 100.0 - neg, "expect": "lower",
       "failure_pct": 100.0 - neg}
      for a, neg, d in (("DelRand", 90.0, 20.0), ("ShuffleSent", 10.0, 1.0))
      for p in ("1", "2", "all")],
]


def test_scorecard_worst_first_and_kumar_grid() -> None:
    [card] = scorecards("essay", ROWS, ["m"])
    assert card.clean[0] == ("QWK (mean of 2 prompts)", "0.7")
    assert [e.attack for e in card.entries] == ["ShuffleSent", "DelRand"]  # 90% failure before 10%
    assert card.entries[0].sentence.startswith("90% of 10 adversarial responses kept their score")
    [grid] = get_task("essay").views(ROWS, ["m"])
    assert grid.header == ["attack", "params", "target", "1", "2", "all"]
    assert grid.rows[0] == ["DelRand", "defaults", "m", "(90,0,-20,10)", "(90,0,-20,10)", "(90,0,-20,10)"]


def test_reading_and_questions_views_in_the_papers_shapes() -> None:
    reading = [{"task": "reading", "attack": "AddSent", "params": "{}", "prompt": "all", "target": t, "n": 20,
                "em": 60.0, "f1": 70.0, "em_adv": e, "f1_adv": f, "broken_pct": b}
               for t, e, f, b in (("bidaf", 20.0, 30.0, 66.7), ("bert", 50.0, 60.0, 16.7))]
    [view] = get_task("reading").views(reading, ["bidaf", "bert"])
    assert view.rows[0] == ["AddSent", "bidaf", "20", "60", "20", "70", "30", "66.7"]
    assert "<svg" in view.svg and "F1" in view.svg
    questions = [{"task": "questions", "attack": "DPAEG", "params": '{"epsilon":4}', "prompt": "all",
                  "target": "drqa", "n": 50, "success_rate": 62.0, "recall_at_5": 1.0, "recall_at_5_adv": 0.3,
                  "mrr": 1.0, "mrr_adv": 0.25}]
    [qv] = get_task("questions").views(questions, ["drqa"])
    assert qv.header == ["attack", "target", "n", "success rate %", "R@5", "R@5 adv", "MRR", "MRR adv"]
    assert qv.rows == [["DPAEG", "drqa", "50", "62", "1", "0.3", "1", "0.25"]]  # epsilon=4 is the default
    [card] = scorecards("questions", questions, ["drqa"])
    assert card.entries[0].sentence == "success rate 62% on 50 adversarial questions (DPAEG; 0% is ideal)."
