"""The `callbluff` command as a user runs it (Typer's runner, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app

runner = CliRunner()


@pytest.mark.parametrize("command", ["", "list", "generate", "run", "evaluate", "report", "train", "demo"])
def test_help_everywhere(command: str) -> None:
    args = [command, "--help"] if command else ["--help"]
    res = runner.invoke(app, args)
    assert res.exit_code == 0, (args, res.output)  # asking for help is a success, not a usage error
    assert "Usage" in res.output and "--help" in res.output


def test_bare_command_shows_usage_as_a_usage_error() -> None:
    # no command at all: the usage is printed, and the exit code is Click's usage-error code 2
    res = runner.invoke(app, [])
    assert res.exit_code == 2 and "Usage" in res.output and "run" in res.output


def test_list_names_attacks_and_papers() -> None:
    res = runner.invoke(app, ["list"])
    assert res.exit_code == 0
    assert "ShuffleSent" in res.output and "Kumar" in res.output
    assert "Shuffle" in res.output and "Ding" in res.output


def _answers(tmp_path: Path) -> Path:
    p = tmp_path / "a.jsonl"
    rows = [{"id": f"r{i}", "prompt_id": "p", "text": f"pandas eat bamboo every day number {i}.", "score": i % 3}
            for i in range(30)]
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def test_generate_twice_byte_identical_and_traceable(tmp_path: Path) -> None:
    data = f"jsonl:{_answers(tmp_path)}?task=content&score_min=0&score_max=2"
    outs = []
    for i, workers in enumerate((1, 2)):
        out = tmp_path / f"x{i}.jsonl"
        res = runner.invoke(app, ["generate", "--attack", "Shuffle", "--data", data, "--out", str(out),
                                  "--seed", "7", "--workers", str(workers), "--param", "tokenizer=whitespace"])
        assert res.exit_code == 0, res.output
        outs.append(out.read_bytes())
    assert outs[0] == outs[1]
    lines = [json.loads(line) for line in outs[0].decode().splitlines()]
    assert len(lines) == 10  # the answers scored 2 (top of the 0-2 scale)
    assert all(x["source_id"] == x["id"].split("~")[0] and x["attack"] == "Shuffle" for x in lines)
    assert all(x["params"] == {"min_score": None, "tokenizer": "whitespace"} for x in lines)


@pytest.mark.parametrize("args, message", [
    (["--attack", "Nope", "--data", "jsonl:x.jsonl"], "unknown attack 'Nope'"),
    (["--attack", "Shuffle", "--data", "jsonl:/nonexistent.jsonl"], "not found"),
    (["--attack", "Shuffle", "--data", "jsonl:x", "--param", "tokenizer"], "expected key=value"),
    (["--attack", "Shuffle", "--data", "jsonl:x", "--param", "colour=red"], "colour"),
])
def test_generate_errors_are_clear(tmp_path: Path, args: list[str], message: str) -> None:
    res = runner.invoke(app, ["generate", *args, "--out", str(tmp_path / "o.jsonl")])
    assert res.exit_code == 2
    assert message in res.output


def test_generate_rejects_task_mismatch(tmp_path: Path) -> None:
    data = f"jsonl:{_answers(tmp_path)}?task=content&score_min=0&score_max=2"
    res = runner.invoke(app, ["generate", "--attack", "ShuffleSent", "--data", data, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "task 'essay'" in res.output


def test_report_on_non_run_dir(tmp_path: Path) -> None:
    res = runner.invoke(app, ["report", str(tmp_path)])
    assert res.exit_code == 2 and "not a run directory" in res.output


def test_train_then_evaluate_a_reader(tmp_path: Path) -> None:
    model = tmp_path / "swqa"
    res = runner.invoke(app, ["train", "sliding-window-qa", "--data", "demo:squad", "--out", str(model)])
    assert res.exit_code == 0, res.output
    assert json.loads((model / "model.json").read_text())["kind"] == "sliding-window-qa"
    res = runner.invoke(app, ["evaluate", "--target", f"model:{model}", "--data", "demo:squad",
                              "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    [row] = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert row["attack"] == "clean" and row["n"] == 30 and 0 < row["f1"] <= 100
    assert "headline: swqa: EM " in res.output and "F1 " in res.output  # the reader's own figures, named after its directory


def test_train_rejects_unknown_kind_and_prompt(tmp_path: Path) -> None:
    res = runner.invoke(app, ["train", "gpt-scorer", "--data", "demo:content", "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "allowed" in res.output
    res = runner.invoke(app, ["train", "content-scorer", "--data", "demo:content", "--out", str(tmp_path / "m"),
                              "--prompt", "nope"])
    assert res.exit_code == 2 and "unknown prompt(s) nope" in res.output
    res = runner.invoke(app, ["train", "content-scorer", "--data", "demo:squad", "--out", str(tmp_path / "m")])
    assert res.exit_code == 2 and "trains on scored responses (content, essay data)" in res.output  # the tasks' own


def test_train_with_eval_stores_held_out_figures(tmp_path: Path) -> None:
    model = tmp_path / "cs"
    res = runner.invoke(app, ["train", "content-scorer", "--data", "demo:content?split=train", "--out", str(model),
                              "--prompt", "demo-1", "--param", "C_grid=[0.01,0.1]",
                              "--eval", "demo:content?split=test"])
    assert res.exit_code == 0, res.output
    metrics = json.loads((model / "model.json").read_text())["metrics"]
    assert metrics["eval_data"] == "demo:content?split=test"
    # only the trained prompt is measured (demo-2 would be a row of errors), through the engine's clean rows
    [row] = metrics["eval_rows"]
    assert row["prompt"] == "demo-1" and row["attack"] == "clean" and row["n"] > 0 and row["n_errors_original"] == 0
    assert metrics["demo-1"]["eval_qwk"] == round(row["qwk"], 4) == metrics["eval_mean_qwk"]
    assert metrics["eval_mean_qwk"] > 0.3 and "cv_qwk" in metrics["demo-1"]
    res = runner.invoke(app, ["train", "content-scorer", "--data", "demo:content?split=train", "--out",
                              str(tmp_path / "cs2"), "--prompt", "demo-1", "--eval", "demo:nothing"])
    assert res.exit_code == 2 and "demo:nothing" in res.output
    assert not (tmp_path / "cs2").exists()  # checked before training, nothing saved


@pytest.mark.parametrize("command", ["run", "report", "evaluate"])
def test_help_shows_the_expect_table_name_literally(command: str) -> None:
    """Typer renders help through rich markup, where ``[expect]`` is a style tag: unescaped, the help said
    "check their [] gates". The suite key must appear as users write it."""
    res = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "[[expect]]" in res.output
    assert "[]" not in res.output


def test_version_and_one_attacks_card() -> None:
    from callbluff import __version__

    res = runner.invoke(app, ["--version"])
    assert res.exit_code == 0 and res.output.strip() == f"callbluff {__version__}"
    res = runner.invoke(app, ["list", "AddSong"])
    assert res.exit_code == 0, res.output
    for text in ("Kumar et al. 2020", "expect: lower", "percent", "15.0", "items", "'entry' | 'sentence' | 'line'"):
        assert text in res.output, text
    res = runner.invoke(app, ["list", "NoSuchAttack"])
    assert res.exit_code == 2 and "unknown attack" in res.output


def test_list_with_a_task_that_is_not_one_says_so() -> None:
    res = runner.invoke(app, ["list", "--task", "scoring"])
    assert res.exit_code == 2 and "content, essay, questions, reading" in res.output
    res = runner.invoke(app, ["list", "--task", "content"])
    assert res.exit_code == 0 and "RandomChars" in res.output and "AddSong" not in res.output


FLAKY = '''
def score(text):
    if "number 1" in text:  # r1, r10-r19: 11 of 30 fail with one cause
        raise RuntimeError("model server overloaded")
    return 0
'''


def test_evaluate_keeps_nothing_unless_asked_and_prints_the_task_figures_and_the_causes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "flaky_scorer.py").write_text(FLAKY)
    data = f"jsonl:{_answers(tmp_path)}?task=content&score_min=0&score_max=2"
    res = runner.invoke(app, ["evaluate", "--target", "callable:flaky_scorer:score", "--data", data])
    assert res.exit_code == 0, res.output  # 11 of 30 failed: under --max-error-rate
    assert "run directory" not in res.output and "errors.jsonl" not in res.output and str(temp) not in res.output
    assert not list(temp.iterdir())  # the temporary run directory is gone: no path into it was printed
    assert "11 x callable: RuntimeError: model server overloaded" in res.output, res.output
    # QWK, and Ding et al.'s ARR over the valid answers whose gold is the minimum (r0, r3, ... r27 but r12, r15
    # and r18, which failed): a constant 0 rejects them all
    assert "headline: callable: QWK" in res.output and "ARR on the 7 answers whose gold is the minimum 100%" \
        in res.output.replace("\n", " "), res.output
    res = runner.invoke(app, ["evaluate", "--target", "callable:flaky_scorer:score", "--data", data, "--keep",
                              "--max-error-rate", "0.1"])
    assert res.exit_code == 1, res.output
    [kept] = list(temp.iterdir())
    assert (kept / "report.html").exists() and (kept / "errors.jsonl").exists()
    assert f"run directory: {kept}" in res.output.replace("\n", "") and "see errors.jsonl" in res.output


def test_evaluate_on_a_set_of_bluffs_gives_arr_not_qwk(tmp_path: Path) -> None:
    p = tmp_path / "bluffs.jsonl"
    p.write_text("".join(json.dumps({"id": f"b{i}", "prompt_id": "p", "text": f"bamboo bamboo {i}", "score": 0})
                         + "\n" for i in range(20)))
    res = runner.invoke(app, ["evaluate", "--target", "callable:helpers.scorers:length_scorer", "--data",
                              f"jsonl:{p}?task=content&score_min=0&score_max=3", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    out = " ".join(res.output.split())
    assert "ARR (answers scored at the scale's minimum; 100% is ideal)" in out
    assert "QWK undefined: every gold score is the minimum (a set of bluffs)" in out
    assert f"run directory: {tmp_path / 'run'} (report: {tmp_path / 'run' / 'report.html'})" in out


def test_a_function_is_a_target_from_python(tmp_path: Path) -> None:
    from callbluff.api import run_suite
    from callbluff.engine.suite import SuiteError

    def my_scorer(text: str) -> float:
        return min(2, len(text.split()) // 4)

    suite = {"name": "notebook", "dataset": {"spec": f"jsonl:{_answers(tmp_path)}?task=content&score_min=0&score_max=2"},
             "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}], "output": {"report": False}}
    result = run_suite(suite, tmp_path / "run", targets={"mine": my_scorer})
    assert {r["target"] for r in result.metrics} == {"mine"}
    assert result.counts["per_target"]["mine"]["original_ok"] == 30
    assert result.predictions["mine"]["asked"] > 0
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["targets"]["mine"]["type"] == "python" and "my_scorer" in meta["targets"]["mine"]["fingerprint"]
    with pytest.raises(SuiteError, match=r"pass the function itself as run_suite\(suite, out_dir, targets="):
        run_suite({**suite, "target": [{"name": "x", "type": "callable", "function": my_scorer}]}, tmp_path / "r2")
    with pytest.raises(SuiteError, match="neither a Target"):
        run_suite(suite, tmp_path / "r3", targets={"mine": 42})
