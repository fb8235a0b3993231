"""The scorecard: per target, clean quality next to robustness, worst attack first, one sentence each.

Kumar et al. (2020, Sec. 1) ask that automatic scorers be judged on both: QWK for performance and adversarial
evaluation for validity. Clean quality is the papers' clean metric (QWK per prompt, averaged over prompts, for
scoring; EM/F1, SQuAD v1.1, for reading; top-1 / MRR of the candidates for open-domain questions); robustness
is each attack configuration's pooled row (prompt ``all``, or its only prompt), ranked by ``failure_pct`` (the
share of adversarial inputs on which the target did not do what the attack's declared expectation says a robust
system does; engine/metrics_rows.py), worst first.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from callbluff.metrics.expectations import expectation_text  # noqa: F401  (the card's phrase, re-exported)
from callbluff.render.catalogue import attack_meta
from callbluff.render.text import fmt, natural_key, num, pct, pooled_rows, row_label, short_params
from callbluff.tasks import get_task

MIN_N = 10
"""The fewest judged cases a failure rate is shown as a finding on: a rate on fewer (e.g. 100 % of 2 answers, when
most predictions failed) is greyed, ranked after the measured ones, left out of the chart and never the "worst
attack"."""


def judged_of(row: Mapping[str, Any]) -> int | None:
    """How many cases a metric row's ``failure_pct`` is computed on: its ``n_judged`` (written since issue 40),
    else its ``n`` (a run written before: the scored adversarial inputs, an upper bound)."""
    v = num(row.get("n_judged"))
    if v is None:
        v = num(row.get("n"))
    return None if v is None else int(v)


def too_few(row: Mapping[str, Any]) -> bool:
    """True when a row has a failure rate computed on fewer than :data:`MIN_N` cases."""
    n = judged_of(row)
    return num(row.get("failure_pct")) is not None and (n is None or n < MIN_N)


def paper_of(attack: str) -> str | None:
    """The paper an attack comes from (its ``paper``, as the run recorded it: :mod:`callbluff.render.catalogue`),
    None for an attack neither the run nor the registry knows."""
    meta = attack_meta(attack)
    return (meta.get("paper") or None) if meta else None


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
    n_judged: int | None = None
    """The cases ``failure_pct`` is computed on."""

    @property
    def few(self) -> bool:
        """A rate on fewer than :data:`MIN_N` cases: shown grey with its n, not as a finding."""
        return self.failure_pct is not None and (self.n_judged is None or self.n_judged < MIN_N)


@dataclass
class TargetCard:
    target: str
    task: str
    clean: list[tuple[str, str]] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)
    grader: bool = False
    """An LLM grader's card (its own words: :func:`grader_sentence`)."""

    @property
    def worst(self) -> Entry | None:
        """The attack configuration with the highest failure rate on at least :data:`MIN_N` cases (ties: the one
        on more cases), None when no rate is measured on enough."""
        return next((e for e in self.entries if e.failure_pct is not None and not e.few), None)

    @property
    def tied(self) -> int:
        """Other measured configurations at the worst one's rate (the overview says "and N more at 100 %")."""
        w = self.worst
        return 0 if w is None else sum(1 for e in self.entries if e is not w and not e.few
                                       and e.failure_pct == w.failure_pct)

    @property
    def n_few(self) -> int:
        """Attack configurations whose rate is on fewer than :data:`MIN_N` cases."""
        return sum(e.few for e in self.entries)


