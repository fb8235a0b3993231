"""``callbluff demo``: the main job on built-in data, as a user would run it on their own.

1. Train the reference scorers on the training split of the packaged original data (``demo:``): the
   shallow ContentScorer (Ding et al. 3.1) on two short-answer prompts and the EASE-like EssayScorer
   (Kumar et al. 2.2) on one essay prompt.
2. Write suites (TOML) that attack them on the held-out split: Shuffle (Ding et al. 2.2) against the
   content scorer, ShuffleSent (Kumar et al. 3.2) against the essay scorer, and a clean reading-comprehension
   evaluation of the sliding-window QA baseline.
3. Run each suite through the engine into a run directory (run.json, examples.parquet, predictions.sqlite,
   metrics.json, errors.jsonl, report.html) and print the metrics.

Everything here works without ../shared and without a network. Re-running resumes (nothing is recomputed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from callbluff.engine.run import run_suite
from callbluff.engine.suite import load_suite

SUITES: dict[str, str] = {
    "content": """# Ding et al. 2020: does the shallow content scorer accept shuffled correct answers?
name = "demo-content"
seed = 7

[dataset]
spec = "demo:content?split=test"

[[target]]
name = "content-scorer"
type = "model"
path = "../models/content-scorer"

[[attack]]
name = "Shuffle"
params = {{ tokenizer = "spacy" }}
""",
    "essay": """# Kumar et al. 2020: does the essay scorer keep its score when the sentences are shuffled?
name = "demo-essay"
seed = 7

[dataset]
spec = "demo:essay?split=test"

[[target]]
name = "essay-scorer"
type = "model"
path = "../models/essay-scorer"

[[attack]]
name = "ShuffleSent"
""",
    "reading": """# Reading comprehension: clean EM/F1 of the sliding-window baseline (Richardson et al. 2013).
name = "demo-reading"
seed = 7

[dataset]
spec = "demo:squad"

[[target]]
name = "sliding-window"
type = "model"
path = "../models/sliding-window-qa"
""",
}


def train_reference_models(models_dir: Path, log: Callable[[str], Any]) -> None:
    """Train (or reuse) the demo's reference systems under ``models_dir``."""
    from callbluff.models.train import train_model

    jobs = [("content-scorer", "demo:content?split=train"), ("essay-scorer", "demo:essay?split=train"),
            ("sliding-window-qa", "demo:squad")]
    for kind, data in jobs:
        out = models_dir / kind
        if (out / "model.json").exists():
            log(f"  {kind}: reusing {out}")
            continue
        summary = train_model(kind, data, out)
        clean = summary.get("metrics") or summary.get("clean_metrics") or {}
        log(f"  {kind}: trained on {data} -> {out} {json.dumps(clean, default=str)[:200]}")


def run_demo(out_dir: str | Path = "demo-run", *, workers: int = 1,
             show: Callable[[list[dict[str, Any]], str], Any] | None = None,
             log: Callable[[str], Any] = print) -> dict[str, Path]:
    """Train, attack, measure and report on the built-in data; returns the run directories by suite."""
    out = Path(out_dir).resolve()
    (out / "suites").mkdir(parents=True, exist_ok=True)
    log(f"callbluff demo -> {out}")
    log("1/3 training reference systems on the demo training split")
    train_reference_models(out / "models", log)
    log("2/3 writing suites")
    paths = {}
    for name, text in SUITES.items():
        p = out / "suites" / f"{name}.toml"
        p.write_text(text.replace("{{", "{").replace("}}", "}"), encoding="utf-8")
        paths[name] = p
    log("3/3 running the suites through the engine")
    runs: dict[str, Path] = {}
    for name, p in paths.items():
        suite = load_suite(p)
        run_dir = out / "runs" / name
        result = run_suite(suite, run_dir, workers=workers)
        if show is not None:
            show(result.metrics, f"{suite.name}: metrics")
        log(f"  {suite.name}: {result.counts['records']} records, {result.counts['examples']} adversarial examples, "
            f"{result.counts['errors']} errors -> {run_dir / 'report.html'}")
        runs[name] = run_dir
    log(f"done. Reports: {', '.join(str(r / 'report.html') for r in runs.values())}")
    log(f"Re-run one suite yourself: callbluff run {paths['content']} --out {runs['content']}")
    return runs
