"""`callbluff suite kumar2020`: the paper's whole protocol as an editable suite TOML (Kumar et al. 2020)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.attacks.base import attack_names
from callbluff.cli import app
from callbluff.engine.suite import load_suite
from callbluff.suites.kumar2020 import (
    PERCENTS,
    POSITIONS,
    kumar2020_suite,
    kumar2020_tables,
    relative_spec,
    write_kumar2020_suite,
)

TABLE1 = {"AddWikiRelated", "AddWikiUnrelated", "RepeatSent", "AddSong", "AddSpeech", "AddRC", "AddTruth",
          "AddLies", "DelStart", "DelEnd", "DelRand", "ModGrammar", "ModFluency", "ModLexicon", "ShuffleSent",
          "BabelGen"}


def configs(doc: dict, name: str) -> list[dict]:
    """Every grid point of every [[attack]] table named ``name``."""
    import itertools

    out = []
    for a in doc["attack"]:
        if a["name"] != name:
            continue
        grid = a.get("grid", {})
        keys = sorted(grid)
        for values in itertools.product(*(grid[k] for k in keys)) if keys else [()]:
            out.append({**a.get("params", {}), **dict(zip(keys, values))})
    return out


def test_suite_has_all_16_attacks_and_the_papers_grid() -> None:
    doc = tomllib.loads(kumar2020_suite())
    assert {a["name"] for a in doc["attack"]} == TABLE1
    assert TABLE1 <= set(attack_names()), f"Table 1 attacks not registered: {sorted(TABLE1 - set(attack_names()))}"
    grid = {(p, pos) for p in PERCENTS for pos in POSITIONS}
    for name in ("AddSong", "AddSpeech", "AddRC", "DelRand"):
        assert {(c["percent"], c["position"]) for c in configs(doc, name)} == grid, name
        assert len(configs(doc, name)) == 12
    for name in ("AddTruth", "AddLies", "AddWikiRelated", "AddWikiUnrelated"):  # bounded and unbounded
        assert {(c["percent"], c["position"], c["bounded"]) for c in configs(doc, name)} == {
            (p, pos, b) for p, pos in grid for b in (False, True)}
    assert sorted((c["mode"], c["count"]) for c in configs(doc, "RepeatSent")) == [
        ("conclusion", 1), ("conclusion", 2), ("introduction", 1), ("introduction", 2),
        ("middle", 1), ("middle", 2), ("middle", 3)]  # the notebook's 7 variants
    assert sorted(c["variant"] for c in configs(doc, "ModGrammar")) == ["errors", "svo"]
    fluency = configs(doc, "ModFluency")
    assert sum(c["mode"] == "fillers" for c in fluency) == 12 and {"mode": "disfluency"} in fluency
    assert configs(doc, "DelStart") == [{}] and configs(doc, "BabelGen") == [{}]
    n = sum(t.configurations() for t in kumar2020_tables())
    assert n == 171 and f"{n} configurations" in kumar2020_suite()
    assert doc["dataset"]["spec"].startswith("asap-aes:") and doc["target"][0]["type"] == "http"


def test_written_suite_loads(tmp_path: Path) -> None:
    suite = load_suite(write_kumar2020_suite(tmp_path / "kumar2020.toml", "demo:essay"))
    assert suite.name == "kumar2020" and suite.dataset.spec == "demo:essay"
    assert sum(len(a.expand()) for a in suite.attack) == 171


def test_relative_spec_rewrites_existing_paths_against_the_suite_dir(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "essays.tsv").write_text("x")
    (tmp_path / "suites").mkdir()
    monkeypatch.chdir(tmp_path)
    assert relative_spec("asap-aes:data/essays.tsv?prompts=1,2", tmp_path / "suites") == \
        "asap-aes:../data/essays.tsv?prompts=1,2"
    assert relative_spec("asap-aes:missing.tsv", tmp_path / "suites") == "asap-aes:missing.tsv"
    assert relative_spec("demo:essay", tmp_path / "suites") == "demo:essay"


def test_cli_writes_the_suite_with_given_data_and_targets(tmp_path: Path) -> None:
    out = tmp_path / "s" / "k.toml"
    r = CliRunner().invoke(app, ["suite", "kumar2020", "--out", str(out), "--data", "demo:essay", "--target",
                                 "http://127.0.0.1:9/score", "--target", "http://127.0.0.1:10/score",
                                 "--seed", "7"])
    assert r.exit_code == 0, r.output
    doc = tomllib.loads(out.read_text())
    assert doc["name"] == "k" and doc["seed"] == 7 and doc["dataset"]["spec"] == "demo:essay"
    assert [(t["name"], t["url"]) for t in doc["target"]] == [("http", "http://127.0.0.1:9/score"),
                                                                ("http-2", "http://127.0.0.1:10/score")]
    assert "16 attacks, 171 configurations" in r.output


def test_cli_bad_target_is_a_usage_error(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["suite", "kumar2020", "--out", str(tmp_path / "k.toml"), "--target", "grpc:x"])
    assert r.exit_code == 2 and "unknown type" in r.output


def test_cli_rewrites_model_paths_relative_to_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "models" / "aes").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "suites" / "k.toml"
    r = CliRunner().invoke(app, ["suite", "kumar2020", "--out", str(out), "--target", "model:models/aes"])
    assert r.exit_code == 0, r.output
    assert tomllib.loads(out.read_text())["target"][0]["path"] == "../models/aes"


def test_suite_on_the_shared_data_gives_addrc_its_passages(tmp_path: Path) -> None:
    """The written suite's dataset, loaded as a run loads it, has the passages of prompts 3-6 (prompts.json beside
    the shared TSV), and the suite says where they come from."""
    from callbluff.datasets import load
    from helpers import shared_path

    tsv = shared_path("data", "asap-aes", "training_set_rel3.tsv.gz")
    shared_path("data", "asap-aes", "prompts.json")
    path = write_kumar2020_suite(tmp_path / "suites" / "k.toml", f"asap-aes:{tsv}?prompts=1,3,5,6")
    assert "prompt_texts=FILE" in path.read_text()
    suite = load_suite(path)
    prompts = load(suite.dataset_spec(), lazy=True).prompts
    assert [p for p, pr in prompts.items() if pr.source] == ["3", "5", "6"]
    assert all(pr.text for pr in prompts.values())

