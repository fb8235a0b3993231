"""Local Hugging Face models, shared by every user of one: the optional ``hf`` extra imported with a clear
message, a model directory checked, and its content identity (a hash of its weights, config and tokenizer files).

Used by the Hugging Face target adapter (:mod:`callbluff.targets.hf`), the reference models
(:mod:`callbluff.models`) and the MiniLM encoder (:mod:`callbluff.resources.minilm`). Nothing is downloaded:
``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set before transformers is imported.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from callbluff.resources.paths import file_sha256

_HASHED = ("config.json", "tokenizer.json", "vocab.txt", "tokenizer_config.json", "special_tokens_map.json",
           "merges.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model")
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth")


def require_hf() -> tuple[Any, Any]:
    """Import torch and transformers, or explain how to install them."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import torch
        import transformers
    except ImportError as exc:
        raise ImportError(f"Hugging Face targets need the 'hf' extra ({exc}); install it with "
                          "pip install 'callbluff[hf]' (CPU torch + transformers)") from exc
    # loading a local model is not progress worth a bar on every run (it would land in CLI output and logs)
    transformers.utils.logging.disable_progress_bar()
    return torch, transformers


def check_model_dir(model_dir: str | os.PathLike[str]) -> Path:
    """``model_dir`` as a Path; FileNotFoundError saying what a model directory holds when it has no config."""
    path = Path(model_dir)
    if not (path / "config.json").is_file():
        raise FileNotFoundError(f"no Hugging Face model at {path} (expected config.json, weights and tokenizer "
                                "files saved with save_pretrained)")
    return path


def model_dir_hash(model_dir: str | os.PathLike[str]) -> str:
    """SHA-256 over the weights, config and tokenizer files of a model directory (its content identity)."""
    path = check_model_dir(model_dir)
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file() and (f.name in _HASHED or f.suffix in _WEIGHTS):
            h.update(f.name.encode())
            h.update(file_sha256(f).encode())
    return h.hexdigest()
