"""Findings: content scoring under adversarial answers and its countermeasures (Ding et al. 2020), on ASAP-SAS.

Run from the repository root:  .venv/bin/python scripts/findings/content.py [--quick] [--prompts 1,2]
Writes docs/findings/content.md and docs/findings/content/*.svg. Every prediction of a scoring system is made by
callbluff's engine (:func:`callbluff.engine.run.run_suite`, the product's own runs, resumable) in the work
directory .findings-work/content/ (or content-quick/): the trained models and fitted filters it needs are saved
there too (``--restart`` starts over).

Steps:
  1  models: ContentScorer (the paper's shallow system, also the countermeasure ``paper``), NeuralScorer (the
     deep one), the feature-set variants (Sec. 5.1) and adversarial training (5.2), trained on the training
     answers; the filters (5.4), fitted on the training answers (each prompt's own, and the other prompts'
     for our filter's topic features).
  2  run ``scorers``: the 25 configurations of Figure 1 (``--count`` answers each, generators fitted on the
     training answers, seed 1), Shuffle of the leaderboard's fully correct answers and OffTopic (answers of the
     other prompts' training answers) against both scorers; QWK on the public leaderboard answers.
  3  run ``countermeasures``: the same attacks with ``--tradeoff-count`` answers each, plus Misspell (10/30/50 %
     of words replaced by real misspellings), against every countermeasure (filters in front of ``paper``).
  4  the filters alone (no scorer): what they flag among the answers of run 3, the leaderboard answers and
     grammar-noised copies of them, and the leaderboard answers of every other prompt (per prompt pair).
  5  our filter's loss on real answers it never saw, by grouped 5-fold cross-validation over the training
     answers only (the leaderboard is read once, at the end, as the held-out check).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the harness beside this script
from harness import DATA, REPO, log  # noqa: E402
WORK = REPO / ".findings-work" / "content"
OUT_MD = REPO / "docs" / "findings" / "content.md"
FIG_DIR = REPO / "docs" / "findings" / "content"
RATES = (0.1, 0.3, 0.5)
TYPO_FILES = ("missp.dat.gz", "holbrook-missp.dat", "aspell.dat", "wikipedia.dat")
OFF_PER_PAIR = 50
"""OffTopic answers per (source prompt, attacked prompt) pair in the scorer runs."""
FILTER_OFF_PER_PAIR = 200
"""Leaderboard answers of each other prompt the filters are asked about, per prompt pair."""
NESTED_FOLDS = 5

# Ding et al. 2020 figures (Sec. 3.2, 4, 5.4) shown beside ours
PAPER = {"shallow_arr": 77.0, "deep_arr": 53.0, "shallow_qwk": 0.673, "deep_qwk": 0.7705,
         "nonword_arr": 86.0, "nonword_real_lost": 3.6}

SEED_TEST, SEED_TRAIN_ADV, SEED_FILTER, SEED_NOISE_TEST, SEED_NESTED = 1, 2, 3, 11, 5
TARGETS = {"content": "ContentScorer", "neural": "NeuralScorer"}
VARIANTS = ("paper", "no-char-no-unigram", "paper+dep", "paper+pos")
ADV_TRAIN = ("adv-train:shuffle", "adv-train:all")
FILTER_KINDS = ("nonword", "unigram-perplexity", "plausibility")


# ----------------------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------------------

def data_specs(prompts: list[str]) -> tuple[str, str]:
    train_p, test_p = DATA / "asap-sas" / "train.tsv.gz", DATA / "asap-sas" / "public_leaderboard_rel_2.tsv.gz"
    for p in (train_p, test_p):
        if not p.is_file():
            sys.exit(f"needs {p} (ASAP-SAS; set CALLBLUFF_SHARED to the directory holding data/asap-sas)")
    sel = ",".join(prompts)
    return f"asap-sas:{train_p}?prompts={sel}", f"asap-sas:{test_p}?prompts={sel}"


def typo_files() -> list[str]:
    files = [DATA / "typos" / f for f in TYPO_FILES]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        sys.exit(f"needs the typo corpora {missing} (../shared/data/typos)")
    return [str(f) for f in files]


def typo_corpus() -> Any:
    from callbluff.resources.typos import cached_corpus

    return cached_corpus(tuple(typo_files()))


def configs_of(count: int) -> list[dict[str, Any]]:
    """The 25 configurations of Figure 1 with ``count`` answers each (Shuffle: static, over the run's records)."""
    from callbluff.attacks.content import ding2020_configurations

    return ding2020_configurations(count)


def _pkey(pid: str) -> tuple[int, Any]:
    return (0, int(pid)) if pid.isdigit() else (1, pid)


def label_of(attack: str, params: dict[str, Any]) -> str:
    n = params.get("n")
    return attack + (f" n={n}" if n is not None else "")


# ----------------------------------------------------------------------------------------------------------
# step 1: models and filters
# ----------------------------------------------------------------------------------------------------------

def trained(path: Path, make: Any, what: str) -> float:
    """Train and save a model at ``path`` unless one is there; the seconds it took (0 when reused)."""
    if (path / "model.json").is_file():
        return json.loads((path / "findings-fit.json").read_text()).get("fit_s", 0.0) \
            if (path / "findings-fit.json").is_file() else 0.0
    t0 = time.perf_counter()
    model = make()
    model.save(path)
    s = round(time.perf_counter() - t0, 1)
    (path / "findings-fit.json").write_text(json.dumps({"fit_s": s}))
    log(f"trained {what} in {s} s")
    return s


def train_models(work: Path, train: Any, args: argparse.Namespace, scorers_only: bool = False) -> dict[str, float]:
    from callbluff.countermeasures.adversarial_training import adversarial_training_set
    from callbluff.defenses import feature_variant
    from callbluff.models.neural import NeuralScorer

    recs, prompts = train.records(), train.prompts
    m = work / "models"
    fit_s = {"content": trained(m / "content", lambda: feature_variant("paper").fit(recs, prompts), "ContentScorer"),
             "neural": trained(m / "neural", lambda: NeuralScorer(
                 embeddings=args.embeddings, epochs=args.neural_epochs, min_epochs=min(3, args.neural_epochs),
                 patience=2, max_words=args.max_words, num_threads=args.threads).fit(recs, prompts), "NeuralScorer")}
    if scorers_only:
        return fit_s
    for v in VARIANTS[1:]:
        fit_s[v] = trained(m / v, lambda v=v: feature_variant(v).fit(recs, prompts), v)
    for label, cfgs in zip(ADV_TRAIN, ([{"attack": "Shuffle", "params": {}}], None), strict=True):
        def make(cfgs: Any = cfgs) -> Any:
            extra = adversarial_training_set(recs, prompts, total=args.adv_total, configs=cfgs, seed=SEED_TRAIN_ADV)
            return feature_variant("paper").fit(recs + extra, prompts)
        fit_s[label] = trained(m / label.replace(":", "-"), make, label)
    return fit_s


_NOISED: dict[tuple[int, str], list[str]] = {}


def noise_fn(typos: Any) -> Any:
    """Our filter's real-answer noise (:func:`callbluff.countermeasures.battery.noisy_real`) with the findings' typo corpora,
    remembered per (seed, answer id): each answer's copies depend only on those, and the nested fits ask for the
    same answers again."""
    from callbluff.countermeasures.battery import noisy_real

    def noise(records: Any, prompt: Any, seed: int) -> list[tuple[int, str]]:
        todo = [r for r in records if (seed, r.id) not in _NOISED]
        for r in todo:
            _NOISED[(seed, r.id)] = []
        for i, text in noisy_real(todo, prompt, seed, typos=typos):
            _NOISED[(seed, todo[i].id)].append(text)
        return [(i, t) for i, r in enumerate(records) for t in _NOISED[(seed, r.id)]]

    return noise


def fit_filters(work: Path, train: Any, typos: Any, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """The three filters fitted per prompt on the training answers and saved under ``work/filters``; the
    development adversarials (generators fitted on 80 % of a prompt's training answers, seed ``SEED_FILTER``) are
    shared by the two filters that use them. Returns the fit seconds per filter and prompt."""
    from callbluff.countermeasures.battery import battery
    from callbluff.defenses import NonWordRateFilter, PlausibilityFilter, UnigramPerplexityFilter
    from callbluff.defenses.filters import dev_split, load_filter

    out: dict[str, dict[str, float]] = {}
    recs = train.records()
    todo = [k for k in FILTER_KINDS if not (work / "filters" / k / "filter.json").is_file()]
    for k in FILTER_KINDS:
        if k not in todo:
            out[k] = json.loads((work / "filters" / k / "findings-fit.json").read_text())
    if not todo:
        return out
    made = {"nonword": NonWordRateFilter(seed=SEED_FILTER), "unigram-perplexity": UnigramPerplexityFilter(seed=SEED_FILTER),
            "plausibility": PlausibilityFilter(seed=SEED_FILTER, dev_count=args.dev_count)}
    times: dict[str, dict[str, float]] = {k: {} for k in todo}
    noise = noise_fn(typos)
    for pid, prompt in sorted(train.prompts.items(), key=lambda kv: _pkey(kv[0])):
        own = [r for r in recs if r.prompt_id == pid]
        fit_part, _ = dev_split(own, 0.2, SEED_FILTER, pid)
        t0 = time.perf_counter()
        dev_adv = [a.text for a in battery(fit_part, prompt, args.dev_count, seed=SEED_FILTER)]
        t_dev = time.perf_counter() - t0
        (work / "dev-adversarial").mkdir(parents=True, exist_ok=True)
        (work / "dev-adversarial" / f"{pid}.json").write_text(json.dumps(dev_adv))
        for k in todo:
            f = made[k]
            t1 = time.perf_counter()
            if k == "plausibility":
                f.fit(own, {pid: prompt}, adversarial={pid: dev_adv}, noise=noise,
                      others=[r for r in recs if r.prompt_id != pid])
            else:
                f.fit(own, {pid: prompt}, adversarial={pid: dev_adv})
            times[k][pid] = round(time.perf_counter() - t1 + (t_dev if f.uses_dev else 0.0), 1)
            log(f"filter {k} fitted on prompt {pid} ({times[k][pid]} s)")
    for k in todo:
        made[k].save(work / "filters" / k)
        (work / "filters" / k / "findings-fit.json").write_text(json.dumps(times[k]))
        load_filter(work / "filters" / k)  # it loads back
        out[k] = times[k]
    return out


# ----------------------------------------------------------------------------------------------------------
# steps 2-3: the engine's runs
# ----------------------------------------------------------------------------------------------------------

def attack_tables(count: int, off_count: int, train_spec: str, misspell: bool) -> list[dict[str, Any]]:
    tables = []
    for c in configs_of(count):
        t: dict[str, Any] = {"name": c["attack"], "params": dict(c.get("params", {}))}
        if c["attack"] != "Shuffle":
            t["fit_on"] = train_spec
        tables.append(t)
    tables.append({"name": "OffTopic", "params": {"count": off_count, "source": train_spec}})
    if misspell:
        tables.append({"name": "Misspell", "params": {"typo_files": typo_files()}, "grid": {"rate": list(RATES)}})
    return tables


def run(work: Path, name: str, targets: list[dict[str, Any]], tables: list[dict[str, Any]], test_spec: str,
        workers: int) -> tuple[list[dict[str, Any]], Path, dict[str, Any]]:
    """Run (or resume) one suite through the engine; its metrics rows, run directory and timing."""
    from callbluff.api import run_suite
    from callbluff.engine.suite import parse_suite

    out = work / "runs" / name
    data = {"name": f"content-findings-{name}", "seed": SEED_TEST, "dataset": {"spec": test_spec},
            "target": targets, "attack": tables, "output": {"chunk_size": 500, "batch_size": 256, "report": False}}
    suite = parse_suite(data, source=f"scripts/findings/content.py ({name})", base_dir=work)
    done = out / "findings-run.json"
    if done.is_file():
        info = json.loads(done.read_text())
        return json.loads((out / "metrics.json").read_text()), out, info
    log(f"run {name}: {len(targets)} targets, {len(tables)} attack tables")
    t0, load0 = time.perf_counter(), os.getloadavg()[0]
    result = run_suite(suite, out, workers=workers)
    info = {"seconds": round(time.perf_counter() - t0, 1), "load": [round(load0, 2), round(os.getloadavg()[0], 2)],
            "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    done.write_text(json.dumps(info))
    log(f"run {name} finished in {info['seconds']} s")
    return result.metrics, out, info


def examples_of(run_dir: Path, target: str) -> Any:
    import pandas as pd

    df = pd.read_parquet(run_dir / "examples.parquet", columns=["attack", "params", "prompt_id", "adversarial_text",
                                                                "meta", "target", "adv_score", "orig_score",
                                                                "index", "source_id"])
    return df[df["target"] == target]


def per_prompt(rows: list[dict[str, Any]], target: str, pid: str) -> dict[str, Any]:
    """ARR per configuration, QWK and the Misspell same-score shares of one target and prompt."""
    out: dict[str, Any] = {"arr_by_config": {}, "noisy_same": {}}
    for r in rows:
        if r.get("target") != target or str(r.get("prompt")) != pid:
            continue
        p = json.loads(r["params"]) if isinstance(r.get("params"), str) else dict(r.get("params") or {})
        if r["attack"] == "clean":
            out["qwk"] = r.get("qwk", math.nan)
        elif r["attack"] == "Misspell":
            out["noisy_same"][str(p["rate"])] = 100.0 - r.get("failure_pct", math.nan)
        elif r["attack"] == "OffTopic":
            out["offtopic_arr"] = r.get("arr", math.nan)
        else:
            out["arr_by_config"][label_of(r["attack"], p)] = r.get("arr", math.nan)
    return out


def offtopic_pairs(run_dir: Path, target: str, score_min: dict[str, float]) -> dict[str, dict[str, float]]:
    """{attacked prompt: {source prompt: % of OffTopic answers scored at the bottom (ARR)}}; also the % given
    the top score under key ``"full:" + source``."""
    df = examples_of(run_dir, target)
    df = df[df["attack"] == "OffTopic"]
    out: dict[str, dict[str, float]] = {}
    for (pid, meta), s in zip(zip(df["prompt_id"], df["meta"], strict=True), df["adv_score"], strict=True):
        src = json.loads(meta)["source_prompt"]
        out.setdefault(str(pid), {}).setdefault(src, []).append(s)  # type: ignore[arg-type]
    res: dict[str, dict[str, float]] = {}
    for pid, by in out.items():
        res[pid] = {}
        for src, scores in by.items():
            a = np.asarray(scores, dtype=float)
            res[pid][src] = float(np.mean(a <= score_min[pid]) * 100)
    return res


# ----------------------------------------------------------------------------------------------------------
# steps 4-5: the filters alone
# ----------------------------------------------------------------------------------------------------------

def filters_alone(work: Path, train: Any, test: Any, typos: Any, fit_s: dict[str, dict[str, float]],
                  count: int) -> dict[str, dict[str, Any]]:
    """Per prompt, what each filter flags (no scorer, so no target: the texts come from the one generation path):
    ``count`` answers per configuration of Figure 1 (generators fitted on the training answers, seed ``SEED_TEST``;
    Shuffle of the leaderboard's fully correct answers, unseen by every filter), the leaderboard answers, Misspell's
    copies of them (per rate), grammar-noised copies (:func:`callbluff.countermeasures.battery.noisy_real`, seed
    ``SEED_NOISE_TEST``) and the first :data:`FILTER_OFF_PER_PAIR` leaderboard answers of every other prompt."""
    from callbluff.countermeasures.battery import battery, noisy_real
    from callbluff.defenses.filters import load_filter
    from callbluff.engine.generate import AttackSpec, generate

    test_recs = test.records()
    train_recs = train.records()
    filters = {k: load_filter(work / "filters" / k) for k in FILTER_KINDS}
    res: dict[str, dict[str, Any]] = {}
    for pid in sorted(test.prompts, key=_pkey):
        prompt = test.prompts[pid]
        te = [r for r in test_recs if r.prompt_id == pid]
        tr = [r for r in train_recs if r.prompt_id == pid]
        gen = [a for a in battery(tr, prompt, count, seed=SEED_TEST) if a.attack != "Shuffle"]
        specs = [AttackSpec.make("Shuffle", {})] + [AttackSpec.make("Misspell", {"rate": r, "typo_files": typo_files()})
                                                    for r in RATES]
        made = [ex for ch in generate(specs, te, {pid: prompt}, seed=SEED_TEST, ahead=False) for ex in ch.examples]
        texts = [a.text for a in gen] + [e.text for e in made if e.attack == "Shuffle"]
        labels = [a.config for a in gen] + ["Shuffle"] * sum(e.attack == "Shuffle" for e in made)
        adv = {"adversarial_text": texts, "attack": ["Shuffle" if lab == "Shuffle" else "x" for lab in labels]}
        noisy = {str(r): [e.text for e in made if e.attack == "Misspell" and e.params["rate"] == r] for r in RATES}
        grammar = [t for _, t in noisy_real(te, prompt, SEED_NOISE_TEST, spelling=False)]
        others = {q: [r.text for r in test_recs if r.prompt_id == q][:FILTER_OFF_PER_PAIR]
                  for q in sorted(test.prompts, key=_pkey) if q != pid}
        real = [r.text for r in te]
        res[pid] = {"prompt": pid, "n_real": len(real), "n_adversarial": len(labels), "n_grammar": len(grammar),
                    "n_unseen_shuffle": labels.count("Shuffle"), "filters": {}}
        for k, f in filters.items():
            t0 = time.perf_counter()
            fr = f.flag(pid, real)
            fa = f.flag(pid, list(adv["adversarial_text"]))
            by: dict[str, list[bool]] = {}
            for flag, lab in zip(fa.tolist(), labels, strict=True):
                by.setdefault(lab, []).append(flag)
            fo = {q: float(f.flag(pid, t).mean() * 100) for q, t in others.items()}
            fg = f.flag(pid, grammar) if grammar else np.zeros(0, dtype=bool)
            res[pid]["filters"][k] = {
                "real_flagged_pct": float(fr.mean() * 100),
                "flag_arr_by_config": {lab: float(np.mean(v) * 100) for lab, v in by.items()},
                "noisy_flagged_pct": {r: float(f.flag(pid, t).mean() * 100) if t else math.nan
                                      for r, t in noisy.items()},
                "grammar_flagged_pct": float(fg.mean() * 100) if len(fg) else math.nan,
                "unseen_shuffle_flagged_pct": by.get("Shuffle") and float(np.mean(by["Shuffle"]) * 100),
                "offtopic_flagged_by_source": fo,
                "apply_s": round(time.perf_counter() - t0, 1), "filter_fit_s": fit_s[k].get(pid, math.nan),
                "fit_s": fit_s[k].get(pid, math.nan), "summary": f.summary()[pid], "params": f.params}
            log(f"filters alone, prompt {pid} {k}: real {fr.mean() * 100:.1f} %, ARR {fa.mean() * 100:.1f} %, "
                f"grammar {res[pid]['filters'][k]['grammar_flagged_pct']:.1f} %, off-topic min {min(fo.values()):.1f} %")
    return res


def nested(work: Path, train: Any, typos: Any, args: argparse.Namespace) -> dict[str, list[dict[str, Any]]]:
    """Our filter's loss on real answers it never saw: :func:`callbluff.defenses.plausibility.nested_real_loss`
    per prompt (grouped 5-fold over the training answers only; saved per prompt in ``work/nested``), with the
    development adversarials the filter was fitted with (step 1)."""
    from callbluff.defenses.plausibility import PlausibilityFilter, nested_real_loss

    recs = train.records()
    out: dict[str, list[dict[str, Any]]] = {}
    noise = noise_fn(typos)
    for pid in sorted(train.prompts, key=_pkey):
        path = work / "nested" / f"{pid}.json"
        if path.is_file():
            out[pid] = json.loads(path.read_text())
            continue
        if args.nested_deadline and time.strftime("%H:%M") >= args.nested_deadline:
            log(f"nested: deadline {args.nested_deadline} passed, prompt {pid} and later not computed")
            break
        t0 = time.perf_counter()
        out[pid] = nested_real_loss(lambda: PlausibilityFilter(seed=SEED_FILTER, dev_count=args.dev_count),
                                    recs, train.prompts[pid], noise=noise,
                                    adversarial=json.loads((work / "dev-adversarial" / f"{pid}.json").read_text()),
                                    others=[r for r in recs if r.prompt_id != pid], folds=NESTED_FOLDS,
                                    seed=SEED_NESTED)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(out[pid]))
        log(f"nested prompt {pid}: real flagged per fold {[round(f['real_flagged_pct'], 2) for f in out[pid]]} "
            f"({time.perf_counter() - t0:.0f} s)")
    return out


# ----------------------------------------------------------------------------------------------------------
# the document
# ----------------------------------------------------------------------------------------------------------

def _mean(xs: list[float]) -> float:
    xs = [x for x in xs if x is not None and not math.isnan(x)]
    return float(np.mean(xs)) if xs else float("nan")


def _fmt(x: float, d: int = 1) -> str:
    return "n/a" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{d}f}"


def render(meta: dict[str, Any], a_res: dict[str, dict], b_res: dict[str, dict],
           f_res: dict[str, dict] | None = None) -> str:
    from callbluff.attacks.content import ding2020_configurations
    from callbluff.countermeasures.battery import config_label

    configs = [config_label(c) for c in ding2020_configurations(1)]
    f_res = f_res or {}
    prompts = [p for p in meta["prompts"] if p in a_res or p in b_res or p in f_res]
    st = meta["steps"]
    runs_s = st.get("runs_s", {})
    total = (st.get("setup_s", 0) + sum(runs_s.values()) + st.get("filters_alone_s", 0) + st.get("nested_s", 0))
    loads = st.get("loads", [])
    L: list[str] = []
    L += ["# Findings: adversarial answers against content scoring, and countermeasures (Ding et al. 2020)", "",
          "Generated by `scripts/findings/content.py`; do not edit by hand.", "",
          f"Command: `{meta['command']}`. Data: ASAP-SAS (`../shared/data/asap-sas`): the scorers, the filters and "
          "every generator are fitted on `train.tsv.gz`; the attacked answers, QWK and the noisy answers are the public "
          "leaderboard answers (`public_leaderboard_rel_2` with the gold scores of `public_leaderboard_solution`). "
          f"Prompts: {', '.join(prompts)}. Every score below is a prediction of callbluff's engine "
          "(`run_suite`, the scorers as `model` targets, the filters in front of them through a target's `filter` "
          "key): two runs, `scorers` (the 25 configurations of Figure 1 with "
          f"{meta['count']} answers each and OffTopic against both scorers) and `countermeasures` ("
          f"{meta['tradeoff_count']} answers per configuration, OffTopic and Misspell against every countermeasure). "
          "Shuffle is a static attack over the run's records: here the leaderboard's fully correct answers. "
          f"Compute: {total / 60:.1f} min of wall time (training and filters {st.get('setup_s', 0) / 60:.1f}, runs "
          + ", ".join(f"{k} {v / 60:.1f}" for k, v in runs_s.items())
          + f", filters alone {st.get('filters_alone_s', 0) / 60:.1f}, nested cross-validation "
          f"{st.get('nested_s', 0) / 60:.1f} min) on {meta['machine']['cpus']} CPU cores shared with other engineers' "
          f"jobs: load averages seen {min(loads, default=0):.1f}-{max(loads, default=0):.1f}, so times are upper "
          f"bounds; python {meta['machine']['python']}. NeuralScorer settings: {meta['settings']['embeddings']} word "
          f"vectors, at most {meta['settings']['neural_epochs']} epochs, {meta['settings']['max_words']} words per "
          "answer (see the notes below).", ""]
    L += ["## Blindness", "",
          "Nothing here is tuned on the leaderboard answers: the scorers' parameters are chosen by cross-validation "
          "on the training answers, the filters' thresholds on the training answers (non-word rate: a development "
          "split; our plausibility filter: all training answers, out-of-fold, with a one-sided 95 % margin), our "
          "filter's out-of-sample loss is estimated by grouped cross-validation on the training answers (section 5), "
          "and the leaderboard answers are read once, at the end, as the held-out check. The adversarial test answers "
          "come from generators fitted on the training answers with a seed (1) used nowhere else (adversarial "
          "training: seed 2; filter development answers: seed 3, generators fitted on 80 % of the training answers). "
          "The filters' development adversarials come from the same 25 generator configurations as the test "
          "adversarials (different seeds, different fitted answers), and our filter learns other prompts' training "
          "answers as off-topic: the filter figures are therefore in-distribution for the generator types and for the "
          "dataset's prompts, which the paper's are too; a new kind of adversarial answer may pass more often.", ""]
    if a_res:
        L += systems_section(a_res, [p for p in prompts if p in a_res])
    else:
        L += ["## 1. ARR of the two scoring systems (paper Sec. 4, Figure 1)", "",
              "**Not computed in this rendering** (the `scorers` run did not start before the time limit); the "
              "previous figures are in this file's git history.", ""]
    b_prompts = [p for p in prompts if p in b_res]
    if b_prompts:
        L += countermeasure_section(b_res, b_prompts, configs, meta)
    else:
        L += ["## 2. Countermeasures and their trade-off (paper Sec. 5.1-5.3, Figures 2-4)", "",
              "**Not computed in this rendering** (the `countermeasures` run did not start before the time limit); "
              "the previous figures are in this file's git history.", ""]
    filt = {p: f_res[p] for p in prompts if p in f_res}
    if filt:
        L += filter_section(filt, list(filt), configs)
    return "\n".join(L) + "\n"


def systems_section(a_res: dict[str, dict], prompts: list[str]) -> list[str]:
    from callbluff.attacks.content import ding2020_configurations
    from callbluff.countermeasures.battery import config_label

    configs = [config_label(c) for c in ding2020_configurations(1)]
    L: list[str] = []
    # --- systems
    L += ["## 1. ARR of the two scoring systems (paper Sec. 4, Figure 1)", "",
          "ARR = % of adversarial answers scored 0 (`callbluff.metrics.arr`). Mean over prompts, per configuration:",
          "", "| configuration | example (prompt " + prompts[0] + ") | ContentScorer ARR % | NeuralScorer ARR % |",
          "| --- | --- | ---: | ---: |"]
    sysmeans: dict[str, dict[str, float]] = {"ContentScorer": {}, "NeuralScorer": {}}
    have = {s: [p for p in prompts if s in a_res[p]["systems"]] for s in sysmeans}
    for c in configs:
        for s in sysmeans:
            sysmeans[s][c] = _mean([a_res[p]["systems"][s]["arr_by_config"].get(c, math.nan) for p in have[s]])
        ex = a_res[prompts[0]].get("examples", {}).get(c, "").replace("|", " ").replace("\n", " ")
        L.append(f"| {c} | {ex[:60]} | {_fmt(sysmeans['ContentScorer'][c])} | {_fmt(sysmeans['NeuralScorer'][c])} |")
    mean_s = _mean(list(sysmeans["ContentScorer"].values()))
    mean_d = _mean(list(sysmeans["NeuralScorer"].values()))
    qwk_s = _mean([a_res[p]["systems"]["ContentScorer"]["qwk"] for p in have["ContentScorer"]])
    qwk_d = _mean([a_res[p]["systems"]["NeuralScorer"]["qwk"] for p in have["NeuralScorer"]])
    L += [f"| **mean** | | **{_fmt(mean_s)}** | **{_fmt(mean_d)}** |", ""]
    for s in sysmeans:
        if len(have[s]) < len(prompts):
            L += [f"**{s} ran on prompts {', '.join(have[s]) or 'none'} only** (time limit); its means are over "
                  "those.", ""]
    L += [
          "| | ours | paper |", "| --- | ---: | ---: |",
          f"| shallow (ContentScorer) mean ARR % | {_fmt(mean_s)} | {PAPER['shallow_arr']:.0f} |",
          f"| deep (NeuralScorer) mean ARR % | {_fmt(mean_d)} | {PAPER['deep_arr']:.0f} |",
          f"| shallow QWK (leaderboard) | {_fmt(qwk_s, 3)} | {PAPER['shallow_qwk']} |",
          f"| deep QWK (leaderboard) | {_fmt(qwk_d, 3)} | {PAPER['deep_qwk']} |", ""]
    # per prompt x generator tables
    for s in sysmeans:
        ps = have[s]
        if not ps:
            continue
        L += [f"### {s}: ARR % per configuration x prompt", "",
              "| configuration | " + " | ".join(ps) + " |", "| --- |" + " ---: |" * len(ps)]
        for c in configs:
            L.append(f"| {c} | " + " | ".join(_fmt(a_res[p]["systems"][s]["arr_by_config"].get(c, math.nan), 0)
                                             for p in ps) + " |")
        L.append("| QWK | " + " | ".join(_fmt(a_res[p]["systems"][s]["qwk"], 3) for p in ps) + " |")
        L.append("")
    # paper's qualitative findings
    L += ["### The paper's findings, checked", ""]
    L += findings_checks(sysmeans, configs)
    L += ["", "![ARR per configuration](content/arr_by_configuration.svg)", ""]
    return L


def _family(c: str) -> str:
    return c.split(" ")[0]


def findings_checks(sysmeans: dict[str, dict[str, float]], configs: list[str]) -> list[str]:
    out = []
    for s, m in sysmeans.items():
        if all(math.isnan(v) for v in m.values()):
            continue
        lowest = min(configs, key=lambda c: m[c] if not math.isnan(m[c]) else 1e9)
        gen_c = _mean([m[f"GenericChars n={n}"] for n in range(1, 6)])
        pro_c = _mean([m[f"PromptChars n={n}"] for n in range(1, 6)])
        gen_w = _mean([m[f"GenericWords n={n}"] for n in range(1, 6)])
        pro_w = _mean([m[f"PromptWords n={n}"] for n in range(1, 6)])
        pc = [m[f"PromptChars n={n}"] for n in range(1, 6)]
        falling = all(pc[i + 1] <= pc[i] + 1e-9 for i in range(4))
        out += [f"- **{s}**: lowest ARR: {lowest} ({_fmt(m[lowest])} %; paper: Shuffle lowest on the shallow "
                f"system). Prompt-specific vs generic: characters {_fmt(pro_c)} vs {_fmt(gen_c)} %, words "
                f"{_fmt(pro_w)} vs {_fmt(gen_w)} % (paper: prompt-specific lower, i.e. more damaging). Prompt-specific "
                f"character n-grams n = 1..5: {', '.join(_fmt(x, 0) for x in pc)} % "
                f"({'falling with n' if falling else 'not monotone in n'}; paper: falling with n)."]
    return out


def countermeasure_section(b_res: dict[str, dict], prompts: list[str], configs: list[str],
                           meta: dict[str, Any]) -> list[str]:
    names = list(b_res[prompts[0]]["countermeasures"])
    L = ["## 2. Countermeasures and their trade-off (paper Sec. 5.1-5.3, Figures 2-4)", "",
         f"Shallow system (ContentScorer), mean over prompts {', '.join(prompts)}. ARR on the first "
         f"{meta['tradeoff_count']} adversarial answers per configuration; QWK on the leaderboard answers; noisy "
         "same-score = % of leaderboard answers with the given share of words replaced by real misspellings that "
         "get the same score as the clean answer from the same system (achieved replacement rates: "
         + ", ".join(f"{float(k):.0%} asked -> {_mean([b_res[p]['noisy_achieved'][k] for p in prompts]):.1%}"
                     for k in b_res[prompts[0]]["noisy_achieved"]) + ").", "",
         "| countermeasure | mean ARR % | QWK | noisy same-score 10 % | 30 % | 50 % | fit s (all prompts) |",
         "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    rows = {}
    for n in names:
        arr_m = _mean([_mean(list(b_res[p]["countermeasures"][n]["arr_by_config"].values())) for p in prompts])
        q = _mean([b_res[p]["countermeasures"][n]["qwk"] for p in prompts])
        ns = {k: _mean([b_res[p]["countermeasures"][n]["noisy_same"][k] for p in prompts]) for k in ("0.1", "0.3", "0.5")}
        fit = sum(b_res[p]["countermeasures"][n]["fit_s"] for p in prompts)
        rows[n] = (arr_m, q, ns)
        L.append(f"| {n} | {_fmt(arr_m)} | {_fmt(q, 3)} | {_fmt(ns['0.1'])} | {_fmt(ns['0.3'])} | {_fmt(ns['0.5'])} | "
                 f"{fit:.0f} |")
    L += ["", "![trade-off](content/tradeoff.svg)", "",
          "Countermeasures: `paper` = the attacked system; `no-char-no-unigram` = word 2-5-grams + length (Sec. 5.1 "
          "removal); `paper+dep` / `paper+pos` = dependency triples / POS 1-3-grams added (Sec. 5.1); "
          f"`adv-train:shuffle` = {meta['adv_total']} Shuffle answers scored 0 added to the training data, "
          f"`adv-train:all` = {meta['adv_total']} answers spread over all 25 configurations (Sec. 5.2; the paper "
          "adds 1,000 of one method at a time); `filter:*` = the filter in front of `paper`, a flagged answer scored "
          "0 (Sec. 5.4).", "",
          "### ARR % per configuration (mean over prompts)", "",
          "| configuration | " + " | ".join(names) + " |", "| --- |" + " ---: |" * len(names)]
    for c in configs:
        L.append(f"| {c} | " + " | ".join(_fmt(_mean([b_res[p]['countermeasures'][n]['arr_by_config'].get(c, math.nan)
                                                       for p in prompts]), 0) for n in names) + " |")
    L.append("")
    return L


def filter_section(b_res: dict[str, dict], prompts: list[str], configs: list[str]) -> list[str]:
    """Section 3 from each prompt's stage F result (or stage B's filters where F did not run)."""
    kinds = list(b_res[prompts[0]]["filters"])
    have_unseen = all("unseen_shuffle_flagged_pct" in b_res[p]["filters"][k] for p in prompts for k in kinds)
    L = ["## 3. Filters (paper Sec. 5.4, Figure 5)", "",
         f"The filters alone (no scorer), prompts {', '.join(prompts)}; the answers come from callbluff's one generation "
         "path (generators fitted on the training answers, seed 1; Shuffle and Misspell over the leaderboard answers). "
         "A filter's own figures: ARR = % of adversarial answers it flags (mean over the 25 configurations); real "
         "lost = % of leaderboard answers it flags; noisy flagged = % of misspelled leaderboard answers it flags"
         + ("; unseen shuffles = % of shuffled fully correct *leaderboard* answers it flags (these are the Shuffle "
            "configuration here: answers no filter was fitted on)" if have_unseen else "")
         + "; grammar-noised = leaderboard answers with Kumar et al.'s ModGrammar errors (seed 11); off-topic = the "
         "first 200 leaderboard answers of each other prompt (section 4)" + ". Means over prompts.", "",
         "| filter | ARR % | real answers lost % | noisy flagged 10 % | 30 % | 50 % |"
         + (" unseen shuffles % |" if have_unseen else "") + " grammar-noised flagged % | off-topic flagged % (mean "
         "/ lowest pair) | fit s / apply s (all prompts) | paper |",
         "| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if have_unseen else "") + " ---: | ---: | ---: | --- |"]
    paper_txt = {"nonword": f"ARR {PAPER['nonword_arr']:.0f} %, {PAPER['nonword_real_lost']} % lost",
                 "unigram-perplexity": "better ARR than non-word, > 50 % lost",
                 "plausibility": "(ours; goals: ARR >= 95 %, <= 2 % lost, <= 10 % grammar-noised, >= 95 % "
                                 "off-topic per pair)"}
    for k in kinds:
        a = _mean([_mean(list(b_res[p]["filters"][k]["flag_arr_by_config"].values())) for p in prompts])
        lost = _mean([b_res[p]["filters"][k]["real_flagged_pct"] for p in prompts])
        nf = {r: _mean([b_res[p]["filters"][k]["noisy_flagged_pct"][r] for p in prompts]) for r in ("0.1", "0.3", "0.5")}
        us = (f" {_fmt(_mean([b_res[p]['filters'][k]['unseen_shuffle_flagged_pct'] for p in prompts]))} |"
              if have_unseen else "")
        fit = sum(b_res[p]["filters"][k].get("filter_fit_s", b_res[p]["filters"][k]["fit_s"]) for p in prompts)
        app = [b_res[p]["filters"][k].get("apply_s") for p in prompts]
        times = f"{fit:.0f} / " + (f"{sum(app):.0f}" if None not in app else "n/a")
        gram = _mean([b_res[p]["filters"][k].get("grammar_flagged_pct", math.nan) for p in prompts])
        offs = [v for p in prompts for v in b_res[p]["filters"][k].get("offtopic_flagged_by_source", {}).values()]
        L.append(f"| {k} | {_fmt(a)} | {_fmt(lost)} | {_fmt(nf['0.1'])} | {_fmt(nf['0.3'])} | {_fmt(nf['0.5'])} |"
                 f"{us} {_fmt(gram)} | {_fmt(_mean(offs))} / {_fmt(min(offs) if offs else math.nan)} | {times} | "
                 f"{paper_txt.get(k, '')} |")
    L += ["", "Per configuration (% flagged, mean over prompts):", "",
          "| configuration | " + " | ".join(kinds) + " |", "| --- |" + " ---: |" * len(kinds)]
    for c in configs:
        L.append(f"| {c} | " + " | ".join(_fmt(_mean([b_res[p]['filters'][k]['flag_arr_by_config'].get(c, math.nan)
                                                       for p in prompts]), 0) for k in kinds) + " |")
    L += ["", "Thresholds chosen per prompt on the training answers, never on the leaderboard (non-word rate: the "
          "development split, max mean(ARR, recall); ours: at most 2 % of the real answers it learns from flagged with a one-sided 95 % margin, "
          "by out-of-fold decision values; its dev ARR / recall are on those answers: all training answers, "
          "out-of-fold, where the filter's summary says so, else the development split):", "",
          "| prompt | non-word threshold | dev ARR / recall | ours: threshold | dev ARR / recall | ours: test ARR % "
          "| real lost % | lowest configuration % |",
          "| --- | ---: | --- | ---: | --- | ---: | ---: | --- |"]
    for p in prompts:
        nw, pl = b_res[p]["filters"].get("nonword", {}).get("summary", {}), b_res[p]["filters"].get("plausibility", {}).get("summary", {})
        pf = b_res[p]["filters"].get("plausibility")
        test = "n/a | n/a | n/a"
        if pf:
            by = pf["flag_arr_by_config"]
            low = min(by, key=by.get)
            test = f"{_fmt(_mean(list(by.values())))} | {_fmt(pf['real_flagged_pct'])} | {low} ({by[low]:.0f})"
        L.append(f"| {p} | {_fmt(nw.get('threshold', math.nan), 3)} | {nw.get('dev_arr', 'n/a')} / {nw.get('dev_recall', 'n/a')} "
                 f"| {_fmt(pl.get('threshold', math.nan), 3)} | {pl.get('dev_arr', 'n/a')} / {pl.get('dev_recall', 'n/a')} "
                 f"| {test} |")
    if "plausibility" in kinds:
        pa = _mean([_mean(list(b_res[p]["filters"]["plausibility"]["flag_arr_by_config"].values())) for p in prompts])
        pl_lost = _mean([b_res[p]["filters"]["plausibility"]["real_flagged_pct"] for p in prompts])
        weak = [(c, _mean([b_res[p]["filters"]["plausibility"]["flag_arr_by_config"].get(c, math.nan) for p in prompts]))
                for c in configs]
        weak = sorted([w for w in weak if w[1] < 95], key=lambda w: w[1])
        met = pa >= 95 and pl_lost <= 2
        L += ["", f"**Goal (our filter: ARR >= 95 % over the 25 configurations with <= 2 % of real answers "
              f"lost, {len(prompts)} prompts): {'met' if met else 'not met'}** (ARR {_fmt(pa)} %, real lost "
              f"{_fmt(pl_lost, 2)} %). Configurations it flags less than 95 % of (mean over prompts): "
              + (", ".join(f"{c} {v:.1f} %" for c, v in weak) or "none") + "."]
    return L


def figures(a_res: dict[str, dict], b_res: dict[str, dict], prompts: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams["svg.hashsalt"] = "callbluff-content"  # the same figure gives the same bytes
    import matplotlib.pyplot as plt

    from callbluff.attacks.content import ding2020_configurations
    from callbluff.countermeasures.battery import config_label

    FIG_DIR.mkdir(parents=True, exist_ok=True)
    configs = [config_label(c) for c in ding2020_configurations(1)]
    pa = [p for p in prompts if p in a_res]
    if pa:  # (without stage A the committed figure stays as it is)
        fig, ax = plt.subplots(figsize=(11, 4.5))
        x = np.arange(len(configs))
        for k, (s, col) in enumerate((("ContentScorer", "#d9a400"), ("NeuralScorer", "#2a6fbb"))):
            ps = [p for p in pa if s in a_res[p]["systems"]]
            if not ps:
                continue
            means = [_mean([a_res[p]["systems"][s]["arr_by_config"].get(c, math.nan) for p in ps]) for c in configs]
            ax.scatter(x + (k - 0.5) * 0.2, means, marker="D", color=col, label=f"{s} (mean over prompts)", zorder=3)
            for p in ps:
                ax.scatter(x + (k - 0.5) * 0.2, [a_res[p]["systems"][s]["arr_by_config"].get(c, math.nan) for c in configs],
                           s=6, color=col, alpha=0.35)
        ax.set_xticks(x, configs, rotation=70, fontsize=8)
        ax.set_ylabel("ARR %")
        ax.set_ylim(-3, 103)
        ax.legend(fontsize=8)
        ax.set_title("Adversarial rejection rate per generator configuration (dots: prompts)")
        fig.tight_layout()
        fig.savefig(FIG_DIR / "arr_by_configuration.svg", metadata={"Date": None})
        plt.close(fig)
    pb = [p for p in prompts if p in b_res]
    if not pb:
        return
    names = list(b_res[pb[0]]["countermeasures"])
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for n in names:
        arr_m = _mean([_mean(list(b_res[p]["countermeasures"][n]["arr_by_config"].values())) for p in pb])
        q = _mean([b_res[p]["countermeasures"][n]["qwk"] for p in pb])
        ns = _mean([b_res[p]["countermeasures"][n]["noisy_same"]["0.3"] for p in pb])
        axes[0].scatter(q, arr_m)
        axes[0].annotate(n, (q, arr_m), fontsize=7)
        axes[1].scatter(ns, arr_m)
        axes[1].annotate(n, (ns, arr_m), fontsize=7)
    axes[0].set_xlabel("QWK on real answers")
    axes[1].set_xlabel("noisy answers (30 % misspelled) scored as before, %")
    for a in axes:
        a.set_ylabel("mean ARR %")
    fig.suptitle("Trade-off of countermeasures on the shallow system (cf. Ding et al. Figure 4)")
    fig.tight_layout()
    fig.savefig(FIG_DIR / "tradeoff.svg", metadata={"Date": None})
    plt.close(fig)



# ----------------------------------------------------------------------------------------------------------
# the new sections: off-topic answers, the filter's out-of-sample loss, what moved
# ----------------------------------------------------------------------------------------------------------

def offtopic_section(pairs: dict[str, dict[str, dict[str, float]]], f_res: dict[str, dict],
                     prompts: list[str], full_marks: dict[str, float]) -> list[str]:
    """Section 4: the wrong-question bluff, per prompt pair, for both scorers and our filter."""
    L = ["## 4. The wrong-question bluff: real answers to another prompt (OffTopic)", "",
         f"OffTopic submits, for prompt P, real training answers of every other prompt Q ({OFF_PER_PAIR} per pair, "
         "drawn per answer from its own seed; `callbluff.attacks.content.OffTopic`). Rows: the attacked prompt P; "
         "columns: the source prompt Q. Scorers: ARR % (scored 0). Filter: % flagged of the first "
         f"{FILTER_OFF_PER_PAIR} *leaderboard* answers of Q (answers no filter was fitted on; our filter learnt "
         "other prompts' training answers as off-topic).", ""]
    for name, table in (*((TARGETS[t], pairs[t]) for t in TARGETS if t in pairs),
                        ("plausibility filter", {p: f_res[p]["filters"]["plausibility"]["offtopic_flagged_by_source"]
                                                 for p in prompts if p in f_res})):
        L += [f"### {name}", "", "| P \\ Q | " + " | ".join(prompts) + " | mean | lowest |",
              "| --- |" + " ---: |" * (len(prompts) + 2)]
        for p in prompts:
            row = table.get(p, {})
            cells = [("–" if q == p else _fmt(row.get(q, math.nan), 0)) for q in prompts]
            vals = [v for q, v in row.items() if q != p]
            L.append(f"| {p} | " + " | ".join(cells) + f" | {_fmt(_mean(vals))} | {_fmt(min(vals) if vals else math.nan)} |")
        allv = [v for p in prompts for q, v in table.get(p, {}).items() if q != p]
        L += ["", f"Mean over pairs: {_fmt(_mean(allv))} %; lowest pair: {_fmt(min(allv) if allv else math.nan)} %; "
              f"pairs below 95 %: {sum(v < 95 for v in allv)} of {len(allv)}.", ""]
    full = sorted(((v, k) for k, v in full_marks.items() if v > 0), reverse=True)
    L += ["ContentScorer's **full marks** to off-topic answers (% of a pair's answers given the top of P's scale; "
          "pairs above 0): " + ("; ".join(f"{k.replace('<-', ' <- ')}: {v:.0f} %" for v, k in full[:12])
                                + (f"; and {len(full) - 12} more pairs" if len(full) > 12 else "") if full else "none")
          + ".", ""]
    return L


def generalisation_section(nested_res: dict[str, list[dict[str, Any]]], f_res: dict[str, dict],
                           prompts: list[str]) -> list[str]:
    """Section 5: our filter's loss on real answers it never saw (nested, training answers only), the grammar-noised
    figure, the off-topic goal, and the leaderboard read once as the held-out check."""
    ps = [p for p in prompts if p in nested_res]
    L = ["## 5. Does our filter's loss on real answers hold on answers it never saw?", "",
         f"**Refit per fold.** Grouped {NESTED_FOLDS}-fold cross-validation on the **training answers only**, per prompt: the groups are "
         "answers with the same words (a copy in another fold would look seen), the folds are answer folds *within* "
         "a prompt, not prompts, because the filter is fitted per prompt and used on new answers to a prompt it knows. "
         "Each fold's filter is fitted (features, classifier, threshold: all of it, with its own inner out-of-fold "
         "threshold) on the other folds and flags the held fold's answers and their noised copies (grammar errors "
         "and, separately, 20 % misspelt words, `callbluff.countermeasures.battery.noisy_real`, another seed than fitting's). The "
         "development adversarials are those of the filter of section 3 (generated from 80 % of all training answers, "
         "so from the held fold too: if anything this makes the estimate pessimistic, the held answers' n-grams "
         "looking adversarial). Nothing here reads the leaderboard.", ""]
    if ps:
        L += ["| prompt | real flagged % per fold | mean | max | noised copies flagged % (mean) |",
              "| --- | --- | ---: | ---: | ---: |"]
        allf = []
        for p in ps:
            v = [f["real_flagged_pct"] for f in nested_res[p]]
            allf += v
            nz = [f["noised_flagged_pct"] for f in nested_res[p] if f.get("noised_flagged_pct") is not None]
            L.append(f"| {p} | {', '.join(_fmt(x, 2) for x in v)} | {_fmt(_mean(v), 2)} | {_fmt(max(v), 2)} | "
                     f"{_fmt(_mean(nz))} |")
        sd = float(np.std(allf, ddof=1)) if len(allf) > 1 else math.nan
        if len(ps) < len(prompts):
            L += ["", f"**Computed on prompts {', '.join(ps)} only** (time limit); the other prompts' folds are missing."]
        L += ["", f"Over all {len(allf)} (prompt, fold) pairs: mean {_fmt(_mean(allf), 2)} %, standard deviation "
              f"{_fmt(sd, 2)}, range {_fmt(min(allf), 2)}-{_fmt(max(allf), 2)} %; {sum(x > 2 for x in allf)} of "
              f"{len(allf)} folds above 2 %.", ""]
    else:
        L += ["**Refit per fold: not computed in this run** (time limit; see the threshold-rule estimate below).", ""]
    fp = [p for p in prompts if p in f_res]
    oof = {p: f_res[p]["filters"]["plausibility"]["summary"].get("oof_folds") for p in fp}
    oof = {p: v for p, v in oof.items() if v}
    if oof:
        allo = [f["real_flagged_pct"] for v in oof.values() for f in v]
        sd = float(np.std(allo, ddof=1)) if len(allo) > 1 else math.nan
        L += ["The threshold rule alone, judged out of sample on every prompt at no extra cost: the filter of section 3 "
              "sets its threshold on out-of-fold decision values of all the training answers (5 grouped folds); here, per "
              "fold, the rule picks a threshold from the *other* folds' values and we count how many of the fold's "
              "real answers (and noised copies) lie above it (`oof_folds` in the filter's summary; the features and "
              "tables of each answer are out-of-fold too, the refit on all answers is not re-judged: that is the "
              "refit estimate above).", "",
              "| prompt | real flagged % per fold | mean | max | noised copies flagged % (mean) |",
              "| --- | --- | ---: | ---: | ---: |"]
        for p, v in oof.items():
            r = [f["real_flagged_pct"] for f in v]
            nz = [f["noised_flagged_pct"] for f in v if f.get("noised_flagged_pct") is not None]
            L.append(f"| {p} | {', '.join(_fmt(x, 2) for x in r)} | {_fmt(_mean(r), 2)} | {_fmt(max(r), 2)} | "
                     f"{_fmt(_mean(nz))} |")
        L += ["", f"Over all {len(allo)} (prompt, fold) pairs: mean {_fmt(_mean(allo), 2)} %, standard deviation "
              f"{_fmt(sd, 2)}, range {_fmt(min(allo), 2)}-{_fmt(max(allo), 2)} %; {sum(x > 2 for x in allo)} of "
              f"{len(allo)} folds above 2 %.", ""]
    if fp:
        pl = {p: f_res[p]["filters"]["plausibility"] for p in fp}
        lost = _mean([pl[p]["real_flagged_pct"] for p in fp])
        arr_m = _mean([_mean([v for c, v in pl[p]["flag_arr_by_config"].items()]) for p in fp])
        gram = _mean([pl[p]["grammar_flagged_pct"] for p in fp])
        off = [v for p in fp for q, v in pl[p]["offtopic_flagged_by_source"].items()]
        nested_mean = _mean([f["real_flagged_pct"] for p in ps for f in nested_res[p]]) if ps else math.nan
        oof_mean = _mean([f["real_flagged_pct"] for v in oof.values() for f in v])
        goals = [("real answers flagged out of sample (refit per fold, training answers) <= 2 %", nested_mean <= 2,
                  f"{_fmt(nested_mean, 2)} % ({len(ps)} prompts)"),
                 ("real answers flagged out of sample (threshold rule per fold, training answers) <= 2 %",
                  oof_mean <= 2, f"{_fmt(oof_mean, 2)} % ({len(oof)} prompts)"),
                 ("real leaderboard answers flagged (held-out check, read once) <= 2 %", lost <= 2, f"{_fmt(lost, 2)} %"),
                 ("ARR on the 25 generator configurations >= 95 %", arr_m >= 95, f"{_fmt(arr_m)} %"),
                 ("grammar-noised leaderboard answers flagged <= 10 %", gram <= 10, f"{_fmt(gram)} %"),
                 ("off-topic answers caught on every prompt pair >= 95 %", bool(off) and min(off) >= 95,
                  f"lowest pair {_fmt(min(off) if off else math.nan)} %, mean {_fmt(_mean(off))} %")]
        L += ["The leaderboard answers were read **once, at the end**, as the held-out check (no threshold, feature "
              "or setting was chosen on them):", "",
              "| goal | met? | measured |", "| --- | --- | ---: |"]
        L += [f"| {g} | {'yes' if ok else '**no**'} | {m} |" for g, ok, m in goals]
        L += ["", "Per prompt (leaderboard): " + "; ".join(
            f"{p}: real {_fmt(pl[p]['real_flagged_pct'], 1)} %, grammar-noised {_fmt(pl[p]['grammar_flagged_pct'], 1)} %"
            for p in fp) + ".", ""]
    return L


_CELL = re.compile(r"^\|(.*)\|$")


def doc_tables(text: str) -> dict[tuple[str, str, str], str]:
    """{(section heading, row label, column header): cell} of every Markdown table of a findings document."""
    out: dict[tuple[str, str, str], str] = {}
    head, cols = "", None
    for line in text.splitlines():
        if line.startswith("#"):
            head, cols = line.strip("# ").strip(), None
            continue
        m = _CELL.match(line.strip())
        if not m:
            cols = None
            continue
        cells = [c.strip() for c in m.group(1).split("|")]
        if cols is None:
            cols = cells
        elif set("".join(cells)) <= set("-: "):
            continue
        else:
            for c, v in zip(cols[1:], cells[1:], strict=False):
                out[(head, cells[0], c)] = v
    return out


def _num(s: str) -> float | None:
    m = re.search(r"-?\d+(?:\.\d+)?", s.replace("**", ""))
    return float(m.group()) if m else None


def moved_section(old: str, new: str) -> list[str]:
    """Section 6: every figure of a table present in both the previous and this document that changed."""
    a, b = doc_tables(old), doc_tables(new)
    moved = []
    for key in sorted(set(a) & set(b)):
        x, y = _num(a[key]), _num(b[key])
        if x is None or y is None or x == y or "fit s" in key[1] or "s (all prompts)" in key[2] or "apply" in key[2]:
            continue
        moved.append((key, a[key], b[key], y - x))
    L = ["## 6. What moved since the previous document", "",
         "Every table cell present in both the previous rendering and this one whose number changed (times left out: "
         "they follow the machine's load). The reasons are in the notes below (\"What moved and why\").", ""]
    if not moved:
        return L + ["Nothing moved.", ""]
    headline = [m for m in moved if _headline(m[0])]
    L += ["Headline cells (means, the paper comparison, the countermeasure and filter summaries):", "",
          "| section | row | column | before | now |", "| --- | --- | --- | ---: | ---: |"]
    L += [f"| {k[0][:40]} | {k[1]} | {k[2]} | {o} | {n} |" for k, o, n, _ in headline]
    L += ["", "Per-configuration and per-prompt cells, by section: how many moved, their mean absolute move, the "
          "largest:", "", "| section | cells moved | mean absolute move | largest (row, column: before -> now) |",
          "| --- | ---: | ---: | --- |"]
    by: dict[str, list[Any]] = {}
    for m in moved:
        if not _headline(m[0]):
            by.setdefault(m[0][0], []).append(m)
    for sec, ms in by.items():
        k, o, n, d = max(ms, key=lambda m: abs(m[3]))
        L.append(f"| {sec[:60]} | {len(ms)} | {float(np.mean([abs(m[3]) for m in ms])):.1f} | {k[1]}, {k[2]}: "
                 f"{o} -> {n} |")
    return L + [""]


_HEADLINE_COLUMNS = {"ours", "mean ARR %", "QWK", "noisy same-score 10 %", "30 %", "50 %", "ARR %",
                     "real answers lost %", "noisy flagged 10 %", "unseen shuffles %"}


def _headline(key: tuple[str, str, str]) -> bool:
    """A summary cell: a mean row of section 1, or a column of the summary tables."""
    return "**mean**" in key[1] or (key[2] in _HEADLINE_COLUMNS and not key[0].startswith("ARR % per"))


# ----------------------------------------------------------------------------------------------------------

def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="prompts 3 and 10, small sizes (a smoke run)")
    ap.add_argument("--prompts", default=None, help="comma-separated prompt ids (default: all 10)")
    ap.add_argument("--count", type=int, default=200, help="adversarial test answers per configuration and prompt")
    ap.add_argument("--tradeoff-count", type=int, default=40, help="answers per configuration in the countermeasure run")
    ap.add_argument("--dev-count", type=int, default=40, help="filter development answers per configuration")
    ap.add_argument("--adv-total", type=int, default=1000, help="adversarial training answers per prompt")
    ap.add_argument("--neural-epochs", type=int, default=3)
    ap.add_argument("--embeddings", default="static", choices=["static", "contextual"],
                    help="NeuralScorer word vectors (static: MiniLM input embeddings, no transformer pass)")
    ap.add_argument("--max-words", type=int, default=96, help="NeuralScorer: words per answer")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workers", type=int, default=1, help="engine worker processes")
    ap.add_argument("--no-nested", action="store_true", help="skip step 5 (about 2 min per prompt)")
    ap.add_argument("--deadline", default=None, help="HH:MM (local time): no run or model training starts after it")
    ap.add_argument("--nested-deadline", default=None, help="HH:MM (local time): step 5 starts no new prompt after it")
    ap.add_argument("--work", default=None, help="work directory (default .findings-work/content; another one for "
                                                 "a subset of prompts, whose filters learn only those prompts)")
    ap.add_argument("--restart", action="store_true", help="drop the work directory (models, filters, runs) first")
    ap.add_argument("--render-only", action="store_true", help="render from the finished steps only")
    ap.add_argument("--write-partial", action="store_true", help="write docs/findings/content.md even when a run is "
                                                                 "missing (default: the work directory's content.md)")
    args = ap.parse_args()
    work = Path(args.work).resolve() if args.work else WORK
    if args.quick:
        args.prompts = args.prompts or "3,10"
        args.count, args.tradeoff_count, args.dev_count, args.adv_total, args.neural_epochs = 30, 10, 10, 100, 1
        work = WORK.parent / "content-quick"
    if args.restart and work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    prompts = (args.prompts or "1,2,3,4,5,6,7,8,9,10").split(",")
    if not args.render_only:
        with open(work / "commands.log", "a", encoding="utf-8") as fh:
            fh.write(time.strftime("%Y-%m-%d %H:%M") + "\tpython scripts/findings/content.py "
                     + " ".join(sys.argv[1:]) + "\n")
    from callbluff.datasets import load

    train_spec, test_spec = data_specs(prompts)
    train, test = load(train_spec), load(test_spec)
    t_all, load0 = time.perf_counter(), os.getloadavg()[0]
    typos = typo_corpus()
    steps_file = work / "steps.json"
    steps: dict[str, Any] = json.loads(steps_file.read_text()) if steps_file.is_file() else {}
    late = lambda: bool(args.deadline) and time.strftime("%H:%M") >= args.deadline  # noqa: E731
    if not args.render_only:
        # the filters first (section 3, 5): they need no scorer
        t0 = time.perf_counter()
        steps["filter_fit_s"] = fit_filters(work, train, typos, args)
        steps["setup_s"] = steps.get("setup_s", 0) + round(time.perf_counter() - t0, 1)
        steps_file.write_text(json.dumps(steps))
    f_file = work / "filters-alone.json"
    if f_file.is_file():
        f_res = json.loads(f_file.read_text())
    elif args.render_only:
        f_res = {}
    else:
        t0 = time.perf_counter()
        f_res = filters_alone(work, train, test, typos, steps["filter_fit_s"], args.tradeoff_count)
        steps["filters_alone_s"] = round(time.perf_counter() - t0, 1)
        f_file.write_text(json.dumps(f_res))
        steps_file.write_text(json.dumps(steps))
    nested_res: dict[str, list[dict[str, Any]]] = {}
    if not args.no_nested and not args.render_only:
        t0 = time.perf_counter()
        nested_res = nested(work, train, typos, args)
        steps["nested_s"] = steps.get("nested_s", 0) + round(time.perf_counter() - t0, 1)
        steps_file.write_text(json.dumps(steps))
    elif (work / "nested").is_dir():
        nested_res = {p.stem: json.loads(p.read_text()) for p in (work / "nested").glob("*.json")}
    if not args.render_only and not late():
        t0 = time.perf_counter()
        steps["model_fit_s"] = {**steps.get("model_fit_s", {}), **train_models(work, train, args, scorers_only=True)}
        steps["setup_s"] = steps.get("setup_s", 0) + round(time.perf_counter() - t0, 1)
        steps_file.write_text(json.dumps(steps))
    models = work / "models"
    scorer_targets = [{"name": TARGETS[k], "type": "model", "path": str(models / k)} for k in TARGETS]
    cm_targets = ([{"name": v, "type": "model", "path": str(models / ("content" if v == "paper" else v))}
                   for v in VARIANTS]
                  + [{"name": a, "type": "model", "path": str(models / a.replace(":", "-"))} for a in ADV_TRAIN]
                  + [{"name": f"filter:{k}", "type": "model", "path": str(models / "content"),
                      "filter": str(work / "filters" / k)} for k in FILTER_KINDS])
    off = OFF_PER_PAIR * (len(prompts) - 1)
    def maybe_run(name: str, targets: list[dict[str, Any]], tables: list[dict[str, Any]]) -> Any:
        done = (work / "runs" / name / "findings-run.json").is_file()
        if not done and (args.render_only or late()):
            log(f"run {name}: not computed (" + ("render only" if args.render_only else "deadline") + ")")
            return [], None, None
        return run(work, name, targets, tables, test_spec, args.workers)

    s_rows, s_dir, s_info = maybe_run("scorers", scorer_targets, attack_tables(args.count, off, train_spec, False))
    if not args.render_only and not late():
        t0 = time.perf_counter()
        steps["model_fit_s"] = {**steps.get("model_fit_s", {}), **train_models(work, train, args)}
        steps["setup_s"] = steps.get("setup_s", 0) + round(time.perf_counter() - t0, 1)
        steps_file.write_text(json.dumps(steps))
    c_rows, c_dir, c_info = maybe_run("countermeasures", cm_targets,
                                      attack_tables(args.tradeoff_count, off, train_spec, True))
    steps["runs_s"] = {k: v["seconds"] for k, v in (("scorers", s_info), ("countermeasures", c_info)) if v}
    if not args.render_only:
        steps.setdefault("loads", []).extend([round(load0, 2), round(os.getloadavg()[0], 2)])
        steps["wall_s_last"] = round(time.perf_counter() - t_all, 1)
        steps_file.write_text(json.dumps(steps))
    # the render's shapes: per prompt, per system; Misspell's achieved replacement rates from its examples' meta
    achieved: dict[str, dict[str, list[int]]] = {}
    if c_dir is not None:
        mis = examples_of(c_dir, "paper")
        mis = mis[mis["attack"] == "Misspell"]
        for pid, p, m in zip(mis["prompt_id"], mis["params"], mis["meta"], strict=True):
            d = json.loads(m)
            acc = achieved.setdefault(str(pid), {}).setdefault(str(json.loads(p)["rate"]), [0, 0])
            acc[0] += d["replaced"]
            acc[1] += d["words"]
    a_res: dict[str, dict] = {}
    b_res: dict[str, dict] = {}
    for pid in prompts:
        if s_dir is not None:
            a_res[pid] = {"systems": {name: {**per_prompt(s_rows, name, pid), "fit_s": math.nan}
                                      for name in TARGETS.values()}, "examples": {}}
        if c_dir is not None:
            b_res[pid] = {"countermeasures": {}, "filters": f_res.get(pid, {}).get("filters", {}),
                          "noisy_achieved": {r: a / max(1, w) for r, (a, w) in achieved.get(pid, {}).items()}}
            for t in cm_targets:
                key = "content" if t["name"] == "paper" or t["name"].startswith("filter:") else t["name"]
                b_res[pid]["countermeasures"][t["name"]] = {**per_prompt(c_rows, t["name"], pid),
                                                            "fit_s": steps["model_fit_s"].get(key, 0.0) / len(prompts)}
    pairs: dict[str, dict[str, dict[str, float]]] = {}
    full: dict[tuple[str, str], list[bool]] = {}
    if s_dir is not None:
        ex = examples_of(s_dir, TARGETS["content"])
        first = ex[ex["prompt_id"] == prompts[0]]
        for (a, p), txt in zip(zip(first["attack"], first["params"], strict=True), first["adversarial_text"],
                               strict=True):
            a_res[prompts[0]]["examples"].setdefault(label_of(a, json.loads(p)), txt[:120])
        score_min = {p: test.prompts[p].score_min for p in prompts}
        pairs = {k: offtopic_pairs(s_dir, TARGETS[k], score_min) for k in TARGETS}
        exs = ex[ex["attack"] == "OffTopic"]
        for pid, m, sc in zip(exs["prompt_id"], exs["meta"], exs["adv_score"], strict=True):
            full.setdefault((str(pid), json.loads(m)["source_prompt"]), []).append(
                sc >= test.prompts[str(pid)].score_max)
    meta = {"command": "python scripts/findings/content.py " + " ".join(sys.argv[1:]), "prompts": prompts,
            "count": args.count, "tradeoff_count": args.tradeoff_count, "adv_total": args.adv_total,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version()},
            "settings": {"embeddings": args.embeddings, "neural_epochs": args.neural_epochs, "max_words": args.max_words},
            "steps": steps, "missing_b": [],
            "offtopic_full": {f"{p}<-{q}": float(np.mean(v) * 100) for (p, q), v in full.items()}}
    runs = [ln.split("\t", 1) for ln in (work / "commands.log").read_text().splitlines() if "\t" in ln] \
        if (work / "commands.log").is_file() else []
    if runs:
        meta["command"] = "; then ".join(f"{cmd} ({when})" for when, cmd in runs) + " (rendered with: " \
            + meta["command"] + ")"
    figures(a_res, b_res, prompts)
    old = OUT_MD.read_text(encoding="utf-8") if OUT_MD.is_file() else ""
    prev = work / "previous-content.md"
    if not prev.is_file() and old:
        prev.write_text(old, encoding="utf-8")  # the document before this work directory's first rendering
    body = render(meta, a_res, b_res, f_res) + "\n".join(
        offtopic_section(pairs, f_res, prompts, meta["offtopic_full"]) + generalisation_section(nested_res, f_res, prompts)) + "\n"
    body += "\n".join(moved_section(prev.read_text(encoding="utf-8") if prev.is_file() else "", body)) + "\n"
    complete = s_dir is not None and c_dir is not None
    if args.quick or not (complete or args.write_partial):
        out = work / "content.md"  # a partial rendering does not replace the document (unless --write-partial)
    else:
        out = OUT_MD
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(body + explanations(), encoding="utf-8")
    log(f"written {out}")


def explanations() -> str:
    path = Path(__file__).with_name("content_notes.md")
    return "\n" + path.read_text(encoding="utf-8") if path.is_file() else ""


if __name__ == "__main__":
    main()
