"""The progress hook long steps report through: ``progress(stage, done, total)``.

One signature for everything that takes long: the engine reports record chunks (``"chunk"``), generator pieces
and fitted attack states (:mod:`callbluff.engine.run`); model fitting reports prompts and, within a prompt,
its steps (``ContentScorer`` / ``EssayScorer``: spaCy analyses and statistics per answer or essay, CV folds;
``NeuralScorer``: word vectors per answer, then epochs x batches; ``RetrieverReader``: documents indexed).
``stage`` is a short human label, ``done`` counts up within a stage and ``total`` is the stage's size, or
``None`` while unknown. The terminal turns the calls into bars with counts and an ETA
(:mod:`callbluff.terminal`).

A hook only observes. Code that reports must not let it change what is computed (no different batching,
no extra random draws): a model fitted with a hook is the model fitted without one.
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[str, int, int | None], None]
"""``progress(stage, done, total)``; see the module docstring."""

PROMPTS = "prompts"
"""The stage per-prompt models report once per prompt fitted (``done`` prompts of ``total``)."""


def silent(stage: str, done: int, total: int | None) -> None:
    """The hook that reports nothing (the default)."""


def prefixed(progress: Progress | None, prefix: str) -> Progress | None:
    """``progress`` with ``prefix: `` before every stage name (e.g. ``prompt 3: spaCy parses``); ``None``
    stays ``None`` so callees can skip their reporting work."""
    if progress is None:
        return None
    hook = progress

    def report(stage: str, done: int, total: int | None) -> None:
        hook(f"{prefix}: {stage}", done, total)

    return report


def every(n: int, done: int, total: int) -> bool:
    """Whether a loop at ``done`` of ``total`` should report: each ``n`` items and at the end (a bar does not
    need every item, and a hook call per item can cost more than cheap items)."""
    return done == total or done % n == 0
