"""The terminal: run progress bars get totals and counts; `callbluff train` prints a summary, not model.json."""

from __future__ import annotations

import io
import time
from pathlib import Path

import pytest

from rich.console import Console
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.terminal import START_LINE_AFTER, RunProgress, StageProgress, engine_stages, training_summary


def test_run_progress_counts_records_and_learns_the_total() -> None:
    console = Console(file=io.StringIO(), force_terminal=False)
    with RunProgress(console, chunk_size=100, count_records=lambda: 250, plain=False) as p:  # the bars
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
    with RunProgress(console, chunk_size=10, count_records=lambda: 1000, limit=25, plain=False) as p:
        p("chunk", 1, None)
        assert p.progress.tasks[0].total == 25 and p.progress.tasks[0].completed == 10


def test_run_progress_in_a_log_prints_timestamped_lines() -> None:
    buf = io.StringIO()
    with RunProgress(Console(file=buf, force_terminal=False, width=200), chunk_size=10, count_records=None,
                     limit=25, interval=3600) as p:
        assert p.plain
        p("chunk", 1, None)  # within the interval: no line
        p("chunk", 3, None)  # the last: a line
    lines = buf.getvalue().splitlines()
    assert len(lines) == 2 and lines[0].endswith("records: 0/25 (0 %), elapsed 0:00:00")
    assert "records: 25/25 (100 %)" in lines[1]
    buf = io.StringIO()  # a run that stops at once (a wrong path): its error alone, no "records: 0" line
    with pytest.raises(ValueError), RunProgress(Console(file=buf, force_terminal=False), chunk_size=10,
                                                count_records=None, limit=25):
        raise ValueError("no such file")
    time.sleep(START_LINE_AFTER + 0.3)
    assert buf.getvalue() == ""


def test_run_progress_in_a_log_says_a_long_chunk_is_still_running() -> None:
    buf = io.StringIO()
    with RunProgress(Console(file=buf, force_terminal=False, width=200), chunk_size=1000, count_records=None,
                     limit=200, interval=0.3) as p:
        p("fit", 5, None)  # the run is under way; its one chunk takes a while and reports nothing
        time.sleep(1.2)
    still = [line for line in buf.getvalue().splitlines() if line.endswith("still running")]
    assert len(still) >= 2 and all("records: 0/200" in line for line in still)


def test_training_summary_is_short() -> None:
    lines = training_summary("content-scorer", "m", {
        "train_seconds": 3.2, "data": "asap-sas:train.tsv.gz", "params": {"C": 1},
        "metrics": {"p1": {"cv_qwk": 0.91234, "n_train": 10, "fit_seconds": 2.0, "eval_qwk": 0.8, "eval_n": 5},
                    "eval_data": "x", "eval_mean_qwk": 0.8}})
    assert lines == ["trained content-scorer on asap-sas:train.tsv.gz (1 prompt) in 3.2 s",
                     "  prompt p1: trained on 10, CV QWK 0.9123, held-out QWK 0.8, held-out n 5",
                     "  mean held-out QWK 0.8 on x",
                     "files: m (model.json holds the parameters, versions and every figure)"]
    reader = training_summary("sliding-window-qa", "r", {"train_seconds": 0.1, "metrics": {
        "eval_data": "squad:dev.json", "eval_rows": [{"attack": "clean", "target": "model", "f1": 71.66, "em": 60.0,
                                                      "n": 10}]}})
    assert reader[1] == "  held-out (squad:dev.json): f1 71.66, em 60, n 10"
    assert training_summary("retriever", "r", {"train_seconds": 2, "n_documents": 2067})[0] == \
        "trained retriever (2,067 documents indexed) in 2 s"


