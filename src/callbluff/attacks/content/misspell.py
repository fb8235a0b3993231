"""Benign noise for the trade-off of countermeasures (Ding et al. 2020, Sec. 5.3): a real answer with a share of
its words replaced by real misspellings, which "a content-scoring system should still accept"."""

from __future__ import annotations

import os
import re
from functools import lru_cache

import numpy as np
from pydantic import Field

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.content.common import DING
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.typos import ENV_VAR, TypoCorpus, cached_corpus, default_paths

_WORD = re.compile(r"([^\W_]+(?:'[^\W_]+)*)")
"""A word; captured, so that ``_WORD.split(text)`` alternates the text between words and the words."""


@lru_cache(maxsize=8)
def _default_paths(env: str | None) -> tuple[str, ...]:
    """:func:`default_paths` once per value of ``$CALLBLUFF_TYPOS`` (it looks for, and may create, the cache
    directory)."""
    return default_paths()


def misspell(text: str, rate: float, typos: TypoCorpus, rng: np.random.Generator) -> tuple[str, int, int]:
    """``text`` with ``rate`` of its words replaced by real misspellings: (new text, words replaced, words).
    Words are ``[^\\W_]+('[^\\W_]+)*`` runs; a word can be replaced when the typo corpus has a misspelling of it
    (matched case-insensitively, case pattern kept by the corpus); ``round(rate * words)`` of those are
    replaced, chosen uniformly from ``rng``, each by a uniformly chosen misspelling; when fewer words have
    misspellings, all of them are. Everything else (spacing, punctuation) is kept byte for byte."""
    if not 0 <= rate <= 1:
        raise ValueError(f"misspell: rate={rate}; use a share in [0, 1]")
    parts = _WORD.split(text)  # the words at the odd positions
    n_words = len(parts) // 2
    lower = typos.lower_index()  # most words: one dict lookup
    candidates = [i for i in range(1, len(parts), 2)
                  if lower.get(parts[i]) or (not parts[i].islower() and typos.typos(parts[i]))]
    want = min(len(candidates), int(round(rate * n_words)))
    if want == 0:
        return text, 0, n_words
    chosen = [candidates[j] for j in sorted(rng.choice(len(candidates), size=want, replace=False).tolist())]
    options = [typos.typos(parts[i]) for i in chosen]
    picks = rng.integers(0, [len(o) for o in options]).tolist()  # the draws of one call per word, in one call
    for i, o, k in zip(chosen, options, picks, strict=True):
        parts[i] = o[k]
    return "".join(parts), want, n_words


class MisspellParams(AttackParams):
    """``rate``: the share of an answer's words replaced (the findings use 0.1, 0.3, 0.5); ``typo_files``: typo
    corpora (:func:`callbluff.resources.typos.load_corpus` formats; empty: the default corpus)."""

    rate: float = Field(0.3, ge=0, le=1)
    typo_files: tuple[str, ...] = ()


@register
class Misspell(StaticAttack[MisspellParams]):
    """Replace a share of an answer's words by real misspellings (Ding et al. 2020, Sec. 5.3).

    The paper argues, citing Horbach et al. 2017, that robustness against adversarial answers "usually comes
    at the cost of a loss of robustness against other deviations from standard language, such as unusual
    orthography", and that spelling errors barely change a character-n-gram system's QWK, but measures no
    such answers; these are they. A robust scorer gives the misspelt answer the score of the original
    (``expect = "same-score"``); a filter should not flag it. Choices: :func:`misspell` (real misspellings
    from typo corpora, not random edits: Birkbeck, Holbrook, Aspell and Wikipedia lists in the findings); an
    answer with no word the corpus can misspell yields nothing; ``meta``: words replaced and words.
    """

    name = "Misspell"
    task = "content"
    family = "noise"
    paper = DING
    description = "Replace a share of the answer's words by real misspellings (benign noise: the score should stay)."
    Params = MisspellParams
    record_type = ScoredResponse
    requires: tuple[str, ...] = ("typos",)
    expect = "same-score"

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.params.typo_files:
            self.requires = ()

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        corpus = cached_corpus(tuple(self.params.typo_files) or _default_paths(os.environ.get(ENV_VAR)))
        text, replaced, words = misspell(record.text, self.params.rate, corpus, rng)
        if not replaced:
            return []
        return [self.perturbed(record, text, replaced=replaced, words=words)]
