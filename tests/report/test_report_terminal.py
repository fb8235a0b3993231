"""The terminal: run progress bars get totals and counts; `callbluff train` prints a summary, not model.json."""

from __future__ import annotations

import io
import time
from pathlib import Path

from rich.console import Console
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.terminal import RunProgress, training_summary


def test_run_progress_counts_records_and_learns_the_total() -> None:
    console = Console(file=io.StringIO(), force_terminal=False)
    with RunProgress(console, chunk_size=100, count_records=lambda: 250) as p:
        for _ in range(100):  # the count runs on a thread
            if p.total is not None:
                break
            time.sleep(0.01)
        p("chunk", 1, None)
        p("chunk", 3, None)
        p("generator chunk", 2, 5)
        tasks = {t.description: t for t in p.progress.tasks}
    assert tasks["records"].total == 250 and tasks["records"].completed == 250  # 3 chunks x 100, capped
    assert tasks["generator pieces"].completed == 2 and tasks["generator pieces"].total == 5
    with RunProgress(console, chunk_size=10, count_records=lambda: 1000, limit=25) as p:
        p("chunk", 1, None)
        assert p.progress.tasks[0].total == 25 and p.progress.tasks[0].completed == 10


def test_training_summary_is_short() -> None:
    lines = training_summary("content-scorer", "m", {"train_seconds": 3.2, "params": {"C": 1},
                                                     "metrics": {"p1": {"cv_qwk": 0.91234, "n_train": 10},
                                                                 "eval_data": "x", "eval_mean_qwk": 0.8}})
    assert lines == ["trained content-scorer in 3.2 s -> m (details in m/model.json)",
                     "  p1: cv_qwk 0.9123, n_train 10", "  eval_mean_qwk: 0.8"]


def test_train_prints_a_summary_not_model_json(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["train", "sliding-window-qa", "--data", "demo:squad", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "trained sliding-window-qa in" in res.output and str(tmp_path / "m") in res.output
    assert '"params"' not in res.output and '"fingerprint"' not in res.output
