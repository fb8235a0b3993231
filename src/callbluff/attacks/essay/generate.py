"""Generate family of Kumar et al. 2020, "Calling Out Bluff" (Sec. 3.4, "Generative Adversaries"): BabelGen.

Kumar et al. fed three keywords per ASAP-AES prompt to Les Perelman's BABEL generator (Basic Automatic B.S.
Essay Language Generator) and scored the "incoherent, meaningless sample containing a concoction of obscure
words and keywords pasted together" that came out; ideally it scores zero, yet "almost all the models scored
at least 60%" (Sec. 4, Table 4). BABEL itself is not redistributable, so :class:`BabelGen` is an original
generator in its spirit: its own sentence templates filled with rare-but-real words (wordfreq Zipf
frequency, part of speech from WordNet, inflection by lemminflect) and the prompt's keywords.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from pydantic import Field, field_validator, model_validator

from callbluff.attacks.base import GeneratorParams, PromptGenerator, register
from callbluff.attacks.essay.common import KUMAR
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources import fit_cache
from callbluff.resources.context import Resources
from callbluff.resources.fit_cache import versions

# -- sentence templates (original; slots: K keyword, N noun, Ns plural noun, A adjective, V verb (base),
#    Vz 3rd person singular, Vd past participle, Ving gerund, R adverb). Every template is one sentence. ------

OPENINGS: tuple[str, ...] = (
    "Throughout the {A} chronicle of {Ns}, {K} {Vz} the {N} of every {A} {N}.",
    "Few subjects are as {A} as {K}, which {Vz} {Ns} and {Vz} the {N} of {Ns}.",
    "It is through {K} that {Ns} {V} their {A} {Ns} and {V} the {N} of our {N}.",
    "Since the earliest {Ns} of {N}, {K} has been {Vd} by {Ns} and {Vd} by {A} {Ns}.",
)
BODY: tuple[str, ...] = (
    "{K} {Vz} the {A} {N} of {Ns}.",
    "Every {N} that {Vz} {K} must {R} {V} the {Ns} of {A} {Ns}.",
    "Whereas {Ns} {V} {K}, the {N} of {Ns} {Vz} {R}.",
    "It is {K}, not the {N}, that {Vz} the {A} {Ns} of our {N}.",
    "{K} {R} {Vz} {Ns}, yet the {A} {N} {Vz} the {Ns} of {K}.",
    "Insofar as {Ns} {V} {K}, the {A} {N} will {R} {V} every {N}.",
    "The {N} of {K} is {A}; the {N} of {Ns} is {R} {A}.",
    "Consider the {N}: it {Vz} {K} and {Vz} the {A} {Ns} that {V} it.",
    "Can any {N} {V} {K} without {Ving} the {A} {N}?",
    "To {V} {K} is to {V} the {Ns} of every {A} {N}.",
    "By {Ving} {Ns}, {K} {Vz} the {A} {N} of {Ns}.",
    "Because {Ns} {V} the {N}, {K} can {R} {V} {A} {Ns}.",
    "The more {Ns} {V} {K}, the more {A} the {N} becomes.",
    "Our {A} {N} with {K} {Vz} {Ns} in the {N} of {Ns}.",
    "Neither the {N} nor the {N} {Vz} {K} as {R} as the {A} {N} does.",
    "{Ns} of {K} {V} {A} {Ns}, and {A} {Ns} {V} them in return.",
    "Scarcely any {N} is as {A} as {K}, which {R} {Vz} the {N}.",
    "The {A} {N} {Vz} {Ns}, and every {N} {Vz} the {N} {R}.",
    "Some {Ns} {V} the {N}; others {V} {Ns} of {A} {N}.",
    "When the {N} {Vz}, {Ns} {V} the {A} {Ns} of {N}.",
    "No {N} can {R} {V} the {Ns} that the {A} {N} has {Vd}.",
    "The {N} is {A}, but its {Ns} are {R} {A}.",
    "Were {Ns} to {V} the {N}, the {A} {N} would {V} {Ns}.",
    "{Ns} that {V} the {N} are {Vd} by {A} {Ns} of {N}.",
)
KEYWORD_BODY: tuple[str, ...] = tuple(t for t in BODY if "{K}" in t)
"""Body templates with a keyword slot: used while a keyword has not appeared yet."""
CONNECTIVES: tuple[str, ...] = (
    "Moreover, ", "Consequently, ", "Nevertheless, ", "By the same token, ", "Notwithstanding this, ",
    "In this light, ", "Admittedly, ", "Indeed, ", "Paradoxically, ", "In the realm of {K}, ",
    "As the {Ns} of {N} attest, ",
)
CLOSINGS: tuple[str, ...] = (
    "In the final reckoning, {K} will {R} {V} the {A} {N} of {Ns}.",
    "Thus {K} {Vz} the {N}, and the {Ns} of {N} {V} {R} ever after.",
    "In conclusion, {K} is the {A} {N} of our {Ns} and will {R} remain so.",
    "Ultimately, whoever {Vz} {K} {Vz} the {A} {Ns} of every {N}.",
)
CLOSING_ROOM = 25
"""Body sentences are added while at least this many words are missing; then one closing sentence ends the
essay, so its length is within ``CLOSING_ROOM`` words of the target (once every keyword is used)."""
SLOT = re.compile(r"\{(K|Ns|N|A|Vz|Vd|Ving|V|R)\}")

# -- the vocabulary --------------------------------------------------------------------------------------

TRANSITIVE_FRAMES = frozenset({8, 9, 10, 11})
"""WordNet verb frames 8-11: "Somebody ----s something / somebody", "Something ----s somebody / something"."""
UNFIT_GLOSS = re.compile(r"\b(vulgar|obscene|offensive|derogatory|disparaging|slur|slang|profan\w*|"
                         r"sexual\w*|genital\w*|racist|masturbat\w*|copulat\w*|prostitut\w*|excrement|feces|buttocks)\b", re.I)
"""WordNet glosses that mark a word unfit for a school essay generator (the word is left out)."""


def _inflections(lemma: str, tags: Sequence[str]) -> tuple[str, ...] | None:
    from lemminflect import getInflection

    out = []
    for tag in tags:
        forms = getInflection(lemma, tag)
        if not forms or not forms[0].isalpha():
            return None
        out.append(forms[0])
    return tuple(out)


def _resource_versions() -> str:
    """What :func:`babel_vocabulary` and :func:`top_nouns` read besides their arguments: the WordNet data
    version and the versions of nltk, wordfreq, lemminflect and scikit-learn."""
    from nltk.corpus import wordnet as wn

    return f"wordnet={wn.get_version()};" + versions("nltk", "wordfreq", "lemminflect", "scikit-learn")


@lru_cache(maxsize=8)
def babel_vocabulary(zipf_min: float, zipf_max: float, min_length: int) -> dict[str, tuple[tuple[str, ...], ...]]:
    """:func:`build_babel_vocabulary`, kept on disk across runs (``fit_cache.cache_root("babel-vocabulary")``, keyed by
    the arguments, :func:`_resource_versions` and the source of this package, off with ``CALLBLUFF_FIT_CACHE=0``; the
    same words as building it: building takes ~20 s, every process that generates needs it) and in memory."""
    if not fit_cache.enabled():
        return build_babel_vocabulary(zipf_min, zipf_max, min_length)
    key = hashlib.sha256(f"{zipf_min!r}|{zipf_max!r}|{min_length!r}|{_resource_versions()}|"
                         f"{fit_cache.code_fingerprint(__name__)}".encode()).hexdigest()
    path = None
    try:
        path = fit_cache.cache_root("babel-vocabulary") / f"{key}.json"
        stored = json.loads(path.read_text(encoding="utf-8"))
        return {k: tuple(tuple(w) for w in v) for k, v in stored.items()}
    except (OSError, ValueError, AttributeError):  # not there yet, or unreadable: build it (again)
        pass
    vocab = build_babel_vocabulary(zipf_min, zipf_max, min_length)
    if path is not None:
        try:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(vocab), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:  # a read-only or full cache directory: not kept, built again next time
            pass
    return vocab


def build_babel_vocabulary(zipf_min: float, zipf_max: float,
                           min_length: int) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Rare-but-real English words by part of speech, each with the inflections the templates use.

    A word is kept when it is a lower-case alphabetic WordNet lemma of at least ``min_length`` letters whose
    part of speech is unambiguous in WordNet (it is a lemma of exactly one of noun, verb, adjective, adverb),
    whose wordfreq Zipf frequency lies in ``[zipf_min, zipf_max]`` (rare but attested: Zipf 3 is once per
    million words), that is a countable common noun (lemminflect gives a plural that differs; not only a proper noun), that no WordNet gloss marks vulgar or offensive, and
    that lemminflect can inflect. Verbs must allow a transitive WordNet frame (the templates give them an
    object); adverbs must end in "-ly" (the grandiloquent manner adverbs BABEL favours).

    Returns ``{"N": ((noun, plural), ...), "V": ((base, 3sg, past participle, gerund), ...), "A": ((adj,),
    ...), "R": ((adverb,), ...)}``, each sorted, so a seed gives the same essay on every machine with the same
    wordfreq and WordNet versions (:func:`vocabulary_fingerprint`).
    """
    from nltk.corpus import wordnet as wn
    from wordfreq import get_frequency_dict

    freq = get_frequency_dict("en", wordlist="large")
    names = {pos: set(wn.all_lemma_names(pos)) for pos in ("n", "v", "a", "r")}
    out: dict[str, list[tuple[str, ...]]] = {"N": [], "V": [], "A": [], "R": []}
    for pos, key in (("n", "N"), ("v", "V"), ("a", "A"), ("r", "R")):
        others = set().union(*(names[p] for p in names if p != pos))
        for w in sorted(names[pos] - others):
            if len(w) < min_length or not w.isalpha() or not w.islower() or w not in freq:
                continue
            zipf = np.log10(freq[w] * 1e9)
            if not zipf_min <= zipf <= zipf_max:
                continue
            if key == "R" and not w.endswith("ly"):
                continue
            lemmas = [lem for s in wn.synsets(w, pos) for lem in s.lemmas() if lem.name().lower() == w]
            if not lemmas or any(UNFIT_GLOSS.search(lem.synset().definition()) for lem in lemmas):
                continue
            if key == "N":
                if not any(lem.name() == w for lem in lemmas):  # only capitalised: a proper noun
                    continue
                forms = _inflections(w, ("NNS",))
                if forms is None or forms[0] == w:  # mass nouns: no plural for the {Ns} slots
                    continue
            elif key == "V":
                if not any(TRANSITIVE_FRAMES & set(lem.frame_ids()) for lem in lemmas):
                    continue
                forms = _inflections(w, ("VBZ", "VBN", "VBG"))
            else:
                forms = ()
            if forms is not None:
                out[key].append((w, *forms))
    return {k: tuple(v) for k, v in out.items()}


