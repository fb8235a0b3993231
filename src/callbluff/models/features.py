"""Feature extraction shared by the shallow reference scorers (:mod:`~callbluff.models.content`,
:mod:`~callbluff.models.essay`).

Two families live here:

* **Content-scoring feature groups** (Ding et al. 2020, Sec. 3.1 and Sec. 5.1), assembled by
  :class:`ContentFeaturizer`. The shallow system Ding et al. attack is ESCRITO's SVM "with the top 10000
  character 2-5 grams, the top 10000 word 1-5 grams, and answer length"; the countermeasure experiments add
  "the top 1000 most frequent dependency triples from the training data" and "POS n-grams", and remove
  character n-grams and word unigrams. Groups (names used everywhere in callbluff):

  ==============  ===============================================================================
  ``char``        top ``max_char`` (10,000) character 2-5-grams of the lower-cased answer
  ``word_unigram`` word 1-grams  } together the top ``max_word`` (10,000) word n-grams of the orders
  ``word_2_5``    word 2-5-grams } that are switched on (1-5 when both groups are on, as in the paper)
  ``length``      answer length in word tokens
  ``dep_triples`` top ``max_dep`` (1,000) dependency triples ``head-lemma|label|child-lemma`` (spaCy)
  ``pos_ngrams``  top ``max_pos`` (1,000) n-grams (1-3) of Penn Treebank tags (spaCy tagger)
  ==============  ===============================================================================

  "Top" means most frequent in the training answers of the prompt (ESCRITO/DKPro frequency cut-off;
  the selection uses no labels). N-gram features are binary (present / absent), as in ESCRITO.
  Length is min-max normalised on the training answers, like Weka's SMO normalises every attribute to
  [0, 1]; test answers longer than any training answer get values above 1 (no clipping: a linear model
  over normalised attributes extrapolates, which is exactly what length-padding attacks probe).

* **Essay (EASE-like) statistics** (Kumar et al. 2020, Sec. 2.2: EASE uses "tags, prompt-word overlap,
  n-gram based features, etc."), computed by :func:`essay_statistics`: length, sentence and word
  statistics, POS-tag proportions, spelling errors and prompt/source overlap.

spaCy analyses (tags, dependency triples) are cached per text in-process (:func:`spacy_analyses`), so
re-scoring the same answers (cross-validation, attacks that keep most of a text) costs nothing.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import CountVectorizer

from callbluff.progress import Progress, every
from callbluff.resources.hunspell import expand_hunspell, hunspell_files
from callbluff.resources.spacy_pipeline import load_english

__all__ = [
    "CONTENT_GROUPS",
    "PAPER_GROUPS",
    "ContentFeaturizer",
    "ESSAY_STAT_NAMES",
    "essay_statistics",
    "spacy_analyses",
    "spelling_vocabulary",
    "word_tokens",
]

CONTENT_GROUPS: tuple[str, ...] = ("char", "word_unigram", "word_2_5", "length", "dep_triples", "pos_ngrams")
"""All content-scoring feature groups, in the column order of :class:`ContentFeaturizer`."""

PAPER_GROUPS: tuple[str, ...] = ("char", "word_unigram", "word_2_5", "length")
"""Ding et al.'s shallow system (Sec. 3.1): character 2-5-grams, word 1-5-grams and answer length."""

WORD_TOKEN_PATTERN = r"(?u)\b\w+\b"
"""Word tokens for n-grams and length: runs of word characters (keeps one-letter words and numbers)."""
_WORD_RE = re.compile(WORD_TOKEN_PATTERN)
_NEEDS_SPACY = frozenset({"dep_triples", "pos_ngrams"})


def word_tokens(text: str) -> list[str]:
    """Lower-cased word tokens (:data:`WORD_TOKEN_PATTERN`)."""
    return _WORD_RE.findall(text.lower())


def _identity(items: Any) -> Any:
    """Analyzer for pre-tokenised feature lists (module-level so fitted vectorizers pickle)."""
    return items


