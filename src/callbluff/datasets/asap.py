"""ASAP loaders: ``asap-aes:PATH`` (Hewlett essays, Kumar et al. 2020's AES data) and ``asap-sas:PATH``
(Hewlett short answers, Ding et al. 2020's content-scoring data).

Both Kaggle releases are tab-separated with a header row and must be read with CSV quoting *disabled*:
about 11k ASAP-AES essays are wrapped in literal double quotes and some contain unbalanced quotes, so a
quoting CSV reader merges rows (12,976 instead of 12,978 essays). We split each physical line on tabs and
undo the writer's quoting of the text field ourselves (:func:`~callbluff.datasets._io.strip_csv_quotes`:
outer quotes dropped, doubled ``""`` turned back into ``"``).

Score ranges are those of the original competitions (the paper-suites' % statistics divide by them):
ASAP-AES essay sets 1-8: 2-12, 1-6, 0-3, 0-3, 0-4, 0-4, 0-30, 0-60 (``domain1_score``);
ASAP-SAS sets 1, 2, 5, 6: 0-3, sets 3, 4, 7, 8, 9, 10: 0-2.

The ASAP-AES TSV holds no prompt texts and no reading passages. A *prompts file* adds them
(:func:`read_aes_prompt_texts`): the spec option ``prompt_texts=FILE``, or ``prompts.json`` found beside the
TSV. It gives ``Prompt.text`` (the task given to the students) and, for the source-dependent sets 3-6 (Kumar
et al. 2020, Table 2's "RC" prompts), ``Prompt.source`` (the reading passage), which AddRC (Sec. 3.3), the
EssayScorer's prompt-overlap statistics and an LLM grader's ``${question}`` / ``${context}`` read.
"""

from __future__ import annotations

import difflib
import re
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
    iter_lines,
    load_json,
    parse_number,
    resolve_file,
    strip_csv_quotes,
)
from callbluff.datasets.base import DataError, Dataset, register_loader
from callbluff.records import Prompt, ScoredResponse

#: ``domain1_score`` range per essay set (the competition's resolved score).
AES_RANGES: dict[int, tuple[int, int]] = {1: (2, 12), 2: (1, 6), 3: (0, 3), 4: (0, 3), 5: (0, 4), 6: (0, 4),
                                          7: (0, 30), 8: (0, 60)}
#: Range of one rater's ``raterN_domain1`` score where it differs from the resolved scale: in sets 1 and 7
#: the resolved score is the sum of two raters, in set 8 rater 1 and 2 score 0-30 and the resolved score
#: (and ``rater3_domain1``, the adjudicator) is 0-60. Stored in ``Prompt.meta``; only the gold score is
#: checked against the prompt's range.
AES_RATER_RANGES: dict[int, tuple[int, int]] = {1: (1, 6), 2: (1, 6), 3: (0, 3), 4: (0, 3), 5: (0, 4),
                                                6: (0, 4), 7: (0, 12), 8: (0, 30)}
AES_COLUMNS = ("essay_id", "essay_set", "essay", "domain1_score")
AES_PROMPTS_FILE = "prompts.json"
"""Name of the prompts file looked for beside the ASAP-AES TSV when ``prompt_texts`` is not given."""
AES_PROMPT_KEYS = ("essay_set", "prompt_text", "source_title", "source_text")
"""Keys of one entry of the prompts file (``../shared/data/asap-aes/PROMPTS-SOURCE.md`` describes the file)."""
AES_RATERS = ("rater1_domain1", "rater2_domain1", "rater3_domain1")

#: ASAP-SAS maximum score per EssaySet (minimum 0).
SAS_MAX: dict[int, int] = {1: 3, 2: 3, 3: 2, 4: 2, 5: 3, 6: 3, 7: 2, 8: 2, 9: 2, 10: 2}
SAS_COLUMNS = ("Id", "EssaySet", "EssayText")
SAS_SOLUTION_COLUMNS = ("id", "essay_set", "essay_score")


def _selected_sets(opt: Options, known: dict[int, Any], what: str) -> list[int]:
    sets = opt.int_list("prompts")
    if sets is None:
        return sorted(known)
    bad = [s for s in sets if s not in known]
    if bad:
        raise DataError(f"{opt.loader}:{opt.path}: option 'prompts': no {what} {bad[0]}; "
                        f"known: {', '.join(map(str, sorted(known)))}. Fix: use e.g. prompts=1,2",
                        path=opt.path, key="prompts")
    return sorted(set(sets))


