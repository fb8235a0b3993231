"""Modify family of Kumar et al. 2020, "Calling Out Bluff" (Sec. 3.2, "Majorly Syntax-Modifying Adversaries").

``ShuffleSent`` (Table 1); the other Mod adversaries of the essay suite plug in beside it.
"""

from __future__ import annotations

import numpy as np

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.edits import Edit, apply, units
from callbluff.attacks.essay.common import KUMAR
from callbluff.attacks.shuffling import changing_permutation
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources


class ShuffleSentParams(AttackParams):
    """ShuffleSent has no size or position criterion: the paper shuffles *all* sentences (Sec. 3.2)."""

    min_sentences: int = 2


@register
class ShuffleSent(StaticAttack):
    """Randomly shuffle the sentences of a response (Kumar et al. 2020, Sec. 3.2, Table 1 "ShuffleSent").

    "We randomly shuffled all the sentences of the response. This ensured that readability and coherence of
    the response are affected [...] the transition between the lines is also lost." Humans lower the score
    (Sec. 4.1), so a robust scorer lowers it too (``expect = "lower"``); one whose score does not drop is
    overstable.

    Assumptions where the paper is silent: sentences are spaCy's statistical sentences (edit-toolkit
    sentence units); sentence *slots* keep their place and the text between them (spaces, line and paragraph
    breaks) is kept byte for byte, only the sentences move; the drawn order always differs from the
    original (an identity draw is redrawn); responses with fewer than ``min_sentences`` sentences (or whose
    sentences are all identical) yield no example. ``meta`` keeps the new order, the original sentence spans
    and the edits (source and output spans of every moved sentence).
    """

    name = "ShuffleSent"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Shuffle the sentences of a response (loses transitions and coherence)."
    Params = ShuffleSentParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        sentences = units(record.text, "sentence", res)
        if len(sentences) < self.params.min_sentences:
            return []
        order = changing_permutation([s.text for s in sentences], rng)
        if order is None:
            return []
        moves = [Edit(slot.start, slot.end, sentences[src].text)
                 for slot, src in zip(sentences, order) if sentences[src].text != slot.text]
        text, edits = apply(record.text, moves)
        return [self.perturbed(record, text, order=order, sentence_spans=[[s.start, s.end] for s in sentences],
                               n_sentences=len(sentences), edits=edits)]
