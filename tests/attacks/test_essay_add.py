"""The Add family of Kumar et al. 2020 (Sec. 3.3): exact outputs on hand-written essays with fixed seeds,
the size / position invariants of Sec. 3.1, bounded vs unbounded, pools, the knowledge corpus and AddRC, real
ASAP-AES essays, and bad input."""

from __future__ import annotations

import csv
import gzip
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callbluff.attacks.edits import Position, SizeCriterion, units
from callbluff.attacks.essay import (
    AddLies,
    AddRC,
    AddSong,
    AddSpeech,
    AddTruth,
    AddWikiRelated,
    AddWikiUnrelated,
    RepeatSent,
)
from callbluff.attacks.essay.add import as_sentence
from callbluff.attacks.essay.knowledge import corpus_files, fit_knowledge
from callbluff.attacks.essay.pools import read_pool, split_entries
from callbluff.records import Prompt, ScoredResponse
from callbluff.resources.context import default_resources
from callbluff.testing import check_attack
from helpers import shared_path

RES = default_resources()
ESSAY = ("Computers help people learn. They connect families across the world. Some people spend too much time "
         "online. Children should still play outside. Parents can set limits on screen time. In the end, computers "
         "are useful tools.")
REC = ScoredResponse("e1", "p1", ESSAY, (4.0,))
PROMPT = Prompt("p1", "essay", "Write a letter about the effects computers have on people.", score_min=1, score_max=6)
SENTS = [u.text for u in units(ESSAY, "sentence", RES)]
TRUTHS = ["Water boils at 100 degrees Celsius at sea level.", "Spiders have eight legs.", "A week has seven days.",
          "The Moon orbits the Earth."]


@pytest.fixture
def truths(tmp_path: Path) -> str:
    p = tmp_path / "truths.json"
    p.write_text(json.dumps(TRUTHS))
    return str(p)


def run(attack, record=REC, prompt=PROMPT, seed=0):
    state = attack.fit([record], prompt, RES) if attack.needs_fit else None
    return attack.examples(record, np.random.default_rng(seed), RES, prompt, state)


def test_the_hand_written_essay_has_six_sentences() -> None:
    assert len(SENTS) == 6 and SENTS[0] == "Computers help people learn."


# -- exact outputs ----------------------------------------------------------------------------------------

def test_addtruth_exact_unbounded_and_bounded(truths: str) -> None:
    [ex] = run(AddTruth(pool=truths, percent=25, position="end"))
    # 25% of 6 sentences = 1; the end third is sentences 4-5, so the boundary is 4, 5 or 6
    assert ex.text == ("Computers help people learn. They connect families across the world. Some people spend too much "
                       "time online. Children should still play outside. Parents can set limits on screen time. In the "
                       "end, computers are useful tools. A week has seven days.")
    assert ex.meta["insert_at"] == 6 and ex.meta["added"] == ["A week has seven days."]
    assert ex.meta["candidate_indices"] == [2] and ex.meta["edits"][0]["op"] == "insert"
    [b] = run(AddTruth(pool=truths, percent=25, position="beginning", bounded=True))
    assert b.text == ("Computers help people learn. A week has seven days. Some people spend too much time online. "
                      "Children should still play outside. Parents can set limits on screen time. In the end, computers "
                      "are useful tools.")
    assert b.meta["replaced"] == [1] and b.meta["bounded"] is True


def test_repeatsent_exact_modes() -> None:
    [intro] = run(RepeatSent(mode="introduction", count=2))
    assert intro.text == ESSAY + " Computers help people learn. They connect families across the world."
    [concl] = run(RepeatSent(mode="conclusion", count=1))
    assert concl.text == "In the end, computers are useful tools. " + ESSAY
    [mid] = run(RepeatSent(mode="middle", count=2))
    assert mid.text == ESSAY.replace("Children should still play outside.", "Children should still play outside. "
                                     "Some people spend too much time online. Children should still play outside.")
    assert mid.meta["repeated"] == [2, 3]
    assert run(RepeatSent(mode="middle", count=3)) == []  # the middle third of 6 sentences holds 2


