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
"""

from __future__ import annotations

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


@register_loader("asap-aes")
def load_asap_aes(path: str, **options: Any) -> Dataset:
    """ASAP-AES ``training_set_rel3.tsv`` (plain or gzipped) as task ``essay``.

    One :class:`Prompt` per essay set (id ``"1"``..``"8"``, ranges above) and one :class:`ScoredResponse`
    per essay: ``id`` = essay_id, ``scores`` = (domain1_score, rater1_domain1, rater2_domain1
    [, rater3_domain1]) with empty rater fields skipped. Rater scores are on the rater scale
    (``Prompt.meta["rater_score_min"/"rater_score_max"]``), which for sets 1, 7 and 8 is not the
    resolved scale. ``meta["domain2_score"]`` holds set 2's second-domain score.

    Options: ``prompts=1,2`` (essay sets to keep), ``encoding`` (default utf-8), ``lazy``.
    """
    opt = Options("asap-aes", path, options)
    encoding = opt.text("encoding", "utf-8") or "utf-8"
    lazy = opt.flag("lazy")
    sets = _selected_sets(opt, AES_RANGES, "ASAP-AES essay set")
    opt.finish()
    p = resolve_file(path, "ASAP-AES training_set_rel3 TSV")
    keep = set(sets)
    prompts = {
        str(s): Prompt(id=str(s), task="essay", score_min=AES_RANGES[s][0], score_max=AES_RANGES[s][1],
                       meta={"dataset": "ASAP-AES", "essay_set": s, "rater_score_min": AES_RATER_RANGES[s][0],
                             "rater_score_max": AES_RATER_RANGES[s][1]})
        for s in sets
    }

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

    return build_dataset(f"asap-aes:{path}", "essay", prompts, records, lazy=lazy,
                         meta={"path": str(p), "format": "asap-aes", "labeled": True})


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
