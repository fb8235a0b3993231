"""The scorecard: per target, clean quality next to robustness, worst attack first, one sentence each.

Kumar et al. (2020, Sec. 1) ask that automatic scorers be judged on both: QWK for performance and adversarial
evaluation for validity. Clean quality is the papers' clean metric (QWK per prompt, averaged over prompts, for
scoring; EM/F1, SQuAD v1.1, for reading; top-1 / MRR of the candidates for open-domain questions); robustness
is each attack configuration's pooled row (prompt ``all``, or its only prompt), ranked by ``failure_pct`` (the
share of adversarial inputs on which the target did not do what the attack's declared expectation says a robust
system does; engine/metrics_rows.py), worst first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbluff.report.text import fmt, num, pct, sentence, short_params

EXPECT_TEXT: dict[str, str] = {
    "lower": "a robust scorer lowers the score (Kumar et al.)",
    "bottom": "a robust scorer gives the minimum score (Ding et al.)",
    "same-score": "a robust scorer keeps the score",
    "same-answer": "a robust system keeps its correct answer (Jia & Liang; DPAEG)",
    "wrong-answer": "a robust system no longer gives the gold answer",
}

ROBUST_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "essay": (("not_lowered_pct", "not lowered %"), ("mean_diff_pct", "mean change % of scale"),
              ("mean_score_pct", "mean score % of scale")),
    "content": (("arr", "ARR %"), ("not_lowered_pct", "not lowered %"), ("mean_diff_pct", "mean change %"),
                ("mean_score_pct", "mean score %")),
    "reading": (("f1", "F1 before"), ("f1_adv", "F1 under attack"), ("broken_pct", "broken %")),
    "questions": (("success_rate", "success rate %"), ("recall_at_5_adv", "Recall@5 adv"),
                  ("mrr_adv", "MRR adv")),
}


@dataclass
class Entry:
    attack: str
    params: str
    expect: str | None
    failure_pct: float | None
    n: Any
    values: list[tuple[str, str]]
    sentence: str


@dataclass
class TargetCard:
    target: str
    task: str
    clean: list[tuple[str, str]] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    @property
    def worst(self) -> Entry | None:
        return self.entries[0] if self.entries and self.entries[0].failure_pct is not None else None


def natural_key(text: str) -> tuple[tuple[int, float, str], ...]:
    """Sort key that orders numbers by value ("percent=2.0" before "percent=10.0")."""
    return tuple((0, float(t), "") if re.fullmatch(r"-?\d+(\.\d+)?", t) else (1, 0.0, t)
                 for t in re.findall(r"-?\d+(?:\.\d+)?|[^\d-]+|-", text))


def pooled_rows(rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per (target, attack, params): the ``all`` row where it exists, else the only prompt's row, else
    every prompt's row (a configuration the engine did not pool)."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r.get("attack") != "clean":
            groups.setdefault((str(r["target"]), str(r["attack"]), str(r["params"])), []).append(r)
    out: list[Mapping[str, Any]] = []
    for rs in groups.values():
        pooled = [r for r in rs if r.get("prompt") == "all"]
        out.extend(pooled or rs)
    return out


def row_label(r: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> str:
    """The attack name, with ``[prompt P]`` when its configuration has several unpooled prompt rows."""
    if r.get("prompt") in ("all", None):
        return str(r["attack"])
    same = [x for x in rows if (x["target"], x["attack"], x["params"]) == (r["target"], r["attack"], r["params"])]
    return str(r["attack"]) + (f" [prompt {r['prompt']}]" if len(same) > 1 else "")


def clean_quality(task: str, rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The clean metric(s) of one target's rows, as (label, value) pairs."""
    clean = [r for r in rows if r.get("attack") == "clean"]
    if task in ("essay", "content"):
        qwks = [q for r in clean if (q := num(r.get("qwk"))) is not None]
        if not qwks:
            return [("QWK", "–")]
        label = "QWK" if len(qwks) == 1 else f"QWK (mean of {len(qwks)} prompts)"
        return [(label, fmt(sum(qwks) / len(qwks))), ("clean responses", fmt(sum(int(r.get("n") or 0)
                                                                                 for r in clean)))]
    if not clean:
        return []
    r = clean[0]
    if task == "reading":
        return [("EM", fmt(r.get("em"))), ("F1", fmt(r.get("f1"))), ("questions", fmt(r.get("n")))]
    return [("top-1 correct %", fmt(_pct(r.get("recall_at_1")))), ("MRR", fmt(r.get("mrr"))),
            ("questions", fmt(r.get("n")))]


def _pct(v: Any) -> float | None:
    x = num(v)
    return None if x is None else 100.0 * x if x <= 1.0 else x


def scorecards(task: str, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[TargetCard]:
    """One card per target, its attacks sorted worst first (``failure_pct`` descending, undefined last)."""
    cards = []
    for target in targets:
        mine = [r for r in rows if str(r.get("target")) == target]
        card = TargetCard(target, task, clean_quality(task, mine))
        pooled = pooled_rows(mine)
        for r in pooled:
            text = sentence(task, r) or f"no adversarial example was scored ({r.get('n') or 0}); see the errors."
            card.entries.append(Entry(
                row_label(r, pooled), short_params(r["params"], str(r["attack"])), r.get("expect"), num(r.get("failure_pct")),
                r.get("n"), [(label, pct(r.get(f)) if "%" in label else fmt(r.get(f))) for f, label in ROBUST_FIELDS.get(task, ())
                             if r.get(f) is not None], text))
        card.entries.sort(key=lambda e: (e.failure_pct is None, -(e.failure_pct or 0.0), e.attack,
                                         natural_key(e.params)))
        cards.append(card)
    return cards