def test_repeatsent_seven_variants_and_bad_count() -> None:
    variants = [("introduction", 1), ("introduction", 2), ("conclusion", 1), ("conclusion", 2), ("middle", 1),
                ("middle", 2), ("middle", 3)]
    long = ScoredResponse("e9", "p1", " ".join(f"Sentence number {i} is here." for i in range(12)), (3.0,))
    texts = {run(RepeatSent(mode=m, count=c), long)[0].text for m, c in variants}
    assert len(texts) == 7
    with pytest.raises(ValueError, match="count 3 with mode 'introduction'"):
        RepeatSent(mode="introduction", count=3)


def test_addrc_adds_passage_sentences_and_skips_prompts_without_one() -> None:
    src = "The cyclist ran out of water. The road was long and hot. A snake lay on the road."
    [ex] = run(AddRC(percent=10), prompt=replace(PROMPT, source=src))
    assert ex.meta["added"][0] in {"The cyclist ran out of water.", "The road was long and hot.",
                                   "A snake lay on the road."}
    assert ex.meta["added"][0] in ex.text and len(ex.text) > len(ESSAY)
    assert run(AddRC(), prompt=PROMPT) == [] and run(AddRC(), prompt=None) == []
    assert run(AddRC(), prompt=replace(PROMPT, source="   ")) == []


# -- Sec. 3.1 invariants ------------------------------------------------------------------------------------

@pytest.mark.parametrize("percent", [10, 15, 20, 25, 60])
@pytest.mark.parametrize("position", ["beginning", "middle", "end", None])
@pytest.mark.parametrize("bounded", [False, True])
def test_size_and_position(truths: str, percent: int, position: str | None, bounded: bool) -> None:
    long = ScoredResponse("e2", "p1", " ".join(f"This is sentence {i}." for i in range(20)), (3.0,))
    n = 20
    for seed in range(5):
        [ex] = run(AddTruth(pool=truths, percent=percent, position=position, bounded=bounded), long, seed=seed)
        lo, hi = (0, n) if position is None else Position(position).slice_bounds(n)
        k = SizeCriterion(percent=percent).units(n)
        src = units(long.text, "sentence", RES)
        [edit] = ex.meta["edits"]
        a, b = edit["output_span"]
        assert ex.text[a:b] == edit["inserted"] and ex.text[:a] + edit["removed"] + ex.text[b:] == long.text
        if bounded:
            run_ = ex.meta["replaced"]
            assert len(run_) == min(k, hi - lo) and lo <= run_[0] and run_[-1] < hi
            assert edit["removed"] == long.text[src[run_[0]].start:src[run_[-1]].end]  # as many dropped as added
            assert edit["inserted"] == " ".join(ex.meta["added"]) and len(ex.meta["added"]) == len(run_)
        else:
            at = ex.meta["insert_at"]
            assert ex.meta["n_added"] == k and abs(k - n * percent / 100) <= 1
            assert lo <= at <= hi and edit["removed"] == ""
            assert edit["source_span"][0] == (src[at].start if at < n else src[-1].end)  # at a sentence boundary
            assert edit["inserted"].strip() == " ".join(ex.meta["added"])
        assert long.text == " ".join(f"This is sentence {i}." for i in range(20))  # source untouched


def test_no_example_when_the_third_is_empty(truths: str) -> None:
    one = ScoredResponse("e3", "p1", "Only one sentence here.", (2.0,))
    assert Position.middle.slice_bounds(1) == (0, 0)
    assert run(AddTruth(pool=truths, position="middle"), one) == []  # the middle third of 1 sentence is empty
    assert len(run(AddTruth(pool=truths), one)) == 1  # anywhere: fine
    assert run(AddTruth(pool=truths, bounded=True), ScoredResponse("e4", "p1", "Only one.", (1.0,))) == []


