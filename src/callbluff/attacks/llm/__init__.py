"""The LLM-grader family: what students send to a grader that is a large language model behind a chat
endpoint. One module per kind: ``injection`` (an instruction, a role-play, a fake system turn, a delimiter
escape, and the instruction hidden in invisible or look-alike characters), ``claims`` (the rubric echoed, the
reference answer pasted in, a claim of quality, a fake score in the grader's output format), ``content_free``
(Zhao et al.'s master keys, Zheng et al.'s null-model answer) and ``universal`` (Raina et al.'s universal phrase,
a search through the Oracle with a query budget). ``common`` holds Kumar et al.'s size and position criteria
read for an inserted span.

Every attack is registered for short-answer graders (task ``content``) and, as ``<name>Essay``, for essay graders
(task ``essay``); the texts do not depend on the task. A robust grader does not raise the score for the added
text (expect ``not-higher``) and gives a content-free answer the minimum (expect ``bottom``).
:func:`llm_configurations` lists the configurations ``callbluff suite llm-grader`` writes.
"""

from __future__ import annotations

from typing import Any

from callbluff.attacks.llm.claims import (
    FormatHijack,
    FormatHijackEssay,
    ReferencePaste,
    ReferencePasteEssay,
    RubricEcho,
    RubricEchoEssay,
    SelfAssessment,
    SelfAssessmentEssay,
)
from callbluff.attacks.llm.content_free import MASTER_KEYS, MasterKey, MasterKeyEssay, NullAnswer, NullAnswerEssay
from callbluff.attacks.llm.injection import (
    InjectDelimiterEscape,
    InjectDelimiterEscapeEssay,
    InjectInstruction,
    InjectInstructionEssay,
    InjectRolePlay,
    InjectRolePlayEssay,
    InjectSystemTurn,
    InjectSystemTurnEssay,
    ObfuscatedInjection,
    ObfuscatedInjectionEssay,
)
from callbluff.attacks.llm.universal import UniversalPhrase, UniversalPhraseEssay

__all__ = [
    "MASTER_KEYS", "FormatHijack", "FormatHijackEssay", "InjectDelimiterEscape", "InjectDelimiterEscapeEssay",
    "InjectInstruction", "InjectInstructionEssay", "InjectRolePlay", "InjectRolePlayEssay", "InjectSystemTurn",
    "InjectSystemTurnEssay", "MasterKey", "MasterKeyEssay", "NullAnswer", "NullAnswerEssay", "ObfuscatedInjection",
    "ObfuscatedInjectionEssay", "ReferencePaste", "ReferencePasteEssay", "RubricEcho", "RubricEchoEssay",
    "SelfAssessment", "SelfAssessmentEssay", "UniversalPhrase", "UniversalPhraseEssay", "llm_configurations",
]


SUFFIX: dict[str, str] = {"content": "", "essay": "Essay"}
"""The name suffix of the family's attacks per task (the essay twins are ``<name>Essay``)."""


def llm_configurations(task: str = "content", *, search_budget: int = 216) -> list[dict[str, Any]]:
    """The family's configurations for a suite of ``task`` (``content`` or ``essay``): each entry is
    ``{"attack": name, "params": {...}}`` as a suite's ``[[attack]]`` table takes it. One configuration per
    attack, the three hidden encodings and both fake-score forms separately, and the universal phrase with
    ``search_budget`` queries per answer."""
    sfx = SUFFIX.get(task)
    if sfx is None:
        raise ValueError(f"the LLM-grader family grades scored answers: task 'content' or 'essay', got {task!r}")
    out: list[dict[str, Any]] = [
        {"attack": f"InjectInstruction{sfx}", "params": {}},
        {"attack": f"InjectRolePlay{sfx}", "params": {}},
        {"attack": f"InjectSystemTurn{sfx}", "params": {}},
        {"attack": f"InjectDelimiterEscape{sfx}", "params": {}},
        {"attack": f"RubricEcho{sfx}", "params": {}},
        {"attack": f"ReferencePaste{sfx}", "params": {}},
        {"attack": f"SelfAssessment{sfx}", "params": {}},
        {"attack": f"FormatHijack{sfx}", "params": {"form": "json"}},
        {"attack": f"FormatHijack{sfx}", "params": {"form": "text"}},
        {"attack": f"MasterKey{sfx}", "params": {}},
        {"attack": f"NullAnswer{sfx}", "params": {}},
    ]
    out += [{"attack": f"ObfuscatedInjection{sfx}", "params": {"encoding": e}} for e in ("zero-width", "tags", "homoglyph")]
    out.append({"attack": f"UniversalPhrase{sfx}", "params": {"query_budget": search_budget}})
    return out
