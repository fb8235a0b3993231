"""The Target side shared by per-prompt scorers (one model per prompt id: ContentScorer, EssayScorer,
NeuralScorer)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from callbluff.records import Prompt, ScoredResponse
from callbluff.targets.base import Input, Output


def predict_per_prompt(inputs: Sequence[Input], prompt_ids: Collection[str],
                       score_texts: Callable[[str, list[str]], np.ndarray], name: str, *,
                       allow_empty: bool = True) -> list[Output]:
    """One :class:`Output` per input, scoring each prompt's inputs in one batch.

    An input without ``prompt_id`` goes to the only prompt when the scorer has exactly one; an unknown
    prompt id becomes an error row naming the trained prompts (never a crash, never a silent zero). With
    ``allow_empty=False`` a blank text is an error row too (for models that cannot encode an empty input).
    """
    out: list[Output | None] = [None] * len(inputs)
    groups: dict[str, list[int]] = {}
    only = next(iter(prompt_ids)) if len(prompt_ids) == 1 else None
    for i, inp in enumerate(inputs):
        pid = inp.prompt_id if inp.prompt_id is not None else only
        if pid is None or str(pid) not in prompt_ids:
            out[i] = Output.failed(f"{name}: no model for prompt_id {pid!r} (input {i}); trained prompts: "
                                   f"{sorted(prompt_ids)}")
        elif not allow_empty and not inp.text.strip():
            out[i] = Output.failed(f"{name}: input {i} has empty text")
        else:
            groups.setdefault(str(pid), []).append(i)
    for pid, idx in groups.items():
        scores = score_texts(pid, [inputs[i].text for i in idx])
        for i, s in zip(idx, scores, strict=True):
            out[i] = Output(score=float(s))
    return [o if o is not None else Output.failed(f"{name}: internal error, no output") for o in out]


def natural_key(pid: str) -> tuple[int, int | str]:
    """Sort key putting numeric prompt ids in numeric order ("2" before "10"), others after them."""
    return (0, int(pid)) if pid.isdigit() else (1, pid)


@dataclass(frozen=True)
class PromptTrainingSet:
    """One prompt's training answers: texts, gold scores and the scale the model must predict on."""

    prompt_id: str
    texts: list[str]
    y: np.ndarray
    score_min: float
    score_max: float
    prompt: Prompt | None


def training_sets(responses: Sequence[ScoredResponse], prompts: Mapping[str, Prompt] | Prompt | None,
                  name: str) -> list[PromptTrainingSet]:
    """Group labelled ``responses`` by prompt id (in natural order) for per-prompt training.

    The scale is the Prompt's ``score_min..score_max`` when ``prompts`` has it (a Prompt or a mapping id ->
    Prompt), else the gold scores' min..max. Raises ``ValueError`` naming the response for a missing gold
    score, and the ids for gold scores outside the prompt's scale.
    """
    by_prompt: dict[str, list[ScoredResponse]] = {}
    for i, r in enumerate(responses):
        if r.gold is None:
            raise ValueError(f"{name}.fit: response {i} (id {r.id!r}, prompt {r.prompt_id!r}) has no gold score; "
                             "train on labelled data")
        by_prompt.setdefault(str(r.prompt_id), []).append(r)
    if not by_prompt:
        raise ValueError(f"{name}.fit: no training responses")
    if isinstance(prompts, Prompt):
        prompts = {prompts.id: prompts}
    sets = []
    for pid in sorted(by_prompt, key=natural_key):
        recs = by_prompt[pid]
        pr = (prompts or {}).get(pid)
        y = np.array([float(r.gold) for r in recs if r.gold is not None])
        lo = float(pr.score_min) if pr else float(y.min())
        hi = float(pr.score_max) if pr else float(y.max())
        bad = [r.id for r, g in zip(recs, y, strict=True) if not lo <= g <= hi]
        if bad:
            raise ValueError(f"{name}.fit: prompt {pid!r}: gold scores of ids {bad[:5]} are outside the prompt's "
                             f"scale {lo:g}-{hi:g}; fix the data or the Prompt's score range")
        sets.append(PromptTrainingSet(pid, [r.text for r in recs], y, lo, hi, pr))
    return sets
