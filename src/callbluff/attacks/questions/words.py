"""Adversarial words for a keyword: DPAEG's typos and spell-similar words (Algorithm 2, Sec. 3.4) and the
keyword modifications of the baselines (Sec. 4.4.2: random characters; the five noise operations of
Belinkov & Bisk 2018, Sec. 4.1: swap, middle scramble, full scramble, keyboard typo, one-letter replace).

Algorithm 2, as implemented by :func:`adversarial_words`:

1. typos of the keyword from the typo corpus within Damerau-Levenshtein distance 2 (kind ``"typo"``);
2. spell-similar words from a dictionary of common English words split by first letter (we index it by
   (first, last) letter, both being constraints): same first and last letter, same POS, and distance
   ``<= d`` with ``d`` set from the keyword's POS (:class:`DistanceRule`);
3. a spell-similar word within distance 2 of the keyword is used directly (``"similar"``); otherwise its
   typos within distance 2 of the keyword are (``"similar-typo"``).

Choices where the paper is silent or lost:

* Dictionary ("common English words", ref. [50]): the ``dictionary_size`` (default 40,000) most frequent
  English words of ``wordfreq``, letters only, length >= 2. A word's POS set is every WordNet POS of which it
  is a form (``wordnet.morphy``: noun, verb, adjective, adverb; "played" -> verb, adjective). The index is
  built once per size and cached on disk (``cache_dir("dpaeg")``) and in the process.
* POS constraint (Sec. 3.4 (ii) and the Sec. 4.3.1 ablation, ``pos_mode``): ``same`` = the keyword's POS
  (spaCy universal POS; PROPN counts as noun) is one of the word's WordNet POS; ``different`` = it is not;
  ``any`` = no constraint. Keywords without a WordNet POS (numbers) get no spell-similar word under ``same``.
* ``d``: the formula did not survive in our copy, only "d = 1 for a verb" and "d is not less than 1" with a
  term in the keyword's length. Choice: ``d = max(1, len(k) // d_divisor)`` with ``d_divisor = 3``.
* Distances are computed case-insensitively (rapidfuzz ``DamerauLevenshtein``); words equal to the keyword
  ignoring case are never adversarial; dictionary words take the keyword's case pattern ("Aladdin").
  When the keyword is ASCII, non-ASCII typos (mojibake in some corpora) are dropped.
"""

from __future__ import annotations

import json
import string
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from rapidfuzz import process
from rapidfuzz.distance import DamerauLevenshtein

from callbluff.resources.paths import cache_dir
from callbluff.resources.typos import TypoCorpus, match_case

