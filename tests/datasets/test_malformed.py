"""Bad input files: every loader error names the file, the line/row or JSON key, what is wrong and the fix.

Each case writes a small malformed file into ``tmp_path`` and checks the DataError message (and its
``path`` / ``line`` / ``key`` attributes) rather than just that *some* error happened.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from callbluff.datasets import DataError, load

AES_HEADER = ("essay_id\tessay_set\tessay\trater1_domain1\trater2_domain1\trater3_domain1\tdomain1_score\t"
              "rater1_domain2\trater2_domain2\tdomain2_score")


def aes_row(eid: int, s: int, essay: str, r1: str = "4", r2: str = "4", gold: str = "8") -> str:
    return f"{eid}\t{s}\t{essay}\t{r1}\t{r2}\t\t{gold}\t\t\t"


def aes(*rows: str, header: str = AES_HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


GOOD_AES = [aes_row(1, 1, '"Dear editor, computers help."'), aes_row(2, 1, "Plain essay text.")]
SAS_HEADER = "Id\tEssaySet\tScore1\tScore2\tEssayText"
LB_HEADER = "Id\tEssaySet\tEssayText"
SQUAD_OK = {"version": "1.1", "data": [{"title": "T", "paragraphs": [{"context": "Bob went home.", "qas": [
    {"id": "q1", "question": "Who went home?", "answers": [{"text": "Bob", "answer_start": 0}]}]}]}]}


@dataclass
class Case:
    """``files`` are written to tmp_path (str -> utf-8 text, bytes as is); ``spec`` is formatted with
    ``{d}`` = tmp_path; the error must contain ``file`` (a path under tmp_path) and every ``expect``."""

    name: str
    files: dict[str, str | bytes]
    spec: str
    file: str
    expect: list[str]
    line: int | None = None
    key: str | None = None
    kwargs: dict = field(default_factory=dict)


def _gz(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), mtime=0)


def _truncated_gz(text: str) -> bytes:
    blob = _gz(text * 50)
    return blob[: len(blob) // 2]


squad_missing_question = json.loads(json.dumps(SQUAD_OK))
del squad_missing_question["data"][0]["paragraphs"][0]["qas"][0]["question"]
squad_bad_span = json.loads(json.dumps(SQUAD_OK))
squad_bad_span["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 4
squad_no_answers = json.loads(json.dumps(SQUAD_OK))
squad_no_answers["data"][0]["paragraphs"][0]["qas"][0]["answers"] = []

CASES: list[Case] = [
    Case("aes truncated row (too few fields)", {"a.tsv": aes(*GOOD_AES, "3\t1\tShort row\t4")},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "expected 10 tab-separated fields", "found 4"], line=4),
    Case("aes renamed column", {"a.tsv": aes(*GOOD_AES, header=AES_HEADER.replace("\tessay\t", "\tEssay\t"))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 1 (header)", "missing column(s) 'essay'", "expected", "found",
                                         "'Essay' looks like a renamed 'essay'"], line=None, key="essay"),
    Case("aes unknown prompt id (essay_set 9)", {"a.tsv": aes(*GOOD_AES, aes_row(3, 9, "An essay."))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "unknown prompt id", "essay_set 9", "1-8"], line=4,
         key="essay_set"),
    Case("aes score outside range", {"a.tsv": aes(*GOOD_AES, aes_row(3, 1, "An essay.", gold="13"))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "domain1_score 13", "outside prompt 1's score range 2-12"],
         line=4, key="domain1_score"),
    Case("aes non-numeric score", {"a.tsv": aes(*GOOD_AES, aes_row(3, 2, "An essay.", gold="four"))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "domain1_score is 'four', not a number"], line=4),
    Case("aes empty text", {"a.tsv": aes(GOOD_AES[0], aes_row(2, 1, '""'))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 3", "empty text", "essay_id 2"], line=3, key="essay"),
    Case("aes undecodable bytes", {"a.tsv": aes(*GOOD_AES).encode() + "3\t1\tCaf\u00e9 essay\t4\t4\t\t8\t\t\t\n"
                                   .encode("latin-1")},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "column 8", "cannot decode", "utf-8", "encoding=latin-1"],
         line=4),
    Case("aes duplicate essay id", {"a.tsv": aes(*GOOD_AES, aes_row(1, 1, "Again."))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["line 4", "duplicate id '1'", "first seen at line 2"], line=4),
    Case("gz file truncated (corrupt)", {"a.tsv.gz": _truncated_gz(aes(*GOOD_AES))},
         "asap-aes:{d}/a.tsv.gz", "a.tsv.gz", ["corrupt or truncated gzip", "line", "gzip -t"]),
    Case("file named .gz that is not gzip", {"a.tsv.gz": aes(*GOOD_AES)},
         "asap-aes:{d}/a.tsv.gz", "a.tsv.gz", ["not gzip-compressed"]),
    Case("file not found (suggests the .gz)", {"a.tsv.gz": _gz(aes(*GOOD_AES))},
         "asap-aes:{d}/a.tsv", "a.tsv", ["not found", "did you mean", "a.tsv.gz"]),
    Case("empty file", {"a.tsv": ""}, "asap-aes:{d}/a.tsv", "a.tsv", ["empty file"]),
    Case("gzip of nothing", {"a.tsv.gz": _gz("")}, "asap-aes:{d}/a.tsv.gz", "a.tsv.gz", ["empty file"]),
    Case("unknown option (typo)", {"a.tsv": aes(*GOOD_AES)}, "asap-aes:{d}/a.tsv?promts=1", "a.tsv",
         ["option 'promts'", "unknown option", "did you mean 'prompts'"], key="promts"),
    Case("asap-aes prompts option out of range", {"a.tsv": aes(*GOOD_AES)}, "asap-aes:{d}/a.tsv?prompts=1,9",
         "a.tsv", ["option 'prompts'", "no ASAP-AES essay set 9"]),
    Case("sas unknown prompt id (EssaySet 11)",
         {"s.tsv": f"{SAS_HEADER}\n1\t1\t1\t1\tAn answer\n2\t11\t1\t1\tAnother\n"},
         "asap-sas:{d}/s.tsv", "s.tsv", ["line 3", "unknown prompt id", "EssaySet 11", "1-10"], line=3),
    Case("sas score outside range (set 3 is 0-2)",
         {"s.tsv": f"{SAS_HEADER}\n1\t3\t3\t2\tAn answer\n"},
         "asap-sas:{d}/s.tsv", "s.tsv", ["line 2", "Score1 3", "outside prompt 3's score range 0-2"], line=2),
    Case("sas renamed column",
         {"s.tsv": "Id\tEssaySet\tScore1\tScore2\tText\n1\t1\t1\t1\tAn answer\n"},
         "asap-sas:{d}/s.tsv", "s.tsv", ["line 1 (header)", "missing column(s) 'EssayText'",
                                         "found ['Id', 'EssaySet', 'Score1', 'Score2', 'Text']",
                                         "'Text' looks like a renamed 'EssayText'"]),
    Case("sas leaderboard id missing from solution",
         {"lb_rel_2.tsv": f"{LB_HEADER}\n10\t1\tAnswer a\n11\t1\tAnswer b\n",
          "lb_solution.csv": "id,essay_set,essay_weight,essay_score,Usage\n10,1,1,2,PublicTest\n"},
         "asap-sas:{d}/lb_rel_2.tsv", "lb_rel_2.tsv", ["line 3", "Id 11 has no row in the solution file",
                                                      "lb_solution.csv"], line=3),
    Case("sas solution with non-numeric score",
         {"lb.tsv": f"{LB_HEADER}\n10\t1\tAnswer a\n",
          "sol.csv": "id,essay_set,essay_weight,essay_score,Usage\n10,1,1,two,PublicTest\n"},
         "asap-sas:{d}/lb.tsv?solution=sol.csv", "sol.csv", ["line 2", "essay_score is 'two', not a number"],
         line=2),
    Case("sas solution from another leaderboard (essay_set mismatch)",
         {"lb.tsv": f"{LB_HEADER}\n10\t1\tAnswer a\n",
          "sol.csv.gz": _gz("id,essay_set,essay_weight,essay_score,Usage\n10,2,1,2,PublicTest\n")},
         "asap-sas:{d}/lb.tsv?solution=sol.csv.gz", "lb.tsv", ["line 2", "EssaySet 1", "essay_set 2",
                                                              "sol.csv.gz", "line 2"]),
    Case("squad truncated JSON", {"s.json": json.dumps(SQUAD_OK, indent=1)[:-40]},
         "squad:{d}/s.json", "s.json", ["line", "column", "JSON ends unexpectedly", "json.tool"]),
    Case("squad JSON without data", {"s.json": json.dumps({"version": "1.1", "articles": []})},
         "squad:{d}/s.json", "s.json", ["key data", "not SQuAD JSON", "found keys ['articles', 'version']"],
         key="data"),
    Case("squad missing question key", {"s.json.gz": _gz(json.dumps(squad_missing_question))},
         "squad:{d}/s.json.gz", "s.json.gz", ["key data[0].paragraphs[0].qas[0].question", "missing key",
                                              "question id q1"], key="data[0].paragraphs[0].qas[0].question"),
    Case("squad answer span not in context", {"s.json": json.dumps(squad_bad_span)},
         "squad:{d}/s.json", "s.json", ["key data[0].paragraphs[0].qas[0].answers[0]", "answer_start 4",
                                        "check_spans=false"]),
    Case("squad v1 question without answers", {"s.json": json.dumps(squad_no_answers)},
         "squad:{d}/s.json", "s.json", ["qas[0].answers", "no gold answers", "is_impossible"]),
    Case("trec regex that does not compile",
         {"t.tsv": "1\tfactoid\tWho?\tBob\n2\tfactoid\tWhat?\t(unclosed|group\n"},
         "trec:{d}/t.tsv", "t.tsv", ["line 2", "does not compile", "(unclosed|group", "id 2"], line=2),
    Case("trec wrong field count", {"t.tsv": "1\tfactoid\tWho?\tBob\n2\tWhat? Bob\n"},
         "trec:{d}/t.tsv", "t.tsv", ["line 2", "expected 4 tab-separated fields", "found 2"], line=2),
    Case("trec empty question", {"t.tsv": "1\tfactoid\t \tBob\n"},
         "trec:{d}/t.tsv", "t.tsv", ["line 1", "empty text", "question"], line=1),
    Case("webquestions missing qText",
         {"w.json": json.dumps([{"qId": "a", "qText": "who?", "answers": ["x"]}, {"qId": "b", "answers": ["y"]}])},
         "webquestions:{d}/w.json", "w.json", ["key [1].qText", "missing key 'qText'"], key="[1].qText"),
    Case("webquestions not an array", {"w.json": json.dumps({"qId": "a"})},
         "webquestions:{d}/w.json", "w.json", ["expected a JSON array"]),
    Case("mohler answer for an unknown question",
         {"m/questions.tsv": "question_id\tquestion\treference_answer\n1.1\tWhat?\tThis.\n",
          "m/answers.tsv": "question_id\tanswer_index\tignored_in_published_work\tscore_avg\tscore_grader1_other\t"
                           "score_grader2_me\tstudent_answer\n1.1\t0\t0\t5\t5\t5\tThis.\n9.9\t0\t0\t5\t5\t5\tThat.\n"},
         "mohler:{d}/m", "answers.tsv", ["line 3", "unknown prompt id", "question_id '9.9'"], line=3),
    Case("mohler score outside 0-5",
         {"m/questions.tsv": "question_id\tquestion\treference_answer\n1.1\tWhat?\tThis.\n",
          "m/answers.tsv": "question_id\tanswer_index\tignored_in_published_work\tscore_avg\tscore_grader1_other\t"
                           "score_grader2_me\tstudent_answer\n1.1\t0\t0\t7\t5\t5\tThis.\n"},
         "mohler:{d}/m", "answers.tsv", ["line 2", "score_avg 7", "0-5"], line=2),
    Case("mohler directory without questions.tsv", {"m/answers.tsv": "question_id\n"},
         "mohler:{d}/m", "questions.tsv", ["not found"]),
    Case("jsonl invalid line", {"x.jsonl": '{"text": "a", "score": 1}\n{"text": "b", "score": 2\n'},
         "jsonl:{d}/x.jsonl", "x.jsonl", ["line 2", "JSON ends unexpectedly", "one complete JSON object"], line=2),
    Case("jsonl row is not an object", {"x.jsonl": '{"text": "a"}\n["b"]\n'},
         "jsonl:{d}/x.jsonl", "x.jsonl", ["line 2", "expected an object", "list"], line=2),
    Case("jsonl later row lacks a mapped column", {"x.jsonl": '{"answer": "a", "g": 1}\n{"g": 2}\n'},
         "jsonl:{d}/x.jsonl?text=answer&score=g&score_min=0&score_max=3", "x.jsonl",
         ["line 2", "missing column 'answer'", "found ['g']"], line=2, key="answer"),
    Case("jsonl non-numeric score", {"x.jsonl": '{"text": "a", "score": 1}\n{"text": "b", "score": "high"}\n'},
         "jsonl:{d}/x.jsonl?score_min=0&score_max=3", "x.jsonl", ["line 2", "score is 'high', not a number"],
         line=2, key="score"),
    Case("csv mapped column missing (renamed)", {"x.csv": "id,Answer,grade\n1,hello,2\n"},
         "csv:{d}/x.csv?text=answer&score=grade&score_min=0&score_max=3", "x.csv",
         ["line 1 (header)", "missing column(s) 'answer'", "text=answer", "did you mean 'Answer'"], key="answer"),
    Case("csv required column absent", {"x.csv": "id,body\n1,hello\n"},
         "csv:{d}/x.csv", "x.csv", ["line 1 (header)", "no column for field 'text'", "?text=COLUMN"], key="text"),
    Case("csv unclosed quote", {"x.csv": 'id,text,score\n1,fine,1\n2,"never closed,2\n3,ok,1\n'},
         "csv:{d}/x.csv?score_min=0&score_max=3", "x.csv", ["line 3", "CSV syntax error", "close the quote"],
         line=3),
    Case("csv row with extra fields", {"x.csv": "id,text,score\n1,fine,1\n2,a, b,2\n"},
         "csv:{d}/x.csv", "x.csv", ["line 3", "expected 3 fields", "found 4"], line=3),
    Case("csv score outside the given range", {"x.csv": "id,text,score\n1,fine,1\n2,bad,9\n"},
         "csv:{d}/x.csv?score_min=0&score_max=3", "x.csv", ["line 3", "score 9", "score range 0-3"], line=3),
    Case("csv empty text", {"x.csv": "id,text,score\n1,fine,1\n2,  ,2\n"},
         "csv:{d}/x.csv?score_min=0&score_max=3", "x.csv", ["line 3", "empty text in column 'text'"], line=3),
    Case("csv header only", {"x.csv": "id,text,score\n"}, "csv:{d}/x.csv", "x.csv", ["no data rows"]),
    Case("csv undecodable bytes (cp1252 quote)", {"x.csv": b"id,text\n1,ok\n2,it\x92s bad\n"},
         "csv:{d}/x.csv", "x.csv", ["line 3", "column 5", "b'\\x92'", "utf-8", "encoding=latin-1"], line=3),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_malformed_file_error_names_file_and_location(case: Case, tmp_path: Path) -> None:
    for name, content in case.files.items():
        f = tmp_path / name
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    with pytest.raises(DataError) as info:
        load(case.spec.format(d=tmp_path), **case.kwargs)
    msg = str(info.value)
    assert case.file in msg, msg
    assert str(tmp_path) in msg, msg
    for part in case.expect:
        assert part in msg, f"{part!r} not in: {msg}"
    assert "Fix:" in msg or "not found" in msg or "empty" in msg, msg
    if case.line is not None:
        assert info.value.line == case.line, msg
    if case.key is not None:
        assert info.value.key == case.key, msg


def test_there_are_at_least_15_distinct_malformed_files() -> None:
    assert len({c.name for c in CASES}) == len(CASES) >= 15


def test_encoding_option_fixes_the_undecodable_file(tmp_path: Path) -> None:
    """The fix the error suggests works: the same latin-1 file loads with ?encoding=latin-1."""
    f = tmp_path / "a.tsv"
    f.write_bytes(aes(aes_row(1, 1, "Caf\u00e9 au lait is an essay.")).encode("latin-1"))
    with pytest.raises(DataError, match="encoding=latin-1"):
        load(f"asap-aes:{f}")
    (rec,) = load(f"asap-aes:{f}?encoding=latin-1").records()
    assert rec.text == "Caf\u00e9 au lait is an essay."


def test_check_spans_false_accepts_misaligned_answer(tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps(squad_bad_span))
    (rec,) = load(f"squad:{f}?check_spans=false").records()
    assert rec.answers == ("Bob",) and rec.answer_starts == (4,)


def test_errors_carry_path_attribute(tmp_path: Path) -> None:
    f = tmp_path / "t.tsv"
    f.write_text("1\tfactoid\tWho?\t[a-\n")
    with pytest.raises(DataError) as info:
        load(f"trec:{f}")
    assert info.value.path == str(f) and info.value.line == 1 and info.value.key == "answer"
