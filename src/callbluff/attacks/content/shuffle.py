"""Ding et al. 2020, Sec. 2.2 "Shuffle": the word tokens of a correct answer in random order."""

from __future__ import annotations

import re
from typing import Literal

import numpy as np

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.content.common import DING
from callbluff.attacks.edits import Edit, Unit, apply, regex_units, units
from callbluff.attacks.shuffling import changing_permutation
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources

_WS_TOKEN = re.compile(r"\S+")


class ShuffleParams(AttackParams):
    """``min_score``: the gold score an answer needs to count as *correct* (default: the top of the prompt's
    scale, i.e. fully correct answers). ``tokenizer``: ``spacy`` (word and punctuation tokens, as a
    tokenizer would give) or ``whitespace``."""

    min_score: float | None = None
    tokenizer: Literal["spacy", "whitespace"] = "spacy"


@register
class Shuffle(StaticAttack[ShuffleParams]):
    """Shuffle the word tokens of a correct answer (Ding et al. 2020, Sec. 2.2 "Shuffle").

    "We select correct answers from the ASAP-SAS dataset and randomly shuffle word tokens in each answer.
    The generated set of adversarial answers has exactly the same vocabulary as the source answers, but
    each answer is syntactically incorrect." A robust scorer gives them the bottom score (ARR, Sec. 3.2):
    ``expect = "bottom"``.

    Assumptions where the paper is silent: "correct" means a gold score at the top of the prompt's scale
    (configurable with ``min_score``); tokens are spaCy tokenizer tokens (edit-toolkit word units) joined by
    single spaces, so a token never glues to its new neighbour; whitespace before the first and after the
    last token is kept; the drawn order always differs from the original; answers with fewer than two
    distinct tokens yield nothing. ``meta["edits"]`` gives the replaced span (edit toolkit).
    """

    name = "Shuffle"
    task = "content"
    family = "shuffle"
    paper = DING
    description = "Shuffle the word tokens of a correct answer (same vocabulary, no syntax)."
    Params = ShuffleParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "bottom"

    def threshold(self, prompt: Prompt | None) -> float | None:
        if self.params.min_score is not None:
            return self.params.min_score
        return prompt.score_max if prompt is not None else None

    def applies_to(self, record: Record, prompt: Prompt | None) -> bool:
        threshold = self.threshold(prompt)
        if threshold is None:
            raise ValueError(
                f"{self.name}: record {record.id} has no prompt scale to decide which answers are correct; "
                "load data with prompts (e.g. asap-sas:...) or set --param min_score=N"
            )
        return isinstance(record, ScoredResponse) and record.gold is not None and record.gold >= threshold

    def tokens(self, text: str, res: Resources) -> list[Unit]:
        if self.params.tokenizer == "whitespace":
            return regex_units(text, _WS_TOKEN)
        return units(text, "word", res)

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        tokens = self.tokens(record.text, res)
        order = changing_permutation([t.text for t in tokens], rng)
        if order is None:
            return []
        shuffled = " ".join(tokens[i].text for i in order)
        text, edits = apply(record.text, [Edit(tokens[0].start, tokens[-1].end, shuffled)])
        return [self.perturbed(record, text, order=order, n_tokens=len(tokens), source_score=record.gold,
                               edits=edits)]
