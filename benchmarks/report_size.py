"""Report size and render time for a run with 10,000 adversarial examples (issue 14: < 20 MB, < 5 s).

The run: the demo essays (120 records, ``demo:essay``) under DelRand at 82 deletion percentages plus ShuffleSent
and RepeatSent (84 configurations, 10,080 examples), scored by a length scorer (a Python callable, so the
harness, not a model, is measured). The report is rendered with ``callbluff.report.html.write_report`` and opened
in headless Chromium (``--headless --no-sandbox --disable-gpu --dump-dom``): the figures are the page's own
load time (navigation start to the end of the load event, which includes running the example browser's script,
measured inside the page) and the wall time of the whole Chromium process (start-up included), beside the wall
time of the same process on an empty page.

Usage (from the repo root; about 1 CPU-minute; the run is cached under .findings-cache/):

    nice -n 5 .venv/bin/python benchmarks/report_size.py

Writes benchmarks/report_size.md and benchmarks/results/report_size.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".findings-cache" / "report_size"
SCORER = '''
def length_scorer(text):
    """1-6 by length (an overstable scorer, Kumar et al.)."""
    return 1.0 + 5.0 * min(len(text.split()), 400) / 400
'''
SUITE = """
name = "report-size"
seed = 11
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "report_size_scorer:length_scorer"
[[attack]]
name = "DelRand"
grid = {{ percent = {percents} }}
[[attack]]
name = "ShuffleSent"
[[attack]]
name = "RepeatSent"
[output]
chunk_size = 200
report = false
"""
PROBE = """<script>
window.addEventListener("load", function () { setTimeout(function () {
  var t = performance.getEntriesByType("navigation")[0];
  var p = document.createElement("pre"); p.id = "bench";
  p.textContent = JSON.stringify({load_ms: t.loadEventEnd, dom_ms: t.domContentLoadedEventEnd,
    examples_on_page: document.querySelectorAll(".cb-list .ex").length});
  document.body.appendChild(p);
}, 0); });
</script>"""


def build_run(percents: list[int]) -> Path:
    from callbluff.api import run_suite
    from callbluff.engine.suite import load_suite

    CACHE.mkdir(parents=True, exist_ok=True)
    (CACHE / "report_size_scorer.py").write_text(SCORER)
    (CACHE / "suite.toml").write_text(SUITE.format(percents=json.dumps(percents)))
    sys.path.insert(0, str(CACHE))
    run_suite(load_suite(CACHE / "suite.toml"), CACHE / "run")
    return CACHE / "run"


def chromium_times(page: Path, browser: str) -> dict[str, float]:
    t0 = time.perf_counter()
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=1000",
                          "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=300).stdout
    wall = time.perf_counter() - t0
    m = re.search(r'<pre id="bench">(.*?)</pre>', dom, re.S)
    probe = json.loads(m.group(1).replace("&quot;", '"')) if m else {}
    return {"wall_s": round(wall, 3), **probe}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        sys.exit("needs headless Chromium (Debian package `chromium`; scripts/setup.sh installs it)")
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    run = build_run(list(range(1, 83)))
    run_s = time.perf_counter() - t0
    import pandas as pd

    from callbluff.report.browser import MAX_EMBEDDED, MAX_EMBEDDED_BYTES
    from callbluff.report.html import write_report

    n_examples = len(pd.read_parquet(run / "examples.parquet", columns=["example_id"]))
    t0 = time.perf_counter()
    report = write_report(run)
    render_py_s = time.perf_counter() - t0
    size = report.stat().st_size
    html = report.read_text(encoding="utf-8")
    n_embedded = html.count('"example_id":')
    with tempfile.TemporaryDirectory() as tmp:
        page = Path(tmp) / "report.html"
        cut = html.rindex("</body>")
        page.write_text(html[:cut] + PROBE + html[cut:], encoding="utf-8")
        empty = Path(tmp) / "empty.html"
        empty.write_text("<!doctype html><title>x</title><body>" + PROBE + "</body>")
        runs = [chromium_times(page, browser) for _ in range(args.repeats)]
        empties = [chromium_times(empty, browser) for _ in range(args.repeats)]
    load_after = os.getloadavg()
    best = min(runs, key=lambda r: r["wall_s"])
    result = {
        "command": "nice -n 5 .venv/bin/python benchmarks/report_size.py",
        "examples": n_examples, "embedded_examples": n_embedded, "report_bytes": size,
        "report_mb": round(size / 1e6, 3), "goal_mb": 20, "goal_render_s": 5,
        "page_load_ms": [r.get("load_ms") for r in runs], "chromium_wall_s": [r["wall_s"] for r in runs],
        "empty_page_chromium_wall_s": [r["wall_s"] for r in empties],
        "examples_on_first_page": best.get("examples_on_page"),
        "python_render_s": round(render_py_s, 3), "run_s": round(run_s, 1),
        "load_avg_before": [round(x, 2) for x in load_before], "load_avg_after": [round(x, 2) for x in load_after],
        "cpus": os.cpu_count(), "machine": platform.platform(), "python": platform.python_version(),
        "chromium": subprocess.run([browser, "--version"], capture_output=True, text=True).stdout.strip(),
    }
    (ROOT / "benchmarks" / "results").mkdir(exist_ok=True)
    (ROOT / "benchmarks" / "results" / "report_size.json").write_text(json.dumps(result, indent=2) + "\n")
    ok_size = size < 20e6
    worst_wall = max(result["chromium_wall_s"])
    worst_load = max(x for x in result["page_load_ms"] if x is not None) / 1000 if any(
        x is not None for x in result["page_load_ms"]) else None
    ok_time = worst_wall < 5
    md = f"""# Report size and render time (10,000 adversarial examples)

