"""Names in the report's charts are text, never matplotlib mathtext (issue 28, defect 6): a target named with
``$...$`` made ``run`` exit 2 with a ParseFatalException and no report.html, and ``report`` crash."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.render.plots import bar_svg

runner = CliRunner()

TARGETS = ("cost $\\frac{$ model", "b $x^2$ [/]")

SUITE = """
name = "maths $\\\\alpha$"
seed = 5
limit = 8
[dataset]
spec = "demo:essay"
[[target]]
name = '{a}'
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[target]]
name = '{b}'
type = "callable"
function = "helpers.scorers:constant_scorer"
[[attack]]
name = "DelRand"
params = {{ percent = 25 }}
[output]
chunk_size = 8
"""


def test_dollar_names_render_as_written(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(a=TARGETS[0], b=TARGETS[1]), encoding="utf-8")
    out = tmp_path / "run"
    res = runner.invoke(app, ["run", str(suite), "--out", str(out), "--quiet"], env={"COLUMNS": "300"})
    assert res.exit_code == 0, (res.output, res.exception)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "b $x^2$ [/]" in page and "cost $\\frac{$ model" in page
    (out / "report.html").unlink()
    res = runner.invoke(app, ["report", str(out)], env={"COLUMNS": "300"})
    assert res.exit_code == 0, (res.output, res.exception)
    assert (out / "report.html").is_file()


def test_bar_svg_keeps_every_label_verbatim() -> None:
    svg = bar_svg(["$\\frac{$ cat"], {"$x^2$": [10.0], "s $\\alpha$": [None]}, ylabel="$y$ label",
                  title="t $\\beta$")
    for text in ("$\\frac{$ cat", "$x^2$", "s $\\alpha$", "$y$ label", "t $\\beta$"):
        assert text in svg, text
