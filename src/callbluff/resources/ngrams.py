"""Frequency tables of character and word n-grams, and the independent n-gram sampling of Ding et al. 2020
(Sec. 2.2 "N-gram").

"For each n between 1 to 5, we generate adversarial answers by performing a weighted random sampling based
on the frequency distribution over all n-grams in the corpus. The generation process for one answer ends
when its length exceeds a predefined maximal length or the last selected n-gram contains the end-of-sentence
token." The paper stresses that this is *not* a conditional language model: every n-gram is drawn
independently by its corpus frequency, whatever was drawn before (:func:`sample_ngrams`).

Choices where the paper is silent (its Table 2 examples are lower-case, without punctuation):

- units: characters of the text lower-cased, with every run of non-word characters (punctuation,
  underscores, line breaks) turned into one space (:func:`char_text`); words are the lower-cased word tokens
  ``[^\\W_]+('[^\\W_]+)*`` (:func:`word_tokens`), punctuation dropped. Both are Unicode-aware.
- sentences: a text is split after ``.``, ``!`` or ``?`` followed by white space, and at line breaks
  (:func:`sentences`). Each sentence ends with the end-of-sentence token (:data:`EOS_CHAR` for characters,
  :data:`EOS_WORD` for words); n-grams never cross a sentence boundary; a sentence shorter than ``n`` units
  (with its end token) counts as one n-gram of its own length.
- an answer is the concatenation of the drawn n-grams (characters directly, words with single spaces). It
  ends at ``max_len`` units (cut there) or at the first drawn n-gram holding the end token, once the answer
  has a non-blank unit (an end token drawn before that is skipped).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from callbluff.resources.corpus import CorpusSpec, generic_corpus
from callbluff.resources.paths import cache_dir

Unit = Literal["char", "word"]
EOS_CHAR = "\n"
"""End-of-sentence token of character n-grams (never in :func:`char_text` output)."""
EOS_WORD = "</s>"
"""End-of-sentence token of word n-grams (never a :func:`word_tokens` token)."""

_NON_WORD = re.compile(r"[\W_]+")
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")


def char_text(text: str) -> str:
    """``text`` lower-cased, every run of non-word characters one space, trimmed."""
    return _NON_WORD.sub(" ", text.lower()).strip()


def word_tokens(text: str) -> list[str]:
    """The lower-cased word tokens of ``text`` (punctuation dropped)."""
    return _WORD.findall(text.lower())


def sentences(text: str) -> list[str]:
    """``text`` split after sentence-final punctuation followed by white space, and at line breaks."""
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def units_of(text: str, unit: Unit) -> list[str]:
    """The characters of :func:`char_text` or the tokens of :func:`word_tokens`."""
    return list(char_text(text)) if unit == "char" else word_tokens(text)


def mean_length(texts: Sequence[str], unit: Unit) -> int:
    """Mean length of ``texts`` in ``unit`` s (characters of :func:`char_text`, i.e. without punctuation, or
    word tokens), rounded half up; 0 for no texts."""
    if not texts:
        return 0
    return int(np.floor(np.mean([len(units_of(t, unit)) for t in texts]) + 0.5))


@dataclass(frozen=True)
class NgramTable:
    """All ``n``-grams of a corpus with their frequencies.

    ``vocab[i]`` is unit ``i`` (``vocab[eos]`` the end token); ``grams`` is a (G, n) int array of unit ids,
    padded with -1 on the right for sentences shorter than ``n``; ``counts`` their frequencies."""

    unit: Unit
    n: int
    vocab: tuple[str, ...]
    grams: np.ndarray
    counts: np.ndarray

    @property
    def eos(self) -> int:
        return self.vocab.index(EOS_CHAR if self.unit == "char" else EOS_WORD)

    def __len__(self) -> int:
        return int(self.grams.shape[0])

    def gram_texts(self) -> list[tuple[str, ...]]:
        """Every n-gram as a tuple of its units (end token included, padding dropped)."""
        return [tuple(self.vocab[i] for i in row if i >= 0) for row in self.grams.tolist()]

    def to_state(self) -> dict[str, Any]:
        """A plain-JSON form (lists, ints), for fit states."""
        return {"unit": self.unit, "n": self.n, "vocab": list(self.vocab), "grams": self.grams.tolist(),
                "counts": self.counts.tolist()}

    @classmethod
    def from_state(cls, state: dict[str, Any]) -> NgramTable:
        n = int(state["n"])
        grams = np.asarray(state["grams"], dtype=np.int64).reshape(-1, n)
        return cls(state["unit"], n, tuple(state["vocab"]), grams, np.asarray(state["counts"], dtype=np.int64))


def build_table(texts: Iterable[str], unit: Unit, n: int) -> NgramTable:
    """The ``n``-gram table of ``texts`` (see the module docstring for units, sentences and end tokens).
    Vocabulary ids are assigned in sorted order and n-grams sorted, so the table is deterministic."""
    if not 1 <= n <= 9:
        raise ValueError(f"n-gram order n={n}: use 1..9 (the paper uses 1..5)")
    seqs: list[list[str] | str] = []
    for text in texts:
        for s in sentences(text):
            u: list[str] | str = char_text(s) if unit == "char" else word_tokens(s)
            if u:
                seqs.append(u)
    if not seqs:
        return NgramTable(unit, n, (), np.zeros((0, n), dtype=np.int64), np.zeros(0, dtype=np.int64))
    lengths = np.fromiter((len(s) + 1 for s in seqs), dtype=np.int64, count=len(seqs))
    if unit == "char":
        joined = EOS_CHAR.join(s for s in seqs if isinstance(s, str)) + EOS_CHAR  # every unit is a str here
        points = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
        uniq, stream = np.unique(points, return_inverse=True)
        vocab = tuple(chr(int(c)) for c in uniq)
    else:
        vocab = tuple(sorted({w for s in seqs for w in s} | {EOS_WORD}))
        index = {x: i for i, x in enumerate(vocab)}
        stream = np.fromiter((index[x] for s in seqs for x in [*s, EOS_WORD]), dtype=np.int64,
                             count=int(lengths.sum()))
    stream = stream.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    parts: list[np.ndarray] = []
    if len(stream) >= n:
        windows = np.lib.stride_tricks.sliding_window_view(stream, n)
        ok = np.ones(len(windows), dtype=bool)
        # a window starting in the last n-1 units of a sentence crosses into the next one
        for k in range(1, n):
            bad = starts[1:] - k
            ok[bad[(bad >= 0) & (bad < len(ok))]] = False  # short last sentences start past the last window
        # ... and a sentence shorter than n has no full window: it counts as one padded n-gram
        short = np.flatnonzero(lengths < n)
        ok[starts[short][starts[short] < len(ok)]] = False
        parts.append(windows[ok])
    else:
        short = np.flatnonzero(lengths < n)
    if len(short):
        pad = np.full((len(short), n), -1, dtype=np.int64)
        for r, j in enumerate(short.tolist()):
            pad[r, : lengths[j]] = stream[starts[j]: starts[j] + lengths[j]]
        parts.append(pad)
    grams, counts = _unique_rows(np.concatenate(parts), len(vocab))
    return NgramTable(unit, n, vocab, grams, counts)


def _unique_rows(rows: np.ndarray, base: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``rows`` (ids >= -1) in lexicographic order and their counts; rows are packed into
    one int64 key when ``(base + 1) ** n`` fits (much faster than ``np.unique(axis=0)``)."""
    n = rows.shape[1]
    b = base + 1
    if b ** n < 2 ** 62:
        keys = np.zeros(len(rows), dtype=np.int64)
        for j in range(n):
            keys = keys * b + (rows[:, j] + 1)
        uniq, counts = np.unique(keys, return_counts=True)
        out = np.empty((len(uniq), n), dtype=np.int64)
        for j in range(n - 1, -1, -1):
            out[:, j] = uniq % b - 1
            uniq = uniq // b
        return out, counts.astype(np.int64)
    grams, counts = np.unique(rows, axis=0, return_counts=True)
    return grams.astype(np.int64), counts.astype(np.int64)


