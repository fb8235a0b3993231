"""ModGrammar, ModFluency, ModLexicon (Kumar et al. 2020, Sec. 3.2, Table 3): the paper's own examples, exact
outputs on a hand-written essay, size and position, POS kept by ModLexicon (checked with spaCy), bad input,
real ASAP-AES essays."""

from __future__ import annotations

import copy
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callbluff.attacks.edits import Position, SizeCriterion, units
from callbluff.attacks.essay import ModFluency, ModGrammar, ModLexicon
from callbluff.attacks.essay.modify import FILLERS, PERMUTATIONS
from callbluff.records import ScoredResponse
from callbluff.resources.context import default_resources
from helpers import shared_path

ESSAY = ("Computers help students learn. They can find facts quickly.\n\n"
         "However, some people spend too much time online. They forget to exercise. "
         "Parents should set limits. In conclusion, computers are useful tools.")
TABLE3 = "Anita is going to the park for a walk."
RES = default_resources()


def rec(text: str = ESSAY, rid: str = "e1") -> ScoredResponse:
    return ScoredResponse(rid, "p1", text, (4.0,))


def one(attack, record: ScoredResponse, seed: int = 7):
    out = attack.examples(record, np.random.default_rng(seed), RES)
    assert len(out) == 1
    return out[0]


# -- ModGrammar -------------------------------------------------------------------------------------------

def test_modgrammar_errors_reproduces_table3() -> None:
    # Table 3: articles, then subject-verb agreement, then informal conventions
    assert one(ModGrammar(variant="errors"), rec(TABLE3)).text == "anita go 2 an park 4 the walk"


def test_modgrammar_errors_exact_on_the_hand_essay() -> None:
    ex = one(ModGrammar(), rec())
    assert ex.text == ("computers helps students learn they can find facts quickly\n\n"
                       "however, some people spends 2 much time online they forgets 2 exercise "
                       "parents should set limits in conclusion, computers is useful tools")
    assert ex.meta["sentences"] == [0, 1, 2, 3, 4, 5] and ex.meta["variant"] == "errors"


@pytest.mark.parametrize("source, expected", [
    ("She goes to the store.", "she go 2 an store"),
    ("We have an apple and you are happy.", "we has the apple & u is happy"),
    ("The dogs were barking at a cat.", "an dogs was barking at the cat"),  # the wrong indefinite form
    ("I like your idea for the school.", "i likes ur idea 4 an school"),
])
def test_modgrammar_errors_rules(source, expected) -> None:
    assert one(ModGrammar(), rec(source)).text == expected


def test_modgrammar_svo_jumbles_the_triplet() -> None:
    texts = Counter()
    for seed in range(40):
        ex = one(ModGrammar(variant="svo"), rec(TABLE3), seed)
        texts[ex.text] += 1
        assert sorted(ex.text.rstrip(".").split()) == sorted(TABLE3.rstrip(".").split())  # same words
        assert ex.text.endswith(" for a walk.")  # outside the triplet nothing moves
    # Table 3's own jumbling is one of the five non-identity orders, all of which occur
    assert "Anita to the park is going for a walk." in texts
    assert len(texts) == len(PERMUTATIONS) == 5 and TABLE3 not in texts


def test_modgrammar_svo_exact_on_the_hand_essay() -> None:
    ex = one(ModGrammar(variant="svo"), rec())
    assert ex.text == ("Computers help students learn. facts can find They quickly.\n\n"
                       "However, spend some people too much time online. They forget to exercise. "
                       "Parents limits should set. In conclusion, are computers useful tools.")
    # sentences 0 ("help" + clause "students learn") and 3 ("forget" + "to exercise") have no object: no triplet
    assert ex.meta["sentences"] == [1, 2, 4, 5]
    assert ex.meta["orders"] == [[2, 1, 0], [1, 0, 2], [0, 2, 1], [1, 0, 2]]