def check_groups(groups: Iterable[str]) -> tuple[str, ...]:
    """Validate and order feature group names; raises naming the unknown ones and the allowed names."""
    given = list(groups)
    if isinstance(groups, str):
        given = [g.strip() for g in groups.split(",") if g.strip()]
    unknown = [g for g in given if g not in CONTENT_GROUPS]
    if unknown:
        raise ValueError(f"unknown content feature group(s) {unknown}; allowed: {', '.join(CONTENT_GROUPS)}")
    if not given:
        raise ValueError(f"no feature groups selected; choose from {', '.join(CONTENT_GROUPS)}")
    return tuple(g for g in CONTENT_GROUPS if g in given)


# --------------------------------------------------------------------------------------------------
# spaCy analyses (cached)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Analysis:
    """What the scorers use of a spaCy parse: Penn tags, coarse UPOS tags and dependency triples."""

    tags: tuple[str, ...]
    upos: tuple[str, ...]
    triples: tuple[str, ...] | None  # None when only the tagger ran


class _LRU:
    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self.data: OrderedDict[tuple[str, bool], Analysis] = OrderedDict()

    def get(self, key: tuple[str, bool]) -> Analysis | None:
        v = self.data.get(key)
        if v is not None:
            self.data.move_to_end(key)
        return v

    def put(self, key: tuple[str, bool], value: Analysis) -> None:
        self.data[key] = value
        self.data.move_to_end(key)
        while len(self.data) > self.maxsize:
            self.data.popitem(last=False)


_CACHE = _LRU(200_000)


def _nlp() -> Any:
    return load_english("full")


def spacy_analyses(texts: Sequence[str], *, parse: bool, max_chars: int | None = None,
                   batch_size: int = 128, progress: Progress | None = None) -> list[Analysis]:
    """spaCy tags (and, with ``parse``, dependency triples) of ``texts``, cached per (text, parse).

    Tagging only runs ``tok2vec`` + ``tagger`` + ``attribute_ruler``; parsing adds the parser and the
    lemmatizer (NER is never run). ``max_chars`` analyses only the first ``max_chars`` characters of long
    texts (used for essays, where POS proportions of a long prefix are what the features need).
    Dependency triples are ``head lemma|dependency label|child lemma`` (lower-cased lemmas) for every
    non-punctuation, non-space token except the root, following Ding et al. Sec. 5.1 ("koala <conjunct>
    panda"). ``progress`` hears stage ``spaCy parses`` (or ``spaCy tags``) with the texts analysed so far
    (cached ones count at once).
    """
    stage = "spaCy parses" if parse else "spaCy tags"
    out: list[Analysis | None] = [None] * len(texts)
    todo: dict[str, list[int]] = {}
    for i, t in enumerate(texts):
        t = t if max_chars is None else t[:max_chars]
        hit = _CACHE.get((t, parse)) or (None if parse else _CACHE.get((t, True)))
        if hit is not None:
            out[i] = hit
        else:
            todo.setdefault(t, []).append(i)
    done = sum(a is not None for a in out)
    if progress is not None:
        progress(stage, done, len(texts))
    if todo:
        disable = ["ner"] if parse else ["ner", "parser", "lemmatizer"]
        nlp = _nlp()
        uniq = list(todo)
        for k, (text, doc) in enumerate(zip(uniq, nlp.pipe(uniq, disable=disable, batch_size=batch_size),
                                            strict=True)):
            toks = [t for t in doc if not t.is_space]
            triples = None
            if parse:
                triples = tuple(f"{t.head.lemma_.lower()}|{t.dep_}|{t.lemma_.lower()}" for t in toks
                                if t.dep_ not in ("ROOT", "punct") and not t.is_punct and t.head is not t)
            a = Analysis(tuple(t.tag_ for t in toks), tuple(t.pos_ for t in toks), triples)
            _CACHE.put((text, parse), a)
            for i in todo[text]:
                out[i] = a
            done += len(todo[text])
            if progress is not None and every(32, k + 1, len(uniq)):
                progress(stage, done, len(texts))
    return [a for a in out if a is not None]


def _pos_ngrams(tags: Sequence[str], n_min: int, n_max: int) -> list[str]:
    return [" ".join(tags[i:i + n]) for n in range(n_min, n_max + 1) for i in range(len(tags) - n + 1)]


