"""Development figures of AddSent's language-model acceptability filter (issue 37; ``attacks/reading/acceptability.py``).

Development data only: the hand-judged verification sheets of the ``sent`` runs, read from git history (each
commit below holds ``scripts/findings/reading_addsent_judged.csv`` as one judge filled it: seed 0 before issue 37,
seeds 37, 73, 91 and 113 after), one row per distinct sentence (a sentence two judges disagree on counts as
ungrammatical). Each sentence (and its question, for the ``d_`` features: the sentence's feature minus its
question's) is scored by SmolLM2-135M through :class:`callbluff.attacks.reading.fluency.FluencyScorer`.

Reported: each feature's AUC (a grammatical sentence scores above an ungrammatical one); leave-one-sheet-out
figures for the rule stated before looking at a held-out sheet (``--target``: the threshold is the lowest value
whose precision on the other sheets is at least the target; precision = grammatical among the sentences kept,
recall = grammatical sentences kept); the in-sample precision when keeping the top 20-90 % by each feature; and
with ``--coverage N`` how many of the first N questions of the findings sample (seed 0; their raw candidates
only, no judgment) keep a candidate at each held-out threshold.

    .venv/bin/python scripts/findings/reading_addsent_filter.py [--target 0.92] [--coverage 200]

Slow on a shared machine (the model scores one sentence in about 1-2 s on one thread); results are cached in
``.findings-cache/reading-filter/``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

import numpy as np  # noqa: E402

from callbluff.attacks.reading.acceptability import features, words  # noqa: E402
from callbluff.attacks.reading.fluency import FluencyScorer, model_path  # noqa: E402

SHEET = "scripts/findings/reading_addsent_judged.csv"
COMMITS = {"7e7b0e1": 0, "9ac8203": 0, "4091413": 37, "5869786": 73, "6d5c872": 91, "c2db631": 113}
"""Commits holding a filled sheet and the seed it was drawn with: seed 0 (two versions, 38 sentences shared),
37, 73, 91, 113 (the last one reverted with its rules; its judgments stand). The held-out folds are the seeds."""
FEATS = ("mean", "slor", "min_word", "min_window")
CACHE = REPO / ".findings-cache" / "reading-filter"


def judged() -> list[dict[str, str]]:
    rows: dict[str, dict[str, str]] = {}
    for c in COMMITS:
        text = subprocess.run(["git", "-C", str(REPO), "show", f"{c}:{SHEET}"], capture_output=True, text=True,
                              check=True).stdout
        for r in csv.DictReader(io.StringIO(text)):
            if r["grammatical"] not in ("yes", "no"):
                continue
            if r["sentence"] in rows:
                if r["grammatical"] == "no":
                    rows[r["sentence"]]["grammatical"] = "no"
                continue
            rows[r["sentence"]] = dict(r, commit=c, seed=str(COMMITS[c]))
    return list(rows.values())


def scored(texts: list[str], name: str) -> dict[str, dict[str, float]]:
    path = CACHE / f"{name}.json"
    have = json.loads(path.read_text()) if path.exists() else {}
    todo = [t for t in dict.fromkeys(texts) if t not in have]
    if todo:
        sc = FluencyScorer(model_path())
        try:
            for b in range(0, len(todo), 20):
                part = todo[b:b + 20]
                for t, p in zip(part, sc.pieces(part), strict=True):
                    have[t] = features(words(t, p))
                CACHE.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(have))
                print(f"  scored {min(b + 20, len(todo))}/{len(todo)}", file=sys.stderr, flush=True)
        finally:
            sc.close()
    return have


def auc(s: np.ndarray, y: np.ndarray) -> float:
    pos, neg = s[y], s[~y]
    return float(np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg]))


def threshold(s: np.ndarray, y: np.ndarray, target: float) -> float:
    """The lowest threshold (keep s >= t) whose precision on (s, y) is at least ``target`` (above every score when
    none is)."""
    for t in sorted(set(s.tolist())):
        k = s >= t
        if y[k].mean() >= target:
            return t
    return float(s.max()) + 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--target", type=float, default=0.92, help="training precision the threshold must reach")
    ap.add_argument("--coverage", type=int, default=0, help="questions of the findings sample for coverage")
    a = ap.parse_args()
    rows = judged()
    f = scored([r["sentence"] for r in rows] + [r["question"] for r in rows], "judged")
    y = np.array([r["grammatical"] == "yes" for r in rows])
    sheets = np.array([r["seed"] for r in rows])
    X = {k: np.array([f[r["sentence"]][k] for r in rows]) for k in FEATS}
    X.update({"d_" + k: X[k] - np.array([f[r["question"]][k] for r in rows]) for k in FEATS})
    print(f"{len(rows)} distinct judged sentences from the sheets of seeds {', '.join(sorted(set(sheets), key=int))}; "
          f"{int(y.sum())} grammatical ({y.mean():.3f})")
    print("\nfeature        AUC    | leave-one-sheet-out, threshold = lowest with precision >= "
          f"{a.target:.2f} on the other sheets")
    held: dict[str, dict[str, float]] = {}
    for k, s in X.items():
        kept = good = 0
        per = {}
        for sh in sorted(set(sheets)):
            tr, te = sheets != sh, sheets == sh
            t = threshold(s[tr], y[tr], a.target)
            per[sh] = t
            kk = te & (s >= t)
            kept += int(kk.sum())
            good += int(y[kk].sum())
        held[k] = per
        print(f"{k:<14} {auc(s, y):.3f}  | precision {good / kept if kept else float('nan'):.3f} ({good}/{kept}), "
              f"recall {good / y.sum():.3f}, kept {kept / len(y):.2f} of the sentences; thresholds "
              + " ".join(f"{v:.2f}" for v in per.values()))
    print("\nin-sample precision when keeping the top q of the sentences by each feature")
    for k in FEATS:
        o = np.argsort(-X[k])
        print(f"{k:<11}" + " | ".join(f"q={q:.0%}: {y[o[:int(q * len(y))]].mean():.3f}"
                                      for q in (0.2, 0.4, 0.6, 0.8, 0.9)))
    if a.coverage:
        coverage(a.coverage, held, X, y)


def coverage(n: int, held: dict[str, dict[str, float]], X: dict[str, np.ndarray], y: np.ndarray) -> None:
    """How many of the first ``n`` findings questions keep a candidate at each held-out threshold, and for each
    feature the strictest threshold that keeps the batch test's coverage floor (750 of the 761 questions with a
    candidate, the same share here), with the judged sentences' precision there (the labels do not choose it)."""
    from callbluff.attacks.reading import AddOneSent
    from callbluff.attacks.reading.addsent import pools_many
    from callbluff.datasets import load
    from callbluff.resources.context import default_resources

    records = list(load(f"squad:{REPO.parent / 'shared' / 'data' / 'squad-v1.1' / 'dev-v1.1.json.gz'}"))
    pick = np.random.default_rng(0).choice(len(records), size=1000, replace=False)[:n]
    recs = [records[int(i)] for i in pick]
    pools = pools_many(recs, default_resources(), AddOneSent(fluency="structural").params)
    passing = [[c.sentence for c in p.raw if not c.problems] for p in pools]
    f = scored([s for ps in passing for s in ps], "pools")
    covered = sum(bool(ps) for ps in passing)
    print(f"\ncoverage on the first {n} questions of the findings sample: {covered} with a candidate passing the "
          f"structural check ({sum(map(len, passing))} candidates)")
    for k in FEATS:
        for t in sorted(set(held[k].values())):
            c = sum(any(f[s][k] >= t for s in ps) for ps in passing)
            kept = sum(f[s][k] >= t for ps in passing for s in ps)
            print(f"  {k} >= {t:.2f}: {c} questions keep a candidate ({c / covered:.2f} of those covered; "
                  f"{kept} candidates, {kept / max(1, sum(map(len, passing))):.2f})")
    print("\nthe strictest threshold keeping 750/761 of the covered questions here, and the judged sentences there")
    for k in FEATS:
        ok = [t for t in sorted({f[s][k] for ps in passing for s in ps})
              if sum(any(f[s][k] >= t for s in ps) for ps in passing) >= covered * 750 / 761]
        t = ok[-1]
        kk = X[k] >= t
        print(f"  {k} >= {t:.3f}: keeps {int(kk.sum())}/{len(y)} judged sentences, precision {y[kk].mean():.3f} "
              f"(all: {y.mean():.3f}); drops {int((~kk & ~y).sum())} ungrammatical, {int((~kk & y).sum())} grammatical")


if __name__ == "__main__":
    main()