def _prompt_set(p: Path, where: str, column: str, value: str, known: dict[int, Any], line: int) -> int:
    try:
        s = int(value.strip())
    except ValueError:
        raise fail(p, where, f"{column} is {value!r}, expected an integer prompt id",
                   "check that the columns are in header order", line=line, key=column) from None
    if s not in known:
        raise fail(p, where, f"unknown prompt id: {column} {s} (this dataset has {min(known)}-{max(known)})",
                   "drop the row, or use the generic csv:/jsonl: loader with your own score ranges",
                   line=line, key=column)
    return s


def _check_range(p: Path, where: str, column: str, x: float, lo: float, hi: float, prompt: int | str,
                 line: int) -> None:
    if not lo <= x <= hi:
        raise fail(p, where, f"{column} {fmt_num(x)} is outside prompt {prompt}'s score range "
                   f"{fmt_num(lo)}-{fmt_num(hi)}", "fix the score, or check the essay set of this row",
                   line=line, key=column)


def _fields(p: Path, n: int, line: str, header: list[str]) -> list[str]:
    f = line.split("\t")
    if len(f) != len(header):
        raise fail(p, f"line {n}", f"expected {len(header)} tab-separated fields (as in the header), found {len(f)}",
                   "the file must be the original tab-separated release; a tab or line break inside a text "
                   "field, or re-saving with a spreadsheet, breaks rows", line=n)
    return f


def _header(p: Path, encoding: str) -> tuple[Iterator[tuple[int, str]], int, list[str]]:
    lines = iter_lines(p, encoding)
    n, head = next(lines)
    return lines, n, head.split("\t")


def _text_key(p: Path, where: str, key: str, entry: dict[str, Any], required: bool) -> str | None:
    """``entry[key]`` as stripped text (None when null / absent and not ``required``), else a DataError."""
    v = entry.get(key)
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        got = "missing" if key not in entry else ("empty" if isinstance(v, str) else f"{type(v).__name__} {v!r}")
        fix = ("give the task the students were set as a non-empty string" if required else
               "give the text as a non-empty string, or null where the set has none")
        raise fail(p, where, f"{key!r} is {got}, expected {'a non-empty string' if required else 'a string or null'}",
                   fix, key=f"{where}.{key}")
    return v.strip()


def read_aes_prompt_texts(path: str | Path) -> dict[int, dict[str, str | None]]:
    """The ASAP-AES prompts file: ``{essay_set: {"prompt_text", "source_title", "source_text"}}``.

    The file is a JSON list of objects ``{"essay_set": N, "prompt_text": str, "source_title": str|null,
    "source_text": str|null}`` (the format of ``../shared/data/asap-aes/prompts.json``, described in the
    PROMPTS-SOURCE.md beside it). Every entry is checked: an essay set of 1-8 given once, a non-empty
    ``prompt_text``, a string or null for the two others, no other key; a problem is a :class:`DataError` naming
    the file, the entry's key path (``[2].source_text``) and the fix. Sets the file does not list keep no text.
    """
    p = resolve_file(path, "ASAP-AES prompts file (JSON)")
    doc = load_json(p)
    if not isinstance(doc, list) or not doc:
        raise fail(p, None, f"expected a non-empty JSON list of objects with keys {', '.join(AES_PROMPT_KEYS)}, "
                   f"found {type(doc).__name__ if doc else 'an empty list'}",
                   "write one object per essay set, e.g. [{\"essay_set\": 3, \"prompt_text\": \"...\", "
                   "\"source_title\": null, \"source_text\": null}]")
    out: dict[int, dict[str, str | None]] = {}
    for i, entry in enumerate(doc):
        where = f"[{i}]"
        if not isinstance(entry, dict):
            raise fail(p, where, f"entry is {type(entry).__name__}, expected an object with keys "
                       f"{', '.join(AES_PROMPT_KEYS)}", "write one object per essay set", key=where)
        extra = sorted(set(entry) - set(AES_PROMPT_KEYS))
        if extra:
            close = difflib.get_close_matches(extra[0], AES_PROMPT_KEYS, n=1)
            raise fail(p, where, f"unknown key {extra[0]!r}", f"did you mean {close[0]!r}?" if close else
                       f"the keys are {', '.join(AES_PROMPT_KEYS)}", key=f"{where}.{extra[0]}")
        s = entry.get("essay_set")
        if isinstance(s, bool) or not isinstance(s, int) or s not in AES_RANGES:
            raise fail(p, where, f"'essay_set' is {'missing' if 'essay_set' not in entry else repr(s)}, expected "
                       "an ASAP-AES essay set 1-8 (a JSON integer)", "give the set's number, e.g. \"essay_set\": 3",
                       key=f"{where}.essay_set")
        if s in out:
            first = next(k for k, e in enumerate(doc) if isinstance(e, dict) and e.get("essay_set") == s)
            raise fail(p, where, f"essay_set {s} is given twice (first at [{first}])", "keep one entry per set",
                       key=f"{where}.essay_set")
        out[s] = {"prompt_text": _text_key(p, where, "prompt_text", entry, True),
                  "source_title": _text_key(p, where, "source_title", entry, False),
                  "source_text": _text_key(p, where, "source_text", entry, False)}
    return out


