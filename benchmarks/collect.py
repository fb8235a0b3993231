"""Build benchmarks/RESULTS.md from benchmarks/results/*.json: the machine, then every figure issue 15 asks for
with the command that produced it and the load the machine was under. A figure whose JSON is absent is
written as "not yet measured" with the command that measures it, never left out.

    .venv/bin/python benchmarks/collect.py        # `make bench` runs the benchmarks first, then this
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def load(name: str) -> dict[str, Any] | None:
    path = RESULTS / f"{name}.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise SystemExit(f"{path} is not valid JSON ({e}); re-run its benchmark") from None


def machine() -> list[str]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "unknown"
    try:
        kb = int(next(x for x in Path("/proc/meminfo").read_text().splitlines() if x.startswith("MemTotal")).split()[1])
        mem = f"{kb / 2**20:.1f} GB"
    except (OSError, StopIteration, ValueError):
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True,
                            check=False).stdout.strip() or "unknown"
    return [f"- CPU: {cpu}, {os.cpu_count()} logical CPUs; memory {mem}",
            f"- OS: {platform.platform()}; Python {platform.python_version()}",
            f"- callbluff commit {commit}; collected {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}; "
            f"load average now {[round(x, 2) for x in os.getloadavg()]}",
            "- The machine is shared: every figure below states the load average it was measured under "
            "(1, 5, 15 minutes); a load above the CPU count means other work took CPU time from the benchmark."]


def load_of(r: dict[str, Any]) -> str:
    for key in ("load_average_before", "load_average", "load_average_1_5_15"):
        if key in r:
            after = r.get("load_average_after")
            return f"load {r[key]}" + (f" -> {after}" if after else "")
    return "load not recorded"


def missing(what: str, command: str) -> list[str]:
    return [f"_Not yet measured._ Command: `{command}`", ""]


def section_attacks() -> list[str]:
    out = ["## Generation throughput per attack (texts per second)", ""]
    r = load("attack_throughput")
    if r is None:
        return out + missing("attack throughput", "python benchmarks/attack_throughput.py")
    out += [f"Command: `{r['command']}`; one process; {load_of(r)}; details: benchmarks/attack_throughput.md.", "",
            "| attack | task | kind | texts/s | texts | status |", "| --- | --- | --- | ---: | ---: | --- |"]
    for a in r["attacks"]:
        out.append(f"| {a['attack']} | {a['task']} | {a['kind']} | {a.get('texts_per_s', '')} | {a.get('texts', '')} "
                   f"| {a['status']} |")
    return out + [""]


def section_overhead() -> list[str]:
    out = ["## Harness overhead vs direct target calls", ""]
    r = load("overhead")
    if r is None:
        return out + missing("overhead", "python benchmarks/overhead.py")
    return out + [f"Command: `{r['command']}`; {r['n']:,} inputs, target sleeping {r['delay_s'] * 1000:.0f} ms; "
                  f"{load_of(r)}.", "",
                  f"Median harness / direct: **{r['median_ratio']}** (goal <= {r['goal']}: "
                  f"{'met' if r['ok'] else 'NOT met'}). Repeats: "
                  + ", ".join(f"{x['harness_s']}/{x['direct_s']} s" for x in r["repeats"]), ""]


def section_search() -> list[str]:
    out = ["## Model-in-the-loop cost", ""]
    r = load("addonesent")
    out.append("### AddAny: queries and seconds per question (and AddOneSent's rate)")
    out.append("")
    if r is None or "addany" not in r:
        out += missing("AddAny", "python benchmarks/addonesent.py")
    else:
        a, one = r["addany"], r.get("addonesent", {})
        kept = "command" in a  # AddAny figures kept from an earlier run of the benchmark (run with --any 0)
        out += [f"Command: `{a.get('command', r['command'])}`; load {a.get('load_before', r.get('load_before'))} -> "
                f"{a.get('load_after', r.get('load_after'))}; details: benchmarks/addonesent.md.", "",
                f"- AddAny: **{a['queries_per_question']:,.0f} target queries and {a['seconds_per_question']:.1f} s per "
                f"question** ({len(a['questions'])} questions, {a['queries_per_second']:.1f} queries/s; "
                f"{a.get('settings', 'default parameters')}; the 100-question figures are in docs/findings/reading.md).",
                *([f"- AddOneSent: {one['questions']:,} questions in {one['seconds']} s ({one['ms_per_question']} ms "
                   f"per question; goal {one.get('goal_seconds')} s: {'met' if one.get('goal_met') else 'NOT met'})"
                   + (f"; command `{r['command']}`, load {r.get('load_before')} -> {r.get('load_after')}." if kept
                      else ".")] if one else []), ""]
    d = load("dpaeg_candidates")
    out += ["### DPAEG candidate generation rate", ""]
    if d is None:
        out += missing("DPAEG", "python benchmarks/dpaeg_candidates.py")
    else:
        rate = d["questions"] / d["total_s"] if d.get("total_s") else None
        out += [f"Command: `{d['command']}`; {load_of(d)}.", "",
                f"{d['questions']:,} SQuAD dev questions in {d['total_s']} s "
                f"(**{rate:,.0f} questions/s**; goal {d.get('goal_s')} s: {'met' if d.get('ok') else 'NOT met'}), "
                f"{d.get('examples', '?'):,} adversarial questions ({d['examples'] / d['total_s']:,.0f} per s); "
                f"per question median {d.get('per_question_ms_median')} ms, p95 {d.get('per_question_ms_p95')} ms.", ""]
    return out


def section_memory() -> list[str]:
    out = ["## Peak memory (generate + a trivial target)", ""]
    r = load("peak_memory")
    if r is None:
        return out + missing("peak memory", "python benchmarks/peak_memory.py")
    out += [f"Command: `{r['command']}`; {load_of(r)}; details: benchmarks/peak_memory.md.", "",
            "| records | peak RSS MB | run s |", "| ---: | ---: | ---: |"]
    out += [f"| {x['records']:,} | {x['peak_rss_mb']} | {x['seconds']} |" for x in r["runs"]]
    largest = max(x["records"] for x in r["runs"])
    if largest < 1_000_000:
        verdict = (f"not measured at 1,000,000 (largest run {largest:,}; `python benchmarks/peak_memory.py` runs "
                   "10k, 100k and 1M)")
    else:
        verdict = "met" if r["ok"] else "NOT met"
    return out + ["", f"Goal: 1,000,000 records in < {r['goal_mb']:.0f} MB: {verdict}.", ""]


def section_ray() -> list[str]:
    out = ["## Ray: 2 workers vs 1 on CPU-bound generation", ""]
    r = load("ray_scaling")
    if r is None:
        return out + missing("ray scaling", "python benchmarks/ray_scaling.py")
    runs = "; ".join(f"{x['workers']}: {x['seconds']} s" for x in r["runs"])
    return out + [f"Command: `{r['command']}`; {r['attack']} on {r['essays']} essays; {load_of(r)}.", "",
                  f"{runs}. Speed-up **{r['speedup_2_vs_1']}x** (goal >= {r['goal']}x: "
                  f"{'met' if r['ok'] else 'NOT met'}); outputs identical: {r['outputs_identical']}. "
                  "Details and the reading of the load: benchmarks/ray_scaling.md.", ""]


def section_essay_plan() -> list[str]:
    out = ["## The 16 Kumar attacks in one plan", ""]
    r = load("essay_attacks")
    if r is None:
        return out + missing("essay_attacks", "python benchmarks/essay_attacks.py")
    c, w, q = r["combined"], r.get("combined_warm") or {}, r.get("plan_vs_costliest")
    out += [f"Command: `{r['command']}`; {r['essays']} ASAP-AES essays, `--workers {r['workers']}`; load before "
            f"{r['load_before']}, after the plan runs {r.get('load_after_plan')}; details: "
            "benchmarks/essay_attacks.md.", "",
            f"All 16 attacks in one plan: first run (empty fit cache) **{c['seconds']} s**, repeated (fit states "
            f"cached) **{w.get('seconds')} s**, for {c['examples']} texts."]
    if q:
        out += [f"The most expensive attack alone: {q['attack']}, {q['attack_seconds']} s. Plan / that attack: "
                f"**{q['ratio']}x** first run (goal <= {q['goal']}x: {'met' if q['ok'] else 'NOT met'}), "
                f"**{q['ratio_warm']}x** repeated ({'met' if q['ok_warm'] else 'NOT met'})."]
    return out + [""]


def section_peers() -> list[str]:
    out = ["## Peers side by side (nlpaug, TextAttack, CheckList)", ""]
    r = load("peers")
    if r is None:
        return out + missing("peers", "bash benchmarks/peers/setup.sh && benchmarks/.peers-venv/bin/python "
                                      "benchmarks/peers/run.py")
    out += [f"Command: `{r['command']}`; {r.get('texts', '?')} ASAP-SAS answers; {load_of(r)}; "
            "details (what each operation needs, how the edits differ, the NLTK data substitutes): "
            "benchmarks/peers/RESULTS-peers.md. Rates are inputs (texts) per second; the callbluff row divided "
            "by the others' is the one making one output per input, like the peers. Goals: operations that need "
            "no analysis >= 3x nlpaug and >= CheckList; operations that parse >= 0.9x the spaCy components they "
            "use run alone on the same texts (the `spaCy` rows), and ModLexicon >= nlpaug's SynonymAug; "
            "TextAttack for information.", "",
            "| operation | needs | tool | texts/s | outputs/s | callbluff / tool | goal |",
            "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    for row in r.get("rows", []):
        tool = row["tool"]
        if tool == "callbluff" and "role" in row:
            if row["role"] != "compared":
                continue  # as-designed configurations: in RESULTS-peers.md
            tool = f"callbluff {row['attack']}"
        elif row.get("config"):
            tool = f"{tool} {row['config']}"
        goal = "" if row.get("ok") is None else f">= {row['goal']}x: {'met' if row['ok'] else 'NOT met'}"
        text = row.get("texts_per_s", row["status"] if row["status"] != "ok" else "")
        out.append(f"| {row['operation']} | {row.get('kind', '')} | {tool} | {text} | "
                   f"{row.get('outputs_per_s', '')} | {row.get('ratio', '')} | {goal} |")
    notes = [*r.get("nltk_substitutes", []), *r.get("notes", [])]
    return out + [""] + [f"- {n}" for n in notes] + [""]


def main() -> None:
    lines = ["# callbluff benchmark results", "",
             "Generated by `python benchmarks/collect.py` from benchmarks/results/*.json (`make bench` runs the "
             "benchmarks, then this). Do not edit by hand.", "", "## Machine", "", *machine(), ""]
    for section in (section_attacks, section_overhead, section_essay_plan, section_search, section_memory,
                    section_ray, section_peers):
        lines += section()
    others = sorted(p.stem for p in RESULTS.glob("*.json")) if RESULTS.exists() else []
    known = {"attack_throughput", "overhead", "addonesent", "dpaeg_candidates", "peak_memory", "ray_scaling", "peers",
             "essay_attacks"}
    rest = [o for o in others if o not in known]
    if rest:
        lines += ["## Other results in benchmarks/results", "",
                  "Figures of other benchmarks (their own .md files explain them): " + ", ".join(rest) + ".", ""]
    out = REPO / "benchmarks" / "RESULTS.md"
    out.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
