"""The indexed attribute-ruler matcher (resources/attribute_rules.py) finds exactly spaCy's matches, so the
full pipeline's POS, morphology, lemmas, tags and dependencies are those of the stock pipeline."""

from __future__ import annotations

import itertools

import pytest
from helpers import shared_path

from callbluff.datasets import load
from callbluff.resources.attribute_rules import IndexedRules, Unsupported, accelerate
from callbluff.resources.spacy_pipeline import load_english

# the shipped patterns' special cases: multi-token lemmas (gonna, gotta, let's, c'mon, y'all, ain't), DEP tests
# (but as advmod, expletive there + be, do/have as main verbs, I/you/it as subject or object), spaces
EDGE_CASES = [
    "I'm gonna go, y'all ain't gonna stop me. Let's go, we gotta leave, c'mon  \n\n but there is a cat.",
    "There's \t it: you and I gave it to me, and you did it; they have had it. But I aint done. Y all gotta.",
    "  ", "", "\n", "It was what it was, wasn't it?", "Who gets what he got?",
]


@pytest.fixture(scope="module")
def nlp():
    return load_english("full")


def _stock(nlp):
    ruler = nlp.get_pipe("attribute_ruler")
    return ruler, type(ruler).match.__get__(ruler)


def _texts() -> list[str]:
    ds = load(f"asap-sas:{shared_path('data', 'asap-sas', 'train.tsv.gz')}")
    return [r.text for r in itertools.islice(ds, 0, 3000, 10)] + EDGE_CASES


def test_the_full_pipeline_uses_the_index(nlp) -> None:
    assert isinstance(nlp.get_pipe("attribute_ruler").match, IndexedRules)


def test_same_matches_as_spacy_on_real_answers(nlp) -> None:
    ruler, stock = _stock(nlp)
    fast = IndexedRules(ruler)
    n = 0
    for doc in nlp.pipe(_texts(), disable=["attribute_ruler", "lemmatizer", "ner"]):
        want = sorted({tuple(m) for m in stock(doc)})
        assert fast(doc) == want, doc.text[:80]
        n += len(want)
    assert n > 5000


def test_same_annotations_as_spacy(nlp) -> None:
    """The pipeline with the index gives the stock pipeline's annotations, multi-token rules included."""
    ruler, stock = _stock(nlp)
    docs = list(nlp.pipe(EDGE_CASES + ["You and I said it to you and me."], disable=["ner"]))
    plain = list(nlp.pipe(EDGE_CASES + ["You and I said it to you and me."],
                          disable=["attribute_ruler", "lemmatizer", "ner"]))
    for doc in plain:  # the stock matcher and annotations, then the same lemmatizer
        ruler.set_annotations(doc, stock(doc))
        nlp.get_pipe("lemmatizer")(doc)
    for a, b in zip(docs, plain, strict=True):
        assert [(t.pos_, t.tag_, str(t.morph), t.lemma_, t.dep_) for t in a] == \
               [(t.pos_, t.tag_, str(t.morph), t.lemma_, t.dep_) for t in b]
    assert [t.lemma_ for t in docs[0]][2:4] == ["go", "to"]  # "gonna": a two-token lemma rule applied


def test_unsupported_patterns_keep_spacys_matcher() -> None:
    import spacy

    nlp = spacy.blank("en")
    ruler = nlp.add_pipe("attribute_ruler")
    ruler.add([[{"LOWER": "a", "OP": "+"}]], {"LEMMA": "a"})
    with pytest.raises(Unsupported):
        IndexedRules(ruler)
    assert accelerate(ruler) is False and not isinstance(ruler.match, IndexedRules)
    nlp2 = spacy.blank("en")
    ruler2 = nlp2.add_pipe("attribute_ruler")
    ruler2.add([[{"LOWER": {"REGEX": "^th"}}, {"IS_SPACE": False}]], {"LEMMA": "x"})
    assert accelerate(ruler2) is True
    doc = nlp2("The cat saw them then")
    assert ruler2.match(doc) == sorted(tuple(m) for m in type(ruler2).match(ruler2, doc))
    assert [t.lemma_ for t in doc] == ["x", "", "", "x", ""]
    nlp3 = spacy.blank("en")  # one attribute tested: spaCy gives its column as a 1-D array
    ruler3 = nlp3.add_pipe("attribute_ruler")
    ruler3.add([[{"LOWER": "the"}]], {"LEMMA": "the!"})
    assert accelerate(ruler3) is True
    assert [t.lemma_ for t in nlp3("the cat The")] == ["the!", "", "the!"]