def _prompts_file(opt: Options, given: str | None, tsv: Path) -> Path | None:
    """The prompts file: ``prompt_texts=FILE`` (``given``; relative to the TSV's directory unless absolute;
    ``none``: no file), else ``prompts.json`` beside the TSV when it exists, else None."""
    if given is not None:
        if given.strip().lower() == "none":
            return None
        f = Path(given).expanduser()
        if not f.is_absolute():
            f = tsv.parent / f
        if not f.exists():
            raise DataError(f"asap-aes:{opt.path}: option 'prompt_texts': {f} not found (a relative path is read "
                            f"from the TSV's directory, {tsv.parent}). Fix: give the path of the prompts file, "
                            "e.g. prompt_texts=prompts.json, or prompt_texts=none", path=str(f), key="prompt_texts")
        return f
    beside = tsv.parent / AES_PROMPTS_FILE
    return beside if beside.is_file() else None


@register_loader("asap-aes")
def load_asap_aes(path: str, **options: Any) -> Dataset:
    """ASAP-AES ``training_set_rel3.tsv`` (plain or gzipped) as task ``essay``.

    One :class:`Prompt` per essay set (id ``"1"``..``"8"``, ranges above) and one :class:`ScoredResponse`
    per essay: ``id`` = essay_id, ``scores`` = (domain1_score, rater1_domain1, rater2_domain1
    [, rater3_domain1]) with empty rater fields skipped. Rater scores are on the rater scale
    (``Prompt.meta["rater_score_min"/"rater_score_max"]``), which for sets 1, 7 and 8 is not the
    resolved scale. ``meta["domain2_score"]`` holds set 2's second-domain score.

    Prompt texts (:func:`read_aes_prompt_texts`): ``Prompt.text`` = the file's ``prompt_text``,
    ``Prompt.source`` = its ``source_text`` (sets 3-6), ``Prompt.meta["source_title"]`` its title and byline,
    ``Dataset.meta["prompt_texts"]`` the file read. Without a prompts file the prompts have no text and no
    passage, as before the option existed.

    Options: ``prompts=1,2`` (essay sets to keep), ``prompt_texts=FILE`` (the prompts file; a relative path is
    read from the TSV's directory; default: ``prompts.json`` beside the TSV when it exists; ``none``: do not
    read one), ``encoding`` (default utf-8), ``lazy``.
    """
    opt = Options("asap-aes", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    lazy = opt.flag("lazy")
    sets = _selected_sets(opt, AES_RANGES, "ASAP-AES essay set")
    texts_opt = opt.text("prompt_texts")
    opt.finish()
    p = resolve_file(path, "ASAP-AES training_set_rel3 TSV")
    texts_file = _prompts_file(opt, texts_opt, p)
    texts = read_aes_prompt_texts(texts_file) if texts_file is not None else {}
    keep = set(sets)
    prompts = {}
    for s in sets:
        t = texts.get(s, {})
        pmeta: dict[str, Any] = {"dataset": "ASAP-AES", "essay_set": s, "rater_score_min": AES_RATER_RANGES[s][0],
                                "rater_score_max": AES_RATER_RANGES[s][1]}
        if t.get("source_title"):
            pmeta["source_title"] = t["source_title"]
        prompts[str(s)] = Prompt(id=str(s), task="essay", text=t.get("prompt_text") or "",
                                 source=t.get("source_text"), score_min=AES_RANGES[s][0],
                                 score_max=AES_RANGES[s][1], meta=pmeta)

    def records() -> Iterator[ScoredResponse]:
        lines, hn, header = _header(p, encoding)
        idx = check_columns(p, f"line {hn} (header)", header, AES_COLUMNS, "column")
        raters = [(c, header.index(c)) for c in AES_RATERS if c in header]
        d2 = header.index("domain2_score") if "domain2_score" in header else None
        i_id, i_set, i_text, i_gold = (idx[c] for c in AES_COLUMNS)
        ids = IdChecker(p, "essay_id")
        for n, line in lines:
            if not line.strip():
                continue
            f = _fields(p, n, line, header)
            where = f"line {n}"
            s = _prompt_set(p, where, "essay_set", f[i_set], AES_RANGES, n)
            eid = f[i_id].strip()
            ids(eid, where, n)
            if s not in keep:
                continue
            text = strip_csv_quotes(f[i_text])
            if not text.strip():
                raise fail(p, where, f"empty text in column 'essay' (essay_id {eid})", "drop the row or restore "
                           "the essay", line=n, key="essay")
            if not f[i_gold].strip():
                raise fail(p, where, f"missing gold score domain1_score (essay_id {eid})",
                           "drop the row or fill in the score", line=n, key="domain1_score")
            gold = parse_number(p, where, "domain1_score", f[i_gold], line=n)
            _check_range(p, where, "domain1_score", gold, *AES_RANGES[s], s, n)
            scores = [gold] + [parse_number(p, where, c, f[i], line=n) for c, i in raters if f[i].strip()]
            meta: dict[str, Any] = {}
            if d2 is not None and f[d2].strip():
                meta["domain2_score"] = parse_number(p, where, "domain2_score", f[d2], line=n)
            yield ScoredResponse(id=eid, prompt_id=str(s), text=text, scores=tuple(scores), meta=meta)

    meta: dict[str, Any] = {"path": str(p), "format": "asap-aes", "labeled": True}
    if texts_file is not None:
        meta["prompt_texts"] = str(texts_file)
    return build_dataset(f"asap-aes:{path}", "essay", prompts, records, lazy=lazy, meta=meta)


_REL = re.compile(r"(_rel_?\d+)$")


def _sas_solution_for(p: Path) -> Path | None:
    """The sibling ``<stem>_solution.csv[.gz]`` of a leaderboard TSV, if exactly one exists.

    ``public_leaderboard_rel_2.tsv.gz`` -> ``public_leaderboard_solution.csv(.gz)``; the private
    leaderboard has no public solution, so nothing is found for it.
    """
    name = p.name
    for suffix in (".gz", ".tsv", ".txt"):
        name = name.removesuffix(suffix)
    stem = _REL.sub("", name)
    found = [c for c in (p.parent / f"{stem}_solution.csv", p.parent / f"{stem}_solution.csv.gz") if c.is_file()]
    return found[0] if len(found) == 1 else None


def _read_sas_solution(sol: Path, encoding: str) -> dict[str, tuple[int, int, float, str]]:
    """Solution CSV -> {id: (line, essay_set, essay_score, Usage)}."""
    rows = iter_csv(sol, encoding)
    out: dict[str, tuple[int, int, float, str]] = {}
    try:
        hn, header = next(rows)
    except StopIteration:
        raise fail(sol, None, "empty solution file", "re-download the file") from None
    idx = check_columns(sol, f"line {hn} (header)", header, SAS_SOLUTION_COLUMNS)
    i_use = header.index("Usage") if "Usage" in header else None
    for n, row in rows:
        where = f"line {n}"
        if len(row) != len(header):
            raise fail(sol, where, f"expected {len(header)} comma-separated fields, found {len(row)}",
                       "re-download the file", line=n)
        sid = row[idx["id"]].strip()
        if sid in out:
            raise fail(sol, where, f"duplicate id {sid!r} (first at line {out[sid][0]})", "remove the duplicate",
                       line=n, key="id")
        s = _prompt_set(sol, where, "essay_set", row[idx["essay_set"]], SAS_MAX, n)
        score = parse_number(sol, where, "essay_score", row[idx["essay_score"]], line=n)
        _check_range(sol, where, "essay_score", score, 0, SAS_MAX[s], s, n)
        out[sid] = (n, s, score, row[i_use].strip() if i_use is not None else "")
    return out


@register_loader("asap-sas")
def load_asap_sas(path: str, **options: Any) -> Dataset:
    """ASAP-SAS as task ``content``: the training TSV (Id, EssaySet, Score1, Score2, EssayText), or a
    leaderboard TSV (Id, EssaySet, EssayText) joined on Id with its solution CSV (id, essay_set,
    essay_score), whose ``essay_score`` becomes the gold score.

    ``ScoredResponse.scores`` = (Score1, Score2) for training data, (essay_score,) for a joined
    leaderboard, () for a leaderboard without solution (``Dataset.meta["unlabeled"] = True``; the private
    leaderboard's gold scores were never published).

    Options: ``solution=FILE`` (relative to the TSV's directory unless absolute; default: the sibling
    ``<name>_solution.csv[.gz]`` when exactly one exists; ``solution=none`` disables the join),
    ``prompts=1,2`` (essay sets to keep), ``encoding`` (default utf-8), ``lazy``.
    """
    opt = Options("asap-sas", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    lazy = opt.flag("lazy")
    sets = _selected_sets(opt, SAS_MAX, "ASAP-SAS EssaySet")
    sol_opt = opt.text("solution")
    opt.finish()
    p = resolve_file(path, "ASAP-SAS TSV")
    keep = set(sets)
    prompts = {str(s): Prompt(id=str(s), task="content", score_min=0, score_max=SAS_MAX[s],
                              meta={"dataset": "ASAP-SAS", "essay_set": s}) for s in sets}

    lines, hn, header = _header(p, encoding)
    lines.close()
    check_columns(p, f"line {hn} (header)", header, SAS_COLUMNS)
    labeled = "Score1" in header
    if "Score2" in header and not labeled:
        check_columns(p, f"line {hn} (header)", header, ("Score1",))
    sol: Path | None = None
    if sol_opt is not None and sol_opt.strip().lower() != "none":
        if labeled:
            raise DataError(f"asap-sas:{path}: option 'solution': this file already has gold scores (Score1). "
                            "Fix: drop ?solution=..., it is for leaderboard files", path=str(p), key="solution")
        sol = Path(sol_opt).expanduser()
        if not sol.is_absolute():
            sol = p.parent / sol
        sol = resolve_file(sol, "ASAP-SAS solution CSV")
    elif sol_opt is None and not labeled:
        sol = _sas_solution_for(p)
    solution = _read_sas_solution(sol, encoding) if sol is not None else None
    meta: dict[str, Any] = {"path": str(p), "format": "asap-sas", "labeled": labeled or solution is not None,
                            "unlabeled": not labeled and solution is None,
                            "solution": str(sol) if sol is not None else None, "warnings": []}

    def records() -> Iterator[ScoredResponse]:
        lines, hn, header = _header(p, encoding)
        idx = check_columns(p, f"line {hn} (header)", header, SAS_COLUMNS)
        i_id, i_set, i_text = (idx[c] for c in SAS_COLUMNS)
        score_cols = [(c, header.index(c)) for c in ("Score1", "Score2") if c in header]
        ids = IdChecker(p, "Id")
        matched = 0
        for n, line in lines:
            if not line.strip():
                continue
            f = _fields(p, n, line, header)
            where = f"line {n}"
            s = _prompt_set(p, where, "EssaySet", f[i_set], SAS_MAX, n)
            rid = f[i_id].strip()
            ids(rid, where, n)
            rmeta: dict[str, Any] = {}
            scores: list[float] = []
            if solution is not None:
                hit = solution.get(rid)
                if hit is None:
                    raise fail(p, where, f"Id {rid} has no row in the solution file {sol}",
                               "use the solution file that belongs to this leaderboard, or solution=none",
                               line=n, key="Id")
                matched += 1
                if hit[1] != s:
                    raise fail(p, where, f"EssaySet {s} but the solution file {sol} says essay_set {hit[1]} "
                               f"at line {hit[0]}", "the two files do not belong together", line=n, key="EssaySet")
                scores.append(hit[2])
                if hit[3]:
                    rmeta["usage"] = hit[3]
            if s not in keep:
                continue
            text = strip_csv_quotes(f[i_text])
            if not text.strip():
                raise fail(p, where, f"empty text in column 'EssayText' (Id {rid})", "drop the row",
                           line=n, key="EssayText")
            for c, i in score_cols:
                if not f[i].strip():
                    if c == "Score1":
                        raise fail(p, where, f"missing gold score Score1 (Id {rid})", "fill in the score",
                                   line=n, key=c)
                    continue
                x = parse_number(p, where, c, f[i], line=n)
                _check_range(p, where, c, x, 0, SAS_MAX[s], s, n)
                scores.append(x)
            yield ScoredResponse(id=rid, prompt_id=str(s), text=text, scores=tuple(scores), meta=rmeta)
        if solution is not None and matched < len(solution):
            w = f"{len(solution) - matched} ids of the solution file {sol} are not in {p}"
            if w not in meta["warnings"]:
                meta["warnings"].append(w)

    return build_dataset(f"asap-sas:{path}", "content", prompts, records, lazy=lazy, meta=meta)
