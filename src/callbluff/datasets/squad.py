"""``squad:PATH``: SQuAD v1.1 / v2.0 JSON (plain or gzipped) as task ``reading`` (Jia & Liang 2017 attack
SQuAD v1.1 dev; Rajpurkar et al. 2016, 2018 for the format), or with ``?task=questions`` as open questions
(question + gold answers, no context) for the Q&A-robot suite: a DrQA-style system over the SQuAD paragraphs
then plays DrQA (DPAEG Sec. 4.1.2; Chen et al. 2017 evaluate DrQA on "SQuAD (open)" this way).

Format: ``{"version", "data": [{"title", "paragraphs": [{"context", "qas": [{"id", "question",
"answers": [{"text", "answer_start"}], "is_impossible"?, "plausible_answers"?}]}]}]}``.
Structural errors name the JSON key path (``data[3].paragraphs[0].qas[2].answers``) and the question id.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from callbluff.datasets._io import Options, build_dataset, fail, load_json, resolve_file
from callbluff.datasets.base import Dataset, register_loader
from callbluff.records import OpenQuestion, QAExample

FORMAT_FIX = ("expected SQuAD JSON {\"version\": ..., \"data\": [{\"title\", \"paragraphs\": [{\"context\", "
              "\"qas\": [{\"id\", \"question\", \"answers\": [{\"text\", \"answer_start\"}]}]}]}]}; for other "
              "layouts use jsonl:/csv: with task=reading and a column mapping")


def _get(p: Any, obj: Any, key: str, kind: type | tuple[type, ...], where: str, what: str) -> Any:
    if not isinstance(obj, dict):
        raise fail(p, f"key {where}", f"expected a JSON object, found {type(obj).__name__}", FORMAT_FIX,
                   key=where)
    if key not in obj:
        raise fail(p, f"key {where}.{key}", f"missing key {key!r}{what} (found keys {sorted(obj)})", FORMAT_FIX,
                   key=f"{where}.{key}")
    v = obj[key]
    if not isinstance(v, kind) or isinstance(v, bool):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise fail(p, f"key {where}.{key}", f"expected {names}, found {type(v).__name__} {str(v)[:40]!r}{what}",
                   FORMAT_FIX, key=f"{where}.{key}")
    return v


@register_loader("squad")
def load_squad(path: str, **options: Any) -> Dataset:
    """One :class:`QAExample` per question (``id`` = the SQuAD question id, ``title`` = article title).

    SQuAD 2.0 unanswerable questions (``is_impossible``) are kept with empty ``answers`` and
    ``meta["is_impossible"] = True`` (``meta["plausible_answers"]`` holds the distractor spans), unless
    ``skip_impossible=true``. Every answer span is checked against its context
    (``context[answer_start:answer_start + len(text)] == text``); ``check_spans=false`` turns that off.

    ``task=questions``: one :class:`OpenQuestion` per answerable question instead (``answers`` = the distinct
    gold answer texts in file order, ``answer_type="string"``, ``meta["title"]``); unanswerable SQuAD 2.0
    questions are dropped (counted in the dataset's ``meta["skipped_impossible"]``).

    Options: ``task`` (``reading``, default, or ``questions``), ``skip_impossible`` (default false),
    ``check_spans`` (default true), ``encoding``.
    The file is parsed whole (JSON), so there is no lazy mode; the records share their context strings.
    """
    opt = Options("squad", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    skip_impossible = opt.flag("skip_impossible")
    check_spans = opt.flag("check_spans", True)
    task = opt.choice("task", tuple(AS_TASK), "reading")
    opt.finish()
    p = resolve_file(path, "SQuAD JSON file")
    doc = load_json(p, encoding)
    if not isinstance(doc, dict) or "data" not in doc:
        found = f"keys {sorted(doc)[:10]}" if isinstance(doc, dict) else f"a JSON {type(doc).__name__}"
        raise fail(p, "key data", f"not SQuAD JSON: no top-level 'data' list (found {found})", FORMAT_FIX,
                   key="data")
    data = _get(p, doc, "data", list, "", "")
    version = str(doc.get("version", ""))
    records: list[QAExample] = []
    seen: dict[str, tuple[int, int, int]] = {}
    n_par = n_imp = 0
    for ai, article in enumerate(data):
        aw = f"data[{ai}]"
        title = str(article.get("title", "")) if isinstance(article, dict) else ""
        for pi, par in enumerate(_get(p, article, "paragraphs", list, aw, "")):
            pw = f"{aw}.paragraphs[{pi}]"
            context = _get(p, par, "context", str, pw, "")
            n_par += 1
            for qi, qa in enumerate(_get(p, par, "qas", list, pw, "")):
                # fast path for well-formed entries; _get re-checks to word the error otherwise
                try:
                    qid, question, answers = qa["id"], qa["question"], qa["answers"]
                    ok = type(question) is str and type(answers) is list and type(qid) in (str, int)
                except (KeyError, TypeError):
                    ok = False
                if not ok:
                    qw = f"{pw}.qas[{qi}]"
                    qid = _get(p, qa, "id", (str, int), qw, "")
                    ctx = f" (question id {qid})"
                    question = _get(p, qa, "question", str, qw, ctx)
                    answers = _get(p, qa, "answers", list, qw, ctx)
                qid = str(qid)
                if qid in seen or not question.strip() or not ok:
                    qw = f"{pw}.qas[{qi}]"
                    ctx = f" (question id {qid})"
                if qid in seen:
                    a, b, c = seen[qid]
                    raise fail(p, f"key {qw}.id", f"duplicate question id {qid!r} (first at "
                               f"data[{a}].paragraphs[{b}].qas[{c}])", "ids must be unique", key=f"{qw}.id")
                seen[qid] = (ai, pi, qi)
                if not question.strip():
                    raise fail(p, f"key {qw}.question", f"empty question text{ctx}", "fill in or drop the question",
                               key=f"{qw}.question")
                impossible = bool(qa.get("is_impossible", False))
                texts: list[str] = []
                starts: list[int] = []
                for k, ans in enumerate(answers):
                    try:
                        text, start = ans["text"], ans["answer_start"]
                        ok = type(text) is str and type(start) is int
                    except (KeyError, TypeError):
                        ok = False
                    if not ok:
                        qw, ctx = f"{pw}.qas[{qi}]", f" (question id {qid})"
                        kw = f"{qw}.answers[{k}]"
                        text = _get(p, ans, "text", str, kw, ctx)
                        start = _get(p, ans, "answer_start", int, kw, ctx)
                    if check_spans and context[start:start + len(text)] != text:
                        qw, ctx = f"{pw}.qas[{qi}]", f" (question id {qid})"
                        kw = f"{qw}.answers[{k}]"
                        raise fail(p, f"key {kw}", f"answer {text[:60]!r} is not at answer_start {start} of the "
                                   f"context (found {context[start:start + len(text)][:60]!r}){ctx}",
                                   "fix answer_start, or add ?check_spans=false", key=kw)
                    texts.append(text)
                    starts.append(start)
                meta: dict[str, Any] = {}
                if impossible:
                    n_imp += 1
                    if skip_impossible:
                        continue
                    texts, starts = [], []
                    meta = {"is_impossible": True,
                            "plausible_answers": tuple(a.get("text", "") for a in qa.get("plausible_answers", ())
                                                       if isinstance(a, dict))}
                elif not texts:
                    qw, ctx = f"{pw}.qas[{qi}]", f" (question id {qid})"
                    raise fail(p, f"key {qw}.answers", f"no gold answers and not marked is_impossible{ctx}",
                               "add the answers, or set \"is_impossible\": true (SQuAD 2.0)", key=f"{qw}.answers")
                records.append(QAExample(id=qid, question=question, context=context, answers=tuple(texts),
                                         answer_starts=tuple(starts), title=title, meta=meta))
    if not records:
        raise fail(p, "key data", "no questions found", FORMAT_FIX, key="data")
    meta = {"path": str(p), "format": "squad", "version": version, "articles": len(data), "paragraphs": n_par,
            "impossible": n_imp, "skipped_impossible": n_imp if skip_impossible else 0}
    return AS_TASK[task](path, p, records, meta, n_imp)


def _as_reading(path: str, p: Path, records: list[QAExample], meta: dict[str, Any], n_imp: int) -> Dataset:
    """The questions as extractive reading comprehension (``task=reading``, the default)."""
    return build_dataset(f"squad:{path}", "reading", {}, records.__iter__, meta=meta)


def _as_questions(path: str, p: Path, records: list[QAExample], meta: dict[str, Any], n_imp: int) -> Dataset:
    """The answerable questions without their paragraphs, as open-domain questions (``task=questions``)."""
    meta["skipped_impossible"] = n_imp
    questions = tuple(OpenQuestion(id=r.id, question=r.question, answers=tuple(dict.fromkeys(r.answers)),
                                   meta={"title": r.title}) for r in records if r.answers)
    if not questions:
        raise fail(p, "key data", "no answerable questions found (task=questions needs gold answers)",
                   FORMAT_FIX, key="data")
    return build_dataset(f"squad:{path}", "questions", {}, questions.__iter__, meta=meta)


AS_TASK: dict[str, Callable[[str, Path, list[QAExample], dict[str, Any], int], Dataset]] = {
    "reading": _as_reading, "questions": _as_questions}
"""The tasks a SQuAD file can be read as (option ``task``) and how."""
