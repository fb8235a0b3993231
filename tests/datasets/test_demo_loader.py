"""The built-in ``demo:`` datasets (work without ../shared)."""

from __future__ import annotations

import pytest

from callbluff.datasets import DataError, load


def test_demo_content_keeps_each_prompts_scale() -> None:
    ds = load("demo:content")
    assert ds.task == "content" and len(ds) == 440
    assert {(p.id, p.score_min, p.score_max) for p in ds.prompts.values()} == {("demo-1", 0, 2), ("demo-2", 0, 3)}
    assert all(ds.prompts[r.prompt_id].in_range(r.gold) for r in ds)


def test_demo_splits_partition_the_data() -> None:
    train, test = load("demo:content?split=train"), load("demo:content?split=test")
    ids_train, ids_test = {r.id for r in train}, {r.id for r in test}
    assert not ids_train & ids_test and len(ids_train) + len(ids_test) == 440
    assert len(load("demo:essay?split=test")) == 30 and load("demo:squad").task == "reading"


@pytest.mark.parametrize("spec, message", [("demo:nope", "unknown demo dataset"), ("demo:content?split=dev", "split"),
                                           ("demo:essay?colour=red", "unknown option")])
def test_demo_errors(spec: str, message: str) -> None:
    with pytest.raises(DataError, match=message):
        load(spec)
