"""AddAny / AddCommon tuning questions for ``scripts/findings/reading.py``: SQuAD v1.1 dev questions *disjoint
from the findings sample*, searched one by one against the shared MiniLM reader (top-10 spans by default, ``--top-k``).

AddSent's candidate rules (issue 37) were checked here too, for their F1 every question beside the previous rules
(``--attack AddSent --params '{"fluency": "structural"}'``), never on the findings sample. The findings sample
is a seed-0 draw of 1,000 questions; the tuning questions are a seed-1 draw of 400 with
those removed, in draw order. The settings the findings document calls "tuned" were compared here, never on
the findings sample. Run from the repository root, e.g.:

    .venv/bin/python scripts/findings/reading_tuning.py --n 100 --params '{"query_budget": 600}'
    .venv/bin/python scripts/findings/reading_tuning.py --n 100 --params '{"query_budget": 600, "objective": "margin"}'

Each question prints its clean F1, the F1 after the search, the queries spent and the words added; the last
line sums them up (mean F1 in %, mean / median queries, questions not fooled). Each search runs through the
product's one search runner (:func:`callbluff.engine.search.search_one`, the Oracle with the attack's query
budget), its generator derived from ``--seed`` (default 1), the question id, the attack and its params, as in a
run, so a run is reproducible and a question's search does not depend on its position in the list. (Until
2026-11-25 this script searched question ``k`` with ``numpy.random.default_rng(1000 + k)``; the tuning figures
docs/findings/reading.md quotes were measured that way.)
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
DEV = SHARED / "data" / "squad-v1.1" / "dev-v1.1.json.gz"
MODEL = SHARED / "models" / "minilm-l6-squad"


def tuning_questions(start: int, n: int) -> list:
    """Questions ``start .. start + n - 1`` of the tuning list (seed-1 draw minus the seed-0 findings sample)."""
    from callbluff.records import QAExample

    with gzip.open(DEV, "rt", encoding="utf-8") as f:
        data = json.load(f)
    flat = [(a, p, q) for a, art in enumerate(data["data"]) for p, para in enumerate(art["paragraphs"])
            for q in range(len(para["qas"]))]
    findings = {int(i) for i in np.random.default_rng(0).choice(len(flat), size=1000, replace=False)}
    tuning = [int(i) for i in np.random.default_rng(1).choice(len(flat), size=400, replace=False)
              if int(i) not in findings]
    out = []
    for i in tuning[start:start + n]:
        a, p, q = flat[i]
        para = data["data"][a]["paragraphs"][p]
        qa = para["qas"][q]
        out.append(QAExample(id=qa["id"], question=qa["question"], context=para["context"],
                             answers=tuple(x["text"] for x in qa["answers"]),
                             answer_starts=tuple(int(x["answer_start"]) for x in qa["answers"])))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--start", type=int, default=0, help="first tuning question")
    ap.add_argument("--n", type=int, default=100, help="tuning questions")
    ap.add_argument("--attack", default="AddAny", choices=("AddAny", "AddCommon", "AddSent"),
                    help="AddSent: its F1 over every question (a question without a sentence at its clean F1)")
    ap.add_argument("--params", default='{"query_budget": 600}', help="attack parameters (JSON)")
    ap.add_argument("--seed", type=int, default=1, help="the run seed each question's search generator derives from")
    ap.add_argument("--top-k", type=int, default=10, help="ranked spans the reader lists (the findings: 10; "
                    "50 for the margin run)")
    args = ap.parse_args()
    if not DEV.exists() or not (MODEL / "config.json").exists():
        sys.exit(f"needs {DEV} and {MODEL} (the shared data and reader); set CALLBLUFF_SHARED")

    from callbluff.attacks.base import make_attack
    from callbluff.engine.search import SearchContext, search_one
    from callbluff.engine.work import AttackSpec
    from callbluff.metrics.reading import f1_score
    from callbluff.models.qa import TransformerQA
    from callbluff.resources.context import default_resources
    from callbluff.tasks.reading import READING

    params = json.loads(args.params)
    attack = make_attack(args.attack, **params)
    spec, res = AttackSpec.of(attack), default_resources()
    reader = TransformerQA(MODEL, num_threads=2, top_k=args.top_k)
    f1s, queries, secs = [], [], []
    for k, rec in enumerate(tuning_questions(args.start, args.n)):
        clean = reader.predict([READING.original_input(rec)])[0]
        found, error, timing = search_one(SearchContext(spec, "reader", args.seed, raise_errors=True), rec, reader,
                                          clean, res)
        secs.append(timing["seconds"])
        used = timing["queries"]
        adv = reader.predict([READING.adversarial_input(found[0][0], rec)])[0] if found else clean
        f1s.append(f1_score(adv.answer or "", rec.answers))
        queries.append(used)
        distractor = found[0][0].meta["distractor"] if found else ""
        print(f"{args.start + k:3d} clean={f1_score(clean.answer or '', rec.answers):.2f} f1={f1s[-1]:.2f} "
              f"q={used:4d} {secs[-1]:5.1f}s | {rec.question[:60]} | gold={rec.answers[0][:25]!r} "
              f"pred={(adv.answer or '')[:25]!r} | +{distractor!r}", flush=True)
    print(f"SUMMARY {args.attack} {params} top-{args.top_k} seed {args.seed} questions {args.start}.."
          f"{args.start + len(f1s) - 1}: F1 {100 * np.mean(f1s):.1f}, queries mean {np.mean(queries):.1f} median "
          f"{np.median(queries):.0f}, not fooled {sum(f > 0 for f in f1s)}, {np.mean(secs):.1f} s per question",
          flush=True)


if __name__ == "__main__":
    main()
