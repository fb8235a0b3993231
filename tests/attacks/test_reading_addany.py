"""AddAny / AddCommon (Jia & Liang 2017, Sec. 3.3): the greedy word search finds the known optimum of a small
deterministic toy target, scores every candidate of an index in one batched call, respects its budget, stops
early at F1 = 0, never states the gold answer, and gives the same words for the same seed."""

from __future__ import annotations


import numpy as np
import pytest

from callbluff.attacks.oracle import Oracle
from callbluff.attacks.reading.addany import AddAny, AddCommon, common_words, objective, question_words
from callbluff.records import QAExample
from callbluff.resources.context import Resources
from callbluff.seeding import record_rng
from callbluff.targets.base import Candidate, Input, Output
from helpers.readers import RankedReader, ToyReader

RECORD = QAExample("toy-1", "What zyzzyva did Tesla move to?", "In January 1880, Tesla left Gospic for Prague.",
                   ("Prague",), (37,))


def _words(distractor: str) -> list[str]:
    """The added words (the distractor ends with a period, as the authors' implementation appends it)."""
    assert distractor.endswith(".")
    return distractor[:-1].split()


def _run(attack, target: ToyReader, seed: int = 0):
    oracle = Oracle(target, lambda text: Input(task="reading", text=RECORD.question, context=text),
                    attack.params.query_budget)
    rng = record_rng(seed, RECORD.id, attack.name, attack.params_dict)
    return attack.examples(RECORD, oracle, rng, Resources()), oracle


def test_addany_finds_the_toy_optimum() -> None:
    target = ToyReader()
    [ex], oracle = _run(AddAny(early_stop=False, restarts=0, query_budget=100_000), target)
    assert ex.meta["distractor"] == " ".join(["zyzzyva"] * 10) + "."  # ended by a period, as the authors' code
    assert ex.text == RECORD.context + " " + ex.meta["distractor"]
    assert ex.meta["f1"] == 0.0
    # one initial query, then one batched call per index: 3 epochs x 10 indices
    assert oracle.calls == 1 + 3 * 10 == len(target.calls)
    assert max(target.calls) <= 20 + len(question_words(RECORD.question))
    assert oracle.used == sum(target.calls)


def test_addany_stops_at_f1_zero() -> None:
    target = ToyReader()
    [ex], oracle = _run(AddAny(restarts=0, query_budget=100_000), target)
    assert _words(ex.meta["distractor"]).count("zyzzyva") == 3  # 10 - 2c < 2c first at c = 3
    assert ex.meta["f1"] == 0.0
    assert oracle.calls < 1 + 3 * 10
    assert ex.meta["history"][-1] == [oracle.used, 0.0]


def test_addcommon_cannot_use_question_words() -> None:
    target = ToyReader()
    [ex], _ = _run(AddCommon(restarts=1, query_budget=100_000), target)
    assert "zyzzyva" not in ex.meta["distractor"]
    assert ex.meta["f1"] == 1.0
    assert set(_words(ex.meta["distractor"])) <= set(common_words(1000))
    assert ex.meta["mega_epochs"] == 2  # not fooled: one restart from fresh words


def test_budget_is_never_exceeded() -> None:
    target = ToyReader()
    [ex], oracle = _run(AddAny(early_stop=False, query_budget=50), target)
    assert oracle.used == sum(target.calls) == 50
    assert ex.meta["history"][-1][0] == 50


def test_same_seed_same_words_other_seed_other_start() -> None:
    a = _run(AddCommon(restarts=0, epochs=1, query_budget=500), ToyReader(), seed=1)[0][0]
    b = _run(AddCommon(restarts=0, epochs=1, query_budget=500), ToyReader(), seed=1)[0][0]
    c = _run(AddCommon(restarts=0, epochs=1, query_budget=500), ToyReader(), seed=2)[0][0]
    assert a.text == b.text and a.meta == b.meta
    assert a.text != c.text


def test_gold_answer_never_added() -> None:
    # the gold answer is a common word and a question word: it must never be appended
    rec = QAExample("toy-2", "What time of the year did it happen?", "It happened in the year 1880.", ("year",), (19,))
    target = ToyReader()
    oracle = Oracle(target, lambda text: Input(task="reading", text=rec.question, context=text), 2000)
    att = AddAny(early_stop=False, restarts=0)
    [ex] = att.examples(rec, oracle, record_rng(0, rec.id, att.name, att.params_dict), Resources())
    assert "year" not in _words(ex.meta["distractor"])


@pytest.mark.parametrize("position", ["start", "random"])
def test_positions(position: str) -> None:
    [ex], _ = _run(AddAny(position=position, restarts=0, query_budget=300), ToyReader())
    d = ex.meta["distractor"]
    assert ex.text[ex.meta["distractor_start"]:ex.meta["distractor_start"] + len(d)] == d
    if position == "start":
        assert ex.text.startswith(d + " ")
    assert ex.text.replace(d, "").split() == RECORD.context.split()


