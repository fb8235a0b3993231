"""Systems under test: the :class:`Target` contract, adapters, the prediction cache and its wrapper.

Adapters (each has ``fingerprint``, ``stats``, ``predict(inputs) -> outputs``, ``close()``, ``to_config()``):

* :class:`CallableTarget` - a Python function (single or batched);
* :class:`SklearnTarget` - a scikit-learn estimator/pipeline (object or joblib path), optionally per prompt;
* :class:`HttpTarget` - an HTTP JSON endpoint (templates, ``${ENV}`` headers, retries, concurrency, rate limit);
* :class:`OpenAITarget` - an OpenAI-compatible chat endpoint as a grader or answerer (templates with the prompt's
  question, rubric and reference answer, structured output, the reply read by JSON path or last regex match);
* :class:`CommandTarget` - a long-running subprocess speaking JSON lines;
* :class:`HFTarget` - a local Hugging Face model (extra ``hf``: torch and transformers are imported when the
  model is loaded).

Each registers its ``[[target]]`` type (:func:`register_target`: a settings model and a factory; a third party's
type registers the same way, or through the ``callbluff.targets`` entry point group; :func:`target_types` lists
them). :func:`callbluff.engine.target_factory.from_config` builds any of them from a suite's ``[[target]]`` table
(:func:`validate_target_config` checks one); :class:`CachedTarget` puts a :class:`PredictionCache` (SQLite, WAL)
in front of any target.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from callbluff.targets.base import Candidate, Input, Output, Target, TargetStats, Timer

# The adapters, the cache and the config validation load on first use (PEP 562): ``callbluff.targets.base``,
# which every attack reaches through the Oracle, stays light, so `callbluff list` starts quickly.
_LAZY = {
    "PredictionCache": "callbluff.targets.cache", "CallableTarget": "callbluff.targets.callables",
    "CommandTarget": "callbluff.targets.command", "register_target": "callbluff.targets.config",
    "TargetConfigError": "callbluff.targets.config", "validate_target_config": "callbluff.targets.config",
    "target_types": "callbluff.targets.config", "TargetSettings": "callbluff.targets.config",
    "HFTarget": "callbluff.targets.hf", "HttpTarget": "callbluff.targets.http_target",
    "OpenAITarget": "callbluff.targets.openai_target", "SklearnTarget": "callbluff.targets.sklearn_target",
    "CachedTarget": "callbluff.targets.wrappers", "chunked": "callbluff.targets.wrappers",
}

if TYPE_CHECKING:
    from callbluff.targets.cache import PredictionCache
    from callbluff.targets.callables import CallableTarget
    from callbluff.targets.command import CommandTarget
    from callbluff.targets.config import (
        TargetConfigError,
        TargetSettings,
        register_target,
        target_types,
        validate_target_config,
    )
    from callbluff.targets.hf import HFTarget
    from callbluff.targets.http_target import HttpTarget
    from callbluff.targets.openai_target import OpenAITarget
    from callbluff.targets.sklearn_target import SklearnTarget
    from callbluff.targets.wrappers import CachedTarget, chunked


def __getattr__(name: str) -> Any:
    """``callbluff.targets.NAME`` for the names of ``_LAZY``: import the module that defines it, once."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'callbluff.targets' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


__all__ = [
    "CachedTarget", "CallableTarget", "Candidate", "CommandTarget", "HFTarget", "HttpTarget",
    "Input", "OpenAITarget", "Output", "PredictionCache", "SklearnTarget", "Target", "TargetConfigError", "TargetStats", "Timer",
    "TargetSettings", "chunked", "register_target", "target_types", "validate_target_config",
]
