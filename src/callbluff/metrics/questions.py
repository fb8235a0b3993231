"""Metrics for question-answering bots attacked with DPAEG (success rate, Recall@k, MRR, MAP; Sec. 4.1).

**Answer matching** (:func:`answer_matches`), per the gold answer type of :class:`~callbluff.records.OpenQuestion`:

- ``"string"`` (WebQuestions, SQuAD-style golds): correct when the SQuAD-normalised candidate equals a
  SQuAD-normalised gold answer (DrQA's ``exact_match_score``).
- ``"regex"`` (CuratedTREC): each gold is a regular expression, compiled with
  ``IGNORECASE | UNICODE | MULTILINE`` as DrQA does and applied to the *raw* candidate text (stripped of
  surrounding whitespace; not SQuAD-normalised, since patterns such as ``1\\s?,\\s?932 feet`` rely on
  punctuation). ``regex_mode="search"`` (default) accepts a match anywhere in the candidate, as the
  CuratedTREC README defines correctness ("the regex matches any substring"), so ``Wood`` accepts
  "Elijah Wood". ``regex_mode="match"`` anchors at the candidate's start like DrQA's
  ``regex_match_score`` (``pattern.match``), for reproducing DrQA's published numbers. A pattern that
  does not compile raises (DrQA silently scores it wrong).
- An empty (or whitespace-only) candidate never matches.

**Units**: ``success_rate`` is a percentage (DPAEG Table 2); ``recall_at_k``, ``mrr`` and ``map`` are in
[0, 1] (DPAEG Table 3, where the original questions score 1).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

from callbluff.metrics._common import is_missing, pct, same_length
from callbluff.metrics.reading import normalize_answer

AnswerType = Literal["string", "regex"]
RegexMode = Literal["search", "match"]
DEFAULT_KS: tuple[int, ...] = (5, 20)


@lru_cache(maxsize=8192)
def _compile(pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern, flags=re.IGNORECASE | re.UNICODE | re.MULTILINE)
    except re.error as exc:
        raise ValueError(f"gold answer regex {pattern!r} does not compile ({exc}); fix the dataset's answer "
                         "pattern or load the answers as answer_type='string'") from exc


def _text(candidate: Any) -> str:
    """A candidate's text: a ``str``, or anything with a ``.text`` (e.g. ``targets.base.Candidate``)."""
    return candidate if isinstance(candidate, str) else str(candidate.text)


def answer_matches(
    candidate: Any,
    golds: Sequence[str] | str,
    answer_type: AnswerType = "string",
    *,
    regex_mode: RegexMode = "search",
) -> bool:
    """Whether ``candidate`` is a correct answer given the gold answers (see the module docstring)."""
    if isinstance(golds, str):
        golds = [golds]
    if not golds:
        raise ValueError("no gold answers to match against: every question needs at least one gold answer")
    text = _text(candidate).strip()
    if not text:
        return False
    if answer_type == "string":
        norm = normalize_answer(text)
        return any(norm == normalize_answer(g) for g in golds)
    if answer_type == "regex":
        if regex_mode not in ("search", "match"):
            raise ValueError(f"regex_mode must be 'search' or 'match', got {regex_mode!r}")
        for g in golds:
            pat = _compile(g)
            if (pat.search(text) if regex_mode == "search" else pat.match(text)) is not None:
                return True
        return False
    raise ValueError(f"answer_type must be 'string' or 'regex', got {answer_type!r}")


# --------------------------------------------------------------------------- success rate


def success_stats(
    original_correct: Sequence[bool | None],
    adversarial_correct: Sequence[bool | None],
) -> dict[str, float | int]:
    """DPAEG's success rate with its denominator spelled out (Sec. 4.1).

    DPAEG: "the ratio of questions that the Q&A robot answers incorrectly in all generated adversarial
    questions", where adversarial questions are generated only from questions the robot answered
    correctly (Sec. 3.2). Item ``i`` is one adversarial question; ``original_correct[i]`` says whether
    the robot answered its *source* question correctly, ``adversarial_correct[i]`` whether it answered
    the adversarial one correctly. The unit is the adversarial question (DPAEG counts e.g. 257
    adversarial questions from 41 originals), not the source question.

    Returns ``n`` (denominator: adversarial questions whose source was answered correctly and whose
    adversarial answer is present), ``n_success`` (of those, answered incorrectly), ``n_excluded``
    (source answered incorrectly: not an attack, left out), ``n_missing`` (either answer missing, i.e.
    None) and ``success_rate`` = 100 * n_success / n (NaN when n is 0).
    """
    same_length("original_correct", original_correct, "adversarial_correct", adversarial_correct)
    if len(original_correct) == 0:
        raise ValueError("no adversarial questions: success rate needs at least one")
    n = n_success = n_excluded = n_missing = 0
    for o, a in zip(original_correct, adversarial_correct, strict=True):
        if is_missing(o) or is_missing(a):
            n_missing += 1
        elif not o:
            n_excluded += 1
        else:
            n += 1
            n_success += not a
    return {
        "n": n,
        "n_success": n_success,
        "n_excluded": n_excluded,
        "n_missing": n_missing,
        "success_rate": pct(n_success, n),
    }


def success_rate(
    original_correct: Sequence[bool | None],
    adversarial_correct: Sequence[bool | None],
) -> float:
    """% of adversarial questions (from correctly answered sources) answered incorrectly; see :func:`success_stats`."""
    return float(success_stats(original_correct, adversarial_correct)["success_rate"])


# --------------------------------------------------------------------------- ranked candidates


