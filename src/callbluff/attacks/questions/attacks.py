"""DPAEG adversarial questions (Sec. 3.5) and the attacks: DPAEG itself and each Sec. 4.4 baseline.

Question generation: the adversarial words of the keywords are combined (one word per changed keyword,
one keyword or several) and a question is kept when its Damerau-Levenshtein distance to the original is at
most ``epsilon`` (Sec. 3.5; default 4, the value of Table 2). Choices where the paper is silent:

* Enumeration order: by the number of changed keywords, then keyword position, then each keyword's word
  order (distance, kind, word); the search stops after ``ENUM_LIMIT`` combinations. Combinations are kept
  when their summed word distances are within ``epsilon`` (a question's distance never exceeds that sum,
  since the replaced spans are disjoint); the built question's own distance is checked again.
* Cap: at most ``max_questions`` per source question; when more combinations qualify, ``max_questions``
  are drawn with the record's ``rng`` (kept in enumeration order) before any question is built.
* Distances ignore case (so do the word-level distances of Algorithm 2).
* Deletion (Table 7) removes a keyword and one adjoining space; by default one keyword per question and no
  ``epsilon`` (the paper deletes keywords "directly" to measure their importance).
* Baseline modifications (Table 8) make ``variants`` noisy versions per keyword, then the same combination
  and ``epsilon`` filter apply.

Questions that cannot be attacked (empty, one word, mostly non-Latin letters, no keyword, no adversarial
word, nothing within ``epsilon``) give no example; the reason is counted in the attack's ``skipped``
counter (per process).
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from pydantic import Field

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.questions import keywords as kw
from callbluff.attacks.questions import words as aw
from callbluff.records import OpenQuestion, Perturbed, Record
from callbluff.resources.context import DEPENDENCY_CACHE_SIZE
from callbluff.resources.typos import TypoCorpus, cached_corpus, default_paths

PAPER = "DPAEG: dependency parse-based adversarial examples generation for Q&A robots"
ENUM_LIMIT = 5_000
Extraction = Literal["dependency", "random", "all-content"]
Modification = Literal["typo+similar", "deletion", "random-chars", "swap", "middle", "scramble", "keyboard",
                       "replace"]
SKIP_REASONS = ("empty", "one-word", "non-latin", "no-keyword", "no-adversarial-word", "over-epsilon")


class DPAEGParams(AttackParams):
    """DPAEG's parameters (Sec. 3.3-3.5, 4.3, 4.4); see the attack's docstring."""

    extraction: Extraction = "dependency"
    modification: Modification = "typo+similar"
    epsilon: int | None = Field(4, ge=1)
    max_questions: int = Field(20, ge=1)
    max_keywords: int | None = Field(None, ge=1)
    pos_mode: Literal["same", "different", "any"] = "same"
    d_verb: int = Field(1, ge=1)
    d_divisor: int = Field(3, ge=1)
    dictionary_size: int = Field(40_000, ge=1_000)
    typo_files: tuple[str, ...] = ()
    variants: int = Field(3, ge=1)
    n_chars: int = Field(2, ge=1)
    relations: tuple[str, ...] = kw.DEFAULT_RELATIONS
    clauses: tuple[str, ...] = kw.CLAUSES


@dataclass(frozen=True)
class Replacement:
    """One keyword replaced in a question (``word == ""`` for a deletion)."""

    keyword: kw.Keyword
    word: aw.AdversarialWord

    def to_json(self) -> dict[str, Any]:
        return {"keyword": self.keyword.text, "start": self.keyword.start, "end": self.keyword.end,
                "pos": self.keyword.pos, "word": self.word.word, "kind": self.word.kind,
                "distance": self.word.distance, "via": self.word.via}


def apply_replacements(question: str, reps: Sequence[Replacement]) -> str:
    """The question with each keyword span replaced (deletions also drop one adjoining space)."""
    out = question
    for r in sorted(reps, key=lambda x: -x.keyword.start):
        s, e = r.keyword.start, r.keyword.end
        if not r.word.word:
            if s > 0 and out[s - 1] == " ":
                s -= 1
            elif e < len(out) and out[e] == " ":
                e += 1
        out = out[:s] + r.word.word + out[e:]
    return out


Combo = tuple[tuple[int, int], ...]
"""A choice of replacements: ``(keyword index, word index)`` pairs, keyword indices increasing."""


def combinations(words: Sequence[Sequence[aw.AdversarialWord]], epsilon: int | None,
                 max_keywords: int | None = None, limit: int = ENUM_LIMIT) -> list[Combo]:
    """Sec. 3.5: the combinations of replacements whose summed word distances are within ``epsilon``, in
    enumeration order (see the module docstring), at most ``limit``. Integers only: questions are built
    for the combinations kept (:func:`build`)."""
    slots = [i for i, ws in enumerate(words) if ws]
    top = len(slots) if max_keywords is None else min(max_keywords, len(slots))
    bound = float("inf") if epsilon is None else epsilon
    out: list[Combo] = []

    def grow(start: int, size: int, picked: list[tuple[int, int]], used: int) -> bool:
        if len(picked) == size:
            out.append(tuple(picked))
            return len(out) >= limit
        for si in range(start, len(slots) - (size - len(picked)) + 1):
            i = slots[si]
            for j, w in enumerate(words[i]):
                if used + w.distance + (size - len(picked) - 1) > bound:
                    break  # words are sorted by distance; every later pick costs at least 1
                picked.append((i, j))
                full = grow(si + 1, size, picked, used + w.distance)
                picked.pop()
                if full:
                    return True
        return False

    for size in range(1, top + 1):
        if grow(0, size, [], 0):
            break
    return out


class CombinationSpace:
    """The combinations :func:`combinations` enumerates, counted instead of listed: ``len(space)`` and
    ``space[i]`` (the ``i``-th in enumeration order) without building the others.

    Same pruning rule as :func:`combinations` (a pick is allowed when the distance used so far plus its own
    plus one per pick still to make is within ``epsilon``, scanning each keyword's words in order and stopping
    at the first that is not), so ``[space[i] for i in range(len(space))]`` equals
    ``combinations(words, epsilon, max_keywords, limit)``. The counts form one table per number of picks
    left, ``rem``: ``count(slot, rem, used)``, the combinations of ``rem`` picks among the keywords from
    ``slot`` on when ``used`` distance is spent, for every ``used`` in ``0..epsilon`` at once, filled from the
    last keyword down (a question whose keywords have hundreds of adversarial words costs a few hundred
    additions); the record's draw of ``max_questions`` indices then needs only the drawn combinations."""

    def __init__(self, words: Sequence[Sequence[aw.AdversarialWord]], epsilon: int | None,
                 max_keywords: int | None = None, limit: int = ENUM_LIMIT) -> None:
        self.slots = [i for i, ws in enumerate(words) if ws]
        self.dists = [[w.distance for w in words[i]] for i in self.slots]
        self._sorted = [all(a <= b for a, b in zip(ds, ds[1:])) for ds in self.dists]
        self.bound = float("inf") if epsilon is None else epsilon
        # per slot: (distance, largest distance up to it in the slot's order, how many words) groups; a word
        # may be picked with ``used`` spent and ``rem`` picks left iff used + that prefix maximum + rem - 1
        # is within the bound (the scan of :func:`combinations` stops at the first word that is not)
        self._groups: list[list[tuple[int, int, int]]] = []
        for ds in self.dists:
            seen: dict[tuple[int, int], int] = {}
            top_d = None
            for d in ds:
                top_d = d if top_d is None else max(top_d, d)
                seen[(d, top_d)] = seen.get((d, top_d), 0) + 1
            self._groups.append([(d, m, c) for (d, m), c in seen.items()])
        self._width = 1 if epsilon is None else epsilon + 1  # the values ``used`` can take: 0..epsilon
        self._tables: list[list[list[int]]] = [[[1] * self._width for _ in range(len(self.slots) + 1)]]
        top = len(self.slots) if max_keywords is None else min(max_keywords, len(self.slots))
        self.sizes: list[tuple[int, int]] = []  # (size, combinations of that size counted in the limit)
        total = 0
        for size in range(1, top + 1):
            self._build(size)
            if not any(any(row) for row in self._tables[size]):
                break  # no combination of this size, hence none larger
            n = min(self._count(0, size, 0), limit - total)
            if n > 0:
                self.sizes.append((size, n))
                total += n
            if total >= limit:
                break
        self.total = total

    def _build(self, rem: int) -> None:
        """Build the counts for up to ``rem`` picks left."""
        while len(self._tables) <= rem:
            r = len(self._tables)
            prev, n, width = self._tables[r - 1], len(self.slots), self._width
            table = [[0] * width for _ in range(n + 1)]
            for si in range(n - r, -1, -1):
                row, below = table[si + 1][:], prev[si + 1]
                if self._width == 1 and self.bound == float("inf"):  # no epsilon: every word may be picked
                    row[0] += len(self.dists[si]) * below[0]
                else:
                    for d, m, c in self._groups[si]:
                        for u in range(0, int(self.bound) - r + 2 - m):  # used + m + (r - 1) <= bound
                            row[u] += c * below[u + d]
                table[si] = row
            self._tables.append(table)

    def _allowed(self, si: int, rem: int, used: int) -> list[int]:
        """Distances of slot ``si``'s words that may be picked with ``rem`` picks left (this one included),
        up to the first that may not (words are sorted by distance, as :func:`combinations` assumes)."""
        dists = self.dists[si]
        if self._sorted[si]:
            return dists[:bisect.bisect_right(dists, self.bound - used - (rem - 1))]
        out = []
        for d in dists:
            if used + d + (rem - 1) > self.bound:
                break
            out.append(d)
        return out

    def _count(self, start: int, rem: int, used: int) -> int:
        """Combinations of ``rem`` picks from slots ``start..`` with ``used`` distance spent."""
        if start > len(self.slots):
            return 0
        if rem >= len(self._tables):
            self._build(rem)
        return self._tables[rem][start][used if self._width > 1 else 0]

    def __len__(self) -> int:
        return self.total

    def __getitem__(self, index: int) -> Combo:
        if not 0 <= index < self.total:
            raise IndexError(f"combination {index} of {self.total}")
        size = 0
        for size_, n in self.sizes:
            if index < n:
                size = size_
                break
            index -= n
        picked: list[tuple[int, int]] = []
        start, used = 0, 0
        for rem in range(size, 0, -1):
            found = False
            for si in range(start, len(self.slots) - rem + 1):
                for j, d in enumerate(self._allowed(si, rem, used)):
                    n = self._count(si + 1, rem - 1, used + d)
                    if index < n:
                        picked.append((self.slots[si], j))
                        start, used, found = si + 1, used + d, True
                        break
                    index -= n
                if found:
                    break
        return tuple(picked)


