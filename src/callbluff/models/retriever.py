"""A DrQA-style open-domain question-answering system: TF-IDF retriever + reader.

Chen et al. (2017), "Reading Wikipedia to Answer Open-Domain Questions" (DrQA), Sec. 3.1 "Document
Retriever": documents and questions are compared as TF-IDF weighted bag-of-word vectors over **unigrams and
bigrams**, hashed into ``2**24`` bins with murmur3 (feature hashing, Weinberger et al. 2009); the top ``n``
documents go to a reader, whose answers are ranked across paragraphs. What is implemented here:

* **Tokens**: lower-cased ``\\w+`` runs after Unicode NFD with combining marks removed (DrQA keeps marks
  inside tokens; Python's ``re`` has no ``\\p{M}``, so accents are folded instead); unigrams and bigrams,
  an n-gram dropped when any of its words is a stop word (DrQA's ``filter_ngram(mode='any')``;
  scikit-learn's English stop-word list stands in for DrQA's NLTK-based list). Hashing: scikit-learn's
  :class:`~sklearn.feature_extraction.text.HashingVectorizer` (murmur3, ``alternate_sign=False``),
  ``2**24`` features by default.
* **Weights** (DrQA ``build_tfidf.py``): document term weights ``log(1 + tf) * idf`` with
  ``idf = max(0, log((N - df + 0.5) / (df + 0.5)))``; the query vector gets the same weights, L2-normalised;
  score = dot product (documents are not length-normalised, as in DrQA). scikit-learn's ``TfidfTransformer``
  is not used because its dense ``idf_`` over ``2**24`` hashed features would take 134 MB and it has no
  BM25-style idf; the document frequencies are kept sparse instead.
* **Reader**: every paragraph of the top ``n_docs`` documents goes to a reading-comprehension reader
  (:class:`~callbluff.models.qa.TransformerQA`, :class:`~callbluff.models.qa.SlidingWindowQA`, or any object
  with ``answer(questions, contexts) -> list[list[Candidate]]`` or a ``reading`` Target's ``predict``).
* **Aggregation** (DrQA takes the best span over all paragraphs): candidates whose SQuAD-normalised texts are
  equal are merged, with ``aggregate="max"`` (best score, DrQA's rule) or ``"sum"`` (``log sum exp`` of the
  scores, i.e. the sum of the unnormalised probabilities ``exp(score)`` over paragraphs, rewarding answers
  found in several paragraphs). The output ranks the merged candidates (Recall@k, MRR, MAP need that).

Usable directly as a ``questions`` :class:`~callbluff.targets.base.Target`: ``Input.text`` is the question;
``Output.answer`` the best answer and ``Output.candidates`` the ranked answers with scores.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import scipy.sparse as sp

from callbluff.metrics import normalize_answer as _norm
from callbluff.models import persist
from callbluff.models.qa import SlidingWindowQA, TransformerQA
from callbluff.progress import Progress
from callbluff.records import canonical_json
from callbluff.targets.base import Candidate, Input, Output

__all__ = ["Document", "RetrieverReader", "TfidfRetriever", "normalize_answer", "squad_documents"]

_TOKEN = re.compile(r"\w+", re.UNICODE)


def normalize_answer(text: str) -> str:
    """The official SQuAD v1.1 answer normalisation (lower case, no punctuation/articles/extra spaces)."""
    return _norm(text)


@dataclass(frozen=True)
class Document:
    """One retrievable document: a stable ``id``, a ``title`` and its paragraphs (the reader's contexts)."""

    id: str
    paragraphs: tuple[str, ...]
    title: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(self.paragraphs)


def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


_STOP = _stop_words()


def drqa_ngrams(text: str, ngram: int = 2) -> list[str]:
    """The hashed features of ``text``: lower-cased, accent-folded word n-grams (1..ngram), no stop words."""
    folded = "".join(ch for ch in unicodedata.normalize("NFD", text) if not unicodedata.combining(ch))
    words = _TOKEN.findall(folded.lower())
    keep = [w not in _STOP for w in words]
    grams: list[str] = []
    for n in range(1, ngram + 1):
        for i in range(len(words) - n + 1):
            if all(keep[i:i + n]):
                grams.append(" ".join(words[i:i + n]))
    return grams


def squad_documents(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    unit: Literal["paragraph", "article"] = "paragraph",
) -> list[Document]:
    """Documents from SQuAD JSON files (plain or .gz): one per paragraph (id ``TITLE#i``) or per article."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    if unit not in ("paragraph", "article"):
        raise ValueError(f"squad_documents: unit={unit!r}; use 'paragraph' or 'article'")
    docs: list[Document] = []
    seen: set[str] = set()
    for path in paths:
        p = Path(path)
        opener = gzip.open if p.suffix == ".gz" else open
        try:
            with opener(p, "rt", encoding="utf-8") as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{p}: cannot read SQuAD JSON ({e}); expected the official "
                             "{{version, data: [{{title, paragraphs: [{{context, qas}}]}}]}} file") from e
        if not isinstance(data, dict) or "data" not in data:
            raise ValueError(f"{p}: key 'data' missing; expected a SQuAD JSON file")
        for ai, article in enumerate(data["data"]):
            title = str(article.get("title", f"article{ai}"))
            paras = [str(par["context"]) for par in article.get("paragraphs", [])]
            if unit == "article":
                ids = [title]
                groups = [tuple(paras)]
            else:
                ids = [f"{title}#{i}" for i in range(len(paras))]
                groups = [(c,) for c in paras]
            for did, group in zip(ids, groups, strict=True):
                base, k = did, 1
                while did in seen:  # same title in two files: keep ids unique and stable
                    k += 1
                    did = f"{base}~{k}"
                seen.add(did)
                docs.append(Document(id=did, paragraphs=group, title=title))
    return docs


class TfidfRetriever:
    """DrQA's hashed unigram+bigram TF-IDF document ranker (see the module docstring)."""

    def __init__(self, *, n_features: int = 2**24, ngram: int = 2) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer

        self.n_features = int(n_features)
        self.ngram = int(ngram)
        self._vec = HashingVectorizer(analyzer=self._analyze, n_features=self.n_features,
                                      alternate_sign=False, norm=None, dtype=np.float32)
        # (n_docs, n seen features) log1p(tf) * idf; column j is hashed feature df_cols[j]
        self.doc_matrix: sp.csr_matrix | None = None
        self._term_docs: sp.csr_matrix | None = None
        self.df_cols: np.ndarray = np.zeros(0, dtype=np.int64)  # sorted hashed features with df > 0
        self.df_vals: np.ndarray = np.zeros(0, dtype=np.int64)
        self.n_docs = 0

    def _analyze(self, text: str) -> list[str]:
        return drqa_ngrams(text, self.ngram)

    def counts(self, texts: Iterable[str]) -> sp.csr_matrix:
        return self._vec.transform(texts).tocsr()

    def fit(self, texts: Sequence[str], progress: Progress | None = None) -> TfidfRetriever:
        """Index ``texts``. With ``progress`` the (stateless) hashed counts are taken 2,000 documents at a time
        and stacked, which gives the same matrix as one pass, and stage ``documents indexed`` is reported."""
        if progress is None:
            counts = self.counts(texts)
        else:
            parts = []
            progress("documents indexed", 0, len(texts))
            for b in range(0, len(texts), 2000):
                parts.append(self.counts(texts[b:b + 2000]))
                progress("documents indexed", min(b + 2000, len(texts)), len(texts))
            counts = sp.vstack(parts, format="csr") if parts else self.counts(texts)
        self.n_docs = counts.shape[0]
        cols, df = np.unique(counts.indices, return_counts=True)
        self.df_cols, self.df_vals = cols.astype(np.int64), df.astype(np.int64)
        # compact columns: position of each hashed feature among those seen in the collection
        compact = sp.csr_matrix((counts.data, np.searchsorted(self.df_cols, counts.indices), counts.indptr),
                                shape=(self.n_docs, len(self.df_cols)))
        compact.data = (np.log1p(compact.data) * self._idf(self.df_vals)[compact.indices]).astype(np.float32)
        compact.eliminate_zeros()
        self._set_matrix(compact)
        return self

    def _set_matrix(self, m: sp.csr_matrix) -> None:
        self.doc_matrix = m
        self._term_docs = m.T.tocsr()  # (features seen, docs): a query's rows are read directly

    def _idf(self, df: np.ndarray) -> np.ndarray:
        idf = np.log((self.n_docs - df + 0.5) / (df + 0.5))
        return np.maximum(idf, 0.0).astype(np.float32)

    def query_matrix(self, questions: Sequence[str]) -> sp.csr_matrix:
        """L2-normalised ``log(1 + tf) * idf`` rows over the collection's (compact) feature columns;
        n-grams never seen in the collection are dropped."""
        q = self.counts(questions)
        pos = np.searchsorted(self.df_cols, q.indices)
        pos_c = np.clip(pos, 0, max(len(self.df_cols) - 1, 0))
        seen = (self.df_cols[pos_c] == q.indices) if len(self.df_cols) else np.zeros(len(pos), dtype=bool)
        data = np.where(seen, np.log1p(q.data) * self._idf(self.df_vals[pos_c].astype(np.float64)), 0.0)
        qm = sp.csr_matrix((data.astype(np.float32), pos_c, q.indptr), shape=(q.shape[0], len(self.df_cols)))
        qm.eliminate_zeros()
        norms = np.sqrt(np.asarray(qm.multiply(qm).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        return sp.csr_matrix(sp.diags(1.0 / norms) @ qm)

    def search(self, questions: Sequence[str], k: int) -> list[list[tuple[int, float]]]:
        """Top-``k`` (document index, score) per question, best first (score > 0 only; ties by index)."""
        if self.doc_matrix is None:
            raise RuntimeError("TfidfRetriever: call fit(texts) or load an index first")
        out: list[list[tuple[int, float]]] = []
        for b in range(0, len(questions), 256):
            scores = (self.query_matrix(questions[b:b + 256]) @ self._term_docs).tocsr()
            scores.eliminate_zeros()
            for r in range(scores.shape[0]):
                lo, hi = scores.indptr[r], scores.indptr[r + 1]
                data, idx = scores.data[lo:hi], scores.indices[lo:hi]
                if len(data) == 0:
                    out.append([])
                    continue
                kk = min(k, len(data))
                top = np.argpartition(-data, kk - 1)[:kk]
                top = top[np.lexsort((idx[top], -data[top]))]
                out.append([(int(idx[t]), float(data[t])) for t in top])
        return out

    def save(self, path: Path) -> None:
        if self.doc_matrix is None:
            raise RuntimeError("TfidfRetriever: nothing to save, call fit() first")
        sp.save_npz(path / "tfidf.npz", self.doc_matrix, compressed=True)
        np.savez_compressed(path / "df.npz", cols=self.df_cols, vals=self.df_vals,
                            n_docs=np.array([self.n_docs]))

    @classmethod
    def load(cls, path: Path, *, n_features: int, ngram: int) -> TfidfRetriever:
        r = cls(n_features=n_features, ngram=ngram)
        for name in ("tfidf.npz", "df.npz"):
            if not (path / name).is_file():
                raise FileNotFoundError(f"{path / name} missing: the index is incomplete; rebuild it with "
                                        "RetrieverReader(...).save(DIR)")
        with np.load(path / "df.npz") as z:
            r.df_cols, r.df_vals, r.n_docs = z["cols"], z["vals"], int(z["n_docs"][0])
        m = sp.load_npz(path / "tfidf.npz").tocsr()
        if m.shape != (r.n_docs, len(r.df_cols)):
            raise ValueError(f"{path / 'tfidf.npz'}: shape {m.shape} does not match df.npz ({r.n_docs} documents, "
                             f"{len(r.df_cols)} features); rebuild the index")
        r._set_matrix(m)
        return r


def _reader_answers(reader: Any, questions: list[str], contexts: list[str]) -> list[list[Candidate]]:
    if hasattr(reader, "answer"):
        return list(reader.answer(questions, contexts))
    outs = reader.predict([Input("reading", q, context=c) for q, c in zip(questions, contexts, strict=True)])
    return [list(o.candidates) if o.candidates else ([Candidate(o.answer, 0.0)] if o.answer else [])
            for o in outs]


def _make_reader(reader: Any) -> Any:
    if isinstance(reader, str):
        if reader in ("sliding-window", "sliding-window-qa"):
            return SlidingWindowQA()
        if Path(reader).expanduser().is_dir():
            return TransformerQA(reader)
        raise ValueError(f"RetrieverReader: reader={reader!r}; use 'sliding-window', a Hugging Face QA model "
                         "directory, or a reader object (SlidingWindowQA / TransformerQA / reading Target)")
    if not (hasattr(reader, "answer") or hasattr(reader, "predict")):
        raise TypeError(f"RetrieverReader: reader {type(reader).__name__} has neither answer() nor predict()")
    return reader


class RetrieverReader:
    """DrQA-style retriever + reader over a document collection, usable as a ``questions`` Target.

    Build with :meth:`from_squad` (documents = SQuAD paragraphs or articles) or :meth:`from_texts`; persist
    with :meth:`save` / :meth:`load` (the TF-IDF index, the documents and the reader's configuration).
    ``n_docs`` documents are retrieved per question (DrQA: 5) and all their paragraphs read; ``top_k``
    merged answers are returned. ``progress`` (:mod:`callbluff.progress`) hears the documents indexed while
    the index is built (the reader is not trained: SlidingWindowQA is a fixed algorithm, TransformerQA
    pre-trained).
    """

    kind = "retriever-reader"

    def __init__(
        self,
        documents: Sequence[Document],
        *,
        reader: Any = "sliding-window",
        n_docs: int = 5,
        top_k: int = 5,
        aggregate: Literal["max", "sum"] = "max",
        n_features: int = 2**24,
        ngram: int = 2,
        retriever: TfidfRetriever | None = None,
        meta: dict[str, Any] | None = None,
        progress: Progress | None = None,
    ) -> None:
        if aggregate not in ("max", "sum"):
            raise ValueError(f"RetrieverReader: aggregate={aggregate!r}; use 'max' or 'sum'")
        if not documents:
            raise ValueError("RetrieverReader: the document collection is empty")
        self.documents = list(documents)
        self.reader = _make_reader(reader)
        self.n_docs = int(n_docs)
        self.top_k = int(top_k)
        self.aggregate = aggregate
        self.meta = dict(meta or {})
        if retriever is None:
            retriever = TfidfRetriever(n_features=n_features, ngram=ngram).fit([d.text for d in self.documents],
                                                                               progress)
        self.retriever = retriever
        if retriever.doc_matrix is None or retriever.doc_matrix.shape[0] != len(self.documents):
            raise ValueError("RetrieverReader: the index and the document list disagree in length; rebuild it")
        self._index_digest: str | None = None

    # -- construction ---------------------------------------------------------------------------------
    @classmethod
    def from_squad(
        cls,
        paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        *,
        unit: Literal["paragraph", "article"] = "paragraph",
        **kwargs: Any,
    ) -> RetrieverReader:
        """Index every paragraph (or article) of one or more SQuAD JSON files."""
        plist = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        meta = {"source": [Path(p).name for p in plist], "unit": unit}
        return cls(squad_documents(plist, unit), meta=meta, **kwargs)

    @classmethod
    def from_texts(
        cls, texts: Sequence[str], *, ids: Sequence[str] | None = None, split_paragraphs: bool = True,
        **kwargs: Any,
    ) -> RetrieverReader:
        """Index plain texts; with ``split_paragraphs`` each text's blank-line-separated paragraphs are read
        separately by the reader."""
        ids = list(ids) if ids is not None else [str(i) for i in range(len(texts))]
        if len(ids) != len(texts) or len(set(ids)) != len(ids):
            raise ValueError("RetrieverReader.from_texts: ids must be unique and as many as texts")
        docs = []
        for did, t in zip(ids, texts, strict=True):
            paras = [p.strip() for p in re.split(r"\n\s*\n", t) if p.strip()] if split_paragraphs else [t]
            docs.append(Document(id=did, paragraphs=tuple(paras or [t])))
        return cls(docs, **kwargs)

    # -- Target ---------------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        return {"n_docs": self.n_docs, "top_k": self.top_k, "aggregate": self.aggregate,
                "n_features": self.retriever.n_features, "ngram": self.retriever.ngram}

    @property
    def fingerprint(self) -> str:
        if self._index_digest is None:
            h = hashlib.sha256()
            for d in self.documents:
                h.update(d.id.encode())
                h.update(b"\x00")
                h.update(d.text.encode())
                h.update(b"\x01")
            self._index_digest = h.hexdigest()[:16]
        reader_fp = getattr(self.reader, "fingerprint", type(self.reader).__name__)
        params = hashlib.sha256(canonical_json(self.params).encode()).hexdigest()[:12]
        return f"{self.kind}:{self._index_digest}:{params}:[{reader_fp}]"

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        outputs: list[Output | None] = [None] * len(inputs)
        ok = []
        for i, inp in enumerate(inputs):
            if not inp.text.strip():
                outputs[i] = Output.failed(f"RetrieverReader: input {i} has an empty question (Input.text)")
            else:
                ok.append(i)
        if ok:
            for i, cands in zip(ok, self.answer([inputs[i].text for i in ok]), strict=True):
                outputs[i] = Output(answer=cands[0].text if cands else "", candidates=tuple(cands))
        return [o if o is not None else Output.failed("internal: no output") for o in outputs]

    # -- API ------------------------------------------------------------------------------------------
    def retrieve(self, questions: Sequence[str], k: int | None = None) -> list[list[tuple[str, float]]]:
        """The top ``k`` (default ``n_docs``) documents per question as (document id, TF-IDF score)."""
        hits = self.retriever.search(list(questions), k or self.n_docs)
        return [[(self.documents[d].id, s) for d, s in row] for row in hits]

    def answer(self, questions: Sequence[str]) -> list[list[Candidate]]:
        """Ranked answers (best first, at most ``top_k``) aggregated over the retrieved paragraphs."""
        hits = self.retriever.search(list(questions), self.n_docs)
        q_rep: list[str] = []
        ctx: list[str] = []
        owner: list[int] = []
        for qi, row in enumerate(hits):
            for d, _ in row:
                for para in self.documents[d].paragraphs:
                    q_rep.append(questions[qi])
                    ctx.append(para)
                    owner.append(qi)
        per_par = _reader_answers(self.reader, q_rep, ctx) if ctx else []
        merged: list[dict[str, tuple[float, float, str]]] = [{} for _ in questions]
        for qi, cands in zip(owner, per_par, strict=True):
            bucket = merged[qi]
            for c in cands:
                key = normalize_answer(c.text) or c.text.strip().lower()
                if not key:
                    continue
                if key not in bucket:
                    bucket[key] = (c.score, c.score, c.text)
                else:
                    agg, best, text = bucket[key]
                    agg = max(agg, c.score) if self.aggregate == "max" else _logaddexp(agg, c.score)
                    if c.score > best:
                        best, text = c.score, c.text
                    bucket[key] = (agg, best, text)
        out = []
        for bucket in merged:
            ranked = sorted(bucket.values(), key=lambda t: (-t[0], -t[1], t[2]))[: self.top_k]
            out.append([Candidate(text, agg) for agg, _, text in ranked])
        return out

    # -- persistence ----------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``model.json``, the index (``tfidf.npz``, ``df.npz``), ``documents.jsonl.gz`` and the
        reader (``reader/model.json`` when the reader can save itself)."""
        out = Path(path)
        out.mkdir(parents=True, exist_ok=True)
        self.retriever.save(out)
        with gzip.open(out / "documents.jsonl.gz", "wt", encoding="utf-8") as f:
            for d in self.documents:
                f.write(json.dumps({"id": d.id, "title": d.title, "paragraphs": list(d.paragraphs)},
                                   ensure_ascii=False) + "\n")
        reader_kind = getattr(self.reader, "kind", None)
        if hasattr(self.reader, "save") and reader_kind:
            self.reader.save(out / "reader")
        else:
            reader_kind = None
        meta = {"kind": self.kind, "params": self.params, "reader": reader_kind, "meta": self.meta,
                "n_documents": len(self.documents), "fingerprint": self.fingerprint}
        return persist.write_meta(out, meta)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, reader: Any = None) -> RetrieverReader:
        """Load a saved system; ``reader`` overrides the saved reader (needed when it could not be saved)."""
        root = Path(path)
        meta = persist.read_meta(root, cls.kind)
        params = dict(meta["params"])
        docs = []
        with gzip.open(root / "documents.jsonl.gz", "rt", encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                docs.append(Document(id=d["id"], paragraphs=tuple(d["paragraphs"]), title=d.get("title", "")))
        if reader is None:
            kinds = {SlidingWindowQA.kind: SlidingWindowQA, TransformerQA.kind: TransformerQA}
            if meta.get("reader") not in kinds:
                raise ValueError(f"{root / persist.MODEL_JSON}: reader {meta.get('reader')!r} was not saved; pass reader=... to load()")
            reader = kinds[meta["reader"]].load(root / "reader")
        retriever = TfidfRetriever.load(root, n_features=params["n_features"], ngram=params["ngram"])
        return cls(docs, reader=reader, n_docs=params["n_docs"], top_k=params["top_k"],
                   aggregate=params["aggregate"], retriever=retriever, meta=meta.get("meta"))


def _logaddexp(a: float, b: float) -> float:
    m = max(a, b)
    return m + math.log(math.exp(a - m) + math.exp(b - m))