# --------------------------------------------------------------------------------------------------
# Content feature groups
# --------------------------------------------------------------------------------------------------


class ContentFeaturizer:
    """The feature groups of Ding et al.'s shallow system and its countermeasure variants (module doc).

    ``fit(texts)`` selects the vocabularies on one prompt's training answers; ``blocks(texts)`` returns one
    sparse matrix per group (unweighted, binary n-grams, normalised length); ``transform(texts, weights)``
    stacks them, each block multiplied by its weight (default 1). Column order is :data:`CONTENT_GROUPS`
    order; :meth:`feature_names` names every column ``group:feature``.
    """

    def __init__(self, groups: Iterable[str] = PAPER_GROUPS, *, max_char: int = 10_000,
                 char_ngrams: tuple[int, int] = (2, 5), max_word: int = 10_000, max_word_n: int = 5,
                 max_dep: int = 1_000, max_pos: int = 1_000, pos_ngrams: tuple[int, int] = (1, 3)) -> None:
        self.groups = check_groups(groups)
        self.max_char = int(max_char)
        self.char_ngrams = (int(char_ngrams[0]), int(char_ngrams[1]))
        self.max_word = int(max_word)
        self.max_word_n = int(max_word_n)
        self.max_dep = int(max_dep)
        self.max_pos = int(max_pos)
        self.pos_ngrams = (int(pos_ngrams[0]), int(pos_ngrams[1]))
        self.vectorizers: dict[str, CountVectorizer] = {}
        self.word_split: int = 0  # number of word-unigram columns at the front of the word vocabulary
        self.word_order: np.ndarray | None = None
        self.length_min = 0.0
        self.length_span = 1.0
        self.fitted = False

    @property
    def params(self) -> dict[str, Any]:
        return {"groups": list(self.groups), "max_char": self.max_char, "char_ngrams": list(self.char_ngrams),
                "max_word": self.max_word, "max_word_n": self.max_word_n, "max_dep": self.max_dep,
                "max_pos": self.max_pos, "pos_ngrams": list(self.pos_ngrams)}

    def _analyses(self, texts: Sequence[str], progress: Progress | None = None) -> list[Analysis] | None:
        if not _NEEDS_SPACY & set(self.groups):
            return None
        return spacy_analyses(texts, parse="dep_triples" in self.groups, progress=progress)

    def _spacy_docs(self, group: str, analyses: Sequence[Analysis]) -> list[list[str]]:
        if group == "dep_triples":
            return [list(a.triples or ()) for a in analyses]
        return [_pos_ngrams(a.tags, *self.pos_ngrams) for a in analyses]

    def fit(self, texts: Sequence[str], progress: Progress | None = None) -> ContentFeaturizer:
        """Select the vocabularies on ``texts``; ``progress`` hears the spaCy analyses per text (the slow part)."""
        texts = list(texts)
        if not texts:
            raise ValueError("ContentFeaturizer.fit: no training texts")
        g = set(self.groups)
        self.vectorizers = {}
        if "char" in g:
            v = CountVectorizer(analyzer="char", ngram_range=self.char_ngrams, lowercase=True, binary=True,
                                max_features=self.max_char, dtype=np.float64)
            v.fit(texts)
            self.vectorizers["char"] = v
        words = [x for x in ("word_unigram", "word_2_5") if x in g]
        if words:
            lo = 1 if "word_unigram" in g else 2
            hi = self.max_word_n if "word_2_5" in g else 1
            v = CountVectorizer(analyzer="word", ngram_range=(lo, hi), lowercase=True, binary=True,
                                token_pattern=WORD_TOKEN_PATTERN, max_features=self.max_word, dtype=np.float64)
            v.fit(texts)
            names = v.get_feature_names_out()
            unigram = np.array([" " not in n for n in names])
            # columns: unigrams first (word_unigram block), then 2-5-grams (word_2_5 block)
            self.word_order = np.concatenate([np.flatnonzero(unigram), np.flatnonzero(~unigram)])
            self.word_split = int(unigram.sum())
            self.vectorizers["word"] = v
        analyses = self._analyses(texts, progress)
        for grp, cap in (("dep_triples", self.max_dep), ("pos_ngrams", self.max_pos)):
            if grp in g:
                assert analyses is not None
                v = CountVectorizer(analyzer=_identity, binary=True, max_features=cap, dtype=np.float64)
                docs = self._spacy_docs(grp, analyses)
                if not any(docs):
                    docs = [[f"<no-{grp}>"]] + docs[1:]
                v.fit(docs)
                self.vectorizers[grp] = v
        if "length" in g:
            n = np.array([len(word_tokens(t)) for t in texts], dtype=np.float64)
            self.length_min = float(n.min())
            self.length_span = float(max(n.max() - n.min(), 1.0))
        self.fitted = True
        return self

    def blocks(self, texts: Sequence[str]) -> dict[str, sparse.csr_matrix]:
        """One CSR matrix per selected group (rows = texts), unweighted."""
        if not self.fitted:
            raise RuntimeError("ContentFeaturizer: call fit() first")
        texts = list(texts)
        out: dict[str, sparse.csr_matrix] = {}
        g = set(self.groups)
        if "char" in g:
            out["char"] = self.vectorizers["char"].transform(texts).tocsr()
        if "word" in self.vectorizers:
            w = self.vectorizers["word"].transform(texts).tocsr()[:, self.word_order]
            if "word_unigram" in g:
                out["word_unigram"] = w[:, : self.word_split].tocsr()
            if "word_2_5" in g:
                out["word_2_5"] = w[:, self.word_split:].tocsr()
        if "length" in g:
            n = np.array([len(word_tokens(t)) for t in texts], dtype=np.float64)
            out["length"] = sparse.csr_matrix(((n - self.length_min) / self.length_span)[:, None])
        analyses = self._analyses(texts)
        for grp in ("dep_triples", "pos_ngrams"):
            if grp in g:
                assert analyses is not None
                out[grp] = self.vectorizers[grp].transform(self._spacy_docs(grp, analyses)).tocsr()
        return {k: out[k] for k in self.groups}

    def transform(self, texts: Sequence[str], weights: Mapping[str, float] | None = None) -> sparse.csr_matrix:
        """All groups side by side, block ``g`` multiplied by ``weights.get(g, 1.0)``."""
        b = self.blocks(texts)
        w = weights or {}
        return sparse.hstack([b[k] * float(w.get(k, 1.0)) for k in self.groups], format="csr")

    def group_sizes(self) -> dict[str, int]:
        """Number of columns of each selected group."""
        if not self.fitted:
            raise RuntimeError("ContentFeaturizer: call fit() first")
        sizes: dict[str, int] = {}
        for k in self.groups:
            if k == "char":
                sizes[k] = len(self.vectorizers["char"].vocabulary_)
            elif k == "word_unigram":
                sizes[k] = self.word_split
            elif k == "word_2_5":
                sizes[k] = len(self.vectorizers["word"].vocabulary_) - self.word_split
            elif k == "length":
                sizes[k] = 1
            else:
                sizes[k] = len(self.vectorizers[k].vocabulary_)
        return sizes

    def feature_names(self) -> list[str]:
        """``group:feature`` for every column, in column order."""
        names: list[str] = []
        for k in self.groups:
            if k == "char":
                names += [f"char:{n}" for n in self.vectorizers["char"].get_feature_names_out()]
            elif k in ("word_unigram", "word_2_5"):
                assert self.word_order is not None
                wn = self.vectorizers["word"].get_feature_names_out()[self.word_order]
                part = wn[: self.word_split] if k == "word_unigram" else wn[self.word_split:]
                names += [f"{k}:{n}" for n in part]
            elif k == "length":
                names.append("length:tokens")
            else:
                names += [f"{k}:{n}" for n in self.vectorizers[k].get_feature_names_out()]
        return names


