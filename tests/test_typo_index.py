"""The typo corpus's lower-case index (``TypoCorpus.lower_index``) answers exactly what the case-matching
lookup answers, and Misspell's outputs are pinned (its draws were batched into one call without changing them)."""

from __future__ import annotations

import numpy as np
import pytest

from callbluff.attacks.content.misspell import misspell
from callbluff.resources.typos import TypoCorpus, load_corpus, match_case
from helpers import shared_path

TYPOS = TypoCorpus({"bamboo": ("bambo", "bambboo", "Bamboo"), "pandas": ("pandaz", "PANDAZ", "pandas2"),
                    "eat": ("eet",), "koalas": ("koalaz",), "France": ("Frence",), "3rd": ("3dr",)})


def _by_case(corpus: TypoCorpus, word: str) -> tuple[str, ...]:
    """The lookup :meth:`TypoCorpus.typos` documents: the word's key, else its lower-cased key; misspellings in
    the word's case, none equal to it ignoring case, sorted."""
    found = corpus.entries.get(word)
    if found is None:
        found = corpus.entries.get(word.lower(), ())
    return tuple(sorted({m for m in (match_case(t, word) for t in found) if m.lower() != word.lower()}))


def test_lower_index_equals_the_case_matching_lookup() -> None:
    for word in ("pandas", "Pandas", "PANDAS", "france", "France", "3rd", "bamboo", "eat", "x", "Eat"):
        assert TYPOS.typos(word) == _by_case(TYPOS, word), word
    assert TYPOS.typos("bamboo") == ("bambboo", "bambo")  # "Bamboo" is the word itself


def test_lower_index_on_the_real_typo_corpora() -> None:
    path = shared_path("data", "typos", "missp.dat.gz")
    corpus = load_corpus([path, shared_path("data", "typos", "wikipedia.dat")])
    lower = [k for k in corpus.entries if k.islower()]
    assert len(lower) > 1000
    assert all(corpus.typos(k) == _by_case(corpus, k) for k in lower)


@pytest.mark.parametrize(("seed", "expected"), [
    (0, "Pandaz eet bambo, and koalaz eet eucalyptus in FRANCE on the 3dr day. PANDAZ eet."),
    (5, "PANDAZ eet bambboo, and koalaz eet eucalyptus in FRANCE on the 3dr day. PANDAS2 eet."),
])
def test_misspell_outputs_are_pinned(seed: int, expected: str) -> None:
    text = "Pandas eat bamboo, and koalas eat eucalyptus in FRANCE on the 3rd day. PANDAS eat."
    assert misspell(text, 0.6, TYPOS, np.random.default_rng(seed)) == (expected, 8, 15)
