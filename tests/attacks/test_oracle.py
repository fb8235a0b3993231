"""The Oracle enforces a search attack's query budget: every query counts, one predict per ask."""

from __future__ import annotations

import pickle
from collections.abc import Sequence

import pytest

from callbluff.attacks.oracle import Oracle
from callbluff.targets.base import Input, Output


class CountingTarget:
    fingerprint = "counting"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        self.calls.append([i.text for i in inputs])
        return [Output(score=float(len(i.text))) for i in inputs]


def make(budget: int) -> tuple[Oracle, CountingTarget]:
    target = CountingTarget()
    return Oracle(target, lambda t: Input("content", t, "p"), budget, original=Output(score=1.0)), target


def test_ask_cuts_to_the_budget_and_counts_every_query() -> None:
    oracle, target = make(5)
    assert [o.score for o in oracle.ask(["a", "bb", "a"])] == [1.0, 2.0, 1.0]  # duplicates count
    assert oracle.used == 3 and oracle.remaining == 2 and not oracle.exhausted
    assert len(oracle.ask(["c", "d", "e", "f"])) == 2  # cut to what is left
    assert oracle.exhausted and oracle.ask(["g"]) == [] and oracle.ask_one("g") is None
    assert target.calls == [["a", "bb", "a"], ["c", "d"]]  # one batched predict per ask, nothing after
    assert oracle.used == oracle.budget == 5 and oracle.calls == 2
    assert oracle.original == Output(score=1.0)


def test_budget_cannot_be_raised_or_bypassed() -> None:
    oracle, _ = make(2)
    with pytest.raises(AttributeError):
        oracle.budget = 100  # type: ignore[misc]
    with pytest.raises(AttributeError):
        oracle.used = 0  # type: ignore[misc]
    with pytest.raises(AttributeError):
        oracle.target  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(TypeError, match="wrap a single text"):
        oracle.ask("abc")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(oracle)


def test_empty_ask_is_free_and_zero_budget_answers_nothing() -> None:
    oracle, target = make(0)
    assert oracle.ask(["x"]) == [] and oracle.exhausted and target.calls == []
    oracle, target = make(3)
    assert oracle.ask([]) == [] and oracle.used == 0 and target.calls == []
    with pytest.raises(ValueError, match=">= 0"):
        Oracle(target, lambda t: Input("content", t), -1)
