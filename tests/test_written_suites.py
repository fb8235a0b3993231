"""Issue 40, item 14: a written suite's comments agree with what callbluff says (the --out of its header, what
``limit`` takes) and a target from ``--target model:DIR`` is named after its directory."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app


@pytest.mark.parametrize("kind", ["kumar2020", "llm-grader"])
def test_the_header_and_the_cli_name_the_same_command(kind: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "models" / "aes").mkdir(parents=True)
    extra = ["--target", "model:models/aes"] if kind == "kumar2020" else []
    r = CliRunner().invoke(app, ["suite", kind, "--out", "suites/mine.toml", *extra])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "suites" / "mine.toml").read_text(encoding="utf-8")
    command = "callbluff run suites/mine.toml --out runs/mine"
    assert f"#   {command}" in text and f"`{command}`" in " ".join(r.output.split())
    assert "first N" not in text and "taken across the prompts" in text
    if kind == "kumar2020":
        assert [t["name"] for t in tomllib.loads(text)["target"]] == ["aes"]
