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
    expectation_names,
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


def test_an_expectation_with_a_parameter() -> None:
    """CheckList's ``Expect.eq(tolerance)``: ``NAME:VALUE`` binds the value; the spec is what attacks declare,
    verdicts judge, the report phrases and a failure unit is read from; a missing, unexpected or unreadable value
    is refused naming the parameter."""
    from callbluff.attacks.base import StaticAttack, validate_attack_class
    from callbluff.metrics.expectations import check_expectation, expectation_text, failure_unit, find_expectation
    from callbluff.records import ScoredResponse

    within = Expectation("within", "the score moves by at most {value} points",
                         lambda o, tol: None if o.missing_score else abs(o.adv_score - o.orig_score) <= tol,
                         parameter="tolerance (score points)", asks="a robust scorer keeps the score within {value}")
    register_expectation(within)
    try:
        half = get_expectation("within:0.5")
        assert half.name == "within:0.5" and half.value == 0.5 and half.parameter is None
        assert half.description == "the score moves by at most 0.5 points"
        assert get_expectation("within:0.5") is half  # resolved once
        assert judge("within:0.5", Outcome(3, 3.4)) is True and judge("within:0.5", Outcome(3, 3.6)) is False
        assert judge("within:1", Outcome(3, 3.6)) is True and judge("within:1", Outcome(3, None)) is None
        assert _tally("within:0.25", [Outcome(1, 1.2), Outcome(1, 2), Outcome(1, 0.9)])["failure_pct"] == \
            pytest.approx(100 / 3)
        assert expectation_text("within:2") == "a robust scorer keeps the score within 2"
        assert expectation_text("never-registered") == "never-registered" and find_expectation("nope") is None
        assert failure_unit("within:2") == "example" and failure_unit("within:2", {"within"}) == "source"
        with pytest.raises(ValueError, match=r"takes a parameter \(tolerance \(score points\)\): write 'within:VALUE'"):
            get_expectation("within")
        with pytest.raises(ValueError, match="cannot read 'lots' as its tolerance"):
            get_expectation("within:lots")
        with pytest.raises(ValueError, match="'lower' takes no parameter"):
            get_expectation("lower:1")
        assert "within:VALUE" in (check_expectation("nope") or "")

        class Near(StaticAttack):
            name = "NearWithin"
            task = "essay"
            family = "test"
            paper = "none"
            description = "a test attack"
            record_type = ScoredResponse
            expect = "within:0.5"

            def generate(self, record, rng, res, prompt=None, state=None):  # noqa: ANN001, ANN201
                return []

        validate_attack_class(Near)
        Near.expect = "within"
        with pytest.raises(TypeError, match="write 'within:VALUE'"):
            validate_attack_class(Near)
        with pytest.raises(ValueError, match="without ':'"):
            register_expectation(Expectation("a:b", "x", lambda o: None))
    finally:
        unregister_expectation("within")
    with pytest.raises(KeyError, match="unknown expectation 'within'"):
        get_expectation("within:0.5")  # the bound specs go with their expectation


def test_report_and_compare_read_expectations_from_the_registry() -> None:
    """No list of expectation names outside metrics/expectations.py: the scorecard's phrase and compare's
    restated fields come from the registered expectations."""
    from pathlib import Path

    src = Path(__file__).resolve().parents[1] / "src" / "callbluff"
    for rel in ("report/scorecard.py", "report/html.py", "compare.py"):
        text = (src / rel).read_text(encoding="utf-8")
        assert '"same-score"' not in text and '"not-higher"' not in text and '"bottom": (' not in text and '"lower": "' not in text, rel
    from callbluff.attacks.base import EXPECTATIONS
    from callbluff.metrics.expectations import BUILTIN

    assert EXPECTATIONS is BUILTIN and set(BUILTIN) <= set(expectation_names())
    assert get_expectation("bottom").restates == ("arr", 100.0)
    assert get_expectation("lower").phrase == "a robust scorer lowers the score"
