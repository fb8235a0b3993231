"""AddSent / AddOneSent (Jia & Liang 2017, Sec. 3.1-3.2): question perturbation, fake answers, candidates, the
worst-case choice through the oracle, fixed seeds, and no distractor containing a gold answer on 1,000 real
SQuAD dev questions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from helpers import shared_path

from callbluff.attacks.oracle import Oracle
from callbluff.attacks.reading import AddOneSent, AddSent, addsent, candidates
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
    ("of course", [("of", "IN", ""), ("course", "NN", "")], "What?", ("a hamster", "pos-end-nn")),  # issue 37: an article
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
    first = candidates(TESLA, res, AddSent(fluency="structural").params)
    assert first[0].sentence.endswith(" to the city of Chicago in 1881.")  # the authors' first choice first
    assert {c.scorer for c in first} == {"structural"}
    cands = candidates(TESLA, res, AddSent().params)
    assert 2 <= len(cands) <= 4
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
    params = AddOneSent(fluency="structural").params  # the ranking does not change which candidates exist
    prefetch_candidates([records[int(i)] for i in pick], res, params)  # batched, as the engine does
    covered = 0
    for i in pick:
        rec = records[int(i)]
        cands = candidates(rec, res, params)
        for c in cands:
            assert not overlaps_gold(c.sentence, rec.answers), (rec.id, c.sentence, rec.answers)
        covered += bool(cands)
    # most SQuAD questions have a wh-phrase, an alteration and a sentence passing the check: 761 of these 1,000 with
    # issue 37's stricter rules (626c5f1 refuses doubtful conversions; was 804), whose F1 every question, 31.7, still
    # meets the paper's 34.1 (docs/findings/reading.md); a floor that catches a rule refusing far more
    assert covered >= 750
    att = AddOneSent(fluency="structural")
    for i in pick[:100]:
        rec = records[int(i)]
        for ex in att.examples(rec, record_rng(0, rec.id, att.name, att.params_dict), res):
            assert not overlaps_gold(ex.meta["distractor"], rec.answers)
            assert ex.text.startswith(rec.context)


def test_fixed_seeds_give_identical_distractors(res: Resources) -> None:
    ds = load(f"squad:{shared_path('data', 'squad-v1.1', 'dev-v1.1.json.gz')}")
    recs = [r for _, r in zip(range(40), ds)]
    att = AddOneSent(fluency="structural")

    def run(seed: int) -> list[str]:
        return [ex.text for r in recs for ex in att.examples(r, record_rng(seed, r.id, att.name, att.params_dict), res)]

    assert run(3) == run(3)
    assert run(3) != run(4)


# -- issue 26: valid distractors only, several candidates, the word-order check, the language model -----------

HE = QAExample("he", "Who is he?", "He is Nikola Tesla, who moved to Prague in 1880.", ("Nikola Tesla",), (6,))
TALL = QAExample("tall", "How tall is it?", "It is 300 metres tall, the tallest in Paris.", ("300 metres",), (6,))


def test_a_question_with_no_applicable_alteration_yields_no_example(res: Resources) -> None:
    """No rule alters "Who is he?"; in "How tall is it?" the only altered word ("tall" -> "short") is one the
    answer replaces, so the sentence would restate the question: both get nothing from either attack, and
    AddSent asks the target nothing."""
    for rec in (HE, TALL):
        for fluency in ("structural", "auto"):
            params = AddSent(fluency=fluency).params
            pool = addsent.candidate_pool(rec, res, params)
            assert pool.kept == [] and pool.reason == "no alteration", (rec.question, pool)
            one = AddOneSent(fluency=fluency)
            assert one.examples(rec, record_rng(0, rec.id, one.name, one.params_dict), res) == []
            att = AddSent(fluency=fluency)
            target = PickyReader("never")
            oracle = Oracle(target, lambda t, q=rec.question: Input(task="reading", text=q, context=t), 4)
            assert att.examples(rec, oracle, record_rng(0, rec.id, att.name, att.params_dict), res) == []
            assert target.batches == []


def test_candidates_span_variants_answers_and_conversions(res: Resources) -> None:
    pool = addsent.candidate_pool(TESLA, res, AddSent(fluency="structural").params)
    assert {c.conversion for c in pool.raw} == {"authors", "bare"}
    assert {c.variant for c in pool.raw} == {0, 1}
    assert len({c.fake_answer for c in pool.raw}) == 2
    assert all(c.alterations for c in pool.raw)  # every candidate states an altered question
    assert any(c.sentence.endswith(" to Chicago in 1881.") for c in pool.raw)  # "bare": slide 18's wording


@pytest.mark.parametrize(("sentence", "answer", "problem"), [
    ("The resulting channel of the STUDIOS merger called was aliens.", "aliens", "bare participle before the verb"),
    ("The Bull Mechanized photographs hamsters capture.", "hamsters", "answer before its verb"),
    ("The Bull Mechanized photographs hamsters capture.", "hamsters", "answer inside the subject"),
    ("A gender pay gap tends Jeff Dean to favor.", "Jeff Dean", "answer before its verb"),
])
def test_word_order_check_catches_the_reviewed_sentences(res: Resources, sentence: str, answer: str,
                                                          problem: str) -> None:
    assert any(p.startswith(problem) for p in grammar_problems(sentence, res, answer=answer))


@pytest.mark.parametrize(("sentence", "answer"), [
    ("The resulting channel of the STUDIOS merger was called aliens.", "aliens"),
    ("The Bull Mechanized photographs capture hamsters.", "hamsters"),
    ("A gender pay gap tends to favor Jeff Dean.", "Jeff Dean"),
    ("Luther viewed Jeff Dean to be the Antichrist.", "Jeff Dean"),
    ("The man called Bob was a doctor.", "a doctor"),
    ("Tadakatsu moved to the city of Chicago in 1881.", "the city of Chicago"),
])
def test_word_order_check_passes_their_corrections(res: Resources, sentence: str, answer: str) -> None:
    assert grammar_problems(sentence, res, answer=answer) == []


def test_reviewed_questions_now_convert_in_order(res: Resources) -> None:
    from callbluff.attacks.reading.declarative import to_declarative

    assert to_declarative(res.doc("What was the resulting channel of the ARTS merger called?"), "aliens") == \
        "The resulting channel of the ARTS merger was called aliens."
    assert to_declarative(res.doc("What do the Animal Locomotion photographs capture?"), "hamsters") == \
        "The Animal Locomotion photographs capture hamsters."
    assert to_declarative(res.doc("Who does a gender pay gap tend to favor?"), "Jeff Dean") == \
        "A gender pay gap tends to favor Jeff Dean."


def _lm_or_skip() -> Any:
    from callbluff.attacks.reading import fluency
    from callbluff.resources.requirements import check_requirements

    problems = check_requirements(["smollm2-lm"])
    if problems:
        pytest.skip("; ".join(problems))
    return fluency.fluency_scorer(required=True)


def test_the_language_model_prefers_the_corrected_word_order() -> None:
    lm = _lm_or_skip()
    pairs = [("Tadakatsu moved to the city of Chicago in 1881.", "Tadakatsu moved the city of Chicago to in 1881."),
             ("A gender pay gap tends to favor Jeff Dean.", "A gender pay gap tends Jeff Dean to favor."),
             ("The Bull Mechanized photographs capture hamsters.", "The Bull Mechanized photographs hamsters capture."),
             ("The resulting channel of the STUDIOS merger was called aliens.",
              "The resulting channel of the STUDIOS merger called was aliens.")]
    for good, bad in pairs:
        assert lm.score(good) > lm.score(bad), (good, bad)
    assert lm.score(pairs[0][0]) == lm.score(pairs[0][0])  # remembered, and deterministic


def test_the_language_model_ranks_the_kept_candidates(res: Resources) -> None:
    lm = _lm_or_skip()
    params = AddSent(fluency="lm", candidates=2).params
    pool = addsent.candidate_pool(TESLA, res, params)
    passing = [c for c in pool.raw if not c.problems]
    assert len(passing) > 2
    best = sorted(passing, key=lambda c: -lm.score(c.sentence))[:2]
    assert [c.sentence for c in pool.kept] == [c.sentence for c in best]
    assert {c.scorer for c in pool.kept} == {"smollm2-135m-q4_1"}
    att = AddOneSent(fluency="lm", candidates=2)
    assert "smollm2-lm" in att.requires
    [ex] = att.examples(TESLA, record_rng(0, TESLA.id, att.name, att.params_dict), res)
    assert ex.meta["fluency_scorer"] == "smollm2-135m-q4_1" and ex.meta["fluency"] is not None


def test_without_the_model_the_attack_says_so_and_falls_back(res: Resources, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.attacks.reading import fluency
    from callbluff.resources.requirements import REQUIREMENTS

    monkeypatch.setenv(fluency.ENV, str(tmp_path / "absent.gguf"))
    fluency.reset()
    try:
        assert "absent.gguf" in (REQUIREMENTS["smollm2-lm"].check() or "")
        with pytest.warns(UserWarning, match="structural grammar check only"):
            assert fluency.fluency_scorer() is None
        with pytest.raises(RuntimeError, match="fluency='lm'"):
            fluency.fluency_scorer(required=True)
        params = AddSent(fluency="auto", candidates=2).params
        pool = addsent.pools_many([TESLA], res, params)[0]  # not the cache: computed without the model
        assert pool.kept and {c.scorer for c in pool.kept} == {"structural"}
        assert all(c.fluency is None for c in pool.raw)
    finally:
        fluency.reset()


def test_no_example_from_an_unaltered_question_on_real_questions(res: Resources) -> None:
    ds = load(f"squad:{shared_path('data', 'squad-v1.1', 'dev-v1.1.json.gz')}")
    recs = [r for _, r in zip(range(60), ds)]
    att = AddOneSent(fluency="structural")
    att.prefetch(recs, res)
    made = [ex for r in recs for ex in att.examples(r, record_rng(0, r.id, att.name, att.params_dict), res)]
    assert len(made) >= 40
    for ex in made:
        assert ex.meta["alterations"] and ex.meta["grammar_problems"] == []
        assert all(a["from"] != a["to"] for a in ex.meta["alterations"])
        assert ex.meta["perturbed_question"] != next(r.question for r in recs if r.id == ex.source_id)


def test_cancelling_polarity_flips_are_not_made(res: Resources) -> None:
    """Found by the hand check of the findings sample: "most successful" -> "least unsuccessful" restates the
    question; the degree flip alone is kept."""
    alts = {a.original: a for a in alterations(res.doc("What company developed the most successful steam engine "
                                                       "indicator?"), load_lexicon())}
    assert alts["most"].words[0] == "least" and "successful" not in alts
    alts = {a.original: a for a in alterations(res.doc("What is the largest indoor market?"), load_lexicon())}
    assert alts["largest"].words[0] == "smallest" and alts["indoor"].rule == "antonym"  # not a degree word
