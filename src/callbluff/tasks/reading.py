"""Extractive reading comprehension, Jia & Liang 2017: SQuAD questions on a paragraph; does a distracting
sentence appended to the paragraph fool the reader? Metric rows are pooled over the dataset (``prompt =
"all"``): SQuAD v1.1 EM/F1 on the attacked questions, and worst-case ``em_adv``/``f1_adv`` (a question counts as
failed if any of its adversarial versions fools the model)."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from callbluff import metrics as M
from callbluff.datasets.generic import READING_COLUMNS
from callbluff.metrics.rows import ALL, ERROR_FIELDS
from callbluff.records import Prompt, QAExample, Record
from callbluff.render.text import fmt, pct
from callbluff.render.views import View, reading_view
from callbluff.targets.base import Input
from callbluff.tasks.base import Gold, Task, register_task
from callbluff.tasks.frames import error_fields, golds_of

KIT_RECORDS = [
    QAExample("kit-r1", "Who founded the town of Maresby?", "Maresby was founded in 1724 by the weaver Tomas "
              "Ellery. The town grew quickly after a canal reached it in 1790. Its mill closed in 1911.",
              ("Tomas Ellery", "the weaver Tomas Ellery"), (38, 26), "Maresby"),
    QAExample("kit-r2", "When did the canal reach the town?", "Maresby was founded in 1724 by the weaver Tomas "
              "Ellery. The town grew quickly after a canal reached it in 1790. Its mill closed in 1911.",
              ("1790",), (108,), "Maresby"),
    QAExample("kit-r3", "What colour is the Orrin lighthouse?", "The Orrin lighthouse stands on a granite ledge. "
              "It was painted red in 1952 so that ships could see it in fog.", ("red",), (67,), "Orrin"),
]


def reading_rows(ex: pd.DataFrame, orig: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for target, orig_t in orig.groupby("target", sort=True):
        rows.append({"task": "reading", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     **M.squad_metrics(list(orig_t["answer"]), golds_of(orig_t["gold_answers"])),
                     "n_errors_original": int(orig_t["error"].notna().sum())})
        ex_t = ex[ex["target"] == target]
        for (attack, params), g in ex_t.groupby(["attack", "params"], sort=True):
            attacked = orig_t[orig_t["source_id"].isin(set(g["source_id"]))]
            gold_map = dict(zip(attacked["source_id"], golds_of(attacked["gold_answers"])))
            row = {"task": "reading", "attack": attack, "params": params, "prompt": ALL, "target": target,
                   **M.squad_metrics(list(attacked["answer"]), golds_of(attacked["gold_answers"])),
                   **M.worst_case_squad_metrics(list(g["source_id"]), list(g["adv_answer"]), gold_map),
                   **_search_cost_fields(g),
                   **_answer_change_fields(g),
                   **error_fields(g)}
            rows.append(row)
    return rows


def _search_cost_fields(g: pd.DataFrame) -> dict[str, float]:
    """Cost per attacked question (Jia & Liang's search adversaries): target queries (``queries_mean``,
    ``queries_median``, ``queries_max``; a question's examples share one search, so its largest count). The
    searches' wall time is machine-dependent, so it is in the run's timings.json, not in the metric rows."""
    if not len(g):
        return {"queries_mean": math.nan}
    per_q = g.groupby("source_id", sort=False)["queries"].max()
    return {"queries_mean": float(per_q.mean()), "queries_median": float(per_q.median()),
            "queries_max": float(per_q.max())}


def _answer_change_fields(g: pd.DataFrame) -> dict[str, float]:
    """Per attacked question (Jia & Liang: worst case over its adversarial versions): ``broken_pct`` = % of the
    questions answered correctly (EM) on the original that are answered wrongly on some adversarial version;
    ``adv_correct_pct`` = % of adversarial inputs whose answer is correct. Failed predictions are left out."""
    orig_ok: dict[str, bool] = {}
    adv_ok: dict[str, bool] = {}
    correct = []
    for sid, oa, aa, gold in zip(g["source_id"], g["orig_answer"], g["adv_answer"], golds_of(g["gold_answers"])):
        if isinstance(oa, str):
            orig_ok[sid] = M.exact_match(oa, gold) == 1.0
        if isinstance(aa, str):
            hit = M.exact_match(aa, gold) == 1.0
            correct.append(hit)
            adv_ok[sid] = adv_ok.get(sid, True) and hit
    judged = [sid for sid, ok in orig_ok.items() if ok and sid in adv_ok]
    return {"broken_pct": 100.0 * sum(not adv_ok[s] for s in judged) / len(judged) if judged else math.nan,
            "adv_correct_pct": 100.0 * float(np.mean(correct)) if correct else math.nan}


class ReadingTask(Task):
    """Extractive reading comprehension (Jia & Liang 2017)."""

    name = "reading"
    description = "extractive reading comprehension (SQuAD): Jia & Liang 2017"
    record_type = QAExample
    output = "answer"
    columns = READING_COLUMNS
    fields = ("n", "expect", "failure_pct", "em", "f1", "em_adv", "f1_adv", "broken_pct", "adv_correct_pct",
              "queries_mean", "queries_median", "queries_max", *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "em", "f1", "em_adv", "f1_adv", *ERROR_FIELDS)
    clean_fields = ("em", "f1")
    robust_fields = (("f1", "F1 before"), ("f1_adv", "F1 under attack"), ("broken_pct", "broken %"))
    clean_vs_robust = ("EM / F1 on the original paragraphs next to EM / F1 with a distracting sentence added (Jia & "
                       "Liang 2017, Sec. 4)")
    worst_case = frozenset({"same-answer"})  # Jia & Liang 2017, Sec. 4.1: a question counts once, its worst version

    def correct(self, answer: str, golds: Sequence[str], answer_type: str) -> bool | None:
        """SQuAD's exact match against any gold answer (Rajpurkar et al.'s normalisation)."""
        return M.exact_match(answer, list(golds)) == 1.0

    def original_input(self, record: Record) -> Input:
        if not isinstance(record, QAExample):
            raise TypeError(f"no reading target input for {type(record).__name__}")
        return Input(task=self.name, text=record.question, context=record.context)

    def input_slot(self, field: str) -> str | None:
        """The question (``question``, or ``text``) is the input's text; AddSent's ``context`` its context."""
        return {"text": "text", "question": "text", "context": "context"}.get(field)

    def gold(self, record: Record) -> Gold:
        if not isinstance(record, QAExample):
            raise TypeError(type(record).__name__)
        return None, list(record.answers), "string"

    def metric_rows(self, examples: pd.DataFrame, originals: pd.DataFrame,
                    prompts: Mapping[str, Prompt]) -> list[dict[str, Any]]:
        return reading_rows(examples, originals)

    def sentence(self, row: Mapping[str, Any]) -> str | None:
        if row.get("em") is None:
            return None
        return (f"EM {pct(row.get('em'))} → {pct(row.get('em_adv'))}, F1 {pct(row.get('f1'))} → "
                f"{pct(row.get('f1_adv'))} on {row.get('n')} questions"  # 0-100 scales: one decimal
                + (f"; {pct(row['broken_pct'])}% of the correctly answered ones broke"
                   if row.get("broken_pct") is not None else "") + ".")

    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """SQuAD v1.1 EM / F1 on the clean questions."""
        if not clean:
            return []
        r = clean[0]
        return [("EM", fmt(r.get("em"))), ("F1", fmt(r.get("f1"))), ("questions", fmt(r.get("n")))]

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        return reading_view(rows, targets)

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        return copy.deepcopy(KIT_RECORDS), {}


READING = register_task(ReadingTask())
