"""How the engine shares work among processes: the fit step beside the workers (``Executor.map_beside``),
tasks of near-equal text (``split_weighted``), two chunks in flight on several workers. None of it may change
what is generated."""

from __future__ import annotations

import os
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from callbluff.datasets import load
from callbluff.engine.executor import LocalExecutor
from callbluff.engine.generate import AttackSpec, ChunkId, Generation
from callbluff.iterutil import split_weighted
from callbluff.records import ScoredResponse, record_size
from helpers.data import write_answers


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_map_beside_runs_the_first_item_here_and_the_rest_on_workers_in_order() -> None:
    with LocalExecutor(2) as ex:
        got = ex.map_beside(_pid_after, [0.3, 0.3, 0.0, 0.0, 0.0])
    here = os.getpid()
    assert got[0] == here
    assert any(pid != here for pid in got[1:])  # a worker took some
    assert ex._pool is None  # its workers are gone: a later pool forks from this process afresh
    with LocalExecutor(1) as one:
        assert one.map_beside(_pid_after, [0.0, 0.0]) == [here, here]


def test_map_beside_takes_the_items_no_worker_started() -> None:
    """One worker, busy with a long item: this process runs the first item and then the last ones itself."""
    with LocalExecutor(2) as ex:
        got = ex.map_beside(_pid_after, [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    here = os.getpid()
    assert got[0] == here and got[1] != here and got[-1] == here


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 1000), max_size=60), st.integers(1, 12))
def test_split_weighted_keeps_order_and_fills_every_part(weights: list[int], parts: int) -> None:
    items = list(enumerate(weights))
    got = split_weighted(items, parts, lambda x: x[1])
    assert [x for part in got for x in part] == items
    assert all(len(part) for part in got)
    assert len(got) == min(parts, len(items))


def test_split_weighted_balances_text_not_counts() -> None:
    equal = split_weighted(list(range(10)), 3, lambda _: 1)
    assert [len(p) for p in equal] in ([3, 4, 3], [3, 3, 4], [4, 3, 3])
    long_tail = [1] * 30 + [10] * 3  # the long ones at the end, as in a dataset sorted by prompt
    got = split_weighted(long_tail, 4, lambda w: w)
    totals = [sum(p) for p in got]
    assert max(totals) <= 20 and [len(p) for p in got][0] > 10


def test_record_size_counts_the_text_fields() -> None:
    r = ScoredResponse(id="a1", prompt_id="p", text="four", scores=(2.0,))
    assert record_size(r) == len("a1") + len("p") + len("four")


def test_two_chunks_in_flight_give_the_examples_of_one_process(tmp_path: Path) -> None:
    ds = load(f"jsonl:{write_answers(tmp_path / 'a.jsonl', n=90)}")
    specs = [AttackSpec.make("Shuffle", {"min_score": 0}), AttackSpec.make("RandomChars", {"count": 3})]

    def run(workers: int, ahead: bool) -> list[tuple[ChunkId, list[str]]]:
        with LocalExecutor(workers) as ex:
            gen = Generation(specs, ds.prompts, seed=5, executor=ex, chunk_size=7)
            gen.fit(list(ds))
            return [(c.index, [e.id + e.text for e in c.examples]) for c in gen.chunks(list(ds), ahead=ahead)]

    one = run(1, ahead=False)
    assert len(one) > 13 and [i for i, _ in one[:13]] == [ChunkId.records(n) for n in range(13)]
    assert [i for i, _ in one[13:]] == [ChunkId.generator(n) for n in range(len(one) - 13)]  # their own numbers
    assert run(2, ahead=True) == one
