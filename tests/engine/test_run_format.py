"""Run-directory format 2: gold answers and ranked candidates are Parquet list columns (not JSON strings), and a
run directory written by another format is not resumed: it stops with exit 2 and names --restart."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.engine.rows import RUN_FORMAT
from callbluff.tasks.frames import candidate_texts, gold_list
from callbluff.engine.run import Engine
from callbluff.engine.store import RunDirError
from callbluff.engine.suite import parse_suite
from callbluff.models.qa import SlidingWindowQA

CONTEXT = "In January 1880, Tesla left Gospic for Prague. He studied in Graz before that."


def _suite(tmp_path: Path):  # noqa: ANN202
    data = {"version": "1.1", "data": [{"title": "Tesla", "paragraphs": [{"context": CONTEXT, "qas": [
        {"id": "q1", "question": "Which city did Tesla leave in 1880?",
         "answers": [{"text": "Gospic", "answer_start": CONTEXT.index("Gospic")}]},
        {"id": "q2", "question": "Where did Tesla study?",
         "answers": [{"text": "Graz", "answer_start": CONTEXT.index("Graz")},
                     {"text": "in Graz", "answer_start": CONTEXT.index("in Graz")}]}]}]}]}
    p = tmp_path / "squad.json"
    p.write_text(json.dumps(data))
    return parse_suite({"name": "fmt", "seed": 0, "dataset": {"spec": f"squad:{p}"}}, source="test")


def test_gold_answers_and_candidates_are_list_columns(tmp_path: Path) -> None:
    Engine(_suite(tmp_path), tmp_path / "run", targets={"reader": SlidingWindowQA()}).execute()
    table = pq.read_table(tmp_path / "run" / "originals.parquet")
    assert table.schema.field("gold_answers").type == pa.list_(pa.string())
    assert pa.types.is_list(table.schema.field("candidates").type)
    rows = {r["source_id"]: r for r in table.to_pylist()}
    assert rows["q2"]["gold_answers"] == ["Graz", "in Graz"]
    cands = rows["q1"]["candidates"]
    assert cands and all(set(c) == {"text", "score"} for c in cands)
    assert json.loads((tmp_path / "run" / "run.json").read_text())["format"] == RUN_FORMAT


def test_readers_take_both_formats() -> None:
    assert gold_list('["a", "b"]') == gold_list(["a", "b"]) == ["a", "b"]
    assert gold_list(None) == [] and candidate_texts(None) is None
    assert candidate_texts('[["x", 0.5], ["y", 0.1]]') == candidate_texts([{"text": "x", "score": 0.5},
                                                                          {"text": "y", "score": 0.1}]) == ["x", "y"]


def test_a_run_of_the_previous_format_is_refused_naming_restart(tmp_path: Path) -> None:
    suite = _suite(tmp_path)
    run = tmp_path / "run"
    Engine(suite, run, targets={"reader": SlidingWindowQA()}).execute()
    meta = json.loads((run / "run.json").read_text())
    del meta["format"]  # what the previous version wrote (format 1: JSON-string columns)
    (run / "run.json").write_text(json.dumps(meta))
    with pytest.raises(RunDirError, match="--restart") as e:
        Engine(suite, run, targets={"reader": SlidingWindowQA()}).execute()
    assert "format 1" in str(e.value)
    again = Engine(suite, run, targets={"reader": SlidingWindowQA()}, restart=True).execute()
    assert again.counts["records"] == 2


def test_cli_exit_2_for_a_previous_format_run(tmp_path: Path) -> None:
    suite_file = tmp_path / "suite.toml"
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps({"id": f"a{i}", "prompt_id": "p", "text": f"answer number {i}",
                                        "score": i % 3}) + "\n" for i in range(4)))
    suite_file.write_text(f'name = "fmt"\n[dataset]\nspec = "jsonl:{data}?task=content&score_min=0&score_max=2"\n'
                          '[[target]]\nname = "len"\ntype = "callable"\nfunction = "builtins:len"\n'
                          'out_of_range = "clip"\n')
    runner = CliRunner()
    first = runner.invoke(app, ["run", str(suite_file), "--out", str(tmp_path / "run")])
    assert first.exit_code == 0, first.output
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    meta["format"] = 1
    (tmp_path / "run" / "run.json").write_text(json.dumps(meta))
    res = runner.invoke(app, ["run", str(suite_file), "--out", str(tmp_path / "run")])
    assert res.exit_code == 2 and "--restart" in res.output