# --------------------------------------------------------------------------------------------------
# Spelling vocabulary
# --------------------------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def spelling_vocabulary() -> tuple[frozenset[str], str]:
    """(known lower-cased word forms, description of the source).

    Prefers the system Hunspell ``en_US`` dictionary (Debian ``hunspell-en-us``), expanded with its affix
    rules; adds wordfreq's words with Zipf frequency >= 4 (frequent names and modern words Hunspell
    lacks; common misspellings such as "alot" sit below that). Without Hunspell the wordfreq words with
    Zipf >= 3.5 are used, which accepts a few frequent misspellings: the source is recorded in the
    model's metadata so figures stay comparable.
    """
    import wordfreq

    freq = wordfreq.get_frequency_dict("en", wordlist="large")
    files = hunspell_files()
    if files is not None:
        words = expand_hunspell(*files)
        floor = 10 ** (4.0 - 9)
        words.update(w for w, f in freq.items() if f >= floor)
        return frozenset(words), f"hunspell:{files[0]} + wordfreq zipf>=4"
    floor = 10 ** (3.5 - 9)
    return frozenset(w for w, f in freq.items() if f >= floor), "wordfreq zipf>=3.5 (no hunspell en_US found)"


# --------------------------------------------------------------------------------------------------
# Essay statistics (EASE-like)
# --------------------------------------------------------------------------------------------------

