"""``mohler:DIR``: the UNT Computer Science short-answer dataset v2.0 (Mohler, Bunescu & Mihalcea, ACL
2011) as task ``content``, from a directory holding ``questions.tsv`` (question_id, question,
reference_answer) and ``answers.tsv`` (question_id, answer_index, ignored_in_published_work, score_avg,
score_grader1_other, score_grader2_me, student_answer): tab-separated with a header and standard CSV
quoting (a quoted answer may contain tabs).

Scale: two graders scored each answer 0-5 (assignments 1-10) or 0-10 (exams, assignments 11-12, which
the release README says were normalised to 0-5 before averaging); ``score_avg`` is the 0-5 gold.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from callbluff.datasets._io import (
    IdChecker,
    Options,
    build_dataset,
    check_columns,
    fail,
    fmt_num,
    iter_csv,
    parse_number,
    resolve_dir,
    resolve_file,
)
from callbluff.datasets.base import Dataset, register_loader
from callbluff.records import Prompt, ScoredResponse

QUESTION_COLUMNS = ("question_id", "question", "reference_answer")
ANSWER_COLUMNS = ("question_id", "answer_index", "ignored_in_published_work", "score_avg",
                  "score_grader1_other", "score_grader2_me", "student_answer")
EXAMS = ("11", "12")
RUBRIC = ("Grade the student answer for correctness against the reference answer, on an integer scale from 0 "
          "(completely wrong) to 5 (perfect).")
"""The rubric every Mohler prompt gets: the release has no per-question rubric; its README (v2.0, lines 47-50)
says that "both annotators were asked to grade for correctness on an integer scale from 0 to 5", with the
instructor's reference answer beside each question. This sentence states that instruction for a grader that
reads one; the end points' glosses ("completely wrong", "perfect") are ours. ``rubric=none`` drops it."""


def _rows(p: Path, encoding: str, expected: tuple[str, ...]) -> Iterator[tuple[int, str, dict[str, str]]]:
    rows = iter_csv(p, encoding, delimiter="\t")
    hn, header = next(rows)
    check_columns(p, f"line {hn} (header)", header, expected)
    for n, row in rows:
        if len(row) != len(header):
            raise fail(p, f"line {n}", f"expected {len(header)} tab-separated fields, found {len(row)}",
                       "quote fields that contain tabs or line breaks", line=n)
        yield n, f"line {n}", dict(zip(header, row))


@register_loader("mohler")
def load_mohler(path: str, **options: Any) -> Dataset:
    """One :class:`Prompt` per question (``text`` = question, ``source`` = the instructor's reference
    answer, range 0-5) and one :class:`ScoredResponse` per student answer with ``id`` ``"x.y.z"``
    (question x.y, answer z as in the release) and ``scores`` = (score_avg, grader 1, grader 2), the
    exam graders' 0-10 scores halved to the 0-5 scale (raw values in ``meta["raw_grader_scores"]``).

    Each prompt also carries ``reference`` (the reference answer, as ``source``) and ``rubric`` (:data:`RUBRIC`,
    the annotators' instruction of the release README: the data has no per-question rubric), what a chat grader
    is shown as ``${reference}`` and ``${rubric}``.

    Options: ``include_ignored`` (default false: only the 2,273 answers / 81 questions of the published
    benchmark; true: all 2,442 answers), ``rubric`` (``none``: prompts without a rubric; any other text
    replaces :data:`RUBRIC`), ``encoding``, ``lazy``. ``PATH`` may also be ``answers.tsv``.
    """
    opt = Options("mohler", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    include_ignored = opt.flag("include_ignored")
    lazy = opt.flag("lazy")
    rubric_opt = opt.text("rubric")
    rubric = RUBRIC if rubric_opt is None else (None if rubric_opt.strip().lower() in ("", "none") else rubric_opt)
    opt.finish()
    d = Path(path).expanduser()
    d = d.parent if d.is_file() else resolve_dir(path, "Mohler data directory (answers.tsv + questions.tsv)")
    qp = resolve_file(d / "questions.tsv", "Mohler questions.tsv")
    ap = resolve_file(d / "answers.tsv", "Mohler answers.tsv")

    questions: dict[str, tuple[int, str, str]] = {}
    for n, where, row in _rows(qp, encoding, QUESTION_COLUMNS):
        qid = row["question_id"].strip()
        if qid in questions:
            raise fail(qp, where, f"duplicate question_id {qid!r} (first at line {questions[qid][0]})",
                       "remove the duplicate", line=n, key="question_id")
        if not row["question"].strip():
            raise fail(qp, where, f"empty text in column 'question' (question_id {qid})", "fill in the question",
                       line=n, key="question")
        questions[qid] = (n, row["question"].strip(), row["reference_answer"].strip())

    used: dict[str, bool] = {}  # question id -> ignored flag, in file order

    def records() -> Iterator[ScoredResponse]:
        ids = IdChecker(ap, "question_id.answer_index")
        for n, where, row in _rows(ap, encoding, ANSWER_COLUMNS):
            qid = row["question_id"].strip()
            if qid not in questions:
                raise fail(ap, where, f"unknown prompt id: question_id {qid!r} is not in {qp}",
                           "add the question to questions.tsv or drop the answer", line=n, key="question_id")
            ignored = row["ignored_in_published_work"].strip() not in ("", "0")
            rid = f"{qid}.{row['answer_index'].strip()}"
            ids(rid, where, n)
            if ignored and not include_ignored:
                continue
            used.setdefault(qid, ignored)
            text = row["student_answer"]
            if not text.strip():
                raise fail(ap, where, f"empty text in column 'student_answer' (answer {rid})", "drop the row",
                           line=n, key="student_answer")
            gold = parse_number(ap, where, "score_avg", row["score_avg"], line=n)
            if not 0 <= gold <= 5:
                raise fail(ap, where, f"score_avg {fmt_num(gold)} is outside prompt {qid}'s score range 0-5",
                           "fix the score", line=n, key="score_avg")
            exam = qid.split(".")[0] in EXAMS
            raw = [parse_number(ap, where, c, row[c], line=n)
                   for c in ("score_grader1_other", "score_grader2_me") if row[c].strip()]
            graders = [x / 2 if exam else x for x in raw]
            for c, x in zip(("score_grader1_other", "score_grader2_me"), raw):
                if not 0 <= x <= (10 if exam else 5):
                    raise fail(ap, where, f"{c} {fmt_num(x)} is outside the grader scale 0-{10 if exam else 5}",
                               "fix the score", line=n, key=c)
            yield ScoredResponse(id=rid, prompt_id=qid, text=text, scores=(gold, *graders),
                                 meta={"raw_grader_scores": tuple(raw)} if exam else {})

    ds = build_dataset(f"mohler:{path}", "content", {}, records, lazy=lazy,
                       meta={"path": str(d), "format": "mohler", "include_ignored": include_ignored})
    for qid, ignored in used.items():
        _, q, ref = questions[qid]
        ds.prompts[qid] = Prompt(id=qid, task="content", text=q, source=ref, score_min=0, score_max=5,
                                 reference=ref or None, rubric=rubric,
                                 meta={"dataset": "Mohler UNT v2.0", "reference_answer": ref,
                                       "ignored_in_published_work": ignored})
    return ds
