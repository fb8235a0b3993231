"""CLI start-up time (issue 40 item 13): `callbluff --version`, `--help`, `suite --help` and `list`, side by side.

Each command runs as a fresh process of the real console script (``callbluff`` beside this Python, or
``python -m callbluff.cli`` where there is none) on this checkout's sources (``PYTHONPATH=src``), the four
commands interleaved, ``--repeats`` times each; the median wall-clock and CPU (user + system, of the child)
seconds are reported. CPU time is the steadier figure on a shared machine: wall time also counts the time other
jobs held the cores. ``--compare-src DIR`` times the same commands on another source tree in the same run (e.g. a
checkout of an older commit's ``src``), interleaved too, for a before/after in one table. Goal: under 1 s wall
each for --version, list and suite --help.

Usage: python benchmarks/cli_startup.py [--repeats 5] [--compare-src DIR [--compare-label TEXT]]
       [--out benchmarks/cli_startup.md]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMMANDS = (["--version"], ["--help"], ["suite", "--help"], ["list"])
GOAL_S = 1.0
GOAL_COMMANDS = ("--version", "list", "suite --help")


def entry_point() -> list[str]:
    """The console script installed beside this interpreter, else ``python -m callbluff.cli`` (the same code)."""
    script = Path(sys.executable).with_name("callbluff")
    return [str(script)] if script.exists() else [sys.executable, "-m", "callbluff.cli"]


def time_once(argv: list[str], src: Path) -> tuple[float, float]:
    """(wall seconds, child CPU seconds) of one run of ``argv`` importing callbluff from ``src``; exits naming the
    command when it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "COLUMNS": "120"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=REPO)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} (PYTHONPATH={src}) exited {proc.returncode}: {proc.stderr[-1500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--compare-src", type=Path, default=None,
                    help="another source tree (a directory holding callbluff/) timed in the same run")
    ap.add_argument("--compare-label", default=None,
                    help="the name of --compare-src in the table, e.g. 'main at d337ba9' (default: its path)")
    ap.add_argument("--out", type=Path, default=Path(__file__).with_name("cli_startup.md"))
    args = ap.parse_args()
    trees = {"this checkout": REPO / "src"}
    if args.compare_src is not None:
        if not (args.compare_src / "callbluff").is_dir():
            raise SystemExit(f"--compare-src {args.compare_src}: no callbluff/ package in it; give a source "
                             "directory such as OTHER_CHECKOUT/src")
        trees[args.compare_label or str(args.compare_src)] = args.compare_src.resolve()
    base = entry_point()
    load_before = [round(x, 2) for x in os.getloadavg()]
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for r in range(args.repeats):
        for tree, src in trees.items():
            for cmd in COMMANDS:
                wall, cpu = time_once([*base, *cmd], src)
                times.setdefault((tree, " ".join(cmd)), []).append((wall, cpu))
                print(f"repeat {r}: {tree}: callbluff {' '.join(cmd)}: {wall:.2f} s wall, {cpu:.2f} s CPU",
                      flush=True)
    load_after = [round(x, 2) for x in os.getloadavg()]
    rows = []
    for (tree, cmd), runs in times.items():
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        rows.append({"tree": tree, "command": cmd, "median_wall_s": round(wall, 3), "median_cpu_s": round(cpu, 3),
                     "runs_wall_s": [round(w, 3) for w, _ in runs]})
    mine = [r for r in rows if r["tree"] == "this checkout" and r["command"] in GOAL_COMMANDS]
    ok = all(r["median_wall_s"] < GOAL_S for r in mine)
    lines = [
        "# CLI start-up (benchmarks/cli_startup.py)",
        "",
        f"`{' '.join(Path(a).name if i == 0 else a for i, a in enumerate(base))} ...`, a fresh process each, "
        f"median of {args.repeats} interleaved runs; load average {load_before} -> {load_after} on "
        f"{os.cpu_count()} cores.",
        "",
        "| source tree | command | median wall (s) | median CPU (s) | runs, wall (s) |",
        "| --- | --- | ---: | ---: | --- |",
        *[f"| {r['tree']} | `callbluff {r['command']}` | {r['median_wall_s']:.2f} | {r['median_cpu_s']:.2f} | "
          f"{', '.join(f'{w:.2f}' for w in r['runs_wall_s'])} |" for r in rows],
        "",
        f"Goal: under {GOAL_S:g} s wall for {', '.join(GOAL_COMMANDS)} on this checkout: "
        f"**{'met' if ok else 'NOT met'}**" + ("" if ok else " (a load above the core count slows every figure)")
        + ".",
    ]
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    results_dir = Path(__file__).with_name("results")  # for benchmarks/collect.py (RESULTS.md)
    results_dir.mkdir(exist_ok=True)
    (results_dir / "cli_startup.json").write_text(json.dumps({
        "benchmark": "cli_startup", "command": "python benchmarks/cli_startup.py " + " ".join(sys.argv[1:]),
        "repeats": args.repeats, "rows": rows, "goal_s": GOAL_S, "ok": ok, "load_average_before": load_before,
        "load_average_after": load_after, "cpus": os.cpu_count()}, indent=2) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