def build(question: str, keywords: Sequence[kw.Keyword], words: Sequence[Sequence[aw.AdversarialWord]],
          combo: Combo) -> tuple[str, int, list[Replacement]]:
    """``(question', distance to question, replacements)`` of one combination."""
    reps = [Replacement(keywords[i], words[i][j]) for i, j in combo]
    text = apply_replacements(question, reps)
    return text, aw.distance(text, question), reps


def adversarial_questions(question: str, keywords: Sequence[kw.Keyword],
                          words: Sequence[Sequence[aw.AdversarialWord]], epsilon: int | None,
                          max_keywords: int | None = None) -> list[tuple[str, int, list[Replacement]]]:
    """Every adversarial question of Sec. 3.5 (``distance <= epsilon``, each text once) in enumeration order."""
    out, seen = [], {question}
    for combo in combinations(words, epsilon, max_keywords):
        text, dist, reps = build(question, keywords, words, combo)
        if text not in seen and (epsilon is None or dist <= epsilon):
            seen.add(text)
            out.append((text, dist, reps))
    return out


@lru_cache(maxsize=8)
def _corpus(files: tuple[str, ...]) -> TypoCorpus:
    return cached_corpus(files or default_paths())


@lru_cache(maxsize=65_536)
def _typo_similar_words(keyword: str, pos: str, typo_files: tuple[str, ...], dictionary_size: int, d_verb: int,
                        d_divisor: int, pos_mode: str) -> tuple[aw.AdversarialWord, ...]:
    """Algorithm 2 for one keyword under one configuration, computed once per process (keywords recur
    across questions: "city", "year", "first"...)."""
    return tuple(aw.adversarial_words(keyword, pos, _corpus(typo_files), aw.dictionary(dictionary_size),
                                      aw.DistanceRule(d_verb, d_divisor), pos_mode))