def test_modgrammar_sentence_without_triplet_is_not_a_unit() -> None:
    assert ModGrammar(variant="svo").examples(rec("Hello there!"), np.random.default_rng(0), RES) == []


@pytest.mark.parametrize("percent", [10, 15, 20, 25])
@pytest.mark.parametrize("position", ["beginning", "middle", "end"])
def test_modgrammar_size_and_position(percent, position) -> None:
    text = " ".join(f"The student number {i} writes a long essay." for i in range(1, 25))
    n = len(units(text, "sentence", RES))
    assert n == 24
    ex = one(ModGrammar(percent=percent, position=position), rec(text), 3)
    lo, hi = Position(position).slice_bounds(n)
    assert len(ex.meta["sentences"]) == min(SizeCriterion(percent=percent).units(n), hi - lo)
    assert all(lo <= i < hi for i in ex.meta["sentences"])
    changed = [u for u in units(ex.text, "word", RES) if u.text in ("an", "write")]
    assert len(changed) == 2 * len(ex.meta["sentences"])  # the -> an, writes -> write in each changed one


# -- ModFluency -------------------------------------------------------------------------------------------

def test_modfluency_paper_example() -> None:
    ex = one(ModFluency(mode="disfluency"), rec("I like apples."))
    assert ex.text == "I \u2026 I like apples."


def test_modfluency_exact_on_the_hand_essay() -> None:
    ex = one(ModFluency(), rec())
    assert ex.text == ("Computers \u2026 Computers help students learn. They can find facts quickly.\n\n"
                       "However \u2026 However, some people spend too much time online. They forget to exercise. "
                       "Parents \u2026 Parents should set limits. Like\u2026 In conclusion, computers are useful tools.")
    assert ex.meta["changes"][-1] == {"sentence": 5, "filler": "Like", "repeated": None}


def test_modfluency_disfluency_on_alternate_sentences() -> None:
    ex = one(ModFluency(mode="disfluency", repeat_words=2), rec())
    assert [c["sentence"] for c in ex.meta["changes"]] == [0, 2, 4]
    assert [c["repeated"] for c in ex.meta["changes"]] == ["Computers help", "However, some", "Parents should"]
    ex = one(ModFluency(mode="disfluency", position="end"), rec())
    assert [c["sentence"] for c in ex.meta["changes"]] == [4]


@pytest.mark.parametrize("percent", [10, 15, 20, 25])
@pytest.mark.parametrize("position", [None, "beginning", "middle", "end"])
def test_modfluency_fillers_size_and_position(percent, position) -> None:
    text = " ".join(f"Sentence number {i} is about computers." for i in range(1, 25))
    for seed in range(3):
        ex = one(ModFluency(mode="fillers", percent=percent, position=position), rec(text), seed)
        idx = [c["sentence"] for c in ex.meta["changes"]]
        lo, hi = (0, 24) if position is None else Position(position).slice_bounds(24)
        assert len(idx) == min(SizeCriterion(percent=percent).units(24), hi - lo)
        assert abs(len(idx) - 24 * percent / 100) <= 1
        assert all(lo <= i < hi for i in idx)
        fillers = {f[:1].upper() + f[1:] for f in FILLERS}
        assert all(c["filler"] in fillers for c in ex.meta["changes"])
        assert len(re.findall("\u2026", ex.text)) == len(idx)
        assert ex.text.replace("\u2026", "").split() != text.split()
        stripped = ex.text
        for c in ex.meta["changes"]:
            stripped = stripped.replace(f"{c['filler']}\u2026 ", "", 1)
        assert stripped == text  # only fillers were inserted


# -- ModLexicon -------------------------------------------------------------------------------------------

def replaced_tokens(ex, source: str):
    """(original token, new token) pairs from a fresh spaCy parse of the source and of the output."""
    src, out = RES.nlp(source), RES.nlp(ex.text)
    pairs = []
    for e in ex.meta["edits"]:
        a, b = e["source_span"]
        c, d = e["output_span"]
        s_tok = next(t for t in src if t.idx == a)
        o_tok = next(t for t in out if t.idx == c)
        assert s_tok.idx + len(s_tok.text) == b and o_tok.idx + len(o_tok.text) == d
        pairs.append((s_tok, o_tok))
    return pairs


