"""The word list of the non-word-rate filter (Ding et al. 2020, Sec. 5.4): the Hunspell ``en_US`` dictionary
"enlarged with all the words in [the] corrected version of ASAP-SAS".

The Hunspell dictionary is the system's (Debian ``hunspell-en-us``, installed by ``make setup``), expanded
with its affix rules by :func:`callbluff.resources.hunspell.expand_hunspell` (stems plus prefix/suffix forms),
so a lookup is a set membership. No corrected ASAP-SAS exists offline, so the enlargement is made of the
training answers' own words that occur in at least ``min_answers`` (default 2) different answers: a word the
students share is taken as a real word of the prompt, a one-off misspelling is not. Tokens are
:func:`callbluff.resources.ngrams.word_tokens` (lower-cased, punctuation dropped); tokens with a digit are
never non-words (Hunspell lists no numbers).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from callbluff.resources.hunspell import HUNSPELL_DIRS, expand_hunspell, hunspell_files
from callbluff.resources.ngrams import word_tokens


class DictionaryError(RuntimeError):
    """The Hunspell dictionary is missing; the message says how to install it."""


@lru_cache(maxsize=1)
def hunspell_words() -> tuple[frozenset[str], str]:
    """(all word forms of the system Hunspell ``en_US`` dictionary, lower-cased; a fingerprint of them)."""
    files = hunspell_files("en_US")
    if files is None:
        raise DictionaryError(f"no Hunspell en_US dictionary in {', '.join(HUNSPELL_DIRS)}: "
                              "`apt-get install hunspell-en-us` (`make setup` does)")
    words = frozenset(expand_hunspell(*files))
    digest = hashlib.sha256("\n".join(sorted(words)).encode()).hexdigest()[:16]
    return words, f"hunspell:{files[0]}:{digest}"


def shared_words(texts: Iterable[str], min_answers: int = 2) -> set[str]:
    """Words (:func:`word_tokens`) occurring in at least ``min_answers`` different texts."""
    df: Counter[str] = Counter()
    for t in texts:
        df.update(set(word_tokens(t)))
    return {w for w, c in df.items() if c >= min_answers}


def is_known(word: str, dictionary: frozenset[str] | set[str], extra: frozenset[str] | set[str]) -> bool:
    return word in dictionary or word in extra or any(c.isdigit() for c in word)


def nonword_rate(tokens: Sequence[str], dictionary: frozenset[str] | set[str],
                 extra: frozenset[str] | set[str]) -> float:
    """Share of ``tokens`` that are not words; 1.0 for no tokens (nothing that could be an answer)."""
    if not tokens:
        return 1.0
    return sum(not is_known(w, dictionary, extra) for w in tokens) / len(tokens)
