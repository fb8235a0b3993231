"""Adversarial training of EssayScorer (Kumar et al. 2020, Sec. 4.2, Figure 2): before and after.

Per ASAP-AES prompt: a seeded 80/20 split; EssayScorer trained on the training essays; its clean QWK and its
overstability (``not_lowered_pct``, ``mean_diff_pct``; Sec. 3.1) on the adversarial versions of the held-out
essays, for each chosen test case; then EssayScorer retrained on the training essays plus their adversarial
versions scored original - penalty (``callbluff.countermeasures.augment``, the paper's "equal number of original samples and
adversarial samples"), measured again. The paper's penalty was the human mean difference per test case (e.g.
2 points for ModGrammar); its human study lowered scores by about 30% on average (Table 6), so the default
here is ``--penalty-percent 25`` of each prompt's range for every attack.

Writes ``benchmarks/essay_adversarial_training.md`` and ``benchmarks/results/essay_adversarial_training.json``
(``--out-prefix`` elsewhere), with the command and the machine's load.

Full run:    flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python benchmarks/essay_adversarial_training.py
Quick look:  .venv/bin/python benchmarks/essay_adversarial_training.py --prompts 1 --limit 200 --out-prefix /tmp/at
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from callbluff import metrics as M  # noqa: E402
from callbluff.countermeasures.augment import Penalties, augment_rows  # noqa: E402
from callbluff.datasets import load  # noqa: E402
from callbluff.models.essay import EssayScorer  # noqa: E402
from callbluff.records import ScoredResponse  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "asap-aes" / "training_set_rel3.tsv.gz"
ATTACKS = ("ModGrammar", "AddSong", "DelRand", "RepeatSent", "ShuffleSent")
"""Five test cases of the human study (Table 6), as the paper's Sec. 4.2 chose five."""


def held_out(record_id: str, seed: int) -> bool:
    """A seeded 80/20 split by a hash of the essay id (stable across runs and machines)."""
    return int(hashlib.sha256(f"{seed}:{record_id}".encode()).hexdigest(), 16) % 5 == 0


def one_per_essay(rows: list[dict], seed: int) -> list[dict]:
    """One adversarial version per training essay, its test case drawn by a hash of (seed, essay id) among the
    versions the attacks made of it: as many adversarial as original samples, as the paper's Sec. 4.2 ("an equal
    number of original samples and adversarial samples"), the test cases mixed."""
    by_source: dict[str, list[dict]] = {}
    for r in rows:
        by_source.setdefault(r["source_id"], []).append(r)
    out = []
    for sid, versions in by_source.items():
        versions.sort(key=lambda r: r["id"])
        out.append(versions[int(hashlib.sha256(f"{seed}:{sid}".encode()).hexdigest(), 16) % len(versions)])
    return out


def scorer() -> EssayScorer:
    return EssayScorer(pos=False, spelling=False, n_estimators=150, cv=3, cv_metrics=False)


