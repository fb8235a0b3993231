"""User text (suite, target and prompt names, data values, file paths, error causes) reaches the terminal
verbatim: never as rich markup (issue 28, defect 3), whatever brackets it holds."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from callbluff.cli import app

runner = CliRunner()

SUITE = """
name = "{suite}"
seed = 1
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "{target}"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[[expect]]
attack = "clean"
metric = "qwk"
min = -1
[output]
chunk_size = 8
"""


def _data(path: Path, prompts: tuple[str, ...]) -> Path:
    rows = [{"id": f"r{i}", "prompt_id": prompts[i % len(prompts)],
             "text": f"panda bamboo koala eat number {i}.", "score": i % 4} for i in range(16)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _wide() -> dict[str, str]:
    return {"COLUMNS": "400"}


def test_bracketed_names_run_and_report_verbatim(tmp_path: Path) -> None:
    """``[/]`` closed no tag (MarkupError, exit 1 after a finished run); ``[large]`` was eaten as a style."""
    data = _data(tmp_path / "d[x].jsonl", ("p[/]1", "q[big]"))
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE.format(suite="x[/]y", data=data, target="model[large]"), encoding="utf-8")
    out = tmp_path / "run[1]"
    res = runner.invoke(app, ["run", str(suite), "--out", str(out), "--quiet"], env=_wide())
    assert res.exit_code == 0, res.output
    for name in ("x[/]y", "model[large]", "p[/]1", "q[big]", str(out)):
        assert name in res.output, (name, res.output)
    res = runner.invoke(app, ["report", str(out)], env=_wide())
    assert res.exit_code == 0, res.output
    for name in ("x[/]y", "model[large]", "p[/]1", "q[big]"):
        assert name in res.output, (name, res.output)


def test_error_names_the_bracketed_file(tmp_path: Path) -> None:
    """An error message names the file the user gave, brackets and all (``[bold]`` was a style before)."""
    suite = tmp_path / "[bold]suite[red].toml"
    suite.write_text("name = ", encoding="utf-8")
    res = runner.invoke(app, ["run", str(suite), "--out", str(tmp_path / "run")], env=_wide())
    assert res.exit_code == 2, res.output
    assert "[bold]suite[red].toml" in res.output, res.output
    assert "error:" in res.output


def test_progress_bars_show_stage_names_verbatim() -> None:
    """A stage named after data (``callbluff train``: a prompt id) is no markup on a terminal's bars either."""
    import io

    from rich.console import Console

    from callbluff.terminal import StageProgress, elapsed

    buf = io.StringIO()
    term = Console(file=buf, force_terminal=True, width=200, color_system=None)
    with StageProgress(term, overall=("prompt x[/]y",)) as progress:
        progress("prompt x[/]y", 1, 2)
        progress("model[large]: fit", 1, 1)
        progress("prompt x[/]y", 2, 2)
    with elapsed(term, "loading q[/]r"):
        pass
    text = buf.getvalue()
    assert "prompt x[/]y" in text and "model[large]: fit" in text
