"""Delete family of Kumar et al. 2020, "Calling Out Bluff" (Sec. 3.3, Table 1): DelStart, DelEnd, DelRand.

A deleted sentence takes the whitespace *before* it along (the separator after it stays), so paragraph
breaks that follow a deleted sentence survive; a run of deleted sentences at the very start of a response
takes the whitespace after it instead. Every other character is kept byte for byte (edit toolkit ``apply``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from callbluff.attacks.base import AttackParams, StaticAttack, register
from callbluff.attacks.edits import Edit, SizePositionParams, Unit, apply, select, units
from callbluff.attacks.essay.common import KUMAR
from callbluff.records import Perturbed, Prompt, Record, ScoredResponse
from callbluff.resources.context import Resources


def prefetch_sentences(records: Sequence[Record], res: Resources) -> None:
    """Split the responses of a batch of records into sentences in one batched ``sentencizer.pipe``
    (:meth:`Resources.prefetch_spans`) before the per-record calls find them cached (the engine calls an
    attack's ``prefetch`` once per task); the sentences are the same with or without it."""
    res.prefetch_spans([r.text for r in records if isinstance(r, ScoredResponse)])


def deletion_edits(sentences: list[Unit], deleted: list[int]) -> list[Edit] | None:
    """Edits that delete the sentences ``deleted`` (indices into ``sentences``), one edit per run of adjacent
    sentences; None when every sentence would go (no response is left)."""
    chosen = sorted(set(deleted))
    if not chosen:
        return []
    if len(chosen) >= len(sentences):
        return None
    runs: list[tuple[int, int]] = []
    for i in chosen:
        if runs and runs[-1][1] == i - 1:
            runs[-1] = (runs[-1][0], i)
        else:
            runs.append((i, i))
    edits = []
    for a, b in runs:
        if a > 0:
            edits.append(Edit(sentences[a - 1].end, sentences[b].end, ""))
        else:
            edits.append(Edit(sentences[a].start, sentences[b + 1].start, ""))
    return edits


class ProgressiveParams(AttackParams):
    """DelStart / DelEnd: ``k = 1 .. max_k`` sentences (None: every ``k`` up to one less than the response's
    sentence count); ``mode`` says whether the ``k`` sentences are what is *kept* (Sec. 3.3 text, the
    authors' notebook) or what is *removed* (Table 1's wording "deletion of lines from the beginning")."""

    max_k: int | None = Field(None, ge=1)
    mode: Literal["keep", "remove"] = "keep"


class _Progressive(StaticAttack[ProgressiveParams]):
    """Shared body of DelStart and DelEnd: one example per ``k``, ``index = k - 1``."""

    family = "delete"
    paper = KUMAR
    Params = ProgressiveParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"
    from_start: bool

    def prefetch(self, records: Sequence[Record], res: Resources) -> None:
        """One batched sentence split of the task's responses (:func:`prefetch_sentences`)."""
        prefetch_sentences(records, res)

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        sentences = units(record.text, "sentence", res)
        n = len(sentences)
        last = n - 1 if self.params.max_k is None else min(self.params.max_k, n - 1)
        out = []
        for k in range(1, last + 1):
            if self.params.mode == "keep":  # the first (DelStart) / last (DelEnd) k sentences stay
                deleted = list(range(k, n)) if self.from_start else list(range(0, n - k))
            else:  # the first / last k sentences go
                deleted = list(range(0, k)) if self.from_start else list(range(n - k, n))
            edits = deletion_edits(sentences, deleted)
            if not edits:
                continue
            text, meta = apply(record.text, edits)
            out.append(self.perturbed(record, text, index=k - 1, k=k, n_sentences=n, deleted=deleted,
                                      edits=meta))
        return out


@register
class DelStart(_Progressive):
    """The response cut down to its beginning, progressively (Kumar et al. 2020, Sec. 3.3 "DelStart", Table 1).

    "We tested the performance of the AS systems with just the beginning line of the response. This was
    followed by the first two lines, the first three lines and so on." One example per ``k = 1, 2, ...``
    (``index = k - 1``): only the first ``k`` sentences are kept (``mode="keep"``, the default, as in Sec. 3.3
    and the authors' notebook). Table 1 calls the test "deletion of lines from the beginning", so
    ``mode="remove"`` deletes the first ``k`` sentences instead.

    Choices where the paper is silent: sentences are the edit toolkit's spaCy sentences; the series stops at
    ``k = n - 1`` (``k = n`` is the response itself) or at ``max_k``; a one-sentence response yields nothing.
    No size or position criterion: the series is the criterion. ``meta``: ``k``, the sentence count, the
    deleted sentence indices and the edit spans.
    """

    name = "DelStart"
    task = "essay"
    description = "Only the first k sentences of the response (k = 1, 2, ...)."
    from_start = True


@register
class DelEnd(_Progressive):
    """The response cut down to its end, progressively (Kumar et al. 2020, Sec. 3.3 "DelEnd", Table 1).

    "Similar to the above testcase, we repeated this scenario for the last line, last two lines, last three
    lines and so on." One example per ``k = 1, 2, ...`` (``index = k - 1``): only the last ``k`` sentences
    are kept (``mode="keep"``, default); ``mode="remove"`` deletes the last ``k`` sentences instead (Table 1's
    "deletion of lines from the end").

    Choices where the paper is silent: as for DelStart (spaCy sentences, ``k <= n - 1`` and ``max_k``, a
    one-sentence response yields nothing, no size or position criterion).
    """

    name = "DelEnd"
    task = "essay"
    description = "Only the last k sentences of the response (k = 1, 2, ...)."
    from_start = False


class DelRandParams(SizePositionParams):
    """DelRand deletes ``percent`` % of the sentences (default 25: the authors' notebook removes
    ceil(mean sentences per essay / 4), about a quarter of an essay) anywhere (``position=None``) or inside
    one third."""

    percent: float = Field(25.0, gt=0, le=100)


@register
class DelRand(StaticAttack[DelRandParams]):
    """Delete randomly chosen sentences (Kumar et al. 2020, Sec. 3.3 "DelRand", Table 1, Table 5).

    "We removed a fixed percentage of sentences randomly from the response to interfere and discard the
    coherence. This also reduces the length of response." The size criterion ``percent`` and the position
    criterion (Sec. 3.1) pick the sentences with the edit toolkit's ``select``: ``floor(n * percent / 100)``
    sentences (at least one), scattered uniformly without replacement inside the ``position`` third (None:
    the whole response).

    Choices where the paper is silent: sentences are spaCy sentences; at least one sentence must remain, so a
    one-sentence response, or a selection covering every sentence, yields nothing; a deleted sentence takes
    the whitespace before it along. ``meta``: the deleted sentence indices, the sentence count and the edits.
    """

    name = "DelRand"
    task = "essay"
    family = "delete"
    paper = KUMAR
    description = "Delete percent % of the sentences at random."
    Params = DelRandParams
    record_type = ScoredResponse
    requires = ("spacy",)
    expect = "lower"

    def prefetch(self, records: Sequence[Record], res: Resources) -> None:
        """One batched sentence split of the task's responses (:func:`prefetch_sentences`)."""
        prefetch_sentences(records, res)

    def generate(self, record: Record, rng: np.random.Generator, res: Resources,
                 prompt: Prompt | None = None, state: object = None) -> list[Perturbed]:
        assert isinstance(record, ScoredResponse)
        sentences = units(record.text, "sentence", res)
        if len(sentences) < 2:
            return []
        deleted = select(len(sentences), self.params.percent, self.params.position, rng)
        edits = deletion_edits(sentences, deleted)
        if not edits:
            return []
        text, meta = apply(record.text, edits)
        return [self.perturbed(record, text, deleted=deleted, n_sentences=len(sentences), edits=meta)]
