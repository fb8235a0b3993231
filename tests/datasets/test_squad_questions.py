"""``squad:PATH?task=questions``: SQuAD as open questions (question + gold answers, no context) for the
Q&A-robot suite (DPAEG)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import shared_path

from callbluff.datasets import load
from callbluff.datasets.base import DataError
from callbluff.records import OpenQuestion

TINY = {
    "version": "v2.0",
    "data": [{"title": "Maresby", "paragraphs": [{
        "context": "Maresby was founded in 1724 by the weaver Tomas Ellery.",
        "qas": [
            {"id": "q1", "question": "Who founded Maresby?", "answers": [
                {"text": "Tomas Ellery", "answer_start": 42},
                {"text": "the weaver Tomas Ellery", "answer_start": 31},
                {"text": "Tomas Ellery", "answer_start": 42}]},
            {"id": "q2", "question": "When was Maresby founded?", "answers": [{"text": "1724", "answer_start": 23}]},
            {"id": "q3", "question": "Who closed the mill?", "answers": [], "is_impossible": True,
             "plausible_answers": [{"text": "Tomas Ellery", "answer_start": 42}]},
        ]}]}],
}


def _write(tmp_path: Path, doc: dict) -> Path:
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(doc))
    return p


def test_tiny_file_as_open_questions(tmp_path: Path) -> None:
    ds = load(f"squad:{_write(tmp_path, TINY)}?task=questions")
    recs = list(ds)
    assert ds.task == "questions"
    assert [type(r) for r in recs] == [OpenQuestion, OpenQuestion]
    assert recs[0] == OpenQuestion("q1", "Who founded Maresby?", ("Tomas Ellery", "the weaver Tomas Ellery"))
    assert recs[0].meta["title"] == "Maresby" and recs[0].answer_type == "string"
    assert recs[1].answers == ("1724",)
    assert ds.meta["count"] == 2 and ds.meta["skipped_impossible"] == 1 and ds.meta["impossible"] == 1


def test_default_task_is_still_reading(tmp_path: Path) -> None:
    ds = load(f"squad:{_write(tmp_path, TINY)}")
    assert ds.task == "reading" and len(list(ds)) == 3


def test_bad_task_option_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="reading, questions"):
        load(f"squad:{_write(tmp_path, TINY)}?task=open")


def test_only_unanswerable_questions_is_an_error(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(TINY))
    doc["data"][0]["paragraphs"][0]["qas"] = [doc["data"][0]["paragraphs"][0]["qas"][2]]
    with pytest.raises(DataError, match="no answerable questions"):
        load(f"squad:{_write(tmp_path, doc)}?task=questions")


def test_squad_dev_as_open_questions() -> None:
    ds = load(f"squad:{shared_path('data', 'squad-v1.1', 'dev-v1.1.json.gz')}?task=questions")
    recs = list(ds)
    assert ds.task == "questions" and len(recs) == 10_570 and ds.meta["articles"] == 48
    assert recs[0].question == "Which NFL team represented the AFC at Super Bowl 50?"
    assert recs[0].answers == ("Denver Broncos",)
    # gold answers are distinct per question (SQuAD dev repeats the three annotators' spans)
    assert all(len(set(r.answers)) == len(r.answers) >= 1 for r in recs)
    assert sum(len(r.answers) == 1 for r in recs) == 4_945
