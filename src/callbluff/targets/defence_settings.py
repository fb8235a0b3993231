"""The settings of a chat grader's own defences: the ``defence`` key of a ``type = "openai"`` target
(:class:`~callbluff.targets.openai_target.OpenAIConfig`), built into :class:`callbluff.targets.grader_defences.DefendedChatTarget`.

```toml
[[target]]
type = "openai"
...
defence = { spotlight = "delimit", sandwich = true, known_answer = true, erase_budget = 3, seed = 7 }
```

Kept apart from :mod:`callbluff.targets.grader_defences` (which subclasses the chat target) so that the chat target's
settings model (:class:`~callbluff.targets.openai_target.OpenAIConfig`) can validate the table without importing
the defended adapter. What each key does,
and the papers, are in :mod:`callbluff.targets.grader_defences`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

Spotlight = Literal["none", "delimit", "datamark", "encode"]
KnownAnswerForm = Literal["liu", "few-shot", "few-shot-word", "few-shot-chat"]
"""The known-answer query's forms (:mod:`callbluff.targets.grader_defences`)."""
SPOTLIGHTS: tuple[str, ...] = ("none", "delimit", "datamark", "encode")


class GraderDefence(BaseModel):
    """One chat grader's defences (all off by default; see :mod:`callbluff.targets.grader_defences`).

    * ``spotlight``: Hines et al. 2024's spotlighting of the student's answer: ``delimit`` (random markers around
      it), ``datamark`` (a marker between its words), ``encode`` (base64), ``none``;
    * ``sandwich``: the grading instruction repeated after the answer;
    * ``known_answer``: Liu et al. 2024's known-answer detection, one extra call per answer; a failed check is
      ``known_answer_action``: ``floor`` (the scale's minimum, the default) or ``withhold`` (an error row routed to
      a human, no score); ``known_answer_form``: the detection query, ``liu`` (their instruction, a model that
      follows instructions), ``few-shot`` (a pattern to continue whose answer is the key, raw completion on
      ``/completions``: what a small model does; a 3-digit key), ``few-shot-word`` (the same, a common word as
      the key) or ``few-shot-chat`` (the ``few-shot`` pattern as one chat message);
    * ``erase_budget``: erase-and-rescore (Kumar et al. 2023 read for graders), at most this many extra grading
      calls per answer (0: off), spans whose MiniLM relevance to the question and reference is below
      ``erase_relevance``, a drop of at least ``erase_margin`` points marking a bluff; ``erase_suffix_tokens = d``
      adds Kumar et al.'s suffix mode: the answer without its last ``i`` words (``i`` = 1..d, each tail below
      ``erase_relevance``) among the candidates, within the same budget;
    * ``seed`` / ``seed_env``: what the per-answer secrets (the known-answer key, the delimiters) are derived from;
      ``seed_env`` names an environment variable holding the seed (read per run, never written) and overrides
      ``seed`` (which is written to run.json: anyone holding it and an answer can compute that answer's key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    spotlight: Spotlight = "none"
    sandwich: bool = False
    known_answer: bool = False
    known_answer_action: Literal["floor", "withhold"] = "floor"
    known_answer_form: KnownAnswerForm = "liu"
    known_answer_tokens: int = Field(16, ge=4, le=256, description="max_tokens of the known-answer call")
    erase_budget: int = Field(0, ge=0, le=32, description="the most extra grading calls per answer for "
                              "erase-and-rescore (0: off); with n samples each erased version costs n calls")
    erase_relevance: float = Field(0.3, ge=-1.0, le=1.0, description="a sentence whose MiniLM cosine to the "
                                   "question and to the reference answer are both below this says little about "
                                   "them and may be erased")
    erase_margin: float = Field(1.0, gt=0, description="a score drop (points) without a span that marks it a bluff")
    erase_suffix_tokens: int = Field(0, ge=0, le=16, description="erase-and-rescore's suffix mode (Kumar et al. "
                                     "2023, Sec. 4): the answer is also scored without its last i words, i = 1..d "
                                     "(0: off); the candidates share erase_budget")
    seed: int = 0
    seed_env: str | None = None

    @field_validator("seed_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise ValueError("must be the NAME of an environment variable holding the seed, not the seed")
        return v

    @model_validator(mode="after")
    def _something(self) -> GraderDefence:
        if not self.active():
            raise ValueError("a defence table with every defence off; give spotlight, sandwich, known_answer or "
                             "erase_budget (or drop the key)")
        if self.erase_suffix_tokens and not self.erase_budget:
            raise ValueError("erase_suffix_tokens needs erase_budget > 0 (the suffix erasures are rescored within "
                             "erase-and-rescore's call budget)")
        return self

    def active(self) -> bool:
        return self.spotlight != "none" or self.sandwich or self.known_answer or self.erase_budget > 0

    def identity(self) -> dict[str, Any]:
        """What decides the defended grader's answers (its cache key and fingerprint): every setting, with the
        name of ``seed_env`` (the seed it holds is hashed in by the target, never written). ``known_answer_form``
        is left out at its default (``liu``, the only form before it existed), so earlier runs' cached replies
        keep their keys; so is ``erase_suffix_tokens`` at 0 (off, the behaviour before it existed)."""
        d = self.model_dump()
        if d["known_answer_form"] == "liu":
            del d["known_answer_form"]
        if not d["erase_suffix_tokens"]:
            del d["erase_suffix_tokens"]
        return d

    def label(self) -> str:
        """``delimit+sandwich+known-answer+erase(3)``: the defences switched on (``erase(3,suffix 2)`` with the
        suffix mode)."""
        parts: list[str] = [self.spotlight] if self.spotlight != "none" else []
        parts += ["sandwich"] * self.sandwich + ["known-answer"] * self.known_answer
        suffix = f",suffix {self.erase_suffix_tokens}" if self.erase_suffix_tokens else ""
        parts += [f"erase({self.erase_budget}{suffix})"] if self.erase_budget else []
        return "+".join(parts)
