"""Open-domain questions to a Q&A bot, DPAEG: do typo'd and spell-similar keywords make the bot miss the answer?
Metric rows are pooled over the dataset (``prompt = "all"``): the success rate (% of originally correct questions
answered wrongly after the attack) and ranking metrics over the bot's candidate answers before and after."""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from callbluff import metrics as M
from callbluff.datasets.generic import QUESTION_COLUMNS
from callbluff.metrics.rows import ALL, ERROR_FIELDS
from callbluff.records import OpenQuestion, Prompt, Record
from callbluff.render.text import fmt, num, pct
from callbluff.render.views import View, questions_view
from callbluff.targets.base import Input
from callbluff.tasks.base import Gold, Task, register_task
from callbluff.tasks.frames import candidate_texts, error_fields, golds_of

KIT_RECORDS = [
    OpenQuestion("kit-q1", "What is the capital of France?", ("Paris",)),
    OpenQuestion("kit-q2", "Who wrote the novel Pride and Prejudice?", ("Jane Austen", "Austen")),
    OpenQuestion("kit-q3", "How many legs does a spider have?", (r"eight|8",), "regex"),
]


def _ranked(answer: Any, candidates: Any, error: Any) -> list[str] | None:
    """The ranked answers of one prediction; None for a failed prediction (left out, never a miss)."""
    if isinstance(error, str):
        return None
    ranked = candidate_texts(candidates)
    if ranked:
        return ranked
    return [answer] if isinstance(answer, str) else []


def questions_rows(ex: pd.DataFrame, orig: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def ranking(answers: pd.Series, cands: pd.Series, errors: pd.Series, golds: list[list[str]],
                types: list[str], sfx: str) -> dict:
        ranked = [_ranked(a, c, e) if g else None for a, c, e, g in zip(answers, cands, errors, golds)]
        if all(r is None for r in ranked):  # no prediction, or no question with a gold answer to rank against
            return {}
        keep = [i for i, g in enumerate(golds) if g]  # questions without gold answers cannot be ranked: left out
        fields = M.ranking_metrics([ranked[i] for i in keep], [golds[i] for i in keep], ks=(1, 5, 20), suffix=sfx,
                                   answer_type=[types[i] for i in keep])
        fields.pop(f"n{sfx}", None)
        return fields

    for target, orig_t in orig.groupby("target", sort=True):
        golds = golds_of(orig_t["gold_answers"])
        types = list(orig_t["answer_type"])
        rows.append({"task": "questions", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     "n": len(orig_t), **ranking(orig_t["answer"], orig_t["candidates"], orig_t["error"], golds, types, ""),
                     "n_errors_original": int(orig_t["error"].notna().sum())})
        type_of = dict(zip(orig_t["source_id"], orig_t["answer_type"]))
        ex_t = ex[ex["target"] == target]
        for (attack, params), g in ex_t.groupby(["attack", "params"], sort=True):
            g_golds = golds_of(g["gold_answers"])
            g_types = [type_of.get(s, "string") for s in g["source_id"]]
            # None = failed prediction: excluded from the success rate, never counted as a wrong answer
            orig_ok = [M.answer_matches(a, gl, t) if isinstance(a, str) else None
                       for a, gl, t in zip(g["orig_answer"], g_golds, g_types)]
            adv_ok = [M.answer_matches(a, gl, t) if isinstance(a, str) else None
                      for a, gl, t in zip(g["adv_answer"], g_golds, g_types)]
            judged_adv = [a for a in adv_ok if a is not None]
            rows.append({"task": "questions", "attack": attack, "params": params, "prompt": ALL, "target": target,
                         "n": len(g), "success_rate": M.success_rate(orig_ok, adv_ok),
                         "adv_correct_pct": 100.0 * float(np.mean(judged_adv)) if judged_adv else math.nan,
                         **ranking(g["orig_answer"], g["orig_candidates"], g["orig_error"], g_golds, g_types, ""),
                         **ranking(g["adv_answer"], g["adv_candidates"], g["adv_error"], g_golds, g_types, "_adv"),
                         "queries_mean": float(g["queries"].mean()) if len(g) else math.nan,
                         **error_fields(g)})
    return rows


def _pct(v: Any) -> float | None:
    x = num(v)
    return None if x is None else 100.0 * x if x <= 1.0 else x


class QuestionsTask(Task):
    """Open-domain questions (DPAEG)."""

    name = "questions"
    description = "open-domain questions (Q&A bots): DPAEG"
    record_type = OpenQuestion
    output = "answer"
    columns = QUESTION_COLUMNS
    fields = ("n", "expect", "failure_pct", "success_rate", "adv_correct_pct", "recall_at_5", "recall_at_5_adv",
              "recall_at_20", "recall_at_20_adv", "mrr", "mrr_adv", "map", "map_adv", "queries_mean", *ERROR_FIELDS)
    terminal_fields = ("n", "failure_pct", "success_rate", "recall_at_5", "recall_at_5_adv", "mrr", "mrr_adv",
                       *ERROR_FIELDS)
    clean_fields = ("recall_at_1", "mrr")
    robust_fields = (("success_rate", "success rate %"), ("recall_at_5_adv", "Recall@5 adv"), ("mrr_adv", "MRR adv"))
    clean_vs_robust = ("ranking quality (Recall@k, MRR) on the original questions next to the success rate of the typo'd"
                       " ones (DPAEG, Sec. 4.1)")

    def correct(self, answer: str, golds: Sequence[str], answer_type: str) -> bool | None:
        """DPAEG's correctness: the answer matches a gold answer (a pattern for regex gold, as CuratedTREC)."""
        return bool(M.answer_matches(answer, list(golds), answer_type))

    def original_input(self, record: Record) -> Input:
        if not isinstance(record, OpenQuestion):
            raise TypeError(f"no questions target input for {type(record).__name__}")
        return Input(task=self.name, text=record.question)

    def input_slot(self, field: str) -> str | None:
        """The question (``question``, or ``text``) is the input's text."""
        return {"text": "text", "question": "text", "context": "context"}.get(field)

    def gold(self, record: Record) -> Gold:
        if not isinstance(record, OpenQuestion):
            raise TypeError(type(record).__name__)
        return None, list(record.answers), record.answer_type

    def metric_rows(self, examples: pd.DataFrame, originals: pd.DataFrame,
                    prompts: Mapping[str, Prompt]) -> list[dict[str, Any]]:
        return questions_rows(examples, originals)

    def sentence(self, row: Mapping[str, Any]) -> str | None:
        if row.get("success_rate") is None:
            return None
        return f"success rate {pct(row['success_rate'])}% on {row.get('n')} adversarial questions (DPAEG; 0% is ideal)."

    def clean_quality(self, clean: Sequence[Mapping[str, Any]]) -> list[tuple[str, str]]:
        """Top-1 correct % and MRR of the candidates on the clean questions."""
        if not clean:
            return []
        r = clean[0]
        return [("top-1 correct %", fmt(_pct(r.get("recall_at_1")))), ("MRR", fmt(r.get("mrr"))),
                ("questions", fmt(r.get("n")))]

    def views(self, rows: Sequence[Mapping[str, Any]], targets: Sequence[str]) -> list[View]:
        return questions_view(rows, targets)

    def kit_records(self) -> tuple[list[Record], dict[str, Prompt]]:
        return copy.deepcopy(KIT_RECORDS), {}


QUESTIONS = register_task(QuestionsTask())