def vocabulary_fingerprint(vocab: dict[str, tuple[tuple[str, ...], ...]]) -> str:
    """A short SHA-256 of a vocabulary (stored in the fit state, so a changed word list changes the hash)."""
    text = "\n".join(f"{k}:{'|'.join(','.join(w) for w in vocab[k])}" for k in sorted(vocab))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# -- keywords --------------------------------------------------------------------------------------------

WORD = re.compile(r"(?<![@\w])[a-z]+(?![\w])")
"""Lower-cased alphabetic words; ASAP-AES anonymisation tokens (``@CAPS1``, ``@PERSON2``) are skipped."""


@lru_cache(maxsize=200_000)
def noun_lemma(word: str) -> str | None:
    """The WordNet noun lemma of ``word`` when it is mostly used as a noun and is no stop word; else None.
    ``students`` -> ``student``. "Mostly a noun": its noun senses have at least the SemCor tag count of the
    senses of any other part of speech (then at least as many senses), so ``ship`` is a noun, ``quickly`` not."""
    from nltk.corpus import wordnet as wn
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    if len(word) < 3 or word in ENGLISH_STOP_WORDS:
        return None
    forms = wn._morphy(word, wn.NOUN)  # every WordNet base form; the shortest undoes the plural (hours -> hour)
    lemma = min(forms, key=lambda f: (len(f), f)) if forms else None
    if lemma is None or lemma in ENGLISH_STOP_WORDS or not lemma.isalpha():
        return None
    def weight(pos: str) -> tuple[int, int]:  # (SemCor sense-tagged count, number of senses)
        lemmas = [lem for syn in wn.synsets(lemma, pos) for lem in syn.lemmas() if lem.name().lower() == lemma]
        return sum(lem.count() for lem in lemmas), len(lemmas)

    n_noun = weight(wn.NOUN)
    others = max(weight(p) for p in (wn.VERB, wn.ADJ, wn.ADV))
    return lemma if n_noun >= others else None


