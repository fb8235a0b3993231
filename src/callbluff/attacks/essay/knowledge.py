"""Knowledge corpus, key phrases and retrieval for AddWikiRelated / AddWikiUnrelated (Kumar et al. 2020,
Sec. 3.3: "a list of important topics from each prompt using key-phrase extraction. The Wikipedia articles of
each of these topics were extracted and sentence tokenized").

- :func:`corpus_index`: a document collection (directory of ``.txt``, JSONL with a ``text`` field, SQuAD
  JSON; default the SQuAD v1.1 Wikipedia paragraphs of :mod:`callbluff.resources.squad_fetch`) and its
  scikit-learn TF-IDF index, built once per process per corpus file (cached on path, size and mtime).
- :func:`key_phrases`: spaCy noun chunks of a prompt's texts ranked by TF-IDF.
- :func:`fit_knowledge`: the fit state of one prompt: its key phrases and the candidate sentences of the
  related documents (or of documents matching none of the phrases).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, TypedDict

import numpy as np

from callbluff.records import Prompt, Record
from callbluff.resources.context import DEPENDENCY_CACHE_SIZE, Resources
from callbluff.resources.squad_fetch import squad_path

MIN_WORDS = 4
_SKIP_POS = frozenset({"DET", "PRON", "PUNCT", "NUM", "SYM", "X", "CCONJ", "ADP", "PART", "SPACE"})


class KnowledgeState(TypedDict):
    """Fit state of an AddWiki attack for one prompt (plain JSON: its hash is stable)."""

    corpus: str
    key_phrases: list[str]
    documents: list[list[Any]]
    sentences: list[str]


@dataclass(frozen=True)
class Document:
    title: str
    text: str


class CorpusIndex:
    """Documents and their TF-IDF matrix (scikit-learn ``TfidfVectorizer``: English stop words removed,
    sublinear tf, l2-normalised rows, so a query's dot product with a row is its cosine similarity)."""

    def __init__(self, label: str, docs: Sequence[Document]) -> None:
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.label = label
        self.docs = list(docs)
        self.vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True, dtype=np.float32)
        self.matrix = self.vectorizer.fit_transform([d.text for d in self.docs]).tocsr()
        self.analyze = self.vectorizer.build_analyzer()
        vocab = self.vectorizer.vocabulary_
        self.idf = {w: float(self.vectorizer.idf_[i]) for w, i in vocab.items()}

    def scores(self, queries: Sequence[str]) -> np.ndarray:
        """``(n_docs, n_queries)`` cosine similarities (0 where a document shares no term with a query)."""
        q = self.vectorizer.transform(list(queries))
        return np.asarray((self.matrix @ q.T).todense(), dtype=np.float64)


# -- reading corpora ----------------------------------------------------------------------------------------

def _read(p: Path) -> str:
    raw = p.read_bytes()
    return (gzip.decompress(raw) if p.suffix == ".gz" else raw).decode("utf-8-sig")


def _squad_docs(p: Path) -> list[Document]:
    try:
        data = json.loads(_read(p))
    except ValueError as e:
        raise ValueError(f"corpus {p}: not valid JSON ({e}); a .json corpus must be SQuAD-shaped") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ValueError(f"corpus {p}: a .json corpus must be SQuAD-shaped ({{'data': [{{'title', 'paragraphs': "
                         "[{'context'}]}]}); use .jsonl with a 'text' field for other documents")
    docs = []
    for a, art in enumerate(data["data"]):
        title = str(art.get("title", f"article {a}")).replace("_", " ")
        for par in art.get("paragraphs", []):
            if isinstance(par, dict) and str(par.get("context", "")).strip():
                docs.append(Document(title, str(par["context"])))
    return docs


