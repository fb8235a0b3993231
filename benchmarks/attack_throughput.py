"""Generation throughput of every registered attack (texts per second), on real data, in one process.

Each static attack runs at its default parameters through the product's one generation path,
:class:`callbluff.engine.generate.Generation` (``fit`` once per prompt, then ``generate_records`` on batches
of 10 records, the engine's unit of work for a chunk, on a one-process executor; warm caches after a warm-up
batch of 10 records so that one-time loading of spaCy / WordNet / corpora is reported apart as ``warmup_s``):
``texts_per_s`` = adversarial texts produced / generation seconds. Prompt-level generators make ``--answers``
answers (at most their ``count``) for one prompt: the first generator piece of ``Generation.generator_chunks``
with pieces of ``--answers``. Model-in-the-loop attacks (search) are not timed here: their cost
is target queries, measured by benchmarks/addonesent.py / dpaeg_candidates.py (RESULTS.md collects them). An
attack whose declared resources are missing is listed with the reason, never silently dropped.

Data (../shared/data): content = ASAP-SAS train answers, essay = ASAP-AES essays (first records of the file,
so prompt 1), questions = SQuAD v1.1 dev questions, reading = SQuAD v1.1 dev. Each attack gets at most
``--records`` records of its task and stops after ``--budget`` seconds (the figure is then over the records done).

    flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python benchmarks/attack_throughput.py
    .venv/bin/python benchmarks/attack_throughput.py --records 20 --budget 3 --only Shuffle,DelRand   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from callbluff.attacks.base import attack_classes  # noqa: E402
from callbluff.datasets import load  # noqa: E402
from callbluff.engine.generate import AttackSpec, ChunkId, Generation  # noqa: E402

DATA = REPO.parent / "shared" / "data"
SPECS = {
    "content": f"asap-sas:{DATA / 'asap-sas' / 'train.tsv.gz'}",
    "essay": f"asap-aes:{DATA / 'asap-aes' / 'training_set_rel3.tsv.gz'}",
    "questions": f"squad:{DATA / 'squad-v1.1' / 'dev-v1.1.json.gz'}?task=questions",
    "reading": f"squad:{DATA / 'squad-v1.1' / 'dev-v1.1.json.gz'}",
}
RECORD_CAP = {"content": 1.0, "essay": 0.25, "questions": 1.0, "reading": 0.5}
"""Share of ``--records`` per task (essays are ~20x longer than short answers)."""


def records_of(task: str, n: int) -> tuple[list[Any], dict[str, Any]]:
    ds = load(SPECS[task])
    out = []
    for r in ds:
        if len(out) >= n:
            break
        out.append(r)
    return out, ds.prompts


def time_static(spec: AttackSpec, records: list[Any], prompts: dict[str, Any], budget: float) -> dict[str, Any]:
    gen = Generation([spec], prompts, seed=0)
    t0 = time.perf_counter()
    gen.fit(records)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    gen.generate_records(records[:10])  # one-time loading (spaCy, WordNet, corpora): reported apart
    warm_s = time.perf_counter() - t0
    texts = done = errors = 0
    chars = 0
    t0 = time.perf_counter()
    step = 10
    for s in range(0, len(records), step):
        examples, errs = gen.generate_records(records[s:s + step])
        texts += len(examples)
        errors += len(errs)
        chars += sum(len(p.text) for p in examples)
        done += len(records[s:s + step])
        if time.perf_counter() - t0 > budget:
            break
    secs = time.perf_counter() - t0
    return {"records": done, "texts": texts, "errors": errors, "seconds": round(secs, 3),
            "texts_per_s": round(texts / secs, 1) if secs > 0 else None,
            "records_per_s": round(done / secs, 1) if secs > 0 else None,
            "mean_chars": round(chars / texts, 1) if texts else None,
            "fit_s": round(fit_s, 3), "warmup_s": round(warm_s, 3)}


def first_piece(spec: AttackSpec, prompts: dict[str, Any], states: dict[Any, Any], prompt_id: str,
                answers: int) -> tuple[list[Any], list[dict[str, Any]]]:
    """Answers ``0 .. answers-1`` (at most the generator's ``count``) for ``prompt_id``: the first generator
    piece of a :class:`Generation` with pieces of ``answers``, fitted states given (the other pieces
    skipped)."""
    gen = Generation([spec], prompts, seed=0, chunk_size=answers)
    gen.states = dict(states)
    [chunk, *_] = gen.generator_chunks(prompt_ids=[prompt_id], skip=lambda index: index != ChunkId.generator(0))
    return chunk.examples, chunk.errors


def time_generator(spec: AttackSpec, records: list[Any], prompts: dict[str, Any], answers: int) -> dict[str, Any]:
    gen = Generation([spec], prompts, seed=0)
    t0 = time.perf_counter()
    gen.fit(records)
    fit_s = time.perf_counter() - t0
    pid = next(k[1] for k in gen.states if k[1] is not None)
    first_piece(spec, prompts, gen.states, pid, 2)  # warm-up
    t0 = time.perf_counter()
    examples, errors = first_piece(spec, prompts, gen.states, pid, answers)
    secs = time.perf_counter() - t0
    return {"prompt": pid, "texts": len(examples), "errors": len(errors), "seconds": round(secs, 3),
            "texts_per_s": round(len(examples) / secs, 1) if secs > 0 else None,
            "mean_chars": round(sum(len(p.text) for p in examples) / len(examples), 1) if examples else None,
            "fit_s": round(fit_s, 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=int, default=400, help="records per attack (essays: a quarter)")
    ap.add_argument("--budget", type=float, default=8.0, help="seconds of generation per attack at most")
    ap.add_argument("--answers", type=int, default=200, help="answers per prompt-level generator")
    ap.add_argument("--only", default="", help="comma-separated attack names")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "attack_throughput.md")
    args = ap.parse_args()
    only = {a for a in args.only.split(",") if a}
    started = time.perf_counter()
    load_before = os.getloadavg()
    data: dict[str, tuple[list[Any], dict[str, Any]]] = {}
    rows = []
    for cls in attack_classes():
        if only and cls.name not in only:
            continue
        row: dict[str, Any] = {"attack": cls.name, "task": cls.task, "kind": cls.kind}
        if cls.model_in_the_loop:
            row["status"] = "model-in-the-loop: cost in target queries (see the AddAny / DPAEG figures)"
            rows.append(row)
            continue
        spec = AttackSpec.make(cls.name, {})
        problems = Generation([spec], {}, seed=0).missing_resources()  # the instance's needs, as the engine
        if problems:
            row["status"] = "not measured: " + "; ".join(problems)
            rows.append(row)
            continue
        if cls.task not in data:
            data[cls.task] = records_of(cls.task, max(2, int(args.records * RECORD_CAP[cls.task])))
        records, prompts = data[cls.task]
        try:
            if cls.kind == "generator":
                row.update(time_generator(spec, records, prompts, args.answers))
            else:
                row.update(time_static(spec, records, prompts, args.budget))
            row["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - reported in the table, the other attacks still run
            row["status"] = f"failed: {type(e).__name__}: {e}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
    result = {
        "benchmark": "attack_throughput",
        "command": "python benchmarks/attack_throughput.py " + " ".join(sys.argv[1:]),
        "records_per_attack": args.records, "budget_s": args.budget, "answers": args.answers,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count(),
                    "cpus_used": 1},
        "attacks": rows,
    }
    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "attack_throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Generation throughput per attack", "",
             f"Command: `{result['command']}` (one process; wall {result['wall_s']} s; load average before "
             f"{result['load_average_before']}, after {result['load_average_after']} on {os.cpu_count()} CPUs).", "",
             "Default parameters; texts/s = adversarial texts / generation seconds after a warm-up (one-time "
             "loading in `warmup_s`, the fit step in `fit_s`). Data in the script's docstring.", "",
             "| attack | task | kind | records | texts | texts/s | mean chars | fit s | warm-up s | status |",
             "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['attack']} | {r['task']} | {r['kind']} | {r.get('records', r.get('prompt', ''))} | "
                     f"{r.get('texts', '')} | {r.get('texts_per_s', '')} | {r.get('mean_chars', '')} | "
                     f"{r.get('fit_s', '')} | {r.get('warmup_s', '')} | {r['status']} |")
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
