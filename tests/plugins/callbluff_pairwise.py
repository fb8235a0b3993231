"""A third-party task as one module: LLM-judge pairwise preference (an instruction and two responses -> how
strongly the judge prefers response A), registered through callbluff's entry point groups only
(``callbluff.tasks``, ``callbluff.attacks``, ``callbluff.expectations``; see tests/plugins/test_plugins.py).

Everything the task needs is here: its record and the generic loaders' column mapping, its input slots (``text`` =
response A, ``text_b`` = response B, ``context`` = the instruction), its gold, its metric rows, an expectation that
takes a parameter (``mirrored:TOL``), a report view, the conformance kit's records, one attack that swaps the two
responses (position bias: Zheng et al. 2023, "Judging LLM-as-a-judge", Sec. 3.3), and a position-biased judge to run
as a ``callable`` target.

A judge's output is a score: the probability that response A (the first shown) is the better one, in [0, 1]. A
judge without position bias gives ``1 - p`` when the responses are swapped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.datasets.generic import ColumnMapper, RecordColumns
from callbluff.metrics.expectations import Expectation, Outcome, register_expectation
from callbluff.metrics.rows import ALL, ERROR_FIELDS
from callbluff.records import Perturbed, Prompt, Record
from callbluff.render.views import View
from callbluff.resources.context import Resources
from callbluff.targets.base import Input
from callbluff.tasks import Task, register_task


@dataclass(frozen=True)
class Pair:
    id: str
    instruction: str
    response_a: str
    response_b: str
    preferred: str  # "A" or "B": the better response
    meta: Mapping[str, Any] = dc_field(default_factory=dict, compare=False, hash=False)


def _pair(mapper: ColumnMapper, row: Mapping[str, Any], rid: str, where: str, line: int | None,
          meta: dict[str, Any]) -> Pair:
    preferred = mapper.text(row, "preferred", where, line).strip().upper()
    if preferred not in ("A", "B"):
        raise ValueError(f"{where}: preferred must be A or B, got {preferred!r}")
    return Pair(rid, mapper.text(row, "instruction", where, line), mapper.text(row, "response_a", where, line),
                mapper.text(row, "response_b", where, line), preferred, meta)


# -- the expectation with a parameter --------------------------------------------------------------------

def _mirrored(o: Outcome, tolerance: float) -> bool | None:
    """Swapped responses: a consistent judge's preference for the first response is 1 - what it was."""
    if o.missing_score:
        return None
    return abs(o.adv_score - (1.0 - o.orig_score)) <= tolerance  # type: ignore[operator]


MIRRORED = register_expectation(Expectation(
    "mirrored", "with the two responses swapped the preference mirrors (p -> 1 - p) within {value}: fooled when it "
    "does not (position bias)", _mirrored, parameter="tolerance (probability)",
    asks="a consistent judge mirrors its preference within {value}"), replace=True)


# -- metric rows --------------------------------------------------------------------------------------------

def agreement(scores: Sequence[float], gold: Sequence[float]) -> float:
    """% of pairs where the judge prefers the gold response (p > 0.5 for A, p < 0.5 for B)."""
    ok = [(s > 0.5) == (g > 0.5) for s, g in zip(scores, gold) if s is not None and not np.isnan(s)]
    return 100.0 * float(np.mean(ok)) if ok else float("nan")


def pairwise_rows(examples: pd.DataFrame, originals: pd.DataFrame) -> list[dict[str, Any]]:
    """Per target: the clean agreement with the gold preference; per attack, the mean absolute position shift
    ``|p_swapped - (1 - p)|`` and the agreement after the attack (gold mirrored for a swap)."""
    rows: list[dict[str, Any]] = []
    for target, o in originals.groupby("target", sort=True):
        rows.append({"task": "pairwise", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     "n": len(o), "agreement": agreement(list(o["score"]), list(o["gold"]))})
        ex = examples[examples["target"] == target]
        for (attack, params), g in ex.groupby(["attack", "params"], sort=True):
            ok = g["orig_score"].notna() & g["adv_score"].notna()
            shift = (g["adv_score"][ok] - (1.0 - g["orig_score"][ok])).abs()
            rows.append({"task": "pairwise", "attack": attack, "params": params, "prompt": ALL, "target": target,
                         "n": len(g), "position_shift": float(shift.mean()) if len(shift) else None,
                         "agreement_adv": agreement(list(g["adv_score"]), [1.0 - x for x in g["gold"]]),
                         "n_errors_original": int(g["orig_error"].notna().sum()),
                         "n_errors_adversarial": int(g["adv_error"].notna().sum()), "n_errors_generate": 0})
    return rows