def _latin_share(text: str) -> float:
    """The share of ``text``'s letters whose Unicode name is LATIN (every ASCII letter is, so only the others
    are looked up)."""
    letters = [c for c in text if c.isalpha()] if not text.isascii() else None
    if letters is None:
        return 1.0 if any(c.isalpha() for c in text) else 0.0
    if not letters:
        return 0.0
    return sum(c.isascii() or unicodedata.name(c, "").startswith("LATIN") for c in letters) / len(letters)


_ALNUM = re.compile(r"[^\W_]")
r"""A letter or digit (``str.isalnum``: Python's ``\w`` without the underscore)."""


def skip_reason(question: str) -> str | None:
    """Why a question cannot be attacked before parsing it (``empty``, ``one-word``, ``non-latin``), or None.
    Words are whitespace-separated pieces with a letter or digit."""
    words = 0
    for w in question.split():
        if _ALNUM.search(w):
            words += 1
            if words == 2:
                break
    if not words:
        return "empty"
    if words < 2:
        return "one-word"
    if _latin_share(question) < 0.5:
        return "non-latin"
    return None


@register
class DPAEG(StaticAttack[DPAEGParams]):
    """DPAEG (Sec. 3): keywords from the dependency parse (Algorithm 1, Sec. 3.3) replaced by their typos,
    spell-similar words and typos of spell-similar words (Algorithm 2, Sec. 3.4), questions kept within
    edit distance ``epsilon`` of the original (Sec. 3.5). A robust Q&A robot still answers correctly
    (expect ``same-answer``; the success rate of Sec. 4.1.3 is the share it gets wrong).

    Params: ``extraction`` (``dependency``; the Sec. 4.4.1 baselines ``random``, ``all-content``),
    ``modification`` (``typo+similar``; the baselines ``deletion`` (Table 7), ``random-chars`` and the
    Belinkov & Bisk operations ``swap``, ``middle``, ``scramble``, ``keyboard``, ``replace`` (Table 8)),
    ``epsilon`` (Sec. 3.5, Fig. 5 sweep), ``pos_mode`` (Sec. 4.3.1, Fig. 4), ``d_verb`` / ``d_divisor`` (the
    rule for ``d``), ``max_questions`` (cap per question), ``max_keywords``, ``dictionary_size``,
    ``typo_files`` (typo corpora; empty = :func:`callbluff.resources.typos.default_paths`), ``variants`` /
    ``n_chars`` (baselines), ``relations`` / ``clauses`` (Algorithm 1's relation set R and clause relations).
    The choices the paper leaves open are stated in :mod:`.keywords`, :mod:`.words` and this module.

    Each example's ``meta`` carries what the comprehension sheet (Sec. 4.2.2) needs: ``original``,
    ``keywords``, ``replacements`` (keyword, span, word, kind, distance), ``edit_distance``."""

    name = "DPAEG"
    task = "questions"
    family = "dpaeg"
    paper = PAPER
    description = "Replace a question's dependency-parse keywords by real typos and spell-similar words."
    Params = DPAEGParams
    record_type = OpenQuestion
    requires: tuple[str, ...] = ("spacy-parse", "wordnet", "wordfreq", "typos")
    expect = "same-answer"
    field = "question"

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.skipped: Counter[str] = Counter()
        if self.params.typo_files or self.params.modification != "typo+similar":
            # the default typo corpus is needed only by Algorithm 2 without typo_files of its own
            self.requires = tuple(r for r in type(self).requires if r != "typos")

    # -- resources (module-level caches; the attack itself stays small to pickle) ----------------------
    def typos(self) -> TypoCorpus:
        return _corpus(tuple(self.params.typo_files))

    def dictionary(self) -> aw.Dictionary:
        return aw.dictionary(self.params.dictionary_size)

    # -- the three stages --------------------------------------------------------------------------
    def keywords(self, doc: Any, rng: np.random.Generator, lemma: kw.Lemma | None = None) -> list[kw.Keyword]:
        """Algorithm 1 (or a Sec. 4.4.1 baseline) on a parsed question; ``lemma`` reads a token's lemma
        (default ``Token.lemma_``; :meth:`generate` passes ``res.lemma`` for its parse without lemmatizer)."""
        p = self.params
        lemma = lemma or (lambda t: t.lemma_)
        if p.extraction == "all-content":
            return kw.content_keywords(doc, lemma=lemma)
        found = kw.dependency_keywords(doc, p.relations, p.clauses, lemma=lemma)
        if p.extraction == "random":
            return kw.random_keywords(doc, rng, len(found))
        return found

    def prefetch(self, records: Sequence[Record], res: Any) -> None:
        """Parse the questions of many records in one batch (``res.dependency_docs``: one ``nlp.pipe``) so
        that :meth:`generate` finds each parse cached; outputs are the same with or without it. At most
        :data:`~callbluff.resources.context.DEPENDENCY_CACHE_SIZE` questions (more would evict each other)."""
        texts = [r.question for r in records if isinstance(r, OpenQuestion) and skip_reason(r.question) is None]
        res.dependency_docs(texts[:DEPENDENCY_CACHE_SIZE], lemmas=False)

    def words(self, keyword: kw.Keyword, rng: np.random.Generator) -> list[aw.AdversarialWord]:
        p = self.params
        if p.modification == "typo+similar":
            return list(_typo_similar_words(keyword.text, keyword.pos, tuple(p.typo_files), p.dictionary_size,
                                            p.d_verb, p.d_divisor, p.pos_mode))
        if p.modification == "deletion":
            return aw.deletion(keyword.text)
        return aw.noisy_words(keyword.text, p.modification, rng, p.variants, p.n_chars)

    def generate(self, record: OpenQuestion, rng: np.random.Generator, res: Any, prompt: Any = None,
                 state: Any = None) -> list[Perturbed]:
        p = self.params
        question = record.question
        reason = skip_reason(question)
        if reason is not None:
            self.skipped[reason] += 1
            return []
        # lemmas are read for a few tokens only (Sec. 3.3's be / have / do test): computed for those alone
        keys = self.keywords(res.dependency_doc(question, lemmas=False), rng, res.lemma)
        if not keys:
            self.skipped["no-keyword"] += 1
            return []
        words = [self.words(k, rng) for k in keys]
        if not any(words):
            self.skipped["no-adversarial-word"] += 1
            return []
        space = CombinationSpace(words, p.epsilon, p.max_keywords)
        if len(space) > p.max_questions:
            keep = sorted(int(i) for i in rng.choice(len(space), size=p.max_questions, replace=False))
        else:
            keep = list(range(len(space)))
        combos = [space[i] for i in keep]
        found, seen = [], {question}
        for combo in combos:
            text, dist, reps = build(question, keys, words, combo)
            if text not in seen and (p.epsilon is None or dist <= p.epsilon):
                seen.add(text)
                found.append((text, dist, reps))
        if not found:
            self.skipped["over-epsilon"] += 1
            return []
        key_json = [k.to_json() for k in keys]
        return [self.perturbed(record, text, index=i, original=question, keywords=key_json,
                               replacements=[r.to_json() for r in reps], edit_distance=dist,
                               extraction=p.extraction, modification=p.modification)
                for i, (text, dist, reps) in enumerate(found)]


