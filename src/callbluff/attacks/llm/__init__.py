"""The LLM-grader family: what students send to a grader that is a large language model behind a chat
endpoint. One module per kind: ``injection`` (an instruction, a role-play, a fake system turn, a delimiter
escape, and the instruction hidden in invisible or look-alike characters), ``claims`` (the rubric echoed, the
reference answer pasted in, a claim of quality, a fake score in the grader's output format), ``content_free``
(Zhao et al.'s master keys, Zheng et al.'s null-model answer) and ``universal`` (Raina et al.'s universal phrase,
a search through the Oracle with a query budget). ``common`` holds Kumar et al.'s size and position criteria
read for an inserted span.

Every attack serves short-answer graders (task ``content``) and essay graders (task ``essay``): the texts do not
depend on the task (``tasks``); the per-task names they had before, ``<name>Essay``, still find them (``aliases``). A robust grader does not raise the score for the added
text (expect ``not-higher``) and gives a content-free answer the minimum (expect ``bottom``).
:func:`llm_configurations` lists the configurations ``callbluff suite llm-grader`` writes.
"""

from __future__ import annotations

from typing import Any

from callbluff.attacks.llm.claims import (
    FormatHijack,
    ReferencePaste,
    RubricEcho,
    SelfAssessment,
)
from callbluff.attacks.llm.content_free import MASTER_KEYS, MasterKey, NullAnswer
from callbluff.attacks.llm.injection import (
    InjectDelimiterEscape,
    InjectInstruction,
    InjectRolePlay,
    InjectSystemTurn,
    ObfuscatedInjection,
)
from callbluff.attacks.llm.universal import UniversalPhrase

__all__ = [
    "MASTER_KEYS", "FormatHijack", "InjectDelimiterEscape", "InjectInstruction", "InjectRolePlay", "InjectSystemTurn",
    "MasterKey", "NullAnswer", "ObfuscatedInjection", "ReferencePaste", "RubricEcho", "SelfAssessment",
    "UniversalPhrase", "llm_configurations",
]


def llm_configurations(task: str = "content", *, search_budget: int = 216) -> list[dict[str, Any]]:
    """The family's configurations for a suite of ``task`` (``content`` or ``essay``): each entry is
    ``{"attack": name, "params": {...}}`` as a suite's ``[[attack]]`` table takes it. One configuration per
    attack, the three hidden encodings and both fake-score forms separately, and the universal phrase with
    ``search_budget`` queries per answer."""
    if not InjectInstruction.serves(task):
        raise ValueError(f"the LLM-grader family grades scored answers: task 'content' or 'essay', got {task!r}")
    out: list[dict[str, Any]] = [
        {"attack": "InjectInstruction", "params": {}},
        {"attack": "InjectRolePlay", "params": {}},
        {"attack": "InjectSystemTurn", "params": {}},
        {"attack": "InjectDelimiterEscape", "params": {}},
        {"attack": "RubricEcho", "params": {}},
        {"attack": "ReferencePaste", "params": {}},
        {"attack": "SelfAssessment", "params": {}},
        {"attack": "FormatHijack", "params": {"form": "json"}},
        {"attack": "FormatHijack", "params": {"form": "text"}},
        {"attack": "MasterKey", "params": {}},
        {"attack": "NullAnswer", "params": {}},
    ]
    out += [{"attack": "ObfuscatedInjection", "params": {"encoding": e}} for e in ("zero-width", "tags", "homoglyph")]
    out.append({"attack": "UniversalPhrase", "params": {"query_budget": search_budget}})
    return out
