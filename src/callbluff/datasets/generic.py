"""Generic loaders with a column mapping: ``jsonl:PATH``, ``json:PATH``, ``csv:PATH`` (also TSV), and
:func:`from_hf` for a Hugging Face ``datasets.Dataset`` (or any sequence of dict rows, or a DataFrame).

The mapping says which column feeds which record field. Options (spec query or keywords):

- ``task`` = ``essay`` | ``content`` (default) | ``reading`` | ``questions``, or a third-party task whose
  descriptor registered its :class:`RecordColumns` (:mod:`callbluff.tasks`);
- field columns, each defaulting to a column of the same name when it exists:
  ``id``, ``text``, ``score``, ``prompt`` (default column ``prompt_id``), ``prompt_text``, ``prompt_source``,
  ``reference`` (a model answer) and ``rubric`` (the scoring guide's text; both go to the prompt, what a chat
  grader is shown as ``${reference}`` / ``${rubric}``: every non-empty value of one prompt must be the same)
  (essay / content); ``question``, ``context``, ``answers``, ``answer_starts``, ``title`` (reading);
  ``question``, ``answers`` (questions). A dotted name (``answers.text``) reaches into nested objects;
- ``score`` may list several columns (``score=gold,rater2``): the first is the gold score, the others
  further raters (empty values skipped);
- ``score_min`` / ``score_max``: the scale, checked on every score. Without them the range is inferred
  per prompt from the data and ``meta["warnings"]`` says so (Kumar et al.'s % statistics and Ding et al.'s
  ARR depend on the true scale, so give it when you know it);
- ``answers``: a JSON list, a HF SQuAD-style ``{"text": [...], "answer_start": [...]}`` object, or a string
  split on ``answers_sep`` (default ``|``); ``answer_type`` = ``string`` (default) | ``regex`` (questions;
  a regex answer is never split);
- ``meta=COL1,COL2`` copies those columns into ``record.meta``;
- ``rubric_file=PATH`` (essay / content): a UTF-8 text file whose whole text is the rubric of every prompt that
  has no ``rubric`` value of its own (one scoring guide for a data set);
- csv only: ``delimiter`` (default ``,``; tab for ``.tsv`` / ``.tab``; ``delimiter=tab`` works),
  ``quoting=none`` for files written without CSV quoting;
- ``encoding`` (default utf-8), ``lazy`` (re-read the file on each iteration instead of keeping records;
  default: true for files of 64 MB or more, so that memory does not grow with the data, false otherwise).

Rows without an id column get ids ``line-N`` (the file line, JSONL/CSV) or ``row-N`` (0-based index, JSON
array and :func:`from_hf`); records with no prompt column answer the prompt ``"default"``.
"""

from __future__ import annotations

import csv
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from callbluff.datasets._io import (
    IdChecker,
    Options,
    build_dataset,
    check_surrogates,
    fail,
    fmt_num,
    iter_csv,
    iter_lines,
    lazy_default,
    load_json,
    parse_number,
    rename_hints,
    resolve_file,
)
from callbluff.datasets.base import DataError, Dataset, register_loader
from callbluff.records import OpenQuestion, Prompt, QAExample, Record, ScoredResponse

DEFAULT_COLUMN = {"prompt": "prompt_id"}
DEFAULT_PROMPT = "default"
_MISSING = object()

#: A row as the mapper sees it: (where, line or None, default id, row mapping).
Row = tuple[str, "int | None", str, Mapping[str, Any]]


@dataclass(frozen=True)
class RecordColumns:
    """How the generic loaders turn a row into one task's record: the record ``fields`` a column can feed (in
    mapping order), the ``required`` ones, and ``build(mapper, row, id, where, line, meta) -> Record``.
    ``prompts``: the records answer prompts with a score scale, which the loader collects (scoring tasks).

    A task descriptor (:mod:`callbluff.tasks`) names its mapping; registering the task registers the mapping
    under the task's name (:func:`register_columns`), so ``jsonl:x.jsonl?task=NAME`` works for any task."""

    fields: tuple[str, ...]
    required: tuple[str, ...]
    build: Callable[[ColumnMapper, Mapping[str, Any], str, str, int | None, dict[str, Any]], Record]
    prompts: bool = False


_COLUMNS: dict[str, RecordColumns] = {}


