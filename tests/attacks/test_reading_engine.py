"""The reading suite through the engine (the path of `callbluff run` and examples/reading-jia2017.toml): AddAny
and AddSent searches through the oracle, the worst-case ``em_adv`` / ``f1_adv`` and the per-question cost fields
(queries mean / median / max, search seconds) of the reading metric rows."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from helpers.readers import ToyReader

from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite

CONTEXT = "In January 1880, Tesla left Gospic for Prague. He studied in Graz before that."
QAS = [
    ("q1", "What zyzzyva did Tesla move to?", "Prague", CONTEXT.index("Prague")),
    ("q2", "Which zyzzyva city did Tesla reach after Gospic?", "Prague", CONTEXT.index("Prague")),
    ("q3", "What city did Tesla go to in 1880?", "Prague", CONTEXT.index("Prague")),
]


def _data(tmp_path: Path) -> Path:
    data = {"version": "1.1", "data": [{"title": "Tesla", "paragraphs": [{"context": CONTEXT, "qas": [
        {"id": i, "question": q, "answers": [{"text": a, "answer_start": s}]} for i, q, a, s in QAS]}]}]}
    p = tmp_path / "squad.json"
    p.write_text(json.dumps(data))
    return p


def test_addany_and_addsent_rows(tmp_path: Path) -> None:
    suite = parse_suite({"name": "reading", "seed": 0, "dataset": {"spec": f"squad:{_data(tmp_path)}"},
                         "attack": [{"name": "AddAny", "params": {"restarts": 0}, "query_budget": 400},
                                    {"name": "AddSent"}]}, source="test")
    result = Engine(suite, tmp_path / "run", targets={"toy": ToyReader()}).execute()
    ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
    anyx = ex[ex["attack"] == "AddAny"]
    assert len(anyx) == 3 and (anyx["queries"] <= 400).all()
    metas = [json.loads(m) for m in anyx["meta"]]
    assert not any("search_seconds" in m for m in metas)  # wall time would make the examples machine-dependent
    timings = json.loads((tmp_path / "run" / "timings.json").read_text())
    [t_any] = [t for t in timings if t["attack"] == "AddAny"]
    assert t_any["n"] == 3 and t_any["seconds_mean"] > 0 and t_any["seconds_max"] >= t_any["seconds_median"]
    assert t_any["queries_total"] == int(anyx.groupby("source_id")["queries"].max().sum())
    row = next(r for r in result.metrics if r["attack"] == "AddAny")
    per_q = dict(zip(anyx["source_id"], anyx["queries"]))
    assert row["queries_mean"] == sum(per_q.values()) / 3
    assert row["queries_max"] == max(per_q.values())
    assert row["queries_median"] == sorted(per_q.values())[1]
    assert "seconds_mean" not in row
    # the toy reader is fooled by three "zyzzyva": q1 and q2 have it among their question words, q3 does not
    fooled = {sid for sid, a in zip(anyx["source_id"], anyx["adv_answer"]) if a == "nowhere"}
    assert fooled == {"q1", "q2"}
    assert per_q["q3"] == 400  # never fooled: the whole budget
    assert row["f1"] == 100.0 and abs(row["f1_adv"] - 100.0 / 3) < 1e-9
    sent = next(r for r in result.metrics if r["attack"] == "AddSent")
    assert sent["queries_max"] <= 4 and sent["n_errors_generate"] == 0
