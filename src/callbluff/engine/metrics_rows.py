"""metrics.json rows from a run's tables: one row per (task, attack, params, prompt, target).

Each row carries the identifying fields plus the metric fields of :mod:`callbluff.metrics` for its task:
scoring tasks get Kumar et al.'s overstability statistics (and ``arr`` for content scoring, Ding et al.)
next to the target's clean ``qwk`` on the same prompt; reading comprehension gets ``em``/``f1`` on the
attacked questions and worst-case ``em_adv``/``f1_adv`` (Jia & Liang: a question counts as failed if any
of its adversarial versions fools the model); open-domain questions get success rate and ranking metrics.
A row with ``attack = "clean"`` holds the clean-data metrics alone. Rows for ``prompt = "all"`` pool the
prompts: scores are rescaled to 0-100 of each prompt's range before pooling, and ``qwk`` is the mean of the
per-prompt values (``qwk_mean_over_prompts``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import pandas as pd

from callbluff.attacks.base import get_attack
from callbluff.engine.rows import EXAMPLE_COLUMNS, ORIGINAL_COLUMNS
from callbluff.engine.verdicts import Judge
from callbluff.metrics.expectations import VerdictTallies, failure_unit
from callbluff.metrics.rows import ALL, metric_row
from callbluff.metrics.streaming import EXAMPLE_METRIC_COLUMNS, ORIGINAL_METRIC_COLUMNS
from callbluff.records import Prompt, Task, canonical_json
from callbluff.tasks import MetricAccumulator, get_task


def _attach_generate_errors(rows: list[dict[str, Any]], gen_errors: Sequence[Mapping[str, Any]],
                            targets: Sequence[str], task: Task, pooled: bool) -> None:
    """Count attack failures (generation or search) as ``n_errors_generate`` in the row of their (target,
    attack, params, prompt), and in the pooled ``all`` row where one exists. A configuration that failed on every
    record of a prompt still gets that row, with ``n = 0``. ``pooled`` tasks (reading, questions) have only
    ``all`` rows. Generation errors concern every target; search errors name theirs."""
    index = {(r["target"], r["attack"], r["params"], r["prompt"]): r for r in rows}
    for e in gen_errors:
        params = canonical_json(e.get("params") or {})
        prompt = ALL if pooled or e.get("prompt_id") is None else str(e["prompt_id"])
        for target in ([e["target"]] if e.get("target") else targets):
            key = (target, e["attack"], params, prompt)
            if key not in index:
                index[key] = {"task": task, "attack": e["attack"], "params": params, "prompt": prompt,
                              "target": target, "n": 0, "n_errors_original": 0, "n_errors_adversarial": 0,
                              "n_errors_generate": 0}
                rows.append(index[key])
            index[key]["n_errors_generate"] += 1
            if prompt != ALL and (target, e["attack"], params, ALL) in index:
                index[(target, e["attack"], params, ALL)]["n_errors_generate"] += 1


def compute_metrics(examples: pd.DataFrame, originals: pd.DataFrame, prompts: Mapping[str, Prompt],
                    task: Task, gen_errors: Sequence[Mapping[str, Any]] = (),
                    expectations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """All metric rows of a run (pure: tables in, rows out). ``gen_errors`` are the attack failures
    (errors.jsonl stages ``generate`` / ``search``), counted as ``n_errors_generate`` in their rows.
    ``expectations`` maps attack names to their declared expectation (attack contract v2; default: the
    registered attack's ``expect``); each attack row gets ``expect`` and ``failure_pct`` from it."""
    spec = get_task(task)
    if not len(originals):
        return []
    rows = spec.metric_rows(examples, originals, prompts)
    tallies = verdict_tallies(task, expectations)
    if len(examples):
        if "verdict" not in examples.columns:  # rows made by hand: judged here as the engine judges them
            types = dict(zip(originals["source_id"].astype(str), originals.get("answer_type", [])))
            expect = {a: expectation_of(a, expectations) for a in set(examples["attack"])}
            judge = Judge(task, expect, prompts)
            examples = examples.assign(verdict=judge.frame(examples, types))
        tallies.add(examples)
    return _finish_rows(rows, task, sorted(set(originals["target"])), gen_errors, expectations, tallies)


class Parts(Protocol):
    """A run's chunk parts, read column-wise (:class:`callbluff.engine.store.RunDir` is one)."""

    def frames(self, kind: str, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """Each finished chunk's ``kind`` part (``examples`` / ``originals``), only ``columns``, in chunk order."""
        ...

    def frame(self, kind: str, columns: Sequence[str], target: str) -> pd.DataFrame:
        """The ``columns`` of every ``kind`` row of ``target``, in chunk order."""
        ...


QA_EXAMPLE_COLUMNS = [c for c in EXAMPLE_COLUMNS if c not in ("original_text", "adversarial_text")]


def stream_metrics(parts: Parts, prompts: Mapping[str, Prompt], task: Task,
                   gen_errors: Sequence[Mapping[str, Any]] = (),
                   expectations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`compute_metrics` of a run from its parts, without holding the run's rows in memory.

    Tasks with a streaming accumulator (scoring: :class:`~callbluff.metrics.streaming.ScoringAccumulator`)
    stream every chunk's metric columns (never the texts) into it: memory grows with the number of (target,
    attack, params, prompt) groups, not of records. Reading comprehension and open-domain questions need each
    question's versions together (worst case over adversarial versions, Jia & Liang; per-question ranks), so
    their rows are built one target at a time from that target's rows, every column but the texts: memory
    grows with one target's questions x attack configurations (SQuAD dev: ~10k questions), not with texts.
    The rows are the same as :func:`compute_metrics` on the merged tables (tests compare them)."""
    acc = get_task(task).accumulator(prompts)
    if acc is not None:
        targets: set[str] = set()
        tallies = verdict_tallies(task, expectations)
        for o in parts.frames("originals", ORIGINAL_METRIC_COLUMNS):
            acc.add_originals(o)
            targets.update(o["target"])
        for x in parts.frames("examples", list(dict.fromkeys([*EXAMPLE_METRIC_COLUMNS, *VerdictTallies.COLUMNS]))):
            acc.add_examples(x)
            tallies.add(x)
        return accumulated_metrics(acc, targets, gen_errors, expectations, tallies)
    targets = {t for o in parts.frames("originals", ["target"]) for t in o["target"]}
    return qa_metrics(parts, task, targets, gen_errors, expectations, prompts)


def qa_metrics(parts: Parts, task: Task, targets: set[str], gen_errors: Sequence[Mapping[str, Any]] = (),
               expectations: Mapping[str, str] | None = None,
               prompts: Mapping[str, Prompt] | None = None) -> list[dict[str, Any]]:
    """The metric rows of a task without a streaming accumulator (reading, questions: the task's
    :meth:`~callbluff.tasks.base.Task.metric_rows`), one target's rows (all columns but the texts) at a time."""
    if not targets:
        return []
    spec = get_task(task)
    rows = []
    tallies = verdict_tallies(task, expectations)
    for t in sorted(targets):
        examples = parts.frame("examples", QA_EXAMPLE_COLUMNS, t)
        rows.extend(spec.metric_rows(examples, parts.frame("originals", ORIGINAL_COLUMNS, t), prompts or {}))
        tallies.add(examples)
    return _finish_rows(rows, task, sorted(targets), gen_errors, expectations, tallies)


def accumulated_metrics(acc: MetricAccumulator, targets: set[str], gen_errors: Sequence[Mapping[str, Any]] = (),
                        expectations: Mapping[str, str] | None = None,
                        verdicts: VerdictTallies | None = None) -> list[dict[str, Any]]:
    """The metric rows of a scoring run whose originals (of ``targets``) and examples were all fed to ``acc``
    and ``verdicts`` (by :func:`stream_metrics`, or by the engine's one-pass
    :class:`~callbluff.engine.finalize.RunTally`)."""
    if not targets:
        return []
    return _finish_rows(acc.rows(), acc.task, sorted(targets), gen_errors, expectations,
                        verdicts if verdicts is not None else verdict_tallies(acc.task, expectations))


def verdict_tallies(task: Task, expectations: Mapping[str, str] | None) -> VerdictTallies:
    """Empty verdict tallies for a run of ``task``: each attack's cases are examples or sources as its
    expectation and the task say (:func:`~callbluff.metrics.expectations.failure_unit`)."""
    worst_case = get_task(task).worst_case
    return VerdictTallies(lambda attack: failure_unit(expectation_of(attack, expectations), worst_case))


def _finish_rows(rows: list[dict[str, Any]], task: Task, targets: list[str],
                 gen_errors: Sequence[Mapping[str, Any]], expectations: Mapping[str, str] | None,
                 verdicts: VerdictTallies) -> list[dict[str, Any]]:
    """Attack failures counted in their rows, ``expect``, ``failure_pct`` (the share of the row's cases judged
    False, :mod:`callbluff.metrics.expectations`) and ``n_judged`` (how many cases that share is of) added, every row through
    :func:`~callbluff.metrics.rows.metric_row`."""
    spec = get_task(task)  # an unknown task stops here, naming the known ones
    if gen_errors:
        _attach_generate_errors(rows, gen_errors, targets, task, pooled=not spec.prompt_rows)
    for r in rows:
        if r["attack"] != "clean":
            r["expect"] = expectation_of(r["attack"], expectations)
            r["failure_pct"] = verdicts.failure_pct(r["target"], r["attack"], r["params"], r["prompt"])
            r["n_judged"] = verdicts.n_judged(r["target"], r["attack"], r["params"], r["prompt"])
    return [metric_row(r.pop("task"), r.pop("attack"), r.pop("params"), r.pop("prompt"), r.pop("target"), **r)
            for r in rows]


def expectation_of(attack: str, expectations: Mapping[str, str] | None) -> str | None:
    """An attack's declared expectation: the run's (``expectations``), else the registered attack's."""
    return (expectations or {}).get(attack) or _registered_expectation(attack)


def _registered_expectation(attack: str) -> str | None:
    try:
        return get_attack(attack).expect
    except KeyError:
        return None
