"""The edit toolkit: Kumar et al. 2020 Sec. 3.1 size x position selection, units with spans, byte-exact edits."""

from __future__ import annotations

import numpy as np
import pytest

from callbluff.attacks.edits import Edit, Position, SizeCriterion, SizePositionParams, apply, select, units
from callbluff.resources.context import Resources, default_resources

TEXT = "  I like dogs a lot. My dog is called Rex.\n\nHe runs in the park every day.  We play ball. "


def test_size_criterion_is_up_to_percent_but_at_least_one_unit() -> None:
    assert SizeCriterion(percent=10).units(23) == 2
    assert SizeCriterion(percent=25).units(3) == 1  # floor(0.75) -> at least one
    assert SizeCriterion(percent=20).units(10) == 2 and SizeCriterion(percent=15).units(20) == 3
    assert SizeCriterion(percent=100).units(7) == 7 and SizeCriterion(percent=10).units(0) == 0
    with pytest.raises(ValueError):
        SizeCriterion(percent=0)


def test_position_thirds() -> None:
    assert [Position(p).slice_bounds(9) for p in ("beginning", "middle", "end")] == [(0, 3), (3, 6), (6, 9)]
    assert [Position(p).slice_bounds(10) for p in ("beginning", "middle", "end")] == [(0, 3), (3, 6), (6, 10)]


def test_select_stays_in_the_third_and_takes_the_size() -> None:
    for seed in range(20):
        rng = np.random.default_rng(seed)
        idx = select(30, 20, "middle", rng)
        assert len(idx) == 6 and idx == sorted(idx) and all(10 <= i < 20 for i in idx) and len(set(idx)) == 6
        block = select(30, 10, Position.end, rng, contiguous=True)
        assert len(block) == 3 and block == list(range(block[0], block[0] + 3)) and block[0] >= 20
    anywhere = {i for s in range(50) for i in select(30, 10, None, np.random.default_rng(s))}
    assert min(anywhere) < 10 and max(anywhere) >= 20  # None: the whole response
    assert select(0, 15, None, np.random.default_rng(0)) == []
    assert select(2, 15, "beginning", np.random.default_rng(0)) == []  # the first third of 2 units is empty
    assert len(select(6, 100, "end", np.random.default_rng(0))) == 2  # capped at the third's size


def test_select_is_deterministic_given_the_generator() -> None:
    a = select(100, 15, "beginning", np.random.default_rng(3))
    assert a == select(100, 15, "beginning", np.random.default_rng(3))
    assert a != select(100, 15, "beginning", np.random.default_rng(4))


def test_units_have_exact_spans_and_share_one_parse() -> None:
    res = Resources()
    words = units(TEXT, "word", res)
    assert [w.text for w in words[:6]] == ["I", "like", "dogs", "a", "lot", "."]
    assert all(TEXT[w.start:w.end] == w.text for w in words) and [w.index for w in words] == list(range(len(words)))
    sentences = units(TEXT, "sentence", res)
    assert [s.text for s in sentences] == ["I like dogs a lot.", "My dog is called Rex.",
                                           "He runs in the park every day.", "We play ball."]
    assert len(res._parses) == 1  # sentences (and their words) from one cached parse
    assert [(w.start, w.end) for w in words] == list(res.spans(TEXT).words)  # tokenizer alone == the parse's tokens
    chars = units("ab c", "char", res)
    assert [(c.text, c.start) for c in chars] == [("a", 0), ("b", 1), (" ", 2), ("c", 3)]
    with pytest.raises(ValueError, match="unit kind"):
        units(TEXT, "paragraph", res)  # type: ignore[arg-type]


def test_apply_keeps_untouched_text_byte_for_byte() -> None:
    text = "One two  three,\tfour."
    out, meta = apply(text, [Edit(4, 7, "TWO"), Edit(0, 0, ">> "), Edit(16, 20, "")])
    assert out == ">> One TWO  three,\t."
    assert [m["op"] for m in meta] == ["insert", "replace", "delete"]
    for m in meta:
        assert out[slice(*m["output_span"])] == m["inserted"] and text[slice(*m["source_span"])] == m["removed"]
    # everything outside the source spans survives unchanged and in order
    kept = "".join(c for i, c in enumerate(text) if not any(a <= i < b for a, b in ((4, 7), (16, 20))))
    assert out.replace(">> ", "", 1).replace("TWO", "", 1) == kept
    assert apply(text, []) == (text, [])


def test_apply_rejects_overlaps_and_out_of_range() -> None:
    with pytest.raises(ValueError, match="overlap"):
        apply("abcdef", [Edit(0, 3, "x"), Edit(2, 4, "y")])
    with pytest.raises(ValueError, match="outside the text"):
        apply("abc", [Edit(2, 9, "x")])
    with pytest.raises(ValueError, match="not a span"):
        Edit(3, 1, "x")
    assert apply("abc", [Edit(1, 1, "X"), Edit(1, 2, "Y")])[0] == "aXYc"  # touching is fine


def test_size_position_params_round_trip() -> None:
    p = SizePositionParams(percent=20, position="end")
    assert p.position is Position.end and p.size.units(10) == 2
    assert SizePositionParams(**p.model_dump(mode="json")) == p
    with pytest.raises(ValueError):
        SizePositionParams(percent=120)


def test_default_resources_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.resources import context

    monkeypatch.setattr(context, "SPANS_CACHE_SIZE", 8)
    res = default_resources()
    for i in range(context.SPANS_CACHE_SIZE + 5):
        res.spans(f"Sentence number {i}.")
        res.word_spans(f"Word number {i}.")
    assert len(res._parses) == len(res._words) == context.SPANS_CACHE_SIZE
    res.prefetch_spans([f"Batch sentence {i}." for i in range(20)])
    assert len(res._parses) == context.SPANS_CACHE_SIZE
