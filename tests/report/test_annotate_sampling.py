"""Issue 40, item 2: an annotation sheet from a run with many attack configurations covers the attacks, not the
first configurations in name order, and says what it covers."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.annotate import export_sheet
from callbluff.cli import app
from callbluff.engine.run import RunResult

ATTACKS = ("DelEnd", "DelRand", "DelStart", "RepeatSent", "ShuffleSent")
MANY = """
name = "many-configurations"
seed = 2
limit = 8
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelEnd"
grid = { max_k = [1, 2, 3, 4, 5, 6], mode = ["keep", "remove"] }
[[attack]]
name = "DelRand"
grid = { percent = [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40] }
[[attack]]
name = "DelStart"
grid = { max_k = [1, 2, 3], mode = ["keep", "remove"] }
[[attack]]
name = "RepeatSent"
[[attack]]
name = "ShuffleSent"
[output]
chunk_size = 8
report = false
"""
"""40 configurations of five attacks: the first 20 in name order are all DelEnd and DelRand."""


@pytest.fixture(scope="module")
def many(small_run: Callable[..., RunResult]) -> Path:
    return small_run(MANY).run_dir


def _attacks_of(run_dir: Path, sheet: str) -> Counter[str]:
    import json

    key = json.loads((run_dir / "annotations" / f"{sheet}.key.json").read_text(encoding="utf-8"))
    return Counter(item["attack"] for item in key["items"].values())


@pytest.mark.parametrize("n", [20, 3])
def test_a_sample_covers_min_n_attacks(many: Path, tmp_path: Path, n: int) -> None:
    ex = export_sheet(many, "scoring", n, tmp_path / "sheet.csv", seed=1)
    per_attack = _attacks_of(many, ex.sheet)
    assert ex.n == n and sum(per_attack.values()) == n
    assert len(per_attack) >= min(n, len(ATTACKS)), per_attack
    assert max(per_attack.values()) - min(per_attack.values()) <= 1  # n // attacks each, or one more
    assert ex.covers.startswith(f"{n} items: {len(per_attack)} of {len(ATTACKS)} attacks")


def test_an_attack_spreads_over_its_configurations_and_the_cli_says_what_the_sheet_covers(
        many: Path, tmp_path: Path) -> None:
    import json

    r = CliRunner().invoke(app, ["annotate", "export", str(many), "--kind", "scoring", "--n", "20",
                                 "--out", str(tmp_path / "s.csv"), "--seed", "4"])
    assert r.exit_code == 0, r.output
    assert "20 items: 5 of 5 attacks (4 items each)" in r.output
    sheet = re.search(r"sheet (\S+): 20 items", r.output).group(1)
    key = many / "annotations" / f"{sheet}.key.json"
    items = json.loads(key.read_text(encoding="utf-8"))["items"].values()
    delrand = [i["params"] for i in items if i["attack"] == "DelRand"]
    assert len(delrand) == 4 and len(set(delrand)) == 4  # four DelRand items, four different configurations


def test_fewer_items_than_attacks_draw_the_attacks_by_seed_not_by_name(many: Path, tmp_path: Path) -> None:
    drawn = {frozenset(_attacks_of(many, export_sheet(many, "scoring", 2, tmp_path / f"{s}.csv", seed=s).sheet))
             for s in range(6)}
    assert len(drawn) > 1  # not always the same two (the alphabetically first) attacks
    ex = export_sheet(many, "scoring", 2, tmp_path / "x.csv", seed=0)
    assert "not in the sample:" in ex.covers and "a larger --n covers them" in ex.covers