@dataclass(frozen=True)
class Sampler:
    """A table prepared for drawing: cumulative frequencies, and per n-gram whether it ends a sentence; the
    text of an n-gram (:meth:`piece`) is read from the table only when it is drawn, so preparing a table of
    millions of n-grams costs two vectorised passes, not a Python loop over them."""

    table: NgramTable
    cumulative: np.ndarray
    ends: np.ndarray
    eos: int = -1

    @classmethod
    def of(cls, table: NgramTable) -> Sampler:
        if not len(table):
            return cls(table, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool))
        eos = table.eos
        return cls(table, np.cumsum(table.counts), (table.grams == eos).any(axis=1), eos)

    def piece(self, i: int) -> tuple[str, ...]:
        """The units of n-gram ``i``, end token and padding dropped."""
        eos, vocab = self.eos, self.table.vocab
        return tuple(vocab[j] for j in self.table.grams[i].tolist() if j >= 0 and j != eos)

    def draw(self, rng: np.random.Generator, k: int) -> np.ndarray:
        """``k`` n-gram indices drawn independently, each with probability count / total."""
        total = int(self.cumulative[-1])
        return np.searchsorted(self.cumulative, rng.integers(0, total, size=k), side="right")


def sample_ngrams(sampler: Sampler, max_len: int, rng: np.random.Generator) -> tuple[list[str], int, bool]:
    """One answer of at most ``max_len`` units drawn from ``sampler`` (Ding et al. Sec. 2.2 "N-gram").

    Returns ``(units, n_drawn, ended)``: the answer's units (characters or words), how many n-grams were
    drawn, and whether it ended at an end-of-sentence n-gram (else at ``max_len``). Empty when the table
    is empty or ``max_len < 1``."""
    if max_len < 1 or not len(sampler.table):
        return [], 0, False
    out: list[str] = []
    drawn = 0
    batch = max(4, max_len // max(1, sampler.table.n) + 2)
    give_up = 50 * max_len + 100  # a table of end tokens and blanks only cannot fill an answer
    while drawn < give_up:
        for i in sampler.draw(rng, batch).tolist():
            drawn += 1
            out.extend(sampler.piece(i))
            blank = not any(u.strip() for u in out)
            if len(out) >= max_len and not blank:
                return out[:max_len], drawn, False
            if sampler.ends[i] and not blank:
                return out[:max_len], drawn, True
            if blank and len(out) >= max_len:
                out = []
    return [], drawn, False


def join_units(units: Sequence[str], unit: Unit) -> str:
    """Characters concatenated, words joined by single spaces."""
    return "".join(units) if unit == "char" else " ".join(units)


_TABLES: dict[tuple[CorpusSpec, Unit, int], Sampler] = {}
_LOCK = threading.Lock()
CACHE_VERSION = 1
"""Bumped whenever :func:`build_table` or :func:`word_tokens` change what they produce (old files are ignored)."""
CACHE_ENV = "CALLBLUFF_NGRAM_CACHE"


def table_cache_dir() -> Path:
    """Where generic n-gram tables (and ContentBurst's noun counts) are kept between processes:
    ``$CALLBLUFF_NGRAM_CACHE``, else the callbluff cache's ``ngram-tables``."""
    env = os.environ.get(CACHE_ENV)
    if env:
        p = Path(env)
        p.mkdir(parents=True, exist_ok=True)
        return p
    return cache_dir("ngram-tables")


def _table_path(fingerprint: str, unit: Unit, n: int) -> Path:
    return table_cache_dir() / f"{fingerprint}-{unit}{n}-v{CACHE_VERSION}.npz"


def cached_table(documents: Sequence[str], fingerprint: str, unit: Unit, n: int) -> NgramTable:
    """:func:`build_table` of a corpus, kept on disk under its fingerprint (the SHA-256 of its documents), so
    it is built once per corpus, not once per process. An unreadable cache file is rebuilt and replaced; a
    cache directory that cannot be written is skipped."""
    path = _table_path(fingerprint, unit, n)
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as z:
                return NgramTable(unit, n, tuple(str(v) for v in z["vocab"].tolist()), z["grams"], z["counts"])
        except (OSError, ValueError, KeyError):
            pass
    table = build_table(documents, unit, n)
    try:
        tmp = path.with_suffix(f".{os.getpid()}.tmp.npz")
        np.savez(tmp, vocab=np.asarray(table.vocab, dtype=str), grams=table.grams, counts=table.counts)
        os.replace(tmp, path)
    except OSError:
        pass
    return table


def generic_sampler(spec: CorpusSpec, unit: Unit, n: int) -> tuple[Sampler, str]:
    """The sampler of the generic corpus's ``unit`` ``n``-grams and the corpus fingerprint, built once per
    corpus (disk cache, :func:`cached_table`) and loaded once per process (every prompt shares it)."""
    corpus = generic_corpus(spec)
    key = (spec, unit, n)
    with _LOCK:
        hit = _TABLES.get(key)
    if hit is None:
        hit = Sampler.of(cached_table(corpus.documents, corpus.fingerprint, unit, n))
        with _LOCK:
            hit = _TABLES.setdefault(key, hit)
    return hit, corpus.fingerprint


_VOCABS: dict[CorpusSpec, tuple[str, ...]] = {}


def generic_vocabulary(spec: CorpusSpec) -> tuple[tuple[str, ...], str]:
    """The sorted word types (:func:`word_tokens`) of the generic corpus and its fingerprint: the vocabulary
    of its word unigram table (:func:`cached_table`, so built once per corpus), end token left out."""
    corpus = generic_corpus(spec)
    with _LOCK:
        hit = _VOCABS.get(spec)
    if hit is None:
        hit = tuple(w for w in cached_table(corpus.documents, corpus.fingerprint, "word", 1).vocab if w != EOS_WORD)
        with _LOCK:
            hit = _VOCABS.setdefault(spec, hit)
    return hit, corpus.fingerprint
