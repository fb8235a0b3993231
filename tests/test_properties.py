"""Property tests (hypothesis) for the two keys everything else trusts.

- :func:`callbluff.seeding.record_rng`: the only source of an attack's randomness (DESIGN.md "Randomness").
  Different (seed, record id, attack, params) must give different draws, or every essay with the same
  sentence count gets the same permutation; the same inputs must give the same draws, whatever was drawn
  before. :func:`~callbluff.seeding.prompt_rng` likewise per (prompt, answer index), apart from records.
- :meth:`callbluff.targets.base.Input.key`: the prediction-cache key (and what the cache stores under it). Two inputs that differ in any field
  (task, text, prompt, context; ``None`` vs ``""`` included) must never share a key, or an attacked passage
  gets the clean passage's cached answer.

Draws are compared as 4 x 64-bit integers: two different seeds colliding on all of them has probability
2^-256, so a failure here is a real collision, not bad luck.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from callbluff.records import canonical_json
from callbluff.seeding import derive_seed, prompt_rng, record_rng
from callbluff.targets.base import Candidate, Input, Output
from callbluff.targets.cache import PredictionCache
from callbluff.tasks import task_names

TASKS = tuple(task_names())
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ids = st.text(max_size=30)
seeds = st.integers(min_value=-(2**63), max_value=2**63 - 1)
json_scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**6), max_value=10**6)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=10))
param_values = json_scalars | st.lists(json_scalars, max_size=3)
params = st.dictionaries(st.text(min_size=1, max_size=10), param_values, max_size=4)


def draws(seed: int, record_id: str, attack: str, p: dict[str, Any]) -> list[int]:
    return record_rng(seed, record_id, attack, p).integers(0, 2**63, size=4).tolist()


# ------------------------------------------------------------------------------------------ record_rng


@PROPERTY
@given(seed=seeds, record_id=ids, attack=ids, p=params)
def test_same_inputs_same_draws(seed: int, record_id: str, attack: str, p: dict[str, Any]) -> None:
    first = draws(seed, record_id, attack, p)
    draws(seed, record_id + "x", attack, p)  # drawing for another record in between changes nothing
    assert draws(seed, record_id, attack, dict(reversed(list(p.items())))) == first  # key order irrelevant


@PROPERTY
@given(seed=seeds, a=ids, b=ids, attack=ids, p=params)
@example(seed=0, a="essay-1", b="essay-2", attack="ShuffleSent", p={})
@example(seed=0, a="", b=" ", attack="", p={})
def test_different_record_ids_give_different_draws(seed: int, a: str, b: str, attack: str,
                                                   p: dict[str, Any]) -> None:
    if a == b:
        return
    assert draws(seed, a, attack, p) != draws(seed, b, attack, p)


@PROPERTY
@given(seed=seeds, record_id=ids, attack=ids, p=params, q=params)
@example(seed=0, record_id="r", attack="AddSong", p={"percent": 10}, q={"percent": 15})
@example(seed=0, record_id="r", attack="AddSong", p={"percent": 1}, q={"percent": 1.0})
@example(seed=0, record_id="r", attack="AddSong", p={}, q={"position": None})
def test_different_params_give_different_draws(seed: int, record_id: str, attack: str, p: dict[str, Any],
                                               q: dict[str, Any]) -> None:
    if canonical_json(p) == canonical_json(q):  # the same parameters, however written
        return
    assert draws(seed, record_id, attack, p) != draws(seed, record_id, attack, q)


@PROPERTY
@given(seed=seeds, record_id=ids, a=ids, b=ids, p=params)
@example(seed=0, record_id="r", a="Shuffle", b="ShuffleSent", p={})
def test_different_attacks_give_different_draws(seed: int, record_id: str, a: str, b: str,
                                                p: dict[str, Any]) -> None:
    if a == b:
        return
    assert draws(seed, record_id, a, p) != draws(seed, record_id, b, p)


@PROPERTY
@given(s=seeds, t=seeds, record_id=ids, attack=ids, p=params)
@example(s=0, t=1, record_id="r", attack="Shuffle", p={})
def test_different_seeds_give_different_draws(s: int, t: int, record_id: str, attack: str,
                                              p: dict[str, Any]) -> None:
    if s == t:
        return
    assert draws(s, record_id, attack, p) != draws(t, record_id, attack, p)


@PROPERTY
@given(seed=seeds, x=ids, y=ids, z=ids)
@example(seed=0, x="a", y="b", z="c")
def test_fields_do_not_run_into_each_other(seed: int, x: str, y: str, z: str) -> None:
    # (record "ab", attack "c") and (record "a", attack "bc") are different configurations
    if (x + y, z) == (x, y + z):
        return
    assert draws(seed, x + y, z, {}) != draws(seed, x, y + z, {})


def prompt_draws(seed: int, prompt_id: str, attack: str, p: dict[str, Any], i: int) -> list[int]:
    return prompt_rng(seed, prompt_id, attack, p, i).integers(0, 2**63, size=4).tolist()


@PROPERTY
@given(seed=seeds, prompt_id=ids, attack=ids, p=params, i=st.integers(0, 10**6), j=st.integers(0, 10**6))
@example(seed=0, prompt_id="1", attack="RandomAnswer", p={}, i=0, j=1)
def test_prompt_rng_differs_per_answer_and_repeats(seed: int, prompt_id: str, attack: str, p: dict[str, Any],
                                                   i: int, j: int) -> None:
    # answer i of a prompt-level generator has its own stream, the same however the answers are split
    assert prompt_draws(seed, prompt_id, attack, p, i) == prompt_draws(seed, prompt_id, attack, p, i)
    if i != j:
        assert prompt_draws(seed, prompt_id, attack, p, i) != prompt_draws(seed, prompt_id, attack, p, j)


@PROPERTY
@given(seed=seeds, key=ids, attack=ids, p=params, i=st.integers(0, 100))
def test_prompt_streams_never_equal_record_streams(seed: int, key: str, attack: str, p: dict[str, Any],
                                                   i: int) -> None:
    # a record whose id equals a prompt id still draws differently from that prompt's generated answers
    assert prompt_draws(seed, key, attack, p, i) != draws(seed, key, attack, p)


@PROPERTY
@given(seed=seeds, a=ids, b=ids, attack=ids, p=params)
def test_prompt_rng_differs_per_prompt(seed: int, a: str, b: str, attack: str, p: dict[str, Any]) -> None:
    if a != b:
        assert prompt_draws(seed, a, attack, p, 0) != prompt_draws(seed, b, attack, p, 0)


def test_derive_seed_is_pinned() -> None:
    # the derivation is part of the reproducibility promise: same seed, same bytes across versions.
    # sha256('[7,"r1","Shuffle",{"tokenizer":"spacy"}]') first 16 bytes, big-endian
    import hashlib

    text = canonical_json([7, "r1", "Shuffle", {"tokenizer": "spacy"}])
    assert text == '[7,"r1","Shuffle",{"tokenizer":"spacy"}]'
    expected = int.from_bytes(hashlib.sha256(text.encode()).digest()[:16], "big")
    assert derive_seed(7, "r1", "Shuffle", {"tokenizer": "spacy"}) == expected


# ------------------------------------------------------------------------------------------ Input.key

texts = st.text(max_size=40)
optional = st.none() | st.text(max_size=20)
inputs = st.builds(Input, task=st.sampled_from(TASKS), text=texts, prompt_id=optional, context=optional)
FIELDS = ("task", "text", "prompt_id", "context")


@PROPERTY
@given(a=inputs, b=inputs)
def test_key_equal_exactly_when_inputs_equal(a: Input, b: Input) -> None:
    assert (a.key() == b.key()) == (a == b)
    assert a.key() == Input(a.task, a.text, a.prompt_id, a.context).key()  # a pure function of the fields


@pytest.mark.parametrize("field", FIELDS)
@PROPERTY
@given(data=st.data(), base=inputs)
def test_changing_any_one_field_changes_the_key(field: str, data: st.DataObject, base: Input) -> None:
    strategy = {"task": st.sampled_from(TASKS), "text": texts, "prompt_id": optional, "context": optional}[field]
    value = data.draw(strategy.filter(lambda v: v != getattr(base, field)), label=field)
    other = dataclasses.replace(base, **{field: value})
    assert other.key() != base.key()


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (Input("reading", "q", context=None), Input("reading", "q", context="")),  # None vs empty
        (Input("content", "t", prompt_id=None), Input("content", "t", prompt_id="")),
        (Input("content", "t", prompt_id="1"), Input("content", "t", prompt_id="2")),  # prompt alone
        (Input("reading", "Who?", context="clean passage"),
         Input("reading", "Who?", context="clean passage Distractor.")),  # the attacked passage
        (Input("reading", "q", prompt_id="ab", context=None), Input("reading", "q", prompt_id="a", context="b")),
        (Input("reading", "q", prompt_id=None, context="x"), Input("reading", "q", prompt_id="x", context=None)),
        (Input("essay", "t", prompt_id="1"), Input("content", "t", prompt_id="1")),  # task alone
    ],
)
def test_key_edge_cases(a: Input, b: Input) -> None:
    assert a.key() != b.key()


def test_key_is_pinned() -> None:
    # the cache key is part of every user's prediction cache: changing its derivation silently re-asks every
    # target. SHA-256 of the length-prefixed fields in the order task, prompt_id, context, text; None is "\0N"
    assert Input("content", "hello", "1", None).key() == (
        "89b34ed7d93640feecb5b8db2ff27a31df2a07ba0c8ff9c5186b7975cf8ec69b")
    import hashlib

    assert Input("reading", "Who?", None, "ctx").key() == hashlib.sha256(
        b"\x00S7:reading" + b"\x00N" + b"\x00S3:ctx" + b"\x00S4:Who?").hexdigest()


def test_key_of_text_with_a_lone_surrogate() -> None:
    # JSON allows "\ud800"; such text must still get a key (and not the same as its neighbours')
    lone = json.loads('"a\\ud800b"')
    assert Input("essay", lone).key() != Input("essay", "a\ufffdb").key()
    assert Input("essay", lone).key() == Input("essay", lone).key()


# ------------------------------------------------------------------------------------------ Output / cache

candidates = st.lists(st.builds(Candidate, text=st.text(max_size=10),
                                score=st.floats(allow_nan=False, allow_infinity=False)), max_size=3)
outputs = st.builds(Output, score=st.none() | st.floats(allow_nan=False, allow_infinity=False),
                    answer=st.none() | st.text(max_size=20), candidates=candidates.map(tuple),
                    error=st.none() | st.text(min_size=1, max_size=20))


@PROPERTY
@given(out=outputs)
def test_output_round_trips_through_its_dict(out: Output) -> None:
    assert Output.from_dict(json.loads(json.dumps(out.to_dict()))) == out


@PROPERTY
@given(items=st.dictionaries(st.text(min_size=1, max_size=8), outputs.filter(lambda o: o.error is None),
                             max_size=5))
def test_cache_returns_exactly_what_was_stored(tmp_path_factory: pytest.TempPathFactory,
                                               items: dict[str, Output]) -> None:
    with PredictionCache(tmp_path_factory.mktemp("cache") / "p.sqlite") as cache:
        assert cache.put_many("fp", items) == len(items)
        assert cache.get_many("fp", list(items) + ["absent"]) == items
        assert cache.get_many("other-fingerprint", list(items)) == {}
        assert cache.count("fp") == len(items) and cache.count() == len(items)
