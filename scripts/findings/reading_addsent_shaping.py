"""AddSent's shaping questions for ``scripts/findings/reading.py``: print the candidate sentences AddSent makes for
SQuAD v1.1 *train* questions (never the dev findings sample), so the conversion rules, fake answers and grammar
check can be read and fixed on questions the findings never measure.

The questions are a seeded draw (``--seed``, default 11) from SQuAD v1.1 train, in draw order; ``--start`` /
``--n`` pick a slice (a later pass reads a fresh slice, so a rule is checked on questions that did not shape
it). Candidates use the structural ranking (``fluency="structural"``) unless ``--fluency`` says otherwise. Run
from the repository root, e.g.:

    .venv/bin/python scripts/findings/reading_addsent_shaping.py --n 150            # kept sentences
    .venv/bin/python scripts/findings/reading_addsent_shaping.py --n 150 --raw      # and the dropped ones
    .venv/bin/python scripts/findings/reading_addsent_shaping.py --n 300 --wh why   # only why-questions

Each question prints its number in the draw, the question, the first gold answer, then each kept candidate
(``+``) and, with ``--raw``, each dropped one (``-``, with its problems).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "src"))

SHARED = Path(os.environ.get("CALLBLUFF_SHARED", REPO.parent / "shared"))
TRAIN = SHARED / "data" / "squad-v1.1" / "train-v1.1.json.gz"


def shaping_questions(seed: int, start: int, n: int, wh: str | None = None) -> list:
    """Questions ``start .. start + n - 1`` of a seed-``seed`` draw of SQuAD v1.1 train (only those whose
    question contains the word ``wh`` when given, counted after that filter)."""
    from callbluff.records import QAExample

    with gzip.open(TRAIN, "rt", encoding="utf-8") as f:
        data = json.load(f)
    flat = [(a, p, q) for a, art in enumerate(data["data"]) for p, para in enumerate(art["paragraphs"])
            for q in range(len(para["qas"]))]
    order = np.random.default_rng(seed).permutation(len(flat))
    out = []
    for i in order:
        a, p, q = flat[int(i)]
        para = data["data"][a]["paragraphs"][p]
        qa = para["qas"][q]
        if wh and wh.lower() not in qa["question"].lower().replace("?", " ").split():
            continue
        out.append(QAExample(id=qa["id"], question=qa["question"], context=para["context"],
                             answers=tuple(x["text"] for x in qa["answers"]),
                             answer_starts=tuple(int(x["answer_start"]) for x in qa["answers"])))
        if len(out) >= start + n:
            break
    return out[start:]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--wh", default=None, help="only questions with this word (why, when, first, ...)")
    ap.add_argument("--raw", action="store_true", help="also print the dropped candidates and their problems")
    ap.add_argument("--fluency", default="structural", choices=("structural", "auto", "lm"))
    args = ap.parse_args()
    from callbluff.attacks.reading import AddSent
    from callbluff.attacks.reading.addsent import pools_many
    from callbluff.resources.context import default_resources

    res = default_resources()
    params = AddSent(fluency=args.fluency).params
    recs = shaping_questions(args.seed, args.start, args.n, args.wh)
    pools = pools_many(recs, res, params)
    n_kept = n_raw = n_pass = covered = 0
    for k, (r, pool) in enumerate(zip(recs, pools), start=args.start):
        print(f"[{k}] {r.question}  || gold: {r.answers[0]}" + (f"  || none: {pool.reason}" if not pool.kept else ""))
        for c in pool.kept:
            print(f"   + {c.sentence}   ({c.answer_rule}; {c.conversion}; {c.scorer})")
        if args.raw:
            for c in pool.raw:
                if c.problems:
                    print(f"   - {c.sentence}   [{'; '.join(c.problems)}]")
        n_kept += len(pool.kept)
        n_raw += len(pool.raw)
        n_pass += sum(not c.problems for c in pool.raw)
        covered += bool(pool.kept)
    print(f"# {len(recs)} questions, {covered} with a sentence; {n_raw} raw candidates, {n_pass} pass the check, "
          f"{n_kept} kept")


if __name__ == "__main__":
    main()