WN_POS = {"NOUN": "n", "PROPN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
KINDS = ("typo", "similar", "similar-typo")
INDEX_VERSION = 1


def distance(a: str, b: str) -> int:
    """Damerau-Levenshtein distance, case-insensitive (Sec. 3.4)."""
    return int(DamerauLevenshtein.distance(a.lower(), b.lower()))


@dataclass(frozen=True)
class AdversarialWord:
    """A replacement for a keyword: the word, how it was made, its distance to the keyword, and (for
    ``similar-typo``) the spell-similar word it is a typo of."""

    word: str
    kind: str
    distance: int
    via: str | None = None


@dataclass(frozen=True)
class DistanceRule:
    """Algorithm 2 line 6, "set the value of d according to the POS of k": ``verb`` for verbs, else
    ``max(1, len(k) // divisor)`` (our choice; see the module docstring)."""

    verb: int = 1
    divisor: int = 3

    def __call__(self, keyword: str, pos: str) -> int:
        if pos == "VERB":
            return max(1, self.verb)
        return max(1, len(keyword) // max(1, self.divisor))


@dataclass(frozen=True)
class Dictionary:
    """Common English words indexed by (first letter, last letter), each with its WordNet POS letters."""

    by_ends: dict[tuple[str, str], tuple[tuple[str, ...], tuple[str, ...]]]
    size: int

    def candidates(self, word: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        w = word.lower()
        return self.by_ends.get((w[:1], w[-1:]), ((), ()))

    def __contains__(self, word: str) -> bool:
        return word.lower() in self.candidates(word)[0]


def _build_dictionary(size: int) -> dict[str, str]:
    from nltk.corpus import wordnet as wn
    from wordfreq import top_n_list

    words = [w for w in top_n_list("en", size) if len(w) > 1 and w.isascii() and w.isalpha()]
    return {w: "".join(p for p in "nvar" if wn.morphy(w, p)) for w in dict.fromkeys(words)}


def dictionary_path(size: int = 40_000) -> Path:
    """Where the spell-similar dictionary of ``size`` words is cached (it depends on the wordfreq version)."""
    from importlib.metadata import version


    return cache_dir("dpaeg") / f"dictionary-{size}-v{INDEX_VERSION}-wordfreq{version('wordfreq')}.json"


@lru_cache(maxsize=4)
def dictionary(size: int = 40_000) -> Dictionary:
    """The spell-similar dictionary (built on first use, then read from the callbluff cache)."""
    path = dictionary_path(size)
    try:
        pos = json.loads(path.read_text())
    except (OSError, ValueError):
        pos = _build_dictionary(size)
        tmp = path.with_suffix(".part")
        tmp.write_text(json.dumps(pos))
        tmp.replace(path)
    groups: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for w, p in pos.items():
        groups.setdefault((w[0], w[-1]), []).append((w, p))
    return Dictionary({k: (tuple(w for w, _ in v), tuple(p for _, p in v)) for k, v in groups.items()}, size)


def pos_ok(keyword_pos: str, word_pos: str, mode: str) -> bool:
    """Sec. 3.4 constraint (ii) under ``mode`` (``same`` / ``different`` / ``any``; Sec. 4.3.1)."""
    if mode == "any":
        return True
    wn = WN_POS.get(keyword_pos)
    if mode == "same":
        return wn is not None and wn in word_pos
    if mode == "different":
        return wn is None or wn not in word_pos
    raise ValueError(f"pos_mode {mode!r}: use same, different or any")


def spell_similar(keyword: str, pos: str, dic: Dictionary, d: int, pos_mode: str = "same") -> list[tuple[str, int]]:
    """Dictionary words with the keyword's first and last letter, POS (``pos_mode``) and distance
    ``1..d`` (Sec. 3.4 constraints (i)-(iii)), as ``(word, distance)`` sorted by distance then word."""
    words, poses = dic.candidates(keyword)
    if not words:
        return []
    hits = process.extract(keyword.lower(), words, scorer=DamerauLevenshtein.distance, score_cutoff=d,
                           limit=None)
    out = [(w, int(s)) for w, s, i in hits if s >= 1 and pos_ok(pos, poses[i], pos_mode)]
    return sorted(out, key=lambda x: (x[1], x[0]))


def _usable(word: str, keyword: str) -> bool:
    return (bool(word) and word.lower() != keyword.lower() and (word.isascii() or not keyword.isascii())
            and word.split() == [word])  # no whitespace inside or around it


def adversarial_words(keyword: str, pos: str, typos: TypoCorpus, dic: Dictionary,
                      rule: DistanceRule = DistanceRule(), pos_mode: str = "same", max_typo_distance: int = 2,
                      use_typos: bool = True, use_similar: bool = True) -> list[AdversarialWord]:
    """Algorithm 2: the keyword's adversarial word set, sorted by (distance, kind, word), each word once."""
    found: dict[str, AdversarialWord] = {}

    def add(w: str, kind: str, dist: int, via: str | None = None) -> None:
        w = match_case(w, keyword)
        if _usable(w, keyword) and w.lower() not in found:
            found[w.lower()] = AdversarialWord(w, kind, dist, via)

    if use_typos:
        for t in typos.typos(keyword):
            dist = distance(t, keyword)
            if 1 <= dist <= max_typo_distance:
                add(t, "typo", dist)
    if use_similar:
        for w, dist in spell_similar(keyword, pos, dic, rule(keyword, pos), pos_mode):
            if dist <= max_typo_distance:
                add(w, "similar", dist)
                continue
            for t in typos.typos(w):
                td = distance(t, keyword)
                if 1 <= td <= max_typo_distance:
                    add(t, "similar-typo", td, via=match_case(w, keyword))
    return sorted(found.values(), key=lambda a: (a.distance, KINDS.index(a.kind), a.word))


# -- baseline modifications (Sec. 4.4.2) -----------------------------------------------------------------

NOISE_OPS = ("swap", "middle", "scramble", "keyboard", "replace", "random-chars")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_OFFSETS = (0.0, 0.25, 0.75)


def _keyboard() -> dict[str, str]:
    pos = {c: (r, _OFFSETS[r] + i) for r, row in enumerate(_ROWS) for i, c in enumerate(row)}
    out = {}
    for c, (r, x) in pos.items():
        out[c] = "".join(sorted(o for o, (r2, x2) in pos.items() if o != c and abs(r - r2) <= 1
                                and abs(x - x2) <= 1.0))
    return out


KEYBOARD = _keyboard()
"""QWERTY neighbours of each lower-case letter (same row: left/right; rows above/below: within one key)."""


def noise(word: str, op: str, rng: np.random.Generator, n_chars: int = 2) -> str | None:
    """One noisy version of ``word`` (Belinkov & Bisk 2018 Sec. 4.1; DPAEG Sec. 4.4.2), or None when ``op``
    cannot change it.

    ``swap``: two adjacent interior letters (first and last kept; words of >= 4 letters); ``middle``: the
    interior letters shuffled; ``scramble``: all letters shuffled; ``keyboard``: one letter replaced by a
    QWERTY neighbour; ``replace``: one letter replaced by another random letter; ``random-chars`` (the
    paper's random keyword modification; choice: ``n_chars`` distinct positions, each replaced by a random
    other letter). Replaced letters keep the case of the letter they replace."""
    n = len(word)
    chars = list(word)
    if op == "swap":
        if n < 4:
            return None
        i = int(rng.integers(1, n - 2))
        chars[i], chars[i + 1] = chars[i + 1], chars[i]
    elif op in ("middle", "scramble"):
        lo, hi = (1, n - 1) if op == "middle" else (0, n)
        if hi - lo < 2:
            return None
        part = chars[lo:hi]
        chars[lo:hi] = [part[int(j)] for j in rng.permutation(len(part))]
    elif op in ("keyboard", "replace", "random-chars"):
        letters = _ascii_letters(word)
        if not letters:
            return None
        k = 1 if op != "random-chars" else min(n_chars, len(letters))
        # one position: numpy's Generator draws ``choice(n, size=1, replace=False)`` as ``integers(n)`` (the
        # same bounded draw, the same state after it; tests/attacks/test_questions.py checks it), for a tenth
        # of the cost
        picks = [int(rng.integers(len(letters)))] if k == 1 else rng.choice(len(letters), size=k, replace=False)
        for j in sorted(int(x) for x in picks):
            i = letters[j]
            low = word[i].lower()
            pool = KEYBOARD.get(low, "") if op == "keyboard" else string.ascii_lowercase.replace(low, "")
            if not pool:
                return None
            new = pool[int(rng.integers(len(pool)))]
            chars[i] = new.upper() if word[i].isupper() else new
    else:
        raise ValueError(f"unknown noise operation {op!r}; use one of {', '.join(NOISE_OPS)}")
    out = "".join(chars)
    return out if out != word else None


@lru_cache(maxsize=65_536)
def _ascii_letters(word: str) -> tuple[int, ...]:
    """Positions of the ASCII letters of ``word`` (the letters the letter-replacing operations may change)."""
    return tuple(i for i, c in enumerate(word) if c.isascii() and c.isalpha())


ONE_LETTER_OPS = ("keyboard", "replace")
"""Operations whose every output is one letter replaced by a different letter (ignoring case): distance 1."""


def noisy_words(keyword: str, op: str, rng: np.random.Generator, variants: int,
                n_chars: int = 2) -> list[AdversarialWord]:
    """Up to ``variants`` distinct noisy versions of ``keyword`` (``4 * variants`` draws at most), sorted
    by (distance, word)."""
    found: dict[str, AdversarialWord] = {}
    for _ in range(4 * variants):
        if len(found) >= variants:
            break
        w = noise(keyword, op, rng, n_chars)
        if w is not None and w not in found:
            found[w] = AdversarialWord(w, op, 1 if op in ONE_LETTER_OPS else distance(w, keyword))
    return sorted(found.values(), key=lambda a: (a.distance, a.word))


def deletion(keyword: str) -> list[AdversarialWord]:
    """Sec. 4.4.1: the keyword removed (its distance counts the word and one adjoining space)."""
    return [AdversarialWord("", "deletion", len(keyword) + 1)]