def nouns(text: str) -> list[str]:
    """The noun lemmas of ``text`` in order (see :func:`noun_lemma`)."""
    return [lem for w in WORD.findall(text.lower()) if (lem := noun_lemma(w)) is not None]


def top_nouns(prompt_text: str, essays: Sequence[str], n: int) -> list[str]:
    """The ``n`` keywords of a prompt: its top TF-IDF nouns.

    Candidates are the nouns of the prompt text when it has at least ``n`` distinct ones, else the nouns of
    the essays. Each candidate is scored by its summed TF-IDF (scikit-learn, sublinear tf) over the prompt's
    essays, or over the prompt text alone when there are no essays; ties go alphabetically.
    """
    from sklearn.feature_extraction.text import TfidfVectorizer

    in_prompt = set(nouns(prompt_text))
    docs = [e for e in essays if e.strip()] or ([prompt_text] if prompt_text.strip() else [])
    if not docs:
        return []
    vec = TfidfVectorizer(analyzer=nouns, sublinear_tf=True)
    try:
        matrix = vec.fit_transform(docs)
    except ValueError:  # no noun in any document
        return sorted(in_prompt)[:n]
    scores = dict(zip(vec.get_feature_names_out(), np.asarray(matrix.sum(axis=0)).ravel()))
    candidates = in_prompt if len(in_prompt) >= n else set(scores)
    ranked = sorted(candidates, key=lambda w: (-scores.get(w, 0.0), w))
    return ranked[:n]


