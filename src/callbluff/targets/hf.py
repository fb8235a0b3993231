"""Hugging Face models from a local directory as targets (extra ``hf``: torch + transformers).

Tasks: ``question-answering`` (extractive reading comprehension, SQuAD-style), ``text-classification``
and ``text-regression``. Models are loaded with ``AutoTokenizer``/``AutoModelFor*`` from the directory only
(``local_files_only=True`` and ``HF_HUB_OFFLINE=1``: nothing is downloaded), on CPU, lazily on first
``predict`` (so building or pickling a target to worker processes is cheap).

Extractive QA decoding (:func:`qa_predict`, shared with :mod:`callbluff.models`) follows the standard SQuAD
recipe (Devlin et al. 2019; the Hugging Face ``run_qa`` post-processing): contexts longer than the window
are split into overlapping features (``max_length`` tokens, ``stride`` tokens of overlap, question first and
truncated to ``max_query_length`` tokens); in every feature the ``n_best`` highest start and end logits over
*context* tokens are paired into spans with ``start <= end`` and at most ``max_answer_len`` tokens; a span's
score is ``start_logit + end_logit``; spans from all features of an example are ranked together,
duplicates (same text, stripped) keep their best score, and the ``top_k`` best are returned with their logit
sums (or, with ``scores="probability"``, a softmax over the example's n-best list as ``run_qa`` computes).
An example with no valid span gets no candidates (answer ``""``).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from callbluff.resources.hf_models import check_model_dir as _check_dir
from callbluff.resources.hf_models import model_dir_hash, require_hf
from callbluff.targets._common import TargetBase, config_hash, exception_cause
from callbluff.targets.base import Candidate, Input, Output, TargetStats
from callbluff.targets.config import HFConfig
from callbluff.targets.config import settings as target_settings

HF_TASKS: tuple[str, ...] = ("question-answering", "text-classification", "text-regression")


def load_qa(model_dir: str | os.PathLike[str]) -> tuple[Any, Any]:
    """``(model, tokenizer)`` for extractive QA from a local directory, on CPU, in eval mode."""
    _, transformers = require_hf()
    path = _check_dir(model_dir)
    tokenizer = transformers.AutoTokenizer.from_pretrained(path, local_files_only=True)
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(f"{path}: QA decoding needs a fast tokenizer (tokenizer.json) for offsets and overflow")
    model = transformers.AutoModelForQuestionAnswering.from_pretrained(path, local_files_only=True)
    model.eval()
    return model, tokenizer


def _truncate_questions(tokenizer: Any, questions: Sequence[str], max_query_length: int) -> list[str]:
    qs = [q.lstrip() for q in questions]
    enc = tokenizer(qs, add_special_tokens=False, return_offsets_mapping=True)
    out = []
    for q, offs in zip(qs, enc["offset_mapping"]):
        out.append(q[: offs[max_query_length - 1][1]] if len(offs) > max_query_length else q)
    return out


def _spans(start: np.ndarray, end: np.ndarray, ctx_idx: np.ndarray, offsets: Sequence[Sequence[int]],
           context: str, n_best: int, max_answer_len: int) -> list[tuple[float, str]]:
    """Valid (score, text) spans of one feature."""
    if ctx_idx.size == 0:
        return []
    s_log, e_log = start[ctx_idx], end[ctx_idx]
    top_s = ctx_idx[np.argsort(-s_log, kind="stable")[:n_best]]
    top_e = ctx_idx[np.argsort(-e_log, kind="stable")[:n_best]]
    out = []
    for si in top_s:
        for ei in top_e:
            if ei < si or ei - si + 1 > max_answer_len:
                continue
            a, b = offsets[si][0], offsets[ei][1]
            out.append((float(start[si] + end[ei]), context[a:b]))
    return out


def qa_predict(model: Any, tokenizer: Any, questions: Sequence[str], contexts: Sequence[str], *,
               max_length: int = 384, stride: int = 128, top_k: int = 5, batch_size: int = 16,
               max_answer_len: int = 30, n_best: int = 20, max_query_length: int = 64,
               scores: str = "logit", block: int = 256) -> list[list[Candidate]]:
    """Ranked answer candidates (best first, at most ``top_k``) for each (question, context) pair.

    See the module docstring for the decoding. ``scores="logit"`` (default) reports each span's
    ``start_logit + end_logit``, comparable across paragraphs of one question (a retriever-reader ranks
    paragraphs' answers by it); ``scores="probability"`` reports the softmax over the example's n-best spans.
    ``batch_size`` is the number of features per forward pass (features are sorted by length so that a
    batch pads little); examples are tokenized ``block`` at a time to bound memory.
    """
    torch, _ = require_hf()
    if scores not in ("logit", "probability"):
        raise ValueError(f"qa_predict: scores must be 'logit' or 'probability', got {scores!r}")
    if len(questions) != len(contexts):
        raise ValueError(f"qa_predict: {len(questions)} questions but {len(contexts)} contexts")
    if not questions:
        return []
    qs = _truncate_questions(tokenizer, questions, max_query_length)
    spans: list[list[tuple[float, str]]] = [[] for _ in qs]
    keys = ("input_ids", "attention_mask", "token_type_ids")
    for b0 in range(0, len(qs), block):
        bq, bc = qs[b0:b0 + block], [c or "" for c in contexts[b0:b0 + block]]
        enc = tokenizer(bq, bc, truncation="only_second", max_length=max_length, stride=stride,
                        return_overflowing_tokens=True, return_offsets_mapping=True)
        n_feat = len(enc["input_ids"])
        feed_keys = [k for k in keys if k in enc]
        order = sorted(range(n_feat), key=lambda i: len(enc["input_ids"][i]))
        for f0 in range(0, n_feat, batch_size):
            idx = order[f0:f0 + batch_size]
            batch = tokenizer.pad({k: [enc[k][i] for i in idx] for k in feed_keys}, return_tensors="pt")
            with torch.inference_mode():
                out = model(**batch)
            starts = out.start_logits.float().numpy()
            ends = out.end_logits.float().numpy()
            for row, f in enumerate(idx):
                ex = int(enc["overflow_to_sample_mapping"][f])
                ctx_idx = np.array([t for t, sid in enumerate(enc.sequence_ids(f)) if sid == 1], dtype=int)
                spans[b0 + ex].extend(_spans(starts[row], ends[row], ctx_idx, enc["offset_mapping"][f], bc[ex],
                                             n_best, max_answer_len))
    results: list[list[Candidate]] = []
    for cand in spans:
        cand.sort(key=lambda x: -x[0])
        best: dict[str, float] = {}
        for score, text in cand:
            text = text.strip()
            if text and text not in best:
                best[text] = score
        ranked = list(best.items())[: max(n_best, top_k)]
        if not ranked:
            results.append([])
            continue
        if scores == "probability":
            logits = np.array([s for _, s in ranked])
            probs = np.exp(logits - logits.max())
            probs /= probs.sum()
            ranked = [(t, float(p)) for (t, _), p in zip(ranked, probs)]
        results.append([Candidate(t, float(s)) for t, s in ranked[:top_k]])
    return results


class HFTarget(TargetBase):
    """A local Hugging Face model as a target.

    * ``question-answering``: ``Input.text`` is the question, ``Input.context`` the paragraph; the output is
      the best span as ``answer`` with the ``top_k`` ranked ``candidates`` (scores: logit sums, or
      probabilities with ``scores="probability"``; see :func:`qa_predict`).
    * ``text-classification``: ``answer`` is the predicted label name, ``candidates`` all labels with their
      probabilities; ``score`` is the label read as a number when labels are numbers (``"0"``..``"3"``, as a
      score scale would be), else the class index. ``Input.context``, when present, is the second segment.
    * ``text-regression``: a one-output head; ``score`` is that output.
    """

    def __init__(self, model_dir: str | os.PathLike[str] | HFConfig, task: str = "question-answering",
                 **settings: Any) -> None:
        """``HFTarget(HFConfig(...))``, or ``HFTarget(model_dir, task, **settings)`` with the keys of
        :class:`~callbluff.targets.config.HFConfig` (validated there, in one place)."""
        given = model_dir if isinstance(model_dir, HFConfig) else None
        cfg = target_settings(HFConfig, given, {} if given else {"type": "hf", "model_dir": str(model_dir),
                                                                  "task": task, **settings}, "HFTarget")
        self.config = cfg
        task, model_dir, scores, name = cfg.task, cfg.model_dir, cfg.scores, cfg.name
        batch_size, max_length, stride, top_k = cfg.batch_size, cfg.max_length, cfg.stride, cfg.top_k
        max_answer_len, num_threads = cfg.max_answer_len, cfg.num_threads
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(f"HFTarget needs {' and '.join(missing)} (the 'hf' extra): "
                              "pip install 'callbluff[hf]'")
        self.model_dir = _check_dir(model_dir)
        self.pipeline_kind = task  # the Hugging Face pipeline task (config key `task`), not a callbluff task
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.stride = int(stride)
        self.top_k = int(top_k)
        self.max_answer_len = int(max_answer_len)
        self.num_threads = num_threads
        self.scores = scores
        self.name = name or self.model_dir.name
        self.fingerprint = cfg.identity(lambda: "hf:" + config_hash(
            [model_dir_hash(self.model_dir), task, self.max_length, self.stride, self.max_answer_len, scores]))
        self.stats = TargetStats()
        self._model: Any = None
        self._tokenizer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_model", "_tokenizer")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._model = self._tokenizer = None

    def to_config(self) -> dict[str, Any]:
        return {"type": "hf", "name": self.name, "model_dir": str(self.model_dir), "task": self.pipeline_kind,
                "batch_size": self.batch_size, "max_length": self.max_length, "stride": self.stride,
                "top_k": self.top_k, "max_answer_len": self.max_answer_len, "scores": self.scores,
                "fingerprint": self.fingerprint}

    def _load(self) -> None:
        if self._model is not None:
            return
        torch, transformers = require_hf()
        if self.num_threads:
            torch.set_num_threads(int(self.num_threads))
        if self.pipeline_kind == "question-answering":
            self._model, self._tokenizer = load_qa(self.model_dir)
            return
        self._tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_dir, local_files_only=True)
        self._model = transformers.AutoModelForSequenceClassification.from_pretrained(
            self.model_dir, local_files_only=True)
        self._model.eval()
        n = int(self._model.config.num_labels)
        if self.pipeline_kind == "text-regression" and n != 1:
            raise ValueError(f"{self.model_dir}: text-regression needs a 1-output head, this model has {n} labels")

    def _qa(self, inputs: Sequence[Input]) -> list[Output]:
        outs: list[Output | None] = [None] * len(inputs)
        idx = [i for i, x in enumerate(inputs) if x.context is not None]
        for i, x in enumerate(inputs):
            if x.context is None:
                outs[i] = Output(error="question-answering needs Input.context (the paragraph to answer from)")
        if idx:
            self.stats.calls += 1
            cands = qa_predict(self._model, self._tokenizer, [inputs[i].text for i in idx],
                               [inputs[i].context or "" for i in idx], max_length=self.max_length,
                               stride=self.stride, top_k=self.top_k, batch_size=self.batch_size,
                               max_answer_len=self.max_answer_len, scores=self.scores)
            for i, c in zip(idx, cands):
                outs[i] = Output(answer=c[0].text if c else "", candidates=tuple(c))
        return [o if o is not None else Output(error="internal: no prediction") for o in outs]

    def _classify(self, inputs: Sequence[Input]) -> list[Output]:
        torch, _ = require_hf()
        outs: list[Output] = []
        id2label = {int(k): str(v) for k, v in (self._model.config.id2label or {}).items()}
        for b0 in range(0, len(inputs), self.batch_size):
            batch = inputs[b0:b0 + self.batch_size]
            self.stats.calls += 1
            texts = [x.text for x in batch]
            pairs = [x.context for x in batch]
            if any(p is not None for p in pairs):
                enc = self._tokenizer(texts, [p or "" for p in pairs], truncation=True, max_length=self.max_length,
                                      padding=True, return_tensors="pt")
            else:
                enc = self._tokenizer(texts, truncation=True, max_length=self.max_length, padding=True,
                                      return_tensors="pt")
            with torch.inference_mode():
                logits = self._model(**enc).logits.float().numpy()
            for row in logits:
                if self.pipeline_kind == "text-regression":
                    outs.append(Output(score=float(row[0])))
                    continue
                p = np.exp(row - row.max())
                p /= p.sum()
                order = np.argsort(-p, kind="stable")
                labels = [id2label.get(int(j), str(int(j))) for j in order]
                top = labels[0]
                try:
                    score = float(top)
                except ValueError:
                    score = float(order[0])
                outs.append(Output(score=score, answer=top,
                                   candidates=tuple(Candidate(lab, float(p[j])) for lab, j in zip(labels, order))))
        return outs

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        if not inputs:
            return []
        t0 = time.perf_counter()
        try:
            self._load()
            outs = self._qa(inputs) if self.pipeline_kind == "question-answering" else self._classify(inputs)
        except Exception as exc:  # noqa: BLE001 - a model failure is an error row per input
            outs = [Output(error=f"{self.name}: {exception_cause(exc)}")] * len(inputs)
        finally:
            self.stats.seconds += time.perf_counter() - t0
        self.stats.inputs += len(inputs)
        self.stats.errors += sum(1 for o in outs if o.error is not None)
        return outs

    def close(self) -> None:
        self._model = self._tokenizer = None