UPOS_TAGS: tuple[str, ...] = ("ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
                              "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X")
_BASE_STATS: tuple[str, ...] = (
    "chars", "words", "log_words", "sentences", "log_sentences", "mean_word_len", "std_word_len",
    "mean_sentence_words", "std_sentence_words", "max_sentence_words", "types", "log_types",
    "type_token_ratio", "long_word_share", "very_long_word_share", "commas_per_sentence", "question_marks",
    "exclamations", "quotes", "capitalised_share", "digit_share", "anonymised_tokens", "paragraphs",
    "stopword_share",
)
_SPELL_STATS: tuple[str, ...] = ("spelling_errors", "log_spelling_errors", "spelling_error_rate")
_OVERLAP_STATS: tuple[str, ...] = ("prompt_overlap", "prompt_coverage", "source_overlap", "source_coverage")
ESSAY_STAT_NAMES: tuple[str, ...] = (_BASE_STATS + tuple(f"pos_{t}" for t in UPOS_TAGS) + _SPELL_STATS
                                     + _OVERLAP_STATS)
"""Column names of :func:`essay_statistics` (with ``pos=True``; without, the ``pos_*`` columns are zero)."""

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
_ANON = re.compile(r"@[A-Z]+\d*")


@lru_cache(maxsize=1)
def _stopwords() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


def _content_words(text: str) -> set[str]:
    stop = _stopwords()
    return {w for w in word_tokens(_ANON.sub(" ", text)) if w not in stop and not w.isdigit() and len(w) > 2}


