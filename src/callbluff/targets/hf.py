"""Hugging Face models from a local directory as targets (extra ``hf``: torch + transformers; ``gguf`` and
``accelerate`` for GGUF files).

Tasks: ``question-answering`` (extractive reading comprehension, SQuAD-style), ``text-classification``,
``text-regression`` and ``text-generation`` (a causal LM as a chat grader or answerer, from a model directory or
a ``.gguf`` file, which transformers de-quantizes to float32, once: :meth:`HFTarget._converted_gguf`;
:meth:`HFTarget._generate`). Models are loaded with ``AutoTokenizer``/``AutoModelFor*`` from the directory only
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

Text generation asks what the chat target asks and reads the reply the same way (one module:
:mod:`callbluff.targets.chat`; templates ``system``/``user`` with the prompt's question, rubric, reference answer
and scale, ``score_path``/``score_regex``, ``answer_path``/``answer_regex``): the messages go through the
tokenizer's own chat template (``apply_chat_template`` with the generation prompt; a tokenizer without one is an
error naming the model), then greedy decoding (``do_sample=False``) of at most ``max_tokens`` new tokens (default
64), one input at a time (no padding, so a reply does not depend on its batch). There is no constrained
decoding here, so the default templates ask for the bare number or answer (``response_format = "none"``).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from pydantic import Field, model_validator
from callbluff.records import Prompt
from callbluff.resources.hf_models import check_model_dir as _check_dir
from callbluff.resources.hf_models import model_dir_hash, require_hf
from callbluff.targets._common import TargetBase, config_hash, exception_cause, file_sha256
from callbluff.targets.base import Candidate, Input, Output, TargetStats
from callbluff.targets.chat import ChatSpec, ReplyError, request_key
from callbluff.targets.chat import ChatReading
from callbluff.targets.config import TargetSettings, register_target, resolve_path
from callbluff.targets.config import settings as target_settings

HF_TASKS: tuple[str, ...] = ("question-answering", "text-classification", "text-regression", "text-generation")
CHAT_PIPELINES = frozenset({"text-generation"})
"""The Hugging Face pipeline kinds (HFConfig's ``task``, not a callbluff task) that read the chat keys."""
DEFAULT_NEW_TOKENS = 64  # text generation: a grader's verdict is a few tokens


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


class HFConfig(ChatReading, TargetSettings):
    """A local Hugging Face model (:mod:`callbluff.targets.hf`). The chat keys (``system``, ``user``,
    ``max_tokens``, ``score_path``...) belong to ``task = "text-generation"`` only."""

    type: Literal["hf"] = "hf"
    model_dir: str
    task: Literal["question-answering", "text-classification", "text-regression",
                  "text-generation"] = "question-answering"
    batch_size: int = Field(16, ge=1)
    max_length: int = Field(384, ge=16)
    stride: int = Field(128, ge=0)
    top_k: int = Field(5, ge=1)
    max_answer_len: int = Field(30, ge=1)
    num_threads: int | None = Field(None, ge=1)
    scores: Literal["logit", "probability"] = "logit"


    @model_validator(mode="after")
    def _chat_keys(self) -> HFConfig:
        if self.task not in CHAT_PIPELINES:
            used = [k for k in ChatReading.model_fields if getattr(self, k) is not None]
            if used:
                raise ValueError(f"key {used[0]!r} is for task = \"text-generation\" only (this target's task "
                                 f"is {self.task!r})")
        return self


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
        :class:`~callbluff.targets.hf.HFConfig` (validated there, in one place)."""
        given = model_dir if isinstance(model_dir, HFConfig) else None
        cfg = target_settings(HFConfig, given, {} if given else {"type": "hf", "model_dir": str(model_dir),
                                                                  "task": task, **settings}, "HFTarget")
        self.config = cfg
        # `pipeline` is the Hugging Face pipeline task (config key `task`), not a callbluff task
        pipeline, model_dir, scores, name = cfg.task, cfg.model_dir, cfg.scores, cfg.name
        batch_size, max_length, stride, top_k = cfg.batch_size, cfg.max_length, cfg.stride, cfg.top_k
        max_answer_len, num_threads = cfg.max_answer_len, cfg.num_threads
        missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
        if missing:
            raise ImportError(f"HFTarget needs {' and '.join(missing)} (the 'hf' extra): "
                              "pip install 'callbluff[hf]'")
        self.gguf_file: str | None = None
        generates = pipeline == "text-generation"
        if generates and str(model_dir).endswith(".gguf"):
            gguf = Path(model_dir)
            if not gguf.is_file():
                raise FileNotFoundError(f"no GGUF file at {gguf}")
            missing_gguf = [m for m in ("gguf", "accelerate") if importlib.util.find_spec(m) is None]
            if missing_gguf:
                raise ImportError(f"HFTarget on a GGUF file needs {' and '.join(missing_gguf)} (the 'hf' extra): "
                                  "pip install 'callbluff[hf]'")
            self.model_dir, self.gguf_file = gguf.parent, gguf.name
            identity = self._gguf_sha = file_sha256(gguf)
        else:
            self.model_dir = _check_dir(model_dir)
            identity = ""
        self.spec = ChatSpec(system=cfg.system, user=cfg.user, response_format="none", score_path=cfg.score_path,
                             score_regex=cfg.score_regex, answer_path=cfg.answer_path,
                             answer_regex=cfg.answer_regex, output=cfg.output)
        self.max_new_tokens = cfg.max_tokens or DEFAULT_NEW_TOKENS
        self.prompts: dict[str, Prompt] = {}
        self.pipeline_kind = pipeline
        self.batch_size = int(batch_size)
        self.max_length = int(max_length)
        self.stride = int(stride)
        self.top_k = int(top_k)
        self.max_answer_len = int(max_answer_len)
        self.num_threads = num_threads
        self.scores = scores
        self.name = name or self.gguf_file or self.model_dir.name
        if generates:
            self.fingerprint = cfg.identity(lambda: "hf:" + config_hash(
                [identity or model_dir_hash(self.model_dir), self.gguf_file, pipeline, self.spec.identity()]))
        else:
            self.fingerprint = cfg.identity(lambda: "hf:" + config_hash(
                [model_dir_hash(self.model_dir), pipeline, self.max_length, self.stride, self.max_answer_len, scores]))
        self.stats = TargetStats()
        self._model: Any = None
        self._tokenizer: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_model", "_tokenizer")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._model = self._tokenizer = None

    def to_config(self) -> dict[str, Any]:
        if self.pipeline_kind == "text-generation":
            return {"type": "hf", "name": self.name, "task": self.pipeline_kind,
                    "model_dir": str(self.model_dir / self.gguf_file) if self.gguf_file else str(self.model_dir),
                    "system": self.spec.system, "user": self.spec.user, "score_path": self.spec.score_path,
                    "score_regex": self.spec.score_regex, "answer_path": self.spec.answer_path,
                    "answer_regex": self.spec.answer_regex, "max_tokens": self.max_new_tokens,
                    "output": self.spec.output, "fingerprint": self.fingerprint}
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
        if self.pipeline_kind == "text-generation":
            source = self._converted_gguf() if self.gguf_file else self.model_dir
            tokenizer = transformers.AutoTokenizer.from_pretrained(source, local_files_only=True)
            if not getattr(tokenizer, "chat_template", None):
                raise ValueError(f"{self.name}: the tokenizer has no chat template, so chat messages cannot be "
                                 "given to this model (use an instruction-tuned model, or set "
                                 "tokenizer.chat_template and save it)")
            model = transformers.AutoModelForCausalLM.from_pretrained(source, dtype=torch.float32,
                                                                      local_files_only=True)
            model.eval()
            self._model, self._tokenizer = model, tokenizer
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

    # -- text generation -------------------------------------------------------------------------------------
    def _converted_gguf(self) -> Path:
        """The GGUF file as a model directory, converted once: transformers reads a GGUF's metadata in pure
        Python once each for the config, the tokenizer and the weights (about 45 s for SmolLM2's 49k-token
        vocabulary on a loaded 2-core machine), so the first load saves the de-quantized float32 weights and the
        tokenizer to ``<callbluff cache>/gguf-hf/<file sha256[:16]>/`` (written aside and renamed into place) and
        every later load reads that directory (a second or two). The cache is keyed by the file's content."""
        from callbluff.resources.paths import cache_dir

        _, transformers = require_hf()
        torch, _ = require_hf()
        assert self.gguf_file is not None
        out = cache_dir("gguf-hf") / self._gguf_sha[:16]
        if (out / "config.json").is_file():
            return out
        kw: dict[str, Any] = {"local_files_only": True, "gguf_file": self.gguf_file}
        tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_dir, **kw)
        model = transformers.AutoModelForCausalLM.from_pretrained(self.model_dir, dtype=torch.float32, **kw)
        part = out.with_name(f"{out.name}.part-{os.getpid()}")
        # the weights are de-quantized float32 tensors by now; transformers still marks the model "quantized
        # with gguf" and refuses to save it, so the marks go
        model.hf_quantizer = None
        if getattr(model.config, "quantization_config", None) is not None:
            del model.config.quantization_config
        model.save_pretrained(part)
        tokenizer.save_pretrained(part)
        try:
            part.replace(out)
        except OSError:  # another process converted it meanwhile: use theirs
            import shutil

            shutil.rmtree(part, ignore_errors=True)
        return out

    def bind_prompts(self, prompts: Mapping[str, Prompt]) -> None:
        """The dataset's prompts (question, rubric, reference answer, scale) for the chat templates."""
        self.prompts = dict(prompts)

    def _messages(self, inp: Input) -> tuple[str, list[dict[str, str]]]:
        prompt = self.prompts.get(inp.prompt_id) if inp.prompt_id is not None else None
        kind = self.spec.kind(inp, prompt)
        return kind, self.spec.messages(inp, prompt)

    def cache_key(self, inp: Input) -> str:
        """Text generation: the rendered messages and the decoding settings (the model is in the fingerprint);
        other tasks: :meth:`Input.key`."""
        if self.pipeline_kind != "text-generation":
            return inp.key()
        try:
            kind, messages = self._messages(inp)
        except ReplyError:
            return "unasked:" + inp.key()
        return request_key([messages, {"greedy": True, "max_new_tokens": self.max_new_tokens}, kind])

    def _generate(self, inputs: Sequence[Input]) -> list[Output]:
        torch, _ = require_hf()
        tok, model = self._tokenizer, self._model
        pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id
        outs: list[Output] = []
        for inp in inputs:
            try:
                kind, messages = self._messages(inp)
            except ReplyError as exc:
                outs.append(Output(error=str(exc)))
                continue
            enc = tok.apply_chat_template(messages, add_generation_prompt=True, return_tensors="pt",
                                          return_dict=True)
            self.stats.calls += 1
            with torch.inference_mode():
                seq = model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                     pad_token_id=pad)
            n_in = int(enc["input_ids"].shape[1])
            new = seq[0, n_in:]
            u = self.stats.usage
            u["prompt_tokens"] = u.get("prompt_tokens", 0) + n_in
            u["completion_tokens"] = u.get("completion_tokens", 0) + int(new.shape[0])
            text = tok.decode(new, skip_special_tokens=True)
            try:
                outs.append(self.spec.parse(text, kind))
            except ReplyError as exc:
                outs.append(Output(error=str(exc)))
        return outs

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        if not inputs:
            return []
        t0 = time.perf_counter()
        try:
            self._load()
            if self.pipeline_kind == "text-generation":
                outs = self._generate(inputs)
            elif self.pipeline_kind == "question-answering":
                outs = self._qa(inputs)
            else:
                outs = self._classify(inputs)
        except Exception as exc:  # noqa: BLE001 - a model failure is an error row per input
            outs = [Output(error=f"{self.name}: {exception_cause(exc)}")] * len(inputs)
        finally:
            self.stats.seconds += time.perf_counter() - t0
        self.stats.inputs += len(inputs)
        self.stats.errors += sum(1 for o in outs if o.error is not None)
        return outs

    def close(self) -> None:
        self._model = self._tokenizer = None


def _build(config: HFConfig, base_dir: Path | None) -> HFTarget:
    return HFTarget(config.model_copy(update={"model_dir": resolve_path(config.model_dir, base_dir) or config.model_dir}))


register_target("hf", HFConfig, _build, spec_key="model_dir", spec_path="dir")