def register_columns(task: str, columns: RecordColumns) -> None:
    """Make ``task=TASK`` map rows with ``columns`` (done by :func:`callbluff.tasks.register_task`)."""
    _COLUMNS[task] = columns


def unregister_columns(task: str) -> None:
    _COLUMNS.pop(task, None)


def _missing(v: Any) -> bool:
    return v is _MISSING or v is None or (isinstance(v, str) and not v.strip()) or (
        isinstance(v, float) and math.isnan(v))


def _lookup(row: Mapping[str, Any], col: str) -> Any:
    if col in row:
        return row[col]
    if "." in col:
        cur: Any = row
        for part in col.split("."):
            if isinstance(cur, Mapping) and part in cur:
                cur = cur[part]
            else:
                return _MISSING
        return cur
    return _MISSING


def _has(columns: Iterable[str], first: Mapping[str, Any] | None, col: str) -> bool:
    cols = set(columns)
    return col in cols or ("." in col and col.split(".")[0] in cols
                           and (first is None or _lookup(first, col) is not _MISSING))


def _as_id(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return str(v).strip()


@dataclass
class _PromptInfo:
    lo: float = math.inf
    hi: float = -math.inf
    text: str = ""
    source: str | None = None
    reference: str | None = None
    rubric: str | None = None
    line: dict[str, str] | None = None  # where each of reference / rubric was first given


class ColumnMapper:
    """Turns mapping rows into records of one task, collecting the prompts they answer."""

    def __init__(self, opt: Options, source: str) -> None:
        self.source = source
        self.task = opt.choice("task", tuple(_COLUMNS), "content")
        self.columns = _COLUMNS[self.task]
        fields = self.columns.fields
        self.explicit: dict[str, str] = {}
        for f in fields:
            if f == "score":
                continue
            v = opt.text(f)
            if v is not None:
                self.explicit[f] = v.strip()
        for task, other in _COLUMNS.items():  # a field of another task: surely a mistake, say so
            for f in other.fields:
                if f not in fields and opt.has(f):
                    raise DataError(f"{opt.loader}:{opt.path}: option {f!r} is for task={task}, but task is "
                                    f"{self.task}. Fix: add task={task} or drop {f}=", path=opt.path, key=f)
        self.score_cols_explicit = opt.str_list("score") if "score" in fields else []
        self.score_min = opt.number("score_min")
        self.score_max = opt.number("score_max")
        if (self.score_min is None) != (self.score_max is None):
            raise DataError(f"{opt.loader}:{opt.path}: give both score_min and score_max, or neither. "
                            "Fix: e.g. score_min=0&score_max=3", path=opt.path, key="score_min")
        if self.score_min is not None and self.score_max is not None and self.score_min > self.score_max:
            raise DataError(f"{opt.loader}:{opt.path}: score_min {self.score_min} > score_max {self.score_max}. "
                            "Fix: swap them", path=opt.path, key="score_min")
        self.answer_type = opt.choice("answer_type", ("string", "regex"), "string")
        self.answers_sep = opt.text("answers_sep", "|") or "|"
        self.meta_cols = opt.str_list("meta")
        self.rubric_default: str | None = None
        rubric_file = opt.text("rubric_file") if self.columns.prompts else None
        if rubric_file is not None:
            rp = resolve_file(rubric_file, "rubric_file (a text file holding the rubric)")
            try:
                self.rubric_default = rp.read_text(encoding="utf-8").strip() or None
            except (OSError, UnicodeDecodeError) as e:
                raise DataError(f"{opt.loader}:{opt.path}: rubric_file {rp}: cannot read it as UTF-8 text ({e}). "
                                "Fix: point rubric_file at a UTF-8 text file", path=str(rp), key="rubric_file") from None
            if self.rubric_default is None:
                raise DataError(f"{opt.loader}:{opt.path}: rubric_file {rp} is empty. Fix: write the rubric in it "
                                "or drop rubric_file", path=str(rp), key="rubric_file")
        self.cols: dict[str, str] | None = None
        self.unmapped: list[str] = []  # default column names of optional fields the first row lacked
        self.score_cols: list[str] = []
        self.prompt_info: dict[str, _PromptInfo] = {}

    # -- columns

    def resolve(self, columns: list[str], first: Mapping[str, Any] | None, where: str) -> None:
        """Decide the column of each field from the available ``columns`` (header or first row keys)."""
        cols: dict[str, str] = {}
        mapping = [(f, c) for f, c in self.explicit.items()] + [("score", c) for c in self.score_cols_explicit] + [
            ("meta", c) for c in self.meta_cols]
        missing = [(f, c) for f, c in mapping if not _has(columns, first, c)]
        if missing:
            f, c = missing[0]
            names = [m[1] for m in missing]
            raise fail(self.source, where, f"missing column(s) {', '.join(map(repr, names))} (mapped by "
                       f"{', '.join(f'{f}={c}' for f, c in missing)}): found {list(columns)}",
                       rename_hints(names, columns, mapped=True) or "fix the column mapping options", key=c)
        for f in self.columns.fields:
            if f == "score":
                continue
            if f in self.explicit:
                cols[f] = self.explicit[f]
            elif _has(columns, first, DEFAULT_COLUMN.get(f, f)):
                cols[f] = DEFAULT_COLUMN.get(f, f)
            elif f in self.columns.required:
                raise fail(self.source, where, f"no column for field {f!r} (task {self.task}): expected a "
                           f"column named {f!r}, found {list(columns)}",
                           (rename_hints([f], columns) + "; or " if rename_hints([f], columns) else "")
                           + f"map the column that holds it with ?{f}=COLUMN (from Python: columns={{'{f}': ...}})",
                           key=f)
        if "score" in self.columns.fields:
            self.score_cols = self.score_cols_explicit or (["score"] if _has(columns, first, "score") else [])
            if not self.score_cols:
                self.unmapped.append("score")
        self.unmapped += [DEFAULT_COLUMN.get(f, f) for f in self.columns.fields if f != "score" and f not in cols]
        self.cols = cols

    # -- values

    def _get(self, row: Mapping[str, Any], col: str, where: str, line: int | None) -> Any:
        v = row.get(col, _MISSING)
        if v is _MISSING:
            v = _lookup(row, col)
        if v is _MISSING:
            raise fail(self.source, where, f"missing column {col!r} in this row (found {sorted(map(str, row))})",
                       "every row needs the mapped columns", line=line, key=col)
        return v

    def _text(self, row: Mapping[str, Any], field: str, where: str, line: int | None, required: bool) -> str:
        assert self.cols is not None
        col = self.cols.get(field)
        if col is None:
            return ""
        v = row.get(col)
        if type(v) is str and v.strip():  # the common case, on every row of a large file: no further checks
            return v
        v = self._get(row, col, where, line)
        if _missing(v):
            if required:
                raise fail(self.source, where, f"empty text in column {col!r}" + (f" ({field})" if col != field else ""),
                           "fill in the text or drop the row", line=line, key=col)
            return ""
        if not isinstance(v, str):
            if required and not isinstance(v, (int, float)):
                raise fail(self.source, where, f"column {col!r} ({field}) holds a {type(v).__name__}, expected "
                           "text", f"map {field} to a text column", line=line, key=col)
            v = str(v)
        return v

    def text(self, row: Mapping[str, Any], field: str, where: str, line: int | None, required: bool = True) -> str:
        """The text of record field ``field`` in ``row`` ("" for an unmapped or empty optional field; a
        :class:`~callbluff.datasets.base.DataError` naming the row for an empty required one): for the ``build``
        of a :class:`RecordColumns`."""
        return self._text(row, field, where, line, required)

    def _answers(self, row: Mapping[str, Any], where: str, line: int | None) -> tuple[tuple[str, ...], tuple[int, ...]]:
        assert self.cols is not None
        col = self.cols.get("answers")
        if col is None:
            return (), ()
        v = self._get(row, col, where, line)
        starts: tuple[int, ...] = ()
        if _missing(v):
            return (), ()
        if isinstance(v, Mapping) and "text" in v:  # HF squad: {"text": [...], "answer_start": [...]}
            starts = tuple(int(s) for s in v.get("answer_start", ()) or ())
            v = v["text"]
        if isinstance(v, str):
            s = v.strip()
            if s.startswith("[") and s.endswith("]"):
                try:
                    v = json.loads(s)
                except json.JSONDecodeError:
                    v = [s]
                check_surrogates(self.source, s, v, line=line, where=where, key=col)
            elif self.answer_type == "regex":
                v = [s]
            else:
                v = [a.strip() for a in s.split(self.answers_sep)]
        if hasattr(v, "tolist"):
            v = v.tolist()
        if not isinstance(v, (list, tuple)) or not all(isinstance(a, (str, int, float)) for a in v):
            raise fail(self.source, where, f"column {col!r} (answers) holds {str(v)[:60]!r}, expected a list of "
                       f"strings or a {self.answers_sep!r}-separated string", "fix the value", line=line, key=col)
        answers = tuple(str(a) for a in v if str(a).strip())
        if self.answer_type == "regex":
            for a in answers:
                try:
                    re.compile(a, re.IGNORECASE)
                except re.error as exc:
                    raise fail(self.source, where, f"answer regex {a!r} in column {col!r} does not compile: {exc}",
                               "fix the pattern or use answer_type=string", line=line, key=col) from None
        return answers, starts

    def _starts(self, row: Mapping[str, Any], where: str, line: int | None, n: int) -> tuple[int, ...]:
        assert self.cols is not None
        col = self.cols.get("answer_starts")
        if col is None:
            return ()
        v = self._get(row, col, where, line)
        if _missing(v):
            return ()
        if isinstance(v, str):
            v = [x for x in re.split(r"[|,\s]+", v.strip().strip("[]")) if x]
        if isinstance(v, (int, float)):
            v = [v]
        try:
            starts = tuple(int(x) for x in v)
        except (TypeError, ValueError):
            raise fail(self.source, where, f"column {col!r} (answer_starts) holds {str(v)[:60]!r}, expected "
                       "integers", "fix the value", line=line, key=col) from None
        if len(starts) != n:
            raise fail(self.source, where, f"{len(starts)} answer_starts for {n} answers",
                       "give one start offset per answer", line=line, key=col)
        return starts

    def record(self, row: Mapping[str, Any], where: str, line: int | None, default_id: str,
               ids: IdChecker) -> Record:
        assert self.cols is not None
        for col in self.unmapped:  # rows with varying keys (JSON): the first row decides, never silently
            if col in row and not _missing(row[col]):
                raise fail(self.source, where, f"this row has a column {col!r} that the first row lacks; the "
                           "columns used are decided by the first row",
                           f"give every row {col!r}, or map it explicitly with ?{col}=...", line=line, key=col)
        if "id" in self.cols:
            v = self._get(row, self.cols["id"], where, line)
            rid = "" if _missing(v) else _as_id(v)
        else:
            rid = default_id
        ids(rid, where, line)
        meta = {c: None if _missing(v := _lookup(row, c)) else v for c in self.meta_cols}
        return self.columns.build(self, row, rid, where, line, meta)

    def reading(self, row: Mapping[str, Any], rid: str, where: str, line: int | None,
                meta: dict[str, Any]) -> QAExample:
        """A reading-comprehension record (:data:`READING_COLUMNS`)."""
        question = self._text(row, "question", where, line, True)
        answers, starts = self._answers(row, where, line)
        context = self._text(row, "context", where, line, True)
        starts = self._starts(row, where, line, len(answers)) or starts
        return QAExample(id=rid, question=question, context=context, answers=answers, answer_starts=starts,
                         title=self._text(row, "title", where, line, False), meta=meta)

    def open_question(self, row: Mapping[str, Any], rid: str, where: str, line: int | None,
                      meta: dict[str, Any]) -> OpenQuestion:
        """An open-domain question (:data:`QUESTION_COLUMNS`)."""
        question = self._text(row, "question", where, line, True)
        answers, _ = self._answers(row, where, line)
        return OpenQuestion(id=rid, question=question, answers=answers,
                            answer_type="regex" if self.answer_type == "regex" else "string", meta=meta)

    def scored(self, row: Mapping[str, Any], rid: str, where: str, line: int | None,
               meta: dict[str, Any]) -> ScoredResponse:
        """A scored response (:data:`SCORED_COLUMNS`); its prompt's observed score range is collected."""
        assert self.cols is not None
        text = self._text(row, "text", where, line, True)
        if "prompt" in self.cols:
            v = self._get(row, self.cols["prompt"], where, line)
            if _missing(v):
                raise fail(self.source, where, f"empty prompt id in column {self.cols['prompt']!r}",
                           "fill it in", line=line, key=self.cols["prompt"])
            pid = _as_id(v)
        else:
            pid = DEFAULT_PROMPT
        info = self.prompt_info.get(pid)
        if info is None:
            info = self.prompt_info[pid] = _PromptInfo(
                text=self._text(row, "prompt_text", where, line, False).strip(),
                source=self._text(row, "prompt_source", where, line, False).strip() or None)
        for fname in ("reference", "rubric"):
            if fname in self.cols:
                self._prompt_text(info, fname, row, pid, where, line)
        scores: list[float] = []
        for k, col in enumerate(self.score_cols):
            v = self._get(row, col, where, line)
            if _missing(v):
                if k == 0:
                    raise fail(self.source, where, f"missing gold score in column {col!r}",
                               "fill in the score or drop the row", line=line, key=col)
                continue
            x = parse_number(self.source, where, col, v, line=line)
            if self.score_min is not None and self.score_max is not None and not (
                    self.score_min <= x <= self.score_max):
                raise fail(self.source, where, f"{col} {fmt_num(x)} is outside prompt {pid}'s score range "
                           f"{fmt_num(self.score_min)}-{fmt_num(self.score_max)}",
                           "fix the score, or the score_min/score_max options", line=line, key=col)
            info.lo, info.hi = min(info.lo, x), max(info.hi, x)
            scores.append(x)
        return ScoredResponse(id=rid, prompt_id=pid, text=text, scores=tuple(scores), meta=meta)

    def _prompt_text(self, info: _PromptInfo, fname: str, row: Mapping[str, Any], pid: str, where: str,
                     line: int | None) -> None:
        """The prompt's ``reference`` / ``rubric`` from this row: the first non-empty value is kept; a different
        non-empty value on a later row of the same prompt is an error naming both places."""
        v = self._text(row, fname, where, line, False).strip()
        if not v:
            return
        old = getattr(info, fname)
        if old is None:
            setattr(info, fname, v)
            info.line = {**(info.line or {}), fname: where}
        elif old != v:
            col = self.cols[fname] if self.cols else fname
            raise fail(self.source, where, f"prompt {pid} has a different {fname} in column {col!r} here than at "
                       f"{(info.line or {}).get(fname, 'an earlier row')}",
                       f"give every row of prompt {pid} the same {fname} (or leave it empty after the first)",
                       line=line, key=col)

    # -- prompts

    def prompts(self, meta: dict[str, Any]) -> dict[str, Prompt]:
        if not self.columns.prompts:
            return {}
        out: dict[str, Prompt] = {}
        inferred = []
        for pid, info in self.prompt_info.items():
            guessed = False
            if self.score_min is not None and self.score_max is not None:
                lo, hi = self.score_min, self.score_max
            elif info.lo <= info.hi:
                lo, hi, guessed = info.lo, info.hi, True
                inferred.append(f"{pid}: {fmt_num(lo)}-{fmt_num(hi)}")
            else:
                lo, hi = 0.0, 1.0
            out[pid] = Prompt(id=pid, task=self.task, text=info.text, source=info.source,  # type: ignore[arg-type]
                              score_min=lo, score_max=hi, reference=info.reference,
                              rubric=info.rubric if info.rubric is not None else self.rubric_default,
                              meta={"score_range_inferred": guessed})
        if inferred:
            meta.setdefault("warnings", []).append(
                "score range not given; inferred per prompt from the observed scores ("
                + ", ".join(inferred[:10]) + (", ..." if len(inferred) > 10 else "")
                + "), which may be narrower than the true scale: pass score_min and score_max")
        elif not self.score_cols:
            meta.setdefault("warnings", []).append(
                "no score column: records have no gold scores (map one with score=COLUMN)")
        return out


SCORED_COLUMNS = RecordColumns(("id", "text", "score", "prompt", "prompt_text", "prompt_source", "reference", "rubric"),
                               ("text",),
                               ColumnMapper.scored, prompts=True)
"""Scored responses (essay and short-answer scoring)."""
READING_COLUMNS = RecordColumns(("id", "question", "context", "answers", "answer_starts", "title"),
                                ("question", "context"), ColumnMapper.reading)
"""Extractive reading comprehension (SQuAD-style)."""
QUESTION_COLUMNS = RecordColumns(("id", "question", "answers"), ("question",), ColumnMapper.open_question)
"""Open-domain questions."""
for _task, _columns in (("essay", SCORED_COLUMNS), ("content", SCORED_COLUMNS), ("reading", READING_COLUMNS),
                        ("questions", QUESTION_COLUMNS)):
    # the built-in tasks' mappings, so that the loaders work without the task registry (callbluff.tasks sits
    # above datasets); their descriptors name the same objects
    register_columns(_task, _columns)


def _dataset(spec: str, source: str, opt: Options, mapper: ColumnMapper, rows: Callable[[], Iterator[Row]],
             columns: Callable[[Mapping[str, Any] | None], list[str]], lazy: bool, meta: dict[str, Any]) -> Dataset:
    opt.finish()

    def records() -> Iterator[Record]:
        ids: IdChecker | None = None
        for where, line, default_id, row in rows():
            if ids is None:
                if mapper.cols is None:
                    mapper.resolve(columns(row), row, where)
                assert mapper.cols is not None
                ids = IdChecker(source, f"column {mapper.cols['id']!r}" if "id" in mapper.cols else "id")
            yield mapper.record(row, where, line, default_id, ids)
        if ids is None:
            raise fail(source, None, "no data rows", "the file/dataset is empty apart from any header")

    ds = build_dataset(spec, mapper.task, {}, records, lazy=lazy, meta=meta)  # type: ignore[arg-type]
    ds.prompts.update(mapper.prompts(meta))
    meta["columns"] = dict(mapper.cols or {}) | ({"score": ",".join(mapper.score_cols)} if mapper.score_cols else {})
    return ds


def _as_mapping(source: str, where: str, line: int | None, obj: Any) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise fail(source, where, f"expected an object (a row with named columns), found {type(obj).__name__} "
                   f"{str(obj)[:40]!r}", "each row must be a JSON object / dict", line=line)
    return obj


@register_loader("jsonl")
def load_jsonl(path: str, **options: Any) -> Dataset:
    """One JSON object per line (blank lines skipped); see the module docstring for the mapping."""
    opt = Options("jsonl", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    mapper = ColumnMapper(opt, path)
    p = resolve_file(path, "JSON Lines file")
    lazy = opt.flag("lazy", default=lazy_default(p))

    def rows() -> Iterator[Row]:
        for n, line in iter_lines(p, encoding):
            if not line.strip():
                continue
            where = f"line {n}"
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                truncated = exc.pos >= len(line.rstrip())
                raise fail(path, f"line {n}, column {exc.colno}",
                           f"{'JSON ends unexpectedly (line truncated?)' if truncated else 'invalid JSON'}: {exc.msg}",
                           "each line must be one complete JSON object", line=n) from None
            check_surrogates(path, line, obj, line=n)
            yield where, n, f"line-{n}", _as_mapping(path, where, n, obj)

    return _dataset(f"jsonl:{path}", path, opt, mapper, rows, lambda first: list(first or {}), lazy,
                    {"path": str(p), "format": "jsonl"})


@register_loader("json")
def load_json_rows(path: str, **options: Any) -> Dataset:
    """A JSON array of row objects (or ``{"data": [...]}``); ids default to ``row-N`` (0-based)."""
    opt = Options("json", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    mapper = ColumnMapper(opt, path)
    p = resolve_file(path, "JSON file")
    doc = load_json(p, encoding)
    if isinstance(doc, Mapping) and isinstance(doc.get("data"), list):
        doc = doc["data"]
    if not isinstance(doc, list):
        raise fail(path, None, f"expected a JSON array of row objects (or {{\"data\": [...]}}), found a JSON "
                   f"{type(doc).__name__}", "use jsonl: for one object per line, squad: for SQuAD files")

    def rows() -> Iterator[Row]:
        for i, obj in enumerate(doc):
            yield f"row {i} (key [{i}])", None, f"row-{i}", _as_mapping(path, f"row {i} (key [{i}])", None, obj)

    return _dataset(f"json:{path}", path, opt, mapper, rows, lambda first: list(first or {}), False,
                    {"path": str(p), "format": "json"})


@register_loader("csv")
def load_csv(path: str, **options: Any) -> Dataset:
    """A CSV/TSV file with a header row; see the module docstring for the mapping."""
    opt = Options("csv", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    name = path.lower().removesuffix(".gz")
    delim = opt.text("delimiter", "\t" if name.endswith((".tsv", ".tab")) else ",") or ","
    delim = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}.get(delim.lower(), delim)
    if len(delim) != 1:
        raise DataError(f"csv:{path}: option 'delimiter': {delim!r} is not one character. Fix: use delimiter=tab, "
                        "delimiter=; or similar", path=path, key="delimiter")
    quoting = csv.QUOTE_NONE if opt.choice("quoting", ("minimal", "none"), "minimal") == "none" else csv.QUOTE_MINIMAL
    mapper = ColumnMapper(opt, path)
    p = resolve_file(path, "CSV/TSV file")
    lazy = opt.flag("lazy", default=lazy_default(p))
    header: list[str] = []

    def rows() -> Iterator[Row]:
        it = iter_csv(p, encoding, delim, quoting)
        for hn, head in it:
            header[:] = [h.strip() for h in head]
            dup = sorted({h for h in header if header.count(h) > 1})
            if dup:
                raise fail(path, f"line {hn} (header)", f"duplicate column name(s) {dup}", "rename them", line=hn,
                           key=dup[0])
            break
        else:
            raise fail(path, None, "no header row", "the first line must name the columns")
        if mapper.cols is None:
            mapper.resolve(header, None, f"line {hn} (header)")
        for n, row in it:
            where = f"line {n}"
            if len(row) != len(header):
                hint = ("" if len(header) > 1 else f"; only one column was found in the header, is the delimiter "
                        f"{delim!r} right? (use ?delimiter=tab for TSV)")
                raise fail(path, where, f"expected {len(header)} fields (as in the header), found {len(row)}{hint}",
                           "quote fields that contain the delimiter or line breaks", line=n)
            yield where, n, f"line-{n}", dict(zip(header, row))

    return _dataset(f"csv:{path}", path, opt, mapper, rows, lambda first: list(header), lazy,
                    {"path": str(p), "format": "csv", "delimiter": delim})


def from_hf(dataset: Any, task: str = "content", columns: Mapping[str, str | list[str]] | None = None,
            name: str | None = None, **options: Any) -> Dataset:
    """A :class:`Dataset` from a Hugging Face ``datasets.Dataset`` - or any iterable of dict rows, or a
    pandas DataFrame - with the same column mapping as ``jsonl:``/``csv:``.

    ``columns`` maps record fields to column names, e.g. ``{"text": "essay", "score": ["rater1",
    "rater2"], "prompt": "essay_set"}`` or for HF ``squad`` ``{"id": "id", "answers": "answers"}`` (the
    ``{"text", "answer_start"}`` answer objects are understood). Other options as keywords
    (``score_min=0, score_max=3``...). The ``datasets`` package is not needed: rows are only iterated.
    Ids default to ``row-N`` (0-based index).
    """
    label = name or getattr(getattr(dataset, "info", None), "dataset_name", None) or type(dataset).__name__
    source = f"hf dataset {label!r}"
    if hasattr(dataset, "to_dict") and hasattr(dataset, "columns") and hasattr(dataset, "iloc"):  # DataFrame
        colnames = [str(c) for c in dataset.columns]
        dataset = dataset.to_dict("records")
    else:
        colnames = list(getattr(dataset, "column_names", None) or []) or []
        if isinstance(dataset, Mapping):
            splits = ", ".join(map(repr, list(dataset)[:5]))
            raise DataError(f"{source}: is a mapping of splits ({splits}), not one dataset. Fix: pass one split, "
                            f"e.g. ds[{next(iter(dataset), 'train')!r}]", path=source)
        if isinstance(colnames, Mapping):  # DatasetDict.column_names is a dict
            raise DataError(f"{source}: holds several splits. Fix: pass one split, e.g. ds['train']", path=source)
    opts: dict[str, Any] = {"task": task, **options}
    for field, col in (columns or {}).items():
        opts[field] = col
    opt = Options("hf", label, opts)
    mapper = ColumnMapper(opt, source)

    def rows() -> Iterator[Row]:
        try:
            it = iter(dataset)
        except TypeError:
            raise DataError(f"{source}: is not iterable ({type(dataset).__name__}). Fix: pass a datasets.Dataset, "
                            "a list of dicts or a DataFrame", path=source) from None
        if colnames and mapper.cols is None:
            mapper.resolve(colnames, None, "column names")
        for i, obj in enumerate(it):
            yield f"row {i}", None, f"row-{i}", _as_mapping(source, f"row {i}", None, obj)

    return _dataset(f"hf:{label}", source, opt, mapper, rows, lambda first: colnames or list(first or {}), False,
                    {"path": None, "format": "hf", "source": source})


__all__ = ["ColumnMapper", "from_hf", "load_csv", "load_json_rows", "load_jsonl"]
