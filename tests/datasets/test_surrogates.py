"""A lone UTF-16 surrogate (``"\\ud800"``: valid JSON, not text) is refused by the loaders with the file, the
line and the key (issue 28, defect 7); before, it passed the loader and the run crashed later with a raw
"'utf-8' codec can't encode" naming no file or line. A surrogate pair (an emoji) is text and loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.datasets import DataError, load

GOOD = {"id": "a", "prompt_id": "p", "text": "pandas eat bamboo.", "score": 1}


def _jsonl(path: Path, bad_text: str) -> Path:
    rows = [json.dumps(GOOD), json.dumps({**GOOD, "id": "b", "text": bad_text}), json.dumps({**GOOD, "id": "c"})]
    path.write_text("\n".join(rows) + "\n", encoding="ascii")  # json.dumps writes \ud800 as an escape
    return path


def test_jsonl_lone_surrogate_names_file_line_and_key(tmp_path: Path) -> None:
    p = _jsonl(tmp_path / "d.jsonl", "half an emoji \ud83d here")
    with pytest.raises(DataError) as info:
        list(load(f"jsonl:{p}?task=content&score_min=0&score_max=3"))
    e = info.value
    assert str(p) in str(e) and "line 2" in str(e) and "'text'" in str(e) and "surrogate" in str(e)
    assert "Fix:" in str(e)
    assert e.line == 2 and e.key == "text"


def test_json_rows_lone_surrogate_names_line_and_key(tmp_path: Path) -> None:
    p = tmp_path / "d.json"
    p.write_text(json.dumps([GOOD, {**GOOD, "id": "b", "prompt_id": "p\udfff"}], indent=1), encoding="ascii")
    with pytest.raises(DataError) as info:
        list(load(f"json:{p}?task=content&score_min=0&score_max=3"))
    assert str(p) in str(info.value) and "[1].prompt_id" in str(info.value)
    assert info.value.line == 10  # the line of "prompt_id": "p\\udfff"


def test_surrogate_pair_is_text(tmp_path: Path) -> None:
    p = _jsonl(tmp_path / "d.jsonl", "a panda \ud83d\udc3c eats")
    assert "\U0001F43C" in [r.text for r in load(f"jsonl:{p}?task=content&score_min=0&score_max=3")][1]


def test_run_with_lone_surrogate_exits_2_naming_the_file(tmp_path: Path) -> None:
    p = _jsonl(tmp_path / "d.jsonl", "bad \ud800 text")
    suite = tmp_path / "suite.toml"
    suite.write_text(f"""name = "s"
[dataset]
spec = "jsonl:{p}?task=content&score_min=0&score_max=3"
[[target]]
name = "t"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
""", encoding="utf-8")
    res = CliRunner().invoke(app, ["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"],
                             env={"COLUMNS": "300"})
    assert res.exit_code == 2, (res.output, res.exception)
    assert str(p) in res.output and "line 2" in res.output and "surrogate" in res.output
