"""DelStart, DelEnd, DelRand (Kumar et al. 2020, Sec. 3.3): exact outputs on a hand-written essay, the
progressive series, the size and position criteria, bad input, real ASAP-AES essays."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from callbluff.attacks.edits import Position, SizeCriterion, units
from callbluff.attacks.essay import DelEnd, DelRand, DelStart
from callbluff.records import ScoredResponse
from callbluff.resources.context import default_resources
from helpers import shared_path

ESSAY = ("Computers help students learn. They can find facts quickly.\n\n"
         "However, some people spend too much time online. They forget to exercise. "
         "Parents should set limits. In conclusion, computers are useful tools.")
S = ["Computers help students learn.", "They can find facts quickly.",
     "However, some people spend too much time online.", "They forget to exercise.",
     "Parents should set limits.", "In conclusion, computers are useful tools."]
RES = default_resources()


def rec(text: str = ESSAY, rid: str = "e1") -> ScoredResponse:
    return ScoredResponse(rid, "p1", text, (4.0,))


def run(attack, record: ScoredResponse, seed: int = 7):
    return attack.examples(record, np.random.default_rng(seed), RES)


def test_the_hand_essay_has_six_sentences() -> None:
    assert [u.text for u in units(ESSAY, "sentence", RES)] == S


def test_delstart_keeps_the_first_k_sentences() -> None:
    out = run(DelStart(), rec())
    assert [e.text for e in out] == [
        S[0],
        f"{S[0]} {S[1]}",
        f"{S[0]} {S[1]}\n\n{S[2]}",
        f"{S[0]} {S[1]}\n\n{S[2]} {S[3]}",
        f"{S[0]} {S[1]}\n\n{S[2]} {S[3]} {S[4]}",
    ]
    assert [e.index for e in out] == [0, 1, 2, 3, 4] and [e.meta["k"] for e in out] == [1, 2, 3, 4, 5]
    assert out[0].meta["deleted"] == [1, 2, 3, 4, 5] and all(e.meta["n_sentences"] == 6 for e in out)


def test_delend_keeps_the_last_k_sentences() -> None:
    out = run(DelEnd(max_k=4), rec())
    assert [e.text for e in out] == [
        S[5], f"{S[4]} {S[5]}", f"{S[3]} {S[4]} {S[5]}", f"{S[2]} {S[3]} {S[4]} {S[5]}",
    ]
    assert [e.index for e in out] == [0, 1, 2, 3]


def test_remove_mode_deletes_the_first_or_last_k_sentences() -> None:
    start = run(DelStart(mode="remove", max_k=2), rec())
    assert [e.text for e in start] == [ESSAY[len(S[0]) + 1:], ESSAY[ESSAY.index(S[2]):]]
    end = run(DelEnd(mode="remove", max_k=2), rec())
    assert [e.text for e in end] == [ESSAY[: ESSAY.index(S[4]) + len(S[4])], ESSAY[: ESSAY.index(S[3]) + len(S[3])]]
    # the paragraph break after sentence 2 survives when sentence 1 goes
    assert start[0].text.startswith(f"{S[1]}\n\n{S[2]}")


@pytest.mark.parametrize("cls", [DelStart, DelEnd])
@pytest.mark.parametrize("max_k, expected", [(None, 5), (1, 1), (3, 3), (5, 5), (50, 5)])
def test_series_lengths(cls, max_k, expected) -> None:
    out = run(cls(max_k=max_k), rec())
    assert len(out) == expected
    assert [e.index for e in out] == list(range(expected))
    lengths = [len(units(e.text, "sentence", RES)) for e in out]
    assert lengths == list(range(1, expected + 1))  # k sentences kept, one more per step
    assert len({e.id for e in out}) == expected


def test_one_sentence_response_gives_nothing() -> None:
    one = rec("Computers help students learn.")
    for attack in (DelStart(), DelEnd(), DelRand(), DelStart(mode="remove"), DelRand(percent=100)):
        assert run(attack, one) == []


def test_delrand_exact_output() -> None:
    [ex] = run(DelRand(percent=34), rec())
    assert ex.meta["deleted"] == [3, 4]
    assert ex.text == f"{S[0]} {S[1]}\n\n{S[2]} {S[5]}"
    assert ex.meta["edits"] == [{"op": "delete", "source_span": [ESSAY.index(S[2]) + len(S[2]), ESSAY.index(S[4]) + len(S[4])],
                                 "output_span": [ESSAY.index(S[2]) + len(S[2])] * 2,
                                 "removed": f" {S[3]} {S[4]}", "inserted": ""}]


@pytest.mark.parametrize("percent", [10, 15, 20, 25, 50])
@pytest.mark.parametrize("position", [None, "beginning", "middle", "end"])
def test_delrand_size_and_position(percent, position) -> None:
    text = " ".join(f"Sentence number {i} is about computers." for i in range(1, 25))
    n = len(units(text, "sentence", RES))
    assert n == 24
    for seed in range(5):
        [ex] = run(DelRand(percent=percent, position=position), rec(text), seed)
        deleted = ex.meta["deleted"]
        lo, hi = (0, n) if position is None else Position(position).slice_bounds(n)
        want = min(SizeCriterion(percent=percent).units(n), hi - lo)
        assert len(deleted) == want
        assert abs(len(deleted) - n * percent / 100) <= 1 or want == hi - lo  # within one unit unless capped
        assert all(lo <= i < hi for i in deleted)
        kept = units(ex.text, "sentence", RES)
        assert len(kept) == n - len(deleted)
        assert [u.text for u in kept] == [f"Sentence number {i + 1} is about computers." for i in range(n)
                                          if i not in deleted]


def test_source_record_is_never_modified() -> None:
    r = rec()
    before = copy.deepcopy(r)
    for attack in (DelStart(), DelEnd(), DelRand(), DelStart(mode="remove")):
        run(attack, r)
    assert r == before


BAD = ["", " ", "word", "!!! ... ???", "\x00\x00 NUL\x00 bytes. More\x00.", "这是一个句子。这是第二个句子。",
       "Это первое предложение. Это второе.", "\n\n\t"]


@pytest.mark.parametrize("text", BAD)
def test_bad_input_does_not_crash(text) -> None:
    for attack in (DelStart(), DelEnd(), DelRand(), DelStart(mode="remove"), DelEnd(mode="remove")):
        for ex in run(attack, rec(text)):
            assert ex.text != text and ex.text.strip()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300), st.integers(0, 2**32 - 1))
def test_any_text_gives_valid_examples_or_none(text, seed) -> None:
    for attack in (DelStart(max_k=3), DelEnd(max_k=3), DelRand(percent=25), DelRand(percent=10, position="end")):
        for ex in run(attack, rec(text), seed):
            assert ex.text != text and ex.text.strip()
            assert len(ex.text) < len(text)


def test_a_long_essay_is_cut_in_seconds() -> None:
    text = "The cat sat on the mat. " * 44_000  # 1 MB
    out = run(DelRand(percent=10), rec(text))
    assert len(out) == 1 and len(units(out[0].text, "sentence", RES)) == 44_000 - 4_400


def test_real_asap_essays() -> None:
    from callbluff.datasets import load

    path = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    recs = [r for r in load(f"asap-aes:{path}?prompts=3").records()][:40]
    assert len(recs) == 40
    for r in recs:
        sents = units(r.text, "sentence", RES)
        n = len(sents)
        starts = run(DelStart(), r)
        assert len(starts) == max(0, n - 1)
        for ex in starts:  # only the first k sentences: a prefix of the essay
            kept = ex.text.rstrip()  # the source's trailing whitespace stays after the last kept sentence
            assert r.text.startswith(kept) and kept.endswith(sents[ex.meta["k"] - 1].text)
        for ex in run(DelEnd(), r):
            assert ex.text.endswith(r.text[sents[n - ex.meta["k"]].start:])
        rand = run(DelRand(percent=25), r)
        if n >= 2:
            [ex] = rand
            assert len(ex.meta["deleted"]) == max(1, math.floor(n * 0.25 + 1e-9))
            assert len(ex.text) < len(r.text)
