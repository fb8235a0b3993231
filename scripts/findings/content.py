"""Findings: content scoring under adversarial answers and its countermeasures (Ding et al. 2020), on ASAP-SAS.

Run from the repository root:  .venv/bin/python scripts/findings/content.py [--quick] [--prompts 1,2]
Writes docs/findings/content.md and docs/findings/content/*.svg; per-prompt results are cached under
.findings-cache/content/ (a re-run reuses finished stages; --fresh starts over).

Stages, each per prompt (so a stopped run keeps what it finished):
  A  adversarial test answers (all configurations of Figure 1, --count per configuration, generators fitted on
     the prompt's training answers, seed 1); ContentScorer (the paper's shallow system) and NeuralScorer (the
     deep one) trained on the training answers; ARR per configuration; QWK on the public leaderboard answers.
  B  countermeasures on the shallow system (Sec. 5.1, 5.2) and the filters (5.4), on the first --tradeoff-count
     answers per configuration, the leaderboard answers and their noisy versions (10/30/50 % of words replaced
     by real misspellings, Birkbeck/Holbrook/Aspell/Wikipedia typo corpora).
  F  the filters alone (5.4; no scorer): the same adversarial, leaderboard and noisy answers as stage B, plus
     shuffles of the leaderboard's fully correct answers (answers no filter has seen). Runs on its own
     (``--stages F``, a few minutes for the 10 prompts); section 3 of the document is rendered from stage F
     where it ran, else from stage B's filters.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("CALLBLUFF_SHARED", REPO.parent / "shared"))
DATA = SHARED / "data"
CACHE = REPO / ".findings-cache" / "content"
OUT_MD = REPO / "docs" / "findings" / "content.md"
FIG_DIR = REPO / "docs" / "findings" / "content"
RATES = (0.1, 0.3, 0.5)
TYPO_FILES = ("missp.dat.gz", "holbrook-missp.dat", "aspell.dat", "wikipedia.dat")

# Ding et al. 2020 figures (Sec. 3.2, 4, 5.4) shown beside ours
PAPER = {"shallow_arr": 77.0, "deep_arr": 53.0, "shallow_qwk": 0.673, "deep_qwk": 0.7705,
         "nonword_arr": 86.0, "nonword_real_lost": 3.6}

SEED_TEST, SEED_TRAIN_ADV, SEED_FILTER = 1, 2, 3


def log(msg: str) -> None:
    print(time.strftime("%H:%M:%S"), msg, flush=True)


# ----------------------------------------------------------------------------------------------------------
# data
# ----------------------------------------------------------------------------------------------------------

def load_data(prompts: list[str]) -> tuple[Any, Any]:
    from callbluff.datasets import load

    train_p, test_p = DATA / "asap-sas" / "train.tsv.gz", DATA / "asap-sas" / "public_leaderboard_rel_2.tsv.gz"
    for p in (train_p, test_p):
        if not p.is_file():
            sys.exit(f"needs {p} (ASAP-SAS; set CALLBLUFF_SHARED to the directory holding data/asap-sas)")
    sel = ",".join(prompts)
    return load(f"asap-sas:{train_p}?prompts={sel}"), load(f"asap-sas:{test_p}?prompts={sel}")


def typo_corpus() -> Any:
    from callbluff.resources.typos import load_corpus

    files = [DATA / "typos" / f for f in TYPO_FILES]
    missing = [str(f) for f in files if not f.is_file()]
    if missing:
        sys.exit(f"needs the typo corpora {missing} (../shared/data/typos)")
    return load_corpus([str(f) for f in files])


def noisy_versions(texts: list[str], ids: list[str], typos: Any) -> dict[str, Any]:
    from callbluff.defenses.tradeoff import noisy_answer
    from callbluff.seeding import derive_seed

    out: dict[str, Any] = {}
    for rate in RATES:
        new, replaced, words = [], 0, 0
        for rid, t in zip(ids, texts, strict=True):
            rng = np.random.default_rng(derive_seed(0, "noisy", rid, rate))
            n, r, w = noisy_answer(t, rate, typos, rng)
            new.append(n)
            replaced += r
            words += w
        out[str(rate)] = {"texts": new, "achieved": replaced / max(1, words)}
    return out


def arr_by_config(scores: np.ndarray, labels: list[str], score_min: float) -> dict[str, float]:
    from callbluff.metrics import arr

    by: dict[str, list[float]] = {}
    for s, lab in zip(scores.tolist(), labels, strict=True):
        by.setdefault(lab, []).append(s)
    return {lab: float(arr(v, score_min)) for lab, v in by.items()}


# ----------------------------------------------------------------------------------------------------------
# stage A: the attack
# ----------------------------------------------------------------------------------------------------------

def timed(stage: Any) -> Any:
    def run(*a: Any) -> dict[str, Any]:
        t0, load0 = time.perf_counter(), os.getloadavg()[0]
        res = stage(*a)
        res["stage_s"] = round(time.perf_counter() - t0, 1)
        res["load"] = [round(load0, 2), round(os.getloadavg()[0], 2)]
        res["finished"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        return res
    return run


@timed
def stage_a(pid: str, train: Any, test: Any, args: argparse.Namespace) -> dict[str, Any]:
    from callbluff.battery import battery
    from callbluff.models.content import ContentScorer

    prompt = train.prompts[pid]
    tr = [r for r in train.records() if r.prompt_id == pid]
    te = [r for r in test.records() if r.prompt_id == pid]
    t0 = time.perf_counter()
    errors: list[str] = []
    adv = battery(tr, prompt, args.count, seed=SEED_TEST, errors=errors)
    t_gen = time.perf_counter() - t0
    labels = [a.config for a in adv]
    texts = [a.text for a in adv]
    res: dict[str, Any] = {"prompt": pid, "n_train": len(tr), "n_test": len(te), "generate_s": round(t_gen, 1),
                           "n_by_config": {lab: labels.count(lab) for lab in dict.fromkeys(labels)},
                           "generator_errors": errors, "systems": {}}
    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / f"adv-{pid}.json").write_text(json.dumps({"labels": labels, "texts": texts}))
    systems = {"ContentScorer": lambda: ContentScorer()}
    score_systems(res, systems, pid, prompt, tr, te, labels, texts)
    # one example per configuration for the document (the first answer, cut)
    res["examples"] = {lab: next(a.text for a in adv if a.config == lab)[:120] for lab in res["n_by_config"]}
    return res


@timed
def stage_n(pid: str, train: Any, test: Any, args: argparse.Namespace) -> dict[str, Any]:
    """NeuralScorer on the adversarial answers stage A made for the prompt."""
    from callbluff.models.neural import NeuralScorer

    prompt = train.prompts[pid]
    tr = [r for r in train.records() if r.prompt_id == pid]
    te = [r for r in test.records() if r.prompt_id == pid]
    adv = json.loads((CACHE / f"adv-{pid}.json").read_text())
    res: dict[str, Any] = {"prompt": pid, "systems": {}}
    systems = {"NeuralScorer": lambda: NeuralScorer(embeddings=args.embeddings, epochs=args.neural_epochs,
                                                    min_epochs=min(3, args.neural_epochs), patience=2,
                                                    max_words=args.max_words, num_threads=args.threads)}
    score_systems(res, systems, pid, prompt, tr, te, adv["labels"], adv["texts"])
    res["settings"] = neural_settings(args)
    return res


def neural_settings(args: argparse.Namespace) -> dict[str, Any]:
    return {"embeddings": args.embeddings, "neural_epochs": args.neural_epochs, "max_words": args.max_words}


def score_systems(res: dict[str, Any], systems: dict[str, Any], pid: str, prompt: Any, tr: list, te: list,
                  labels: list[str], texts: list[str]) -> None:
    from callbluff.metrics import qwk

    gold = [r.gold for r in te]
    lo, hi = prompt.score_min, prompt.score_max
    by_config = list(dict.fromkeys(labels))
    for name, make in systems.items():
        t1 = time.perf_counter()
        model = make().fit(tr, {pid: prompt})
        t_fit = time.perf_counter() - t1
        real = model.score_texts(pid, [r.text for r in te])
        advs = model.score_texts(pid, texts)
        res["systems"][name] = {
            "qwk": float(qwk(gold, real, score_min=lo, score_max=hi)), "fit_s": round(t_fit, 1),
            "arr_by_config": arr_by_config(np.asarray(advs, dtype=float), labels, lo),
            "mean_score_by_config": {lab: float(np.mean([s for s, la in zip(advs, labels, strict=True) if la == lab]))
                                     for lab in by_config},
            "score_s": round(time.perf_counter() - t1 - t_fit, 1)}
        log(f"A prompt {pid} {name}: QWK {res['systems'][name]['qwk']:.3f}, mean ARR "
            f"{np.mean(list(res['systems'][name]['arr_by_config'].values())):.1f} (fit {t_fit:.0f} s)")


# ----------------------------------------------------------------------------------------------------------
# stage B: countermeasures and the trade-off
# ----------------------------------------------------------------------------------------------------------

def filter_test_answers(pid: str, train: Any, test: Any, typos: Any, args: argparse.Namespace) -> dict[str, Any]:
    """What stages B and F measure the filters on: the prompt's training and leaderboard records, the first
    ``--tradeoff-count`` adversarial answers per configuration (the first answers of stage A's set) with their
    configuration labels, the leaderboard texts and their noisy versions."""
    from callbluff.battery import battery

    prompt = train.prompts[pid]
    tr = [r for r in train.records() if r.prompt_id == pid]
    te = [r for r in test.records() if r.prompt_id == pid]
    adv = battery(tr, prompt, args.tradeoff_count, seed=SEED_TEST)
    real_texts = [r.text for r in te]
    return {"prompt": prompt, "tr": tr, "te": te, "labels": [a.config for a in adv],
            "adv_texts": [a.text for a in adv], "real_texts": real_texts,
            "noisy": noisy_versions(real_texts, [r.id for r in te], typos)}


def filter_dev_adversarials(pid: str, t: dict[str, Any], args: argparse.Namespace) -> tuple[list[str], float]:
    """The filters' development adversarials (generators fitted on 80 % of the training answers, seed
    ``SEED_FILTER``), shared by the filters that use them, and the seconds they took."""
    from callbluff.battery import battery
    from callbluff.defenses.filters import dev_split

    fit_part, _ = dev_split(t["tr"], 0.2, SEED_FILTER, pid)
    t0 = time.perf_counter()
    dev_adv = [a.text for a in battery(fit_part, t["prompt"], args.dev_count, seed=SEED_FILTER)]
    return dev_adv, time.perf_counter() - t0


def the_filters() -> list[Any]:
    """Ding et al.'s two filters and ours (Sec. 5.4), as stages B and F fit them."""
    from callbluff.defenses import NonWordRateFilter, PlausibilityFilter, UnigramPerplexityFilter

    return [NonWordRateFilter(seed=SEED_FILTER), UnigramPerplexityFilter(seed=SEED_FILTER),
            PlausibilityFilter(seed=SEED_FILTER)]