def test_objective_expected_f1_uses_ranked_candidates() -> None:
    out = Output(answer="Prague", candidates=(Candidate("Prague", 0.0), Candidate("Rome", 0.0)))
    assert objective(out, ("Prague",), "expected_f1") == pytest.approx((0.5, 1.0))
    assert objective(out, ("Prague",), "f1") == (1.0, 1.0)
    assert objective(Output.failed("boom"), ("Prague",), "f1") == (np.inf, np.inf)


def test_common_words_are_wordfreq_top_words() -> None:
    words = common_words(1000)
    assert len(words) == 1000 and words[0] == "the" and all(w.isalpha() for w in words)


class DecoyReader(RankedReader):
    """A reader fooled by the question word "decoy" (answer "nowhere", F1 0) although its ranked spans keep the
    gold close behind (expected F1 about 2/3), while "zyzzyva" lowers the expected F1 further (about 1/2)
    without changing the answer (F1 1): the objective alone would keep choosing "zyzzyva"."""

    fingerprint = "decoy-reader"

    def ranked(self, context: str) -> tuple[Candidate, ...]:
        words = context.lower().split()
        if "decoy" in words:
            return (Candidate("nowhere", 1.0), Candidate("Prague", 0.99), Candidate("in Prague", 0.98))
        if "zyzzyva" in words:
            return (Candidate("Prague", 1.0), Candidate("nowhere", 0.999))
        return (Candidate("Prague", 10.0), Candidate("nowhere", 0.0))


def test_a_fooled_candidate_ends_the_search_even_if_the_objective_prefers_another() -> None:
    rec = QAExample("toy-3", "What decoy zyzzyva did Tesla move to?", RECORD.context, ("Prague",), (37,))
    target = DecoyReader()
    oracle = Oracle(target, lambda text: Input(task="reading", text=rec.question, context=text), 100_000)
    att = AddAny(restarts=0, query_budget=100_000)
    [ex] = att.examples(rec, oracle, record_rng(0, rec.id, att.name, att.params_dict), Resources())
    assert "decoy" in _words(ex.meta["distractor"])
    assert ex.meta["f1"] == 0.0
    assert oracle.calls == 2  # the first word's batch already fooled the reader: the search is over
    assert ex.meta["history"][-1] == [oracle.used, 0.0]


@pytest.mark.parametrize(("stuck", "calls"), [(True, 1 + 10 + 1 + 30), (False, 1 + 30 + 1 + 30)])
def test_a_stalled_epoch_starts_the_next_mega_epoch(stuck: bool, calls: int) -> None:
    # common words never move the toy reader: the first epoch changes nothing, so with restart_when_stuck the
    # first mega-epoch ends after it; the last mega-epoch always runs its 3 epochs
    target = ToyReader()
    [ex], oracle = _run(AddCommon(restarts=1, restart_when_stuck=stuck, query_budget=100_000), target)
    assert oracle.calls == len(target.calls) == calls
    assert ex.meta["mega_epochs"] == 2


def test_margin_objective_is_the_gold_spans_lead_over_the_best_wrong_span() -> None:
    golds = ("Prague",)
    ranked = Output(answer="Prague", candidates=(Candidate("Prague", 10.0), Candidate("in Prague", 8.0),
                                                 Candidate("Gospic", 4.0)))
    assert objective(ranked, golds, "margin") == (6.0, 1.0)
    # no wrong span listed: the lead over the lowest listed score (a bound on any unlisted wrong span)
    only_gold = Output(answer="Prague", candidates=(Candidate("Prague", 10.0), Candidate("in Prague", 7.0)))
    assert objective(only_gold, golds, "margin") == (3.0, 1.0)
    # fooled exactly when negative
    fooled = Output(answer="Gospic", candidates=(Candidate("Gospic", 11.0), Candidate("Prague", 10.0)))
    assert objective(fooled, golds, "margin") == (-1.0, 0.0)
    # scores missing: the prediction's F1, as the other objectives
    assert objective(Output(answer="Prague"), golds, "margin") == (1.0, 1.0)


def test_addany_with_the_margin_objective_fools_the_toy_reader() -> None:
    target = ToyReader()
    [ex], oracle = _run(AddAny(objective="margin", restarts=0, query_budget=100_000), target)
    assert _words(ex.meta["distractor"]).count("zyzzyva") == 3  # margin 10 - 4c < 0 first at c = 3
    assert ex.meta["f1"] == 0.0 and ex.meta["objective"] < 0
    assert oracle.calls < 1 + 3 * 10
