"""Issue 40, item 5: ``callbluff run`` into a log (stderr not a terminal, as in CI) prints timestamped progress
lines while the run goes, not only its bars at 100 % when it ends."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from helpers import REPO, TESTS

SUITE = """
name = "progress-log"
seed = 1
limit = 24
[dataset]
spec = "demo:content"
[[target]]
name = "slow"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
[output]
chunk_size = 4
report = false
"""
LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] records: (\d+)(?:/(\d+))?")


def test_run_into_a_log_prints_timestamped_progress_before_it_ends(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(TESTS)]),
           "CALLBLUFF_TEST_SLEEP": "0.15",  # ~48 calls of 0.15 s: a run of several seconds
           "CALLBLUFF_PROGRESS_INTERVAL": "0"}  # every chunk a line (default: one per 30 s besides first and last)
    proc = subprocess.Popen([sys.executable, "-m", "callbluff.cli", "run", str(suite), "--out", str(tmp_path / "run")],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen: list[tuple[int, bool]] = []  # (records done, was the run still going when the line arrived)
    assert proc.stderr is not None
    try:
        for line in proc.stderr:
            m = LINE.match(line)
            if m:
                seen.append((int(m.group(1)), proc.poll() is None))
            time.sleep(0)
    finally:
        proc.wait(timeout=300)
    assert proc.returncode == 0, proc.stdout.read() if proc.stdout else ""
    done_while_running = [n for n, running in seen if running and 0 < n < 24]
    assert done_while_running, f"no progress line arrived during the run: {seen}"
    assert seen[-1][0] == 24  # the last line: every record


def test_report_into_a_log_says_what_it_reads(small_run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from typer.testing import CliRunner

    from callbluff.cli import app

    run_dir = small_run().run_dir
    r = CliRunner().invoke(app, ["report", str(run_dir), str(run_dir), "--out", str(tmp_path / "both.html")])
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if re.match(r"^\[\d\d:\d\d:\d\d\] report: ", line)]
    assert any("report: runs read: 0/2" in line for line in lines), r.output
    assert any("report: runs read: 2/2" in line for line in lines) and any("report: written" in line for line in lines)
