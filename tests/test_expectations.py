"""Per-example verdicts (metrics/expectations.py) add up to the papers' statistics, and third parties can
declare their own expectation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from callbluff import metrics as M
from callbluff.metrics.expectations import (
    Expectation,
    Outcome,
    VerdictTally,
    failure_unit,
    get_expectation,
    judge,
    register_expectation,
    unregister_expectation,
)


def _tally(expect: str, outcomes: list[Outcome], sources: list[str] | None = None, per: str = "example") -> dict:
    t = VerdictTally(per)  # type: ignore[arg-type]
    t.update(zip(sources or [str(i) for i in range(len(outcomes))], (judge(expect, o) for o in outcomes)))
    return t.result()


def test_lower_is_kumars_not_lowered_pct() -> None:
    rng = np.random.default_rng(3)
    orig = rng.integers(2, 12, 200).astype(float)
    adv = orig + rng.choice([-2.0, -1.0, 0.0, 1.0], 200)
    adv[::17] = np.nan  # failed predictions: no verdict
    got = _tally("lower", [Outcome(o, a) for o, a in zip(orig, adv)])
    want = M.overstability(orig, adv, score_min=2, score_max=12)
    assert got["n_judged"] == want["n"] and got["failure_pct"] == pytest.approx(want["not_lowered_pct"], abs=1e-12)


def test_bottom_is_100_minus_arr() -> None:
    scores = [0.0, 0.4, 0.5, 1.0, 2.0, None, 0.49]
    got = _tally("bottom", [Outcome(adv_score=s, score_min=0, score_max=2) for s in scores])
    arr = M.arr([s for s in scores if s is not None], score_min=0)
    assert got["n_judged"] == 6 and got["failure_pct"] == pytest.approx(100 - arr)


def test_same_score_counts_any_move() -> None:
    got = _tally("same-score", [Outcome(1, 1), Outcome(1, 1 + 1e-12), Outcome(1, 2), Outcome(2, 1), Outcome(1, None)])
    assert (got["n_judged"], got["n_fooled"]) == (4, 2)


def test_same_answer_worst_case_per_source() -> None:
    # q1: right before, wrong on one of two versions -> broken; q2: right, both versions right; q3: wrong before
    outcomes = [Outcome(orig_correct=True, adv_correct=True), Outcome(orig_correct=True, adv_correct=False),
                Outcome(orig_correct=True, adv_correct=True), Outcome(orig_correct=True, adv_correct=True),
                Outcome(orig_correct=False, adv_correct=False)]
    sources = ["q1", "q1", "q2", "q2", "q3"]
    per_source = _tally("same-answer", outcomes, sources, per=failure_unit("same-answer", {"same-answer"}))
    assert (per_source["n_judged"], per_source["n_fooled"], per_source["failure_pct"]) == (2, 1, 50.0)
    per_example = _tally("same-answer", outcomes, sources)  # DPAEG's unit: the adversarial question
    assert (per_example["n_judged"], per_example["n_fooled"]) == (4, 1)
    ok = [o.orig_correct for o in outcomes]
    adv = [o.adv_correct for o in outcomes]
    assert per_example["failure_pct"] == M.success_rate(ok, adv)


def test_wrong_answer_and_nothing_judged() -> None:
    assert _tally("wrong-answer", [Outcome(adv_correct=True), Outcome(adv_correct=False)])["failure_pct"] == 50.0
    assert math.isnan(_tally("lower", [Outcome(1, None)])["failure_pct"])
    assert judge(None, Outcome(1, 2)) is None


def test_tallies_merge_like_one_pass() -> None:
    pairs = [("a", True), ("a", False), ("b", True), ("c", None), ("b", True)]
    for per in ("example", "source"):
        whole = VerdictTally(per)
        whole.update(pairs)
        left, right = VerdictTally(per), VerdictTally(per)
        left.update(pairs[:2])
        right.update(pairs[2:])
        left.merge(right)
        assert left.result() == whole.result()


def test_a_third_party_expectation() -> None:
    within = Expectation("within-1", "the score moves by at most one point",
                         lambda o: None if o.missing_score else abs(o.adv_score - o.orig_score) <= 1)
    register_expectation(within)
    try:
        assert get_expectation("within-1") is within
        assert _tally("within-1", [Outcome(3, 4), Outcome(3, 5)])["failure_pct"] == 50.0
        with pytest.raises(ValueError, match="registered already"):
            register_expectation(within)
    finally:
        unregister_expectation("within-1")
    with pytest.raises(KeyError, match="known: bottom, lower"):
        get_expectation("within-1")


def test_an_attack_may_declare_a_registered_third_party_expectation() -> None:
    """The registry is open for attacks too: a class whose ``expect`` names an expectation a third party
    registered is accepted (it was refused by a closed Literal before), and an unknown name is still refused,
    with the registered names listed."""
    from callbluff.attacks.base import StaticAttack, validate_attack_class
    from callbluff.records import ScoredResponse

    class Nudge(StaticAttack):
        name = "NudgeWithin1"
        task = "essay"
        family = "test"
        paper = "none"
        description = "a test attack"
        record_type = ScoredResponse
        expect = "within-1"

        def generate(self, record, rng, res, prompt=None, state=None):  # noqa: ANN001, ANN201
            return []

    with pytest.raises(TypeError, match="got 'within-1'"):
        validate_attack_class(Nudge)
    register_expectation(Expectation("within-1", "the score moves by at most one point",
                                     lambda o: None if o.missing_score else abs(o.adv_score - o.orig_score) <= 1))
    try:
        validate_attack_class(Nudge)
    finally:
        unregister_expectation("within-1")
