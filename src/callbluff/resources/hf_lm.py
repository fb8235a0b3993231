"""A local Hugging Face causal language model (e.g. a GPT-2 directory the user has), loaded offline and
sampled with an explicit NumPy generator (Ding et al. 2020, Sec. 2.2 "Generative Language Model").

Loading uses ``local_files_only=True``: nothing is downloaded. Sampling is done here, token by token, from
the model's next-token distribution with ``temperature`` and ``top_k`` (the defaults 0.7 / 40 are those of
the gpt-2-Pytorch implementation the paper used), drawing with the caller's ``rng`` rather than torch's
global generator, so the same seed gives the same text.
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


class LMError(ValueError):
    """A model directory cannot be used; the message names the directory and the fix."""


@dataclass(frozen=True)
class CausalLM:
    path: str
    tokenizer: Any
    model: Any
    fingerprint: str

    def continue_text(self, seed: str, n_words: int, rng: np.random.Generator, temperature: float = 0.7,
                      top_k: int = 40) -> str:
        """Text continuing ``seed`` until it holds ``n_words`` whitespace words (cut there)."""
        import torch

        ids = self.tokenizer(seed, return_tensors="pt")["input_ids"]
        if ids.shape[1] == 0:
            ids = torch.tensor([[self.tokenizer.bos_token_id or 0]])
        n_ctx = int(getattr(self.model.config, "n_positions", 0) or getattr(
            self.model.config, "max_position_embeddings", 1024))
        new: list[int] = []
        past = None
        step_input = ids[:, -n_ctx:]
        text = ""
        with torch.no_grad():
            for _ in range(4 * n_words + 20):
                out = self.model(input_ids=step_input, past_key_values=past, use_cache=True)
                past = out.past_key_values
                logits = out.logits[0, -1].double().numpy() / max(temperature, 1e-6)
                if 0 < top_k < logits.size:
                    cut = np.partition(logits, -top_k)[-top_k]
                    logits = np.where(logits >= cut, logits, -np.inf)
                p = np.exp(logits - logits.max())
                cum = np.cumsum(p)
                tok = int(np.searchsorted(cum, rng.random() * cum[-1], "right"))
                new.append(tok)
                text = self.tokenizer.decode(new, skip_special_tokens=True)
                if len(text.split()) > n_words or len(ids[0]) + len(new) >= n_ctx:
                    break
                step_input = torch.tensor([[tok]])
        return " ".join(text.split()[:n_words])


def _fingerprint(p: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(q for q in p.iterdir() if q.is_file()):
        h.update(f.name.encode())
        h.update(str(f.stat().st_size).encode())
        if f.suffix == ".json":
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


_CACHE: dict[str, CausalLM] = {}
_LOCK = threading.Lock()


def load_causal_lm(model_dir: str) -> CausalLM:
    """The model and tokenizer in ``model_dir`` (loaded once per process, offline)."""
    p = Path(model_dir).expanduser()
    key = str(p.resolve())
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    if not (p / "config.json").is_file():
        raise LMError(f"model_dir {p}: no config.json; pass a local Hugging Face causal LM directory (e.g. one "
                      "saved with save_pretrained), or leave model_dir unset for the offline n-gram LM")
    try:
        import torch  # noqa: F401
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise LMError(f"model_dir {p}: transformers/torch are not installed ({e}); `pip install -e '.[hf]'`") from None
    try:
        tok = AutoTokenizer.from_pretrained(key, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(key, local_files_only=True)
    except (OSError, ValueError) as e:
        raise LMError(f"model_dir {p}: cannot load a causal LM and its tokenizer offline ({e})") from None
    model.eval()
    hit = CausalLM(key, tok, model, _fingerprint(p))
    with _LOCK:
        hit = _CACHE.setdefault(key, hit)
    return hit
