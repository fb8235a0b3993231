"""Essay-scoring adversaries of Kumar et al. 2020, "Calling Out Bluff" (AES, task ``essay``).

Implemented here: ``ShuffleSent`` (Sec. 3.2, "Majorly Syntax-Modifying Adversaries"; Table 1). The other
Add/Del/Mod/BabelGen adversaries of Sec. 3.2-3.4 belong to the essay suite issue and plug in beside it.
"""

from __future__ import annotations

import numpy as np

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.shuffling import changing_permutation
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources

KUMAR = "Kumar et al. 2020, Calling Out Bluff"


class ShuffleSentParams(AttackParams):
    """ShuffleSent has no size or position criterion: the paper shuffles *all* sentences (Sec. 3.2)."""

    min_sentences: int = 2


@register
class ShuffleSent(StaticAttack):
    """Randomly shuffle the sentences of a response (Kumar et al. 2020, Sec. 3.2, Table 1 "ShuffleSent").

    "We randomly shuffled all the sentences of the response. This ensured that readability and coherence of
    the response are affected [...] the transition between the lines is also lost." Humans lower the score
    (Sec. 4.1, Table: "Shuffle"), so an overstable scorer is one whose score does not drop.

    Assumptions where the paper is silent: sentences come from spaCy's statistical sentence recogniser;
    shuffled sentences are joined by one space; the drawn order always differs from the original (an
    identity draw is redrawn); responses with fewer than ``min_sentences`` sentences (or whose sentences
    are all identical) yield no example. ``meta`` keeps the new order and the original sentence spans.
    """

    name = "ShuffleSent"
    task = "essay"
    family = "modify"
    paper = KUMAR
    description = "Shuffle the sentences of a response (loses transitions and coherence)."
    Params = ShuffleSentParams

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None) -> list[Perturbed]:
        if not isinstance(record, ScoredResponse):
            raise TypeError(f"{self.name} attacks scored responses, got {type(record).__name__}")
        spans = res.sentence_spans(record.text)
        if len(spans) < self.params.min_sentences:
            return []
        sentences = [record.text[a:b] for a, b in spans]
        order = changing_permutation(sentences, rng)
        if order is None:
            return []
        text = " ".join(sentences[i] for i in order)
        return [self.perturbed(record, text, order=order, sentence_spans=[list(s) for s in spans],
                               n_sentences=len(spans))]