def flag_figures(f: Any, pid: str, t: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray],
                                                                dict[str, Any]]:
    """A fitted filter's flags on the leaderboard, adversarial and noisy answers of ``t``, and its figures: %
    of real answers flagged, % flagged per adversarial configuration, % of noisy answers flagged per rate."""
    fr, fa = f.flag(pid, t["real_texts"]), f.flag(pid, t["adv_texts"])
    fn = {k: f.flag(pid, v["texts"]) for k, v in t["noisy"].items()}
    by: dict[str, list[bool]] = {}
    for flag, lab in zip(fa.tolist(), t["labels"], strict=True):
        by.setdefault(lab, []).append(flag)
    return fr, fa, fn, {"real_flagged_pct": float(fr.mean() * 100),
                        "flag_arr_by_config": {lab: float(np.mean(v) * 100) for lab, v in by.items()},
                        "noisy_flagged_pct": {k: float(v.mean() * 100) for k, v in fn.items()}}


@timed
def stage_b(pid: str, train: Any, test: Any, typos: Any, args: argparse.Namespace) -> dict[str, Any]:
    from callbluff.adversarial_training import adversarial_training_set
    from callbluff.defenses import FEATURE_VARIANTS, feature_variant, same_score_pct
    from callbluff.metrics import qwk

    t = filter_test_answers(pid, train, test, typos, args)
    prompt, tr, te, labels = t["prompt"], t["tr"], t["te"], t["labels"]
    adv_texts, real_texts, noisy = t["adv_texts"], t["real_texts"], t["noisy"]
    gold = [r.gold for r in te]
    lo, hi = prompt.score_min, prompt.score_max
    res: dict[str, Any] = {"prompt": pid, "n_adversarial": len(adv_texts), "countermeasures": {}, "filters": {},
                           "noisy_achieved": {k: v["achieved"] for k, v in noisy.items()}}

    def measure(name: str, model: Any, fit_s: float, extra: dict[str, Any] | None = None) -> dict[str, Any]:
        real = np.asarray(model.score_texts(pid, real_texts), dtype=float)
        a = np.asarray(model.score_texts(pid, adv_texts), dtype=float)
        row = {"qwk": float(qwk(gold, real, score_min=lo, score_max=hi)), "fit_s": round(fit_s, 1),
               "arr_by_config": arr_by_config(a, labels, lo),
               "noisy_same": {k: same_score_pct(real, model.score_texts(pid, v["texts"])) for k, v in noisy.items()},
               **(extra or {})}
        log(f"B prompt {pid} {name}: QWK {row['qwk']:.3f}, mean ARR {np.mean(list(row['arr_by_config'].values())):.1f}"
            f", noisy same-score {row['noisy_same']}")
        return row

    base = None
    for variant in FEATURE_VARIANTS:
        t0 = time.perf_counter()
        m = feature_variant(variant).fit(tr, {pid: prompt})
        res["countermeasures"][variant] = measure(variant, m, time.perf_counter() - t0)
        if variant == "paper":
            base = m
    for label, cfgs, total in (("adv-train:shuffle", [{"attack": "Shuffle", "params": {}}], args.adv_total),
                               ("adv-train:all", None, args.adv_total)):
        t0 = time.perf_counter()
        extra = adversarial_training_set(tr, {pid: prompt}, total=total, configs=cfgs, seed=SEED_TRAIN_ADV)
        m = feature_variant("paper").fit(tr + extra, {pid: prompt})
        res["countermeasures"][label] = measure(label, m, time.perf_counter() - t0, {"n_added": len(extra)})

    # filters in front of the paper's scorer; the development adversarials are shared by the filters that use them
    assert base is not None
    dev_adv, t_dev = filter_dev_adversarials(pid, t, args)
    base_real = np.asarray(base.score_texts(pid, real_texts), dtype=float)
    base_adv = np.asarray(base.score_texts(pid, adv_texts), dtype=float)
    base_noisy = {k: np.asarray(base.score_texts(pid, v["texts"]), dtype=float) for k, v in noisy.items()}
    for f in the_filters():
        t0 = time.perf_counter()
        f.fit(tr, {pid: prompt}, adversarial={pid: dev_adv})
        fit_s = time.perf_counter() - t0 + (t_dev if f.uses_dev else 0.0)
        fr, fa, fn, figures = flag_figures(f, pid, t)
        sys_real = np.where(fr, lo, base_real)
        res["filters"][f.kind] = {"fit_s": round(fit_s, 1), **figures, "summary": f.summary()[pid]}
        name = f"filter:{f.kind}"
        system_adv = np.where(fa, lo, base_adv)
        res["countermeasures"][name] = {
            "qwk": float(qwk(gold, sys_real, score_min=lo, score_max=hi)), "fit_s": round(fit_s, 1),
            "arr_by_config": arr_by_config(system_adv, labels, lo),
            "noisy_same": {k: same_score_pct(sys_real, np.where(fn[k], lo, base_noisy[k])) for k in noisy}}
        log(f"B prompt {pid} {name}: real flagged {fr.mean() * 100:.1f} %, flag ARR {fa.mean() * 100:.1f} %")
    return res


