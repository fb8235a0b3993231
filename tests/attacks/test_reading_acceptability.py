"""AddSent's language-model acceptability filter (issue 37): features, the filter in the candidate pool, the
structural fallback where the model is missing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from callbluff.attacks.reading import AddOneSent, AddSent, addsent
from callbluff.attacks.reading.acceptability import FEATURE, features, unigram_logprob, words
from callbluff.records import QAExample
from callbluff.resources.context import Resources, default_resources
from callbluff.seeding import record_rng

TESLA = QAExample(
    "tesla", "What city did Tesla move to in 1880?",
    "In January 1880, two of Tesla's uncles put together enough money to help him leave Gospic for Prague, "
    "where he was to study.", ("Prague",), (96,), "Nikola_Tesla")
GOOD = "Jeff Dean decided not to come visit the country in 2014."
BAD = "It takes to know hamsters the success of a division."
"""A sentence from issue 37's list of ungrammatical AddSent output, and a grammatical one of the findings."""


@pytest.fixture(scope="module")
def res() -> Resources:
    return default_resources()


def _lm_or_skip() -> Any:
    from callbluff.attacks.reading import fluency
    from callbluff.resources.requirements import check_requirements

    problems = check_requirements(["smollm2-lm"])
    if problems:
        pytest.skip("the language model is not installed here: " + "; ".join(problems))
    return fluency.fluency_scorer(required=True)


def test_tokens_are_grouped_into_words_with_punctuation_on_the_word_before() -> None:
    pieces = [(b"Ham", -1.0), (b"sters", -0.5), (b" ran", -2.0), (b".", -0.25)]
    w = words("Hamsters ran.", pieces)
    assert w.words == ("Hamsters", "ran") and w.lm == (-1.5, -2.25) and w.tokens == 4
    assert w.uni == (unigram_logprob("Hamsters"), unigram_logprob("ran"))
    f = features(w)
    assert f["mean"] == pytest.approx(-3.75 / 4)
    assert f["slor"] == pytest.approx((-3.75 - sum(w.uni)) / 2)
    assert f["min_word"] == pytest.approx(min(a - b for a, b in zip(w.lm, w.uni)))
    assert unigram_logprob("qzxqzxqzx") == pytest.approx(-18.420680743952367)  # the floor, 1e-8
    assert features(words("", []))["slor"] == float("-inf")


def test_the_filter_needs_the_model_setting() -> None:
    with pytest.raises(ValueError, match="needs the model"):
        AddSent(fluency="structural", acceptability=0.0)
    assert AddSent().params.acceptability is None  # off unless asked for (the development data: acceptability.py)
    # off, it is left out of the parameters that seed the random streams and name the examples (added_later)
    assert "acceptability" not in AddOneSent().params_dict and "acceptability" not in AddSent().params_dict
    assert AddOneSent(acceptability=0.5).params_dict["acceptability"] == 0.5


def test_the_model_scores_the_ungrammatical_sentence_below_the_grammatical_one() -> None:
    lm = _lm_or_skip()
    good, bad = (features(words(s, p))[FEATURE] for s, p in zip((GOOD, BAD), lm.pieces([GOOD, BAD])))
    assert good > 0.5 > bad, (good, bad)


def test_a_filtered_pool_keeps_the_grammatical_and_drops_the_ungrammatical(res: Resources) -> None:
    lm = _lm_or_skip()
    params = AddSent(fluency="lm", acceptability=0.5).params
    pool = addsent.pools_many([TESLA], res, params)[0]
    passing = [c for c in pool.raw if not c.problems]
    assert passing and all(c.acceptability is not None for c in passing)
    assert all((c.acceptability < 0.5) == c.rejected for c in passing)
    assert all(not c.rejected and c.acceptability >= 0.5 for c in pool.kept)
    assert all(c.acceptability is None and not c.rejected for c in pool.raw if c.problems)
    assert pool.kept, "the Tesla question keeps a candidate at this threshold"
    # the filter's SLOR and the ranking's mean come from one evaluation of each sentence
    first = pool.kept[0]
    assert first.fluency == pytest.approx(features(words(first.sentence, lm.pieces([first.sentence])[0]))["mean"],
                                          abs=1e-6)
    att = AddOneSent(fluency="lm", acceptability=0.5)
    [ex] = att.examples(TESLA, record_rng(0, TESLA.id, att.name, att.params_dict), res)
    meta = ex.meta["acceptability_filter"]
    assert meta["scorer"] == "smollm2-135m-q4_1" and meta["feature"] == FEATURE and meta["threshold"] == 0.5
    assert meta["score"] >= 0.5
    # nothing passes: the question yields nothing, never a rejected sentence
    none = addsent.pools_many([TESLA], res, AddSent(fluency="lm", acceptability=99.0).params)[0]
    assert not none.kept and none.reason == "no candidate passes the language-model filter"
    att = AddOneSent(fluency="lm", acceptability=99.0)
    assert att.examples(TESLA, record_rng(0, TESLA.id, att.name, att.params_dict), res) == []


def test_without_the_model_the_filter_does_not_run_and_the_meta_says_so(res: Resources, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.attacks.reading import fluency

    monkeypatch.setenv(fluency.ENV, str(tmp_path / "absent.gguf"))
    fluency.reset()
    try:
        with pytest.warns(UserWarning, match="structural grammar check only"):
            params = AddSent(fluency="auto", acceptability=0.5).params
            pool = addsent.pools_many([TESLA], res, params)[0]  # not the cache: computed without the model
        assert pool.kept and all(c.acceptability is None and not c.rejected for c in pool.raw)
        assert {c.scorer for c in pool.kept} == {"structural"}
        att = AddOneSent(fluency="auto", acceptability=0.5)
        addsent._CACHE.clear()
        [ex] = att.examples(TESLA, record_rng(0, TESLA.id, att.name, att.params_dict), res)
        assert ex.meta["acceptability_filter"] == {"scorer": "structural", "feature": FEATURE, "threshold": 0.5,
                                                   "score": None}
    finally:
        addsent._CACHE.clear()
        fluency.reset()
