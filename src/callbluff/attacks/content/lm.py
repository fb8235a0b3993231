"""Ding et al. 2020, Sec. 2.2 "Generative Language Model": a language model continues the first 5 % of the
words of a real answer to that answer's length."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from callbluff.attacks.base import PromptGenerator, register
from callbluff.attacks.content.common import DING, GenericCorpusParams, GenericCorpusUser, prompt_answers
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.hf_lm import load_causal_lm
from callbluff.resources.ngram_lm import detokenize, generic_lm

NGRAM_LM = "interpolated Kneser-Ney word trigram LM trained on the generic corpus (not GPT-2)"


class LMGenerateParams(GenericCorpusParams):
    """``model_dir``: a local Hugging Face causal LM directory (e.g. GPT-2), loaded offline; unset means the
    offline n-gram LM trained on the generic corpus (``corpus...`` params). ``seed_percent``: the share of a
    real answer's words given as the seed (paper: 5). ``temperature`` / ``top_k``: sampling of the Hugging
    Face model (defaults of the gpt-2-Pytorch code the paper used); the n-gram LM samples its distribution
    as it is."""

    model_dir: str | None = None
    seed_percent: float = Field(5.0, gt=0, lt=100)
    temperature: float = Field(0.7, gt=0)
    top_k: int = Field(40, ge=0)


@register
class LMGenerate(GenericCorpusUser, PromptGenerator[LMGenerateParams]):
    """A language model continues the first 5 % of the words of a real answer to that answer's length (Ding
    et al. 2020, Sec. 2.2 "Generative Language Model", Table 2 "GPT").

    "We use the first 5% of words in ASAP-SAS answers as seeds along with the desired length of the
    generated answer, which corresponds to the length of the original answer for that seed." The paper used
    GPT-2, not trained on the task "to avoid accidental generation of correct answers". Two language
    models: ``model_dir`` = any local Hugging Face causal LM directory (GPT-2 if the user has it; loaded with
    ``local_files_only``, sampled with ``temperature`` / ``top_k``, :mod:`callbluff.resources.hf_lm`); unset,
    an offline interpolated Kneser-Ney word trigram model trained on the generic corpus
    (:mod:`callbluff.resources.ngram_lm`, which says how it differs from GPT-2: two words of context, a
    million-word Wikipedia vocabulary, lower-cased output). Each answer's ``meta["lm"]`` names the model.

    Choices: words are whitespace-separated; the seed is the first ``ceil(seed_percent % of the words)``
    (at least one) of an answer of the prompt drawn uniformly; answers whose seed would be all of them
    (one word) are not used; the answer is the seed as written plus the continuation, exactly as many words
    as the source answer. A robust scorer gives them the bottom score (ARR, Sec. 3.2).
    """

    name = "LMGenerate"
    task = "content"
    family = "lm"
    paper = DING
    description = "A language model continues the first 5% of a real answer to its length."
    Params = LMGenerateParams
    record_type = ScoredResponse
    expect = "bottom"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._own_corpus(self.params)

    def _lm_name(self) -> tuple[str, str]:
        """(what the model is, its fingerprint), loading it (once per process)."""
        if self.params.model_dir:
            lm = load_causal_lm(self.params.model_dir)
            return f"Hugging Face causal LM {lm.path}", lm.fingerprint
        ngram = generic_lm(self.params.spec())
        return f"{NGRAM_LM}: {self.params.corpus or 'squad-v1.1'}", ngram.fingerprint

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        seeds = []
        for text in prompt_answers(records):
            words = text.split()
            k = max(1, math.ceil(len(words) * self.params.seed_percent / 100))
            if k < len(words):
                seeds.append([" ".join(words[:k]), len(words)])
        lm, fingerprint = self._lm_name()
        return {"seeds": seeds, "lm": lm, "lm_fingerprint": fingerprint}

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        if not state["seeds"]:
            return None
        lm, fingerprint = self._lm_name()
        if fingerprint != state["lm_fingerprint"]:
            raise ValueError(f"{self.name}: the language model changed since fit ({fingerprint}, fit with "
                             f"{state['lm_fingerprint']}); fit again")
        j = int(rng.integers(0, len(state["seeds"])))
        seed, length = state["seeds"][j]
        remaining = length - len(seed.split())
        if self.params.model_dir:
            cont = load_causal_lm(self.params.model_dir).continue_text(
                seed, remaining, rng, self.params.temperature, self.params.top_k)
        else:
            cont = detokenize(generic_lm(self.params.spec()).continue_text(seed, remaining, rng))
        words = (seed + " " + cont).split()[:length]
        if len(words) <= len(seed.split()):
            return None
        return self.generated(prompt, " ".join(words), index, seed=seed, length=length, source_seed=j, lm=lm)
