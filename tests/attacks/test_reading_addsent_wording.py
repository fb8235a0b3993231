"""AddSent sentences a reader accepts without a crowd (issue 37; Jia & Liang 2017, Sec. 3.1 steps 2-4): the
conversion's word order (adverbs after the auxiliary, passives, stranded prepositions, time adverbials), the
prepositions before dates, fake answers of the question's type (reason phrases for why-questions, articles on the
noun stand-ins), and the grammar check's rejections (agreement, ``because of`` + a verb or a bare noun, inverted
auxiliaries, dangling prepositions). Real spaCy parses; the last tests run the attack on real SQuAD *train*
questions (never the findings' dev sample) from ../shared."""

from __future__ import annotations

import gzip
import json
import re

import numpy as np
import pytest
from helpers import shared_path

from callbluff.attacks.reading import AddSent
from callbluff.attacks.reading.addsent import pools_many
from callbluff.attacks.reading.declarative import _date_prep, to_declarative
from callbluff.attacks.reading.fake_answers import WHY_CAUSE, WHY_PURPOSE, AnswerToken, answer_kind, fake_answers
from callbluff.attacks.reading.grammar import grammar_problems
from callbluff.records import QAExample
from callbluff.resources.context import Resources, default_resources


@pytest.fixture(scope="module")
def res() -> Resources:
    return default_resources()


@pytest.mark.parametrize(("question", "answer", "kind", "expected"), [
    # an adverb between the subject and its participle goes after the auxiliary ("first"/"last", "mostly")
    ("In what century was Romanesque architecture first used?", "12th", "noun",
     "Romanesque architecture was first used in the 12th century."),
    ("What was the British Indian Army mostly composed of?", "hamsters", "noun",
     "The British Indian Army was mostly composed of hamsters."),
    # with do-support it stays before the verb
    ("When did people first start arriving in Europe?", "1956", "noun", "People first started arriving in Europe in 1956."),
    # prepositions before dates: a day takes "on", "... ago" none, a year or month "in"
    ("When did Richard Price give a sermon?", "9 November 1714", "noun", "Richard Price gave a sermon on 9 November 1714."),
    ("When did people first start arriving in Europe?", "21,000 years ago", "noun",
     "People first started arriving in Europe 21,000 years ago."),
    ("When did the canal open?", "May 1790", "noun", "The canal opened in May 1790."),
    # passives the parser hangs on the subject, after when/why/where and fronted prepositions
    ("Why were former Sun staff members put in police custody in early 2012?", WHY_CAUSE, "reason",
     "Former Sun staff members were put in police custody in early 2012 because of the cold weather."),
    ("Why was Britain able to keep its ancient forests?", WHY_PURPOSE, "reason",
     "Britain was able to keep its ancient forests to raise money."),
    ("During what ceremony were shots fired at the Queen?", "the parade", "noun",
     "Shots were fired at the Queen during the ceremony of the parade."),
    # counted nouns, percentages, stranded prepositions, time adverbials
    ("How many hours of sunshine does New York receive every year?", "21", "noun",
     "New York receives 21 hours of sunshine every year."),
    ("What percentage of broods produced by paired females contained young?", "93%", "noun",
     "93% of broods produced by paired females contained young."),
    ("Where does the fungus Geotrichum candidum originate from?", "Chicago", "noun",
     "The fungus Geotrichum candidum originates from Chicago."),
    ("What was the playing surface of the discs made of?", "a hamster", "noun",
     "The playing surface of the discs was made of a hamster."),
    ("What year was Sergei Korolev arrested?", "1913", "noun", "Sergei Korolev was arrested in the year of 1913."),
    ("What does it take to know the success of a division?", "hamsters", "noun",
     "It takes hamsters to know the success of a division."),
    ("In addition to guns, what else comprises the battery?", "a hamster", "noun",
     "In addition to guns, a hamster comprises the battery."),
    # adjectives: "the A N" for what/which N, or after "be"
    ("What type of secondary schools does Guinea-Bissau have?", "deep", "adjective",
     "Guinea-Bissau has the deep secondary schools."),
    ("What was Diogo Cao's nationality?", "deep", "adjective", "Diogo Cao's nationality was deep."),
    # a / an agree with an altered word
    ("What is one thing an unsuccessful vault depends on?", "the hamster", "noun",
     "One thing an unsuccessful vault depends on is the hamster."),
])
def test_conversions_a_reader_accepts(res: Resources, question: str, answer: str, kind: str, expected: str) -> None:
    assert to_declarative(res.doc(question), answer, answer_kind=kind) == expected


