"""`callbluff demo` works on a machine without ../shared: trains, attacks through the engine, reports, resumes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app


@pytest.mark.slow
def test_demo_end_to_end_and_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CALLBLUFF_SHARED", str(tmp_path / "no-shared-here"))
    out = tmp_path / "demo"
    res = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert res.exit_code == 0, res.output
    for suite in ("content", "essay", "reading"):
        run = out / "runs" / suite
        for name in ("run.json", "examples.parquet", "predictions.sqlite", "metrics.json", "errors.jsonl",
                     "report.html"):
            assert (run / name).exists(), f"{suite}/{name}"
        assert json.loads((run / "run.json").read_text())["status"] == "finished"
    content = json.loads((out / "runs" / "content" / "metrics.json").read_text())
    shuffle_all = next(r for r in content if r["attack"] == "Shuffle" and r["prompt"] == "all")
    assert shuffle_all["n"] > 20 and shuffle_all["arr"] is not None
    clean = [r for r in content if r["attack"] == "clean"]
    assert all(r["qwk"] > 0.5 for r in clean)  # a real, trained scorer
    essay = json.loads((out / "runs" / "essay" / "metrics.json").read_text())
    assert any(r["attack"] == "ShuffleSent" and r["n"] >= 25 for r in essay)
    # a second demo reuses the models and resumes every run: no target is called again
    res2 = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert res2.exit_code == 0, res2.output
    for suite in ("content", "essay", "reading"):
        meta = json.loads((out / "runs" / suite / "run.json").read_text())
        assert meta["resumed"] and all(s["calls"] == 0 for s in meta["target_stats"].values())