# -- the baselines, each an attack of its own (Sec. 4.4) ----------------------------------------------

class _DeletionParams(DPAEGParams):
    modification: Modification = "deletion"
    epsilon: int | None = Field(None, ge=1)
    max_keywords: int | None = Field(1, ge=1)


class _RandomDeletionParams(_DeletionParams):
    extraction: Extraction = "random"


class _ContentDeletionParams(_DeletionParams):
    extraction: Extraction = "all-content"


def _baseline(cls_name: str, params: type[DPAEGParams], doc: str, description: str) -> type[DPAEG]:
    cls = type(cls_name, (DPAEG,), {"__doc__": doc, "name": cls_name, "Params": params, "description": description,
                                    "requires": ("spacy-parse",), "__module__": __name__})
    assert issubclass(cls, DPAEG)
    return register(cls)


DPAEGDelete = _baseline(
    "DPAEGDelete", _DeletionParams,
    "Dependency-parse keywords (Algorithm 1, Sec. 3.3) deleted, one per question: the proposed row of the "
    "keyword-extraction evaluation (Sec. 4.4.1, Table 7). See :class:`DPAEG` for the parameters.",
    "Delete one dependency-parse keyword of the question.")
DPAEGRandomKeywords = _baseline(
    "DPAEGRandomKeywords", _RandomDeletionParams,
    "Random keywords deleted, one per question (Sec. 4.4.1 random keyword extraction, Table 7): as many "
    "random words as Algorithm 1 finds. See :class:`DPAEG` for the parameters.",
    "Delete one randomly chosen word of the question.")