Command: `{result['command']}` (about 1 CPU-minute; the run is cached under `.findings-cache/report_size/`, so a
second call measures the report alone).

Run: demo essays (120 records) x 84 configurations (DelRand percent 1-82, ShuffleSent, RepeatSent) against a
length scorer: **{n_examples:,} adversarial examples** (run built, or resumed from the cache, in {result['run_s']} s; not part of the goal).

| figure | value | goal |
| --- | --- | --- |
| report.html size | {result['report_mb']} MB ({size:,} bytes) | < 20 MB: {'met' if ok_size else 'NOT met'} |
| examples embedded in the browser (deterministic sample) | {n_embedded:,} | all {n_examples:,} stay in examples.parquet |
| page load in headless Chromium (navigation start to load event end, measured in the page; {args.repeats} runs) | {', '.join(f'{x:.0f} ms' for x in result['page_load_ms'] if x is not None)} | |
| whole `chromium --headless --dump-dom` process, start-up included ({args.repeats} runs) | {', '.join(f'{x:.2f} s' for x in result['chromium_wall_s'])} | < 5 s: {'met' if ok_time else 'NOT met'} |
| the same process on an empty page (start-up alone) | {', '.join(f'{x:.2f} s' for x in result['empty_page_chromium_wall_s'])} | |
| Python: write_report | {result['python_render_s']} s | |

The render goal is judged on the slowest whole-process time (start-up included), the stricter reading; the page
itself loads in {worst_load if worst_load is None else round(worst_load, 3)} s at worst. The example browser
embeds a sample stratified per attack configuration (and, within one, by outcome), at most {MAX_EMBEDDED:,}
examples and about {MAX_EMBEDDED_BYTES / 1e6:g} MB of JSON per run (every configuration keeps at least one
example), so the size does not grow with the run beyond the metric tables and the charts.

Machine: {result['machine']}, {result['cpus']} CPUs shared with other jobs; load average before
{result['load_avg_before']}, after {result['load_avg_after']}; {result['chromium']}.
"""
    (ROOT / "benchmarks" / "report_size.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
