"""BabelGen (Kumar et al. 2020 Sec. 3.4): exact essays for a fixed seed, length, keywords, sentence shape,
fit on hand-made and real ASAP-AES essays, and the conformance kit."""

from __future__ import annotations

import csv
import gzip
import re

import numpy as np
import pytest

from callbluff.attacks.base import get_attack
from callbluff.attacks.essay import BabelGen
from callbluff.attacks.essay.generate import (
    CLOSING_ROOM,
    babel_vocabulary,
    compose,
    noun_lemma,
    top_nouns,
)
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.testing import check_attack

TINY = {"N": (("axiom", "axioms"), ("lantern", "lanterns")), "V": (("gild", "gilds", "gilded", "gilding"),),
        "A": (("opaline",),), "R": (("tacitly",),)}
PROMPT = Prompt("p1", "essay", "", score_min=0, score_max=4)
ESSAYS = [
    ScoredResponse("e1", "p1", "The harbor was full of ships. The tide came in and the ships rose with the tide.", (2,)),
    ScoredResponse("e2", "p1", "Ships left the harbor at dawn. A ship needs the tide to leave the harbor.", (3,)),
    ScoredResponse("e3", "p1", "I watched the tide. Ships and more ships sailed past the harbor wall.", (1,)),
]
SENTENCE = re.compile(r"[^.?!]+[.?!]")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.findall(text)]


def test_compose_exact_output_for_a_fixed_seed() -> None:
    text, n_sent, n_par, n_words = compose(["harbor", "tide", "ship"], 30, TINY, np.random.default_rng(7))
    assert text == (
        "Since the earliest lanterns of lantern, harbor has been gilded by lanterns and gilded by opaline axioms. "
        "In this light, ship tacitly gilds lanterns, yet the opaline lantern gilds the axioms of tide. "
        "Ultimately, whoever gilds harbor gilds the opaline lanterns of every axiom.")
    assert (n_sent, n_par, n_words) == (3, 1, len(text.split()))


def test_compose_same_seed_same_bytes_other_seed_differs() -> None:
    a = compose(["a", "b", "c"], 200, TINY, np.random.default_rng(1))
    assert a == compose(["a", "b", "c"], 200, TINY, np.random.default_rng(1))
    assert a != compose(["a", "b", "c"], 200, TINY, np.random.default_rng(2))


@pytest.mark.parametrize("target", [60, 150, 350, 650])
def test_compose_length_within_bounds_keywords_and_sentence_shape(target: int) -> None:
    for seed in range(5):
        text, n_sent, n_par, n_words = compose(["harbor", "tide", "ship"], target, TINY, np.random.default_rng(seed))
        assert n_words == len(text.split())
        assert abs(n_words - target) <= CLOSING_ROOM
        for k in ("harbor", "tide", "ship"):
            assert re.search(rf"\b{k}\b", text, re.I), (k, text)
        sents = sentences(text)
        assert len(sents) == n_sent and "".join(sents).replace(" ", "") == text.replace(" ", "").replace("\n", "")
        for s in sents:
            assert s[0].isupper() and s[-1] in ".?!", s
        assert n_par == text.count("\n\n") + 1 and all(4 <= len(sentences(p)) <= 7 for p in text.split("\n\n")[:-1])


def test_noun_lemmas_and_top_nouns() -> None:
    assert noun_lemma("ships") == "ship" and noun_lemma("hours") == "hour"
    assert noun_lemma("the") is None and noun_lemma("quickly") is None
    # empty prompt text: the essays' top TF-IDF nouns
    assert top_nouns("", [e.text for e in ESSAYS], 3) == ["ship", "harbor", "tide"]
    # a prompt text naming enough nouns: its nouns, ranked by TF-IDF in the essays
    assert top_nouns("Write about a dawn at the harbor wall.", [e.text for e in ESSAYS], 2) == ["harbor", "dawn"]


