"""The edit toolkit: Kumar et al. 2020's size and position criteria (Sec. 3.1), implemented once.

"Given a prompt, response r, bounded size criterion S, position criterion P [...] an adversary converts r
to r'. [S] defines the percentage up to which the original response has to be changed [...] ({10, 15, 20,
25}). [P] defines the position of inducing adversarial perturbation. We consider three positions by
dividing the response into three equal-sized portions." (Kumar et al. 2020, Sec. 3.1)

Static attacks use three steps:

1. :func:`units` splits a text into characters, words or sentences, each with its character span: words
   from spaCy's tokenizer alone, sentences from ONE parse shared by every attack on that text
   (:meth:`Resources.spans`, cached per text);
2. :func:`select` picks which units to change: ``SizeCriterion(percent).units(n)`` of them, inside the
   requested third (:class:`Position`), contiguous or scattered;
3. :func:`apply` performs non-overlapping :class:`Edit` s, keeps every untouched character byte for byte,
   and returns meta with the source and output span of each edit (the report highlights output spans).

:class:`SizePositionParams` is the parameter base of attacks that take the two criteria.
"""

from __future__ import annotations

import enum
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from callbluff.attacks.base import AttackParams

if TYPE_CHECKING:
    from callbluff.resources.context import Resources

UnitKind = Literal["char", "word", "sentence"]


class Position(str, enum.Enum):
    """Position criterion (Kumar et al. 3.1): one of three equal-sized portions of the response's units."""

    beginning = "beginning"
    middle = "middle"
    end = "end"

    def slice_bounds(self, n: int) -> tuple[int, int]:
        """``[start, stop)`` unit indices of this third of ``n`` units (``k*n//3 .. (k+1)*n//3``)."""
        k = {"beginning": 0, "middle": 1, "end": 2}[self.value]
        return (k * n) // 3, ((k + 1) * n) // 3


class SizeCriterion(BaseModel):
    """Size criterion (Kumar et al. 3.1): the perturbation changes up to ``percent`` % of the response.

    Where the paper is silent: "up to" is read as ``floor(n * percent / 100)`` units, but at least one unit
    of a non-empty response (else a short response would never be perturbed)."""

    model_config = ConfigDict(frozen=True)
    percent: float = Field(15.0, gt=0, le=100)

    def units(self, n: int) -> int:
        """How many of ``n`` units may change."""
        if n <= 0:
            return 0
        return max(1, math.floor(n * self.percent / 100.0 + 1e-9))


class SizePositionParams(AttackParams):
    """Kumar et al. 3.1's two criteria as attack parameters: ``percent`` of the response's units (the
    paper tries 10, 15, 20 and 25) and the ``position`` third (None: anywhere in the response)."""

    percent: float = Field(15.0, gt=0, le=100)
    position: Position | None = None

    @property
    def size(self) -> SizeCriterion:
        return SizeCriterion(percent=self.percent)


@dataclass(frozen=True)
class Unit:
    """One character, word or sentence of a text: ``text == source[start:end]``; ``index`` is its rank."""

    text: str
    start: int
    end: int
    index: int


def units(text: str, kind: UnitKind, res: Resources) -> list[Unit]:
    """The ``kind`` units of ``text`` with character spans.

    Words are the spaCy tokenizer's non-space tokens (punctuation is a word unit, as a tokenizer gives it),
    from the tokenizer alone (:meth:`Resources.word_spans`, no statistical component); sentences are spaCy's
    statistical sentences without surrounding whitespace, from one cached parse of ``text``
    (:meth:`Resources.spans`, whose tokens are the same); characters are every character (whitespace
    included)."""
    if kind == "char":
        return [Unit(c, i, i + 1, i) for i, c in enumerate(text)]
    if kind not in ("word", "sentence"):
        raise ValueError(f"unit kind must be 'char', 'word' or 'sentence', got {kind!r}")
    spans = res.word_spans(text) if kind == "word" else res.spans(text).sentences
    return [Unit(text[a:b], a, b, i) for i, (a, b) in enumerate(spans)]


def regex_units(text: str, pattern: str | re.Pattern[str] = r"\S+") -> list[Unit]:
    """Units that are the matches of ``pattern`` (default: whitespace-separated tokens), with spans."""
    return [Unit(m.group(), m.start(), m.end(), i) for i, m in enumerate(re.finditer(pattern, text))]


def select(n_units: int, percent: float, position: Position | str | None, rng: np.random.Generator,
           contiguous: bool = False) -> list[int]:
    """Sorted indices of the units to perturb (Kumar et al. 3.1): ``SizeCriterion(percent).units(n_units)``
    of them, inside the ``position`` third (None: anywhere), at most as many as the third holds.

    ``contiguous=False`` (default) scatters them uniformly without replacement: the paper inserts fillers
    "randomly in sentences according to the criterion" (ModFluency) and replaces words "randomly" (ModLexicon).
    ``contiguous=True`` takes one run of adjacent units at a uniform offset, for block edits (sentences
    added or deleted together). [] when ``n_units`` is 0 or the third is empty (fewer than 3 units)."""
    if n_units <= 0:
        return []
    lo, hi = (0, n_units) if position is None else Position(position).slice_bounds(n_units)
    k = min(SizeCriterion(percent=percent).units(n_units), hi - lo)
    if k <= 0:
        return []
    if contiguous:
        first = lo + int(rng.integers(0, hi - lo - k + 1))
        return list(range(first, first + k))
    return sorted(int(i) for i in rng.choice(np.arange(lo, hi), size=k, replace=False))


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` by ``replacement``: an insertion when ``start == end``, a deletion when
    ``replacement`` is empty."""

    start: int
    end: int
    replacement: str

    def __post_init__(self) -> None:
        if not (0 <= self.start <= self.end):
            raise ValueError(f"edit span [{self.start}, {self.end}) is not a span (need 0 <= start <= end)")

    @property
    def op(self) -> str:
        if self.start == self.end:
            return "insert"
        return "delete" if not self.replacement else "replace"


def apply(text: str, edits: Sequence[Edit]) -> tuple[str, list[dict[str, Any]]]:
    """``text`` with ``edits`` applied, and one meta dict per edit in text order.

    Edits must not overlap (touching is fine; insertions at the same point keep their given order). Every
    character outside the edited spans is kept byte for byte. Each meta dict has ``op`` (insert / delete /
    replace), ``source_span`` and ``output_span`` (``[start, end)`` in ``text`` and in the result),
    ``removed`` and ``inserted``."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    for e in ordered:
        if e.end > len(text):
            raise ValueError(f"edit [{e.start}, {e.end}) is outside the text (length {len(text)})")
    for a, b in zip(ordered, ordered[1:]):
        if b.start < a.end:
            raise ValueError(f"edits overlap: [{a.start}, {a.end}) and [{b.start}, {b.end}); "
                             "merge them into one edit or pick non-overlapping units")
    parts: list[str] = []
    meta: list[dict[str, Any]] = []
    pos = out_len = 0
    for e in ordered:
        kept = text[pos:e.start]
        parts.append(kept)
        out_len += len(kept)
        parts.append(e.replacement)
        meta.append({"op": e.op, "source_span": [e.start, e.end], "output_span": [out_len, out_len + len(e.replacement)],
                     "removed": text[e.start:e.end], "inserted": e.replacement})
        out_len += len(e.replacement)
        pos = e.end
    parts.append(text[pos:])
    return "".join(parts), meta
