"""report.html: self-contained, states the findings, shows traced examples, escapes user text."""

from __future__ import annotations

import json
from pathlib import Path

from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.report.html import headlines, short_params, write_report
from callbluff.targets import CallableTarget


def test_report_from_a_real_run(tmp_path: Path) -> None:
    data = tmp_path / "a.jsonl"
    rows = [{"id": f"r{i}", "prompt_id": "p", "text": f"<b>pandas</b> eat bamboo {i} & more", "score": 2}
            for i in range(6)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = parse_suite({"name": "rep", "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=2"},
                         "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}]}, source="t")
    Engine(suite, tmp_path / "run", targets={"bow": CallableTarget(lambda t: 2.0)}).execute()
    assert not (tmp_path / "run" / "report.html").exists()  # the engine writes no report; its callers do
    assert write_report(tmp_path / "run") == tmp_path / "run" / "report.html"
    html = (tmp_path / "run" / "report.html").read_text()
    # user text is embedded as script-safe JSON for the example browser, never as markup
    assert "<b>pandas</b>" not in html and "\\u003cb\\u003epandas\\u003c/b\\u003e" in html
    assert "Findings" in html and "100% of 6 adversarial responses kept their score" in html
    assert "ARR" in html and "http://" not in html and "https://" not in html  # no external assets


def test_headlines_and_params() -> None:
    assert short_params('{"a":1,"b":null}') == "a=1" and short_params("{}") == "defaults"
    rows = [{"task": "essay", "attack": "ShuffleSent", "params": "{}", "prompt": "all", "target": "t", "n": 10,
             "neg_pct": 20.0, "pos_pct": 10.0, "mean_diff_pct": -1.5}]
    [h] = headlines("essay", rows)
    assert "70% of 10 adversarial responses kept their score, 10% gained" in h


def test_short_params_omits_the_attacks_defaults_only_when_named() -> None:
    from callbluff.attacks.base import get_attack
    from callbluff.render.text import short_params

    full = get_attack("DPAEG")().params_dict
    params = json.dumps({**full, "max_questions": 10})
    assert short_params(params, "DPAEG") == "max_questions=10"  # the long relation list is a default: dropped
    assert "relations=" in short_params(params)  # without the attack's name every value stays (provenance)
    assert short_params(json.dumps(full), "DPAEG") == "defaults"
    assert short_params('{"x": 1}', "NoSuchAttack") == "x=1"