def essay_statistics(texts: Sequence[str], *, prompt_text: str = "", source: str = "", pos: bool = True,
                     spelling: bool = True, pos_max_chars: int | None = 3000,
                     progress: Progress | None = None) -> np.ndarray:
    """EASE-like statistics of ``texts`` (rows) in :data:`ESSAY_STAT_NAMES` order (columns).

    * length / sentence / word statistics: characters, words, sentences (split after ``.!?`` and at line
      breaks), word-length and sentence-length mean and spread, types and type/token ratio, share of long
      words (>= 7 and >= 10 letters), commas per sentence, ``? ! "`` counts, share of capitalised words and
      of numbers, ASAP anonymisation tokens (``@CAPS1``...), paragraphs, share of stop words;
    * POS proportions: share of each Universal POS tag (spaCy tagger over the first ``pos_max_chars``
      characters; EASE counts POS tags too, we use proportions so that the prefix limit does not bias them);
    * spelling: alphabetic lower-cased words not in :func:`spelling_vocabulary` (anonymisation tokens and
      words written with a capital letter inside a sentence, i.e. names, are not counted), count and rate;
    * prompt / source overlap: share of the essay's content words found in the prompt text (``overlap``)
      and share of the prompt's content words the essay uses (``coverage``); the same for the source
      passage. EASE's prompt features are the count and share of the essay's tokens found in the prompt's
      tokens, and the same with the prompt's WordNet synonyms added; ``overlap`` is that share over content-word
      types (stop words, numbers and words under 3 letters left out, so that "the" and "a" do not count as
      prompt words), ``coverage`` the other direction, and the passage gets the same pair (EASE has no
      passage). Zero when the prompt has no text: ASAP-AES's TSV has none, the loader's prompts file
      (``asap-aes:PATH?prompt_texts=FILE``, or ``prompts.json`` beside the TSV) gives the texts of all 8 sets
      and the passages of sets 3-6.

    ``progress`` hears stage ``statistics`` per essay, then ``spaCy tags`` (:func:`spacy_analyses`).
    """
    texts = list(texts)
    n_base = len(_BASE_STATS)
    out = np.zeros((len(texts), len(ESSAY_STAT_NAMES)), dtype=np.float64)
    stop = _stopwords()
    vocab = spelling_vocabulary()[0] if spelling else frozenset()
    prompt_words = _content_words(prompt_text) if prompt_text else set()
    source_words = _content_words(source) if source else set()
    if progress is not None:
        progress("statistics", 0, len(texts))
    for i, text in enumerate(texts):
        words = _WORD_RE.findall(text)
        lw = [w.lower() for w in words]
        nw = len(words)
        sents = [s for s in _SENT_SPLIT.split(text.strip()) if _WORD_RE.search(s)]
        sl = np.array([len(_WORD_RE.findall(s)) for s in sents] or [0], dtype=np.float64)
        wl = np.array([len(w) for w in words] or [0], dtype=np.float64)
        types = len(set(lw))
        ns = max(len(sents), 1)
        row = [
            len(text), nw, math.log1p(nw), len(sents), math.log1p(len(sents)), wl.mean(), wl.std(),
            sl.mean(), sl.std(), sl.max(), types, math.log1p(types), types / max(nw, 1),
            float(np.mean(wl >= 7)) if nw else 0.0, float(np.mean(wl >= 10)) if nw else 0.0,
            text.count(",") / ns, text.count("?"), text.count("!"), text.count('"'),
            sum(w[:1].isupper() for w in words) / max(nw, 1), sum(w.isdigit() for w in words) / max(nw, 1),
            len(_ANON.findall(text)), len([p for p in re.split(r"\n\s*\n|\n", text) if p.strip()]),
            sum(w in stop for w in lw) / max(nw, 1),
        ]
        out[i, :n_base] = row
        j = n_base + len(UPOS_TAGS)
        if spelling:
            plain = _ANON.sub(" ", text)
            errors = 0
            checked = 0
            for s in _SENT_SPLIT.split(plain):
                for k, m in enumerate(re.finditer(r"[A-Za-z]+(?:'[A-Za-z]+)?", s)):
                    w = m.group(0)
                    if k > 0 and w[:1].isupper():
                        continue  # a name, or a capitalised word mid-sentence: not judged
                    checked += 1
                    lw_ = w.lower()
                    if lw_ not in vocab and lw_.split("'")[0] not in vocab:
                        errors += 1
            out[i, j:j + 3] = (errors, math.log1p(errors), errors / max(checked, 1))
        j += 3
        if prompt_words or source_words:
            ess = _content_words(text)
            for k, ref in enumerate((prompt_words, source_words)):
                if ref and ess:
                    inter = len(ess & ref)
                    out[i, j + 2 * k] = inter / len(ess)
                    out[i, j + 2 * k + 1] = inter / len(ref)
        if progress is not None and every(50, i + 1, len(texts)):
            progress("statistics", i + 1, len(texts))
    if pos and texts:
        analyses = spacy_analyses(texts, parse=False, max_chars=pos_max_chars, progress=progress)
        index = {t: k for k, t in enumerate(UPOS_TAGS)}
        for i, a in enumerate(analyses):
            if a.upos:
                counts = np.zeros(len(UPOS_TAGS))
                for p in a.upos:
                    k = index.get(p)
                    if k is not None:
                        counts[k] += 1
                out[i, n_base:n_base + len(UPOS_TAGS)] = counts / len(a.upos)
    return out
