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

import re
from collections.abc import Sequence

import numpy as np

from callbluff.resources.typos import TypoCorpus

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")


def noisy_answer(text: str, rate: float, typos: TypoCorpus, rng: np.random.Generator) -> tuple[str, int, int]:
    """``text`` with ``rate`` of its words replaced by real misspellings: (new text, words replaced, words).
    Everything else (spacing, punctuation) is kept byte for byte."""
    if not 0 <= rate <= 1:
        raise ValueError(f"noisy_answer: rate={rate}; use a share in [0, 1]")
    words = list(_WORD.finditer(text))
    candidates = [i for i, m in enumerate(words) if typos.typos(m.group())]
    want = min(len(candidates), int(round(rate * len(words))))
    if want == 0:
        return text, 0, len(words)
    chosen = sorted(rng.choice(len(candidates), size=want, replace=False).tolist())
    out, last = [], 0
    for j in chosen:
        m = words[candidates[j]]
        options = typos.typos(m.group())
        out += [text[last:m.start()], options[int(rng.integers(0, len(options)))]]
        last = m.end()
    out.append(text[last:])
    return "".join(out), want, len(words)


def same_score_pct(clean: Sequence[float], noisy: Sequence[float]) -> float:
    """% of noisy answers scored exactly as their clean version (failed predictions, NaN, left out)."""
    c, n = np.asarray(clean, dtype=float), np.asarray(noisy, dtype=float)
    ok = ~(np.isnan(c) | np.isnan(n))
    return float(np.mean(c[ok] == n[ok]) * 100) if ok.any() else float("nan")