def test_fit_learns_mean_length_and_keywords_or_takes_them() -> None:
    res = default_resources()
    state = BabelGen().fit(ESSAYS, PROMPT, res)
    assert state["mean_words"] == pytest.approx(np.mean([len(e.text.split()) for e in ESSAYS]))
    assert state["keywords"] == ["ship", "harbor", "tide"] and state["n_essays"] == 3
    given = BabelGen(keywords=["Mark Twain", "velocity", "road"]).fit(ESSAYS, PROMPT, res)
    assert given["keywords"] == ["Mark Twain", "velocity", "road"]
    assert BabelGen().fit([], Prompt("empty", "essay"), res)["keywords"] == []


def test_essays_for_a_prompt_are_long_rare_worded_and_keyword_bearing() -> None:
    res = default_resources()
    attack = BabelGen(count=4, length_ratio=10)
    state = attack.fit(ESSAYS, PROMPT, res)
    out = attack.examples_for(PROMPT, state, seed=3, res=res)
    assert [e.index for e in out] == [0, 1, 2, 3] and all(e.source_id == "prompt:p1" for e in out)
    assert len({e.text for e in out}) == 4
    vocab = babel_vocabulary(1.5, 3.3, 6)
    rare = {w for k in ("N", "V", "A", "R") for forms in vocab[k] for w in forms}
    for e in out:
        target = round(state["mean_words"] * 10)
        assert e.meta["target_words"] == target and abs(len(e.text.split()) - target) <= CLOSING_ROOM
        for k in state["keywords"]:
            assert re.search(rf"\b{k}\b", e.text, re.I)
        words = re.findall(r"[a-z]+", e.text.lower())
        assert sum(w in rare for w in words) / len(words) > 0.3  # grandiloquent: many rare words
        assert all(s[0].isupper() and s[-1] in ".?!" for s in sentences(e.text))
    assert out == attack.examples_for(PROMPT, state, seed=3, res=res, start=0, stop=4)


def test_vocabulary_is_rare_real_and_inflected() -> None:
    from wordfreq import zipf_frequency

    vocab = babel_vocabulary(1.5, 3.3, 6)
    assert all(len(vocab[k]) > 500 for k in ("N", "V", "A", "R"))
    for noun, plural in vocab["N"][::500]:
        assert plural != noun and 1.4 <= zipf_frequency(noun, "en") <= 3.4
    for base, z, _vbn, ving in vocab["V"][::200]:
        assert z.endswith("s") and ving.endswith("ing") and ving[:2] == base[:2]
    assert all(w.endswith("ly") for (w,) in vocab["R"])


def test_not_applicable_without_keywords_or_essays() -> None:
    res = default_resources()
    attack = BabelGen(count=2)
    assert attack.examples_for(Prompt("empty", "essay"), attack.fit([], Prompt("empty", "essay"), res), 0, res) == []


def test_bad_params_are_refused() -> None:
    with pytest.raises(ValueError, match="keywords"):
        BabelGen(keywords=["ok", " "])
    with pytest.raises(ValueError, match="zipf_min"):
        BabelGen(zipf_min=4, zipf_max=3)


def test_registered_with_the_papers_conventions() -> None:
    cls = get_attack("babelgen")
    assert cls is BabelGen and cls.task == "essay" and cls.family == "generate" and cls.expect == "bottom"
    assert "Sec. 3.4" in (cls.__doc__ or "")


def test_conformance_kit() -> None:
    check_attack(BabelGen(count=5))
    check_attack(BabelGen(count=3, keywords=["volunteer", "community", "citizen"], length_ratio=0.5))


def test_real_asap_prompt_keywords_and_length() -> None:
    from helpers import shared_path  # ../shared beside the repository

    path = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as fh:
        rows = [r for r in csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE) if r["essay_set"] == "1"][:300]
    records = [ScoredResponse(r["essay_id"], "1", r["essay"].strip('"'), (float(r["domain1_score"]),)) for r in rows]
    prompt = Prompt("1", "essay", "", score_min=2, score_max=12)
    attack = BabelGen(count=2)
    state = attack.fit(records, prompt, default_resources())
    assert "computer" in state["keywords"] and len(state["keywords"]) == 3  # prompt 1: effects of computers
    assert 300 <= state["mean_words"] <= 420  # Kumar et al. Table 2: about 350 words per prompt-1 essay
    for e in attack.examples_for(prompt, state, 0, default_resources()):
        assert abs(len(e.text.split()) - round(state["mean_words"])) <= CLOSING_ROOM