DPAEGAllContent = _baseline(
    "DPAEGAllContent", _ContentDeletionParams,
    "Every content word is a keyword, deleted one per question (Sec. 4.4.1 content-word extraction, "
    "Table 7). See :class:`DPAEG` for the parameters.",
    "Delete one content word of the question.")


class _RandomCharsParams(DPAEGParams):
    modification: Modification = "random-chars"


class _SwapParams(DPAEGParams):
    modification: Modification = "swap"


class _MiddleParams(DPAEGParams):
    modification: Modification = "middle"


class _ScrambleParams(DPAEGParams):
    modification: Modification = "scramble"


class _KeyboardParams(DPAEGParams):
    modification: Modification = "keyboard"


class _ReplaceParams(DPAEGParams):
    modification: Modification = "replace"


_NOISE: dict[str, tuple[type[DPAEGParams], str]] = {
    "DPAEGRandomChars": (_RandomCharsParams, "random keyword modification: `n_chars` random letters replaced"),
    "NoiseSwap": (_SwapParams, "Belinkov & Bisk swap: two adjacent interior letters swapped"),
    "NoiseMiddle": (_MiddleParams, "Belinkov & Bisk middle random: interior letters scrambled"),
    "NoiseScramble": (_ScrambleParams, "Belinkov & Bisk fully random: all letters scrambled"),
    "NoiseKeyboard": (_KeyboardParams, "Belinkov & Bisk keyboard typo: a letter replaced by a QWERTY neighbour"),
    "NoiseReplace": (_ReplaceParams, "one letter replaced by a random letter"),
}


