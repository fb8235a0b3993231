"""Each adversarial example judged against its attack's declared expectation as its row is built
(:mod:`callbluff.metrics.expectations`), so examples.parquet says which examples fooled the target."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from callbluff.metrics.expectations import Outcome, Verdict, judge
from callbluff.records import Perturbed, Prompt, Record
from callbluff.targets.base import Output

Correct = Callable[[str, Sequence[str], str], "bool | None"]
"""Whether an answer is correct given the gold answers and their type (the task decides: EM for reading,
answer matching for questions)."""


class Judge:
    """The verdict of one (example, source, original output, adversarial output) under the attack's expectation.

    ``expectations`` maps attack names to their declared ``expect``; ``gold`` gives a record's (gold score, gold
    answers, answer type); ``correct`` judges an answer (answer tasks; None for scoring tasks)."""

    def __init__(self, expectations: Mapping[str, str | None], prompts: Mapping[str, Prompt],
                 gold: Callable[[Record], tuple[Any, list[str], str]], correct: Correct | None) -> None:
        self.expectations = expectations
        self.prompts = prompts
        self.gold = gold
        self.correct = correct

    def _correct(self, out: Output | None, golds: Sequence[str], answer_type: str) -> bool | None:
        if self.correct is None or out is None or out.error is not None or not isinstance(out.answer, str):
            return None
        if not golds:
            return None
        return self.correct(out.answer, golds, answer_type)

    def __call__(self, ex: Perturbed, src: Record | None, orig: Output | None, adv: Output) -> Verdict:
        expect = self.expectations.get(ex.attack)
        if expect is None:
            return None
        prompt = self.prompts.get(str(ex.prompt_id)) if ex.prompt_id is not None else None
        golds: list[str] = []
        answer_type = "string"
        if src is not None:
            _, golds, answer_type = self.gold(src)
        outcome = Outcome(
            orig_score=None if orig is None or orig.error is not None else orig.score,
            adv_score=None if adv.error is not None else adv.score,
            score_min=getattr(prompt, "score_min", None), score_max=getattr(prompt, "score_max", None),
            orig_correct=self._correct(orig, golds, answer_type), adv_correct=self._correct(adv, golds, answer_type))
        return judge(expect, outcome)