def test_songs_split_into_lines_and_get_a_full_stop() -> None:
    items = split_entries(["Rise and fall, like the tide.My hand goes with your chest\nSteady now,"], "line", RES)
    assert items == ["Rise and fall, like the tide.", "My hand goes with your chest", "Steady now,"]
    assert [as_sentence(x) for x in items[1:]] == ["My hand goes with your chest.", "Steady now."]


# -- pools --------------------------------------------------------------------------------------------------

def test_pool_formats_and_errors(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("first line\n\n second line \n")
    assert read_pool(tmp_path / "a.txt") == ["first line", "second line"]
    with gzip.open(tmp_path / "b.csv.gz", "wt", newline="") as fh:
        w = csv.writer(fh)
        w.writerows([["lyric", "year"], ["la la", "1900"], ["", "1901"], ["tra la", "1902"]])
    assert read_pool(tmp_path / "b.csv.gz", column="lyric") == ["la la", "tra la"]
    with pytest.raises(ValueError, match="no column 'text'.*lyric, year"):
        read_pool(tmp_path / "b.csv.gz")
    (tmp_path / "c.json").write_text(json.dumps(["ok", 3]))
    with pytest.raises(ValueError, match="entry 1 is a int"):
        read_pool(tmp_path / "c.json")
    with pytest.raises(FileNotFoundError, match="AddLies: pool .*nope.json: no such file"):
        AddLies(pool=str(tmp_path / "nope.json")).fit([], None, RES)


@pytest.mark.parametrize("cls", [AddSong, AddSpeech, AddTruth, AddLies])
def test_shipped_pools_load_and_attack(cls) -> None:
    a = cls()
    items = a.fit([], PROMPT, RES)
    assert len(items) >= 49 and all(x.strip() for x in items)
    [ex] = run(a)
    assert all(s in ex.text for s in ex.meta["added"])
    assert set(ex.meta["added"]) <= {as_sentence(x) for x in items}


def test_bluff_resources_pools() -> None:
    base = shared_path("data", "bluff-resources")
    lies = AddLies(pool=str(base / "universal_falsehoods.json"), position="end")
    assert len(lies.fit([], None, RES)) == 122
    [ex] = run(lies)
    assert ex.meta["insert_at"] >= 4 and ex.meta["added"][0] in ex.text
    song = AddSong(pool=str(base / "songs" / "Folk_lyrics.csv.gz"), percent=25)
    lines = song.fit([], None, RES)
    assert len(lines) > 100 and "Rise and fall, like the tide." in lines  # lines glued with "." are split
    speech = AddSpeech(pool=str(base / "speeches.json"))
    assert len(speech.fit([], None, RES)) > 100  # 100 excerpts, several sentences each
    check_attack(AddTruth(pool=str(base / "universal_truths.json"), percent=20, position="middle"))


# -- knowledge corpus (AddWiki*) --------------------------------------------------------------------------------

def _corpus(tmp_path: Path) -> Path:
    d = tmp_path / "wiki"
    d.mkdir(exist_ok=True)
    (d / "Computer.txt").write_text("A computer is a machine that can be programmed to carry out sequences of "
                                    "arithmetic operations. Modern computers can perform generic sets of operations "
                                    "known as programs. The first computers were used mainly for calculations.")
    (d / "Internet.txt").write_text("The Internet is the global system of interconnected computer networks. "
                                    "Families use the internet to talk across the world every day.")
    (d / "Volcano.txt").write_text("A volcano is a rupture in the crust of a planet. Lava flows from the vent "
                                   "during an eruption. Some volcanoes sleep for thousands of years.")
    (d / "Cheese.txt").write_text("Cheese is a dairy product made from milk. It is produced in a wide range of "
                                  "flavours and textures. Hard cheeses are aged for many months.")
    return d


def test_wiki_related_and_unrelated_on_a_small_corpus(tmp_path: Path) -> None:
    corpus = str(_corpus(tmp_path))
    rel = fit_knowledge([REC], PROMPT, RES, related=True, corpus=corpus, key_phrases=None, n_phrases=3,
                        docs_per_phrase=2, max_sentences=50, max_fit_records=5, who="t")
    # "letter", "effect", "people" are not in the corpus vocabulary: they cannot be retrieved, so are dropped
    assert rel["key_phrases"] == ["computer", "world"]
    assert [t for t, _ in rel["documents"]] == ["Internet", "Computer"]  # best cosine first
    assert rel["sentences"][0] == "The Internet is the global system of interconnected computer networks."
    un = fit_knowledge([REC], PROMPT, RES, related=False, corpus=corpus, key_phrases=("computer", "family"),
                       n_phrases=3, docs_per_phrase=1, max_sentences=50, max_fit_records=5, who="t")
    assert {t for t, _ in un["documents"]} == {"Volcano", "Cheese"}
    assert all("computer" not in s.lower() for s in un["sentences"])
    a = AddWikiUnrelated(corpus=corpus, key_phrases=["computer", "family"], percent=25, position="middle")
    [ex] = a.examples(REC, np.random.default_rng(1), RES, PROMPT, a.fit([REC], PROMPT, RES))
    assert ex.meta["added"][0] in un["sentences"] and 2 <= ex.meta["insert_at"] <= 4


def test_corpus_formats_and_missing_corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "c.jsonl").write_text(json.dumps({"title": "Cat", "text": "Cats purr when they are content."}) + "\n")
    (tmp_path / "s.json").write_text(json.dumps({"data": [{"title": "Cat_family", "paragraphs": [
        {"context": "Cats are small carnivorous mammals that purr loudly.", "qas": []}]}]}))
    for name in ("c.jsonl", "s.json"):
        st_ = fit_knowledge([], None, RES, related=True, corpus=str(tmp_path / name), key_phrases=("cats purr",),
                            n_phrases=1, docs_per_phrase=1, max_sentences=5, max_fit_records=0, who="t")
        assert st_["documents"][0][0] in {"Cat", "Cat family"} and len(st_["sentences"]) == 1
    (tmp_path / "bad.jsonl").write_text('{"body": "x"}\n')
    with pytest.raises(ValueError, match="bad.jsonl line 1: expected an object with a string 'text'"):
        AddWikiRelated(corpus=str(tmp_path / "bad.jsonl")).fit([], PROMPT, RES)
    import callbluff.attacks.essay.knowledge as kn

    monkeypatch.setattr(kn, "default_corpus_files", lambda: [])
    with pytest.raises(FileNotFoundError, match="AddWikiRelated: no knowledge corpus.*squad_fetch"):
        AddWikiRelated().fit([], PROMPT, RES)
    with pytest.raises(FileNotFoundError, match="no such file or directory"):
        corpus_files(str(tmp_path / "missing"))


