"""Local Hugging Face models, shared by every user of one: the optional ``hf`` extra imported with a clear
message, a model directory checked, and its content identity (a hash of its weights, config and tokenizer files).

Used by the Hugging Face target adapter (:mod:`callbluff.targets.hf`), the reference models
(:mod:`callbluff.models`) and the MiniLM encoder (:mod:`callbluff.resources.minilm`). Nothing is downloaded:
``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` are set before transformers is imported.
"""

from __future__ import annotations

import hashlib
import os
import re
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
                                "files saved with save_pretrained)" + hub_hint(model_dir))
    return path


def hub_hint(model_dir: str | os.PathLike[str]) -> str:
    """For a missing model directory that looks like a Hub id (``owner/name``, its owner folder absent): that hub
    ids are not fetched (runs are offline) and how to point at a downloaded copy, naming the copy already in the
    Hugging Face cache when there is one. "" otherwise."""
    path = Path(model_dir)
    if path.exists() or path.parent.exists() or not re.fullmatch(r"[\w.-]+", path.parent.name or "") \
            or not re.fullmatch(r"[\w.-]+", path.name):
        return ""
    hub_id = f"{path.parent.name}/{path.name}"
    hint = (f"; {hub_id!r} looks like a Hugging Face Hub id: callbluff does not download models (targets load "
            f"offline, HF_HUB_OFFLINE=1). Download it once, e.g. `huggingface-cli download {hub_id} --local-dir "
            f"models/{path.name}`, then give that directory: hf:models/{path.name}")
    cache = Path(os.environ.get("HF_HUB_CACHE") or Path(os.environ.get("HF_HOME") or Path.home() / ".cache" /
                                                       "huggingface") / "hub")
    snapshots = sorted((cache / f"models--{path.parent.name}--{path.name}" / "snapshots").glob("*/config.json"))
    if snapshots:
        hint += f" (a downloaded copy is in the Hugging Face cache: hf:{snapshots[-1].parent})"
    return hint


def model_dir_hash(model_dir: str | os.PathLike[str]) -> str:
    """SHA-256 over the weights, config and tokenizer files of a model directory (its content identity)."""
    path = check_model_dir(model_dir)
    h = hashlib.sha256()
    for f in sorted(path.iterdir()):
        if f.is_file() and (f.name in _HASHED or f.suffix in _WEIGHTS):
            h.update(f.name.encode())
            h.update(file_sha256(f).encode())
    return h.hexdigest()
