"""CachedTarget: cache consulted first, misses batched, answers stored per batch, errors never stored."""

from __future__ import annotations

import sqlite3

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


def test_each_batch_is_committed_before_the_next_is_sent(tmp_path: Path) -> None:
    """Durability (issue 8): when batch k+1 reaches the target, batch k is already in SQLite (read through
    another connection, as a resumed process would)."""
    cache = PredictionCache(tmp_path / "c.sqlite")
    seen_in_cache: list[int] = []

    def fn(texts: list[str]) -> list[float]:
        with sqlite3.connect(tmp_path / "c.sqlite") as other:
            seen_in_cache.append(other.execute("select (select count(*) from predictions) + (select count(*) from journal)").fetchone()[0])
        return [float(len(t)) for t in texts]

    target = CachedTarget(CallableTarget(fn, batched=True, fingerprint="b"), cache, batch_size=4)
    target.predict(ask([f"t{i}" for i in range(10)]))
    assert seen_in_cache == [0, 4, 8]


class Streaming:
    """A streaming target (like HTTP/command): checks, before answering input k, that the k answers it already
    handed over are committed."""

    fingerprint = "streaming"

    def __init__(self, db: Path) -> None:
        self.db = db
        self.committed_before: list[int] = []

    def predict(self, inputs: Sequence[Input]) -> list[Output]:  # pragma: no cover - streaming is preferred
        raise AssertionError("CachedTarget should use predict_stream")

    def predict_stream(self, inputs: Sequence[Input], emit) -> None:
        for k, inp in enumerate(inputs):
            with sqlite3.connect(self.db) as other:
                self.committed_before.append(other.execute("select (select count(*) from predictions) + (select count(*) from journal)").fetchone()[0])
            emit(k, Output(score=float(len(inp.text))) if inp.text != "bad" else Output(error="nope"))


def test_streaming_target_outputs_are_committed_one_by_one(tmp_path: Path) -> None:
    cache = PredictionCache(tmp_path / "c.sqlite")
    inner = Streaming(tmp_path / "c.sqlite")
    target = CachedTarget(inner, cache, batch_size=3)
    outs = target.predict(ask(["a", "bb", "bad", "dddd", "eeeee"]))
    assert [o.score for o in outs] == [1.0, 2.0, None, 4.0, 5.0] and outs[2].error == "nope"
    assert inner.committed_before == [0, 1, 2, 2, 3]  # errors are never committed
    assert target.stats.calls == 5 and cache.count("streaming") == 4


def test_output_check_runs_before_caching_and_on_cache_hits(tmp_path: Path) -> None:
    from callbluff.records import Prompt
    from callbluff.targets.validate import OutputCheck

    prompts = {"7": Prompt("7", "content", score_min=0, score_max=3)}
    answers = {"ok": 2, "str": "3", "high": 99, "word": "three"}
    cache = PredictionCache(tmp_path / "c.sqlite")
    inner = CallableTarget(lambda t: answers[t], fingerprint="v")
    target = CachedTarget(inner, cache, check=OutputCheck("score", prompts=prompts))
    outs = target.predict(ask(list(answers)))
    assert [o.score for o in outs] == [2.0, 3.0, None, None]
    assert outs[2].error.startswith("score 99 outside 0-3 for prompt 7")
    assert outs[3].error == "expected a score, got the answer 'three'"
    assert cache.count("v") == 2  # only valid outputs are cached
    clip = CachedTarget(inner, cache, check=OutputCheck("score", out_of_range="clip", prompts=prompts))
    assert [o.score for o in clip.predict(ask(["ok", "high"]))] == [2.0, 3.0]
    assert cache.count("v") == 3
    # the same cache read back under the strict check: the stored 99 is refused again, without a call
    strict = CachedTarget(CallableTarget(lambda t: 1 / 0, fingerprint="v"), cache,
                          check=OutputCheck("score", prompts=prompts))
    again = strict.predict(ask(["high"]))
    assert again[0].error.startswith("score 99 outside") and strict.stats.calls == 0