@timed
def stage_f(pid: str, train: Any, test: Any, typos: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The filters' own figures (paper Sec. 5.4), without any scorer: the same answers as stage B's filters."""
    from callbluff.engine.generate import AttackSpec, Generation

    t = filter_test_answers(pid, train, test, typos, args)
    prompt, tr, te = t["prompt"], t["tr"], t["te"]
    # Shuffle of answers the filters never saw: the leaderboard's fully correct answers (battery's Shuffle
    # shuffles training answers, most of which the filters were fitted on), through the one generation path
    correct = [r for r in te if r.gold is not None and r.gold >= prompt.score_max]
    shuffle = Generation([AttackSpec.make("Shuffle", {})], {pid: prompt}, seed=SEED_TEST, failures="raise")
    unseen_shuffle = [e.text for e in shuffle.generate_records(correct)[0]]
    dev_adv, t_dev = filter_dev_adversarials(pid, t, args)
    res: dict[str, Any] = {"prompt": pid, "n_adversarial": len(t["adv_texts"]), "n_real": len(t["real_texts"]),
                           "n_unseen_shuffle": len(unseen_shuffle), "filters": {},
                           "noisy_achieved": {k: v["achieved"] for k, v in t["noisy"].items()}}
    for f in the_filters():
        t0 = time.perf_counter()
        f.fit(tr, {pid: prompt}, adversarial={pid: dev_adv})
        fit_s = time.perf_counter() - t0
        t1 = time.perf_counter()
        _, fa, _, figures = flag_figures(f, pid, t)
        fu = f.flag(pid, unseen_shuffle) if unseen_shuffle else np.zeros(0, dtype=bool)
        apply_s = time.perf_counter() - t1
        res["filters"][f.kind] = {
            "fit_s": round(fit_s + (t_dev if f.uses_dev else 0.0), 1), "filter_fit_s": round(fit_s, 1),
            "apply_s": round(apply_s, 1), "n_applied": len(t["real_texts"]) + len(t["adv_texts"]) + len(fu)
            + sum(len(v["texts"]) for v in t["noisy"].values()),
            **figures,
            "unseen_shuffle_flagged_pct": float(fu.mean() * 100) if len(fu) else math.nan,
            "summary": f.summary()[pid], "params": f.params}
        log(f"F prompt {pid} {f.kind}: real flagged {figures['real_flagged_pct']:.1f} %, flag ARR {fa.mean() * 100:.1f} %, "
            f"unseen shuffles {res['filters'][f.kind]['unseen_shuffle_flagged_pct']:.1f} % (fit {fit_s:.1f} s, "
            f"apply {apply_s:.1f} s)")
    return res


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
    from callbluff.battery import config_label

    from callbluff.attacks.content import ding2020_configurations

    configs = [config_label(c) for c in ding2020_configurations(1)]
    f_res = f_res or {}
    prompts = [p for p in meta["prompts"] if p in a_res or p in b_res or p in f_res]
    L: list[str] = []
    L += ["# Findings: adversarial answers against content scoring, and countermeasures (Ding et al. 2020)", "",
          "Generated by `scripts/findings/content.py`; do not edit by hand.", "",
          f"Command: `{meta['command']}`. Data: ASAP-SAS (`../shared/data/asap-sas`): the scorers and every "
          "generator are fitted on `train.tsv.gz` per prompt; QWK and the noisy answers use the public leaderboard "
          "answers (`public_leaderboard_rel_2` with the gold scores of `public_leaderboard_solution`). "
          f"Prompts: {', '.join(prompts)}. "
          + (f"Adversarial test answers: {meta['count']} per configuration and prompt "
             f"(Shuffle: fewer where a prompt has fewer fully correct training answers); the countermeasure study uses "
             f"the first {meta['tradeoff_count']} of them per configuration." if a_res else
             f"Adversarial test answers (stage F): the first {meta['tradeoff_count']} per configuration and prompt of "
             "stage A's set (the same generators, fitted on the training answers, seed 1).")
          + f" Compute: {meta['wall_s'] / 60:.1f} min of "
          f"wall time in all stages (the invocations above, each computing the stages not yet cached) on {meta['machine']['cpus']} CPU cores shared with other engineers' jobs: load averages seen "
          f"{min(meta['loads'], default=0):.1f}-{max(meta['loads'], default=0):.1f}, so times are upper bounds; python "
          f"{meta['machine']['python']}." + (f" NeuralScorer settings here: {meta['settings']['embeddings']} word vectors, "
          f"at most {meta['settings']['neural_epochs']} epochs, {meta['settings']['max_words']} words per answer (see the "
          "notes below)." if a_res else ""),
          ""]
    if not a_res or not b_res:
        missing = [s for s, r in (("1 (stages A and N: the scoring systems)", a_res),
                                  ("2 (stage B: countermeasures on the scorer)", b_res)) if not r]
        L += [f"**Not computed in the invocations above:** section{'s' if len(missing) > 1 else ''} "
              f"{' and '.join(missing)}; {'they need' if len(missing) > 1 else 'it needs'} about 100 min on two cores (`python scripts/findings/content.py "
              "--stages A,B,N`). Their last rendering is in this file's git history (written with the filter of "
              "its time)." + (" Section 3 (the filters) comes from stage F." if f_res else ""), ""]
    if meta.get("missing_b"):
        L += [f"**Not finished:** the countermeasure stage did not run on prompts {', '.join(meta['missing_b'])} "
              "(time limit); the countermeasure figures are means over the other prompts.", ""]
    L += ["## Blindness", "",
          "Nothing here is tuned on the leaderboard answers: the scorers' parameters are chosen by cross-validation "
          "on the training answers, the filters' thresholds on the training answers (non-word rate: a development "
          "split; our plausibility filter: all training answers, out-of-fold), and "
          "the adversarial test answers come from generators fitted on the training answers with a seed (1) used "
          "nowhere else (adversarial training: seed 2; filter development answers: seed 3, generators fitted on "
          "80 % of the training answers). The filters' development adversarials come from the same 25 generator "
          "configurations as the test adversarials (different seeds, different fitted answers): the filter figures "
          "are therefore in-distribution for the generator types, which the paper's are too; a new kind of "
          "adversarial answer may pass them more often.", ""]
    if a_res:
        L += systems_section(a_res, [p for p in prompts if p in a_res])
    b_prompts = [p for p in prompts if p in b_res]
    if b_prompts:
        L += countermeasure_section(b_res, b_prompts, configs, meta)
    filt = {p: f_res[p] if p in f_res else b_res[p] for p in prompts if p in f_res or p in b_res}
    if filt:
        L += filter_section(filt, list(filt), configs)
    return "\n".join(L) + "\n"


def systems_section(a_res: dict[str, dict], prompts: list[str]) -> list[str]:
    from callbluff.attacks.content import ding2020_configurations
    from callbluff.battery import config_label

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
        L.append("| fit s | " + " | ".join(_fmt(a_res[p]["systems"][s]["fit_s"], 0) for p in ps) + " |")
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
    src = sorted({"F" if "n_unseen_shuffle" in b_res[p] else "B" for p in prompts})
    have_unseen = all("unseen_shuffle_flagged_pct" in b_res[p]["filters"][k] for p in prompts for k in kinds)
    L = ["## 3. Filters (paper Sec. 5.4, Figure 5)", "",
         f"Stage {' and '.join(src)}, prompts {', '.join(prompts)}. "
         "A filter's own figures: ARR = % of adversarial answers it flags (mean over the 25 configurations); real "
         "lost = % of leaderboard answers it flags; noisy flagged = % of misspelled leaderboard answers it flags"
         + ("; unseen shuffles = % of shuffled fully correct *leaderboard* answers it flags (the battery's Shuffle "
            "answers shuffle training answers, most of which the filters were fitted on; these it never saw)"
            if have_unseen else "") + ". Means over prompts.", "",
         "| filter | ARR % | real answers lost % | noisy flagged 10 % | 30 % | 50 % |"
         + (" unseen shuffles % |" if have_unseen else "") + " fit s / apply s (all prompts) | paper |",
         "| --- | ---: | ---: | ---: | ---: | ---: |" + (" ---: |" if have_unseen else "") + " ---: | --- |"]
    paper_txt = {"nonword": f"ARR {PAPER['nonword_arr']:.0f} %, {PAPER['nonword_real_lost']} % lost",
                 "unigram-perplexity": "better ARR than non-word, > 50 % lost",
                 "plausibility": "(ours; goal ARR >= 95 %, <= 2 % lost)"}
    for k in kinds:
        a = _mean([_mean(list(b_res[p]["filters"][k]["flag_arr_by_config"].values())) for p in prompts])
        lost = _mean([b_res[p]["filters"][k]["real_flagged_pct"] for p in prompts])
        nf = {r: _mean([b_res[p]["filters"][k]["noisy_flagged_pct"][r] for p in prompts]) for r in ("0.1", "0.3", "0.5")}
        us = (f" {_fmt(_mean([b_res[p]['filters'][k]['unseen_shuffle_flagged_pct'] for p in prompts]))} |"
              if have_unseen else "")
        fit = sum(b_res[p]["filters"][k].get("filter_fit_s", b_res[p]["filters"][k]["fit_s"]) for p in prompts)
        app = [b_res[p]["filters"][k].get("apply_s") for p in prompts]
        times = f"{fit:.0f} / " + (f"{sum(app):.0f}" if None not in app else "n/a")
        L.append(f"| {k} | {_fmt(a)} | {_fmt(lost)} | {_fmt(nf['0.1'])} | {_fmt(nf['0.3'])} | {_fmt(nf['0.5'])} |"
                 f"{us} {times} | {paper_txt.get(k, '')} |")
    L += ["", "Per configuration (% flagged, mean over prompts):", "",
          "| configuration | " + " | ".join(kinds) + " |", "| --- |" + " ---: |" * len(kinds)]
    for c in configs:
        L.append(f"| {c} | " + " | ".join(_fmt(_mean([b_res[p]['filters'][k]['flag_arr_by_config'].get(c, math.nan)
                                                       for p in prompts]), 0) for k in kinds) + " |")
    L += ["", "Thresholds chosen per prompt on the training answers, never on the leaderboard (non-word rate: the "
          "development split, max mean(ARR, recall); ours: at most 2 % of the real answers it learns from flagged, "
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
        L += ["", f"**Goal of issue 11 (our filter: ARR >= 95 % over the 25 configurations with <= 2 % of real answers "
              f"lost, {len(prompts)} prompts): {'met' if met else 'not met'}** (ARR {_fmt(pa)} %, real lost "
              f"{_fmt(pl_lost, 2)} %). Configurations it flags less than 95 % of (mean over prompts): "
              + (", ".join(f"{c} {v:.1f} %" for c, v in weak) or "none") + "."]
    return L


def figures(a_res: dict[str, dict], b_res: dict[str, dict], prompts: list[str]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from callbluff.attacks.content import ding2020_configurations
    from callbluff.battery import config_label

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
        fig.savefig(FIG_DIR / "arr_by_configuration.svg")
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
    fig.savefig(FIG_DIR / "tradeoff.svg")
    plt.close(fig)


# ----------------------------------------------------------------------------------------------------------

def stage_prompts(progress: Any, label: str, stage: str, prompts: list[str], active: bool,
                  only: list[str] | None = None) -> Any:
    """Yield ``prompts``; when the stage runs (``active``), report the prompts it still has to compute (in
    ``only`` when given, no cached ``STAGE-PID.json``) as each finishes, so the ETA counts computed prompts."""
    todo = [p for p in prompts if active and (only is None or p in only)
            and not (CACHE / f"{stage}-{p}.json").is_file()]
    if todo:
        progress(label, 0, len(todo))
    for pid in prompts:
        yield pid
        if pid in todo:
            progress(label, todo.index(pid) + 1, len(todo))


STAGE_LABELS = {"A": "stage A (answers + ContentScorer): prompts", "B": "stage B (countermeasures): prompts",
                "N": "stage N (NeuralScorer): prompts", "F": "stage F (filters alone): prompts"}


def run_stages(args: argparse.Namespace, prompts: list[str], train: Any, test: Any,
               progress: Any) -> tuple[dict[str, dict], dict[str, dict], dict[str, dict]]:
    """Stages A, B, N and F per prompt (computed, or read from the cache), reporting the prompts to
    ``progress``; returns the per-prompt results of A (with N's systems merged in), of B and of F."""
    a_res: dict[str, dict] = {}
    b_res: dict[str, dict] = {}
    stages = args.stages.split(",")
    runs = not args.render_only
    b_only = args.b_prompts.split(",") if args.b_prompts else prompts
    for pid in stage_prompts(progress, STAGE_LABELS["A"], "A", prompts, runs and "A" in stages):
        path = CACHE / f"A-{pid}.json"
        if "A" in stages and not args.render_only:
            a_res[pid] = cached("A", pid, lambda pid=pid: stage_a(pid, train, test, args))
        elif path.is_file():
            a_res[pid] = json.loads(path.read_text())
    typos = typo_corpus() if ("B" in stages or "F" in stages) and not args.render_only else None
    for pid in stage_prompts(progress, STAGE_LABELS["B"], "B", prompts, runs and "B" in stages, b_only):
        path = CACHE / f"B-{pid}.json"
        late = bool(args.deadline) and time.strftime("%H:%M") >= args.deadline
        if "B" in stages and not args.render_only and not late and pid in b_only:
            b_res[pid] = cached("B", pid, lambda pid=pid: stage_b(pid, train, test, typos, args))
        elif path.is_file():
            b_res[pid] = json.loads(path.read_text())
    for pid in stage_prompts(progress, STAGE_LABELS["N"], "N", prompts, runs and "N" in stages, list(a_res)):
        path = CACHE / f"N-{pid}.json"
        late = bool(args.deadline) and time.strftime("%H:%M") >= args.deadline
        if "N" in stages and not args.render_only and pid in a_res and not late:
            n = cached("N", pid, lambda pid=pid: stage_n(pid, train, test, args))
        elif path.is_file():
            n = json.loads(path.read_text())
        else:
            continue
        if pid in a_res:
            a_res[pid]["systems"].update(n["systems"])
            if "settings" in n:  # what the stage ran with (results cached before this was recorded lack it)
                a_res[pid]["neural_settings"] = n["settings"]
            a_res[pid]["stage_s"] = a_res[pid].get("stage_s", 0) + n.get("stage_s", 0)
            a_res[pid]["load"] = a_res[pid].get("load", []) + n.get("load", [])
    f_res: dict[str, dict] = {}
    for pid in stage_prompts(progress, STAGE_LABELS["F"], "F", prompts, runs and "F" in stages):
        path = CACHE / f"F-{pid}.json"
        if "F" in stages and not args.render_only:
            f_res[pid] = cached("F", pid, lambda pid=pid: stage_f(pid, train, test, typos, args))
        elif path.is_file():
            f_res[pid] = json.loads(path.read_text())
    return a_res, b_res, f_res


def cached(stage: str, pid: str, fn: Any) -> dict[str, Any] | None:
    path = CACHE / f"{stage}-{pid}.json"
    if path.is_file():
        return json.loads(path.read_text())
    res = fn()
    CACHE.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=1))
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="prompts 3 and 10, small sizes (a smoke run)")
    ap.add_argument("--prompts", default=None, help="comma-separated prompt ids (default: all 10)")
    ap.add_argument("--count", type=int, default=200, help="adversarial test answers per configuration and prompt")
    ap.add_argument("--tradeoff-count", type=int, default=40, help="of which used by the countermeasure study")
    ap.add_argument("--dev-count", type=int, default=40, help="filter development answers per configuration")
    ap.add_argument("--adv-total", type=int, default=1000, help="adversarial training answers per prompt")
    ap.add_argument("--neural-epochs", type=int, default=5)
    ap.add_argument("--embeddings", default="static", choices=["static", "contextual"],
                    help="NeuralScorer word vectors (static: MiniLM input embeddings, no transformer pass)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--stages", default="A,B,N,F", help="A: answers + ContentScorer, B: countermeasures, "
                                                          "N: NeuralScorer, F: the filters alone (needs no other "
                                                          "stage; run in the order A, B, N, F)")
    ap.add_argument("--b-prompts", default=None, help="run stage B only on these prompts")
    ap.add_argument("--max-words", type=int, default=128, help="NeuralScorer: words per answer")
    ap.add_argument("--deadline", default=None, help="HH:MM (local time): start no new prompt of stage B after it")
    ap.add_argument("--render-only", action="store_true")
    ap.add_argument("--lock", default=None, help="run each (stage, prompt) as its own job under `flock LOCK nice "
                                                 "-n 5` (shared machines), then render")
    ap.add_argument("--fresh", action="store_true", help="drop the cached stage results first")
    ap.add_argument("--cache", default=None, help="cache directory (default .findings-cache/content; e.g. to "
                                                  "render from a copy holding only some stages)")
    ap.add_argument("--no-render", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    global CACHE
    if args.cache:
        CACHE = Path(args.cache).resolve()
    if args.quick:
        args.prompts = args.prompts or "3,10"
        args.count, args.tradeoff_count, args.dev_count, args.adv_total, args.neural_epochs = 30, 10, 10, 100, 1
        CACHE = CACHE.parent / "content-quick"
    if args.fresh and CACHE.exists():
        shutil.rmtree(CACHE)
    prompts = (args.prompts or "1,2,3,4,5,6,7,8,9,10").split(",")
    # every computing invocation is listed in the document (--no-render ones too; not the child that --lock
    # starts, whose parent logged the command)
    if not args.render_only and not os.environ.get("CALLBLUFF_FINDINGS_CHILD"):
        CACHE.mkdir(parents=True, exist_ok=True)
        with open(CACHE / "commands.log", "a", encoding="utf-8") as fh:
            fh.write(time.strftime("%Y-%m-%d %H:%M") + "\tpython scripts/findings/content.py "
                     + " ".join(sys.argv[1:]) + "\n")
    if args.lock and not args.render_only:
        CACHE.mkdir(parents=True, exist_ok=True)
        run_under_lock(args, prompts)
        args.render_only = True
    meta = {"command": "python scripts/findings/content.py " + " ".join(sys.argv[1:]), "prompts": prompts,
            "count": args.count, "tradeoff_count": args.tradeoff_count, "adv_total": args.adv_total,
            "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                        "load_start": round(os.getloadavg()[0], 2)}}
    train, test = load_data(prompts)
    from callbluff.terminal import findings_progress

    with findings_progress(overall=STAGE_LABELS.values()) as progress:
        a_res, b_res, f_res = run_stages(args, prompts, train, test, progress)
    meta["missing_b"] = [p for p in prompts if p not in b_res] if b_res else []
    meta["wall_s"] = sum(r.get("stage_s", 0.0) for r in [*a_res.values(), *b_res.values(), *f_res.values()])
    meta["loads"] = [x for r in [*a_res.values(), *b_res.values(), *f_res.values()] for x in r.get("load", [])]
    meta["machine"]["load_end"] = round(os.getloadavg()[0], 2)
    recorded = {json.dumps(r["neural_settings"], sort_keys=True) for r in a_res.values() if "neural_settings" in r}
    if len(recorded) > 1:
        sys.exit(f"the cached NeuralScorer stages ran with different settings ({sorted(recorded)}): re-run stage N "
                 "for the odd prompts (delete their .findings-cache/content/N-*.json) so the table is one system")
    # settings recorded by the stages themselves; for stages cached before they were recorded: this command's
    meta["settings"] = json.loads(recorded.pop()) if recorded else neural_settings(args)
    runs = [ln.split("\t", 1) for ln in (CACHE / "commands.log").read_text().splitlines() if "\t" in ln] \
        if (CACHE / "commands.log").is_file() else []
    if runs:  # the stages were computed by these invocations, each reusing the stages cached by the earlier ones
        meta["command"] = "; then ".join(f"{cmd} ({when})" for when, cmd in runs) + " (rendered with: " \
            + meta["command"] + ")"
    if args.no_render:
        return
    if not a_res and not f_res:
        sys.exit("nothing to render: run stage A (or F, the filters alone) first")
    figures(a_res, b_res, prompts)
    OUT_MD.parent.mkdir(parents=True, exist_ok=True)
    OUT_MD.write_text(render(meta, a_res, b_res, f_res) + explanations(), encoding="utf-8")
    log(f"written {OUT_MD} ({meta['wall_s'] / 60:.1f} min)")


def run_under_lock(args: argparse.Namespace, prompts: list[str]) -> None:
    """All stages in one process holding the lock (finished (stage, prompt) pairs are read from the cache);
    stages B and N start no new prompt after --deadline."""
    import subprocess

    # (--fresh was done by this process: the child must not drop the cache again, commands.log included)
    passthru = [a for a in sys.argv[1:] if not a.startswith("--lock") and a != args.lock and a != "--fresh"]
    passthru = [a for i, a in enumerate(passthru) if not (a == "--prompts" or (i and passthru[i - 1] == "--prompts"))
                and not a.startswith("--prompts=")]
    cmd = ["flock", args.lock, "nice", "-n", "5", sys.executable, __file__, *passthru, "--prompts", ",".join(prompts),
           "--no-render"]
    log("run: " + " ".join(cmd))
    subprocess.run(cmd, check=False, env={**os.environ, "CALLBLUFF_FINDINGS_CHILD": "1"})


def explanations() -> str:
    path = Path(__file__).with_name("content_notes.md")
    return "\n" + path.read_text(encoding="utf-8") if path.is_file() else ""


if __name__ == "__main__":
    main()
