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

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from callbluff import metrics as M
from callbluff.engine.rows import EXAMPLE_COLUMNS, ORIGINAL_COLUMNS, candidate_texts, gold_list
from callbluff.engine.sufficient_stats import (
    EXAMPLE_METRIC_COLUMNS,
    ORIGINAL_METRIC_COLUMNS,
    ScoringAccumulator,
)
from callbluff.metrics.rows import ALL, metric_row
from callbluff.records import Prompt, Task, canonical_json



def _golds(col: pd.Series) -> list[list[str]]:
    return [gold_list(g) for g in col]


def reading_rows(ex: pd.DataFrame, orig: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for target, orig_t in orig.groupby("target", sort=True):
        rows.append({"task": "reading", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     **M.squad_metrics(list(orig_t["answer"]), _golds(orig_t["gold_answers"])),
                     "n_errors_original": int(orig_t["error"].notna().sum())})
        ex_t = ex[ex["target"] == target]
        for (attack, params), g in ex_t.groupby(["attack", "params"], sort=True):
            attacked = orig_t[orig_t["source_id"].isin(set(g["source_id"]))]
            gold_map = dict(zip(attacked["source_id"], _golds(attacked["gold_answers"])))
            row = {"task": "reading", "attack": attack, "params": params, "prompt": ALL, "target": target,
                   **M.squad_metrics(list(attacked["answer"]), _golds(attacked["gold_answers"])),
                   **M.worst_case_squad_metrics(list(g["source_id"]), list(g["adv_answer"]), gold_map),
                   **_search_cost_fields(g),
                   **_answer_change_fields(g),
                   **_error_fields(g)}
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
    for sid, oa, aa, gold in zip(g["source_id"], g["orig_answer"], g["adv_answer"], _golds(g["gold_answers"])):
        if isinstance(oa, str):
            orig_ok[sid] = M.exact_match(oa, gold) == 1.0
        if isinstance(aa, str):
            hit = M.exact_match(aa, gold) == 1.0
            correct.append(hit)
            adv_ok[sid] = adv_ok.get(sid, True) and hit
    judged = [sid for sid, ok in orig_ok.items() if ok and sid in adv_ok]
    return {"broken_pct": 100.0 * sum(not adv_ok[s] for s in judged) / len(judged) if judged else math.nan,
            "adv_correct_pct": 100.0 * float(np.mean(correct)) if correct else math.nan}


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
        golds = _golds(orig_t["gold_answers"])
        types = list(orig_t["answer_type"])
        rows.append({"task": "questions", "attack": "clean", "params": "{}", "prompt": ALL, "target": target,
                     "n": len(orig_t), **ranking(orig_t["answer"], orig_t["candidates"], orig_t["error"], golds, types, ""),
                     "n_errors_original": int(orig_t["error"].notna().sum())})
        type_of = dict(zip(orig_t["source_id"], orig_t["answer_type"]))
        ex_t = ex[ex["target"] == target]
        for (attack, params), g in ex_t.groupby(["attack", "params"], sort=True):
            g_golds = _golds(g["gold_answers"])
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
                         **_error_fields(g)})
    return rows


def _error_fields(g: pd.DataFrame) -> dict[str, int]:
    """Failed predictions among a group of examples, split: the source's original input, the adversarial one."""
    return {"n_errors_original": int(g["orig_error"].notna().sum()),
            "n_errors_adversarial": int(g["adv_error"].notna().sum()), "n_errors_generate": 0}


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


def failure_pct(expect: str | None, row: Mapping[str, Any]) -> float | None:
    """The headline failure rate of a metric row (% of adversarial inputs on which the target did not do what a
    robust system would, per the attack's declared expectation); None when it cannot be computed.

    ``lower`` (Kumar et al.: a human lowers the score): ``not_lowered_pct``; ``bottom`` (Ding et al.): 100 - ARR;
    ``same-score`` (benign change): % whose score moved; ``same-answer``: reading, % of correctly answered
    questions broken by an adversarial version (worst case, Jia & Liang), questions, the DPAEG success rate;
    ``wrong-answer``: % of adversarial inputs still given the gold answer."""
    def val(key: str) -> float | None:
        v = row.get(key)
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)

    if expect == "lower":
        return val("not_lowered_pct")
    if expect == "bottom":
        a = val("arr")
        return None if a is None else 100.0 - a
    if expect == "same-score":
        neg, pos = val("neg_pct"), val("pos_pct")
        return None if neg is None or pos is None else neg + pos
    if expect == "same-answer":
        return val("success_rate") if row.get("task") == "questions" else val("broken_pct")
    if expect == "wrong-answer":
        return val("adv_correct_pct")
    return None


