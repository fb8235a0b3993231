"""Open-domain question sets for the Q&A-bot suite (DPAEG) as task ``questions``:

- ``trec:PATH``: CuratedTREC (Baudis & Sedivy 2015, ``brmson/dataset-factoid-curated``): tab-separated,
  no header, columns id, type, question, answer regex. An answer is correct when the regex (alternatives
  joined by ``|``) matches it, case-insensitively (the upstream README; DrQA's ``regex_match``).
- ``webquestions:PATH``: WebQuestions (Berant et al. 2013, ``brmson/dataset-factoid-webquestions``): a JSON
  array of ``{"qId", "qText", "answers": [str, ...]}``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from callbluff.datasets._io import (
    IdChecker,
    Options,
    build_dataset,
    fail,
    iter_lines,
    load_json,
    resolve_file,
)
from callbluff.datasets.base import Dataset, register_loader
from callbluff.records import OpenQuestion

TREC_COLUMNS = ("id", "type", "question", "answer")


@register_loader("trec")
def load_trec(path: str, **options: Any) -> Dataset:
    """One :class:`OpenQuestion` per line: ``id`` from column 1, ``answers`` = (regex,),
    ``answer_type="regex"``, ``meta["type"]`` from column 2 (``factoid``). Each regex is compiled
    (case-insensitive) at load time so a bad pattern is reported with its line, not at scoring time.

    A first line ``id<TAB>type<TAB>question<TAB>answer`` is taken as a header and skipped.
    Options: ``encoding``, ``lazy``.
    """
    opt = Options("trec", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    lazy = opt.flag("lazy")
    opt.finish()
    p = resolve_file(path, "CuratedTREC TSV")

    def records() -> Iterator[OpenQuestion]:
        ids = IdChecker(p, "column 1 (id)")
        for n, line in iter_lines(p, encoding):
            if not line.strip():
                continue
            f = line.split("\t")
            where = f"line {n}"
            if len(f) != 4:
                raise fail(p, where, f"expected 4 tab-separated fields (id, type, question, answer regex), "
                           f"found {len(f)}", "CuratedTREC files are tab-separated without a header", line=n)
            if n == 1 and [x.strip().lower() for x in f] == list(TREC_COLUMNS):
                continue
            qid, qtype, question, pattern = (x.strip() for x in f)
            ids(qid, where, n)
            if not question:
                raise fail(p, where, f"empty text in column 3 (question) (id {qid})", "fill in or drop the row",
                           line=n, key="question")
            if not pattern:
                raise fail(p, where, f"empty answer regex in column 4 (id {qid})", "add the answer pattern",
                           line=n, key="answer")
            try:
                re.compile(pattern, re.IGNORECASE)
            except re.error as exc:
                raise fail(p, where, f"answer regex {pattern!r} does not compile: {exc} (id {qid})",
                           "fix the pattern (escape literal ( ) [ ] ? * + with a backslash)",
                           line=n, key="answer") from None
            yield OpenQuestion(id=qid, question=question, answers=(pattern,), answer_type="regex",
                               meta={"type": qtype})

    return build_dataset(f"trec:{path}", "questions", {}, records, lazy=lazy,
                         meta={"path": str(p), "format": "trec"})


@register_loader("webquestions")
def load_webquestions(path: str, **options: Any) -> Dataset:
    """One :class:`OpenQuestion` per element: ``id`` = qId, ``question`` = qText, ``answers`` = the
    answer strings (``answer_type="string"``, matched after SQuAD normalisation). Errors name the array
    index (``[12].answers``). Options: ``encoding``.
    """
    opt = Options("webquestions", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    opt.finish()
    p = resolve_file(path, "WebQuestions JSON file")
    doc = load_json(p, encoding)
    fix = 'expected a JSON array of {"qId": str, "qText": str, "answers": [str, ...]}'
    if not isinstance(doc, list):
        raise fail(p, None, f"expected a JSON array, found a JSON {type(doc).__name__}", fix)
    ids = IdChecker(p, "qId")
    out: list[OpenQuestion] = []
    for i, item in enumerate(doc):
        where = f"key [{i}]"
        if not isinstance(item, dict):
            raise fail(p, where, f"expected an object, found {type(item).__name__}", fix, key=f"[{i}]")
        for k in ("qId", "qText", "answers"):
            if k not in item:
                raise fail(p, f"key [{i}].{k}", f"missing key {k!r} (found keys {sorted(item)})", fix,
                           key=f"[{i}].{k}")
        qid, text, answers = str(item["qId"]).strip(), item["qText"], item["answers"]
        ids(qid, where)
        if not isinstance(text, str) or not text.strip():
            raise fail(p, f"key [{i}].qText", f"empty text in qText (qId {qid})", "fill in the question",
                       key=f"[{i}].qText")
        if isinstance(answers, str):
            answers = [answers]
        if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
            raise fail(p, f"key [{i}].answers", f"answers must be a list of strings, found "
                       f"{str(answers)[:60]!r} (qId {qid})", fix, key=f"[{i}].answers")
        out.append(OpenQuestion(id=qid, question=text.strip(), answers=tuple(answers), answer_type="string"))
    if not out:
        raise fail(p, None, "no questions in the array", fix)
    return build_dataset(f"webquestions:{path}", "questions", {}, out.__iter__,
                         meta={"path": str(p), "format": "webquestions"})
