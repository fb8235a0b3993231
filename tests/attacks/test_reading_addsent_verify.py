"""Issue 37, second round: AddSent sentences checked against the question's own parse and phrase-level errors
(Jia & Liang 2017, Sec. 3.1 steps 3-4: the crowd fixed and filtered what our rules now refuse or reject). Each
rule is tested on a real spaCy parse, with a sentence it must refuse and one it must keep; the questions are
written for the tests or taken from SQuAD v1.1 *train* (never the findings' dev sample)."""

from __future__ import annotations

import pytest

from callbluff.attacks.reading.alterations import _fits_slot
from callbluff.attacks.reading.declarative import to_declarative
from callbluff.attacks.reading.fake_answers import AnswerToken, ans_date, fake_answers
from callbluff.attacks.reading.grammar import grammar_problems
from callbluff.resources.context import Resources, default_resources


@pytest.fixture(scope="module")
def res() -> Resources:
    return default_resources()


def test_bare_wording_never_drops_a_counted_head(res: Resources) -> None:
    q = res.doc("In 2000, what percentage of Richmond residents were multiracial?")
    assert to_declarative(q, "6.5", rule="bare") is None
    assert to_declarative(q, "6.5") == "In 2000, 6.5% of Richmond residents were multiracial."


@pytest.mark.parametrize(("question", "answer", "kind", "expected"), [
    # the verb's form must fit its auxiliary: "is melt" is the parser's misreading of a noun
    ("What is impact melt that some samples of moon rocks show?", "aliens", "noun", None),
    ("Where was the Treaty signed?", "Paris", "noun", "The Treaty was signed in Paris."),
    ("Who has the company hired?", "Jeff Dean", "noun", "The company has hired Jeff Dean."),
    ("What will the company build?", "a hamster", "noun", "The company will build a hamster."),
    # the copula's subject must be a noun phrase: an adjective + infinitive, a stranded preposition, a raising verb
    ("What were the fighters of the revolution unable to hold out against?", "a hamster", "noun", None),
    ("What responsibilities were pharmacy technicians formerly limited to?", "hamsters", "noun", None),
    ("What person is Hyderabad said to have been renamed for?", "a hamster", "noun", None),
    ("What are the main ingredients used to make pastries in the monasteries?", "hamsters", "noun",
     "The main ingredients used to make pastries in the monasteries are hamsters."),
    # an opened quote or bracket the answer would land in
    ('What is another term for Hegel\'s "subject"?', "a hamster", "noun", None),
    # a quote that opens before the verb stays with it
    ('What year did the Everton Football Club "go blue"?', "1876", "noun",
     'The Everton Football Club "went blue" in the year of 1876.'),
    # "which" determining a noun the noun run missed
    ("Which third-highest-ranking al-Qaeda officer was captured?", "Jeff Dean", "noun", None),
    # how many: no ordinal, no adjective; a counted head said once
    ("If Mexico City was declared a state, how many states would be in the federation?", "first", "noun", None),
    ("In 1980, how many years had it been since Avicenna's birth?", "deep", "adjective", None),
    ("How much percentage of Australia's land is desert?", "10%", "noun", "10% of Australia's land is desert."),
    # ordinal time answers: "the 5th century", "the 9th century"
    ('In what century did "style" as an artistic concept arise?', "5th", "noun",
     '"style" as an artistic concept arose in the 5th century.'),
    # the object of a verb's clause goes in the clause (the clause has its own subject) ...
    ("What did the report say the company should build?", "a hamster", "noun",
     "The report said the company should build a hamster."),
    # ... and a clause without a subject takes the answer as its subject
    ("Who else did Judge Pontius believe should be blamed for France's actions?", "Stark Industries", "noun",
     "Judge Pontius believed Stark Industries should be blamed for France's actions."),
    # a passive participle after a prepositional phrase of the subject; an infinitive missing its object
    ("In what year was the viaduct along 155th Street constructed?", "1868", "noun",
     "The viaduct along 155th Street was constructed in the year of 1868."),
    ("What were wrestlers expected to do for decades?", "learning", "noun", None),
    # a possessive wh-phrase, a "how far/long" with a noun, a subject ending in a comma: nothing
    ("In what city's Marriott did the Broncos stay?", "Chicago", "noun", None),
    ("How far did he claim the mechanical energy could be transmitted?", "a hamster", "noun", None),
    ("How far did he claim the mechanical energy could be transmitted?", "20 miles", "noun",
     "He claimed the mechanical energy could be transmitted 20 miles."),
    ("What was Isiah Bowman nick name, as known by the public.", "Central Park", "noun", None),
    # a whole clause before the comma: a semicolon, no comma splice; a fronted adverbial keeps its comma
    ("Ronald Reagan had a nickname, what was it?", "Jupiter", "noun", "Ronald Reagan had a nickname; it was Jupiter."),
    ("In 2007, what was the high end of the salary range?", "91004", "noun",
     "In 2007, the high end of the salary range was 91004."),
    # a noun run joined again keeps its hyphen
    ("How many Ju 87 Stuka dive-bombers were used?", "10", "noun", "10 Ju 87 Stuka dive-bombers were used."),
])
def test_conversion_checked_against_the_question(res: Resources, question: str, answer: str, kind: str,
                                                 expected: str | None) -> None:
    assert to_declarative(res.doc(question), answer, answer_kind=kind) == expected


