"""Issue 40, item 4: a wrong data path in a suite names the folder the path was resolved against (the suite's
folder), not the current directory."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.datasets import DataError, load


def test_a_suites_relative_data_path_names_the_suites_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    suites = tmp_path / "suites"
    (suites / "data").mkdir(parents=True)
    (suites / "s.toml").write_text('name = "x"\n[dataset]\nspec = "asap-sas:data/train.tsv"\n', encoding="utf-8")
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    r = CliRunner().invoke(app, ["run", str(suites / "s.toml"), "--out", str(tmp_path / "run")])
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert f"looked in {suites / 'data'}, which has no train.tsv" in text
    assert f"resolved against the suite's folder {suites}" in text and "relative path data/train.tsv" in text
    assert str(elsewhere) not in text  # the current directory played no part


def test_missing_folders_and_relative_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(DataError, match=rf"looked for it under {tmp_path}: a/b is not there"):
        load(f"asap-sas:{tmp_path / 'a' / 'b' / 'train.tsv'}")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(DataError, match=rf"resolved against the current directory {os.getcwd()}"):
        load("asap-sas:nowhere/train.tsv")