# -- the generator ---------------------------------------------------------------------------------------


class BabelGenParams(GeneratorParams):
    """BabelGen settings. ``count`` defaults to 15, the number of BABEL essays per prompt the authors released
    (Kumar et al.'s supplementary sets); ``keywords`` are used as given (BABEL takes three), else
    ``n_keywords`` are extracted by :func:`top_nouns`; the essay has ``length_ratio`` x the prompt's mean essay
    length in words; vocabulary words have a Zipf frequency in ``[zipf_min, zipf_max]`` and at least
    ``min_length`` letters."""

    count: int = Field(15, ge=1)
    keywords: tuple[str, ...] | None = None
    n_keywords: int = Field(3, ge=1, le=10)
    length_ratio: float = Field(1.0, gt=0, le=10)
    zipf_min: float = Field(1.5, ge=0, le=8)
    zipf_max: float = Field(3.3, ge=0, le=8)
    min_length: int = Field(6, ge=1, le=30)

    @field_validator("keywords")
    @classmethod
    def _keywords(cls, v: tuple[str, ...] | None) -> tuple[str, ...] | None:
        if v is None:
            return v
        cleaned = tuple(" ".join(k.split()) for k in v)
        if not cleaned or any(not k for k in cleaned):
            raise ValueError("keywords must be non-empty strings, e.g. [\"computer\", \"family\", \"friend\"]")
        return cleaned

    @model_validator(mode="after")
    def _zipf(self) -> BabelGenParams:
        if self.zipf_min > self.zipf_max:
            raise ValueError(f"zipf_min {self.zipf_min} is above zipf_max {self.zipf_max}")
        return self


