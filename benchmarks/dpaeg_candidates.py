"""DPAEG keyword extraction + candidate generation for 1,000 SQuAD v1.1 dev questions (issue 13 benchmark).

Timed after the index is built: the spell-similar dictionary (first/last-letter index with WordNet POS), the
typo corpus and the spaCy pipeline are loaded first (a warm-up question), then the clock runs over the
first ``--n`` questions of SQuAD dev as open questions (``squad:PATH?task=questions``): each question is
parsed (all ``--n`` in one ``nlp.pipe`` batch, ``DPAEG.prefetch`` -> ``Resources.dependency_docs``, the batch
step of the engine's unit of work, timed alone inside the timed part), then each question goes through the
product's one generation path, :meth:`callbluff.engine.generate.Generation.generate_records` on that one
question (its parse found in the batch's cache; one process): its keywords extracted (Algorithm 1), its
adversarial words generated (Algorithm 2) and its adversarial questions built within epsilon (Sec. 3.5), timed
per question. Goal: <= 10 s for 1,000 questions. Writes a JSON result with timings and counts.

Usage: python benchmarks/dpaeg_candidates.py [--data ../shared/data/squad-v1.1/dev-v1.1.json.gz] [--n 1000]
       [--typo-files F ...] [--out benchmarks/results/dpaeg_candidates.json] [--md benchmarks/dpaeg_candidates.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

from callbluff.attacks.questions import DPAEG
from callbluff.datasets import load
from callbluff.engine.generate import AttackSpec, Generation
from callbluff.records import OpenQuestion
from callbluff.resources.context import default_resources

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "squad-v1.1" / "dev-v1.1.json.gz"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--typo-files", nargs="*", default=[])
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "dpaeg_candidates.json"))
    ap.add_argument("--md", default=str(ROOT / "benchmarks" / "dpaeg_candidates.md"))
    args = ap.parse_args()

    records = [r for r, _ in zip(load(f"squad:{args.data}?task=questions"), range(args.n))]
    attack = DPAEG(typo_files=args.typo_files) if args.typo_files else DPAEG()
    gen = Generation([AttackSpec.of(attack)], {}, seed=0, failures="raise")
    res = default_resources()  # the resources the engine's generation uses
    t0 = time.perf_counter()
    gen.generate_records([OpenQuestion("warm-up", "Who played the voice of Aladdin?", ("Robin Williams",))])
    index_s = time.perf_counter() - t0

    per: list[float] = []
    n_examples = n_keywords = 0
    kinds: Counter[str] = Counter()
    t0 = time.perf_counter()
    attack.prefetch(records, res)  # one nlp.pipe over the questions (Resources.dependency_docs)
    parse_s = time.perf_counter() - t0
    for r in records:
        t = time.perf_counter()
        examples, _ = gen.generate_records([r])
        per.append(time.perf_counter() - t)
        n_examples += len(examples)
        if examples:
            n_keywords += len(examples[0].meta["keywords"])
        kinds.update(x["kind"] for e in examples for x in e.meta["replacements"])
    total = time.perf_counter() - t0
    result = {
        "benchmark": "dpaeg_candidates", "data": Path(args.data).name, "questions": len(records),
        "params": attack.params_dict, "index_and_warmup_s": round(index_s, 2), "total_s": round(total, 2),
        "batch_parse_s": round(parse_s, 2), "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
        "command": "python benchmarks/dpaeg_candidates.py " + " ".join(sys.argv[1:]),
        "goal_s": 10.0, "ok": total <= 10.0, "per_question_ms_median": round(1000 * statistics.median(per), 2),
        "per_question_ms_p95": round(1000 * sorted(per)[int(0.95 * (len(per) - 1))], 2),
        "questions_with_examples": sum(1 for _ in records) - sum(attack.skipped.values()),
        "examples": n_examples, "keywords_of_attacked_questions": n_keywords,
        "replacement_kinds": dict(sorted(kinds.items())), "skipped": dict(sorted(attack.skipped.items())),
        "machine": {"python": platform.python_version(), "processor": platform.machine(),
                    "cpus_used": 1},
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    Path(args.md).write_text(markdown(result))
    print(json.dumps(result, indent=2))


def markdown(r: dict) -> str:
    """``benchmarks/dpaeg_candidates.md`` from one result."""
    verdict = "met" if r["ok"] else "NOT met"
    return "\n".join([
        "# DPAEG keyword extraction + candidate generation (issue 13 benchmark)", "",
        f"Command: `{r['command']}` (written by the script; do not edit). Data: SQuAD v1.1 {r['data']}, the "
        f"first {r['questions']:,} questions as open questions. Default DPAEG parameters (epsilon "
        f"{r['params']['epsilon']}, at most {r['params']['max_questions']} questions per source, POS "
        f"{r['params']['pos_mode']}, dictionary {r['params']['dictionary_size']:,} words, default typo corpus).", "",
        "| questions | total s | goal s | of which batch parse s | median ms / question | p95 ms | index + warm-up s |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {r['questions']:,} | **{r['total_s']}** | {r['goal_s']} | {r['batch_parse_s']} | "
        f"{r['per_question_ms_median']} | {r['per_question_ms_p95']} | {r['index_and_warmup_s']} |", "",
        f"Goal {verdict}. Load average (1, 5, 15 min) at the end: {r['load_average_1_5_15']} on a machine with "
        f"{os.cpu_count()} cores shared with other jobs; one process.", "",
        f"Output: {r['examples']:,} adversarial questions for {r['questions_with_examples']:,} source questions "
        f"({r['keywords_of_attacked_questions']:,} keywords); replacement kinds {r['replacement_kinds']}; "
        f"skipped {r['skipped']}.", "",
        "What the time covers: one `nlp.pipe` over all questions (spaCy without NER: `Resources.dependency_docs`), "
        "Algorithm 1 keywords, Algorithm 2 adversarial words (memoised per keyword and configuration), the Sec. 3.5 "
        "combinations counted (`CombinationSpace`) rather than listed, the record's draw of `max_questions` of "
        "them, and building those questions. Not covered: loading the dictionary index, the typo corpus and spaCy "
        "(the warm-up column).", ""])


if __name__ == "__main__":
    main()
