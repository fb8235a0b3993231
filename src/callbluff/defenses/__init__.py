"""Countermeasures against adversarial short answers (Ding et al. 2020, Sec. 5), each usable on a user's own
data, and the measurement of what they cost (Sec. 5.3):

* :mod:`~callbluff.defenses.feature_sets` -- Sec. 5.1, the shallow scorer with vulnerable feature groups
  removed or syntactic ones added (:data:`FEATURE_VARIANTS`);
* :mod:`callbluff.countermeasures.adversarial_training` (the countermeasures wing's floor above the engine: it
  generates) -- Sec. 5.2, generated answers labelled
  wrong added to the training data;
* :mod:`~callbluff.defenses.filters` -- Sec. 5.4, the non-word-rate and unigram-perplexity filters, and
  :mod:`~callbluff.defenses.plausibility`, our own; ``callbluff filter fit|apply`` and the ``filter`` key of a
  ``[[target]]`` table (:class:`~callbluff.defenses.filtered.FilteredTarget`) put one in front of any scorer;
* :mod:`~callbluff.defenses.injection` -- ours, for LLM graders: NFKC, invisible characters removed,
  instruction-like or score-shaped spans flagged (``kind = "injection"``);
* :mod:`~callbluff.defenses.tradeoff` -- Sec. 5.3, benign noisy answers (real misspellings) and the metrics;
* :mod:`callbluff.countermeasures.battery` (above the engine: it generates through the one generation path) -- the generated
  answers all of them learn from and are measured on; a filter is fitted with them through ``fit(...,
  battery=...)``.
"""

from __future__ import annotations

from callbluff.defenses.feature_sets import FEATURE_VARIANTS, feature_variant
from callbluff.defenses.filtered import FilteredTarget
from callbluff.defenses.filters import (
    FILTERS,
    AnswerFilter,
    FilterPromptError,
    NonWordRateFilter,
    UnigramPerplexityFilter,
    load_filter,
)
from callbluff.defenses.injection import InjectionFilter
from callbluff.defenses.plausibility import PlausibilityFilter
from callbluff.defenses.tradeoff import noisy_answer, same_score_pct

__all__ = [
    "FEATURE_VARIANTS", "FILTERS", "InjectionFilter", "AnswerFilter", "FilterPromptError", "FilteredTarget", "NonWordRateFilter",
    "PlausibilityFilter", "UnigramPerplexityFilter", "feature_variant", "load_filter", "noisy_answer",
    "same_score_pct",
]