@pytest.mark.parametrize(("question", "answer", "kind"), [
    ("What happened to financial assets that made them harder to value?", "deep", "adjective"),  # "Deep happened"
    ("What do they run to keep the testing to a minimum?", "learn", "verb"),  # "they run learn"
    ("Who founded the town?", WHY_CAUSE, "reason"),  # a reason phrase only replaces "why"
    ("How did Tuvalu rank?", "deepest", "adjective"),  # "by deepest"
    ("What doesn't sugar change the effect of pain on?", "hamsters", "noun"),  # "N't sugars change"
    ("Which cities of the region were occupied?", "hamsters", "noun"),  # "the cities of A of the region"
    ("Why besides limited periods would youtube not be allowed?", WHY_CAUSE, "reason"),  # no auxiliary after "why"
    ("How are predators beneficial to agriculture?", "by learning", "noun"),  # "X are beneficial by A"
])
def test_what_a_person_would_rewrite_is_not_made(res: Resources, question: str, answer: str, kind: str) -> None:
    assert to_declarative(res.doc(question), answer, answer_kind=kind) is None


def test_date_prepositions() -> None:
    assert [_date_prep(a) for a in ("13 October 1929", "October 13, 1929", "Monday", "45,000 years ago", "1929",
                                    "May 1790", "the 1960s", "10th century")] == \
        ["on", "on", "on", "", "in", "in", "in", "in"]


def _toks(*spec: tuple[str, str, str]) -> list[AnswerToken]:
    return [AnswerToken(t, tag, cls, " " if i else "") for i, (t, tag, cls) in enumerate(spec)]


def test_why_questions_get_reason_phrases() -> None:
    cause = fake_answers("because it was cheaper", _toks(("because", "IN", ""), ("it", "PRP", ""), ("was", "VBD", ""),
                                                         ("cheaper", "JJR", "")), "Why did they move?", ["x"], None, k=2)
    assert cause == [(WHY_CAUSE, "why"), (WHY_PURPOSE, "why-other")]
    purpose = fake_answers("to learn Latin", _toks(("to", "TO", ""), ("learn", "VB", ""), ("Latin", "NNP", "MISC")),
                           "Why did he go to Rome?", ["x"], None, k=2)
    assert purpose[0] == (WHY_PURPOSE, "why")
    assert {answer_kind(r) for _, r in cause + purpose} == {"reason"}
    # not a why-question: the authors' rules as before
    assert fake_answers("use test design", _toks(("use", "VB", ""), ("test", "NN", ""), ("design", "NN", "")),
                        "What did they do?", ["use test design"], None, k=2) == \
        [("learn", "pos-begin-vb"), ("learning", "pos-begin-vb-gerund")]


def test_noun_stand_ins_take_articles_and_numbers_keep_their_sign() -> None:
    assert fake_answers("treason", _toks(("treason", "NN", "")), "What?", ["treason"], None, k=2) == \
        [("a hamster", "pos-end-nn"), ("hamsters", "pos-end-nn-plural")]
    assert fake_answers("The earthed section", _toks(("The", "DT", ""), ("earthed", "JJ", ""), ("section", "NN", "")),
                        "What?", ["x"], None, k=1)[0] == ("the hamster", "pos-end-nn")
    assert fake_answers("the Saale", _toks(("the", "DT", ""), ("Saale", "NNP", "")), "What river?", ["x"], None,
                        k=1)[0] == ("Central Park", "pos-end-nnp")
    fakes = fake_answers("93%", [AnswerToken("93%", "CD", "")], "What share?", ["93%"], None, k=2)
    assert fakes[0] == ("43%", "number") and all("%" in f for f, _ in fakes)


