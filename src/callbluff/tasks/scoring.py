"""What the two scoring tasks share (essay scoring, Kumar et al. 2020; short-answer content scoring, Ding et al.
2020): scored responses to prompts with a score scale, targets that return a score, Kumar et al.'s overstability
statistics streamed per (target, attack, params, prompt) with a pooled ``all`` row, QWK as the clean figure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pandas as pd

from callbluff.datasets.generic import SCORED_COLUMNS
from callbluff.metrics.scoring import at_minimum
from callbluff.metrics.streaming import ScoringAccumulator
from callbluff.records import Prompt, Record, ScoredResponse
from callbluff.render.text import fmt, num, pct
from callbluff.render.views import View, kumar_grids
from callbluff.targets.base import Input
from callbluff.tasks.base import Gold, Task


GRADER_REPORT_FIELDS: tuple[str, ...] = (
    "max_out_pct", "ceiling_pct", "mean_diff_pct_ci_low", "mean_diff_pct_ci_high", "pos_pct_ci_low", "pos_pct_ci_high",
    "parse_fail_pct", "sample_spread_pct", "variant_spread_pct")
"""The grader statistics (:mod:`callbluff.metrics.grading`) the scoring tasks' rows carry and the report
shows: max-out rate, ceiling share, bootstrap intervals, parse failures, spreads across samples and variants."""


GENERATED_NOUN: dict[str, str] = {"OffTopic": "{responses} written for other prompts",
                                  "OffTopicEssay": "essays written for other prompts"}
"""What a prompt-level generator's answers are, where "generated answers" would be wrong (OffTopic's are real
answers to other prompts; ``{responses}``: the task's word for them; ``OffTopicEssay`` is the name of OffTopic's
essay form in runs made before one attack served both tasks)."""


class ScoringTask(Task):
    """A task whose records are :class:`~callbluff.records.ScoredResponse` and whose targets return scores."""

    record_type = ScoredResponse
    output = "score"
    prompt_rows = True
    responses = "answers"
    """What the task's responses are called in a sentence ("answers", "essays")."""
    columns = SCORED_COLUMNS
    clean_fields = ("qwk",)
    pair_arr: ClassVar[bool] = False
    """``arr`` on the rows of response-level attacks too, not only on prompt-level generators' rows."""

    def original_input(self, record: Record) -> Input:
        if not isinstance(record, ScoredResponse):
            raise TypeError(f"no {self.name} target input for {type(record).__name__}")
        return Input(task=self.name, text=record.text, prompt_id=record.prompt_id)

    def gold(self, record: Record) -> Gold:
        if not isinstance(record, ScoredResponse):
            raise TypeError(type(record).__name__)
        return record.gold, [], "score"

    def accumulator(self, prompts: Mapping[str, Prompt]) -> ScoringAccumulator:
        return ScoringAccumulator(prompts, self.name, pair_arr=self.pair_arr)

    def sentence(self, row: Mapping[str, Any]) -> str | None:
        n = row.get("n")
        if row.get("neg_pct") is None and row.get("mean_score_pct") is not None:  # prompt-level generator
            noun = GENERATED_NOUN.get(str(row.get("attack")), "generated answers").format(responses=self.responses)
            text = f"{n} {noun} got on average {pct(row.get('mean_score_pct'))}% of the score range"
            if row.get("arr") is not None:
                text += f"; {pct(row['arr'])}% were rejected (ARR; 100% is ideal)"
            return text + "."
        if not n:
            return None
        unchanged = 100.0 - (num(row.get("neg_pct")) or 0.0) - (num(row.get("pos_pct")) or 0.0)
        text = (f"{pct(unchanged)}% of {n} adversarial responses kept their score, {pct(row.get('pos_pct'))}% "
                f"gained; mean change {pct(row.get('mean_diff_pct'))}% of the scale")
        if row.get("arr") is not None:
            text += f"; {pct(row['arr'])}% were rejected (ARR; 100% is ideal)"
        if row.get("max_out_pct") and row.get("n_low"):
            text += f"; {pct(row['max_out_pct'])}% of {row['n_low']} low-scored answers reached the maximum"
        return text + "."

    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """QWK per prompt, averaged over prompts (Kumar et al. Sec. 2.3), and the number of clean responses."""
        qwks = [q for r in clean if (q := num(r.get("qwk"))) is not None]
        if not qwks:
            return [("QWK", "–")]
        label = "QWK" if len(qwks) == 1 else f"QWK (mean of {len(qwks)} prompts)"
        return [(label, fmt(sum(qwks) / len(qwks))), ("clean responses", fmt(sum(int(r.get("n") or 0)
                                                                                 for r in clean)))]

    def headline_figures(self, clean: Sequence[Mapping[str, Any]], originals: pd.DataFrame,
                         prompts: Mapping[str, Prompt]) -> list[tuple[str, str]]:
        """QWK (:meth:`clean_quality`) and Ding et al.'s ARR (2020 Sec. 3.2: the share of answers scored at the
        bottom of the scale, 100% ideal) over the answers whose gold score is the prompt's minimum: the answers
        that deserve nothing. On a set of bluffs (every gold at the minimum: a user's own adversarial answers)
        QWK says nothing (one gold value) and ARR is the figure, as in Ding et al.'s Table 3; elsewhere both."""
        ok = originals[originals["error"].isna() & originals["score"].notna() & originals["gold"].notna()]
        lo = ok["prompt_id"].map(lambda p: prompts[p].score_min if p in prompts else float("nan")).astype(float)
        bottom = at_minimum(ok["gold"].to_numpy(float), lo.to_numpy(float))
        rejected = at_minimum(ok["score"].to_numpy(float), lo.to_numpy(float))
        n0 = int(bottom.sum())
        arr_text = fmt(100.0 * float(rejected[bottom].sum()) / n0) + "%" if n0 else "–"
        if n0 and n0 == len(ok):
            return [("ARR (answers scored at the scale's minimum; 100% is ideal)", arr_text), ("answers", fmt(n0)),
                    ("QWK", "undefined: every gold score is the minimum (a set of bluffs)")]
        figures = self.clean_quality(clean)
        if n0:
            figures.append((f"ARR on the {n0} answer{'s' if n0 != 1 else ''} whose gold is the minimum", arr_text))
        return figures

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        """Kumar et al. Tables 4-5: per attack configuration, targets x prompts."""
        return kumar_grids(rows, targets)
