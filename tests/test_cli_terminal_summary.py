"""Issue 40, item 10: the terminal shows a summary that fits a screen, details in files: ``callbluff report`` over
four runs of a 41-configuration suite fits about two screens (each run's ten worst rows, the rest counted), and
the error summary says how many more causes there are."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.cli.summary import REPORT_ROWS_PER_RUN
from callbluff.engine.run import RunResult

PERCENTS = ", ".join(str(p) for p in range(1, 41))
SUITE = f"""
name = "many"
seed = 2
limit = 8
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelRand"
grid = {{ percent = [{PERCENTS}] }}
[[attack]]
name = "ShuffleSent"
[output]
chunk_size = 8
report = false
"""
SCREEN = 60
"""Lines of one screen (a laptop terminal)."""


def test_report_over_four_runs_fits_two_screens(small_run: Callable[..., RunResult], tmp_path: Path) -> None:
    run = small_run(SUITE).run_dir
    r = CliRunner().invoke(app, ["report", *[str(run)] * 4, "--out", str(tmp_path / "all.html")],
                           env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) <= 2 * SCREEN, f"{len(lines)} lines"
    assert r.output.count(f"... and {42 - REPORT_ROWS_PER_RUN} more metric rows") == 4  # 42 rows: clean + 41
    assert r.output.count("ShuffleSent") == 4  # the worst configuration of each run is shown


def test_one_run_prints_its_worst_rows_first(small_run: Callable[..., RunResult]) -> None:
    run = small_run(SUITE).run_dir
    r = CliRunner().invoke(app, ["report", str(run)], env={"COLUMNS": "160"})
    assert r.exit_code == 0, r.output
    assert "more metric rows (per prompt, every field): metrics.json and report.html" in r.output
    table = r.output[:r.output.index("... and")]
    assert table.index("clean") < table.index("ShuffleSent") < table.index("DelRand")


def test_the_error_summary_says_how_many_more_causes(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    import json
    from types import SimpleNamespace

    from callbluff.cli.summary import print_error_causes

    rows = [{"stage": "predict_original", "target": "api", "cause": f"HTTP 50{k % 5}"} for k in range(20)]
    (tmp_path / "errors.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    top = [{"target": "api", "cause": f"HTTP 50{k}", "n": 4} for k in range(3)]
    print_error_causes(SimpleNamespace(counts={"error_causes": top, "errors": 20}, run_dir=tmp_path))
    err = capsys.readouterr().err
    assert "errors: 20 in all; the most frequent causes:" in err
    assert "... and 2 more distinct causes (8 errors): errors.jsonl" in err
