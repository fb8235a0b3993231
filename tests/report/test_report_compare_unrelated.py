"""``callbluff compare`` of unrelated runs says so (issue 28, defect 17): before, two runs of different tasks,
data and targets compared with exit 0 and "0 aligned figures, 0 differ", as if they agreed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.compare import compare_runs
from callbluff.engine.run import RunResult

ESSAY = """
name = "essays"
seed = 1
limit = 6
[dataset]
spec = "{spec}"
[[target]]
name = "{target}"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "{attack}"
[output]
report = false
"""

CONTENT = """
name = "answers"
seed = 1
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "kw"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
report = false
"""


@pytest.fixture(scope="module")
def runs(small_run: Callable[..., RunResult], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("unrelated")
    answers = d / "answers.jsonl"
    answers.write_text("".join(json.dumps({"id": f"a{i}", "prompt_id": "p", "text": f"panda bamboo {i}.",
                                           "score": i % 4}) + "\n" for i in range(8)), encoding="utf-8")
    essays = d / "essays.jsonl"
    essays.write_text("".join(json.dumps({"id": f"e{i}", "prompt_id": "other", "text": " ".join(f"Sentence {j} says {j * i}." for j in range(4 + i)),
                                          "score": 1 + i % 6}) + "\n" for i in range(6)), encoding="utf-8")
    copy = d / "copy.jsonl"  # other essays under the demo's prompt id: rows line up, the data differ
    copy.write_text(essays.read_text(encoding="utf-8").replace('"other"', '"demo-essay"'), encoding="utf-8")
    return {
        "essay": small_run(ESSAY.format(spec="demo:essay", target="len", attack="DelRand")).run_dir,
        "essay_other": small_run(ESSAY.format(spec=f"jsonl:{essays}?task=essay&score_min=1&score_max=6",
                                              target="other", attack="ShuffleSent")).run_dir,
        "content": small_run(CONTENT.format(data=answers)).run_dir,
        "essay_copy": small_run(ESSAY.format(spec=f"jsonl:{copy}?task=essay&score_min=1&score_max=6",
                                             target="copy", attack="DelRand")).run_dir,
    }


def test_runs_of_different_tasks_are_refused(runs: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="task"):
        compare_runs([runs["essay"], runs["content"]])
    r = CliRunner().invoke(app, ["compare", str(runs["essay"]), str(runs["content"]), "--out",
                                 str(tmp_path / "c.html")], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "task essay" in r.output and "task content" in r.output, r.output
    assert not (tmp_path / "c.html").exists()


def test_runs_without_a_common_row_say_nothing_is_comparable(runs: dict[str, Path], tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["compare", str(runs["essay"]), str(runs["essay_other"]), "--out",
                                 str(tmp_path / "c.html")], env={"COLUMNS": "300"})
    assert r.exit_code == 2, r.output
    assert "nothing comparable" in r.output and "0 differ" not in r.output, r.output
    assert "DelRand" in r.output and "ShuffleSent" in r.output  # what each run has, so the user sees why


def test_runs_on_different_data_compare_with_a_note(runs: dict[str, Path], tmp_path: Path) -> None:
    c = compare_runs([runs["essay"], runs["essay_copy"]])
    assert any(d.attack == "DelRand" and d.complete for d in c.differences)
    assert c.notes and "different data" in c.notes[0]
    r = CliRunner().invoke(app, ["compare", str(runs["essay"]), str(runs["essay_copy"]), "--out",
                                 str(tmp_path / "c.html")], env={"COLUMNS": "300"})
    assert r.exit_code == 0, r.output
    assert "note: the runs used different data (demo:essay, jsonl:" in r.output
