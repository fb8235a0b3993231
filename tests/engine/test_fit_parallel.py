"""The fit step on several workers: configurations of different attack modules fit side by side, with the same
states (hence the same examples) as in one process, and the same failure policy."""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from callbluff.attacks.base import AttackParams, PromptGenerator
from callbluff.attacks.essay import knowledge
from callbluff.datasets import load
from callbluff.engine.executor import LocalExecutor
from callbluff.engine.generate import AttackSpec, Generation
from callbluff.engine.work import FitTask, fit_groups, fit_task, fit_tasks
from callbluff.records import Perturbed, Prompt, ScoredResponse
from callbluff.resources import context
from callbluff.resources.context import Resources
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

    def map_beside(self, fn: Any, items: Any) -> Any:
        items = list(items)
        if fn.__name__ == "fit_task":
            self.fit_tasks += len(items)
        return super().map_beside(fn, items)


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


# -- a fit that parses: split per prompt, its parses sent back to the engine's process --------------------

ESSAY = ("The {w} of the town grew every year. Students in the {w} club wrote letters to the mayor about "
         "the {w}. Their teacher said the {w} needed a new library and a larger park for the children.")
TOPICS = {"1": ("library", "garden", "museum"), "2": ("bridge", "river", "harbor"), "3": ("forest", "orchard",
                                                                                       "meadow")}


def _essays() -> tuple[list[ScoredResponse], dict[str, Prompt]]:
    prompts = {pid: Prompt(id=pid, task="essay", text=f"Write about the {words[0]} of your town.", score_max=6)
               for pid, words in TOPICS.items()}
    records = [ScoredResponse(id=f"e{pid}{i}", prompt_id=pid, text=ESSAY.format(w=w), scores=(3.0,))
               for pid, words in TOPICS.items() for i, w in enumerate(words)]
    return records, prompts


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Fits that really parse: no fit cache, no remembered noun-phrase counts; ``fresh()`` empties this
    process's Resources (the parse caches)."""
    monkeypatch.setenv("CALLBLUFF_FIT_CACHE", "0")

    def reset() -> None:
        monkeypatch.setattr(knowledge, "_PHRASE_COUNTS", OrderedDict())
        monkeypatch.setattr(context, "_DEFAULT", None)

    reset()
    return reset


def _wiki(tmp_path: Path) -> AttackSpec:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in {"Library": "A library is a collection of books. Public libraries serve a town.",
                       "River": "A river is a natural stream of water. A bridge crosses the river.",
                       "Forest": "A forest is a large area covered by trees. An orchard grows fruit trees."}.items():
        (corpus / f"{name}.txt").write_text(text, encoding="utf-8")
    return AttackSpec.make("AddWikiRelated", {"corpus": str(corpus), "n_phrases": 3, "docs_per_phrase": 1})


def test_fit_tasks_split_a_parsing_group_per_prompt_in_two_waves(tmp_path: Path) -> None:
    records, prompts = _essays()
    wiki, babel = _wiki(tmp_path), AttackSpec.make("BabelGen", {"count": 1})
    waves = fit_tasks([babel, wiki], records, prompts, origin=1)
    # first wave: the parsing group's first prompt (here) beside the whole groups; then its other prompts,
    # the longest texts first (prompt 3's words are longer than prompt 2's)
    assert [[([s.name for s in t.specs], list(t.prompts)) for t in wave] for wave in waves] == [
        [(["AddWikiRelated"], ["1"]), (["BabelGen"], ["1", "2", "3"])],
        [(["AddWikiRelated"], ["3"]), (["AddWikiRelated"], ["2"])]]
    tasks = [t for wave in waves for t in wave]
    assert [len(t.records) for t in tasks] == [3, 9, 3, 3] and all(t.origin == 1 for t in tasks)
    assert fit_tasks([babel], records, prompts) == [[FitTask([babel], records, prompts)]]


def test_a_fit_run_away_from_the_engine_sends_its_parses_back(tmp_path: Path, fresh: Any) -> None:
    records, prompts = _essays()
    task = fit_tasks([_wiki(tmp_path)], records, {"2": prompts["2"]}, origin=os.getpid())[0][0]
    states, errors, parses = fit_task(task)
    assert errors == [] and parses is None  # run in the engine's process: its parses are already here
    fresh()
    away = FitTask(task.specs, task.records, task.prompts, origin=os.getpid() + 1)
    states_away, _, parses = fit_task(away)
    assert states_away == states and parses is not None
    texts = [r.text for r in task.records]
    fresh = Resources()
    assert fresh.import_dependency_docs(parses) == len(parses.unlemmatized) >= len(texts)
    assert set(texts) <= set(fresh.dependency_texts())
    assert fresh.import_dependency_docs(parses) == 0  # nothing replaced


def test_the_engine_keeps_every_parse_of_a_fit_on_two_workers(tmp_path: Path, fresh: Any) -> None:
    records, prompts = _essays()
    specs = [_wiki(tmp_path), AttackSpec.make("BabelGen", {"count": 1})]
    one = Generation(specs, prompts, seed=0)
    one.fit(records)
    fresh()
    with LocalExecutor(2) as ex:
        two = Generation(specs, prompts, seed=0, executor=ex)
        two.fit(records)
    assert list(two.states.items()) == list(one.states.items())  # same states, same order
    assert {r.text for r in records} <= set(context.default_resources().dependency_texts())


def test_dependency_parses_travel_unchanged() -> None:
    res = Resources()
    texts = ["Anita is going to the park for a walk.", "The students' letters reached the mayor. He replied.",
             "Bridges cross rivers."]
    res.dependency_docs(texts[:2])
    res.dependency_doc(texts[2], lemmas=False)
    other = Resources()
    assert other.import_dependency_docs(res.export_dependency_docs([*texts, "not parsed"])) == 3

    def view(doc: Any) -> list[Any]:
        return ([(t.text, t.tag_, t.pos_, t.dep_, t.head.i, t.lemma_, str(t.morph), t.is_sent_start) for t in doc]
                + [c.text for c in doc.noun_chunks] + [s.text for s in doc.sents])

    for text in texts:  # the third was sent without lemmas: asking for them lemmatizes it there as here
        assert view(other.dependency_doc(text)) == view(res.dependency_doc(text))
