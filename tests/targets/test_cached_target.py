"""CachedTarget: cache consulted first, misses batched, answers stored per batch, errors never stored."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from callbluff.targets import CachedTarget, CallableTarget, Input, Output, PredictionCache


class Counting:
    """A scorer that records every text it is asked about (a real target for call counting)."""

    def __init__(self) -> None:
        self.seen: list[str] = []

    def __call__(self, texts: list[str]) -> list[float]:
        self.seen.extend(texts)
        out = []
        for t in texts:
            if "bad" in t:
                raise ValueError(f"cannot score {t!r}")
            out.append(float(len(t.split()) % 4))
        return out


def ask(texts: Sequence[str]) -> list[Input]:
    return [Input("content", t, prompt_id="7") for t in texts]


def test_hits_misses_duplicates_and_order(tmp_path: Path):
    fn = Counting()
    inner = CallableTarget(fn, batched=True, fingerprint="counting-v1")
    cache = PredictionCache(tmp_path / "p.sqlite")
    t = CachedTarget(inner, cache, batch_size=3)
    texts = [f"w {'x ' * i}" for i in range(8)] + ["w ", "w x "]  # two duplicates of earlier texts
    outs = t.predict(ask(texts))
    assert [o.score for o in outs] == [float(len(x.split()) % 4) for x in texts]
    assert sorted(fn.seen) == sorted(set(texts))  # each distinct text asked once
    assert t.stats.inputs == 8 and t.stats.calls == 3 and t.stats.cache_hits == 2 and t.stats.errors == 0
    assert cache.count("counting-v1") == 8
    # mixed: some cached, some new; order must follow the inputs
    fn.seen.clear()
    mixed = ["new one here", texts[3], "new two", texts[0]]
    outs2 = t.predict(ask(mixed))
    assert [o.score for o in outs2] == [3.0, float(len(texts[3].split()) % 4), 2.0, float(len(texts[0].split()) % 4)]
    assert fn.seen == ["new one here", "new two"]
    assert t.stats.cache_hits == 4 and t.stats.inputs == 10
    # a new run over the same cache file calls nothing
    fn.seen.clear()
    t2 = CachedTarget(CallableTarget(fn, batched=True, fingerprint="counting-v1"), PredictionCache(cache.path))
    assert [o.score for o in t2.predict(ask(texts))] == [o.score for o in outs]
    assert fn.seen == [] and t2.stats.calls == 0 and t2.stats.cache_hits == len(texts)
    # a different model version (fingerprint) does not reuse those answers
    t3 = CachedTarget(CallableTarget(fn, batched=True, fingerprint="counting-v2"), cache)
    t3.predict(ask(texts[:2]))
    assert fn.seen == texts[:2]


def test_errors_are_returned_not_cached_and_retried_later(tmp_path: Path):
    fn = Counting()
    cache = PredictionCache(tmp_path / "p.sqlite")
    t = CachedTarget(CallableTarget(fn, batched=True, fingerprint="c"), cache, batch_size=4)
    outs = t.predict(ask(["good one", "bad one", "good two words"]))
    assert outs[0].score == 2.0 and outs[2].score == 3.0
    assert outs[1] == Output(error="ValueError: cannot score 'bad one'")
    assert cache.count("c") == 2 and t.stats.errors == 1
    fn.seen.clear()
    again = t.predict(ask(["good one", "bad one", "good two words"]))
    assert fn.seen == ["bad one"] and again[1].error is not None  # only the failure is asked again


class Interrupted(BaseException):
    """Stands in for the process being killed mid-run."""


def test_answers_are_stored_batch_by_batch(tmp_path: Path):
    calls = {"n": 0}

    def dies_on_third_batch(texts: list[str]) -> list[float]:
        calls["n"] += 1
        if calls["n"] == 3:
            raise Interrupted()
        return [1.0] * len(texts)

    cache = PredictionCache(tmp_path / "p.sqlite")
    t = CachedTarget(CallableTarget(dies_on_third_batch, batched=True, fingerprint="d"), cache, batch_size=4)
    with pytest.raises(Interrupted):
        t.predict(ask([f"text {i}" for i in range(20)]))
    assert cache.count("d") == 8  # the two finished batches survived the "kill"


class Misbehaving:
    fingerprint = "misbehaving"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        if self.mode == "raise":
            raise RuntimeError("backend exploded")
        return [Output(score=1.0)] * (len(inputs) - 1)


@pytest.mark.parametrize("mode, cause", [("raise", "target raised RuntimeError: backend exploded"),
                                         ("short", "target returned 2 outputs for 3 inputs")])
def test_misbehaving_targets_become_error_rows(tmp_path: Path, mode: str, cause: str):
    cache = PredictionCache(tmp_path / "p.sqlite")
    t = CachedTarget(Misbehaving(mode), cache)
    outs = t.predict(ask(["a", "b", "c"]))
    assert [o.error for o in outs] == [cause] * 3 and cache.count() == 0


def test_predict_iter_streams_a_generator(tmp_path: Path):
    fn = Counting()
    t = CachedTarget(CallableTarget(fn, batched=True, fingerprint="s"), PredictionCache(tmp_path / "p.sqlite"),
                     batch_size=5)
    gen = (Input("content", "w " * (i % 6)) for i in range(23))
    scores = [o.score for o in t.predict_iter(gen, chunk_size=7)]
    assert scores == [float(len(("w " * (i % 6)).split()) % 4) for i in range(23)]
    assert len(fn.seen) == 6  # six distinct texts across chunks


def test_without_a_cache_it_still_batches(tmp_path: Path):
    fn = Counting()
    t = CachedTarget(CallableTarget(fn, batched=True, fingerprint="n"), None, batch_size=2)
    assert [o.score for o in t.predict(ask(["a", "a b", "a b c"]))] == [1.0, 2.0, 3.0]
    assert t.stats.calls == 2


def test_write_behind_caches_everything_and_never_repeats_a_call(tmp_path) -> None:
    from callbluff.targets import CachedTarget, CallableTarget, Input, PredictionCache

    calls: list[str] = []

    def fn(text: str) -> float:
        calls.append(text)
        return float(len(text))

    cache = PredictionCache(tmp_path / "c.sqlite")
    target = CachedTarget(CallableTarget(fn), cache, batch_size=4, write_behind=True)
    inputs = [Input("content", f"t{i}", "p") for i in range(50)]
    first = target.predict(inputs)
    again = target.predict(inputs)  # may run while writes are pending: answered from memory, not re-called
    target.close()
    assert [o.score for o in first] == [o.score for o in again] == [float(len(f"t{i}")) for i in range(50)]
    assert len(calls) == 50 and target.stats.cache_hits == 50
    assert cache.count(target.fingerprint) == 50
