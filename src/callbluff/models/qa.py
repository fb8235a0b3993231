"""Extractive reading-comprehension readers to attack out of the box.

Two readers, both usable directly as a :class:`~callbluff.targets.base.Target` for the ``reading`` task
(``Input.text`` = question, ``Input.context`` = paragraph); each :class:`Output` carries the best span as
``answer`` and the ranked candidate spans (best first, with scores) as ``candidates``:

* :class:`SlidingWindowQA`: the non-neural sliding-window baseline of Richardson et al. (2013) as used by
  the SQuAD paper (Rajpurkar et al. 2016, Sec. 4, "Sliding Window Baseline").
* :class:`TransformerQA`: a local Hugging Face extractive-QA model directory (e.g. the shared
  ``minilm-l6-squad``), decoded with the usual overflow/stride windows; the span decoding itself lives in
  :mod:`callbluff.targets.hf` (``load_qa`` / ``qa_predict``) and is reused here, not duplicated.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from callbluff.models import persist
from callbluff.records import canonical_json
from callbluff.resources.spacy_pipeline import load_english
from callbluff.targets.base import Candidate, Input, Output
from callbluff.targets.hf import load_qa, model_dir_hash, qa_predict

if TYPE_CHECKING:
    from spacy.tokens import Doc

__all__ = ["SlidingWindowQA", "TransformerQA", "reading_outputs"]



def _hash(obj: Any) -> str:
    return hashlib.sha256(canonical_json(obj).encode()).hexdigest()[:16]


def reading_outputs(
    inputs: Sequence[Input], answer_fn: Any, *, reader: str
) -> list[Output]:
    """Validate reading inputs, call ``answer_fn(questions, contexts) -> list[list[Candidate]]`` on the valid
    ones and wrap results as :class:`Output` (invalid inputs become error outputs, never exceptions)."""
    outputs: list[Output | None] = [None] * len(inputs)
    ok: list[int] = []
    for i, inp in enumerate(inputs):
        if inp.context is None or not inp.context.strip():
            outputs[i] = Output.failed(f"{reader}: input {i} has no context; reading-comprehension inputs need "
                                       "Input(task='reading', text=QUESTION, context=PARAGRAPH)")
        elif not inp.text.strip():
            outputs[i] = Output.failed(f"{reader}: input {i} has an empty question (Input.text)")
        else:
            ok.append(i)
    if ok:
        ranked = answer_fn([inputs[i].text for i in ok], [inputs[i].context for i in ok])
        for i, cands in zip(ok, ranked, strict=True):
            outputs[i] = Output(answer=cands[0].text if cands else "", candidates=tuple(cands))
    return [o if o is not None else Output.failed("internal: no output") for o in outputs]


# --------------------------------------------------------------------------------------------------
# Sliding window (Richardson et al. 2013; Rajpurkar et al. 2016 Sec. 4)
# --------------------------------------------------------------------------------------------------


@dataclass
class _Span:
    start: int  # index into the passage word list P (punctuation removed)
    end: int  # exclusive
    char_start: int
    char_end: int
    sent: int


@dataclass
class _Passage:
    words: list[str]  # P: lower-cased non-punctuation tokens
    ids: np.ndarray  # word ids (per passage vocabulary)
    vocab: dict[str, int]
    ic: np.ndarray  # IC(P_j) = log(1 + 1/C(P_j)) per position
    stop: np.ndarray  # bool per position
    sent_of: np.ndarray  # sentence index per position
    sent_bounds: list[tuple[int, int]]
    spans: list[_Span]
    text: str


class SlidingWindowQA:
    """The sliding-window baseline of the SQuAD paper (Rajpurkar et al. 2016, Sec. 4).

    What is implemented (per question, over the paragraph's spaCy tokens, punctuation removed, lower-cased):

    1. **Candidates.** The SQuAD paper takes all constituents of a constituency parse. spaCy has no
       constituency parser, so ``candidates="constituents"`` (default) approximates them by the projective
       subtree of every token (``left_edge..right_edge``; every dependency subtree is a constituent of the
       corresponding phrase-structure tree), plus noun chunks and named entities; ``"ngrams"`` takes all
       n-grams up to ``max_answer_words`` instead; ``"chunks"`` only noun chunks + entities + single tokens.
       Spans longer than ``max_answer_words`` words are dropped. *Assumption (paper silent):* candidates
       made only of question words or stop words are dropped (``exclude_question_words``), otherwise the
       question's own words win the overlap step.
    2. **Overlap filter.** "For each candidate answer, we compute the unigram/bigram overlap between the
       sentence containing it (excluding the candidate itself) and the question. We keep all the candidates
       that have the maximal overlap." Overlap = number of distinct shared unigrams + shared bigrams.
    3. **Sliding window** (Richardson et al. 2013, Algorithm 1): with ``S`` = question words ∪ candidate
       words, slide a window of ``|S|`` words over the passage ``P`` and take the best window's
       ``sum IC(P_j)`` over its words that are in ``S``, with inverse-count weighting
       ``IC(w) = log(1 + 1 / C(w))`` (``C(w)`` = count of ``w`` in ``P``).
    4. **Distance variant** (``distance=True``; Richardson et al. Algorithm 2, "SW+D"): subtract
       ``d = min |i - j| / (|P| - 1)`` between an occurrence ``i`` of a question word (``S_Q = Q ∩ P``
       minus stop words) and a word ``j`` of the candidate (``S_A`` = candidate words minus question
       words minus stop words); ``d = 1`` when either set is empty. *Assumption:* ``j`` ranges over the
       candidate's own positions (candidates are spans here, not external strings as in MCTest).

    Candidates are ranked lexicographically by (overlap, window score); ``Candidate.score`` encodes that
    order as ``2 * overlap + x / (1 + |x|)`` with ``x`` the window score (minus ``d``), so scores of
    different questions are comparable only loosely. The SQuAD paper reports dev EM 13.2 / F1 20.2 for
    this baseline (13.3 / 20.2 with distance); see ``benchmarks/reference_models.md`` for ours.
    """

    kind = "sliding-window-qa"

    def __init__(
        self,
        *,
        candidates: Literal["constituents", "ngrams", "chunks"] = "constituents",
        max_answer_words: int = 4,
        distance: bool = False,
        exclude_question_words: bool = True,
        top_k: int = 5,
        cache_size: int = 4096,
    ) -> None:
        if candidates not in ("constituents", "ngrams", "chunks"):
            raise ValueError(f"SlidingWindowQA: candidates={candidates!r}; use 'constituents', 'ngrams' or 'chunks'")
        if max_answer_words < 1 or top_k < 1:
            raise ValueError("SlidingWindowQA: max_answer_words and top_k must be >= 1")
        self.candidates = candidates
        self.max_answer_words = int(max_answer_words)
        self.distance = bool(distance)
        self.exclude_question_words = bool(exclude_question_words)
        self.top_k = int(top_k)
        self._cache: OrderedDict[str, _Passage] = OrderedDict()
        self._cache_size = int(cache_size)
        self._nlp: Any = None

    def __getstate__(self) -> dict[str, Any]:
        # workers re-load the spaCy pipeline lazily instead of receiving it pickled
        return {**self.__dict__, "_nlp": None, "_cache": OrderedDict()}

    # -- Target ---------------------------------------------------------------------------------------
    @property
    def params(self) -> dict[str, Any]:
        return {"candidates": self.candidates, "max_answer_words": self.max_answer_words,
                "distance": self.distance, "exclude_question_words": self.exclude_question_words,
                "top_k": self.top_k}

    @property
    def fingerprint(self) -> str:
        nlp = self._pipeline()
        return f"{self.kind}:v1:{nlp.meta.get('name')}-{nlp.meta.get('version')}:{_hash(self.params)}"

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        return reading_outputs(inputs, self.answer, reader="SlidingWindowQA")

    # -- API ------------------------------------------------------------------------------------------
    def answer(self, questions: Sequence[str], contexts: Sequence[str]) -> list[list[Candidate]]:
        """Ranked candidate spans (best first, at most ``top_k``) for each (question, context) pair."""
        self._prepare(contexts)
        nlp = self._pipeline()
        qdocs = list(nlp.tokenizer.pipe(questions))
        return [self._rank(qd, self._passage(c)) for qd, c in zip(qdocs, contexts, strict=True)]

    def save(self, path: str | os.PathLike[str]) -> Path:
        return persist.write_meta(path, {"kind": self.kind, "params": self.params, "fingerprint": self.fingerprint})

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> SlidingWindowQA:
        return cls(**persist.read_meta(path, cls.kind)["params"])

    # -- internals ------------------------------------------------------------------------------------
    def _pipeline(self) -> Any:
        if self._nlp is None:
            self._nlp = load_english("full")
        return self._nlp

    def _passage(self, context: str) -> _Passage:
        p = self._cache.get(context)
        if p is None:
            self._prepare([context])
            p = self._cache[context]
        self._cache.move_to_end(context)
        return p

    def _prepare(self, contexts: Sequence[str]) -> None:
        todo = list(dict.fromkeys(c for c in contexts if c not in self._cache))
        if not todo:
            return
        nlp = self._pipeline()
        for text, doc in zip(todo, nlp.pipe(todo, batch_size=64, disable=["lemmatizer"]), strict=True):
            self._cache[text] = self._build(doc)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    def _build(self, doc: Doc) -> _Passage:
        pos_of: dict[int, int] = {}  # spaCy token index -> passage position
        words: list[str] = []
        stop: list[bool] = []
        sent_of: list[int] = []
        sent_bounds: list[tuple[int, int]] = []
        for si, sent in enumerate(doc.sents):
            s0 = len(words)
            for tok in sent:
                if tok.is_punct or tok.is_space:
                    continue
                pos_of[tok.i] = len(words)
                words.append(tok.lower_)
                stop.append(tok.is_stop)
                sent_of.append(si)
            sent_bounds.append((s0, len(words)))
        vocab: dict[str, int] = {}
        ids = np.array([vocab.setdefault(w, len(vocab)) for w in words], dtype=np.int64)
        counts = np.bincount(ids, minlength=len(vocab)) if len(ids) else np.zeros(0)
        ic = np.log1p(1.0 / counts[ids]) if len(ids) else np.zeros(0)

        spans: dict[tuple[int, int], _Span] = {}

        def add(t0: int, t1: int) -> None:  # spaCy token range [t0, t1] inclusive
            while t0 <= t1 and t0 not in pos_of:
                t0 += 1
            while t1 >= t0 and t1 not in pos_of:
                t1 -= 1
            if t0 > t1:
                return
            a, b = pos_of[t0], pos_of[t1] + 1
            if b - a > self.max_answer_words or sent_of[a] != sent_of[b - 1] or (a, b) in spans:
                return
            spans[(a, b)] = _Span(a, b, doc[t0].idx, doc[t1].idx + len(doc[t1].text), sent_of[a])

        if self.candidates == "ngrams":
            for s0, s1 in sent_bounds:
                toks = [t for t in range(len(doc)) if t in pos_of and s0 <= pos_of[t] < s1]
                for i in range(len(toks)):
                    for j in range(i, min(i + self.max_answer_words, len(toks))):
                        add(toks[i], toks[j])
        else:
            if self.candidates == "constituents":
                for tok in doc:
                    add(tok.left_edge.i, tok.right_edge.i)
            else:
                for tok in doc:
                    add(tok.i, tok.i)
            for span in list(doc.noun_chunks) + list(doc.ents):
                add(span.start, span.end - 1)
        return _Passage(words=words, ids=ids, vocab=vocab, ic=ic, stop=np.array(stop, dtype=bool),
                        sent_of=np.array(sent_of, dtype=np.int64), sent_bounds=sent_bounds,
                        spans=sorted(spans.values(), key=lambda s: (s.start, s.end)), text=doc.text)

    def _rank(self, qdoc: Doc, p: _Passage) -> list[Candidate]:
        q_words = [t.lower_ for t in qdoc if not (t.is_punct or t.is_space)]
        q_set = set(q_words)
        q_bigrams = set(pairwise(q_words))
        n = len(p.words)
        if n == 0:
            return []
        q_ids = {p.vocab[w] for w in q_set if w in p.vocab}
        in_q = np.isin(p.ids, list(q_ids)) if q_ids else np.zeros(n, dtype=bool)
        # S_Q for the distance variant: question words found in P, minus stop words
        q_pos = np.flatnonzero(in_q & ~p.stop)
        scored: list[tuple[int, float, int, int, _Span]] = []
        for sp in p.spans:
            cand_words = p.words[sp.start:sp.end]
            content = [w for i, w in enumerate(cand_words) if not p.stop[sp.start + i]]
            if self.exclude_question_words and all(w in q_set for w in content):
                continue  # only question words / stop words
            # 1. unigram + bigram overlap of the candidate's sentence (minus the candidate) with the question
            s0, s1 = p.sent_bounds[sp.sent]
            rest = p.words[s0:sp.start] + p.words[sp.end:s1]
            left, right = p.words[s0:sp.start], p.words[sp.end:s1]
            bigrams = set(pairwise(left)) | set(pairwise(right))
            overlap = len(set(rest) & q_set) + len(bigrams & q_bigrams)
            # 2. sliding window with inverse-count weights, window |S|, S = Q ∪ A
            s_size = len(q_set | set(cand_words))
            mask = in_q.copy()
            a_ids = p.ids[sp.start:sp.end]
            mask |= np.isin(p.ids, a_ids)
            weights = np.where(mask, p.ic, 0.0)
            w = min(s_size, n)
            csum = np.concatenate(([0.0], np.cumsum(weights)))
            sw = float(np.max(csum[w:] - csum[:-w]))
            if self.distance:
                a_pos = [sp.start + i for i, word in enumerate(cand_words)
                         if not p.stop[sp.start + i] and word not in q_set]
                if len(q_pos) == 0 or not a_pos or n < 2:
                    d = 1.0
                else:
                    d = float(np.min(np.abs(q_pos[:, None] - np.array(a_pos)[None, :]))) / (n - 1)
                sw -= d
            scored.append((overlap, sw, -(sp.end - sp.start), -sp.start, sp))
        scored.sort(key=lambda t: (t[0], t[1], t[2], t[3]), reverse=True)
        out: list[Candidate] = []
        seen: set[str] = set()
        for overlap, sw, _, _, sp in scored:
            text = p.text[sp.char_start:sp.char_end]
            if text in seen:
                continue
            seen.add(text)
            out.append(Candidate(text=text, score=2.0 * overlap + sw / (1.0 + abs(sw))))
            if len(out) >= self.top_k:
                break
        return out


# --------------------------------------------------------------------------------------------------
# Transformer reader
# --------------------------------------------------------------------------------------------------


class TransformerQA:
    """A local Hugging Face extractive-QA model directory as a ``reading`` Target.

    Contexts longer than ``max_length`` tokens are split into windows overlapping by ``stride`` tokens;
    spans are scored ``start_logit + end_logit``, restricted to ``start <= end``, at most
    ``max_answer_tokens`` tokens, inside the context (the decoding of the BERT/SQuAD recipe, done by
    :func:`callbluff.targets.hf.qa_predict`); equal span texts keep their best score. ``answer`` is the best
    span; ``candidates`` the ``top_k`` best distinct spans with their scores (logit sums, comparable across
    paragraphs of one question, which :class:`~callbluff.models.retriever.RetrieverReader` relies on).

    Nothing is downloaded: ``HF_HUB_OFFLINE=1`` is set before loading. ``num_threads`` sets
    ``torch.set_num_threads`` (None leaves torch's default).
    """

    kind = "transformer-qa"

    def __init__(
        self,
        model_dir: str | os.PathLike[str],
        *,
        max_length: int = 384,
        stride: int = 128,
        top_k: int = 5,
        batch_size: int = 16,
        max_answer_tokens: int = 30,
        num_threads: int | None = None,
    ) -> None:
        self.model_dir = Path(model_dir).expanduser().resolve()
        if not (self.model_dir / "config.json").is_file():
            raise FileNotFoundError(f"TransformerQA: {self.model_dir}/config.json not found; pass a directory "
                                    "saved with save_pretrained() (config.json, weights, tokenizer files)")
        self.max_length = int(max_length)
        self.stride = int(stride)
        self.top_k = int(top_k)
        self.batch_size = int(batch_size)
        self.max_answer_tokens = int(max_answer_tokens)
        self.num_threads = num_threads
        self._model: Any = None
        self._tokenizer: Any = None
        self._fingerprint: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        # workers load the model lazily instead of receiving it pickled
        return {**self.__dict__, "_model": None, "_tokenizer": None}

    @property
    def params(self) -> dict[str, Any]:
        return {"max_length": self.max_length, "stride": self.stride, "top_k": self.top_k,
                "batch_size": self.batch_size, "max_answer_tokens": self.max_answer_tokens,
                "num_threads": self.num_threads}

    @property
    def fingerprint(self) -> str:
        if self._fingerprint is None:
            decoding = {k: v for k, v in self.params.items() if k not in ("batch_size", "num_threads")}
            digest = model_dir_hash(self.model_dir)[:16]
            self._fingerprint = f"{self.kind}:{self.model_dir.name}:{digest}:{_hash(decoding)}"
        return self._fingerprint

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            if self.num_threads:
                import torch

                torch.set_num_threads(int(self.num_threads))
            self._model, self._tokenizer = load_qa(self.model_dir)
        return self._model, self._tokenizer

    def answer(self, questions: Sequence[str], contexts: Sequence[str]) -> list[list[Candidate]]:
        """Ranked candidate spans (best first, at most ``top_k``) for each (question, context) pair."""
        model, tok = self._load()
        return qa_predict(model, tok, list(questions), list(contexts), max_length=self.max_length,
                          stride=self.stride, top_k=self.top_k, batch_size=self.batch_size,
                          max_answer_len=self.max_answer_tokens)

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        return reading_outputs(inputs, self.answer, reader=f"TransformerQA({self.model_dir.name})")

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write ``model.json`` pointing at the model directory (the weights are not copied)."""
        return persist.write_meta(path, {"kind": self.kind, "model_dir": str(self.model_dir), "params": self.params,
                                  "fingerprint": self.fingerprint})

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> TransformerQA:
        meta = persist.read_meta(path, cls.kind)
        return cls(meta["model_dir"], **meta["params"])
