"""The Target side shared by per-prompt scorers (one model per prompt id: ContentScorer, EssayScorer)."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence

import numpy as np

from callbluff.targets.base import Input, Output


def predict_per_prompt(inputs: Sequence[Input], prompt_ids: Collection[str],
                       score_texts: Callable[[str, list[str]], np.ndarray], name: str) -> list[Output]:
    """One :class:`Output` per input, scoring each prompt's inputs in one batch.

    An input without ``prompt_id`` goes to the only prompt when the scorer has exactly one; an unknown
    prompt id becomes an error row naming the trained prompts (never a crash, never a silent zero).
    """
    out: list[Output | None] = [None] * len(inputs)
    groups: dict[str, list[int]] = {}
    only = next(iter(prompt_ids)) if len(prompt_ids) == 1 else None
    for i, inp in enumerate(inputs):
        pid = inp.prompt_id if inp.prompt_id is not None else only
        if pid is None or str(pid) not in prompt_ids:
            out[i] = Output.failed(f"{name}: no model for prompt_id {pid!r} (input {i}); trained prompts: "
                                   f"{sorted(prompt_ids)}")
        else:
            groups.setdefault(str(pid), []).append(i)
    for pid, idx in groups.items():
        scores = score_texts(pid, [inputs[i].text for i in idx])
        for i, s in zip(idx, scores, strict=True):
            out[i] = Output(score=float(s))
    return [o if o is not None else Output.failed(f"{name}: internal error, no output") for o in out]
