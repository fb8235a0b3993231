"""Peak memory of a run as the number of records grows (issue 15 goal: 1,000,000 responses in < 2 GB).

Synthetic short responses (one JSON line each, ~60 characters, four prompts on a 0-3 scale) go through the
whole engine: reading in chunks, generation (``Shuffle``, whitespace tokens: one adversarial text per response),
a trivial target (``len(text) % 4``, a Python callable, so the figure is the harness's own memory), the SQLite
prediction cache (fresh), chunk parts, the streamed merge into examples.parquet, errors and metrics (report
off). Each size runs in a fresh child process; its peak RSS is ``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``
read after the child exits (the high-water mark of that child alone, since it is the only child waited for).
Several sizes are measured so that the growth per record is visible, not only the largest figure.

    flock /tmp/callbluff-heavy.lock nice -n 5 .venv/bin/python benchmarks/peak_memory.py
    .venv/bin/python benchmarks/peak_memory.py --sizes 2000,20000     # quick look
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_MB = 2048.0


def trivial_target(text: str) -> float:
    return float(len(text) % 4)


def write_inputs(path: Path, n: int) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n):
            fh.write(json.dumps({"id": f"r{i}", "prompt_id": f"p{i % 4}", "score": i % 4,
                                 "text": f"answer {i} pandas eat bamboo while koalas eat eucalyptus leaves"}) + "\n")


def child(data: Path, run_dir: Path, chunk_size: int) -> None:
    """The measured run (in its own process)."""
    sys.path.insert(0, str(REPO / "src"))
    from callbluff.engine.executor import LocalExecutor
    from callbluff.engine.run import Engine
    from callbluff.engine.suite import parse_suite
    from callbluff.targets import CallableTarget

    suite = parse_suite({"name": "peak-memory",
                         "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
                         "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}],
                         "output": {"chunk_size": chunk_size, "batch_size": 256, "report": False}},
                        source="peak_memory")
    t0 = time.perf_counter()
    with LocalExecutor(1) as ex:
        result = Engine(suite, run_dir, executor=ex, targets={"trivial": CallableTarget(trivial_target)}).execute()
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 1), "counts": {
        k: result.counts[k] for k in ("records", "examples", "predictions", "chunks")}}))


def measure(n: int, chunk_size: int, tmp: Path) -> dict:
    data = tmp / f"inputs-{n}.jsonl"
    t0 = time.perf_counter()
    write_inputs(data, n)
    write_s = time.perf_counter() - t0
    run_dir = tmp / f"run-{n}"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    done = subprocess.run([sys.executable, __file__, "--child", str(data), str(run_dir), str(chunk_size)],
                          capture_output=True, text=True, check=False)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if done.returncode != 0:
        raise SystemExit(f"the run of {n} records failed:\n{done.stderr[-3000:]}")
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if peak_kb <= before:  # an earlier, larger child set the mark: this one's peak is not known exactly
        out["peak_note"] = "not above an earlier child's peak"
    sizes = {p.name: p.stat().st_size for p in run_dir.iterdir() if p.is_file()}
    data.unlink()
    return {"records": n, "peak_rss_mb": round(peak_kb / 1024, 1), "input_write_s": round(write_s, 1), **out,
            "examples_parquet_mb": round(sizes.get("examples.parquet", 0) / 2**20, 1),
            "cache_mb": round(sizes.get("predictions.sqlite", 0) / 2**20, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated record counts, ascending")
    ap.add_argument("--chunk-size", type=int, default=2000)
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "peak_memory.md")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(Path(args.child[0]), Path(args.child[1]), int(args.child[2]))
        return
    sizes = sorted(int(s) for s in args.sizes.split(","))
    load_before = os.getloadavg()
    rows = []
    with tempfile.TemporaryDirectory(prefix="callbluff-peak-") as tmp:
        for n in sizes:
            rows.append(measure(n, args.chunk_size, Path(tmp)))
            print(json.dumps(rows[-1]), flush=True)
    largest = rows[-1]
    result = {
        "benchmark": "peak_memory",
        "command": "python benchmarks/peak_memory.py " + " ".join(sys.argv[1:]),
        "chunk_size": args.chunk_size, "goal_mb": GOAL_MB,
        "ok": largest["records"] >= 1_000_000 and largest["peak_rss_mb"] < GOAL_MB,
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "machine": {"python": platform.python_version(), "processor": platform.machine(), "cpus": os.cpu_count()},
        "runs": rows,
    }
    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "peak_memory.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Peak memory vs number of records", "",
             f"Command: `{result['command']}`; chunk size {args.chunk_size}; load average before "
             f"{result['load_average_before']}, after {result['load_average_after']} on {os.cpu_count()} CPUs.", "",
             "Whole engine, one process: read, Shuffle (whitespace), trivial callable target, fresh SQLite cache, "
             "parts, streamed merge, errors, metrics (report off). Peak RSS of the run's own process.", "",
             "| records | peak RSS MB | run s | examples | predictions | examples.parquet MB | cache MB |",
             "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        lines.append(f"| {r['records']:,} | {r['peak_rss_mb']} | {r['seconds']} | {r['counts']['examples']:,} | "
                     f"{r['counts']['predictions']:,} | {r['examples_parquet_mb']} | {r['cache_mb']} |")
    lines += ["", f"Goal: 1,000,000 records in < {GOAL_MB:.0f} MB: "
              + ("met." if result["ok"] else "NOT met (or not measured at 1,000,000).")]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