@register
class BabelGen(PromptGenerator[BabelGenParams]):
    """BABEL-style nonsense essays for a prompt (Kumar et al. 2020, Sec. 3.4 "BabelGen", Tables 1 and 4).

    The paper gave Perelman's BABEL three keywords related to each prompt; BABEL answers with a long,
    grandiloquent essay of obscure words and the keywords "pasted together". Ideally scored zero (``expect =
    "bottom"``); the paper's models gave at least 60% of the range. This is an original re-creation, not BABEL:

    - ``fit`` learns, per prompt, the mean essay length in whitespace words of the prompt's records and the
      keywords: ``keywords`` when given, else the prompt's top TF-IDF nouns (:func:`top_nouns`: from the
      prompt text when it names enough nouns, else from the essays; the paper's keyword list is not public).
    - ``generate_one`` writes sentences from original templates (module constants ``OPENINGS``, ``BODY``,
      ``CONNECTIVES``, ``CLOSINGS``) filled with rare-but-real words (:func:`babel_vocabulary`): an opening,
      body sentences (about one in three led by a discourse connective) while at least ``CLOSING_ROOM`` (25)
      words of ``length_ratio`` x the mean length are missing, then one closing sentence, so the length is
      within 25 words of the target. The keywords (in a random order) fill the first keyword slots, so each
      appears; later slots draw one at random. Paragraphs hold 4-7 sentences.
    - Every draw comes from the answer's own ``rng``; a prompt without records and without keywords, or
      with no keyword found, gets no essay (not applicable, never a keyword-less essay).
    """

    name = "BabelGen"
    task = "essay"
    family = "generate"
    paper = KUMAR
    description = "BABEL-style grandiloquent nonsense essays from three prompt keywords (length-matched)."
    Params = BabelGenParams
    record_type = ScoredResponse
    requires = ("wordnet", "wordfreq", "lemminflect")
    expect = "bottom"

    def _vocabulary(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        p = self.params
        return babel_vocabulary(float(p.zipf_min), float(p.zipf_max), int(p.min_length))

    def fit_fingerprint(self) -> str | None:
        """Persist the fitted state across runs (:mod:`callbluff.resources.fit_cache`): the fit reads WordNet,
        wordfreq, lemminflect and scikit-learn (:func:`_resource_versions`)."""
        return _resource_versions()

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        """Mean essay length (whitespace words) and keywords of the prompt; see the class docstring."""
        p = self.params
        texts = [r.text for r in records if isinstance(r, ScoredResponse) and r.text.strip()]
        mean_words = float(np.mean([len(t.split()) for t in texts])) if texts else None
        if p.keywords is not None:
            keywords = list(p.keywords)
        else:
            keywords = top_nouns(prompt.text if prompt else "", texts, int(p.n_keywords))
        return {"mean_words": mean_words, "keywords": keywords, "n_essays": len(texts),
                "vocabulary": vocabulary_fingerprint(self._vocabulary())}

    def generate_one(self, index: int, prompt: Prompt, state: Any, rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        if not state or not state.get("keywords") or not state.get("mean_words"):
            return None
        vocab = self._vocabulary()
        if not all(vocab[k] for k in ("N", "V", "A", "R")):
            return None
        keywords: list[str] = list(state["keywords"])
        target = max(1, round(float(state["mean_words"]) * float(self.params.length_ratio)))
        text, n_sentences, n_paragraphs, n_words = compose(keywords, target, vocab, rng)
        return self.generated(prompt, text, index, keywords=keywords, target_words=target, n_words=n_words,
                              n_sentences=n_sentences, n_paragraphs=n_paragraphs)


def compose(keywords: Sequence[str], target: int, vocab: dict[str, tuple[tuple[str, ...], ...]],
            rng: np.random.Generator) -> tuple[str, int, int, int]:
    """One essay of at least ``target`` words: ``(text, sentences, paragraphs, words)`` (see :class:`BabelGen`)."""
    order = [keywords[int(i)] for i in rng.permutation(len(keywords))]
    pending = list(order)  # keywords not used yet: each goes into the first keyword slots

    def keyword() -> str:
        return pending.pop(0) if pending else order[int(rng.integers(len(order)))]

    def pick(key: str) -> tuple[str, ...]:
        words = vocab[key]
        return words[int(rng.integers(len(words)))]

    def fill(template: str) -> str:
        def slot(m: re.Match[str]) -> str:
            s = m.group(1)
            if s == "K":
                return keyword()
            if s in ("N", "Ns"):
                noun = pick("N")
                return noun[0] if s == "N" else noun[1]
            if s in ("V", "Vz", "Vd", "Ving"):
                return pick("V")[("V", "Vz", "Vd", "Ving").index(s)]
            return pick(s)[0]

        return SLOT.sub(slot, template)

    def sentence(templates: Sequence[str], connective: bool) -> str:
        template = templates[int(rng.integers(len(templates)))]
        body = fill(template)
        if connective:
            lead = fill(CONNECTIVES[int(rng.integers(len(CONNECTIVES)))])
            body = lead + (body if template.startswith("{") else body[:1].lower() + body[1:])
        return body[:1].upper() + body[1:]

    sentences: list[str] = []
    n_words = 0
    while not sentences or pending or target - n_words >= CLOSING_ROOM:
        if not sentences:
            s = sentence(OPENINGS, False)
        else:
            s = sentence(KEYWORD_BODY if pending else BODY, bool(rng.random() < 1 / 3))
        sentences.append(s)
        n_words += len(s.split())
    s = sentence(CLOSINGS, False)
    sentences.append(s)
    n_words += len(s.split())
    paragraphs: list[list[str]] = []
    i = 0
    while i < len(sentences):
        size = int(rng.integers(4, 8))
        paragraphs.append(sentences[i:i + size])
        i += size
    text = "\n\n".join(" ".join(p) for p in paragraphs)
    return text, len(sentences), len(paragraphs), n_words
