"""Build the target a suite's ``[[target]]`` table describes: an adapter of :mod:`callbluff.targets`, a saved
reference model (``type = "model"``, :func:`callbluff.models.load_model`), either behind an adversarial-answer
filter (``filter = "DIR"``, :class:`callbluff.defenses.filtered.FilteredTarget`) when the table names one.

It lives in the engine, above the targets, the models and the defences it wires together: every other type is
built by the factory it registered (:func:`callbluff.targets.config.register_target`); this module registers
``model`` (the models sit above the targets) and wraps any of them in a filter.
"""

from __future__ import annotations

import os
from pathlib import Path
from collections.abc import Mapping
from typing import Any

from typing import Literal

from callbluff.defenses.filtered import FilteredTarget
from callbluff.models import load_model
from callbluff.records import Prompt
from callbluff.targets.base import Target
from callbluff.targets.config import (  # noqa: F401  (target_types, get_target_type: the registry with `model`)
    TargetConfigError,
    TargetSettings,
    check_environment,
    get_target_type,
    register_target,
    resolve_path,
    target_types,
    type_of,
    validate_target_config,
)


class ModelConfig(TargetSettings):
    """``type = "model"``: a directory written by a callbluff reference model (:func:`callbluff.models.load_model`)."""

    type: Literal["model"] = "model"
    path: str


def from_config(cfg: dict[str, Any] | TargetSettings, *, base_dir: str | os.PathLike[str] | None = None,
                where: str = "[[target]]") -> Target:
    """Build the target a ``[[target]]`` table (or its validated config) describes; relative paths resolve
    against ``base_dir``. The adapter takes the validated config itself: no setting is forwarded by hand."""
    c = cfg if isinstance(cfg, TargetSettings) else validate_target_config(cfg, where)
    check_environment(c, where)  # every ${VAR} set, before any work
    base = Path(base_dir) if base_dir is not None else None
    if c.filter is not None:
        inner = from_config(c.model_copy(update={"filter": None}), base_dir=base_dir, where=where)
        try:
            return FilteredTarget(inner, resolve_path(c.filter, base))
        except ValueError as e:
            raise TargetConfigError(f"{where}: key 'filter': {e}") from None
    return get_target_type(type_of(c)).factory(c, base)


def _saved_model(c: ModelConfig, base: Path | None, where: str = "[[target]]") -> Target:
    """A saved reference model under its table's name and identity."""
    target = load_model(resolve_path(c.path, base))
    if not (hasattr(target, "predict") and hasattr(target, "fingerprint")):
        raise TargetConfigError(f"{where}: load_model({c.path!r}) returned a {type(target).__name__}, which is "
                                "not a Target (needs predict() and fingerprint)")
    if c.name and hasattr(target, "name"):
        try:
            target.name = c.name
        except AttributeError:
            pass
    identity = c.identity(target.fingerprint)  # a declared fingerprint or version; else the model's own
    return Identified(target, identity) if identity != target.fingerprint else target


register_target("model", ModelConfig, _saved_model, spec_key="path", spec_path="dir")


class Identified:
    """A saved reference model under the identity its table declares (``fingerprint`` / ``version``): a model's
    own ``fingerprint`` is a property of its weights and cannot be set. Everything else is the model's."""

    def __init__(self, target: Any, fingerprint: str) -> None:
        self.target = target
        self.fingerprint = fingerprint

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__") or "target" not in self.__dict__:  # unpickling, copying: not the model's
            raise AttributeError(attr)
        return getattr(self.target, attr)

    def predict(self, inputs: Any) -> Any:
        return self.target.predict(inputs)

    def __repr__(self) -> str:
        return f"Identified({self.target!r}, fingerprint={self.fingerprint!r})"


def bind_prompts(target: Any, prompts: Mapping[str, Prompt]) -> None:
    """Give ``target`` the dataset's prompts before the run, through any wrappers (the caching wrapper, a filter):
    the optional hook ``bind_prompts(prompts)`` of a target that renders the prompt's question, rubric,
    reference answer or scale into its request (a chat grader). Targets without the hook are left as they are."""
    bind = getattr(target, "bind_prompts", None)
    if callable(bind):
        bind(prompts)
