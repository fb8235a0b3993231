"""Harness overhead: a full callbluff run vs calling the same target directly (issue 3 benchmark).

10,000 inputs; the target sleeps ~1 ms per call (a stand-in for a fast local model). "Direct" is what a user's
own script does: read the JSON lines and call the function on each text in a plain loop. "Harness" runs the engine end to end on the same inputs: dataset loading,
chunking, batching, the SQLite prediction cache (fresh, so every input is really predicted), Parquet parts,
metrics and run directory (report off). Both are timed side by side in one process, alternating, and the
median ratio is reported. Goal: harness / direct <= 1.05. One-time imports are paid in a warm-up run first
(they cost a few seconds once per process, whatever the data size).

Usage: python benchmarks/overhead.py [--n 10000] [--repeats 3] [--chunk-size 256] [--out benchmarks/overhead.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from callbluff.engine.executor import LocalExecutor
from callbluff.engine.run import Engine
from callbluff.engine.suite import parse_suite
from callbluff.targets import CallableTarget

DELAY = 0.001


def target_fn(text: str) -> float:
    time.sleep(DELAY)
    return float(len(text) % 4)


def write_inputs(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps({"id": f"r{i}", "prompt_id": f"p{i % 4}",
                                 "text": f"answer {i}: pandas eat bamboo and koalas eat eucalyptus", "score": i % 4})
                     + "\n" for i in range(n))


def direct(data: Path) -> float:
    """What a user's own loop does: read the JSON lines and call the target on each text."""
    t0 = time.perf_counter()
    with open(data, encoding="utf-8") as fh:
        for line in fh:
            target_fn(json.loads(line)["text"])
    return time.perf_counter() - t0


def harness(data: Path, run_dir: Path, chunk_size: int) -> float:
    suite = parse_suite({"name": "overhead", "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
                         "output": {"chunk_size": chunk_size, "report": False, "batch_size": 64}},
                        source="overhead")
    t0 = time.perf_counter()
    with LocalExecutor(1) as ex:
        Engine(suite, run_dir, executor=ex, targets={"fn": CallableTarget(target_fn)}).execute()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunk-size", type=int, default=1000)
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("overhead.md"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "inputs.jsonl"
        write_inputs(data, args.n)
        # warm-up: one-time imports (pandas, scipy.stats, pyarrow) are start-up cost, not per-input overhead
        small = Path(tmp) / "warmup.jsonl"
        write_inputs(small, 50)
        harness(small, Path(tmp) / "warmup", args.chunk_size)
        results = []
        for r in range(args.repeats):
            d = direct(data)
            h = harness(data, Path(tmp) / f"run{r}", args.chunk_size)
            results.append((d, h, h / d))
            print(f"repeat {r}: direct {d:.2f}s harness {h:.2f}s ratio {h / d:.3f}", flush=True)
    ratio = statistics.median(x[2] for x in results)
    lines = [
        "# Harness overhead (benchmarks/overhead.py)",
        "",
        f"{args.n:,} inputs, target sleeping {DELAY * 1000:.0f} ms per call, chunk_size {args.chunk_size}, "
        f"batch_size 64, fresh prediction cache each repeat, report off.",
        "",
        "| repeat | direct (s) | harness (s) | ratio |",
        "| --- | --- | --- | --- |",
        *[f"| {i} | {d:.2f} | {h:.2f} | {q:.3f} |" for i, (d, h, q) in enumerate(results)],
        "",
        f"**Median ratio harness/direct: {ratio:.3f}** (goal <= 1.05).",
        "",
        f"Load average when measured: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores "
        f"(the direct loop only sleeps, so other jobs on the machine slow the harness side only).",
        "The harness commits every batch's predictions to SQLite before the next target call (a kill repeats at "
        "most the calls in flight); those commits append to a journal table (one or two pages each) that is "
        "merged into the keyed table when the cache is next opened. Reading the next chunk and building and "
        "writing the finished chunk's rows run on background threads while the target works.",
    ]
    args.out.write_text("\n".join(lines) + "\n")
    results_dir = Path(__file__).with_name("results")  # for benchmarks/collect.py (RESULTS.md)
    results_dir.mkdir(exist_ok=True)
    (results_dir / "overhead.json").write_text(json.dumps({
        "benchmark": "overhead", "command": "python benchmarks/overhead.py " + " ".join(sys.argv[1:]),
        "n": args.n, "chunk_size": args.chunk_size, "delay_s": DELAY, "median_ratio": round(ratio, 4), "goal": 1.05,
        "ok": ratio <= 1.05, "repeats": [{"direct_s": round(d, 3), "harness_s": round(h, 3)} for d, h, _ in results],
        "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count()}, indent=2) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