@pytest.mark.parametrize(("sentence", "answer", "subject", "problem"), [
    ("Many of hamsters live in the Aachen.", None, False, "quantifier + of + a bare noun"),
    ("Hamsters live in least types of soil.", None, False, "superlative without a determiner"),
    ("10% of percentage of Australia's land is desert.", None, False, "counted noun repeated"),
    ("The terms appear together in journals in the 21 century.", None, False, "cardinal before century"),
    ("Christopher Clark torn his objection in his career 10 times.", None, False, "participle without an auxiliary"),
    ("Pharmacy engineers formerly limited to were the responsibilities of hamsters.", None, False,
     "preposition without an object"),
    ("It takes learning a person to be unable to do.", "learning", False, "answer followed by a noun phrase"),
    ("Jeff Dean third-lowest-ranking aaa-Caliphate officer was captured.", "Jeff Dean", True,
     "answer followed by a noun phrase"),
    ("' prostomiums' come from Chicago.", None, False, "quote set apart from its words"),
    ("A hamster allow the cable-unready TVs to display HD content.", None, False, "subject and verb disagree"),
    ("The Crusaders stayed the hotel of Chicago in during Best Bowl 51.", None, False, "preposition without an object"),
    ("Refusing to preach the Finite Lords not does learning.", None, False, "negation before a finite verb"),
    ("David Patrick rapper name, was Central Park as known by the public.", None, False,
     "comma between subject and verb"),
    ("Jennifer Ramos made final 10 it on English Elliott.", "final 10", False, "answer followed by a noun phrase"),
])
def test_phrase_errors_rejected(res: Resources, sentence: str, answer: str | None, subject: bool,
                                problem: str) -> None:
    problems = grammar_problems(sentence, res, answer=answer, answer_is_subject=subject)
    assert any(p.startswith(problem) for p in problems), problems


@pytest.mark.parametrize(("sentence", "answer", "subject"), [
    ("Many of the hamsters live in the Aachen.", None, False),
    ("Most of Europe was cold.", None, False),
    ("Hamsters live in the least types of soil.", None, False),
    ("At least 10 hamsters live in Aachen.", None, False),
    ("The terms appear together in journals in the 21st century.", None, False),
    ("Christopher Clark tore his objection in his career 10 times.", None, False),
    ("Jeff Dean was captured in 1990.", "Jeff Dean", True),
    ("Hamsters allow the TVs to display HD content.", None, False),
    ("The water flows into the sea.", None, False),
    ("Jeff Dean, the king, was born in 1990.", None, False),
    ("The Philippine Spanish constitution was brought about by Central Park.", None, False),
    ("The people did not go.", None, False),
    ('The terms "Near East" and "Far East" appear together in Chicago.', "Chicago", False),
])
def test_well_formed_sentences_pass(res: Resources, sentence: str, answer: str | None, subject: bool) -> None:
    assert grammar_problems(sentence, res, answer=answer, answer_is_subject=subject) == []


def test_quantifier_most_is_not_flipped(res: Resources) -> None:
    """'most types of' -> 'least types of' is not English; 'the most common' -> 'the least common' is."""
    q = res.doc("What did most of Gondwana become?")
    assert not _fits_slot(q[2], "least")
    q = res.doc("In most types of soil, what grows?")
    assert not _fits_slot(q[1], "least")
    q = res.doc("What is the most common vault in gymnastics?")
    assert _fits_slot(q[3], "least")


def test_adjective_before_an_infinitive_takes_one(res: Resources) -> None:
    """An adjective before 'to' + a verb is replaced only by one that takes an infinitive."""
    q = res.doc("Why was it difficult to reconcile the two theories?")
    j = [t.text for t in q].index("difficult")
    assert not _fits_slot(q[j], "destabilizing")
    assert _fits_slot(q[j], "easy")


def test_possessive_apostrophe_follows_the_new_word(res: Resources) -> None:
    """'Kuznets' cycles' -> 'Klavern's cycles', not 'Klavern' cycles'."""
    from callbluff.attacks.reading.alterations import Alteration, perturbed_words

    q = res.doc("What are Kuznets' cycles?")
    j = [t.text for t in q].index("Kuznets")
    assert q[j + 1].tag_ == "POS"
    words = perturbed_words(q, [Alteration(j, "Kuznets", ("Klavern",), "nearby-proper-noun")], 0)
    assert words[j:j + 2] == ["Klavern", "'s"]
    words = perturbed_words(q, [Alteration(j, "Kuznets", ("Simons",), "nearby-proper-noun")], 0)
    assert words[j:j + 2] == ["Simons", "'"]


def test_date_keeps_its_affixes() -> None:
    """'the mid-19th century' -> 'the mid-8th century', not 'the 21 century'; a decade keeps its 's'."""
    toks = [AnswerToken("the", "DT", "DATE", ""), AnswerToken("mid-19th", "JJ", "DATE", " "),
            AnswerToken("century", "NN", "DATE", " ")]
    assert ans_date("the mid-19th century", toks, "When?") == "the mid-8th century"
    toks = [AnswerToken("the", "DT", "DATE", ""), AnswerToken("1990s", "CD", "DATE", " ")]
    assert ans_date("the 1990s", toks, "When?") == "the 1960s"
    toks = [AnswerToken("21st", "JJ", "DATE", ""), AnswerToken("century", "NN", "DATE", " ")]
    assert ans_date("21st century", toks, "When?") == "10th century"


def test_clause_answer_is_not_renumbered() -> None:
    """A gold answer that is a whole clause gets a stand-in, not its own words with a number changed."""
    words = "The archaic name Somersetshire was mentioned in the entry for 878".split()
    tags = ["DT", "JJ", "NN", "NNP", "VBD", "VBN", "IN", "DT", "NN", "IN", "CD"]
    toks = [AnswerToken(w, t, "NUMBER" if t == "CD" else "O", " " if i else "") for i, (w, t) in
            enumerate(zip(words, tags))]
    fakes = fake_answers(" ".join(words), toks, "What archaic name was mentioned in 878?", [" ".join(words)], None)
    assert fakes and all("Somersetshire" not in f for f, _ in fakes)