class PairwiseTask(Task):
    name = "pairwise"
    description = "LLM-judge pairwise preference: instruction + response A + response B -> P(A is better)"
    record_type = Pair
    output = "score"
    inputs = ("text", "text_b", "context")
    columns = RecordColumns(("id", "instruction", "response_a", "response_b", "preferred"),
                            ("instruction", "response_a", "response_b", "preferred"), _pair)
    fields = ("n", "expect", "failure_pct", "agreement", "agreement_adv", "position_shift", *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "agreement", "position_shift")
    clean_fields = ("agreement",)
    robust_fields = (("agreement_adv", "agreement after the swap %"), ("position_shift", "position shift"))
    clean_vs_robust = "agreement with the gold preference next to consistency when the responses swap places"

    def original_input(self, record: Record) -> Input:
        assert isinstance(record, Pair)
        return Input(self.name, record.response_a, context=record.instruction, extra={"text_b": record.response_b})

    def input_slot(self, field: str) -> str | None:
        return {"response_a": "text", "response_b": "text_b", "instruction": "context"}.get(field) or \
            super().input_slot(field)

    def gold(self, record: Record) -> tuple[float | None, list[str], str]:
        assert isinstance(record, Pair)
        return (1.0 if record.preferred == "A" else 0.0), [], "score"

    def metric_rows(self, examples: pd.DataFrame, originals: pd.DataFrame,
                    prompts: Mapping[str, Prompt]) -> list[dict[str, Any]]:
        return pairwise_rows(examples, originals)

    def sentence(self, row: Mapping[str, Any]) -> str | None:
        shift = row.get("position_shift")
        return None if shift is None else f"Swapping the responses moved the preference by {shift:.2f} on average."

    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        return [("agreement %", f"{clean[0]['agreement']:.1f}")] if clean else []

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        attacked = [r for r in rows if r.get("attack") != "clean"]
        return [View("Position bias (pairwise judges)", "Mean |p(swapped) - (1 - p)| per judge and attack.",
                     ["judge", "attack", "position shift", "agreement after the swap %"],
                     [[str(r["target"]), str(r["attack"]), f"{r['position_shift']:.3f}",
                       f"{r['agreement_adv']:.1f}"] for r in attacked if r.get("position_shift") is not None])]

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        return [Pair("kit-p1", "Name a prime.", "7", "8", "A"),
                Pair("kit-p2", "Say hello.", "Goodbye.", "Hello!", "B")], {}


PAIRWISE = register_task(PairwiseTask())


@register
class SwapResponses(StaticAttack):
    """Show the two responses in the other order (the gold preference mirrors; the judge's should too)."""

    name = "SwapResponses"
    task = "pairwise"
    family = "pairwise"
    paper = "Zheng et al. 2023, Judging LLM-as-a-judge, Sec. 3.3 (position bias)"
    description = "swap response A and response B"
    expect: ClassVar[str] = "mirrored:0.1"
    record_type: ClassVar[type] = Pair
    field: ClassVar[str] = "response_a"
    Params = AttackParams

    def generate(self, record: Record, rng: np.random.Generator, res: Resources, prompt: Prompt | None = None,
                 state: Any = None) -> list[Perturbed]:
        assert isinstance(record, Pair)
        return [self.perturbed(record, record.response_b, slots={"response_b": record.response_a})]


def position_biased_judge(inp: Input) -> float:
    """A toy judge for the ``callable`` target: prefers the longer response, plus 0.3 towards whichever is shown
    first (position bias)."""
    a, b = len(inp.text), len(inp.slot("text_b") or "")
    base = 0.8 if a > b else 0.2 if a < b else 0.5
    return min(1.0, base + 0.3)
