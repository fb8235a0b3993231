"""RetrieverReader: DrQA-style TF-IDF retrieval, answer aggregation across paragraphs, persistence."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from callbluff.models.qa import SlidingWindowQA
from callbluff.models.retriever import RetrieverReader, drqa_ngrams, squad_documents
from callbluff.targets.base import Candidate, Input, Target

DOCS = {
    "tesla": "Nikola Tesla was a Serbian-American inventor. In 1880 Tesla moved to Prague to study.\n\n"
             "Tesla later worked for Thomas Edison in New York City.",
    "danube": "The Danube is the second-longest river in Europe. It flows through Vienna and Budapest.",
    "huguenots": "The largest portion of the Huguenots to settle in the Cape arrived between 1688 and 1689.",
    "volcano": "Mount Vesuvius erupted in 79 AD and buried the Roman city of Pompeii under ash.",
}


class FixedReader:
    """A reader whose spans are fixed per paragraph word: enough to test aggregation exactly."""

    kind = None

    def __init__(self, table: dict[str, list[tuple[str, float]]]) -> None:
        self.table = table
        self.calls: list[tuple[str, str]] = []

    def answer(self, questions: Sequence[str], contexts: Sequence[str]) -> list[list[Candidate]]:
        out = []
        for q, c in zip(questions, contexts, strict=True):
            self.calls.append((q, c))
            key = next((k for k in self.table if k in c), None)
            out.append([Candidate(t, s) for t, s in self.table.get(key, [])] if key else [])
        return out


def test_drqa_ngrams_drop_stop_words() -> None:
    grams = drqa_ngrams("The city of New York is big")
    assert grams == ["city", "new", "york", "big", "new york"]  # "york is big": "is" is a stop word
    assert drqa_ngrams("Ünïcode  WORDS", ngram=1) == ["unicode", "words"]  # NFD, accents folded
    assert drqa_ngrams("U\u0308nicode words", ngram=1) == ["unicode", "words"]


def test_retrieves_the_right_document_and_answers() -> None:
    rr = RetrieverReader.from_texts(list(DOCS.values()), ids=list(DOCS), n_docs=2, reader=SlidingWindowQA())
    assert isinstance(rr, Target)
    hits = rr.retrieve(["Which river flows through Vienna?", "When did Vesuvius erupt?",
                        "Where did Tesla move in 1880?"], k=2)
    assert [h[0][0] for h in hits] == ["danube", "volcano", "tesla"]
    assert all(h[0][1] > (h[1][1] if len(h) > 1 else 0.0) for h in hits)
    # a paragraph split: the Tesla document has two paragraphs, both read
    assert len(rr.documents[0].paragraphs) == 2
    out = rr.predict([Input("questions", "Where did Tesla move to study in 1880?"), Input("questions", "  ")])
    assert out[0].ok and "Prague" in out[0].answer
    assert [c.score for c in out[0].candidates] == sorted((c.score for c in out[0].candidates), reverse=True)
    assert not out[1].ok and "empty question" in (out[1].error or "")
    # no shared term at all: no document, no answer (never an invented one)
    assert rr.retrieve(["zzzz qqqq"]) == [[]]
    assert rr.predict([Input("questions", "zzzz qqqq")])[0].answer == ""


def test_aggregation_sum_vs_max() -> None:
    # DrQA's idf is 0 for a term in half the documents or more: pad with unrelated ones
    texts = ["alpha paragraph about kings", "beta paragraph about kings", "gamma paragraph about kings",
             *DOCS.values()]
    table = {"alpha": [("Arthur", 2.0), ("Lancelot", 1.0)],
             "beta": [("the Arthur", 1.5), ("Merlin", 2.5)],
             "gamma": [("Arthur.", 1.0), ("Merlin", 0.5)]}
    by_max = RetrieverReader.from_texts(texts, n_docs=3, reader=FixedReader(table), aggregate="max")
    by_sum = RetrieverReader.from_texts(texts, n_docs=3, reader=FixedReader(table), aggregate="sum")
    q = ["who were the kings"]
    mx, sm = by_max.answer(q)[0], by_sum.answer(q)[0]
    # max: Merlin 2.5 beats Arthur 2.0; "Arthur", "the Arthur", "Arthur." are one normalised answer
    assert [c.text for c in mx] == ["Merlin", "Arthur", "Lancelot"]
    assert mx[0].score == pytest.approx(2.5) and mx[1].score == pytest.approx(2.0)
    # sum (log-sum-exp): Arthur found in three paragraphs overtakes Merlin
    import math

    assert [c.text for c in sm][:2] == ["Arthur", "Merlin"]
    assert sm[0].score == pytest.approx(math.log(math.exp(2.0) + math.exp(1.5) + math.exp(1.0)))
    assert sm[1].score == pytest.approx(math.log(math.exp(2.5) + math.exp(0.5)))
    with pytest.raises(ValueError, match="aggregate"):
        RetrieverReader.from_texts(texts, aggregate="mean")  # type: ignore[arg-type]


def _tiny_squad(path: Path) -> Path:
    data = {"version": "1.1", "data": [
        {"title": "Tesla", "paragraphs": [{"context": DOCS["tesla"].split("\n\n")[0], "qas": []},
                                          {"context": DOCS["tesla"].split("\n\n")[1], "qas": []}]},
        {"title": "Danube", "paragraphs": [{"context": DOCS["danube"], "qas": []}]}]}
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(data, f)
    return path


def test_from_squad_units_and_save_load(tmp_path: Path) -> None:
    src = _tiny_squad(tmp_path / "tiny.json.gz")
    paras = squad_documents(src, "paragraph")
    arts = squad_documents(src, "article")
    assert [d.id for d in paras] == ["Tesla#0", "Tesla#1", "Danube#0"]
    assert [d.id for d in arts] == ["Tesla", "Danube"] and len(arts[0].paragraphs) == 2
    rr = RetrieverReader.from_squad(src, unit="article", reader=SlidingWindowQA(), n_docs=1, n_features=2**20)
    q = [Input("questions", "Where did Tesla move to study in 1880?")]
    before = rr.predict(q)
    rr.save(tmp_path / "idx")
    meta = json.loads((tmp_path / "idx" / "model.json").read_text())
    assert meta["kind"] == "retriever-reader" and meta["reader"] == "sliding-window-qa"
    again = RetrieverReader.load(tmp_path / "idx")
    assert again.fingerprint == rr.fingerprint
    assert again.predict(q) == before
    assert again.retrieve(["Vienna river"]) == rr.retrieve(["Vienna river"])
    with pytest.raises(ValueError, match="SQuAD"):
        bad = tmp_path / "bad.json"
        bad.write_text('{"data": [', encoding="utf-8")
        squad_documents(bad)
    with pytest.raises(FileNotFoundError, match="model.json"):
        RetrieverReader.load(tmp_path)


@pytest.mark.slow
def test_recall_on_real_squad_articles(shared_data: Path) -> None:
    dev_path = shared_data / "squad-v1.1" / "dev-v1.1.json.gz"
    if not dev_path.exists():
        pytest.skip(f"needs {dev_path}")
    with gzip.open(dev_path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    docs = squad_documents(dev_path, "paragraph")
    rr = RetrieverReader(docs, reader=SlidingWindowQA(), n_docs=5)
    qs, gold = [], []
    for art in data["data"][:6]:
        for i, par in enumerate(art["paragraphs"]):
            for qa in par["qas"][:1]:
                qs.append(qa["question"])
                gold.append(f"{art['title']}#{i}")
    hits = rr.retrieve(qs, k=5)
    recall5 = sum(g in {d for d, _ in h} for g, h in zip(gold, hits, strict=True)) / len(qs)
    # DrQA-style TF-IDF over the 2,067 dev paragraphs: the question's paragraph is usually in the top 5
    assert recall5 > 0.6
