"""The trade-off of countermeasures (Ding et al. 2020, Sec. 5.3): "an increased robustness against adversarial
attacks usually comes at the cost of a loss of robustness against other deviations from standard language,
such as unusual orthography". Three numbers per countermeasure:

* **ARR** (Sec. 3.2) on the generated adversarial answers;
* **QWK** on real answers (the scorer's job);
* **noisy acceptance**: real answers with 10-50 % of their words replaced by real misspellings
  (:func:`noisy_answer`, from a typo corpus, :mod:`callbluff.resources.typos`) "which a content-scoring system
  should still accept": the share that get the same score as the clean answer from the same system
  (:func:`same_score_pct`); for filters also the share not flagged.

The paper plots the first two (Figure 4) and argues the third in words (citing Horbach et al. 2017: up to 50 %
spelling errors barely change a character-n-gram system's QWK); measuring it is our addition. Choices where
the paper is silent: words are ``[^\\W_]+('[^\\W_]+)*`` runs of the text; a word can be replaced when the
typo corpus has a misspelling of it (matched case-insensitively, case pattern kept); ``round(rate * words)``
of those are replaced, chosen uniformly, each by a uniformly chosen misspelling; when fewer words have
misspellings, all of them are replaced (the achieved rate is returned, and reported).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from callbluff.attacks.content.misspell import misspell
from callbluff.resources.typos import TypoCorpus


def noisy_answer(text: str, rate: float, typos: TypoCorpus, rng: np.random.Generator) -> tuple[str, int, int]:
    """``text`` with ``rate`` of its words replaced by real misspellings: (new text, words replaced, words).
    Everything else (spacing, punctuation) is kept byte for byte. The edit of the
    :class:`~callbluff.attacks.content.misspell.Misspell` attack (:func:`~callbluff.attacks.content.misspell.misspell`)."""
    return misspell(text, rate, typos, rng)


def same_score_pct(clean: Sequence[float], noisy: Sequence[float]) -> float:
    """% of noisy answers scored exactly as their clean version (failed predictions, NaN, left out)."""
    c, n = np.asarray(clean, dtype=float), np.asarray(noisy, dtype=float)
    ok = ~(np.isnan(c) | np.isnan(n))
    return float(np.mean(c[ok] == n[ok]) * 100) if ok.any() else float("nan")
