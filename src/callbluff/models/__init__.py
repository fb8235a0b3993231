"""Reference systems to attack out of the box, each usable directly as a Target.

Imports are lazy (``callbluff.models.ContentScorer`` imports :mod:`.content` on first use), so importing
this package costs nothing. :func:`load_model` opens any saved model directory by the ``kind`` key of its
``model.json``.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any

# kind (model.json "kind") -> (module, class); every class has ``load(path)``
KINDS: dict[str, tuple[str, str]] = {
    "content-scorer": ("callbluff.models.content", "ContentScorer"),
    "essay-scorer": ("callbluff.models.essay", "EssayScorer"),
    "neural-scorer": ("callbluff.models.neural", "NeuralScorer"),
    "sliding-window-qa": ("callbluff.models.qa", "SlidingWindowQA"),
    "transformer-qa": ("callbluff.models.qa", "TransformerQA"),
    "retriever-reader": ("callbluff.models.retriever", "RetrieverReader"),
}

_LAZY: dict[str, tuple[str, str]] = {cls: (mod, cls) for mod, cls in KINDS.values()}
_LAZY.update({
    "train_essay_scorer": ("callbluff.models.essay", "train_essay_scorer"),
})

__all__ = ["KINDS", "load_model", *sorted(_LAZY)]


def load_model(path: str | os.PathLike[str], **kwargs: Any) -> Any:
    """Load a saved reference model directory (any kind in :data:`KINDS`); ``kwargs`` go to ``load``."""
    f = Path(path) / "model.json"
    if not f.is_file():
        raise FileNotFoundError(f"{f}: no model.json; {path} is not a saved callbluff model. Fix: train one with "
                                "`callbluff train KIND --data SPEC --out DIR` and pass DIR")
    try:
        kind = json.loads(f.read_text(encoding="utf-8")).get("kind")
    except json.JSONDecodeError as e:
        raise ValueError(f"{f}: line {e.lineno}: not valid JSON ({e.msg}); re-save the model") from e
    if kind not in KINDS:
        raise ValueError(f"{f}: key 'kind' is {kind!r}; known kinds: {', '.join(KINDS)}")
    module, name = KINDS[kind]
    return getattr(importlib.import_module(module), name).load(path, **kwargs)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'callbluff.models' has no attribute {name!r}")
