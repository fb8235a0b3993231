"""Deterministic toy reading-comprehension targets for the searches' tests."""

from __future__ import annotations

from collections.abc import Sequence

from callbluff.targets.base import Candidate, Input, Output


class RankedReader:
    """A fake reader that records the size of every batch it is asked (``calls``) and answers each input with
    the first of the candidates :meth:`ranked` gives for its context."""

    fingerprint = "ranked-reader"

    def __init__(self) -> None:
        self.calls: list[int] = []

    def ranked(self, context: str) -> tuple[Candidate, ...]:
        raise NotImplementedError

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        self.calls.append(len(inputs))
        out = []
        for inp in inputs:
            cands = self.ranked(inp.context)
            out.append(Output(answer=cands[0].text, candidates=cands))
        return out


class ToyReader(RankedReader):
    """Answers "Prague" unless the context holds many "zyzzyva" tokens: candidates Prague (score 10 - 2c) and
    "nowhere" (score 2c), c = number of "zyzzyva" tokens. The expected F1 falls with every "zyzzyva" added, so
    the optimum of d = 10 words is ten times "zyzzyva" (a question word, not a common word)."""

    fingerprint = "toy-reader"

    def ranked(self, context: str) -> tuple[Candidate, ...]:
        c = [w.strip(".") for w in context.lower().split()].count("zyzzyva")
        return tuple(sorted([Candidate("Prague", 10.0 - 2 * c), Candidate("nowhere", 2.0 * c)], key=lambda x: -x.score))
