"""What the LLM-grader attacks share: the citations, Kumar et al.'s size and position criteria read for an
inserted span and the prompt's scale as text.

Size and position (Kumar et al. 2020, Sec. 3.1: "[S] defines the percentage up to which the original response
has to be changed [...] [P] defines the position of inducing adversarial perturbation"). An injected span is not
a share of the response, so the two criteria are read as: ``position`` = where the span goes (``start``: before
the response; ``end``: after it, the usual place of an appended instruction; ``random``: at a sentence boundary
drawn from the record's random generator) and ``repeat`` = how much (the span inserted that many times; at
``random`` each copy at its own boundary). A sentence boundary is the start or end of the text, or a point
after ``.``, ``!``, ``?`` or a line break followed by white space: a regular expression, not a parse, so the
attacks need no spaCy and run on any text (an LLM grader reads characters, not a tokenizer's sentences).
"""

from __future__ import annotations

import re
from typing import Any, Literal

import numpy as np
from pydantic import Field

from callbluff.attacks.base import AttackParams, P, StaticAttack
from callbluff.records import Prompt, ScoredResponse

KUMAR = "Kumar et al. 2020, Calling Out Bluff"
LIU_INJECTION = "Liu et al. 2024, Formalizing and Benchmarking Prompt Injection Attacks and Defenses (USENIX Security)"
PEREZ = "Perez & Ribeiro 2022, Ignore Previous Prompt: Attack Techniques for Language Models"
ZHAO = "Zhao et al. 2025, One Token to Fool LLM-as-a-Judge"
ZHENG = "Zheng et al. 2025, Cheating Automatic LLM Benchmarks: Null Models Achieve High Win Rates (ICLR)"
RAINA = "Raina et al. 2024, Is LLM-as-a-Judge Robust? Universal Adversarial Attacks on Zero-shot LLM Assessment"
BOUCHER = "Boucher et al. 2022, Bad Characters: Imperceptible NLP Attacks (IEEE S&P)"

Where = Literal["start", "end", "random"]
_BOUNDARY = re.compile(r"(?<=[.!?\n])\s+")


class InjectParams(AttackParams):
    """Kumar et al. 3.1's criteria for an inserted span: ``position`` (``start`` | ``end`` | ``random``) and
    ``repeat`` (how many copies). Defaults: one copy at the end, where a student appends an instruction."""

    position: Where = "end"
    repeat: int = Field(1, ge=1, le=20)


def boundaries(text: str) -> list[int]:
    """Character offsets where a span may be inserted: 0, after each sentence end, and the end of the text
    (before its trailing white space)."""
    end = len(text.rstrip())
    cuts = {0, end}
    cuts.update(m.start() for m in _BOUNDARY.finditer(text) if 0 < m.start() < end)
    return sorted(cuts)


def insert(text: str, span: str, position: Where, repeat: int, rng: np.random.Generator) -> tuple[str, dict[str, Any]]:
    """``text`` with ``repeat`` copies of ``span`` inserted at ``position`` (module docstring), separated from
    the text around them by one space (or kept on their own lines when ``span`` starts or ends with a line break);
    every other character is kept byte for byte. Returns the new text and meta: the insertion offsets in the
    source (``at``) and the output spans of the copies (``spans``)."""
    cuts = boundaries(text)
    if position == "start":
        ats = [0] * repeat
    elif position == "end":
        ats = [cuts[-1]] * repeat
    else:
        ats = sorted(int(cuts[int(i)]) for i in rng.integers(0, len(cuts), size=repeat))
    out: list[str] = []
    spans: list[list[int]] = []
    prev = 0
    length = 0
    for at in ats:
        piece = text[prev:at]
        out.append(piece)
        length += len(piece)
        before = "" if at == 0 or text[at - 1].isspace() or span[:1].isspace() else " "
        after = "" if at >= len(text) or text[at].isspace() or span[-1:].isspace() else " "
        if at == len(text.rstrip()) and at > 0:
            after = ""  # at the end: the source's trailing white space follows
        out.append(before)
        length += len(before)
        spans.append([length, length + len(span)])
        out.append(span)
        length += len(span)
        out.append(after)
        length += len(after)
        prev = at
    out.append(text[prev:])
    return "".join(out), {"at": ats, "spans": spans}


def scale_text(prompt: Prompt | None) -> dict[str, str]:
    """The prompt's scale for a payload's ``{max}`` / ``{min}`` (integers written without ``.0``); a record with
    no prompt gets no example (``applies_to``)."""
    assert prompt is not None

    def fmt(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else f"{x:g}"

    return {"max": fmt(prompt.score_max), "min": fmt(prompt.score_min)}


class LLMStatic(StaticAttack[P]):
    """Base of the family's static attacks: a scored response with a prompt (the scale a payload names), for short
    answers and essays alike (the family's texts do not depend on the task). Each attack is also found by the
    name it had when an attack served one task, ``<name>Essay`` (its ``aliases``)."""

    task = "content"
    tasks = ("content", "essay")
    record_type = ScoredResponse
    expect = "not-higher"

    def applies_to(self, record: Any, prompt: Prompt | None) -> bool:
        return prompt is not None and bool(record.text.strip())