def test_modlexicon_paper_example() -> None:
    ex = one(ModLexicon(), rec("Tom was a happy man. He lived a simple life."), 2)
    assert ex.text == "Tom was a felicitous man. He lived an uncomplicated life."  # paper: "an elementary life"
    assert [(c["word"], c["synonym"], c["pos"]) for c in ex.meta["changes"]] == [
        ("happy", "felicitous", "ADJ"), ("simple", "uncomplicated", "ADJ")]
    assert [e["inserted"] for e in ex.meta["edits"]] == ["felicitous", "an", "uncomplicated"]


def test_modlexicon_exact_on_the_hand_essay_and_one_word_per_sentence() -> None:
    ex = one(ModLexicon(), rec())
    assert ex.text == ("Computers help students hear. They can find facts rapidly.\n\n"
                       "However, some people expend too much time online. They forget to exert. "
                       "Parents should set boundaries. In determination, computers are useful tools.")
    assert [c["sentence"] for c in ex.meta["changes"]] == [0, 1, 2, 3, 4, 5]
    assert len(ex.meta["edits"]) == 6


def test_modlexicon_keeps_inflection_and_fixes_the_article() -> None:
    ex = one(ModLexicon(), rec("She owns an old car. The dogs were running."), 0)
    assert ex.text == "She owns an old automobile. The dogs were lamming."  # VBG kept
    for seed in range(30):
        ex = one(ModLexicon(), rec("He ate an orange. The children played games."), seed)
        for c in ex.meta["changes"]:
            if c["tag"] == "NNS":
                assert c["synonym"].endswith("s")
            if c["tag"] == "VBD":
                assert c["synonym"] != c["word"]
        for m in re.finditer(r"\b([Aa]n?) (\w+)", ex.text):
            assert (m.group(1).lower() == "an") == (m.group(2)[0].lower() in "aeiou")


def test_modlexicon_keeps_pos_checked_with_spacy() -> None:
    texts = [ESSAY, "Tom was a happy man. He lived a simple life.",
             "The scientists carefully studied the ancient rocks. They discovered important fossils."]
    total = kept = 0
    for text in texts:
        for seed in range(5):
            ex = one(ModLexicon(), rec(text), seed)
            for s_tok, o_tok in replaced_tokens(ex, text):
                if s_tok.lower_ in ("a", "an"):
                    continue  # the corrected article
                assert o_tok.lower_ != s_tok.lower_
                total += 1
                kept += o_tok.pos_ == s_tok.pos_
    assert total >= 40 and kept == total, f"{kept}/{total} replaced words kept their POS"


def test_modlexicon_never_replaces_names() -> None:
    # capitalised words inside a sentence are names (what the entity recogniser excluded before), even when
    # the tagger calls them ADJ / NOUN; a capitalised first word is an ordinary word
    words = set()
    for seed in range(20):
        for ex in ModLexicon().examples(rec("Happy students admire the Internet daily. The Internet connects "
                                            "people."), np.random.default_rng(seed), RES):
            words |= {c["word"] for c in ex.meta["changes"]}
    assert "Internet" not in words  # tagged NOUN, WordNet synonym "cyberspace"
    assert "Happy" in words


@pytest.mark.parametrize("percent", [10, 25])
@pytest.mark.parametrize("position", ["beginning", "end"])
def test_modlexicon_size_and_position(percent, position) -> None:
    text = " ".join(f"The student number {i} writes a long essay." for i in range(1, 25))
    ex = one(ModLexicon(percent=percent, position=position), rec(text), 1)
    idx = [c["sentence"] for c in ex.meta["changes"]]
    lo, hi = Position(position).slice_bounds(24)
    assert len(idx) == SizeCriterion(percent=percent).units(24) and all(lo <= i < hi for i in idx)


