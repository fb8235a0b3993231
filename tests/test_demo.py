"""`callbluff demo` works on a machine without ../shared: trains, runs the four paper suites through the engine,
reports, resumes. The end-to-end test uses ``--limit`` (a few records of each suite, across its prompts) to stay within the
test-time budget; the full demo is measured in README's tour."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.demo import SUITES, headline, run_demo, suite_toml, usable_attacks
from callbluff.engine.suite import load_suite

RUN_FILES = ("run.json", "examples.parquet", "predictions.sqlite", "metrics.json", "errors.jsonl", "report.html")


@pytest.mark.slow
def test_demo_end_to_end_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLBLUFF_SHARED", str(tmp_path / "no-shared-here"))
    out = tmp_path / "demo"
    res = CliRunner().invoke(app, ["demo", "--out", str(out), "--limit", "4"])
    assert res.exit_code == 0, res.output
    for suite in ("essay", "content", "reading", "questions"):
        run = out / "runs" / suite
        for name in RUN_FILES:
            assert (run / name).exists(), f"{suite}/{name}"
        meta = json.loads((run / "run.json").read_text())
        assert meta["status"] == "finished" and meta["limit"] == 4
        assert f"{run / 'report.html'}" in res.output  # the closing summary names every report
    content = json.loads((out / "runs" / "content" / "metrics.json").read_text())
    attacked = {(r["target"], r["attack"]) for r in content if r["attack"] != "clean"}
    assert {a for _, a in attacked} == {"RandomChars", "PromptWords", "GenericChars", "ContentBurst", "Shuffle"}
    assert {t for t, _ in attacked} == {"content-scorer", "content-scorer+filter"}
    random_chars = [r for r in content if r["attack"] == "RandomChars" and r["target"] == "content-scorer"]
    # --limit 4 takes 2 answers of each of the two prompts; each prompt gets its 100 generated answers (count per
    # prompt), and the pooled row has both
    assert sorted((r["prompt"], r["n"]) for r in random_chars) == [("all", 200), ("demo-1", 100), ("demo-2", 100)]
    assert all(r["arr"] > 90 for r in random_chars)
    essay = json.loads((out / "runs" / "essay" / "metrics.json").read_text())
    assert {r["attack"] for r in essay} == {"clean", "ShuffleSent", "AddSong", "DelEnd", "ModGrammar", "BabelGen"}
    reading = json.loads((out / "runs" / "reading" / "metrics.json").read_text())
    assert {r["attack"] for r in reading} == {"clean", "AddOneSent", "AddSent"}
    assert all(r["n"] == 4 for r in reading if r["attack"] == "clean")
    # "How tall is the tower?" gets no sentence: its only altered word is the one its answer replaces (issue 26)
    assert all(r["n"] == 3 for r in reading if r["attack"] != "clean")
    questions = json.loads((out / "runs" / "questions" / "metrics.json").read_text())
    dpaeg = next(r for r in questions if r["attack"] == "DPAEG")
    assert dpaeg["n"] > 4 and dpaeg["success_rate"] is not None  # several adversarial questions per question
    for line in ("essays not penalised: ShuffleSent", "ARR content-scorer: RandomChars", "F1 clean",
                 "DPAEG success rate"):
        assert line in res.output
    # a second demo reuses the models and resumes every run: no target is called again
    res2 = CliRunner().invoke(app, ["demo", "--out", str(out), "--limit", "4"])
    assert res2.exit_code == 0, res2.output
    assert "content-filter: reusing" in res2.output
    for suite in ("essay", "content", "reading", "questions"):
        meta = json.loads((out / "runs" / suite / "run.json").read_text())
        assert meta["resumed"] and all(s["calls"] == 0 for s in meta["target_stats"].values())


def test_suites_parse_and_name_their_targets(tmp_path: Path) -> None:
    models = tmp_path / "models"
    (models / "content-filter").mkdir(parents=True)
    for with_filter in (False, True):
        if with_filter:
            (models / "content-filter" / "filter.json").write_text("{}")
        for s in SUITES:
            text = suite_toml(s, s.attacks, models)
            p = tmp_path / "suites" / f"{s.name}.toml"
            p.parent.mkdir(exist_ok=True)
            p.write_text(text)
            suite = load_suite(p)
            assert [(a.name, a.params) for a in suite.attack] == [(n, dict(p)) for n, p in s.attacks]
            names = [t["name"] for t in tomllib.loads(text)["target"]]
            if s.name == "content":
                assert names == (["content-scorer", "content-scorer+filter"] if with_filter else ["content-scorer"])
            targets = tomllib.loads(text)["target"]
            assert all(t["path"].startswith("../models/") for t in targets)


def test_attacks_with_missing_resources_are_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    import callbluff.resources.requirements as req

    monkeypatch.setattr(req, "check_requirements",
                        lambda names: ["typos: no typo corpus; run `make setup`"] if "typos" in names else [])
    questions = next(s for s in SUITES if s.name == "questions")
    keep, skipped = usable_attacks(questions)
    assert keep == [] and skipped == ["questions/DPAEG: typos: no typo corpus; run `make setup`"]
    essay = next(s for s in SUITES if s.name == "essay")
    keep, skipped = usable_attacks(essay)
    assert [n for n, _ in keep] == [n for n, _ in essay.attacks] and skipped == []


def test_unknown_suite_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown demo suite.*nope.*choose from essay, content, reading, questions"):
        run_demo(tmp_path, suites=["nope"])
    assert not (tmp_path / "models").exists()  # refused before any training


def test_headlines_from_metric_rows() -> None:
    essay = [{"attack": "clean", "prompt": "p", "target": "t", "qwk": 0.91},
             {"attack": "BabelGen", "prompt": "p", "target": "t", "failure_pct": 100.0},
             {"attack": "ShuffleSent", "prompt": "p", "target": "t", "failure_pct": 62.5}]
    assert headline("essay", essay) == "essays not penalised: ShuffleSent 62%, BabelGen 100% (clean QWK 0.91)"
    content = [{"attack": "clean", "prompt": "a", "target": "content-scorer", "qwk": 0.8},
               {"attack": "Shuffle", "prompt": "a", "target": "content-scorer", "arr": 99.0},  # per prompt: not shown
               {"attack": "Shuffle", "prompt": "all", "target": "content-scorer", "arr": 10.0},
               {"attack": "RandomChars", "prompt": "all", "target": "content-scorer", "arr": 100.0},
               {"attack": "RandomChars", "prompt": "all", "target": "content-scorer+filter", "arr": None}]
    assert headline("content", content) == ("ARR content-scorer: RandomChars 100%, Shuffle 10% | "
                                            "content-scorer+filter: RandomChars n/a (clean QWK a 0.80)")
    reading = [{"attack": "clean", "prompt": "all", "target": "r", "f1": 71.66},
               {"attack": "AddSent", "prompt": "all", "target": "r", "f1_adv": 20.5, "queries_mean": 2.5}]
    assert headline("reading", reading) == "F1 clean 71.7 -> AddSent 20.5 (2.5 queries/question)"
    questions = [{"attack": "clean", "prompt": "all", "target": "q", "n": 30, "mrr": 0.5},
                 {"attack": "DPAEG", "prompt": "all", "target": "q", "n": 290, "success_rate": 40.0, "mrr": 0.5,
                  "mrr_adv": 0.25}]
    assert headline("questions", questions) == ("DPAEG success rate 40% (290 adversarial questions from 30), "
                                                "MRR 0.50 -> 0.25")


def test_demo_squad_as_open_questions() -> None:
    from callbluff.datasets import load
    from callbluff.datasets.base import DataError
    from callbluff.records import OpenQuestion, QAExample

    reading, questions = load("demo:squad"), load("demo:squad?task=questions")
    assert questions.task == "questions" and reading.task == "reading"
    qs, rs = list(questions), list(reading)
    assert len(qs) == len(rs) == 30 and all(isinstance(q, OpenQuestion) for q in qs)
    assert all(isinstance(r, QAExample) for r in rs)
    assert [(q.id, q.question) for q in qs] == [(r.id, r.question) for r in rs]
    with pytest.raises(DataError, match="demo:content: unknown option.*task; allowed: split$"):
        load("demo:content?task=questions")
