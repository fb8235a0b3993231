"""Ding et al. 2020, Sec. 2.2 "Random": uniformly random characters and uniformly random words."""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np

from callbluff.attacks.base import GeneratorParams, PromptGenerator, register
from callbluff.attacks.content.common import DING, GenericCorpusParams, GenericCorpusUser, prompt_answers
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.ngrams import generic_vocabulary, mean_length

ALPHABET = string.ascii_lowercase + " "
"""What :class:`RandomChars` draws from: the 26 lower-case letters and the space."""


@register
class RandomChars(PromptGenerator[GeneratorParams]):
    """Uniformly random characters (Ding et al. 2020, Sec. 2.2 "Random", Table 2 "Random characters",
    e.g. *nswvtnvakgxpm*).

    "For character-based sampling, we uniformly draw individual characters (including whitespace) until an
    answer of the same length as the average in the ASAP-SAS data set is reached (without punctuation)."
    Choices: the alphabet is the 26 lower-case letters and the space (:data:`ALPHABET`, as in Table 2); the
    length is the mean length of *this prompt's* answers in characters after lower-casing and turning
    punctuation into spaces (:func:`~callbluff.resources.ngrams.mean_length`), so every answer has exactly
    that many characters. A prompt without answers yields none; an all-space draw is dropped. A robust
    scorer gives these answers the bottom score (ARR, Sec. 3.2).
    """

    name = "RandomChars"
    task = "content"
    family = "random"
    paper = DING
    description = "Uniformly random letters and spaces, as long as the prompt's mean answer."
    Params = GeneratorParams
    record_type = ScoredResponse
    expect = "bottom"

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        answers = prompt_answers(records)
        return {"length": mean_length(answers, "char"), "n_answers": len(answers)}

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        length = int(state["length"])
        if length < 1:
            return None
        text = "".join(ALPHABET[i] for i in rng.integers(0, len(ALPHABET), size=length).tolist())
        if not text.strip():
            return None
        return self.generated(prompt, text, index, length=length)


@register
class RandomWords(GenericCorpusUser, PromptGenerator[GenericCorpusParams]):
    """Words drawn uniformly from the generic corpus's vocabulary (Ding et al. 2020, Sec. 2.2 "Random",
    Table 2 "Random words", e.g. *footage flubbed birthplace parry's cicadas*).

    "Since the Brown Corpus is comprised of one million words drawn from a wide variety of sources, we
    sample uniformly from the Brown Corpus vocabulary." We sample uniformly from the vocabulary of the
    configured generic corpus (default: SQuAD v1.1 Wikipedia paragraphs cut to about a million words;
    :mod:`callbluff.resources.corpus` says what changes from Brown) rather than from a frequency list such as
    wordfreq's: the paper's vocabulary is a corpus's, and sharing it with the generic n-gram generators means
    that passing the Brown corpus reproduces the paper's setting. Every word type counts once, however rare
    ("not equal to a word unigram condition", Sec. 2.2). Choices: the vocabulary is the corpus's lower-cased
    word tokens (:func:`~callbluff.resources.ngrams.word_tokens`, numbers included); an answer has as many
    words as the prompt's answers have on average, joined by spaces. A robust scorer gives them the bottom
    score (ARR, Sec. 3.2).
    """

    name = "RandomWords"
    task = "content"
    family = "random"
    paper = DING
    description = "Words drawn uniformly from the generic corpus vocabulary."
    Params = GenericCorpusParams
    record_type = ScoredResponse
    expect = "bottom"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._own_corpus(self.params)

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        vocab, fingerprint = generic_vocabulary(self.params.spec())
        answers = prompt_answers(records)
        return {"length": mean_length(answers, "word"), "n_answers": len(answers), "corpus": fingerprint,
                "vocabulary": len(vocab)}

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        length = int(state["length"])
        vocab, fingerprint = generic_vocabulary(self.params.spec())
        if fingerprint != state["corpus"]:
            raise ValueError(f"{self.name}: the generic corpus changed since fit (fingerprint {fingerprint}, fit "
                             f"on {state['corpus']}); fit again")
        if length < 1 or not vocab:
            return None
        words = [vocab[i] for i in rng.integers(0, len(vocab), size=length).tolist()]
        return self.generated(prompt, " ".join(words), index, length=length, corpus=fingerprint)