# -- all three ----------------------------------------------------------------------------------------------

ATTACKS = [ModGrammar(), ModGrammar(variant="svo"), ModFluency(), ModFluency(mode="fillers"), ModLexicon()]


def test_source_record_is_never_modified() -> None:
    r = rec()
    before = copy.deepcopy(r)
    for attack in ATTACKS:
        attack.examples(r, np.random.default_rng(0), RES)
    assert r == before


BAD = ["", " ", "word", "!!! ... ???", "\x00\x00 NUL\x00 bytes. More\x00.", "这是一个句子。这是第二个句子。",
       "Это первое предложение. Это второе.", "\n\n\t"]


@pytest.mark.parametrize("text", BAD)
def test_bad_input_does_not_crash(text) -> None:
    for attack in ATTACKS:
        for ex in attack.examples(rec(text), np.random.default_rng(0), RES):
            assert ex.text != text and ex.text.strip()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200), st.integers(0, 2**32 - 1))
def test_any_text_gives_valid_examples_or_none(text, seed) -> None:
    for attack in ATTACKS:
        for ex in attack.examples(rec(text), np.random.default_rng(seed), RES):
            assert ex.text != text and ex.text.strip()


def test_a_1mb_essay() -> None:
    text = "The cat sat on the mat. " * 44_000  # the same text as the Del test: one cached sentence split
    ex = one(ModFluency(mode="fillers", percent=10), rec(text))
    assert len(ex.meta["changes"]) == 4_400
    # longer than spaCy's parser limit: the parse-based attacks make no example instead of failing
    assert ModGrammar().examples(rec(text), np.random.default_rng(0), RES) == []
    assert ModLexicon().examples(rec(text), np.random.default_rng(0), RES) == []


def test_real_asap_essays() -> None:
    from callbluff.datasets import load

    path = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    recs = [r for r in load(f"asap-aes:{path}?prompts=5").records()][:15]
    total = kept = 0
    for r in recs:
        n = len(units(r.text, "sentence", RES))
        lex = one(ModLexicon(), r, 11)
        assert len(lex.meta["changes"]) <= n
        for s_tok, o_tok in replaced_tokens(lex, r.text):
            if s_tok.lower_ not in ("a", "an"):
                total += 1
                kept += o_tok.pos_ == s_tok.pos_
        gram = one(ModGrammar(), r, 11)
        assert gram.text != r.text and "." not in gram.text[-2:]
        flu = one(ModFluency(), r, 11)
        assert len(flu.text) > len(r.text)
    assert total >= 40 and kept == total, f"{kept}/{total} replaced words kept their POS (in context)"


def test_prefetch_batches_the_parse_and_changes_no_output() -> None:
    """ModGrammar / ModLexicon ``prefetch``: one nlp.pipe over a task's essays fills the (no-NER) parse cache
    that both share; the examples are byte-identical to those made without it, and no full parse is made."""
    from callbluff.resources.context import Resources

    records = [rec(ESSAY, "a"), rec("Tom was a happy man. He lived a simple life.", "b"),
               rec("The scientists carefully studied the ancient rocks. They discovered important fossils.", "c")]
    for attack in (ModGrammar(), ModGrammar(variant="svo"), ModLexicon()):
        cold, warm = Resources(), Resources()
        attack.prefetch(records, warm)
        assert all(r.text in warm._deps for r in records)
        if isinstance(attack, ModLexicon):  # and the sentence units, split in one batch
            assert all(r.text in warm._parses for r in records)
        for r in records:
            a = attack.examples(r, np.random.default_rng(5), cold)
            b = attack.examples(r, np.random.default_rng(5), warm)
            assert [x.text for x in a] == [x.text for x in b] and [x.meta for x in a] == [x.meta for x in b]
        assert not warm._docs and not cold._docs  # the pipeline with NER never ran
