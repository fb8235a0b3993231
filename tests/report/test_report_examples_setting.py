"""``output.examples_in_report``: the number of examples per attack the report's browser embeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from callbluff.engine.run import Engine
from callbluff.engine.suite import SuiteError, parse_suite
from callbluff.report.html import ReportError, write_report
from callbluff.targets import CallableTarget


def _suite(data: Path, output: dict[str, object]) -> object:
    return parse_suite({"name": "examples", "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
                        "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}},
                                   {"name": "Shuffle", "params": {"tokenizer": "spacy"}}],
                        "target": [{"name": "t", "type": "callable", "function": "x:y"}],
                        "output": {"report": False, **output}}, source="examples.toml")


def _run(tmp: Path, output: dict[str, object]) -> Path:
    data = tmp / "answers.jsonl"
    data.write_text("".join(json.dumps({"id": f"a{i}", "prompt_id": "1", "score": 3,
                                        "text": f"answer number {i} with some words to shuffle around"}) + "\n"
                            for i in range(9)))
    run = tmp / f"run-{len(list(tmp.iterdir()))}"
    Engine(_suite(data, output), run, targets={"t": CallableTarget(lambda t: float(len(t) % 4))}).execute()
    return run


def _embedded(html: str) -> list[dict[str, object]]:
    m = re.search(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)
    return json.loads(m.group(1))["items"] if m else []


def _per_attack(html: str) -> dict[str, int]:
    """Embedded examples per attack configuration, keyed by its tokenizer (the two configurations differ there)."""
    counts: dict[str, int] = {}
    for item in _embedded(html):
        key = "whitespace" if "whitespace" in str(item["params"]) else "spacy"
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_the_report_embeds_as_many_examples_per_attack_as_the_suite_says(tmp_path: Path) -> None:
    run = _run(tmp_path, {"examples_in_report": 3})
    html = write_report(run).read_text(encoding="utf-8")
    assert _per_attack(html) == {"whitespace": 3, "spacy": 3}  # 9 examples each in examples.parquet
    assert "6 examples shown of 18" in html and "up to 3 each" in html
    default = _run(tmp_path, {})
    assert _per_attack(write_report(default).read_text(encoding="utf-8")) == {"whitespace": 9, "spacy": 9}
    assert _per_attack(write_report(run, out=tmp_path / "o.html", per_attack=5).read_text()) == {"whitespace": 5,
                                                                                               "spacy": 5}


def test_zero_examples_leaves_the_browser_empty_and_says_why(tmp_path: Path) -> None:
    html = write_report(_run(tmp_path, {"examples_in_report": 0})).read_text(encoding="utf-8")
    assert _per_attack(html) == {}
    assert "output.examples_in_report = 0" in html and "No adversarial examples in this run" not in html


@pytest.mark.parametrize("value", [-1, 2.5, "12", True])
def test_a_bad_value_is_refused_naming_the_key(tmp_path: Path, value: object) -> None:
    with pytest.raises(SuiteError, match=r"output\.examples_in_report"):
        _suite(tmp_path / "x.jsonl", {"examples_in_report": value})


def test_a_bad_value_in_run_json_is_refused_naming_the_key_and_file(tmp_path: Path) -> None:
    run = _run(tmp_path, {"examples_in_report": 2})
    meta = json.loads((run / "run.json").read_text())
    meta["suite"]["output"]["examples_in_report"] = -4
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(ReportError, match=r"run\.json: key `output\.examples_in_report` must be an integer >= 0"):
        write_report(run)