def test_no_key_phrase_no_example(tmp_path: Path) -> None:
    a = AddWikiRelated(corpus=str(_corpus(tmp_path)))
    state = a.fit([], Prompt("p0", "essay"), RES)
    assert state["key_phrases"] == [] and a.examples(REC, np.random.default_rng(0), RES, PROMPT, state) == []


# -- real ASAP-AES essays ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def asap():
    from callbluff.datasets import load

    ds = load(f"asap-aes:{shared_path('data', 'asap-aes', 'training_set_rel3.tsv.gz')}?prompts=1")
    return [r for _, r in zip(range(12), ds)], ds.prompts["1"]


@pytest.fixture
def _needs_squad():
    from callbluff.attacks.essay.knowledge import default_corpus_files

    if not default_corpus_files():
        pytest.skip("SQuAD v1.1 not fetched: run python -m callbluff.resources.squad_fetch")


def test_real_asap_wiki_related_finds_computer_topics(asap, _needs_squad) -> None:
    records, prompt = asap
    a = AddWikiRelated(max_fit_records=12, percent=20, position="beginning")
    state = a.fit(records, prompt, RES)  # default corpus: SQuAD v1.1 paragraphs (skips below if absent)
    assert "computer" in state["key_phrases"]
    assert len(state["sentences"]) > 20
    for r in records[:4]:
        [ex] = a.examples(r, np.random.default_rng(0), RES, prompt, state)
        n = len(units(r.text, "sentence", RES))
        assert ex.meta["n_added"] == SizeCriterion(percent=20).units(n) and ex.meta["insert_at"] <= n // 3


