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
from callbluff.metrics.rows import ALL, metric_row
from callbluff.records import Prompt, Task, canonical_json



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
            generated = bool(g["source_id"].str.startswith("prompt:").all())
            for pid, gp in g.groupby("prompt_id", sort=True):
                p = prompts[pid]
                row = {"task": task, "attack": attack, "params": params, "prompt": pid, "target": target}
                if generated:  # prompt-level answers: no pairs, the score distribution (Ding et al. 3.2)
                    row.update(_generated_fields(gp["adv_score"], gp["prompt_id"], prompts))
                else:
                    row.update(M.overstability(gp["orig_score"].to_numpy(float), gp["adv_score"].to_numpy(float),
                                               p.score_min, p.score_max))
                    if task == "content":
                        row["arr"] = M.arr(gp["adv_score"].to_numpy(float), p.score_min)
                row.update(_error_fields(gp), qwk=qwks.get(pid, math.nan))
                if gp["queries"].gt(0).any():  # model-in-the-loop attacks: target queries spent per example
                    row["queries_mean"] = float(gp["queries"].mean())
                rows.append(row)
            if g["prompt_id"].nunique() > 1:
                row = {"task": task, "attack": attack, "params": params, "prompt": ALL, "target": target}
                if generated:
                    row.update(_generated_fields(g["adv_score"], g["prompt_id"], prompts))
                else:
                    o_s = _scaled(g["orig_score"], g["prompt_id"], prompts)
                    a_s = _scaled(g["adv_score"], g["prompt_id"], prompts)
                    row.update(M.overstability(o_s, a_s, 0.0, 100.0))
                    if task == "content":
                        row["arr"] = _pooled_arr(g["adv_score"], g["prompt_id"], prompts)
                row.update(_error_fields(g), qwk=float(np.nanmean(list(qwks.values()))) if qwks else math.nan,
                           qwk_mean_over_prompts=True)
                rows.append(row)
    return rows


def _pooled_arr(scores: pd.Series, prompt_ids: pd.Series, prompts: Mapping[str, Prompt]) -> float:
    rejected = [M.arr([s], prompts[q].score_min) for s, q in zip(scores, prompt_ids) if pd.notna(s)]
    return float(np.mean(rejected)) if rejected else math.nan


def _generated_fields(scores: pd.Series, prompt_ids: pd.Series, prompts: Mapping[str, Prompt]) -> dict[str, Any]:
    """Prompt-level answers have no original to compare with: ``n`` scored answers, ``arr`` (% at the bottom of
    the scale, Ding et al. 3.2) and ``mean_score_pct`` (mean score as % of the scale; Kumar et al. 4.1 report the
    share of the range BABEL essays reach)."""
    ok = scores.notna()
    return {"n": int(ok.sum()), "arr": _pooled_arr(scores, prompt_ids, prompts),
            "mean_score_pct": float(np.mean(_scaled(scores[ok], prompt_ids[ok], prompts))) if ok.any() else math.nan}


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
                   **_answer_change_fields(g),
                   **_error_fields(g)}
            rows.append(row)
    return rows


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
    if isinstance(candidates, str):
        ranked = [c[0] for c in json.loads(candidates)]
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
        rows = scoring_rows(examples, originals, prompts, task)
    elif task == "reading":
        rows = reading_rows(examples, originals)
    else:
        rows = questions_rows(examples, originals)
    if gen_errors:
        _attach_generate_errors(rows, gen_errors, sorted(set(originals["target"])), task,
                                pooled=task in ("reading", "questions"))
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
