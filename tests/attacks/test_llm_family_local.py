"""Every LLM-grader family attack against the REAL local grader (SmolLM2-135M-Instruct behind llama-cpp-python on
127.0.0.1, the session fixture ``local_llm``): one run through the engine on two Mohler answers, every configuration
of ``callbluff suite llm-grader`` (the universal-phrase search with a small budget), the grader statistics in the
metric rows, and the search never spending more than its budget per answer. A handful of calls (~0.3-2 s each)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from helpers import SHARED_DATA
from helpers.local_llm import chat_target_toml

from callbluff.attacks.llm import llm_configurations
from callbluff.api import run_suite
from callbluff.engine.suite import load_suite
from callbluff.resources.local_llm import LocalLLMServer
from callbluff.suites.kumar2020 import toml_value

MOHLER = SHARED_DATA / "mohler-unt-sag"


def test_every_llm_family_attack_runs_against_the_local_grader(local_llm: LocalLLMServer, tmp_path: Path) -> None:
    spec = f"mohler:{MOHLER}" if (MOHLER / "answers.tsv").is_file() else "demo:content"
    budget = 4
    configs = llm_configurations("content", search_budget=budget)
    for c in configs:
        if c["attack"] == "UniversalPhrase":
            c["params"] = {**c["params"], "length": 1, "train_answers": 2}
    attacks = "".join(f"[[attack]]\nname = {toml_value(c['attack'])}\n"
                      + (f"params = {toml_value(c['params'])}\n" if c["params"] else "") for c in configs)
    path = tmp_path / "suite.toml"
    path.write_text(f'name = "llm-family"\nseed = 0\nlimit = 2\n[dataset]\nspec = "{spec}"\n'
                    f"{chat_target_toml(local_llm)}{attacks}[output]\nchunk_size = 2\nreport = false\n",
                    encoding="utf-8")
    run = tmp_path / "run"
    run_suite(load_suite(path), run)
    ex = pd.read_parquet(run / "examples.parquet")
    made = {(a, p) for a, p in zip(ex["attack"], ex["params"])}
    wanted = {c["attack"] for c in configs}
    if spec == "demo:content":  # demo prompts carry no reference or rubric: those two attacks make nothing
        wanted -= {"RubricEcho", "ReferencePaste"}
    assert {a for a, _ in made} == wanted
    assert ex["adv_error"].isna().all(), ex["adv_error"].dropna().tolist()[:3]  # every reply read (json_object)
    search = ex[ex["attack"] == "UniversalPhrase"]
    assert len(search) == 2 and (search["queries"] <= budget).all() and (search["queries"] > 0).all()
    rows = json.loads((run / "metrics.json").read_text())
    inj = next(r for r in rows if r["attack"] == "InjectInstruction" and r["prompt"] != "all")
    assert inj["expect"] == "not-higher" and inj["parse_fail_pct"] == 0.0
    assert {"max_out_pct", "ceiling_pct", "mean_diff_pct_ci_low", "pos_pct_ci_high"} <= set(inj)
    keys = [r for r in rows if r["attack"] == "MasterKey" and r["prompt"] != "all"]
    assert all(r["expect"] == "bottom" for r in keys) and sum(r["n"] for r in keys) == 2