@pytest.mark.parametrize(("sentence", "problem"), [
    ("Teke was seeking money in England because of learn.", "because of + "),
    ("The mill closed because of hamster.", "because of + "),
    ("Hamsters has come from differences in systems.", "subject and verb disagree"),
    ("Black males felt hamsters was happening to them.", "subject and verb disagree"),
    ("Jeff Dean were not identified by name.", "subject and verb disagree"),
    ("The amount of train lines that are is electrified 1355 km.", "two finite verbs in a row"),
    ("Tup ranks in country size by deepest.", "preposition before a bare"),
    ("The last known use of 'samurai is in 10.", "unbalanced quote or bracket"),
    ("The minority of the hemp used by the Army imported from was China.", "preposition without an object"),
    ("Many of the fittings for the wing came from in Stark Industries.", "preposition without an object"),
    ("Additional time has two periods 26 each are how long in minutes.", "a wh-word is left"),
    ("25% of consumed electricity does Finland produce by itself.", "inverted do-support"),
])
def test_grammar_check_rejects_what_it_cannot_fix(res: Resources, sentence: str, problem: str) -> None:
    assert any(p.startswith(problem) for p in grammar_problems(sentence, res)), grammar_problems(sentence, res)


@pytest.mark.parametrize("sentence", [
    "The mill closed because of the cold weather.",
    "The mill closed to raise money.",
    "The three modes of transport on Kosovo are a hamster.",
    "The data for the conference is located in Chicago.",
    "More than 80% of citizens of Materia are over the age of 66.",
    "Jeff Dean and Lee were born in 1900.",
    "Jeff Dean last used the word 'genetics' in 1906.",
    "Richard Price gave a sermon on 9 November 1714.",
    "Tesla moved to the city of Chicago in 1881.",
])
def test_grammar_check_passes_good_sentences(res: Resources, sentence: str) -> None:
    assert grammar_problems(sentence, res) == []


def _train_questions(n: int, seed: int, wh: str | None = None) -> list[QAExample]:
    """A seeded draw of SQuAD v1.1 *train* questions (the findings measure dev questions only)."""
    with gzip.open(shared_path("data", "squad-v1.1", "train-v1.1.json.gz"), "rt", encoding="utf-8") as f:
        data = json.load(f)
    flat = [(para, qa) for art in data["data"] for para in art["paragraphs"] for qa in para["qas"]
            if wh is None or wh in qa["question"].lower().replace("?", " ").split()]
    out = []
    for i in np.random.default_rng(seed).permutation(len(flat))[:n]:
        para, qa = flat[int(i)]
        out.append(QAExample(qa["id"], qa["question"], para["context"], tuple(a["text"] for a in qa["answers"]),
                             tuple(int(a["answer_start"]) for a in qa["answers"])))
    return out


def test_why_questions_on_real_data_state_reasons(res: Resources) -> None:
    recs = _train_questions(25, seed=37, wh="why")
    pools = pools_many(recs, res, AddSent(fluency="structural").params)
    kept = [c for p in pools for c in p.kept]
    assert sum(bool(p.kept) for p in pools) >= 15
    assert all(c.fake_answer in (WHY_CAUSE, WHY_PURPOSE) for c in kept)
    assert all(c.sentence.endswith((WHY_CAUSE + ".", WHY_PURPOSE + ".")) for c in kept)


def test_kept_candidates_on_real_data_pass_the_new_checks(res: Resources) -> None:
    """On 60 real train questions: every kept sentence passes the check, none has "because of" + a verb, a
    capital determiner inside, "in" before a day's date, or a bare "hamster"."""
    recs = _train_questions(60, seed=38)
    pools = pools_many(recs, res, AddSent(fluency="structural").params)
    kept = [c for p in pools for c in p.kept]
    assert sum(bool(p.kept) for p in pools) >= 40
    for c in kept:
        assert grammar_problems(c.sentence, res) == [] or c.problems == (), c.sentence
        low = c.sentence.lower()
        assert " because of learn" not in low and " the hamster." not in c.sentence.replace("is the hamster.", "")
        assert " The hamster" not in c.sentence[1:]
        assert not re.search(r"\b(is|of|by|for|to|was) hamster\b", low), c.sentence
