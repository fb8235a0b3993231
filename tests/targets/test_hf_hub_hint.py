"""Issue 40, item 11: ``--target hf:owner/name`` (a Hub id, not a directory) says that hub ids are not fetched and
how to point at a downloaded directory, naming a copy already in the Hugging Face cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.resources.hf_models import check_model_dir


def test_a_hub_id_is_named_with_how_to_download_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    r = CliRunner().invoke(app, ["evaluate", "--target", "hf:deepset/roberta-base-squad2", "--data", "demo:squad"])
    assert r.exit_code == 2
    text = " ".join(r.output.split())
    assert "'deepset/roberta-base-squad2' looks like a Hugging Face Hub id: callbluff does not download models" in text
    assert "huggingface-cli download deepset/roberta-base-squad2 --local-dir models/roberta-base-squad2" in text
    assert "hf:models/roberta-base-squad2" in text


def test_a_copy_in_the_hub_cache_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    snap = tmp_path / "hub" / "models--deepset--roberta-base-squad2" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(FileNotFoundError, match=rf"a downloaded copy is in the Hugging Face cache: hf:{snap}"):
        check_model_dir(tmp_path / "deepset" / "roberta-base-squad2")


def test_a_plain_missing_directory_gets_no_hub_hint(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    with pytest.raises(FileNotFoundError) as e:
        check_model_dir(tmp_path / "models" / "reader")
    assert "Hub id" not in str(e.value)
