"""Ding et al. 2020, Sec. 2.2 "N-gram": answers of character or word n-grams (n = 1..5) drawn independently
by frequency from the generic corpus (``GenericChars``, ``GenericWords``) or from the prompt's own answers
(``PromptChars``, ``PromptWords``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

import numpy as np
from pydantic import Field

from callbluff.attacks.base import GeneratorParams, PromptGenerator, register
from callbluff.attacks.content.common import DING, GenericCorpusParams, GenericCorpusUser, StateMemo, prompt_answers
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.ngrams import (
    NgramTable,
    Sampler,
    Unit,
    build_table,
    generic_sampler,
    join_units,
    mean_length,
    sample_ngrams,
)


class PromptNgramParams(GeneratorParams):
    """``n``: the n-gram order (the paper uses 1..5)."""

    n: int = Field(3, ge=1, le=9)


class GenericNgramParams(GenericCorpusParams):
    """``n``: the n-gram order (the paper uses 1..5); the generic corpus as in :class:`GenericCorpusParams`."""

    n: int = Field(3, ge=1, le=9)


def _sampler_of_state(state: dict[str, Any]) -> Sampler:
    return Sampler.of(NgramTable.from_state(state["table"]))


NP = TypeVar("NP", PromptNgramParams, GenericNgramParams)


class _NgramGenerator(PromptGenerator[NP]):
    """Shared by the four n-gram generators: fit learns the prompt's mean answer length (and, for the
    prompt-specific ones, the n-gram table); each answer is :func:`~callbluff.resources.ngrams.sample_ngrams`."""

    unit: ClassVar[Unit]
    generic: ClassVar[bool]
    task = "content"
    family = "ngram"
    paper = DING
    record_type = ScoredResponse
    expect = "bottom"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._memo: StateMemo[Sampler] = StateMemo(_sampler_of_state)
        if isinstance(self, GenericCorpusUser):
            self._own_corpus(self.params)

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        answers = prompt_answers(records)
        state: dict[str, Any] = {"length": mean_length(answers, self.unit), "n_answers": len(answers)}
        if self.generic:
            assert isinstance(self.params, GenericNgramParams)  # the generic generators' params
            _, state["corpus"] = generic_sampler(self.params.spec(), self.unit, self.params.n)
        else:
            state["table"] = build_table(answers, self.unit, self.params.n).to_state()
        return state

    def sampler(self, state: dict[str, Any]) -> Sampler:
        if not self.generic:
            return self._memo(state)
        assert isinstance(self.params, GenericNgramParams)  # the generic generators' params
        sampler, fingerprint = generic_sampler(self.params.spec(), self.unit, self.params.n)
        if fingerprint != state["corpus"]:
            raise ValueError(f"{self.name}: the generic corpus changed since fit (fingerprint {fingerprint}, fit "
                             f"on {state['corpus']}); fit again")
        return sampler

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        length = int(state["length"])
        units, drawn, ended = sample_ngrams(self.sampler(state), length, rng)
        if not units:
            return None
        return self.generated(prompt, join_units(units, self.unit), index, length=length, n_drawn=drawn,
                              end="sentence" if ended else "length")


_CHOICES = """Choices where the paper is silent (:mod:`callbluff.resources.ngrams`): text is lower-cased and
    punctuation dropped (as in Table 2); sentences end after ``.!?`` + space or at line breaks, each with an
    end-of-sentence token, and n-grams do not cross them; the maximal length is the mean length of this
    prompt's answers (in {units}, without punctuation), so every answer has 1 to that many {units}; an
    answer ends early at the first drawn n-gram that holds the end token. A robust scorer gives these
    answers the bottom score (ARR, Sec. 3.2)."""


@register
class GenericChars(GenericCorpusUser, _NgramGenerator[GenericNgramParams]):
    __doc__ = """Character n-grams of the generic corpus drawn independently by frequency (Ding et al. 2020,
    Sec. 2.2 "N-gram", Table 2 "Generic corpus characters"; the generic corpus of Sec. 2.1).

    "We generate adversarial answers by performing a weighted random sampling based on the frequency
    distribution over all n-grams in the corpus" -- not a conditional language model: each n-gram is drawn
    regardless of the ones before it. The corpus is configurable (default: SQuAD v1.1 Wikipedia paragraphs
    instead of the paper's Brown corpus; see :mod:`callbluff.resources.corpus`).

    """ + _CHOICES.format(units="characters")

    name = "GenericChars"
    description = "Character n-grams of the generic corpus, drawn independently by frequency."
    Params = GenericNgramParams
    unit = "char"
    generic = True


@register
class PromptChars(_NgramGenerator[PromptNgramParams]):
    __doc__ = """Character n-grams of the prompt's answers drawn independently by frequency (Ding et al.
    2020, Sec. 2.2 "N-gram", Table 2 "Prompt-specific characters"; the prompt-specific corpus of Sec. 2.1).

    The n-gram table is learnt by ``fit`` from the prompt's answers; the answers are concatenations of
    its n-grams, each drawn regardless of the ones before it (not a conditional language model).

    """ + _CHOICES.format(units="characters")

    name = "PromptChars"
    description = "Character n-grams of the prompt's answers, drawn independently by frequency."
    Params = PromptNgramParams
    unit = "char"
    generic = False


@register
class GenericWords(GenericCorpusUser, _NgramGenerator[GenericNgramParams]):
    __doc__ = """Word n-grams of the generic corpus drawn independently by frequency (Ding et al. 2020,
    Sec. 2.2 "N-gram", Table 2 "Generic corpus words"; the generic corpus of Sec. 2.1).

    Each n-gram is drawn regardless of the ones before it (not a conditional language model; for n = 1 this
    is the word unigram condition, which differs from :class:`RandomWords` by weighting words by frequency).
    The corpus is configurable (default: SQuAD v1.1 Wikipedia paragraphs instead of the paper's Brown
    corpus; see :mod:`callbluff.resources.corpus`).

    """ + _CHOICES.format(units="words")

    name = "GenericWords"
    description = "Word n-grams of the generic corpus, drawn independently by frequency."
    Params = GenericNgramParams
    unit = "word"
    generic = True


@register
class PromptWords(_NgramGenerator[PromptNgramParams]):
    __doc__ = """Word n-grams of the prompt's answers drawn independently by frequency (Ding et al. 2020,
    Sec. 2.2 "N-gram", Table 2 "Prompt-specific words"; the prompt-specific corpus of Sec. 2.1).

    The n-gram table is learnt by ``fit`` from the prompt's answers; each n-gram is drawn regardless of the
    ones before it (the paper's footnote 2: a conditional n-gram model trained on the answers generated too
    many answers with correct content).

    """ + _CHOICES.format(units="words")

    name = "PromptWords"
    description = "Word n-grams of the prompt's answers, drawn independently by frequency."
    Params = PromptNgramParams
    unit = "word"
    generic = False
