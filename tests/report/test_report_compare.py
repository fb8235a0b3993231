"""callbluff compare: two model versions on the same suite, aligned rows, the largest differences first."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.compare import compare_runs
from callbluff.engine.run import RunResult
from helpers.runs import versions_suite


@pytest.fixture(scope="module")
def runs(small_run: Callable[..., RunResult]) -> tuple[Path, Path]:
    """The same suite on two versions of a model: v1 scores every essay 4, v2 scores by length."""
    v1, v2 = (small_run(versions_suite(function, name="cmp", target=name)).run_dir
              for name, function in (("v1", "constant_scorer"), ("v2", "essay_length_scorer")))
    return v1, v2


def test_largest_difference_first(runs: tuple[Path, Path], tmp_path: Path) -> None:
    c = compare_runs(list(runs))
    assert c.columns == [f"{runs[0]} / v1", f"{runs[1]} / v2"]  # same suite name: columns named by directory
    top = c.differences[0]
    # a constant scorer never lowers a score (failure 100%); a length scorer lowers every shortened essay (0%)
    assert (top.attack, top.metric, top.values) == ("DelRand", "failure_pct", (100.0, 0.0))
    shuffle = next(d for d in c.differences if d.attack == "ShuffleSent" and d.metric == "failure_pct")
    assert shuffle.values == (100.0, 100.0) and shuffle.spread == 0.0  # both overstable on shuffling
    spreads = [d.spread for d in c.differences if d.spread is not None]
    assert spreads == sorted(spreads, reverse=True)
    r = CliRunner().invoke(app, ["compare", *map(str, runs), "--out", str(tmp_path / "cmp.html")])
    assert r.exit_code == 0, r.output
    assert "DelRand (percent=30.0), prompt demo-essay: failure_pct" in r.output
    html = (tmp_path / "cmp.html").read_text()
    assert html.index("DelRand") < html.index("ShuffleSent")


def test_one_run_one_target_is_an_error(runs: tuple[Path, Path]) -> None:
    r = CliRunner().invoke(app, ["compare", str(runs[0])])
    assert r.exit_code == 2 and "nothing to compare" in r.output


def test_one_report_for_several_runs(runs: tuple[Path, Path], tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["report", *map(str, runs)])
    assert r.exit_code == 2 and "give --out FILE.html" in r.output
    r = CliRunner().invoke(app, ["report", *map(str, runs), "--out", str(tmp_path / "all.html")])
    assert r.exit_code == 0, r.output
    html = (tmp_path / "all.html").read_text()
    assert "<h2>Overview</h2>" in html and html.count('class="cb-browser"') == 2
    assert 'id="run0-data"' in html and 'id="run1-data"' in html  # one example set per run


def test_report_open_uses_the_browser_or_says_where_the_file_is(runs: tuple[Path, Path],
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    import webbrowser

    opened: list[str] = []
    monkeypatch.setattr(webbrowser, "open", lambda uri: opened.append(uri) or True)
    r = CliRunner().invoke(app, ["report", str(runs[0]), "--open"])
    assert r.exit_code == 0, r.output
    assert opened == [(runs[0] / "report.html").resolve().as_uri()]
    monkeypatch.setattr(webbrowser, "open", lambda uri: False)
    r = CliRunner().invoke(app, ["report", str(runs[0]), "--open"])
    assert r.exit_code == 0 and "no browser found here; open" in r.output
