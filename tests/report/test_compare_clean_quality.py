"""Issue 40, item 7: ``compare`` has a clean-quality verdict (QWK and MAE with a bootstrap interval), so a v2 that
scores everything lower, and is therefore fooled no more often by the attacks, fails ``--fail-on-regression``.

Real runs of one suite (120 short answers on two prompts, 0-3, Shuffle) against three versions of a scorer named
``scorer``: v1 counts the rubric keywords the gold scores count (QWK 1), v1-again is the same, v2 gives one point
less to every answer (floored at 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.cli.compare import REGRESSION_EXIT
from callbluff.compare import compare_runs, fast_qwk
from callbluff.api import run_suite
from callbluff.metrics.scoring import qwk
from callbluff.targets.base import Input
from helpers.data import write_answers

KEYS = ("panda", "bamboo", "koala", "eucalyptus")


def v1(inp: Input) -> float:
    """The gold rule: rubric keywords present, at most 3."""
    return float(min(3, sum(w in inp.text for w in KEYS)))


def v2(inp: Input) -> float:
    """One point less for every answer."""
    return max(0.0, v1(inp) - 1.0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("clean")
    data = write_answers(root / "answers.jsonl", n=120)
    suite = {"name": "versions", "seed": 2, "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
             "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}],
             "output": {"chunk_size": 60, "report": False}}
    from callbluff.targets.callables import CallableTarget

    out = {}
    for name, fn in (("v1", v1), ("v1-again", v1), ("v2", v2)):
        out[name] = root / name
        run_suite({**suite, "name": name}, out[name],
                  targets={"scorer": CallableTarget(fn, name="scorer", pass_input=True)})
    return out


def test_fast_qwk_is_the_metric() -> None:
    gold, pred = [0, 1, 2, 3, 3, 2, 1, 0, 2], [0, 2, 2, 3, 1, 2, 0, 0, 3.6]
    assert fast_qwk(gold, pred, 0, 3) == pytest.approx(qwk(gold, pred, score_min=0, score_max=3))
    assert fast_qwk([2, 2], [2, 2], 0, 3) == 1.0


def test_a_v2_that_scores_everything_lower_fails_on_its_clean_qwk(runs: dict[str, Path], tmp_path: Path) -> None:
    c = compare_runs([runs["v1"], runs["v2"]])
    q = next(v for v in c.clean if v.metric == "qwk")
    assert q.baseline_value == pytest.approx(1.0) and q.value < 0.9 and q.paired and q.n == 120
    assert q.high is not None and q.high < 0 and q.verdict == "worse"
    mae = next(v for v in c.clean if v.metric == "mae_pct")
    assert mae.verdict == "worse" and mae.low is not None and mae.low > 0
    assert not c.regressions  # the attack verdicts alone would pass it
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v2"]), "--out", str(tmp_path / "c.html"),
                                 "--fail-on-regression", "--json", str(tmp_path / "c.json")])
    assert r.exit_code == REGRESSION_EXIT, r.output
    assert "clean quality: scorer vs scorer" not in r.output or "worse" in r.output
    assert "clean QWK" in r.output and "regression(s) beyond noise" in r.output
    assert json.loads((tmp_path / "c.json").read_text())["clean"][0]["verdict"] == "worse"
    assert "Clean quality" in (tmp_path / "c.html").read_text()


def test_the_same_scorer_again_is_unchanged_and_passes(runs: dict[str, Path], tmp_path: Path) -> None:
    c = compare_runs([runs["v1"], runs["v1-again"]])
    assert {v.verdict for v in c.clean} == {"unchanged"}
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v1-again"]), "--out", str(tmp_path / "c.html"),
                                 "--fail-on-regression"])
    assert r.exit_code == 0, r.output


def test_compare_without_out_writes_beside_the_baseline_not_into_the_current_directory(
        runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 40, item 16."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v1-again"])])
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "compare.html").exists()
    assert (runs["v1"] / "compare.html").is_file() and f"comparison: {runs['v1'] / 'compare.html'}" in r.output
