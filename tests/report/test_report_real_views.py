"""The reading and questions views filled by real small runs through the engine (not hand-made rows).

Data: a handful of SQuAD v1.1 dev questions from ../shared (dev positions 6, 7, 22, 23, 34, 44: questions the
sliding-window reader answers correctly, so an attack has something to break), written to a small SQuAD file.
Reading: AddOneSent and AddSent (Jia & Liang 2017 Sec. 3) against SlidingWindowQA. Questions: DPAEG against a
TF-IDF retriever + sliding-window reader over those paragraphs and 20 others. The report's view tables must
hold the runs' figures, recomputed here from examples.parquet / originals.parquet.
"""

from __future__ import annotations

import gzip
import html
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from helpers import shared_path

from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.metrics.questions import answer_matches
from callbluff.metrics.reading import f1_score
from callbluff.report.html import write_report
from callbluff.render.text import fmt, pct, short_params

PICK = (6, 7, 22, 23, 34, 44)
"""Positions in SQuAD v1.1 dev (file order) of the questions the tests use."""


@pytest.fixture(scope="module")
def squad_dev() -> dict[str, Any]:
    with gzip.open(shared_path("data", "squad-v1.1", "dev-v1.1.json.gz"), "rt", encoding="utf-8") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def small_squad(squad_dev: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    flat = [(a, p, q) for a, art in enumerate(squad_dev["data"]) for p, para in enumerate(art["paragraphs"])
            for q in range(len(para["qas"]))]
    paragraphs: dict[tuple[int, int], dict[str, Any]] = {}
    for i in PICK:
        a, p, q = flat[i]
        para = squad_dev["data"][a]["paragraphs"][p]
        paragraphs.setdefault((a, p), {"context": para["context"], "qas": []})["qas"].append(para["qas"][q])
    data = {"version": "1.1", "data": [{"title": squad_dev["data"][a]["title"], "paragraphs": [para]}
                                       for (a, _), para in paragraphs.items()]}
    path = tmp_path_factory.mktemp("squad") / "dev-small.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def view_table(report: str, title: str) -> dict[tuple[str, str], dict[str, str]]:
    """The view's table as {(attack label, target): {header: cell}}."""
    m = re.search(re.escape(f"<h3>{html.escape(title)}</h3>") + r".*?<table>(.*?)</table>", report, re.S)
    assert m, f"no view {title!r} in the report"
    rows = [[html.unescape(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", m.group(1), re.S)]
    header, body = rows[0], rows[1:]
    return {(r[0], r[1]): dict(zip(header, r, strict=True)) for r in body}


def _golds(col: pd.Series) -> list[list[str]]:
    return [list(g) for g in col]  # a list column (run-directory format 2)



def _label(attack: str, params: str) -> str:
    """A view's row label: the attack and its non-default parameters (the name alone at the defaults)."""
    shown = short_params(params, attack)
    return attack if shown == "defaults" else f"{attack} {shown}"

def test_reading_view_holds_the_runs_f1_before_and_after(small_squad: Path, tmp_path: Path) -> None:
    from callbluff.models.qa import SlidingWindowQA

    suite = parse_suite({"name": "reading-small", "seed": 0, "dataset": {"spec": f"squad:{small_squad}"},
                         "attack": [{"name": "AddOneSent"},
                                    {"name": "AddSent", "params": {"candidates": 2}, "query_budget": 2}],
                         "output": {"report": False}}, source="reading-small.toml")
    run = tmp_path / "run"
    Engine(suite, run, targets={"sliding-window": SlidingWindowQA()}).execute()
    page = write_report(run).read_text(encoding="utf-8")
    assert "Jia &amp; Liang 2017, Sec. 4" in page and "track QWK" not in page  # the reading task's own words
    table = view_table(page, "F1 before and after each attack (Jia & Liang 2017 shape)")
    ex = pd.read_parquet(run / "examples.parquet")
    orig = pd.read_parquet(run / "originals.parquet")
    before = {s: f1_score(a or "", g) for s, a, g in zip(orig["source_id"], orig["answer"],
                                                         _golds(orig["gold_answers"]), strict=True)}
    assert sum(v == 1.0 for v in before.values()) >= 4  # the picked questions: the reader gets most right
    assert {a for a, _ in table} == {_label(a, p) for a, p in
                                     ex[["attack", "params"]].drop_duplicates().itertuples(index=False)}
    for (attack, params), g in ex.groupby(["attack", "params"]):
        worst: dict[str, float] = {}
        for s, a, gold in zip(g["source_id"], g["adv_answer"], _golds(g["gold_answers"]), strict=True):
            worst[s] = min(worst.get(s, 1.0), f1_score(a or "", gold))
        row = table[(_label(attack, params), "sliding-window")]
        assert row["questions"] == fmt(len(worst))
        assert row["F1"] == pct(100 * sum(before[s] for s in worst) / len(worst))  # 0-100: one decimal
        assert row["F1 adv"] == pct(100 * sum(worst.values()) / len(worst))
    assert any(table[k]["F1 adv"] != table[k]["F1"] for k in table)  # the distractor fooled the reader somewhere


def test_questions_view_holds_the_runs_success_rate(small_squad: Path, squad_dev: dict[str, Any],
                                                    tmp_path: Path) -> None:
    from callbluff.models.retriever import RetrieverReader

    contexts = [p["context"] for art in json.loads(small_squad.read_text())["data"] for p in art["paragraphs"]]
    others = [p["context"] for p in squad_dev["data"][1]["paragraphs"][:20]]  # paragraphs that do not answer
    robot = RetrieverReader.from_texts(contexts + others, n_docs=1)
    suite = parse_suite({"name": "questions-small", "seed": 0,
                         "dataset": {"spec": f"squad:{small_squad}?task=questions"},
                         "attack": [{"name": "DPAEG", "params": {"max_questions": 5}}],
                         "output": {"report": False}}, source="questions-small.toml")
    run = tmp_path / "run"
    result = Engine(suite, run, targets={"tfidf+sliding": robot}).execute()
    page = write_report(run).read_text(encoding="utf-8")
    assert "DPAEG, Sec. 4.1" in page and "Kumar et al." not in page  # the questions task's own words
    table = view_table(page, "Success rate, Recall@k, MRR, MAP (DPAEG Tables 2-3 shape)")
    ex = pd.read_parquet(run / "examples.parquet")
    golds = _golds(ex["gold_answers"])
    orig_ok = [answer_matches(a, g) for a, g in zip(ex["orig_answer"], golds, strict=True)]
    adv_ok = [answer_matches(a, g) for a, g in zip(ex["adv_answer"], golds, strict=True)]
    fooled = sum(o and not a for o, a in zip(orig_ok, adv_ok, strict=True))
    row = table[(_label("DPAEG", ex["params"].iloc[0]), "tfidf+sliding")]
    assert row["n"] == fmt(len(ex))
    assert row["success rate %"] == fmt(100 * fooled / sum(orig_ok))
    assert 0 < fooled < sum(orig_ok)  # some typo'd questions fooled the robot, not all
    metrics = next(r for r in result.metrics if r["attack"] == "DPAEG")
    for field, label in (("recall_at_5", "R@5"), ("recall_at_5_adv", "R@5 adv"), ("mrr", "MRR"),
                         ("mrr_adv", "MRR adv"), ("map", "MAP"), ("map_adv", "MAP adv")):
        assert row[label] == fmt(metrics[field]), field
    assert float(row["MRR adv"]) < float(row["MRR"])  # the attack pushed the answer down the ranking