def _noise_doc(what: str) -> str:
    return (f"Dependency-parse keywords (Algorithm 1) modified by {what} (Sec. 4.4.2 keyword-modification "
            "baselines, Table 8; Belinkov & Bisk 2018 Sec. 4.1), `variants` versions per keyword, combined and "
            "kept within `epsilon` as in Sec. 3.5. See :class:`DPAEG` for the parameters.")


DPAEGRandomChars = _baseline("DPAEGRandomChars", _RandomCharsParams, _noise_doc(_NOISE["DPAEGRandomChars"][1]),
                        "Modify dependency-parse keywords: random letters replaced.")
NoiseSwap = _baseline("NoiseSwap", _SwapParams, _noise_doc(_NOISE["NoiseSwap"][1]),
                      "Modify dependency-parse keywords: swap two adjacent letters.")
NoiseMiddle = _baseline("NoiseMiddle", _MiddleParams, _noise_doc(_NOISE["NoiseMiddle"][1]),
                        "Modify dependency-parse keywords: scramble the interior letters.")
NoiseScramble = _baseline("NoiseScramble", _ScrambleParams, _noise_doc(_NOISE["NoiseScramble"][1]),
                          "Modify dependency-parse keywords: scramble all letters.")
NoiseKeyboard = _baseline("NoiseKeyboard", _KeyboardParams, _noise_doc(_NOISE["NoiseKeyboard"][1]),
                          "Modify dependency-parse keywords: keyboard-neighbour typo.")
NoiseReplace = _baseline("NoiseReplace", _ReplaceParams, _noise_doc(_NOISE["NoiseReplace"][1]),
                         "Modify dependency-parse keywords: replace one letter.")

BASELINES: tuple[str, ...] = ("DPAEGDelete", "DPAEGRandomKeywords", "DPAEGAllContent", *_NOISE)