def compute_metrics(examples: pd.DataFrame, originals: pd.DataFrame, prompts: Mapping[str, Prompt],
                    task: Task, gen_errors: Sequence[Mapping[str, Any]] = (),
                    expectations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """All metric rows of a run (pure: tables in, rows out). ``gen_errors`` are the attack failures
    (errors.jsonl stages ``generate`` / ``search``), counted as ``n_errors_generate`` in their rows.
    ``expectations`` maps attack names to their declared expectation (attack contract v2; default: the
    registered attack's ``expect``); each attack row gets ``expect`` and ``failure_pct`` from it."""
    if not len(originals):
        return []
    if task in ("essay", "content"):
        acc = ScoringAccumulator(prompts, task)
        acc.add_originals(originals)
        acc.add_examples(examples)
        rows = acc.rows()
    elif task == "reading":
        rows = reading_rows(examples, originals)
    else:
        rows = questions_rows(examples, originals)
    return _finish_rows(rows, task, sorted(set(originals["target"])), gen_errors, expectations)


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
    """:func:`compute_metrics` of a run from its parts, without holding the run's rows in memory (issue 15).

    Scoring tasks stream every chunk's metric columns (never the texts) into a
    :class:`~callbluff.engine.sufficient_stats.ScoringAccumulator`: memory grows with the number of (target,
    attack, params, prompt) groups, not of records. Reading comprehension and open-domain questions need each
    question's versions together (worst case over adversarial versions, Jia & Liang; per-question ranks), so
    their rows are built one target at a time from that target's rows, every column but the texts: memory
    grows with one target's questions x attack configurations (SQuAD dev: ~10k questions), not with texts.
    The rows are the same as :func:`compute_metrics` on the merged tables (tests compare them)."""
    if task in ("essay", "content"):
        acc = ScoringAccumulator(prompts, task)
        targets: set[str] = set()
        for o in parts.frames("originals", ORIGINAL_METRIC_COLUMNS):
            acc.add_originals(o)
            targets.update(o["target"])
        for x in parts.frames("examples", EXAMPLE_METRIC_COLUMNS):
            acc.add_examples(x)
        return accumulated_metrics(acc, targets, gen_errors, expectations)
    targets = {t for o in parts.frames("originals", ["target"]) for t in o["target"]}
    return qa_metrics(parts, task, targets, gen_errors, expectations)


def qa_metrics(parts: Parts, task: Task, targets: set[str], gen_errors: Sequence[Mapping[str, Any]] = (),
               expectations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """Reading / questions metric rows of ``targets``, one target's rows (all columns but the texts) at a time."""
    if not targets:
        return []
    build = reading_rows if task == "reading" else questions_rows
    rows = []
    for t in sorted(targets):
        rows.extend(build(parts.frame("examples", QA_EXAMPLE_COLUMNS, t),
                          parts.frame("originals", ORIGINAL_COLUMNS, t)))
    return _finish_rows(rows, task, sorted(targets), gen_errors, expectations)


def accumulated_metrics(acc: ScoringAccumulator, targets: set[str], gen_errors: Sequence[Mapping[str, Any]] = (),
                        expectations: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The metric rows of a scoring run whose originals (of ``targets``) and examples were all fed to ``acc``
    (by :func:`stream_metrics`, or by the engine's one-pass :class:`~callbluff.engine.finalize.RunTally`)."""
    if not targets:
        return []
    return _finish_rows(acc.rows(), acc.task, sorted(targets), gen_errors, expectations)


def _finish_rows(rows: list[dict[str, Any]], task: Task, targets: list[str],
                 gen_errors: Sequence[Mapping[str, Any]], expectations: Mapping[str, str] | None,
                 ) -> list[dict[str, Any]]:
    """Attack failures counted in their rows, ``expect`` / ``failure_pct`` added, every row through
    :func:`~callbluff.metrics.rows.metric_row`."""
    if gen_errors:
        _attach_generate_errors(rows, gen_errors, targets, task, pooled=task in ("reading", "questions"))
    for r in rows:
        if r["attack"] != "clean":
            expect = (expectations or {}).get(r["attack"]) or _registered_expectation(r["attack"])
            r["expect"] = expect
            r["failure_pct"] = failure_pct(expect, r)
    return [metric_row(r.pop("task"), r.pop("attack"), r.pop("params"), r.pop("prompt"), r.pop("target"), **r)
            for r in rows]


def _registered_expectation(attack: str) -> str | None:
    from callbluff.attacks.base import get_attack

    try:
        return get_attack(attack).expect
    except KeyError:
        return None