def test_stage_progress_plain_lines_have_counts_elapsed_and_eta() -> None:
    buf = io.StringIO()
    with StageProgress(Console(file=buf, force_terminal=False, width=200), interval=3600) as p:
        assert p.plain
        p("prompts", 0, 2)
        p("prompt 1: spaCy parses", 0, 100)
        time.sleep(0.05)
        p("prompt 1: spaCy parses", 50, 100)  # within the interval: no line
        p("prompt 1: spaCy parses", 100, 100)  # the stage's end: a line
        items = list(p.track(["a", "b", "c"], "runs"))
    lines = buf.getvalue().splitlines()
    assert items == ["a", "b", "c"]
    assert [ln.split("] ", 1)[1].split(", elapsed")[0] for ln in lines] == [
        "prompts: 0/2 (0 %)", "prompt 1: spaCy parses: 0/100 (0 %)", "prompt 1: spaCy parses: 100/100 (100 %)",
        "runs: 0/3 (0 %)", "runs: 3/3 (100 %)"]
    with StageProgress(Console(file=io.StringIO(), force_terminal=False), plain=False, interval=0) as p:
        p("x", 0, 10)
        time.sleep(0.05)
        p("x", 5, 10)
        assert p.plain is False


def test_stage_progress_eta_is_the_remaining_items_at_the_mean_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 100.0, 100.5, 130.0])  # the first call reads the clock twice (start, line)
    monkeypatch.setattr("callbluff.terminal.time.monotonic", lambda: next(clock))
    eta = StageProgress(Console(file=io.StringIO()), plain=True, interval=0)
    eta("x", 0, 10)
    eta("x", 1, 10)  # half a second in: too early for a rate
    eta("x", 3, 10)  # 30 s for 3 items: 7 more take 70 s
    lines = [ln.split("] ", 1)[1] for ln in eta.console.file.getvalue().splitlines()]
    assert lines == ["x: 0/10 (0 %), elapsed 0:00:00", "x: 1/10 (10 %), elapsed 0:00:00",
                     "x: 3/10 (30 %), elapsed 0:00:30, ETA 0:01:10"]


def test_stage_progress_bars_keep_prompts_and_reuse_one_step_bar() -> None:
    with StageProgress(Console(file=io.StringIO(), force_terminal=True), plain=False) as p:
        p("prompts", 0, 2)
        p("prompt 1: CV", 3, 10)
        p("prompt 1: CV", 10, 10)
        p("prompt 2: CV", 1, 10)
        p("prompts", 1, 2)
        tasks = {t.description: t for t in p.progress.tasks}
    assert set(tasks) == {"prompts", "prompt 2: CV"}  # the step bar was reset for prompt 2
    assert (tasks["prompt 2: CV"].completed, tasks["prompt 2: CV"].total) == (1, 10)
    assert (tasks["prompts"].completed, tasks["prompts"].total) == (1, 2)
    assert p.seen["prompt 1: CV"] == (10, 10)


def test_train_prints_a_summary_not_model_json(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["train", "sliding-window-qa", "--data", "demo:squad", "--out", str(tmp_path / "m")])
    assert res.exit_code == 0, res.output
    assert "trained sliding-window-qa in" in res.output and str(tmp_path / "m") in res.output
    assert '"params"' not in res.output and '"fingerprint"' not in res.output


def test_train_shows_progress_with_counts_then_the_clean_figures(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["train", "content-scorer", "--data", "demo:content", "--out", str(tmp_path / "m"),
                                   "--param", "tune=false", "--param", "features=word_unigram,length,pos_ngrams"])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()  # not a terminal: timestamped plain lines
    assert any(ln.endswith("prompts: 2/2 (100 %), elapsed " + ln.rsplit(" ", 1)[-1]) for ln in lines), res.output
    assert any("prompt demo-1: spaCy tags: 220/220 (100 %)" in ln for ln in lines), res.output
    assert "trained content-scorer on demo:content (2 prompts) in" in res.output
    assert any(ln.startswith("  prompt demo-2: trained on 220") for ln in lines), res.output
    assert '"params"' not in res.output


def test_engine_stages_name_the_run_and_count_records() -> None:
    calls: list[tuple[str, int, int | None]] = []
    hook = engine_stages(lambda s, d, t: calls.append((s, d, t)), "run sent", chunk_size=100, n_records=250)
    hook("fit", 4, None)
    hook("chunk", 1, None)
    hook("generator chunk", 1, 3)
    hook("chunk", 3, None)
    assert calls == [("run sent: records", 0, 250), ("run sent: fitted (attack, prompt)", 4, None),
                     ("run sent: records", 100, 250), ("run sent: generator pieces", 1, 3),
                     ("run sent: records", 250, 250)]
