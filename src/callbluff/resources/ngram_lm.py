"""An offline generic language model: an interpolated Kneser-Ney word trigram model (Kneser and Ney 1995;
Chen and Goodman 1998, "An empirical study of smoothing techniques for language modeling", Sec. 2.7),
trained once per process on the generic corpus (:mod:`callbluff.resources.corpus`).

It stands in for GPT-2 in Ding et al. 2020's "Generative Language Model" adversaries (Sec. 2.2) where no
GPT-2 can be installed. How it differs from GPT-2: it conditions on the last two words only (GPT-2 on up to
1,024 sub-word tokens), it knows only the generic corpus's words (about a million words of Wikipedia by
default, against GPT-2's 40 GB of web text), and unseen words in the seed fall back to lower orders. Its
text is locally fluent for a few words and then drifts; GPT-2 keeps a topic and a syntax over sentences.

Why our own: the PyPI ``kenlm`` package can only *query* ARPA/binary models (training needs the separate
``lmplz`` binary and Boost), and NLTK's ``nltk.lm`` computes a score for every vocabulary word at each
generation step. Counts are kept as sorted numpy arrays of packed trigram keys, so a million-word corpus
trains in seconds, and sampling is exact for the interpolated distribution: at each order the observed
continuations are drawn with probability ``(c - D) / total`` and the remaining ``D * types / total`` goes to
the next lower order (continuation counts, as Kneser-Ney prescribes), down to the continuation unigram.

Choices: one fixed discount ``D = 0.75`` at every order; tokens are lower-cased words and ``.,;:!?``;
sentences as in :func:`callbluff.resources.ngrams.sentences`, padded with two ``<s>`` and ended by ``</s>``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from callbluff.resources.corpus import CorpusSpec, generic_corpus
from callbluff.resources.ngrams import sentences

BOS, EOS, UNK = "<s>", "</s>", "<unk>"
DISCOUNT = 0.75
PUNCT = frozenset(".,;:!?")
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[.,;:!?]")


def lm_tokens(text: str) -> list[str]:
    """Lower-cased word and punctuation tokens, as the model sees them."""
    return _TOKEN.findall(text.lower())


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens joined by spaces, punctuation glued to the word before it."""
    out = ""
    for t in tokens:
        out += t if (t in PUNCT and out) else (" " + t if out else t)
    return out


def count_words(tokens: Sequence[str]) -> int:
    return sum(t not in PUNCT for t in tokens)


@dataclass(frozen=True)
class KneserNeyTrigramLM:
    """Counts of an interpolated Kneser-Ney trigram model (see the module docstring)."""

    vocab: tuple[str, ...]
    ctx3: np.ndarray
    next3: np.ndarray
    count3: np.ndarray
    ctx2: np.ndarray
    next2: np.ndarray
    count2: np.ndarray
    cumulative1: np.ndarray
    fingerprint: str
    n_tokens: int

    @classmethod
    def train(cls, texts: Sequence[str], fingerprint: str = "") -> KneserNeyTrigramLM:
        sents = [t for text in texts for s in sentences(text) if (t := lm_tokens(s))]
        words = sorted({w for s in sents for w in s})
        vocab = (BOS, EOS, UNK, *words)
        if not sents:
            raise ValueError("cannot train a language model on a corpus without words")
        index = {w: i for i, w in enumerate(vocab)}
        v = len(vocab)
        seqs = [[0, 0, *(index[w] for w in s), 1] for s in sents]
        lengths = np.fromiter((len(s) for s in seqs), dtype=np.int64, count=len(seqs))
        stream = np.fromiter((i for s in seqs for i in s), dtype=np.int64, count=int(lengths.sum()))
        win = np.lib.stride_tricks.sliding_window_view(stream, 3)
        ok = np.ones(len(win), dtype=bool)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        for k in (1, 2):
            bad = starts[1:] - k
            ok[bad[bad >= 0]] = False
        win = win[ok]
        keys3, count3 = np.unique((win[:, 0] * v + win[:, 1]) * v + win[:, 2], return_counts=True)
        keys2, count2 = np.unique(keys3 % (v * v), return_counts=True)  # N1+(. w2 w3)
        cont1 = np.bincount(keys2 % v, minlength=v).astype(np.int64)    # N1+(. w3)
        return cls(vocab, keys3 // v, keys3 % v, count3.astype(np.int64), keys2 // v, keys2 % v,
                   count2.astype(np.int64), np.cumsum(cont1), fingerprint, int(stream.size - 2 * len(seqs)))

    def _id(self, word: str) -> int:
        i = _bisect(self.vocab, word)
        return i if i is not None else 2

    def _pick(self, ctx: np.ndarray, nxt: np.ndarray, counts: np.ndarray, key: int,
              rng: np.random.Generator) -> int | None:
        lo, hi = int(np.searchsorted(ctx, key, "left")), int(np.searchsorted(ctx, key, "right"))
        if hi == lo:
            return None
        c = counts[lo:hi]
        total = float(c.sum())
        if rng.random() * total >= total - DISCOUNT * (hi - lo):
            return None  # the back-off mass: go to the lower order
        cum = np.cumsum(c - DISCOUNT)
        return int(nxt[lo + int(np.searchsorted(cum, rng.random() * cum[-1], "right"))])

    def next_id(self, a: int, b: int, rng: np.random.Generator) -> int:
        """A word id drawn from P(w | a b) of the interpolated model."""
        v = len(self.vocab)
        w = self._pick(self.ctx3, self.next3, self.count3, a * v + b, rng)
        if w is None:
            w = self._pick(self.ctx2, self.next2, self.count2, b, rng)
        if w is None:
            c = self.cumulative1
            w = int(np.searchsorted(c, rng.integers(0, int(c[-1])), "right"))
        return w

    def continue_text(self, seed: str, n_words: int, rng: np.random.Generator) -> list[str]:
        """Tokens continuing ``seed`` until they hold ``n_words`` words (punctuation is not a word); a
        sentence end starts a new sentence."""
        ids = [self._id(t) for t in lm_tokens(seed)]
        a, b = ([0, 0] + ids)[-2:]
        out: list[str] = []
        words = 0
        for _ in range(30 * n_words + 50):
            if words >= n_words:
                break
            w = self.next_id(a, b, rng)
            if w == 1:
                a, b = 0, 0
                continue
            out.append(self.vocab[w])
            words += self.vocab[w] not in PUNCT
            a, b = b, w
        return out


def _bisect(vocab: tuple[str, ...], word: str) -> int | None:
    lo, hi = 3, len(vocab)  # vocab[3:] is sorted
    while lo < hi:
        mid = (lo + hi) // 2
        if vocab[mid] < word:
            lo = mid + 1
        else:
            hi = mid
    return lo if lo < len(vocab) and vocab[lo] == word else None


_CACHE: dict[CorpusSpec, KneserNeyTrigramLM] = {}
_LOCK = threading.Lock()


def generic_lm(spec: CorpusSpec) -> KneserNeyTrigramLM:
    """The model of the generic corpus ``spec`` names, trained once per process."""
    with _LOCK:
        hit = _CACHE.get(spec)
    if hit is None:
        corpus = generic_corpus(spec)
        hit = KneserNeyTrigramLM.train(corpus.documents, corpus.fingerprint)
        with _LOCK:
            hit = _CACHE.setdefault(spec, hit)
    return hit
