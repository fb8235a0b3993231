"""The scorecard: per target, clean quality next to robustness, worst attack first, one sentence each.

Kumar et al. (2020, Sec. 1) ask that automatic scorers be judged on both: QWK for performance and adversarial
evaluation for validity. Clean quality is the papers' clean metric (QWK per prompt, averaged over prompts, for
scoring; EM/F1, SQuAD v1.1, for reading; top-1 / MRR of the candidates for open-domain questions); robustness
is each attack configuration's pooled row (prompt ``all``, or its only prompt), ranked by ``failure_pct`` (the
share of adversarial inputs on which the target did not do what the attack's declared expectation says a robust
system does; engine/metrics_rows.py), worst first.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbluff.render.text import fmt, natural_key, num, pct, pooled_rows, row_label, short_params
from callbluff.tasks import get_task

EXPECT_TEXT: dict[str, str] = {
    "lower": "a robust scorer lowers the score",
    "bottom": "a robust scorer gives the minimum score",
    "same-score": "a robust scorer keeps the score",
    "same-answer": "a robust system keeps its correct answer",
    "wrong-answer": "a robust system no longer gives the gold answer",
    "not-higher": "a robust grader does not raise the score",
}
"""What each expectation asks, without a citation: the card cites the attack's own paper (:func:`paper_of`)."""


def paper_of(attack: str) -> str | None:
    """The paper a registered attack comes from (its ``paper``), None for an attack not registered here."""
    from callbluff.attacks.base import get_attack  # attack metadata only: the report does not load a run's attacks

    try:
        return get_attack(attack).paper or None
    except KeyError:
        return None


@dataclass
class Entry:
    attack: str
    params: str
    expect: str | None
    failure_pct: float | None
    n: Any
    values: list[tuple[str, str]]
    sentence: str
    paper: str | None = None


@dataclass
class TargetCard:
    target: str
    task: str
    clean: list[tuple[str, str]] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)

    @property
    def worst(self) -> Entry | None:
        return self.entries[0] if self.entries and self.entries[0].failure_pct is not None else None


def clean_quality(task: str, rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The clean metric(s) of one target's rows, as (label, value) pairs (the task's
    :meth:`~callbluff.tasks.base.Task.clean_quality`)."""
    return get_task(task).clean_quality([r for r in rows if r.get("attack") == "clean"])


def scorecards(task: str, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[TargetCard]:
    """One card per target, its attacks sorted worst first (``failure_pct`` descending, undefined last)."""
    spec = get_task(task)
    cards = []
    for target in targets:
        mine = [r for r in rows if str(r.get("target")) == target]
        card = TargetCard(target, task, clean_quality(task, mine))
        pooled = pooled_rows(mine)
        for r in pooled:
            text = spec.sentence(r) or f"no adversarial example was scored ({r.get('n') or 0}); see the errors."
            card.entries.append(Entry(
                row_label(r, pooled), short_params(r["params"], str(r["attack"])), r.get("expect"), num(r.get("failure_pct")),
                r.get("n"), [(label, pct(r.get(f)) if "%" in label else fmt(r.get(f))) for f, label in spec.robust_fields
                             if r.get(f) is not None], text, paper_of(str(r["attack"]))))
        card.entries.sort(key=lambda e: (e.failure_pct is None, -(e.failure_pct or 0.0), e.attack,
                                         natural_key(e.params)))
        cards.append(card)
    return cards


def headlines(task: str, rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """One plain sentence per (attack, params, target), from the pooled row (prompt "all" or the only one)."""
    spec = get_task(task)
    out: list[str] = []
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for r in rows:
        if r["attack"] != "clean":
            groups.setdefault((r["attack"], r["params"], r["target"]), []).append(r)
    for (attack, params, target), rs in groups.items():
        r = next((x for x in rs if x["prompt"] == "all"), rs[0] if len(rs) == 1 else None)
        if r is None:
            continue
        text = spec.sentence(r)
        if text is not None:
            out.append(f"{attack} ({short_params(params)}) against {target}: {text}")
    return out
