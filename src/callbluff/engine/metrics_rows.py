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

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from callbluff import metrics as M
from callbluff.records import Prompt, Task, canonical_json

ALL = "all"


def _nan_to_none(row: dict[str, Any]) -> dict[str, Any]:
    out = {}
    for k, v in row.items():
        if isinstance(v, (np.floating, float)) and math.isnan(float(v)):
            out[k] = None
        elif isinstance(v, np.integer):
            out[k] = int(v)
        elif isinstance(v, np.floating):
            out[k] = float(v)
        else:
            out[k] = v
    return out


def _clean_qwk(orig: pd.DataFrame, prompt: Prompt) -> float:
    ok = orig[orig["score"].notna() & orig["gold"].notna()]
    if len(ok) < 2:
        return math.nan
    return M.qwk(ok["gold"].to_numpy(float), ok["score"].to_numpy(float),
                 score_min=prompt.score_min, score_max=prompt.score_max)


def _scaled(values: pd.Series, prompts: pd.Series, table: Mapping[str, Prompt]) -> np.ndarray:
    lo = prompts.map(lambda p: table[p].score_min).to_numpy(float)
    width = prompts.map(lambda p: table[p].score_range or 1.0).to_numpy(float)
    return (values.to_numpy(float) - lo) / width * 100.0


def scoring_rows(ex: pd.DataFrame, orig: pd.DataFrame, prompts: Mapping[str, Prompt], task: Task) -> list[dict]:
    rows: list[dict[str, Any]] = []
    for target, orig_t in orig.groupby("target", sort=True):
        qwks: dict[str, float] = {}
        for pid, o in orig_t.groupby("prompt_id", sort=True):
            qwks[pid] = _clean_qwk(o, prompts[pid])
            rows.append({"task": task, "attack": "clean", "params": "{}", "prompt": pid, "target": target,
                         "n": int(o["score"].notna().sum()), "n_errors_original": int(o["error"].notna().sum()),
                         "qwk": qwks[pid]})
        ex_t = ex[ex["target"] == target]
        for (attack, params), g in ex_t.groupby(["attack", "params"], sort=True):
            for pid, gp in g.groupby("prompt_id", sort=True):
                p = prompts[pid]
                row = {"task": task, "attack": attack, "params": params, "prompt": pid, "target": target,
                       **M.overstability(gp["orig_score"].to_numpy(float), gp["adv_score"].to_numpy(float),
                                         p.score_min, p.score_max),
                       **_error_fields(gp),
                       "qwk": qwks.get(pid, math.nan)}
                if gp["queries"].gt(0).any():  # model-in-the-loop attacks: target queries spent per example
                    row["queries_mean"] = float(gp["queries"].mean())
                if task == "content":
                    row["arr"] = M.arr(gp["adv_score"].to_numpy(float), p.score_min)
                rows.append(row)
            if g["prompt_id"].nunique() > 1:
                o_s = _scaled(g["orig_score"], g["prompt_id"], prompts)
                a_s = _scaled(g["adv_score"], g["prompt_id"], prompts)
                row = {"task": task, "attack": attack, "params": params, "prompt": ALL, "target": target,
                       **M.overstability(o_s, a_s, 0.0, 100.0),
                       **_error_fields(g),
                       "qwk": float(np.nanmean(list(qwks.values()))) if qwks else math.nan,
                       "qwk_mean_over_prompts": True}
                if task == "content":
                    bottoms = g["prompt_id"].map(lambda q: prompts[q].score_min)
                    rejected = [M.arr([s], b) for s, b in zip(g["adv_score"], bottoms) if pd.notna(s)]
                    row["arr"] = float(np.mean(rejected)) if rejected else math.nan
                rows.append(row)
    return rows


def _golds(col: pd.Series) -> list[list[str]]:
    return [json.loads(g) if isinstance(g, str) else [] for g in col]


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
                   "queries_mean": float(g["queries"].mean()) if len(g) else math.nan,
                   **_error_fields(g)}
            rows.append(row)
    return rows


def _ranked(answer: Any, candidates: Any, error: Any) -> list[str] | None:
    """The ranked answers of one prediction; None for a failed prediction (left out, never a miss)."""
    if isinstance(error, str):
        return None
    if isinstance(candidates, str):
        ranked = [c[0] for c in json.loads(candidates)]
        if ranked:
            return ranked
    return [answer] if isinstance(answer, str) else []


def questions_rows(ex: pd.DataFrame, orig: pd.DataFrame) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []

    def ranking(answers: pd.Series, cands: pd.Series, errors: pd.Series, golds: list[list[str]],
                types: list[str], sfx: str) -> dict:
        ranked = [_ranked(a, c, e) for a, c, e in zip(answers, cands, errors)]
        if all(r is None for r in ranked):
            return {}
        fields = M.ranking_metrics(ranked, golds, ks=(1, 5, 20), suffix=sfx, answer_type=types)
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
            rows.append({"task": "questions", "attack": attack, "params": params, "prompt": ALL, "target": target,
                         "n": len(g), "success_rate": M.success_rate(orig_ok, adv_ok),
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


def compute_metrics(examples: pd.DataFrame, originals: pd.DataFrame, prompts: Mapping[str, Prompt],
                    task: Task, gen_errors: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """All metric rows of a run (pure: tables in, rows out). ``gen_errors`` are the attack failures
    (errors.jsonl stages ``generate`` / ``search``), counted as ``n_errors_generate`` in their rows."""
    if not len(originals):
        return []
    if task in ("essay", "content"):
        rows = scoring_rows(examples, originals, prompts, task)
    elif task == "reading":
        rows = reading_rows(examples, originals)
    else:
        rows = questions_rows(examples, originals)
    if gen_errors:
        _attach_generate_errors(rows, gen_errors, sorted(set(originals["target"])), task,
                                pooled=task in ("reading", "questions"))
    return [_nan_to_none(r) for r in rows]
