"""Ding et al. 2020, Sec. 2.2 "Content Burst": nouns of the prompt's answers and material, drawn by frequency."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from callbluff.attacks.base import GeneratorParams, PromptGenerator, register
from callbluff.attacks.content.common import DING, StateMemo, prompt_answers
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources
from callbluff.resources.ngrams import mean_length, table_cache_dir

NOUN_TAGS = ("NN", "NNS", "NNP", "NNPS")
"""Penn Treebank noun tags (the tag set of the NLTK tagger the paper used; spaCy's ``tag_`` uses it too)."""
_TAGGER_OFF = ["parser", "ner", "lemmatizer", "attribute_ruler"]  # Penn tags come from the tagger alone


def noun_counts(texts: Sequence[str], res: Resources) -> Counter[str]:
    """Frequencies of the nouns of ``texts`` (module doc), kept on disk (beside the generic n-gram tables,
    :func:`~callbluff.resources.ngrams.table_cache_dir`) under the SHA-256 of the texts and the spaCy
    pipeline's name and version, so re-fitting on the same answers skips the tagging (the slow part)."""
    import hashlib
    import json


    meta = res.nlp.meta
    h = hashlib.sha256(f"{meta.get('lang')}_{meta.get('name')}-{meta.get('version')}|{NOUN_TAGS}".encode())
    for t in texts:
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    path = table_cache_dir() / f"burst-nouns-{h.hexdigest()[:24]}.json"
    if path.is_file():
        try:
            return Counter(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            pass
    nouns: Counter[str] = Counter()
    for doc in res.nlp.pipe(texts, batch_size=256, disable=_TAGGER_OFF):
        for tok in doc:
            if tok.tag_ in NOUN_TAGS and any(c.isalnum() for c in tok.text):
                nouns[tok.text if tok.tag_.startswith("NNP") else tok.text.lower()] += 1
    try:
        path.write_text(json.dumps(nouns), encoding="utf-8")
    except OSError:
        pass
    return nouns


def _cumulative(state: dict[str, Any]) -> np.ndarray:
    return np.cumsum(np.asarray(state["counts"], dtype=np.int64))


@register
class ContentBurst(PromptGenerator[GeneratorParams]):
    """Frequency-weighted nouns of the prompt's answers and material (Ding et al. 2020, Sec. 2.2 "Content
    Burst", Table 2 "Content Burst", e.g. *panda eat bamboo koala eucalyptus python America need fact*).

    "We use the NLTK part-of-speech tagger to collect all nouns in the prompt source material and student
    answers ... We then generate adversarial answers by sampling from the frequency-weighted set of nouns.
    This is equivalent to a unigram model if we reduce ASAP to nouns." We tag with spaCy's English
    pipeline (Penn Treebank tags, :data:`NOUN_TAGS`, from its tagger; parser, NER, lemmatizer and
    attribute ruler off). Choices: the material is the
    prompt's ``text`` and ``source`` when the dataset has them (ASAP-SAS as loaded has neither, so only the
    answers count there); common nouns are lower-cased, proper nouns (NNP, NNPS) keep their case; each noun
    token counts once per occurrence; an answer has as many nouns as the prompt's answers have words on
    average, drawn independently by frequency and joined by spaces. No nouns, no answers. A robust scorer
    gives these answers the bottom score (ARR, Sec. 3.2).
    """

    name = "ContentBurst"
    task = "content"
    family = "burst"
    paper = DING
    description = "Nouns of the prompt's answers and material, drawn by frequency."
    Params = GeneratorParams
    record_type = ScoredResponse
    requires = ("spacy-parse",)
    expect = "bottom"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._memo: StateMemo[np.ndarray] = StateMemo(_cumulative)

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        answers = prompt_answers(records)
        material = [t for t in ((prompt.text, prompt.source) if prompt is not None else ()) if t and t.strip()]
        ordered = sorted(noun_counts(material + answers, res).items())
        return {"length": mean_length(answers, "word"), "n_answers": len(answers),
                "nouns": [w for w, _ in ordered], "counts": [c for _, c in ordered]}

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        length = int(state["length"])
        if length < 1 or not state["nouns"]:
            return None
        cum = self._memo(state)
        picks = np.searchsorted(cum, rng.integers(0, int(cum[-1]), size=length), side="right")
        return self.generated(prompt, " ".join(state["nouns"][i] for i in picks.tolist()), index, length=length)
