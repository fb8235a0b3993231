"""The wrong-question bluff: a real, fluent answer written for *another* prompt of the same dataset.

Ding et al. 2020 open with the cheating strategy of "students writing irrelevant answers in the hopes of
gaining at least partial credit" (Abstract; Sec. 1 asks what happens when students "trick the systems with
only some extreme irrelevant adversarial input"), but every generator of their Sec. 2.2 makes *non*-answers
(random or sampled text, shuffled answers). Kumar et al. 2020 (Sec. 2.2) name the essay form of the same bluff,
"prompt-irrelevant essays" (after Kumar et al. 2019), and their annotators' first reason to lower an adversarial
essay's score is "Relevance" (Sec. 4.1, Table 6). The cheapest such answer a student has is a good answer to a
different question: real words, real syntax, real content, just not about this prompt. No fluency check can
catch it; only a check of the topic can.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any, ClassVar

import numpy as np

from callbluff.attacks.base import GeneratorParams, PromptGenerator, register
from callbluff.attacks.content.common import DING
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources


class OffTopicParams(GeneratorParams):
    """``source``: a dataset spec (``NAME:PATH[?options]``, e.g. the training split of the dataset under test,
    ``asap-sas:train.tsv.gz``) whose prompts *other* than the attacked one supply the answers; unset: the
    answers packaged with callbluff for the task (``demo:content`` / ``demo:essay``, answers to other
    questions), so the attack works on any data. ``prompts``: only these source prompts (default: every other
    prompt of the attack's task). ``min_score``: only source answers with at least this gold score (default:
    any; e.g. the top of the source scale for answers that were *good* answers to their own question)."""

    source: str | None = None
    prompts: list[str] | None = None
    min_score: float | None = None


@lru_cache(maxsize=4)
def _source_answers(spec: str) -> tuple[tuple[str, str, str, str, float | None], ...]:
    """(prompt id, prompt task, record id, text, gold) of every scored answer of dataset ``spec``, read once per
    process."""
    from callbluff.datasets import load

    ds = load(spec)
    out = []
    for r in ds:
        if not isinstance(r, ScoredResponse) or not r.text.strip():
            continue
        p = ds.prompts.get(str(r.prompt_id)) if ds.prompts else None
        out.append((str(r.prompt_id), p.task if p is not None else "", r.id, r.text, r.gold))
    return tuple(out)


@register
class OffTopic(PromptGenerator[OffTopicParams]):
    """Submit a real answer to another prompt of the same dataset (the wrong-question bluff; module doc).

    Motivation: Ding et al. 2020, Abstract and Sec. 1 ("students writing irrelevant answers in the hopes of
    gaining at least partial credit"); the essay form is Kumar et al. 2020's prompt-irrelevant response
    (Sec. 2.2, after Kumar et al. 2019; Sec. 4.1, Table 6: "Relevance" is the annotators' first reason to lower
    an adversarial essay's score). Fitted on the dataset's *other* prompts of the attacked prompt's task
    (``source``, see :class:`OffTopicParams`; unset: the answers or essays packaged with callbluff,
    :attr:`default_sources`): answer ``i`` is a uniformly drawn answer of the ``i mod k``-th of the ``k`` other
    prompts (in prompt order), so every (source prompt, attacked prompt) pair gets the same number of answers,
    each drawn from answer ``i``'s own seeded stream. A robust scorer gives it the bottom score (ARR, Ding et al.
    Sec. 3.2): ``expect = "bottom"`` (Kumar et al. measure essays against their originals; a prompt-level
    generator has no original). Choices where the papers are silent: answers are taken as written (no cleaning;
    where two prompts' scales differ the answer's own score is not carried over); any gold score by default
    (``min_score``); a source prompt of a different task is never used; a source without another prompt of the
    task yields no answers; ``meta``: the source prompt and record id. ``OffTopicEssay``, the essay form's name
    when an attack served one task, finds it too.
    """

    name = "OffTopic"
    aliases = ("OffTopicEssay",)
    task = "content"
    tasks = ("content", "essay")
    family = "offtopic"
    paper = DING
    description = "A real answer (or essay) written for another prompt of the same dataset (the wrong-question bluff)."
    record_type = ScoredResponse
    expect = "bottom"
    Params = OffTopicParams
    default_sources: ClassVar[dict[str, str]] = {"content": "demo:content", "essay": "demo:essay"}
    """The source when ``source`` is unset, by the attacked prompt's task."""

    def fit(self, records: Sequence[Record], prompt: Prompt | None, res: Resources) -> dict[str, Any]:
        """The source answers of every other prompt of the attacked prompt's task (each prompt's in file order)."""
        kind = prompt.task if prompt is not None else self.task  # the attacked prompt's task
        spec = self.params.source or self.default_sources[kind]
        own = prompt.id if prompt is not None else None
        wanted = set(self.params.prompts) if self.params.prompts is not None else None
        pool: dict[str, list[list[str]]] = {}
        for pid, of, rid, text, gold in _source_answers(spec):
            if pid == own or (of and of != kind) or (wanted is not None and pid not in wanted):
                continue
            if self.params.min_score is not None and (gold is None or gold < self.params.min_score):
                continue
            pool.setdefault(pid, []).append([rid, text])
        if wanted is not None and not wanted - {own} <= set(pool):
            missing = sorted(wanted - {own} - set(pool))
            raise ValueError(f"{self.name}: source {spec!r} has no usable {kind} answers of prompts {missing} "
                             f"(prompts={self.params.prompts}); name prompts the source holds")
        return {"source": spec, "prompts": sorted(pool, key=_prompt_key), "answers": pool}

    def generate_one(self, index: int, prompt: Prompt, state: dict[str, Any], rng: np.random.Generator,
                     res: Resources) -> Perturbed | None:
        others = state["prompts"]
        if not others:
            return None
        src = others[index % len(others)]  # every other prompt in turn: the pairs are balanced
        answers = state["answers"][src]
        rid, text = answers[int(rng.integers(0, len(answers)))]
        return self.generated(prompt, text, index, source_prompt=src, source_record=rid)


def _prompt_key(pid: str) -> tuple[int, Any]:
    return (0, int(pid)) if pid.isdigit() else (1, pid)
