"""AddSent / AddOneSent (Jia & Liang 2017, Sec. 3.1-3.2): question perturbation, fake answers, candidates, the
worst-case choice through the oracle, fixed seeds, and no distractor containing a gold answer on 1,000 real
SQuAD dev questions."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from helpers import shared_path

from callbluff.attacks.oracle import Oracle
from callbluff.attacks.reading import AddOneSent, AddSent, candidates
from callbluff.attacks.reading.addsent import prefetch_candidates
from callbluff.attacks.reading.alterations import alterations, antonyms, nearby_numbers, perturbed_words
from callbluff.attacks.reading.fake_answers import AnswerToken, fake_answers, overlaps_gold
from callbluff.attacks.reading.grammar import grammar_problems
from callbluff.attacks.reading.lexicon import load_lexicon
from callbluff.datasets import load
from callbluff.records import QAExample
from callbluff.resources.context import Resources, default_resources
from callbluff.seeding import record_rng
from callbluff.targets.base import Input, Output

TESLA = QAExample(
    "tesla", "What city did Tesla move to in 1880?",
    "In January 1880, two of Tesla's uncles put together enough money to help him leave Gospic for Prague, "
    "where he was to study.", ("Prague",), (96,), "Nikola_Tesla")


@pytest.fixture(scope="module")
def res() -> Resources:
    return default_resources()


def test_question_perturbation_follows_the_rules(res: Resources) -> None:
    lex = load_lexicon()
    doc = res.doc(TESLA.question)
    alts = {a.original: a for a in alterations(doc, lex, k=2)}
    assert alts["1880"].rule == "nearby-number" and alts["1880"].words == ("1881", "1879")
    assert alts["Tesla"].rule.startswith("nearby-proper-noun") or alts["Tesla"].rule == "entity-type"
    assert alts["Tesla"].words[0][0].isupper() and alts["Tesla"].words[0].lower() != "tesla"
    assert "What" not in alts and "city" not in alts or alts["city"].rule != "special"
    words = perturbed_words(doc, list(alts.values()), 0)
    assert words[0] == "What" and words[7] == "1881"
    special = {a.original: a for a in alterations(res.doc("What is the largest city in the US?"), lex)}
    assert special["largest"].words[0] == "smallest" and special["US"].words[0] == "UK"


def test_wordnet_antonyms_and_nearby_numbers() -> None:
    assert "cold" in antonyms("hot", "a")
    assert nearby_numbers("1,000", 2) == ["1,001", "999"]
    assert nearby_numbers("12.5", 2) == ["13.5", "11.5"]
    assert nearby_numbers("ten", 2) == []


@pytest.mark.parametrize(("answer", "toks", "question", "expected"), [
    ("1880", [("1880", "CD", "DATE")], "When did he move?", ("1855", "date")),
    ("May 1880", [("May", "NNP", "DATE"), ("1880", "CD", "DATE")], "When?", ("November 1855", "date")),
    ("1,250", [("1,250", "CD", "NUMBER")], "How many?", ("1175", "number")),
    ("30 million", [("30", "CD", "NUMBER"), ("million", "CD", "NUMBER")], "How many?", ("80 thousand", "number")),
    ("Nikola Tesla", [("Nikola", "NNP", "PERSON"), ("Tesla", "NNP", "PERSON")], "Who?", ("Jeff Dean", "ner-person")),
    ("Prague", [("Prague", "NNP", "LOCATION")], "What city?", ("Chicago", "ner-location")),
    ("NASA", [("NASA", "NNP", "")], "What agency?", ("LSTM", "abbrev")),
    ("the river", [("the", "DT", ""), ("river", "NN", "")], "What flows?", ("the hamster", "pos-end-nn")),
    ("quickly", [("quickly", "RB", "")], "How did it move?", ("silently", "pos-end-rb")),
    ("of course", [("of", "IN", ""), ("course", "NN", "")], "What?", ("hamster", "pos-end-nn")),
    ("and", [("and", "CC", "")], "What?", ("aliens", "catch-all")),
])
def test_fake_answer_rules(answer: str, toks, question: str, expected) -> None:
    tokens = [AnswerToken(t, tag, cls, " " if i else "") for i, (t, tag, cls) in enumerate(toks)]
    assert fake_answers(answer, tokens, question, [answer], None, k=1)[0] == expected


def test_fake_answers_never_overlap_gold() -> None:
    toks = [AnswerToken("Chicago", "NNP", "LOCATION")]
    fakes = fake_answers("Chicago", toks, "What city?", ["Chicago"], load_lexicon(), k=3)
    assert fakes and all(not overlaps_gold(f, ["Chicago"]) for f, _ in fakes)
    # the location rule's stand-in is the gold: the next matching rule (last token NNP), then same-class entities
    assert fakes[0] == ("Central Park", "pos-end-nnp")
    assert [r for _, r in fakes[1:]] == ["lexicon-location", "lexicon-location"]


def test_overlaps_gold_on_normalised_tokens() -> None:
    assert overlaps_gold("Tesla moved to the city of Prague.", ["prague"])
    assert overlaps_gold("It was in 1880.", ["1880"])
    assert not overlaps_gold("It was in 18800.", ["1880"])
    assert not overlaps_gold("Anything.", ["the"])  # normalises to nothing: ignored


def test_candidates_and_addonesent_is_one_of_them(res: Resources) -> None:
    cands = candidates(TESLA, res, AddSent().params)
    assert 2 <= len(cands) <= 4
    assert cands[0].sentence.endswith(" to the city of Chicago in 1881.")
    assert len({c.sentence for c in cands}) == len(cands)
    att = AddOneSent()
    for seed in range(6):
        [ex] = att.examples(TESLA, record_rng(seed, TESLA.id, att.name, att.params_dict), res)
        assert ex.meta["distractor"] in {c.sentence for c in cands}
        assert ex.text == TESLA.context + " " + ex.meta["distractor"]
        assert ex.field == "context"


class PickyReader:
    """Answers the fake answer of the sentence ending in ``trap`` (distracted), the gold answer otherwise."""

    fingerprint = "picky"

    def __init__(self, trap: str) -> None:
        self.trap = trap
        self.batches: list[int] = []

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        self.batches.append(len(inputs))
        return [Output(answer="Rome" if inp.context.endswith(self.trap) else "Prague") for inp in inputs]


def test_addsent_keeps_the_candidate_that_fools_the_model(res: Resources) -> None:
    att = AddSent()
    cands = candidates(TESLA, res, att.params)
    trap = cands[-1].sentence
    target = PickyReader(trap)
    oracle = Oracle(target, lambda t: Input(task="reading", text=TESLA.question, context=t), att.params.query_budget)
    [ex] = att.examples(TESLA, oracle, record_rng(0, TESLA.id, att.name, att.params_dict), res)
    assert ex.meta["distractor"] == trap
    assert target.batches == [len(cands)]  # every candidate in one batched call
    assert ex.meta["candidate_f1"] == [1.0] * (len(cands) - 1) + [0.0]
    # nobody fooled: the first (the authors' first choice) is kept
    oracle = Oracle(PickyReader("never"), lambda t: Input(task="reading", text=TESLA.question, context=t), 10)
    [ex] = att.examples(TESLA, oracle, record_rng(0, TESLA.id, att.name, att.params_dict), res)
    assert ex.meta["candidate"] == 0


def test_not_applicable_questions_give_nothing(res: Resources) -> None:
    att = AddOneSent()
    rng = np.random.default_rng(0)
    assert att.examples(QAExample("n", "Name a city in Bohemia.", TESLA.context, ("Prague",), (96,)), rng, res) == []
    assert att.examples(QAExample("g", "Who moved?", TESLA.context, (), ()), rng, res) == []


def test_grammar_check() -> None:
    r = default_resources()
    assert grammar_problems("Tesla moved to the city of Chicago in 1881.", r) == []
    assert "ends with a preposition" in grammar_problems("Tesla moved the city of Chicago to.", r)
    assert grammar_problems("What city did Tesla move to?", r)


@pytest.mark.slow
def test_no_distractor_contains_a_gold_answer_on_1000_squad_dev_questions(res: Resources) -> None:
    """Every candidate of 1,000 real questions (the seeded sample of the findings and the benchmark, so the
    out-of-vocabulary vectors are shared through the disk cache), and AddOneSent's examples of 100 of them."""
    ds = load(f"squad:{shared_path('data', 'squad-v1.1', 'dev-v1.1.json.gz')}")
    records = list(ds)
    pick = np.random.default_rng(0).choice(len(records), size=1000, replace=False)
    params = AddOneSent().params
    prefetch_candidates([records[int(i)] for i in pick], res, params)  # batched, as the engine does
    covered = 0
    for i in pick:
        rec = records[int(i)]
        cands = candidates(rec, res, params)
        for c in cands:
            assert not overlaps_gold(c.sentence, rec.answers), (rec.id, c.sentence, rec.answers)
        covered += bool(cands)
    assert covered >= 900  # coverage: most SQuAD questions have a wh-phrase
    att = AddOneSent()
    for i in pick[:100]:
        rec = records[int(i)]
        for ex in att.examples(rec, record_rng(0, rec.id, att.name, att.params_dict), res):
            assert not overlaps_gold(ex.meta["distractor"], rec.answers)
            assert ex.text.startswith(rec.context)


def test_fixed_seeds_give_identical_distractors(res: Resources) -> None:
    ds = load(f"squad:{shared_path('data', 'squad-v1.1', 'dev-v1.1.json.gz')}")
    recs = [r for _, r in zip(range(40), ds)]
    att = AddOneSent()

    def run(seed: int) -> list[str]:
        return [ex.text for r in recs for ex in att.examples(r, record_rng(seed, r.id, att.name, att.params_dict), res)]

    assert run(3) == run(3)
    assert run(3) != run(4)
