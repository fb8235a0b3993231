"""Countermeasure 1 of Ding et al. 2020 (Sec. 5.1 "Select features with respect to robustness"): the shallow
scorer (:class:`~callbluff.models.content.ContentScorer`) trained with other feature groups
(:data:`callbluff.models.features.CONTENT_GROUPS`).

* ``paper`` -- the attacked system (Sec. 3.1): character 2-5-grams, word 1-5-grams, answer length;
* ``no-char-no-unigram`` -- "we remove these features": "models trained with only word 2-5grams and sentence
  length as features" (the paper's "sentence length" is read as the answer length the system already has);
* ``paper+dep`` -- "the top 1000 most frequent dependency triples from the training data as additional
  features";
* ``paper+pos`` -- "adding POS n-grams as additional features" (n = 1-3, the top 1,000; the paper gives
  neither n nor the count).

Every variant is tuned like the reference model (C, class weights and the length weight by cross-validation
on the training answers only).
"""

from __future__ import annotations

from typing import Any

from callbluff.models.content import ContentScorer
from callbluff.models.features import PAPER_GROUPS

FEATURE_VARIANTS: dict[str, tuple[str, ...]] = {
    "paper": PAPER_GROUPS,
    "no-char-no-unigram": ("word_2_5", "length"),
    "paper+dep": (*PAPER_GROUPS, "dep_triples"),
    "paper+pos": (*PAPER_GROUPS, "pos_ngrams"),
}


def feature_variant(name: str, **kw: Any) -> Any:
    """An untrained :class:`~callbluff.models.content.ContentScorer` with the feature groups of variant
    ``name`` (:data:`FEATURE_VARIANTS`); ``kw`` go to the scorer."""
    if name not in FEATURE_VARIANTS:
        raise ValueError(f"unknown feature variant {name!r}; known: {', '.join(FEATURE_VARIANTS)}")
    return ContentScorer(FEATURE_VARIANTS[name], **kw)
