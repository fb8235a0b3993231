"""AddSent verification round trip (Jia & Liang 2017, Sec. 3.1 step 4, the crowd's check): a real reading run
(AddOneSent + AddSent on SQuAD-format questions, real spaCy and lexicon, a toy reader), an ``addsent`` sheet
exported through the CLI, filled as two annotators, imported: the acceptance rate by majority, the rejected
sentences dropped from the verified set, and bad cells named by file, row and column."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from callbluff.annotate import AnnotationError, addsent_verification, export_sheet, import_sheets
from callbluff.cli import app
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from helpers.readers import ToyReader
from helpers.sheets import read_rows, write_rows


CONTEXT = ("In January 1880, two of Tesla's uncles put together enough money to help him leave Gospic for Prague, "
           "where he was to study. In 1882 he moved to Budapest to work for a telegraph company.")
QAS = [
    ("q1", "What city did Tesla move to in 1880?", "Prague"),
    ("q2", "When did Tesla move to Budapest?", "1882"),
    ("q3", "Where did Tesla work in 1882?", "a telegraph company"),
    ("q4", "How many uncles helped Tesla leave Gospic?", "two"),
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("addsent-run")
    data = {"version": "1.1", "data": [{"title": "Tesla", "paragraphs": [{"context": CONTEXT, "qas": [
        {"id": i, "question": q, "answers": [{"text": a, "answer_start": CONTEXT.index(a)}]}
        for i, q, a in QAS]}]}]}
    (tmp / "squad.json").write_text(json.dumps(data))
    attacks = [{"name": "AddOneSent", "params": {"fluency": "structural"}},
               {"name": "AddSent", "params": {"fluency": "structural"}}]
    suite = parse_suite({"name": "addsent-check", "seed": 0, "dataset": {"spec": f"squad:{tmp / 'squad.json'}"},
                         "attack": attacks}, source="test")
    Engine(suite, tmp / "run", targets={"toy": ToyReader()}).execute()
    return tmp / "run"


def test_round_trip_drops_rejected_sentences_and_reports_acceptance(run_dir: Path, tmp_path: Path) -> None:
    examples = pd.read_parquet(run_dir / "examples.parquet")
    n = int(examples["example_id"].nunique())
    assert n >= 4
    r = CliRunner().invoke(app, ["annotate", "export", str(run_dir), "--kind", "addsent", "--n", str(n),
                                 "--out", str(tmp_path / "sheet.csv")])
    assert r.exit_code == 0, r.output
    blank = read_rows(tmp_path / "sheet.csv")
    assert len(blank) == n
    assert set(blank[0]) == {"sheet", "item", "question", "sentence", "grammatical", "answers_question", "annotator"}
    distractors = {json.loads(m)["distractor"] for m in examples["meta"]}
    assert {row["sentence"] for row in blank} <= distractors
    assert {row["question"] for row in blank} <= {q for _, q, _ in QAS}
    assert "example_id" not in json.dumps(blank)  # the key stays in the run directory
    form = (tmp_path / "sheet.html").read_text()
    assert form.count("Grammatical (yes / no)") == n

    # annotator A rejects item 001 (ungrammatical) and item 002 (answers the question); B rejects only 001:
    # by majority 001 is rejected (2 of 2), 002 is a tie (1 of 2 accept) and so rejected, the rest accepted
    filled = []
    for annotator in ("A", "B"):
        for row in blank:
            g = "no" if row["item"] == "001" else "yes"
            a = "yes" if row["item"] == "002" and annotator == "A" else "no"
            filled.append({**row, "grammatical": g, "answers_question": a, "annotator": annotator})
    write_rows(tmp_path / "filled.csv", filled)
    r = CliRunner().invoke(app, ["annotate", "import", str(run_dir), str(tmp_path / "filled.csv")])
    assert r.exit_code == 0, r.output
    assert "AddSent verification" in r.output
    summary = json.loads((run_dir / "annotations" / "results.json").read_text())
    [total] = [row for row in summary["addsent_verification"] if row["attack"] == "all"]
    assert total["n_items"] == n and total["n_annotators"] == 2
    assert total["accepted_pct"] == pytest.approx(100.0 * (n - 2) / n)
    assert total["grammatical_pct"] == pytest.approx(100.0 * (n - 1) / n)
    assert total["answers_question_pct"] == pytest.approx(100.0 * 1 / (2 * n))
    key = json.loads(next((run_dir / "annotations").glob("adds-*.key.json")).read_text())["items"]
    rejected = {key["001"]["example_id"], key["002"]["example_id"]}
    assert set(summary["addsent_rejected"]) == rejected
    verified = pd.read_parquet(run_dir / "annotations" / "addsent_verified.parquet")
    assert set(verified["example_id"]) == set(examples["example_id"]) - rejected  # rejected sentences dropped
    assert len(verified) == int((~examples["example_id"].isin(rejected)).sum())  # every target's rows kept


def test_bad_cells_and_wrong_runs_are_named(run_dir: Path, tmp_path: Path) -> None:
    ex = export_sheet(run_dir, "addsent", 2, tmp_path / "s.csv", seed=1)
    rows = read_rows(ex.csv)
    bad = [{**rows[0], "grammatical": "maybe", "answers_question": "no", "annotator": "A"},
           {**rows[1], "grammatical": "yes", "answers_question": "no", "annotator": "A"}]
    with pytest.raises(AnnotationError, match=r"row 2, column grammatical: 'maybe'; write yes or no"):
        import_sheets(run_dir, [write_rows(tmp_path / "bad.csv", bad)])
    missing = [{**rows[0], "grammatical": "yes", "answers_question": "no", "annotator": "A"}]
    with pytest.raises(AnnotationError, match="did not judge items"):
        import_sheets(run_dir, [write_rows(tmp_path / "missing.csv", missing)])


def test_majority_rule() -> None:
    js = [{"item": "s/001", "annotator": a, "attack": "AddSent", "example_id": "e1", "grammatical": g,
           "answers_question": q} for a, g, q in (("A", True, False), ("B", True, False), ("C", False, False))]
    js += [{"item": "s/002", "annotator": a, "attack": "AddOneSent", "example_id": "e2", "grammatical": True,
            "answers_question": q} for a, q in (("A", True), ("B", True), ("C", False))]
    out = addsent_verification(js)
    assert out["accepted"] == ["e1"] and out["rejected"] == ["e2"]
    by = {r["attack"]: r for r in out["table"]}
    assert by["all"]["accepted_pct"] == 50.0 and by["AddSent"]["grammatical_pct"] == pytest.approx(200 / 3)
    assert by["AddOneSent"]["answers_question_pct"] == pytest.approx(200 / 3)


def test_an_addsent_sheet_of_a_scoring_run_names_the_task_addsent_serves(small_run, tmp_path: Path) -> None:
    """The task check reads the task AddSent's attacks serve (no task name spelled in annotate.py)."""
    essay_run = small_run().run_dir
    with pytest.raises(AnnotationError, match=r"addsent sheets need a reading run with AddSent or AddOneSent, "
                                              r"this one is 'essay'"):
        export_sheet(essay_run, "addsent", 4, tmp_path / "sheet.csv")