def measure(model: EssayScorer, pid: str, test: list[ScoredResponse], adv: dict[str, list[dict]],
            lo: float, hi: float) -> dict:
    orig = model.score_texts(pid, [r.text for r in test])
    gold = np.array([r.gold for r in test], float)
    out: dict = {"qwk": M.qwk(gold, orig, score_min=lo, score_max=hi)}
    by_id = {r.id: s for r, s in zip(test, orig)}
    for attack, rows in adv.items():
        if not rows:
            continue
        a = model.score_texts(pid, [x["text"] for x in rows])
        o = np.array([by_id[x["source_id"]] for x in rows], float)
        stats = M.overstability(o, a, lo, hi)
        out[attack] = {"n": len(rows), "not_lowered_pct": stats["not_lowered_pct"],
                       "mean_diff_pct": stats["mean_diff_pct"]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--prompts", default="1,2,3,4,5,6,7,8")
    ap.add_argument("--limit", type=int, default=None, help="essays per prompt (before the split)")
    ap.add_argument("--attacks", default=",".join(ATTACKS))
    ap.add_argument("--penalty-percent", type=float, default=25.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--out-prefix", type=Path, default=None,
                    help="write PREFIX.md / PREFIX.json instead of the benchmarks files")
    args = ap.parse_args()
    md_path = (args.out_prefix.with_suffix(".md") if args.out_prefix
               else REPO / "benchmarks" / "essay_adversarial_training.md")
    js_path = (args.out_prefix.with_suffix(".json") if args.out_prefix
               else REPO / "benchmarks" / "results" / "essay_adversarial_training.json")
    load0 = [round(x, 2) for x in os.getloadavg()]
    t_all = time.perf_counter()
    ds = load(f"asap-aes:{args.data}?prompts={args.prompts}")
    attacks = [a.strip() for a in args.attacks.split(",") if a.strip()]
    penalties = Penalties({}, default=args.penalty_percent, unit="percent")
    results: dict = {}
    for pid, prompt in sorted(ds.prompts.items(), key=lambda kv: int(kv[0])):
        t0 = time.perf_counter()
        records = [r for r in ds if r.prompt_id == pid][: args.limit]
        train = [r for r in records if not held_out(r.id, args.seed)]
        test = [r for r in records if held_out(r.id, args.seed)]
        sub = type(ds)(ds.spec, ds.task, {pid: prompt}, lambda recs=test: iter(recs))
        adv_test = {a: list(augment_rows(sub, [(a, {})], penalties, seed=args.seed, workers=args.workers))
                    for a in attacks}
        base = scorer().fit(train, prompt)
        before = measure(base, pid, test, adv_test, prompt.score_min, prompt.score_max)
        sub_train = type(ds)(ds.spec, ds.task, {pid: prompt}, lambda recs=train: iter(recs))
        rows = list(augment_rows(sub_train, [(a, {}) for a in attacks], penalties, seed=args.seed + 1,
                                 workers=args.workers))
        after: dict = {}
        n_adv: dict = {}
        # the paper: one model per test case, trained on as many adversarial as original essays (that test
        # case's versions of the training essays), tested on its own test case and the others
        for a in attacks:
            own = [ScoredResponse(r["id"], pid, r["text"], (r["score"],)) for r in rows if r["attack"] == a]
            n_adv[a] = len(own)
            if own:
                after[a] = measure(scorer().fit(train + own, prompt), pid, test, adv_test, prompt.score_min,
                                   prompt.score_max)
        # and one model on a mix of them, one adversarial version per essay (same count)
        mixed = [ScoredResponse(r["id"], pid, r["text"], (r["score"],)) for r in one_per_essay(rows, args.seed + 1)]
        n_adv["mixed"] = len(mixed)
        after["mixed"] = measure(scorer().fit(train + mixed, prompt), pid, test, adv_test, prompt.score_min,
                                 prompt.score_max)
        results[pid] = {"n_train": len(train), "n_test": len(test), "n_adversarial_train": n_adv,
                        "before": before, "after": after, "seconds": round(time.perf_counter() - t0, 1)}
        print(f"prompt {pid}: clean QWK {before['qwk']:.3f}; after (mixed) {after['mixed']['qwk']:.3f}")
        for a in attacks:
            if a in before and a in after:
                print(f"  {a:12s} not_lowered_pct {before[a]['not_lowered_pct']:5.1f} -> "
                      f"{after[a][a]['not_lowered_pct']:5.1f} (own model; QWK {after[a]['qwk']:.3f})   "
                      f"mean_diff_pct {before[a]['mean_diff_pct']:6.2f} -> {after[a][a]['mean_diff_pct']:6.2f}",
                      flush=True)
    summary = {"benchmark": "essay_adversarial_training",
               "command": "python benchmarks/essay_adversarial_training.py " + " ".join(sys.argv[1:]),
               "attacks": attacks, "penalty_percent": args.penalty_percent, "seed": args.seed,
               "limit": args.limit, "prompts": results, "seconds": round(time.perf_counter() - t_all, 1),
               "load_average_before": load0, "load_average_after": [round(x, 2) for x in os.getloadavg()],
               "cpus": os.cpu_count(), "python": platform.python_version(),
               "at": time.strftime("%Y-%m-%d %H:%M:%S")}
    js_path.parent.mkdir(parents=True, exist_ok=True)
    js_path.write_text(json.dumps(summary, indent=2, default=float) + "\n")
    md_path.write_text(render(summary))
    print(f"wrote {md_path} and {js_path}")


def _mean(xs: list[float]) -> str:
    return f"{np.mean(xs):.1f}" if xs else "–"


def render(r: dict) -> str:
    """Per test case: its own model's effect (pooled over prompts), the same model on the other test cases, the
    mixed model; then clean QWK per prompt."""
    attacks = r["attacks"]
    P = r["prompts"]
    rows = ["| test case | not lowered % before | after (own model) | after (mixed model) | mean diff % before | "
            "after (own) | after (mixed) | not lowered % on the other test cases: before -> after (own) | "
            "clean QWK after (own) |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    for a in attacks:
        ps = [p for p in P.values() if a in p["before"] and a in p["after"]]
        if not ps:
            rows.append(f"| {a} | no examples | | | | | | | |")
            continue
        others_b = [p["before"][o]["not_lowered_pct"] for p in ps for o in attacks if o != a and o in p["before"]]
        others_a = [p["after"][a][o]["not_lowered_pct"] for p in ps for o in attacks if o != a and o in p["after"][a]]
        rows.append(
            f"| {a} | {_mean([p['before'][a]['not_lowered_pct'] for p in ps])} | "
            f"{_mean([p['after'][a][a]['not_lowered_pct'] for p in ps])} | "
            f"{_mean([p['after']['mixed'][a]['not_lowered_pct'] for p in ps])} | "
            f"{_mean([p['before'][a]['mean_diff_pct'] for p in ps])} | "
            f"{_mean([p['after'][a][a]['mean_diff_pct'] for p in ps])} | "
            f"{_mean([p['after']['mixed'][a]['mean_diff_pct'] for p in ps])} | "
            f"{_mean(others_b)} -> {_mean(others_a)} | {np.mean([p['after'][a]['qwk'] for p in ps]):.3f} |")
    qrows = ["| prompt | train / held-out essays | clean QWK before | after (mixed) | after (own), min-max over test "
             "cases |", "| --- | --- | ---: | ---: | --- |"]
    for pid, p in P.items():
        own = [p["after"][a]["qwk"] for a in attacks if a in p["after"]]
        qrows.append(f"| {pid} | {p['n_train']} / {p['n_test']} | {p['before']['qwk']:.3f} | "
                     f"{p['after']['mixed']['qwk']:.3f} | "
                     + (f"{min(own):.3f}-{max(own):.3f}" if own else "–") + " |")
    before_q = np.mean([p["before"]["qwk"] for p in P.values()])
    mixed_q = np.mean([p["after"]["mixed"]["qwk"] for p in P.values()])
    qrows.append(f"| **mean** | | {before_q:.3f} | {mixed_q:.3f} | |")
    return "\n".join([
        "# Adversarial training of EssayScorer (Kumar et al. 2020, Sec. 4.2)", "",
        f"Command: `{r['command']}` ({r['at']}); {r['cpus']} CPUs, load average before {r['load_average_before']} "
        f"/ after {r['load_average_after']}; {r['seconds']:.0f} s in all; Python {r['python']}.", "",
        "Per ASAP-AES prompt a seeded 80/20 split by essay id. EssayScorer (POS and spelling statistics off for "
        "cost) is trained on the training essays; then, as the paper, one model per test case is retrained on "
        "the training essays plus as many adversarial versions of them (that test case, seed "
        f"{r['seed']} + 1), scored the original minus {r['penalty_percent']:g} % of the prompt's range "
        "(`callbluff augment --unit percent`; the paper used the human mean difference per test case, e.g. 2 "
        "points for ModGrammar), and tested on its own test case and the others; and one `mixed` model on one "
        f"adversarial version per essay, its test case drawn among {', '.join(attacks)}. Every model is "
        f"measured on the held-out essays and their adversarial versions (seed {r['seed']}, never trained on): "
        "clean QWK, the share of adversarial essays whose score did not go down (`not_lowered_pct`, Sec. 3.1; "
        "a human lowers it for every one of these test cases) and the mean score change as % of the range "
        "(`mean_diff_pct`). Means over the prompts.", "",
        *rows, "", *qrows, "",
        "The paper (Figure 2): adversarial training \"improves the scores marginally\", most for the respective "
        "test case. Here the penalty is the same 25 % of the range for every test case and essay, so a model can "
        "learn the test case's surface pattern (e.g. sentences in a shuffled order carry no feature of EssayScorer "
        "at all) only as far as its features see it.", ""]) + "\n"


if __name__ == "__main__":
    main()
