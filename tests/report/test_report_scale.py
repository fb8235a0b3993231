"""Reports that read right for any suite size (issue 27): charts grouped per attack beyond ``MAX_BARS``
configurations, and an example sample that is stratified, seeded and kept within a byte budget."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from callbluff.engine.run import RunResult
from callbluff.render.plots import PALETTE
from callbluff.render.views import MAX_BARS, PANEL_BARS, failure_chart, kumar_grids
from callbluff.report import browser
from callbluff.report.browser import sample_examples, script_json


def _rows(attacks: dict[str, int]) -> list[dict[str, object]]:
    """Pooled essay metric rows: ``attacks`` maps an attack name to its number of configurations (a percent
    grid); failure % = the percent, so every value is known."""
    return [{"task": "essay", "attack": a, "params": json.dumps({"percent": float(p), "position": "end"}),
             "prompt": "all", "target": "m", "n": 10, "failure_pct": float(p), "expect": "lower"}
            for a, n in attacks.items() for p in range(1, n + 1)]


def _bars(svg: str) -> int:
    """Bars in one single-series matplotlib SVG: the paths filled with the first palette colour."""
    return svg.count(f"fill: {PALETTE[0]}")


def test_a_small_suite_keeps_one_chart() -> None:
    html = failure_chart("essay", _rows({"AddSong": 4, "DelRand": 3}), ["m"])
    assert html.count("<svg") == 1 and "<figure>" not in html
    assert _bars(html) == 7


def test_a_large_suite_gets_an_overview_and_one_panel_per_attack() -> None:
    rows = _rows({"AddSong": 12, "DelRand": 2 * PANEL_BARS + 5, "ModLexicon": 1, "ShuffleSent": 1})
    assert len(rows) > MAX_BARS
    html = failure_chart("essay", rows, ["m"])
    svgs = re.findall(r"<svg.*?</svg>", html, re.S)
    # overview (4 attacks) + AddSong + DelRand over three panels + one panel for the two single-configuration attacks
    assert len(svgs) == 1 + 1 + 3 + 1
    assert _bars(svgs[0]) == 4 and "DelRand (65)" in svgs[0] and "AddSong (12)" in svgs[0]
    assert svgs[0].index("DelRand (65)") < svgs[0].index("AddSong (12)")  # highest mean first
    assert all(_bars(s) <= PANEL_BARS for s in svgs[1:])
    assert sum(_bars(s) for s in svgs[1:]) == 12 + 65 + 2  # every configuration drawn once
    assert "<b>DelRand</b> (configurations 31-60 of 65)" in html and "<b>AddSong</b> (12 configurations)" in html
    assert "Attacks with one configuration</b> (2)" in html
    # a panel labels a configuration by the parameters that vary within its attack, values written out
    assert ">percent=15<" in html and "position=end" not in html


def test_grid_rows_show_a_default_grid_value() -> None:
    rows = [{**r, "prompt": "1", "neg_pct": 0.0, "pos_pct": 0.0, "mean_diff_pct": 0.0, "not_lowered_pct": 100.0}
            for r in _rows({"AddSong": 3})]
    rows += [{**r, "params": json.dumps({"percent": 15.0, "position": "end"})} for r in rows[:1]]
    [grid] = kumar_grids(rows, ["m"])
    # AddSong's default percent is 15: the grid row says so instead of hiding it
    assert [r[1] for r in grid.rows] == ["percent=1", "percent=2", "percent=3", "percent=15"]


def _examples(path: Path, configs: int, per_config: int, text_chars: int, fooled_every: int = 3) -> None:
    rows = []
    text = " ".join(f"word{j}" for j in range(text_chars))  # distinct words: the word diff stays linear
    for c in range(configs):
        for i in range(per_config):
            eid = f"c{c}-e{i}"
            rows.append({"example_id": eid, "source_id": f"s{i}", "prompt_id": str(1 + i % 2), "attack": "AddSong",
                         "params": json.dumps({"percent": float(c)}), "index": 0, "field": "text",
                         "original_text": text[:text_chars], "adversarial_text": text[:text_chars] + " added.",
                         "gold": 1.0, "gold_answers": None, "target": "m", "orig_score": 2.0, "adv_score": 2.0,
                         "orig_answer": None, "adv_answer": None, "orig_error": None, "adv_error": None,
                         "queries": 0, "verdict": i % fooled_every != 0})
    pd.DataFrame(rows).to_parquet(path / "examples.parquet")


def test_the_sample_stays_within_the_byte_budget_and_keeps_every_configuration(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "MAX_EMBEDDED_BYTES", 200_000)
    _examples(tmp_path, configs=40, per_config=30, text_chars=4000)
    items, totals, shown = sample_examples(tmp_path, 200, seed=1)
    size = sum(len(script_json(it).encode()) for it in items)
    one = len(script_json(items[0]).encode())
    assert size <= 200_000 + 40 * one  # the budget, plus the one example every configuration keeps
    assert len({it["label"] for it in items}) == 40 == len(totals)  # every configuration shown
    assert sum(totals.values()) == 1200 and 40 <= len(items) < 1200 and 1 <= shown < 30
    again, _, _ = sample_examples(tmp_path, 200, seed=1)
    assert [i["example_id"] for i in again] == [i["example_id"] for i in items]  # seeded


def test_the_sample_is_stratified_by_outcome_and_prompt(tmp_path: Path) -> None:
    _examples(tmp_path, configs=1, per_config=30, text_chars=20, fooled_every=3)  # 10 of 30 fooled
    items, _, shown = sample_examples(tmp_path, 9, seed=7)
    assert shown == 9 and sum(it["fooled"] for it in items) == 3  # in proportion: a third fooled
    assert [it["fooled"] for it in items] == [True] * 3 + [False] * 6  # fooled first on the page
    assert {it["prompt"] for it in items} == {"1", "2"}  # taken in turn from each prompt


NOT_APPLICABLE = """
name = "not-applicable"
seed = 3
limit = 4
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelRand"
[[attack]]
name = "AddRC"
grid = { percent = [10, 20] }
"""


def test_the_report_names_attacks_that_made_no_example(small_run: Callable[..., RunResult]) -> None:
    run = small_run(NOT_APPLICABLE).run_dir  # AddRC adds the prompt's reading passage: the demo prompt has none
    html = (run / "report.html").read_text(encoding="utf-8")
    assert "<b>Not measured:</b> AddRC (0 of 2 configurations produced adversarial examples)" in html
    assert "DelRand (" not in html.split("Not measured:")[1].split("</p>")[0]
