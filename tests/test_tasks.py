"""Task descriptors (callbluff.tasks): a fifth task is one module, and nothing outside the task modules compares
task names.

This file is that module for a toy third-party task, ``claims`` (fact checking: is a claim true?): its record
type, column mapping, inputs, gold, metric rows, fields, headline, clean quality and kit records. The tests
register it and drive it through the registry, the generic loader, the engine (metrics.json and report.html),
the conformance kit's records and the target output check, without any other file knowing the task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest

from callbluff.api import report_writer
from callbluff.attacks.base import AttackParams, StaticAttack, registered
from callbluff.datasets import load
from callbluff.datasets.generic import ColumnMapper, RecordColumns
from callbluff.engine.inputs import adversarial_input, gold_of, original_input
from callbluff.engine.metrics_rows import compute_metrics
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.metrics.rows import ALL, ERROR_FIELDS
from callbluff.records import Perturbed, Prompt, Record
from callbluff.resources.context import Resources
from callbluff.targets import CallableTarget, Input
from callbluff.tasks import Task, all_tasks, get_task, register_task, task_names, unregister_task
from callbluff.tasks.frames import gold_list
from callbluff.testing import DeterministicTarget, default_records

SRC = Path(__file__).resolve().parents[1] / "src" / "callbluff"


# -- the toy task: everything it needs, in this one module --------------------------------------------

@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    label: str  # "true" / "false"
    meta: Mapping[str, Any] = dc_field(default_factory=dict, compare=False, hash=False)


def _claim(mapper: ColumnMapper, row: Mapping[str, Any], rid: str, where: str, line: int | None,
           meta: dict[str, Any]) -> Claim:
    return Claim(rid, mapper.text(row, "text", where, line), mapper.text(row, "label", where, line), meta)


def claim_rows(examples: pd.DataFrame, originals: pd.DataFrame) -> list[dict[str, Any]]:
    """Per target: clean accuracy; per attack, accuracy on the attacked claims and the % of correctly judged
    claims whose verdict changed (``broken_pct``, the ``same-answer`` failure rate)."""
    rows: list[dict[str, Any]] = []
    for target, o in originals.groupby("target", sort=True):
        gold = {s: gold_list(g)[0] for s, g in zip(o["source_id"], o["gold_answers"])}
        rows.append({"task": "claims", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     "n": len(o), "accuracy": 100.0 * float(np.mean([a == gold[s] for s, a in
                                                                     zip(o["source_id"], o["answer"])]))})
        ex = examples[examples["target"] == target]
        for (attack, params), g in ex.groupby(["attack", "params"], sort=True):
            ok = [(a == gold[s], b == gold[s]) for s, a, b in zip(g["source_id"], g["orig_answer"], g["adv_answer"])]
            judged = [b for a, b in ok if a]
            rows.append({"task": "claims", "attack": attack, "params": params, "prompt": ALL, "target": target,
                         "n": len(g), "accuracy_adv": 100.0 * float(np.mean([b for _, b in ok])),
                         "broken_pct": 100.0 * sum(not b for b in judged) / len(judged) if judged else None,
                         "n_errors_original": int(g["orig_error"].notna().sum()),
                         "n_errors_adversarial": int(g["adv_error"].notna().sum()), "n_errors_generate": 0})
    return rows


class ClaimsTask(Task):
    name = "claims"
    description = "toy fact checking: is the claim true?"
    record_type = Claim
    output = "answer"
    columns = RecordColumns(("id", "text", "label"), ("text", "label"), _claim)
    fields = ("n", "expect", "failure_pct", "accuracy", "accuracy_adv", "broken_pct", *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "accuracy", "accuracy_adv")
    clean_fields = ("accuracy",)
    robust_fields = (("accuracy_adv", "accuracy under attack %"), ("broken_pct", "broken %"))

    def original_input(self, record: Record) -> Input:
        assert isinstance(record, Claim)
        return Input(task=self.name, text=record.text)

    def gold(self, record: Record) -> tuple[float | None, list[str], str]:
        assert isinstance(record, Claim)
        return None, [record.label], "string"

    def metric_rows(self, examples: pd.DataFrame, originals: pd.DataFrame,
                    prompts: Mapping[str, Prompt]) -> list[dict[str, Any]]:
        return claim_rows(examples, originals)

    def sentence(self, row: Mapping[str, Any]) -> str | None:
        return None if row.get("broken_pct") is None else f"{row['broken_pct']:g}% of the verdicts flipped."

    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        return [("accuracy %", f"{clean[0]['accuracy']:g}")] if clean else []

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        return [Claim("kit-k1", "Water boils at 100 degrees at sea level.", "true"),
                Claim("kit-k2", "The moon is made of cheese.", "false")], {}


class _Shout(StaticAttack):
    """Toy benign attack: the claim in capitals (a robust checker keeps its verdict)."""

    name = "TestShoutClaim"
    task = "claims"
    family = "test"
    paper = "test only (a benign change, Sec. 1)"
    description = "test-only: upper-case the claim"
    expect: ClassVar[str] = "same-answer"
    record_type: ClassVar[type] = Claim
    Params = AttackParams

    def generate(self, record: Record, rng: np.random.Generator, res: Resources, prompt: Prompt | None = None,
                 state: Any = None) -> list[Perturbed]:
        assert isinstance(record, Claim)
        return [self.perturbed(record, record.text.upper())]


@pytest.fixture
def claims() -> Iterator[Task]:
    task = register_task(ClaimsTask())
    try:
        with registered(_Shout):
            yield task
    finally:
        unregister_task("claims")


# -- tests --------------------------------------------------------------------------------------------

def test_builtin_tasks_are_registered() -> None:
    assert task_names() == ["content", "essay", "questions", "reading"]
    assert [t.name for t in all_tasks()] == task_names()
    assert {t.name for t in all_tasks() if t.scoring} == {"essay", "content"}
    for t in all_tasks():
        assert set(t.terminal_fields) <= set(t.fields)
        records, prompts = t.kit_records()
        assert records and all(isinstance(r, t.record_type) for r in records)
        assert all(p.task == t.name for p in prompts.values())
        assert t.kit_records()[0] is not records  # fresh objects each call


def test_unknown_task_names_the_known_ones() -> None:
    with pytest.raises(KeyError, match=r"unknown task 'nope'; known tasks: content, essay, questions, reading"):
        get_task("nope")
    ex = pd.DataFrame({"target": []})
    orig = pd.DataFrame({"target": ["t"], "source_id": ["a"]})
    with pytest.raises(KeyError, match="unknown task 'essays'"):
        compute_metrics(ex, orig, {}, "essays")


def test_a_descriptor_is_checked_when_registered() -> None:
    class Bad(ClaimsTask):
        output = "label"  # type: ignore[assignment]

    with pytest.raises(TypeError, match="output must be one of score, answer"):
        register_task(Bad())

    class Other(ClaimsTask):
        pass

    register_task(ClaimsTask())
    try:
        with pytest.raises(ValueError, match="registered twice"):
            register_task(Other())
    finally:
        unregister_task("claims")
    assert "claims" not in task_names()


def test_entry_point_tasks_load_on_the_first_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    import callbluff.tasks.base as base

    loaded: list[str] = []

    class EntryPoint:
        def load(self) -> Task:
            loaded.append("claims")
            return register_task(ClaimsTask())

    monkeypatch.setattr(base, "_PLUGINS_LOADED", False)
    monkeypatch.setattr(base, "entry_points", lambda group: [EntryPoint()] if group == "callbluff.tasks" else [])
    try:
        assert get_task("claims").name == "claims" and loaded == ["claims"]
        assert "claims" in task_names() and loaded == ["claims"]  # loaded once
    finally:
        unregister_task("claims")


def test_a_fifth_task_is_one_module(claims: Task, tmp_path: Path) -> None:
    assert get_task("claims") is claims and "claims" in task_names()
    # the generic loaders map its columns
    data = tmp_path / "claims.jsonl"
    rows = [{"id": "k1", "text": "Paris is in France.", "label": "true"},
            {"id": "k2", "text": "Snow is green.", "label": "false"},
            {"id": "k3", "text": "Cats can fly.", "label": "false"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    ds = load(f"jsonl:{data}?task=claims")
    records = ds.records()
    assert ds.task == "claims" and records[0] == Claim("k1", "Paris is in France.", "true")
    # inputs and gold through the engine's entry points
    ex = _Shout().examples(records[1], np.random.default_rng(0), None)  # type: ignore[arg-type]
    assert original_input(records[1], "claims") == Input("claims", "Snow is green.")
    assert adversarial_input(ex[0], records[1], "claims") == Input("claims", "SNOW IS GREEN.")
    assert gold_of(records[1], "claims") == (None, ["false"], "string")
    # the kit's records and fake target
    kit, _ = default_records("claims")
    assert [r.id for r in kit] == ["kit-k1", "kit-k2"]
    assert DeterministicTarget().predict([Input("claims", "x")])[0].answer is not None

    # end to end: a target fooled by capitals on one of the two claims it judges right
    def judge(inp: Input) -> str:
        return {"Paris is in France.": "true", "Snow is green.": "false", "Cats can fly.": "true",
                "PARIS IS IN FRANCE.": "true", "SNOW IS GREEN.": "true", "CATS CAN FLY.": "true"}[inp.text]

    suite = parse_suite({"name": "claims", "seed": 1, "dataset": {"spec": f"jsonl:{data}?task=claims"},
                         "attack": [{"name": "TestShoutClaim"}]}, source="test")
    out = tmp_path / "run"
    Engine(suite, out, targets={"judge": CallableTarget(judge, pass_input=True, output="auto")},
           on_finished=report_writer(suite)).execute()  # the report as callbluff run writes it
    metrics = json.loads((out / "metrics.json").read_text())
    clean = next(r for r in metrics if r["attack"] == "clean")
    attacked = next(r for r in metrics if r["attack"] == "TestShoutClaim")
    assert clean["task"] == "claims" and clean["accuracy"] == pytest.approx(200 / 3)
    assert attacked["broken_pct"] == 50.0 and attacked["failure_pct"] == 50.0  # same-answer: broken_pct
    assert attacked["expect"] == "same-answer" and attacked["accuracy_adv"] == pytest.approx(100 / 3)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "50% of the verdicts flipped." in page and "accuracy under attack %" in page


def test_no_task_name_switch_outside_the_task_modules() -> None:
    """The acceptance checks of issues 25 and 38: ``grep -rnE 'task (==|in|!=) |\\.task (==|in|!=) ' src/callbluff``
    finds matches only in callbluff/tasks/."""
    pattern = re.compile(r"task (==|in|!=) |\.task (==|in|!=) ")
    hits = [f"{p.relative_to(SRC)}:{n}" for p in sorted(SRC.rglob("*.py")) if "tasks" not in p.relative_to(SRC).parts
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if pattern.search(line)]
    assert hits == []
