"""Reading-comprehension metrics: SQuAD exact match and token F1 (Jia & Liang 2017 report both).

The answer normalisation and the per-answer scores follow the official SQuAD v1.1 ``evaluate-v1.1.py``:
lower-case, drop ASCII punctuation (``string.punctuation``), drop the articles *a/an/the* as whole words,
collapse whitespace; EM compares normalised strings, F1 is the bag-of-tokens F1 of the normalised
strings; each prediction gets the **maximum** over its gold answers; corpus scores are percentages
(0-100). ``version="2.0"`` switches to the SQuAD v2.0 script's rules for unanswerable questions (gold
answers that normalise to nothing are dropped, no gold means the empty answer is right, and F1 is
1 when both sides are empty).

A prediction of ``None`` (or NaN) is a failed prediction: the aggregates leave it out and
:func:`squad_metrics` reports how many (``n_missing``); ``missing="zero"`` scores it 0 instead, as the
official script does for unanswered questions.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Literal

from callbluff.metrics._common import is_missing, same_length

SquadVersion = Literal["1.1", "2.0"]
_PUNCT = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")


def normalize_answer(s: str) -> str:
    """SQuAD v1.1 answer normalisation: lower-case, remove punctuation, remove articles, fix whitespace."""
    s = s.lower()
    s = "".join(ch for ch in s if ch not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return " ".join(s.split())


def _golds(golds: Sequence[str] | str, version: SquadVersion) -> list[str]:
    if isinstance(golds, str):
        golds = [golds]
    golds = list(golds)
    if version == "2.0":
        golds = [g for g in golds if normalize_answer(g)] or [""]
    elif not golds:
        raise ValueError(
            "no gold answers: SQuAD v1.1 scoring needs at least one (for SQuAD v2.0 unanswerable "
            "questions pass version='2.0', where no gold means the empty answer is right)"
        )
    return golds


def _em_one(pred: str, gold: str) -> float:
    return float(normalize_answer(pred) == normalize_answer(gold))


def _f1_one(pred: str, gold: str, version: SquadVersion) -> float:
    p, g = normalize_answer(pred).split(), normalize_answer(gold).split()
    if version == "2.0" and (not p or not g):
        return float(p == g)
    same = sum((Counter(p) & Counter(g)).values())
    if same == 0:  # v1.1: also when both are empty (EM is then 1 but F1 0, as in the official script)
        return 0.0
    precision, recall = same / len(p), same / len(g)
    return 2 * precision * recall / (precision + recall)


def exact_match(pred: str, golds: Sequence[str] | str, *, version: SquadVersion = "1.1") -> float:
    """1.0 if the normalised prediction equals any normalised gold answer, else 0.0."""
    return max(_em_one(pred, g) for g in _golds(golds, version))


def f1_score(pred: str, golds: Sequence[str] | str, *, version: SquadVersion = "1.1") -> float:
    """Token-level F1 (in [0, 1]) of the prediction against the best-matching gold answer."""
    return max(_f1_one(pred, g, version) for g in _golds(golds, version))


def _per_example(
    preds: Sequence[str | None],
    golds: Sequence[Sequence[str]],
    fn,
    missing: Literal["exclude", "zero"],
    version: SquadVersion,
) -> list[float]:
    same_length("preds", preds, "golds", golds)
    if not preds:
        raise ValueError("no predictions: EM/F1 need at least one question")
    out: list[float] = []
    for pred, gold in zip(preds, golds, strict=True):
        if is_missing(pred):
            if missing == "zero":
                out.append(0.0)
            continue
        out.append(fn(str(pred), gold, version=version))
    return out


def _mean_pct(values: list[float]) -> float:
    return 100.0 * sum(values) / len(values) if values else math.nan


def em(
    preds: Sequence[str | None],
    golds: Sequence[Sequence[str]],
    *,
    missing: Literal["exclude", "zero"] = "exclude",
    version: SquadVersion = "1.1",
) -> float:
    """Exact match over a corpus, in percent (0-100). NaN if every prediction is missing."""
    return _mean_pct(_per_example(preds, golds, exact_match, missing, version))


def f1(
    preds: Sequence[str | None],
    golds: Sequence[Sequence[str]],
    *,
    missing: Literal["exclude", "zero"] = "exclude",
    version: SquadVersion = "1.1",
) -> float:
    """Mean token F1 over a corpus, in percent (0-100). NaN if every prediction is missing."""
    return _mean_pct(_per_example(preds, golds, f1_score, missing, version))


def squad_metrics(
    preds: Sequence[str | None],
    golds: Sequence[Sequence[str]],
    suffix: str = "",
    *,
    missing: Literal["exclude", "zero"] = "exclude",
    version: SquadVersion = "1.1",
) -> dict[str, float | int]:
    """``{"n", "n_missing", "em", "f1"}`` with ``suffix`` appended to every key.

    Use ``suffix="_adv"`` for predictions on adversarial inputs, giving ``em_adv`` / ``f1_adv`` (and
    ``n_adv`` / ``n_missing_adv``) so both sets fit in one ``metrics.json`` row.
    """
    ems = _per_example(preds, golds, exact_match, missing, version)
    f1s = _per_example(preds, golds, f1_score, missing, version)
    n_missing = sum(1 for p in preds if is_missing(p))
    return {
        f"n{suffix}": len(ems),
        f"n_missing{suffix}": n_missing,
        f"em{suffix}": _mean_pct(ems),
        f"f1{suffix}": _mean_pct(f1s),
    }


def worst_case_squad_metrics(
    source_ids: Sequence[Hashable],
    preds: Sequence[str | None],
    golds: Sequence[Sequence[str]] | Mapping[Hashable, Sequence[str]],
    suffix: str = "_adv",
    *,
    version: SquadVersion = "1.1",
) -> dict[str, float | int]:
    """Adversarial EM/F1 with several adversarial versions per original question (Jia & Liang 2017).

    AddSent / AddAny produce several candidate distractors per question and "the model failed if
    distracted by any of these": each original question (grouped by ``source_ids``) scores the
    **minimum** EM and, separately, the minimum F1 over its adversarial versions; the corpus score is the
    mean over original questions, in percent. ``golds`` is aligned with ``preds`` or maps source id to
    gold answers. Missing predictions are ignored within a group; a question whose versions all failed
    is left out and counted in ``n_missing``. ``n`` counts original questions.
    """
    same_length("source_ids", source_ids, "preds", preds)
    if not preds:
        raise ValueError("no predictions: EM/F1 need at least one question")
    if not isinstance(golds, Mapping):
        same_length("preds", preds, "golds", golds)
    worst: dict[Hashable, list[float]] = {}
    seen: dict[Hashable, None] = {}
    for i, (sid, pred) in enumerate(zip(source_ids, preds, strict=True)):
        seen.setdefault(sid, None)
        if is_missing(pred):
            continue
        gold = golds[sid] if isinstance(golds, Mapping) else golds[i]
        e, f = exact_match(str(pred), gold, version=version), f1_score(str(pred), gold, version=version)
        if sid in worst:
            worst[sid] = [min(worst[sid][0], e), min(worst[sid][1], f)]
        else:
            worst[sid] = [e, f]
    return {
        f"n{suffix}": len(worst),
        f"n_missing{suffix}": len(seen) - len(worst),
        f"em{suffix}": _mean_pct([v[0] for v in worst.values()]),
        f"f1{suffix}": _mean_pct([v[1] for v in worst.values()]),
    }
