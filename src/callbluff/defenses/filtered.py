"""A scorer behind an adversarial-answer filter (Ding et al. 2020, Sec. 5.4), so a filtered system can itself be
attacked: ``[[target]]`` tables take ``filter = "DIR"`` (a directory written by ``callbluff filter fit``).

An answer the filter flags is rejected: it gets the bottom of its prompt's scale (the score the filter was
fitted with, ``score_min``) and never reaches the wrapped scorer; the others are scored by it. An input for a
prompt the filter was not fitted on is an error row saying so (never a silent pass-through).

Two optional parts of a filter's contract (the LLM pre-filter, :class:`callbluff.defenses.injection.InjectionFilter`):
``transform(prompt_id, texts)`` gives the texts the scorer receives instead of the answers (e.g. normalised, with
invisible characters removed), and ``action = "human"`` makes a flagged answer an error row "routed to a human"
(no automatic score, never a 0) instead of the scale's minimum.

Accounting: the wrapper shares the wrapped target's ``stats.usage`` dict (a chat grader's tokens, a defended
grader's ``defence`` counts: :mod:`callbluff.targets.grader_defences`), so a filter in front of a defended grader
(``filter = "DIR"`` and ``defence = {...}`` on one ``type = "openai"`` table) reports both layers in run.json's
``target_stats``; it adds ``usage["filter"]``: ``kind``, ``answers`` (inputs it read in this run) and ``flagged``
(those it rejected; an answer read from the prediction cache is not asked again and not counted).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from callbluff.defenses.filters import AnswerFilter, FilterPromptError, load_filter
from callbluff.targets.base import Input, Output, Target, TargetStats
from callbluff.targets.wrappers import inner_usage


class FilteredTarget:
    """``target`` behind ``answer_filter`` (an :class:`~callbluff.defenses.filters.AnswerFilter` or the
    directory of a saved one). ``fingerprint`` combines both, so the filtered target's cached outputs are never
    those of the unfiltered scorer or of another filter; a run caches the wrapped scorer's own replies under a
    namespace of their own (:func:`callbluff.engine.plan.cache_behind_filter`), so a refitted filter re-asks it
    nothing it already answered. ``stats.rejected`` counts the inputs the filter rejected."""

    def __init__(self, target: Target, answer_filter: AnswerFilter | str | Path) -> None:
        self.target = target
        self.filter: AnswerFilter = (answer_filter if isinstance(answer_filter, AnswerFilter)
                                     else load_filter(Path(answer_filter)))
        self.fingerprint: str = f"{target.fingerprint}|filter:{self.filter.fingerprint}"
        self.name = getattr(target, "name", None)
        self.stats = TargetStats()
        usage = inner_usage(target)
        if usage is not None:  # one dict for both layers: the grader's own accounting reaches run.json too
            self.stats.usage = usage
        self.stats.usage["filter"] = {"kind": self.filter.kind, "answers": 0, "flagged": 0}
        self.rejected = 0

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        t0 = time.perf_counter()
        out: list[Output | None] = [None] * len(inputs)
        groups: dict[str | None, list[int]] = {}
        for i, inp in enumerate(inputs):
            groups.setdefault(inp.prompt_id, []).append(i)
        passed: list[int] = []
        for pid, idx in groups.items():
            try:
                flags = self.filter.flag(pid, [inputs[i].text for i in idx])
                bottom = float(self.filter.state(pid)["score_min"])
            except FilterPromptError as e:
                for i in idx:
                    out[i] = Output.failed(str(e))
                continue
            human = getattr(self.filter, "action", "minimum") == "human"
            for i, flagged in zip(idx, flags.tolist(), strict=True):
                if flagged:
                    out[i] = (Output.failed(f"{self.filter.kind} filter: flagged, routed to a human for grading")
                              if human else Output(score=bottom))
                    self.rejected += 1
                else:
                    passed.append(i)
        transform = getattr(self.filter, "transform", None)
        sent: dict[int, Input] = {i: inputs[i] for i in passed}
        if callable(transform) and passed:
            by_pid: dict[str | None, list[int]] = {}
            for i in passed:
                by_pid.setdefault(inputs[i].prompt_id, []).append(i)
            for pid, idx in by_pid.items():
                for i, text in zip(idx, transform(pid, [inputs[i].text for i in idx]), strict=True):
                    if text != inputs[i].text:
                        sent[i] = replace(inputs[i], text=text)
        if passed:
            scored = self.target.predict([sent[i] for i in passed])
            for i, o in zip(passed, scored, strict=True):
                out[i] = o
        self.stats.calls += 1
        self.stats.inputs += len(inputs)
        counts = self.stats.usage["filter"]
        counts["answers"] += len(inputs)
        counts["flagged"] = self.rejected
        self.stats.seconds += time.perf_counter() - t0
        final = [o if o is not None else Output.failed("filtered target: internal error, no output") for o in out]
        self.stats.errors += sum(1 for o in final if o.error is not None)
        return final

    def bind_prompts(self, prompts: Any) -> None:
        """Hand the dataset's prompts to the wrapped target (the filter has its own fitted state)."""
        bind = getattr(self.target, "bind_prompts", None)
        if callable(bind):
            bind(prompts)

    @property
    def cache_key(self) -> Any:
        """The wrapped target's ``cache_key`` (a chat grader's request identity); AttributeError when it has none
        (the caching wrapper then keys by :meth:`Input.key`). The fingerprint already says "behind this filter"."""
        return self.target.cache_key

    def close(self) -> None:
        close = getattr(self.target, "close", None)
        if callable(close):
            close()

    def to_config(self) -> dict[str, Any]:
        inner = self.target.to_config() if hasattr(self.target, "to_config") else {}
        return {**inner, "filter": self.filter.kind, "fingerprint": self.fingerprint}
