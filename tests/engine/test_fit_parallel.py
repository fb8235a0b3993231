"""The fit step on several workers: configurations of different attack modules fit side by side, with the same
states (hence the same examples) as in one process, and the same failure policy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from callbluff.attacks.base import AttackParams, PromptGenerator
from callbluff.datasets import load
from callbluff.engine.executor import LocalExecutor
from callbluff.engine.generate import AttackSpec, Generation
from callbluff.engine.work import fit_groups
from callbluff.records import Perturbed, Prompt, ScoredResponse
from helpers import shared_path


def _sas() -> Any:
    path = shared_path("data", "asap-sas", "public_leaderboard_rel_2.tsv.gz")
    return load(f"asap-sas:{path}?prompts=1,2")


SPECS = [AttackSpec.make("PromptWords", {"count": 15, "n": 2}), AttackSpec.make("RandomChars", {"count": 10}),
         AttackSpec.make("PromptChars", {"count": 10})]


def _examples(workers: int) -> tuple[list[str], set[Any]]:
    ds = _sas()
    records = list(ds)
    with LocalExecutor(workers) as ex:
        gen = Generation(SPECS, ds.prompts, seed=3, executor=ex)
        gen.fit(records)
        texts = [e.text for chunk in gen.chunks(records, ahead=False) for e in chunk.examples]
        return texts, set(gen.states)


def test_fits_on_two_workers_give_the_examples_of_one_process() -> None:
    assert [len(g) for g in fit_groups(SPECS)] == [2, 1]  # PromptWords + PromptChars share a module
    one, keys_one = _examples(1)
    two, keys_two = _examples(2)
    assert len(one) == 2 * (15 + 10 + 10)
    assert one == two and keys_one == keys_two


class _PickyParams(AttackParams):
    count: int = 2


class Picky(PromptGenerator):
    """A generator that cannot learn from prompt 2 (for the failure policy)."""

    name = "Picky"
    task = "content"
    family = "test"
    paper = "test"
    description = "test generator"
    Params = _PickyParams
    record_type = ScoredResponse

    def fit(self, records: Any, prompt: Prompt | None, res: Any) -> Any:
        if prompt is not None and prompt.id == "2":
            raise ValueError("prompt 2 has nothing to learn from")
        return {"n": len(records)}

    def generate_one(self, index: int, prompt: Prompt, state: Any, rng: np.random.Generator,
                     res: Any) -> Perturbed | None:
        return self.generated(prompt, f"answer {index} of {state['n']}", index)


@pytest.mark.parametrize("workers", [1, 2])
def test_a_prompt_a_configuration_cannot_fit_is_reported_the_same_way(workers: int) -> None:
    ds = _sas()
    specs = [AttackSpec.of(Picky()), AttackSpec.make("RandomChars", {"count": 2})]
    notes: list[tuple[str, str | None, str]] = []
    with LocalExecutor(workers) as ex:
        gen = Generation(specs, ds.prompts, seed=0, executor=ex)
        gen.fit(list(ds), on_error=lambda s, p, e: notes.append((s.name, p, f"{type(e).__name__}: {e}")))
        assert notes == [("Picky", "2", "ValueError: prompt 2 has nothing to learn from")]
        assert (specs[0], "1") in gen.states and (specs[0], "2") not in gen.states
        with pytest.raises(ValueError, match="nothing to learn"):
            Generation(specs, ds.prompts, seed=0, executor=ex).fit(list(ds))


class _Counting(LocalExecutor):
    """A two-process executor that counts the fit tasks it is given."""

    def __init__(self) -> None:
        super().__init__(2)
        self.fit_tasks = 0

    def map(self, fn: Any, items: Any) -> Any:
        items = list(items)
        if fn.__name__ == "fit_task":
            self.fit_tasks += len(items)
        return super().map(fn, items)


def test_a_large_dataset_fits_in_this_process(monkeypatch: pytest.MonkeyPatch) -> None:
    ds = _sas()
    records = list(ds)
    with _Counting() as ex:
        Generation(SPECS, ds.prompts, seed=3, executor=ex).fit(records)
        assert ex.fit_tasks == 2  # one task per attack module
        monkeypatch.setattr("callbluff.engine.generate.PARALLEL_FIT_MAX_RECORDS", len(records) - 1)
        gen = Generation(SPECS, ds.prompts, seed=3, executor=ex)
        gen.fit(iter(records))  # a one-shot iterable is read once
        assert ex.fit_tasks == 2 and len(gen.states) == len(SPECS) * len(ds.prompts)