def relevance(
    candidates: Sequence[Any],
    golds: Sequence[str] | str,
    answer_type: AnswerType = "string",
    *,
    regex_mode: RegexMode = "search",
) -> list[bool]:
    """Per-rank correctness of a ranked candidate list (best first; list order is the ranking, so
    candidates with tied scores keep the order the system returned them in)."""
    return [answer_matches(c, golds, answer_type, regex_mode=regex_mode) for c in candidates]


def _check_k(k: int | None) -> None:
    if k is not None and (not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer, got {k!r}")


def hit_at_k(rel: Sequence[bool], k: int) -> float:
    """1.0 if a correct answer is among the first ``k`` candidates (fewer than ``k`` is fine), else 0.0."""
    _check_k(k)
    return float(any(rel[:k]))


def reciprocal_rank(rel: Sequence[bool], k: int | None = None) -> float:
    """1 / rank of the first correct candidate (rank 1 = best) within the first ``k``; 0.0 if none."""
    _check_k(k)
    for i, r in enumerate(rel[:k] if k else rel, start=1):
        if r:
            return 1.0 / i
    return 0.0


def average_precision(rel: Sequence[bool], k: int | None = None) -> float:
    """Average precision of one ranked list: the mean of precision@i over the ranks i holding a correct
    candidate, within the first ``k``. The number of correct answers that *could* have been returned
    is unknown in open-domain QA, so the normaliser is the number of correct candidates in the list
    (each correct candidate counts, duplicates included); 0.0 when none is correct."""
    _check_k(k)
    hits, total = 0, 0.0
    for i, r in enumerate(rel[:k] if k else rel, start=1):
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def _types(answer_type: AnswerType | Sequence[AnswerType], n: int) -> list[AnswerType]:
    if isinstance(answer_type, str):
        return [answer_type] * n  # type: ignore[list-item]
    types = list(answer_type)
    if len(types) != n:
        raise ValueError(f"answer_type has {len(types)} entries for {n} questions: give one per question or one for all")
    return types


def _relevances(
    ranked_candidates: Sequence[Sequence[Any] | None],
    golds: Sequence[Sequence[str]],
    answer_type: AnswerType | Sequence[AnswerType],
    regex_mode: RegexMode,
) -> tuple[list[list[bool]], int]:
    same_length("ranked_candidates", ranked_candidates, "golds", golds)
    if len(ranked_candidates) == 0:
        raise ValueError("no questions: ranking metrics need at least one candidate list")
    types = _types(answer_type, len(golds))
    rels, n_missing = [], 0
    for cands, gold, t in zip(ranked_candidates, golds, types, strict=True):
        if cands is None:
            n_missing += 1
            continue
        rels.append(relevance(cands, gold, t, regex_mode=regex_mode))
    return rels, n_missing


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def recall_at_k(
    ranked_candidates: Sequence[Sequence[Any] | None],
    golds: Sequence[Sequence[str]],
    k: int,
    *,
    answer_type: AnswerType | Sequence[AnswerType] = "string",
    regex_mode: RegexMode = "search",
) -> float:
    """Recall@k as DPAEG uses it: the fraction of questions with a correct answer among the top ``k``
    candidates (in [0, 1]). A ``None`` candidate list (failed prediction) is left out; an empty list
    counts as a miss."""
    _check_k(k)
    rels, _ = _relevances(ranked_candidates, golds, answer_type, regex_mode)
    return _mean([hit_at_k(r, k) for r in rels])


def mrr(
    ranked_candidates: Sequence[Sequence[Any] | None],
    golds: Sequence[Sequence[str]],
    *,
    k: int | None = None,
    answer_type: AnswerType | Sequence[AnswerType] = "string",
    regex_mode: RegexMode = "search",
) -> float:
    """Mean reciprocal rank of the first correct candidate (in [0, 1]); the whole returned list unless ``k``."""
    rels, _ = _relevances(ranked_candidates, golds, answer_type, regex_mode)
    return _mean([reciprocal_rank(r, k) for r in rels])


def map_score(
    ranked_candidates: Sequence[Sequence[Any] | None],
    golds: Sequence[Sequence[str]],
    *,
    k: int | None = None,
    answer_type: AnswerType | Sequence[AnswerType] = "string",
    regex_mode: RegexMode = "search",
) -> float:
    """Mean average precision over questions (field name ``map``; in [0, 1]); see :func:`average_precision`."""
    rels, _ = _relevances(ranked_candidates, golds, answer_type, regex_mode)
    return _mean([average_precision(r, k) for r in rels])


def ranking_metrics(
    ranked_candidates: Sequence[Sequence[Any] | None],
    golds: Sequence[Sequence[str]],
    ks: Sequence[int] = DEFAULT_KS,
    *,
    answer_type: AnswerType | Sequence[AnswerType] = "string",
    regex_mode: RegexMode = "search",
    suffix: str = "",
) -> dict[str, float | int]:
    """All ranking fields at once (each answer matched once): ``n``, ``n_missing``, ``recall_at_<k>``
    for each k (default 5 and 20, as DPAEG), ``mrr`` and ``map``; ``suffix`` is appended to every key
    (e.g. ``"_adv"``)."""
    for k in ks:
        _check_k(k)
    rels, n_missing = _relevances(ranked_candidates, golds, answer_type, regex_mode)
    out: dict[str, float | int] = {f"n{suffix}": len(rels), f"n_missing{suffix}": n_missing}
    for k in ks:
        out[f"recall_at_{k}{suffix}"] = _mean([hit_at_k(r, k) for r in rels])
    out[f"mrr{suffix}"] = _mean([reciprocal_rank(r) for r in rels])
    out[f"map{suffix}"] = _mean([average_precision(r) for r in rels])
    return out
