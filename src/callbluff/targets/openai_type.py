"""The ``openai`` target type: an OpenAI-compatible chat endpoint (:class:`~callbluff.targets.openai_target.
OpenAITarget`), or, when its table has a ``defence``, the grader with its own defences
(:class:`~callbluff.targets.grader_defences.DefendedChatTarget`, a subclass of it). Registered here, the one module
that knows both adapters (grader_defences imports openai_target)."""

from __future__ import annotations

from pathlib import Path

from callbluff.targets.config import register_target
from callbluff.targets.grader_defences import DefendedChatTarget
from callbluff.targets.openai_target import OpenAIConfig, OpenAITarget


def build(config: OpenAIConfig, base_dir: Path | None) -> OpenAITarget:
    """The chat target a validated ``openai`` table describes."""
    return DefendedChatTarget(config) if config.defence is not None else OpenAITarget(config)


register_target("openai", OpenAIConfig, build, spec_key="base_url")