def test_real_asap_pool_and_repeat_attacks(asap) -> None:
    records, prompt = asap
    for a in (AddSong(percent=15), AddSpeech(position="middle"), AddLies(position="end", bounded=True),
              RepeatSent(mode="middle", count=1)):
        state = a.fit(records, prompt, RES) if a.needs_fit else None
        for r in records:
            before = r.text
            out = a.examples(r, np.random.default_rng(3), RES, prompt, state)
            assert r.text == before and len(out) == 1 and out[0].text != r.text


# -- bad input ------------------------------------------------------------------------------------------------

BAD_PROMPT = replace(PROMPT, source="A short passage. It has two sentences.")


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory):
    corpus = str(_corpus(tmp_path_factory.mktemp("bad")))
    attacks = [AddTruth(), AddLies(bounded=True, position="end"), AddSong(), AddSpeech(position="middle"),
               AddRC(), AddWikiRelated(corpus=corpus, key_phrases=["computer"]),
               AddWikiUnrelated(corpus=corpus, key_phrases=["computer"]), RepeatSent(mode="middle")]
    return [(a, a.fit([], BAD_PROMPT, RES) if a.needs_fit else None) for a in attacks]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.one_of(st.just(""), st.just("word"), st.just("!!! ... ??"), st.just("a\x00b. c\x00."),
                      st.just("这是一个句子。这是另一个句子。第三句。"), st.just("\x00\x00"), st.text(max_size=200)))
def test_no_attack_crashes_on_bad_input(fitted, text: str) -> None:
    rec = ScoredResponse("bad", "p1", text, (1.0,))
    for a, state in fitted:
        for ex in a.examples(rec, np.random.default_rng(0), RES, BAD_PROMPT, state):
            assert ex.text != text and ex.text.strip()
    if not text.strip():
        assert all(a.examples(rec, np.random.default_rng(0), RES, BAD_PROMPT, s) == [] for a, s in fitted)


def test_a_one_megabyte_essay(fitted) -> None:
    text = ("Computers help people learn every day. " * 26000)[:1_000_000]
    rec = ScoredResponse("big", "p1", text, (1.0,))
    for a, state in fitted:
        out = a.examples(rec, np.random.default_rng(0), RES, BAD_PROMPT, state)
        assert len(out) == 1 and out[0].text != text
        if a.params_dict.get("bounded"):
            n = out[0].meta["n_sentences"]
            assert n == len(units(text, "sentence", RES)) > 20000  # one cached parse
            assert len(out[0].meta["added"]) == len(out[0].meta["replaced"]) == SizeCriterion(percent=15).units(n)
        else:
            assert len(out[0].text) > len(text)


def test_phrase_counts_parse_once_for_every_wiki_fit() -> None:
    """Key-phrase counts are the noun phrases of the texts, parsed in one batch and shared by AddWikiRelated,
    AddWikiUnrelated and their grid points (one parse of a prompt's texts per run)."""
    from collections import Counter

    from callbluff.attacks.essay.knowledge import noun_phrases, phrase_counts
    from callbluff.resources.context import Resources

    class Counting(Resources):
        batches = 0

        def dependency_docs(self, texts, batch_size=256):
            Counting.batches += 1
            return super().dependency_docs(texts, batch_size)

    res = Counting()
    texts = ["The city library opened a new reading room.", "Students borrow books from the city library.",
             f"A unique sentence {id(res)} about museums and parks."]
    expected = Counter(p for t in texts for p in noun_phrases(t, Resources()))
    first = phrase_counts(texts, res)
    assert first == expected and first["city library"] == 2
    first["city library"] = 99  # callers get a copy
    assert phrase_counts(texts, res) == expected and Counting.batches == 1
