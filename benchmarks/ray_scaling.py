"""Ray executor scaling: 2 workers vs 1 on a CPU-bound generation workload (issue 15 goal: >= 1.6x), outputs
identical.

Workload: one CPU-heavy essay attack (default ``ModLexicon``: spaCy parse + WordNet synonyms per essay, Kumar et
al. 3.3) on ``--essays`` ASAP-AES essays, through the product's one generation path exactly as a run with
``--executor ray`` generates: :class:`callbluff.engine.generate.Generation` over a ``RayExecutor``, record
chunks of ``--chunk-size`` essays (the engine's default, 256), each chunk's ``generate_records`` split into
``2 * workers`` Ray tasks. For each worker count a fresh local Ray runtime with that many CPUs is started
(``num_cpus`` = workers, so 1 worker really runs one task at a time); a warm-up batch of ``--warm`` essays
loads spaCy/WordNet into every worker process, then the timed pass runs. The local one-process time is given for
reference. Outputs (every example's id and text) are hashed and must be equal across all three.

    flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python benchmarks/ray_scaling.py
    .venv/bin/python benchmarks/ray_scaling.py --essays 40     # quick look
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from callbluff.datasets import load  # noqa: E402
from callbluff.engine.executor import Executor, LocalExecutor  # noqa: E402
from callbluff.engine.generate import AttackSpec, Chunk, Generation  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "asap-aes" / "training_set_rel3.tsv.gz"
GOAL = 1.6


@dataclass
class Workload:
    """The attack configuration, its fit states (fitted once, in the driver), the warm-up and timed essays."""

    spec: AttackSpec
    prompts: Mapping[str, Any]
    states: dict[Any, Any]
    warm: list[Any]
    timed: list[Any]
    chunk_size: int

    def generation(self, executor: Executor) -> Generation:
        gen = Generation([self.spec], self.prompts, seed=0, executor=executor, chunk_size=self.chunk_size,
                         failures="raise")
        gen.states = dict(self.states)
        return gen


def workload(attack: str, n: int, warm: int, chunk_size: int) -> Workload:
    ds = load(f"asap-aes:{DATA}")
    records = []
    for r in ds:
        if len(records) >= n + warm:
            break
        records.append(r)
    spec = AttackSpec.make(attack, {})
    gen = Generation([spec], ds.prompts, seed=0)
    gen.check_resources()
    gen.fit(records)
    return Workload(spec, ds.prompts, gen.states, records[:warm], records[warm:], chunk_size)


def digest(chunks: list[Chunk]) -> tuple[str, int]:
    h = hashlib.sha256()
    n = 0
    for chunk in chunks:
        for ex in chunk.examples:
            h.update(f"{ex.id}\t{ex.text}\n".encode())
            n += 1
    return h.hexdigest(), n


def with_ray(workers: int, work: Workload) -> dict[str, Any]:
    import ray

    from callbluff.engine.ray_executor import RayExecutor

    t0 = time.perf_counter()
    ex = RayExecutor(workers)
    start_s = time.perf_counter() - t0
    try:
        gen = work.generation(ex)
        t0 = time.perf_counter()
        gen.generate_records(work.warm)  # loads spaCy / WordNet in each worker
        warm_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        chunks = list(gen.record_chunks(work.timed, ahead=False))
        secs = time.perf_counter() - t0
    finally:
        ex.close()
    assert not ray.is_initialized()
    h, n = digest(chunks)
    return {"workers": workers, "seconds": round(secs, 2), "startup_s": round(start_s, 1),
            "warmup_s": round(warm_s, 1), "examples": n, "sha256": h}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--essays", type=int, default=160)
    ap.add_argument("--chunk-size", type=int, default=256, help="records per chunk (the engine's default)")
    ap.add_argument("--warm", type=int, default=8, help="essays of the warm-up batch (not timed)")
    ap.add_argument("--attack", default="ModLexicon")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "ray_scaling.md")
    args = ap.parse_args()
    load_before = os.getloadavg()
    work = workload(args.attack, args.essays, args.warm, args.chunk_size)
    local_gen = work.generation(LocalExecutor(1))
    local_gen.generate_records(work.warm)
    t0 = time.perf_counter()
    local_h, local_n = digest(list(local_gen.record_chunks(work.timed, ahead=False)))
    local = {"workers": "local, 1 process", "seconds": round(time.perf_counter() - t0, 2), "examples": local_n,
             "sha256": local_h}
    one = with_ray(1, work)
    two = with_ray(2, work)
    speedup = one["seconds"] / two["seconds"] if two["seconds"] else None
    identical = local_h == one["sha256"] == two["sha256"]
    result = {
        "benchmark": "ray_scaling", "command": "python benchmarks/ray_scaling.py " + " ".join(sys.argv[1:]),
        "attack": args.attack, "essays": len(work.timed), "chunk_size": args.chunk_size,
        "speedup_2_vs_1": round(speedup, 2) if speedup else None, "goal": GOAL,
        "ok": bool(identical and speedup and speedup >= GOAL), "outputs_identical": identical,
        "runs": [local, one, two],
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count()},
    }
    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "ray_scaling.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Ray: 2 workers vs 1 (CPU-bound generation)", "",
             f"Command: `{result['command']}`; {args.attack} on {result['essays']} ASAP-AES essays in chunks of "
             f"{args.chunk_size}, each split into 2 x workers tasks; load average before "
             f"{result['load_average_before']}, after {result['load_average_after']} on {os.cpu_count()} "
             "CPUs.", "",
             "| run | seconds | Ray start-up s | warm-up s | examples | outputs |", "| --- | ---: | ---: | ---: | ---: | --- |"]
    for r in result["runs"]:
        lines.append(f"| {r['workers']} | {r['seconds']} | {r.get('startup_s', '')} | {r.get('warmup_s', '')} | "
                     f"{r['examples']} | {r['sha256'][:12]} |")
    lines += ["", f"Speed-up 2 workers / 1: **{result['speedup_2_vs_1']}x** (goal >= {GOAL}x); outputs identical: "
              f"{identical}. With other work on the machine (load above) two workers cannot get two free CPUs, "
              "so the speed-up measured under load is a lower bound of the idle one."]
    args.out.write_text("\n".join(lines) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
