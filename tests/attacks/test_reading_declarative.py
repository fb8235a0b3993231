"""AddSent step 3 (Jia & Liang 2017, Sec. 3.1): question + answer -> declarative sentence, on hand-written pairs
covering what / which / who / whom / whose / when / where / why / how / how many / how much and their
auxiliaries (do-support, be, have, passive, copula, stranded prepositions, fronted prepositional phrases)."""

from __future__ import annotations

import pytest

from callbluff.attacks.reading.declarative import answer_phrase, to_declarative, wh_phrase
from callbluff.resources.context import Resources

PAIRS = [
    # (question, answer, expected sentence)
    ("What city did Tesla move to in 1880?", "Chicago", "Tesla moved to the city of Chicago in 1880."),
    ("The number of new Huguenot colonists declined after what year?", "1675",
     "The number of new Huguenot colonists declined after the year of 1675."),
    ("Who founded the town of Maresby?", "Jeff Dean", "Jeff Dean founded the town of Maresby."),
    ("When was the canal built?", "1956", "The canal was built in 1956."),
    ("What is the capital of France?", "Chicago", "The capital of France is Chicago."),
    ("How many people live in Warsaw?", "42", "42 people live in Warsaw."),
    ("Which team won Super Bowl 50?", "Stark Industries", "The team of Stark Industries won Super Bowl 50."),
    ("In what year did the war end?", "1956", "The war ended in the year of 1956."),
    ("Why did the mill close?", "a fire", "The mill closed because of a fire."),
    ("How did Tesla die?", "heart failure", "Tesla died by heart failure."),
    ("How much did the bridge cost?", "$5 million", "The bridge cost $5 million."),
    ("Whose army invaded Poland?", "Jeff Dean", "Jeff Dean's army invaded Poland."),
    ("To whom did Tesla sell his patents?", "Jeff Dean", "Tesla sold his patents to Jeff Dean."),
    ("Where is the Orrin lighthouse?", "Chicago", "The Orrin lighthouse is in Chicago."),
    ("How long is the river?", "500 km", "The river is 500 km."),
    ("What did Tesla invent?", "the radio", "Tesla invented the radio."),
    ("What was the name of the ship?", "Titanic", "The name of the ship was Titanic."),
    ("Which company has the largest market share?", "Acme", "The company of Acme has the largest market share."),
    ("What does the acronym NFL stand for?", "National Football League",
     "The acronym NFL stands for National Football League."),
    ("Who was born in 1900?", "Jeff Dean", "Jeff Dean was born in 1900."),
    ("When did the canal reach the town?", "1790", "The canal reached the town in 1790."),
    ("Where was Tesla born?", "Smiljan", "Tesla was born in Smiljan."),
    ("What was Tesla known for?", "his inventions", "Tesla was known for his inventions."),
    ("How old was Tesla when he died?", "86", "Tesla was 86 when he died."),
    ("Whom did Tesla marry?", "Jane", "Tesla married Jane."),
    ("How many books did Tesla write?", "12", "Tesla wrote 12 books."),
    ("In 1880, what city did Tesla move to?", "Chicago", "In 1880, Tesla moved to the city of Chicago."),
    ("Who is the president of France?", "Macron", "The president of France is Macron."),
    ("How is the team funded?", "donations", "The team is funded by donations."),
    ("When did the canal open?", "in May 1790", "The canal opened in May 1790."),
    ("Why did Tesla leave Gospic?", "to study in Graz", "Tesla left Gospic to study in Graz."),
]


@pytest.fixture(scope="module")
def res() -> Resources:
    return Resources()


@pytest.mark.parametrize(("question", "answer", "expected"), PAIRS, ids=[p[0] for p in PAIRS])
def test_declarative_conversion(res: Resources, question: str, answer: str, expected: str) -> None:
    assert to_declarative(res.doc(question), answer) == expected


def test_covers_every_wh_type() -> None:
    starts = {q.split()[0].lower() for q, _, _ in PAIRS} | {"how many", "how much", "whose", "whom"}
    assert {"what", "which", "who", "whom", "whose", "when", "where", "why", "how", "how many", "how much"} <= starts
    assert len(PAIRS) >= 25


def test_no_wh_word_gives_none(res: Resources) -> None:
    assert to_declarative(res.doc("Name a river in France."), "the Seine") is None
    assert to_declarative(res.doc("Is Paris in France?"), "yes") is None


def test_empty_answer_gives_none(res: Resources) -> None:
    assert to_declarative(res.doc("Who founded the town?"), "  ") is None


def test_perturbed_words_reuse_the_parse(res: Resources) -> None:
    doc = res.doc("What city did Tesla move to in 1880?")
    words = [t.text for t in doc]
    words[3], words[7] = "Tadakatsu", "1881"
    assert to_declarative(doc, "Chicago", words) == "Tadakatsu moved to the city of Chicago in 1881."
    with pytest.raises(ValueError, match="words for a question of"):
        to_declarative(doc, "Chicago", words[:-1])


def test_wh_phrase_extents(res: Resources) -> None:
    doc = res.doc("What type of markets is the dwelling type below?")
    ph = wh_phrase(doc)
    assert (ph.start, ph.end, ph.kind) == (0, 4, "det")
    ph = wh_phrase(res.doc("To whom did Tesla sell his patents?"))
    assert (ph.start, ph.end, ph.prep, ph.kind) == (0, 2, 0, "pronoun")
    ph = wh_phrase(res.doc("How many people live in Warsaw?"))
    assert ph.kind == "how-many" and (ph.start, ph.end) == (0, 3)


@pytest.mark.parametrize(("question", "answer", "expected"), [
    ("When did the war end?", "on 5 May", "on 5 May"),
    ("When did the war end?", "1945", "in 1945"),
    ("Where did he live?", "at home", "at home"),
    ("Why did it fail?", "because it rained", "because it rained"),
    ("Why did it fail?", "rain", "because of rain"),
    ("How did he travel?", "by boat", "by boat"),
])
def test_adverbial_answers_keep_their_own_preposition(res: Resources, question: str, answer: str,
                                                      expected: str) -> None:
    doc = res.doc(question)
    assert answer_phrase(wh_phrase(doc), answer, [t.text for t in doc]) == expected
