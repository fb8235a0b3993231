"""``callbluff compare`` answers "is v2 better?": a verdict per target and attack with its test, signed
differences, no figure listed twice, ``--fail-on-regression`` for CI and ``--json`` / ``--csv`` (issue 27).

Real runs: the same suite (twelve demo essays, DelRand 30% and ShuffleSent) against two versions of one HTTP-less
scorer named ``scorer``: v1 scores by length (a deletion lowers the score: robust on DelRand, fooled by
shuffling), v2 scores every essay 4 (never lowered: worse on DelRand, as fooled by shuffling as v1)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.cli.compare import REGRESSION_EXIT
from callbluff.compare import PAIRED_TEST, UNPAIRED_TEST, compare_runs
from callbluff.metrics.significance import holm, mcnemar_exact, wilson_interval
from callbluff.engine.run import RunResult
from helpers.runs import versions_suite


@pytest.fixture(scope="module")
def runs(small_run: Callable[..., RunResult]) -> dict[str, Path]:
    def run(name: str, function: str, seed: int = 1) -> Path:
        return small_run(versions_suite(function, name=name, target="scorer", seed=seed, limit=12)).run_dir

    return {"v1": run("v1", "essay_length_scorer"), "v1-again": run("v1-again", "essay_length_scorer"),
            "v2": run("v2", "constant_scorer"), "v2-seed": run("v2-seed", "constant_scorer", seed=2)}


def test_statistics_helpers() -> None:
    assert mcnemar_exact(0, 8) == pytest.approx(2 * 0.5 ** 8)  # all 8 discordant pairs one way
    assert mcnemar_exact(3, 3) == pytest.approx(1.0) and mcnemar_exact(0, 0) == 1.0
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    lo, hi = wilson_interval(8, 10)  # Wilson (1927): 8 of 10 -> 49.0 % to 94.3 %
    assert (round(lo, 1), round(hi, 1)) == (49.0, 94.3)
    assert all(x != x for x in wilson_interval(0, 0))  # NaN: no trial, no interval


def test_v2_worse_on_one_attack(runs: dict[str, Path]) -> None:
    c = compare_runs([runs["v1"], runs["v2"]])
    by_attack = {v.attack: v for v in c.verdicts}
    delrand, shuffle = by_attack["DelRand"], by_attack["ShuffleSent"]
    assert delrand.verdict == "worse" and delrand.test == PAIRED_TEST
    assert (delrand.baseline_failure_pct, delrand.failure_pct, delrand.difference) == (0.0, 100.0, 100.0)
    assert delrand.n_pairs == 12 and (delrand.fooled_only_column, delrand.fooled_only_baseline) == (12, 0)
    assert delrand.p_adjusted is not None and delrand.p_adjusted < 0.05
    assert shuffle.verdict == "unchanged" and shuffle.p_value == 1.0  # both fooled by every shuffle
    assert c.regressions == [delrand]
    # a figure is listed once: under the "lower" expectation not_lowered_pct is failure_pct again
    metrics = [(d.attack, d.prompt, d.metric) for d in c.differences]
    assert ("DelRand", "demo-essay", "failure_pct") in metrics and ("DelRand", "demo-essay", "not_lowered_pct") not in metrics
    assert len(metrics) == len(set(metrics))


def test_fail_on_regression_exits_non_zero_naming_it(runs: dict[str, Path], tmp_path: Path) -> None:
    args = ["compare", str(runs["v1"]), str(runs["v2"]), "--out", str(tmp_path / "c.html")]
    r = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output  # without the flag a regression is reported, not failed
    assert "worse: 1" in r.output and "regression: v2 / scorer vs v1 / scorer: DelRand (percent=30" in r.output
    assert "+100" in r.output  # signed difference
    r = CliRunner().invoke(app, [*args, "--fail-on-regression"], env={"COLUMNS": "250"})
    assert r.exit_code == REGRESSION_EXIT, r.output
    # the constant scorer also lost its clean QWK beyond the bootstrap interval: a second regression
    assert "2 regression(s) beyond noise" in r.output and "v2 / scorer: DelRand (percent=30" in r.output
    assert "v2 / scorer: clean QWK -" in r.output
    assert "McNemar exact" in r.output  # the test is named
    html = (tmp_path / "c.html").read_text(encoding="utf-8")
    assert '<td class="l worse">worse</td>' in html and '<td class="worse">+100</td>' in html


def test_identical_runs_are_unchanged(runs: dict[str, Path], tmp_path: Path) -> None:
    c = compare_runs([runs["v1"], runs["v1-again"]])
    assert c.verdicts and {v.verdict for v in c.verdicts} == {"unchanged"}
    assert all(v.test == PAIRED_TEST and v.difference == 0 for v in c.verdicts)
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v1-again"]), "--fail-on-regression",
                                 "--out", str(tmp_path / "c.html")], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    assert "worse: 0 · better: 0 · unchanged: 2" in r.output


def test_reversed_order_is_better(runs: dict[str, Path]) -> None:
    c = compare_runs([runs["v2"], runs["v1"]])
    delrand = next(v for v in c.verdicts if v.attack == "DelRand")
    assert delrand.verdict == "better" and delrand.difference == -100.0 and not c.regressions


def test_other_seed_falls_back_to_an_unpaired_test(runs: dict[str, Path]) -> None:
    c = compare_runs([runs["v1"], runs["v2-seed"]])
    delrand = next(v for v in c.verdicts if v.attack == "DelRand")
    assert delrand.test == UNPAIRED_TEST and delrand.verdict == "worse"


def test_json_and_csv_parse(runs: dict[str, Path], tmp_path: Path) -> None:
    j, cs = tmp_path / "c.json", tmp_path / "c.csv"
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v2"]), "--out", str(tmp_path / "c.html"),
                                 "--json", str(j), "--csv", str(cs)], env={"COLUMNS": "250"})
    assert r.exit_code == 0, r.output
    data = json.loads(j.read_text(encoding="utf-8"))
    assert data["counts"] == {"worse": 1, "better": 0, "unchanged": 1, "n/a": 0}
    assert data["regressions"] == [f"{data['columns'][1]}: DelRand percent=30.0"]
    worse = next(v for v in data["verdicts"] if v["verdict"] == "worse")
    assert worse["difference"] == 100.0 and worse["test"] == PAIRED_TEST and worse["p_adjusted"] < 0.05
    assert "McNemar" in data["test"]
    rows = list(csv.DictReader(io.StringIO(cs.read_text(encoding="utf-8"))))
    verdict_rows = [x for x in rows if x["kind"] == "verdict"]
    assert {(x["attack"], x["verdict"]) for x in verdict_rows} == {("DelRand", "worse"), ("ShuffleSent", "unchanged")}
    diff_rows = [x for x in rows if x["kind"] == "difference"]
    assert diff_rows and all(x["verdict"] == "" for x in diff_rows)
    fp = next(x for x in diff_rows if x["attack"] == "DelRand" and x["prompt"] == "demo-essay" and x["metric"] == "failure_pct")
    assert float(fp["difference"]) == 100.0 and float(fp["baseline_value"]) == 0.0


def test_a_bad_alpha_is_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["compare", str(runs["v1"]), str(runs["v2"]), "--alpha", "1.5", "--out",
                                 str(tmp_path / "c.html")], env={"COLUMNS": "250"})
    assert r.exit_code == 2 and "alpha must be between 0 and 1" in r.output, r.output
    assert not (tmp_path / "c.html").exists()
