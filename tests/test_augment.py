"""Adversarial training rows (Kumar et al. 2020 Sec. 4.2): score = original - penalty, clipped; provenance."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.countermeasures.augment import Penalties, augment_rows, configs_from, read_penalties, training_score
from callbluff.attacks.base import get_attack
from callbluff.cli import app
from callbluff.datasets import load
from callbluff.records import Prompt


def test_training_score_points_percent_clipping_and_expectations() -> None:
    p = Prompt("1", "essay", score_min=2, score_max=12)
    delrand = get_attack("DelRand")()
    assert training_score(delrand, 8.0, p, Penalties({"DelRand": 2})) == 6.0
    assert training_score(delrand, 3.0, p, Penalties({"delrand": 2})) == 2.0  # clipped to the scale
    assert training_score(delrand, 8.0, p, Penalties({}, default=25, unit="percent")) == 5.5  # 25% of 10
    assert training_score(get_attack("BabelGen")(), None, p, Penalties({})) == 2.0  # expect bottom
    assert training_score(delrand, None, p, Penalties({"DelRand": 2})) is None
    with pytest.raises(ValueError, match="no penalty for attack DelRand"):
        Penalties({}).of("DelRand")


def test_rows_are_deterministic_parallel_and_traced(tmp_path: Path) -> None:
    ds = load("demo:essay")
    configs = [("DelRand", {"percent": 25}), ("ShuffleSent", {}), ("BabelGen", {"count": 2})]
    pen = Penalties({"DelRand": 1.5, "ShuffleSent": 1})
    errors: list[dict] = []
    one = list(augment_rows(ds, configs, pen, seed=4, limit=10, errors=errors))
    two = list(augment_rows(ds, configs, pen, seed=4, limit=10, workers=2, chunk_size=3))
    assert one == two and not errors
    gold = {r.id: r.gold for r in list(ds)[:10]}
    by_attack = {a: [r for r in one if r["attack"] == a] for a in ("DelRand", "ShuffleSent", "BabelGen")}
    assert len(by_attack["DelRand"]) == 10 and len(by_attack["BabelGen"]) == 2
    for r in by_attack["DelRand"]:
        assert r["original_score"] == gold[r["source_id"]] and r["penalty"] == 1.5
        assert r["score"] == max(1.0, gold[r["source_id"]] - 1.5)
        assert r["params"]["percent"] == 25 and r["id"].startswith(r["source_id"] + "~DelRand~")
        assert r["text"] != next(x.text for x in ds if x.id == r["source_id"])
    for r in by_attack["BabelGen"]:
        assert r["score"] == 1.0 and r["source_id"] == "prompt:demo-essay" and r["original_score"] is None
    assert set(one[0]) >= {"id", "prompt_id", "text", "score", "source_id", "attack", "params"}
    other = list(augment_rows(ds, configs, pen, seed=5, limit=10))
    assert [r["text"] for r in other] != [r["text"] for r in one]


def test_missing_penalty_and_wrong_task_are_refused_before_any_work() -> None:
    ds = load("demo:essay")
    with pytest.raises(ValueError, match="no penalty for attack ShuffleSent"):
        next(augment_rows(ds, [("ShuffleSent", {})], Penalties({})))
    with pytest.raises(ValueError, match="task"):
        next(augment_rows(load("demo:content"), [("ShuffleSent", {})], Penalties({}, default=1)))


def test_penalty_files_and_config_sources(tmp_path: Path) -> None:
    (tmp_path / "p.toml").write_text("[penalty]\nModGrammar = 2\nDelRand = 1.5\n")
    (tmp_path / "p.json").write_text('{"AddSong": 1}')
    (tmp_path / "bad.toml").write_text('ModGrammar = "two"\n')
    assert read_penalties(tmp_path / "p.toml") == {"ModGrammar": 2.0, "DelRand": 1.5}
    assert read_penalties(tmp_path / "p.json") == {"AddSong": 1.0}
    with pytest.raises(ValueError, match="'ModGrammar': penalty must be a number"):
        read_penalties(tmp_path / "bad.toml")
    assert configs_from("DelRand, ShuffleSent") == [("DelRand", {}), ("ShuffleSent", {})]
    (tmp_path / "s.toml").write_text('[dataset]\nspec = "demo:essay"\n[[attack]]\nname = "DelRand"\n'
                                     'grid = { percent = [10, 20] }\n')
    assert configs_from(str(tmp_path / "s.toml")) == [("DelRand", {"percent": 10}), ("DelRand", {"percent": 20})]


def test_cli_augment_writes_json_lines(tmp_path: Path) -> None:
    out = tmp_path / "train.jsonl"
    r = CliRunner().invoke(app, ["augment", "DelRand", "--data", "demo:essay", "--out", str(out), "--penalty",
                                 "DelRand=20", "--unit", "percent", "--limit", "6", "--with-originals"])
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [x["attack"] for x in rows].count("original") == 6 and [x["attack"] for x in rows].count("DelRand") == 6
    for x in rows:
        if x["attack"] == "DelRand":
            assert x["penalty"] == 1.0 and x["score"] == max(1.0, x["original_score"] - 1.0)  # 20% of 1-6
    bad = CliRunner().invoke(app, ["augment", "DelRand", "--data", "demo:essay", "--out", str(out)])
    assert bad.exit_code == 2 and "no penalty for attack DelRand" in bad.output
