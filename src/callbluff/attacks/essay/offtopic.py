"""The essay form of the wrong-question bluff (:mod:`callbluff.attacks.content.offtopic`): an essay written for
another prompt of the same dataset."""

from __future__ import annotations

from callbluff.attacks.base import register
from callbluff.attacks.content.offtopic import _OffTopic
from callbluff.attacks.essay.common import KUMAR


@register
class OffTopicEssay(_OffTopic):
    """Submit a real essay written for another prompt of the same dataset (Kumar et al. 2020, Sec. 2.2:
    "prompt-irrelevant essays", after Kumar et al. 2019; Sec. 4.1, Table 6: "Relevance" is the annotators'
    first reason to lower an adversarial essay's score).

    As :class:`~callbluff.attacks.content.offtopic.OffTopic` (same parameters): fitted on the dataset's other
    essay prompts (``source``, e.g. ``asap-aes:train.tsv``; unset: the essays packaged with callbluff,
    ``demo:essay``); essay ``i`` is a uniformly drawn essay of the ``i mod k``-th other prompt from its own seeded
    stream. Kumar et al. measure essays against their originals; a prompt-level generator has no original, so
    the expectation is Ding et al.'s (Sec. 3.2): the prompt's bottom score (``expect = "bottom"``). Where the
    two prompts' scales differ the essay is taken as written, its own score is not carried over.
    """

    name = "OffTopicEssay"
    task = "essay"
    paper = KUMAR
    description = "A real essay written for another prompt of the same dataset (a prompt-irrelevant essay)."
    default_source = "demo:essay"