def clean_quality(task: str, rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """The clean metric(s) of one target's rows, as (label, value) pairs (the task's
    :meth:`~callbluff.tasks.base.Task.clean_quality`), an undefined QWK with its reason."""
    clean = [r for r in rows if r.get("attack") == "clean"]
    out = get_task(task).clean_quality(clean)
    return [(label, f"– ({why_undefined(clean)})" if value == "–" and label.startswith("QWK") and why_undefined(clean)
             else value) for label, value in out]


def why_undefined(clean: Sequence[Mapping[str, Any]]) -> str:
    """Why a scoring target's clean QWK is undefined, from its clean rows: no clean answer scored (with how many
    failed), a single one, or one gold score only."""
    rows = [r for r in clean if r.get("prompt") != "all"] or list(clean)
    scored = sum(int(num(r.get("n")) or 0) for r in rows)
    failed = sum(int(num(r.get("n_errors_original")) or 0) for r in rows)
    if not rows:
        return "no clean row"
    if scored == 0:
        return f"no clean answer was scored: all {failed} failed" if failed else "no clean answer was scored"
    if all((num(r.get("n")) or 0) < 2 for r in rows):
        return "fewer than 2 scored answers per prompt"
    return "undefined on these answers: one gold score only, e.g. a set of bluffs"


GRADER_TYPES = frozenset({"openai"})
"""Target types that are LLM graders (a chat endpoint); an ``hf`` target with ``task = "text-generation"`` is one
too (:func:`llm_graders`)."""


def llm_graders(meta: Mapping[str, Any]) -> set[str]:
    """The targets of a run (run.json) that are LLM graders: chat targets and local causal LMs. Their cards speak
    of raised scores, max-outs and unreadable replies (:func:`grader_sentence`), not of Ding et al.'s ARR."""
    out = {str(n) for n, t in (meta.get("targets") or {}).items() if isinstance(t, Mapping)
           and t.get("type") in GRADER_TYPES}
    for t in ((meta.get("suite") or {}).get("target") or []):
        if isinstance(t, Mapping) and (t.get("type") in GRADER_TYPES
                                       or (t.get("type") == "hf" and t.get("task") == "text-generation")):
            out.add(str(t.get("name")))
    return out


def _interval(row: Mapping[str, Any], field: str) -> str:
    lo, hi = num(row.get(f"{field}_ci_low")), num(row.get(f"{field}_ci_high"))
    return f" (95% interval {pct(lo)} to {pct(hi)})" if lo is not None and hi is not None else ""


def grader_sentence(row: Mapping[str, Any]) -> str | None:
    """One attack row of an LLM grader in its own words: the share of attacked answers whose score rose (with its
    bootstrap interval), the mean change, weak answers lifted to full marks (max-out), answers already at the
    maximum, and replies that could not be read; for content-free answers, their mean score and the share that
    got the minimum."""
    n = row.get("n")
    unread = num(row.get("parse_fail_pct"))
    tail = f"; {pct(unread)}% of the grader's replies could not be read (error rows, never zeros)" if unread else ""
    generated = row.get("neg_pct") is None and row.get("mean_score_pct") is not None
    if not n:
        return None
    if generated or row.get("expect") == "bottom":  # content-free answers: a robust grader gives the minimum
        noun = "answers written for other prompts" if str(row.get("attack", "")).startswith("OffTopic") \
            else "content-free answers"
        text = f"{pct(row.get('arr'))}% of {n} {noun} got the minimum score"
        if generated:
            text += f"; on average they got {pct(row.get('mean_score_pct'))}% of the score range"
        else:
            text += f"; mean change from the student's own answer {pct(row.get('mean_diff_pct'))}% of the scale"
        if row.get("n_low"):
            text += f"; {pct(row.get('max_out_pct'))}% of {row['n_low']} weak answers reached full marks"
        return text + tail + "."
    text = (f"{pct(row.get('pos_pct'))}% of {n} attacked answers were scored higher than their clean version"
            f"{_interval(row, 'pos_pct')}; mean change {pct(row.get('mean_diff_pct'))}% of the scale"
            f"{_interval(row, 'mean_diff_pct')}")
    if row.get("n_low"):
        text += (f"; {pct(row.get('max_out_pct'))}% of {row['n_low']} weak answers (gold at most the midpoint) "
                 "reached full marks")
    if num(row.get("ceiling_pct")):
        text += f"; {pct(row['ceiling_pct'])}% were at the maximum already (cannot be raised)"
    return text + tail + "."


GRADER_VALUES: tuple[tuple[str, str], ...] = (
    ("pos_pct", "raised %"), ("mean_diff_pct", "mean change % of scale"), ("max_out_pct", "max-out %"),
    ("parse_fail_pct", "unreadable replies %"), ("mean_score_pct", "mean score %"))
"""The figures under an LLM grader's sentence (instead of the task's robust fields, which speak of ARR)."""


def scorecards(task: str, rows: Sequence[Mapping[str, Any]], targets: Sequence[str],
               graders: Collection[str] = ()) -> list[TargetCard]:
    """One card per target, its attacks sorted worst first (``failure_pct`` descending, undefined last).
    ``graders``: targets that are LLM graders (:func:`llm_graders`), whose entries use :func:`grader_sentence`
    and :data:`GRADER_VALUES`."""
    spec = get_task(task)
    cards = []
    for target in targets:
        mine = [r for r in rows if str(r.get("target")) == target]
        grader = target in graders and spec.scoring
        card = TargetCard(target, task, clean_quality(task, mine), grader=grader)
        pooled = pooled_rows(mine)
        fields = GRADER_VALUES if grader else spec.robust_fields
        for r in pooled:
            failed = int(num(r.get("n_errors_adversarial")) or 0)
            text = ((grader_sentence(r) if grader else spec.sentence(r))
                    or (f"none of its {failed} adversarial inputs was scored: every prediction failed (see the "
                        "errors)." if failed else f"no adversarial example was scored ({r.get('n') or 0}); see the "
                        "errors."))
            card.entries.append(Entry(
                row_label(r, pooled), short_params(r["params"], str(r["attack"])), r.get("expect"), num(r.get("failure_pct")),
                r.get("n"), [(label, pct(r.get(f)) if "%" in label else fmt(r.get(f))) for f, label in fields
                             if r.get(f) is not None], text, paper_of(str(r["attack"])), judged_of(r)))
        # measured rates first (worst first; ties: the one on more cases), then rates on too few cases, then none
        card.entries.sort(key=lambda e: (e.failure_pct is None, e.few, -(e.failure_pct or 0.0), -(e.n_judged or 0),
                                         e.attack, natural_key(e.params)))
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
