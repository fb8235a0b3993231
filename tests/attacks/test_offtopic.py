"""OffTopic (the wrong-question bluff, for short answers and essays) and Misspell (benign noise) on real data."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from callbluff.attacks.base import get_attack
from callbluff.attacks.content import Misspell, OffTopic
from callbluff.attacks.content.misspell import misspell
from callbluff.datasets import load
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.resources.typos import TypoCorpus
from callbluff.testing import check_attack
from helpers import shared_path

RES = default_resources()


def _answers(attack, prompt, seed=0):
    return attack.examples_for(prompt, attack.fit([], prompt, RES), seed, RES)


def test_offtopic_submits_real_answers_of_the_other_prompts_in_turn() -> None:
    demo = load("demo:content")
    texts = {r.id: (r.prompt_id, r.text) for r in demo}
    got = _answers(OffTopic(count=20), demo.prompts["demo-1"])
    assert len(got) == 20
    for ex in got:  # every answer is a real answer of demo-2, named in meta
        src, rid = ex.meta["source_prompt"], ex.meta["source_record"]
        assert src == "demo-2" and texts[rid] == ("demo-2", ex.text)
        assert ex.source_id == "prompt:demo-1" and ex.prompt_id == "demo-1"
    assert len({e.text for e in got}) > 10  # drawn, not one answer repeated
    again = _answers(OffTopic(count=20), demo.prompts["demo-1"])
    assert [e.text for e in got] == [e.text for e in again]
    assert [e.text for e in got] != [e.text for e in _answers(OffTopic(count=20), demo.prompts["demo-1"], seed=1)]


def test_offtopic_pairs_are_balanced_on_asap_sas() -> None:
    path = shared_path("data", "asap-sas", "public_leaderboard_rel_2.tsv.gz")
    spec = f"asap-sas:{path}?prompts=1,2,3,4"
    ds = load(spec)
    got = _answers(OffTopic(count=30, source=spec), ds.prompts["2"])
    assert Counter(e.meta["source_prompt"] for e in got) == {"1": 10, "3": 10, "4": 10}
    only = _answers(OffTopic(count=6, source=spec, prompts=["4"]), ds.prompts["2"])
    assert {e.meta["source_prompt"] for e in only} == {"4"}
    with pytest.raises(ValueError, match=r"prompts \['9'\]"):
        OffTopic(count=3, source=spec, prompts=["9"]).fit([], ds.prompts["2"], RES)


def test_offtopic_min_score_keeps_good_answers_only() -> None:
    demo = load("demo:content")
    gold = {r.id: r.gold for r in demo}
    got = _answers(OffTopic(count=15, min_score=3), demo.prompts["demo-1"])
    assert got and all(gold[e.meta["source_record"]] >= 3 for e in got)


def test_offtopic_essay_takes_essays_of_another_prompt_and_none_without_one() -> None:
    kit = Prompt("kit-essay", "essay", "Write about a time you were patient.", score_min=1, score_max=6)
    assert get_attack("OffTopicEssay") is OffTopic  # the essay form's name when an attack served one task
    got = _answers(OffTopic(count=4), kit)
    essays = {r.text for r in load("demo:essay")}
    assert len(got) == 4 and all(e.text in essays and e.meta["source_prompt"] == "demo-essay" for e in got)
    demo = load("demo:essay")
    assert _answers(OffTopic(count=4), demo.prompts["demo-essay"]) == []  # the only prompt: nothing else


def test_offtopic_passes_the_kit_on_a_two_prompt_dataset() -> None:
    demo = load("demo:content")
    check_attack(OffTopic(count=5, source="demo:content"), records=demo.records()[:40], prompts=demo.prompts)


TYPOS = TypoCorpus({"heat": ("haet", "heet"), "metal": ("metel",), "spoon": ("spon",)})


def test_misspell_replaces_the_share_of_words_and_keeps_the_rest() -> None:
    text = "Heat moves through the metal spoon, by conduction."
    new, replaced, words = misspell(text, 0.3, TYPOS, np.random.default_rng(0))
    assert words == 8 and replaced == 2  # round(0.3 * 8) = 2 of the 3 words the corpus can misspell
    assert new.endswith(", by conduction.") and new != text
    assert misspell(text, 1.0, TYPOS, np.random.default_rng(0))[1] == 3  # all it can
    assert misspell("ok then", 0.5, TYPOS, np.random.default_rng(0)) == ("ok then", 0, 2)
    with pytest.raises(ValueError, match="rate=1.5"):
        misspell(text, 1.5, TYPOS, np.random.default_rng(0))


def test_misspell_attack_expects_the_same_score_and_records_the_counts() -> None:
    a = Misspell(rate=0.5)
    assert a.expect == "same-score"
    rec = ScoredResponse("r1", "p", "The heat of the tea goes up the metal spoon.", (2.0,))
    ex = a.examples(rec, np.random.default_rng(1), RES, None)
    assert len(ex) == 1 and ex[0].meta["words"] == 10 and ex[0].meta["replaced"] >= 1
    assert ex[0].text != rec.text
