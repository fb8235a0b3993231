"""Each adversarial example judged against its attack's declared expectation (:mod:`callbluff.metrics.expectations`)
as its row is built, so examples.parquet says which examples fooled the target, and the metric rows' ``failure_pct``
is the share of cases judged False."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from callbluff.metrics.expectations import Outcome, Verdict, judge
from callbluff.records import Perturbed, Prompt, Record
from callbluff.targets.base import Output
from callbluff.tasks import get_task
from callbluff.tasks.frames import gold_list


def _present(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and v != v)


class Judge:
    """Verdicts of one run's examples: ``expectations`` maps attack names to their declared ``expect``; the task
    descriptor judges answers (:meth:`~callbluff.tasks.base.Task.correct`); ``prompts`` give the scales."""

    def __init__(self, task: str, expectations: Mapping[str, str | None], prompts: Mapping[str, Prompt]) -> None:
        self.task = get_task(task)
        self.expectations = expectations
        self.prompts = prompts

    def _correct(self, answer: Any, error: Any, golds: Sequence[str], answer_type: str) -> bool | None:
        if _present(error) or not isinstance(answer, str) or not golds:
            return None
        return self.task.correct(answer, golds, answer_type)

    def verdict(self, attack: str, prompt_id: Any, orig_score: Any, adv_score: Any, orig_answer: Any,
                adv_answer: Any, orig_error: Any, adv_error: Any, golds: Sequence[str], answer_type: str) -> Verdict:
        """The verdict of one example from the fields of its row (a failed prediction has an error)."""
        expect = self.expectations.get(attack)
        if expect is None:
            return None
        prompt = self.prompts.get(str(prompt_id)) if _present(prompt_id) else None
        return judge(expect, Outcome(
            orig_score=float(orig_score) if _present(orig_score) and not _present(orig_error) else None,
            adv_score=float(adv_score) if _present(adv_score) and not _present(adv_error) else None,
            score_min=getattr(prompt, "score_min", None), score_max=getattr(prompt, "score_max", None),
            orig_correct=self._correct(orig_answer, orig_error, golds, answer_type),
            adv_correct=self._correct(adv_answer, adv_error, golds, answer_type)))

    def __call__(self, ex: Perturbed, src: Record | None, orig: Output | None, adv: Output) -> Verdict:
        """The verdict of an example as the chunk runner builds its row."""
        golds: list[str] = []
        answer_type = "string"
        if src is not None:
            _, golds, answer_type = self.task.gold(src)
        return self.verdict(ex.attack, ex.prompt_id, getattr(orig, "score", None), adv.score,
                            getattr(orig, "answer", None), adv.answer, getattr(orig, "error", None), adv.error,
                            golds, answer_type)

    def frame(self, examples: pd.DataFrame, answer_types: Mapping[str, str] | None = None) -> list[Verdict]:
        """The verdicts of a table of example rows (rows written before the ``verdict`` column, or by hand);
        ``answer_types`` by source id (originals' ``answer_type``; default ``string``)."""
        types = answer_types or {}
        col = examples.get
        n = len(examples)
        none = [None] * n
        return [self.verdict(a, p, os_, as_, oa, aa, oe, ae, gold_list(g), types.get(str(s), "string"))
                for a, p, os_, as_, oa, aa, oe, ae, g, s in zip(
                    examples["attack"], col("prompt_id", none), col("orig_score", none), col("adv_score", none),
                    col("orig_answer", none), col("adv_answer", none), col("orig_error", none),
                    col("adv_error", none), col("gold_answers", none), examples["source_id"])]