def _jsonl_docs(p: Path) -> list[Document]:
    docs = []
    for n, line in enumerate(_read(p).splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as e:
            raise ValueError(f"corpus {p} line {n}: not JSON ({e})") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
            raise ValueError(f"corpus {p} line {n}: expected an object with a string 'text' field")
        if obj["text"].strip():
            docs.append(Document(str(obj.get("title") or obj.get("id") or f"line {n}"), obj["text"]))
    return docs


def default_corpus_files() -> list[Path]:
    """The SQuAD v1.1 train and dev files that set-up fetched (those present)."""
    return [p for p in (squad_path("train"), squad_path("dev")) if p.is_file()]


def corpus_files(corpus: str | None) -> list[Path]:
    """The files of ``corpus`` (None: the default SQuAD files); FileNotFoundError naming the fix."""
    if corpus is None:
        found = default_corpus_files()
        if not found:
            raise FileNotFoundError(
                f"no knowledge corpus: the default SQuAD v1.1 Wikipedia paragraphs are not at {squad_path('train')} "
                f"or {squad_path('dev')}; run `python -m callbluff.resources.squad_fetch` (scripts/setup.sh does), "
                "or pass corpus= a directory of .txt files, a .jsonl with a 'text' field or a SQuAD JSON")
        return found
    p = Path(corpus).expanduser()
    if p.is_dir():
        files = sorted(p.glob("*.txt"))
        if not files:
            raise FileNotFoundError(f"corpus {p}: the directory holds no .txt file (one document per file)")
        return files
    if not p.is_file():
        raise FileNotFoundError(f"corpus {p}: no such file or directory; pass a directory of .txt files, a .jsonl "
                                "with a 'text' field or a SQuAD JSON")
    return [p]


def read_corpus(files: Sequence[Path]) -> list[Document]:
    docs: list[Document] = []
    for p in files:
        kind = p.name.removesuffix(".gz").rsplit(".", 1)[-1].lower()
        if kind == "json":
            docs.extend(_squad_docs(p))
        elif kind == "jsonl":
            docs.extend(_jsonl_docs(p))
        elif kind == "txt":
            text = _read(p)
            if text.strip():
                docs.append(Document(p.stem, text))
        else:
            raise ValueError(f"corpus {p}: unknown format {p.suffix!r}; use .txt (directory), .jsonl or SQuAD .json")
    if not docs:
        raise ValueError(f"corpus {', '.join(map(str, files))}: no non-blank document")
    return docs


@lru_cache(maxsize=2)
def _cached_index(key: tuple[tuple[str, int, int], ...]) -> CorpusIndex:
    files = [Path(k[0]) for k in key]
    return CorpusIndex(" + ".join(p.name for p in files), read_corpus(files))


def corpus_index(corpus: str | None) -> CorpusIndex:
    """The index of ``corpus``, built once per process (cached on each file's path, size and mtime)."""
    files = corpus_files(corpus)
    return _cached_index(tuple((str(p.resolve()), p.stat().st_size, p.stat().st_mtime_ns) for p in files))


# -- key phrases --------------------------------------------------------------------------------------------

def noun_phrases(text: str, res: Resources) -> list[str]:
    """spaCy noun chunks of ``text`` as lower-cased phrases (nouns lemmatised) without determiners, pronouns, stop
    words, numbers or ASAP anonymisation tokens (``@CAPS1``); empty chunks are dropped."""
    out = []
    for chunk in res.dependency_doc(text).noun_chunks:  # tags + parse; NER changes neither, so it is left out
        words = [(t.lemma_ if t.pos_ in ("NOUN", "PROPN") else t.text).lower() for t in chunk
                 if t.pos_ not in _SKIP_POS and not t.is_stop and t.is_alpha and len(t.text) > 1]
        if words:
            out.append(" ".join(words[-4:]))
    return out


_PHRASE_COUNTS: OrderedDict[str, Counter[str]] = OrderedDict()
_PHRASE_COUNTS_SIZE = 64


def phrase_counts(texts: Sequence[str], res: Resources) -> Counter[str]:
    """The :func:`noun_phrases` of ``texts`` counted; the texts are parsed in one batch without NER
    (``res.dependency_docs``: one ``nlp.pipe``) and the counts kept per set of texts, so AddWikiRelated, AddWikiUnrelated and every
    grid point of them fit on a prompt's texts with one parse (a fresh Counter is returned each time)."""
    key = hashlib.sha256("\x00".join(texts).encode("utf-8", "surrogatepass")).hexdigest()
    hit = _PHRASE_COUNTS.get(key)
    if hit is None:
        hit = Counter()
        for k in range(0, len(texts), DEPENDENCY_CACHE_SIZE):
            batch = list(texts[k:k + DEPENDENCY_CACHE_SIZE])
            res.dependency_docs(batch, batch_size=32)
            for text in batch:
                hit.update(noun_phrases(text, res))
        _PHRASE_COUNTS[key] = hit
        while len(_PHRASE_COUNTS) > _PHRASE_COUNTS_SIZE:
            _PHRASE_COUNTS.popitem(last=False)
    _PHRASE_COUNTS.move_to_end(key)
    return Counter(hit)


def prompt_texts(records: Sequence[Record], prompt: Prompt | None, max_records: int) -> list[str]:
    """The prompt's text and passage, then the texts of its first ``max_records`` responses by id."""
    texts = [t for t in ((prompt.text if prompt else ""), (prompt.source or "") if prompt else "") if t.strip()]
    ordered = sorted(((r.id, t) for r in records if isinstance(t := getattr(r, "text", None), str)),
                     key=lambda pair: pair[0])
    return texts + [t for _, t in ordered[:max_records] if t.strip()]


def rank_phrases(counts: Counter[str], index: CorpusIndex, n: int) -> list[str]:
    """The ``n`` phrases of highest TF-IDF: ``(1 + log tf) * mean idf`` of the phrase's words in the corpus;
    phrases with no word in the corpus vocabulary cannot be retrieved and are dropped. Ties by phrase."""
    scored = []
    for phrase, tf in counts.items():
        idfs = [index.idf[w] for w in index.analyze(phrase) if w in index.idf]
        if idfs:
            scored.append((-(1.0 + math.log(tf)) * (sum(idfs) / len(idfs)), phrase))
    return [p for _, p in sorted(scored)[:n]]


# -- the fit state ------------------------------------------------------------------------------------------

def _sentences(doc: Document, res: Resources) -> list[str]:
    return [" ".join(doc.text[a:b].split()) for a, b in res.spans(doc.text).sentences
            if len(doc.text[a:b].split()) >= MIN_WORDS]


def _order_key(salt: str, i: int, doc: Document) -> str:
    return hashlib.sha256(f"{salt}\x00{i}\x00{doc.title}".encode()).hexdigest()


def fit_knowledge(records: Sequence[Record], prompt: Prompt | None, res: Resources, *, related: bool,
                  corpus: str | None, key_phrases: Sequence[str] | None, n_phrases: int, docs_per_phrase: int,
                  max_sentences: int, max_fit_records: int, who: str) -> KnowledgeState:
    """Key phrases of ``prompt`` and the candidate sentences (related: of the ``docs_per_phrase`` best
    documents of each phrase; unrelated: of documents matching no phrase, outside the related articles)."""
    try:
        index = corpus_index(corpus)
    except (OSError, ValueError) as e:
        raise type(e)(f"{who}: {e}") from None
    if key_phrases:
        phrases = [" ".join(p.lower().split()) for p in key_phrases if p.strip()][:n_phrases]
    else:
        phrases = rank_phrases(phrase_counts(prompt_texts(records, prompt, max_fit_records), res), index, n_phrases)
    state: KnowledgeState = {"corpus": index.label, "key_phrases": phrases, "documents": [], "sentences": []}
    if not phrases:
        return state
    scores = index.scores(phrases)
    picked: list[int] = []
    for j in range(len(phrases)):
        col = scores[:, j]
        hits = np.flatnonzero(col > 0)
        best = [int(i) for i in hits[np.lexsort((hits, -col[hits]))] if int(i) not in picked]
        picked.extend(best[:docs_per_phrase])
    if not related:
        taken_titles = {index.docs[i].title for i in picked}
        salt = "\x00".join(phrases)
        free = [i for i in np.flatnonzero(scores.max(axis=1) <= 0).tolist()
                if index.docs[i].title not in taken_titles]
        free.sort(key=lambda i: _order_key(salt, i, index.docs[i]))
        picked = free[:n_phrases * docs_per_phrase]
    seen: set[str] = set()
    for i in picked:
        doc = index.docs[i]
        state["documents"].append([doc.title, i])
        for s in _sentences(doc, res):
            if s not in seen and len(state["sentences"]) < max_sentences:
                seen.add(s)
                state["sentences"].append(s)
    return state
