"""Kumar et al. Tables 4-5 from a real run directory (demo essays through the engine, a callable scorer)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.engine.run import RunResult
from callbluff.render.tables import PAIR_FIELDS, kumar_csv, kumar_rows, kumar_tables

SUITE = """
name = "tables"
seed = 3
limit = 24
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelRand"
params = { percent = 25 }
[[attack]]
name = "ShuffleSent"
[[attack]]
name = "BabelGen"
params = { count = 3 }
[output]
chunk_size = 12
report = false
"""


@pytest.fixture(scope="module")
def run_dir(small_run: Callable[..., RunResult]) -> Path:
    """24 demo essays scored by length (the overstable kind Kumar et al. attack): DelRand, ShuffleSent, BabelGen."""
    return small_run(SUITE).run_dir


def test_table5_cells_are_the_metric_rows_rounded(run_dir: Path) -> None:
    rows = json.loads((run_dir / "metrics.json").read_text())
    md = kumar_tables(run_dir)
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| family"))
    assert header == "| family | attack | params | demo-essay |"
    delrand = next(line for line in lines if "| DelRand |" in line)
    shuffle = next(line for line in lines if "| ShuffleSent |" in line)
    assert lines.index(delrand) < lines.index(shuffle)  # delete before modify (Table 1 order)
    r = next(x for x in rows if x["attack"] == "DelRand" and x["prompt"] == "demo-essay")
    cell = "(" + ",".join(str(int(round(r[f]))) for f in PAIR_FIELDS) + ")"
    assert delrand == f"| delete | DelRand | 25% | {cell} |"
    # deleting sentences shortens every essay: a length scorer lowers every score
    assert r["neg_pct"] == 100 and r["not_lowered_pct"] == 0 and cell.startswith("(100,0,")
    s = next(x for x in rows if x["attack"] == "ShuffleSent" and x["prompt"] == "demo-essay")
    assert s["not_lowered_pct"] == 100  # same words, same score: overstable
    assert "| modify | ShuffleSent |" in shuffle and shuffle.endswith("(0,0,0,100) |")


def test_table4_holds_the_generator(run_dir: Path) -> None:
    rows = json.loads((run_dir / "metrics.json").read_text())
    b = next(x for x in rows if x["attack"] == "BabelGen")
    md = kumar_tables(run_dir)
    assert "Table 4 shape" in md
    line = next(line for line in md.splitlines() if line.startswith("| length | BabelGen |"))
    assert line.endswith(f"| {int(round(b['mean_score_pct']))} |")
    assert b["mean_score_pct"] > 20  # length-matched nonsense gets a length scorer's average score
    assert "| BabelGen |" not in md.split("Table 4 shape")[0]


def test_csv_matches_the_tidy_rows(run_dir: Path) -> None:
    tidy = kumar_rows(json.loads((run_dir / "metrics.json").read_text()))
    got = list(csv.DictReader(io.StringIO(kumar_csv(run_dir))))
    assert [(g["attack"], g["family"]) for g in got] == [(t["attack"], t["family"]) for t in tidy]
    assert [g["attack"] for g in got] == ["DelRand", "ShuffleSent", "BabelGen"]
    assert float(got[0]["neg_pct"]) == 100.0 and got[2]["neg_pct"] == ""


def test_cli_report_tables_kumar_writes_markdown_and_csv(run_dir: Path) -> None:
    r = CliRunner().invoke(app, ["report", str(run_dir), "--tables", "kumar"])
    assert r.exit_code == 0, r.output
    assert (run_dir / "kumar_tables.md").read_text() == kumar_tables(run_dir)
    assert (run_dir / "kumar_tables.csv").read_text() == kumar_csv(run_dir)
    bad = CliRunner().invoke(app, ["report", str(run_dir), "--tables", "ding"])
    assert bad.exit_code == 2 and "allowed: kumar" in bad.output


def test_missing_metrics_names_the_fix(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="finish the run first"):
        kumar_tables(tmp_path)
    assert "no essay" in kumar_tables(rows=[{"task": "reading", "attack": "AddSent", "prompt": "all"}])


@pytest.mark.parametrize(("attack", "params", "short"), [
    ("AddLies", {"bounded": False, "column": "text", "percent": 10.0, "position": "end", "split": "entry",
                 "pool": None}, "10% end, unbounded"),
    ("AddSong", '{"bounded": true, "column": "text", "percent": 25.0, "position": "beginning", "split": "line"}',
     "25% beginning, bounded"),
    ("AddSong", {"percent": 15.0, "position": None, "split": "entry"}, "15%, split=entry"),
    ("AddSong", {"bounded": False, "percent": 15.0, "position": "end", "split": "line", "items": 1},
     "1 whole item end"),
    ("AddSpeech", {"bounded": False, "percent": 15.0, "position": "beginning", "items": 2}, "2 whole items beginning"),
    ("RepeatSent", {"count": 2, "mode": "introduction"}, "introduction, 2 sentences"),
    ("ModGrammar", {"percent": 100.0, "position": None, "variant": "svo"}, "svo"),
    ("ModFluency", {"mode": "fillers", "percent": 25.0, "repeat_words": 1}, "fillers, 25%"),
    ("DelStart", {"mode": "keep", "max_k": None}, "series k = 1, 2, ..."),
    ("ShuffleSent", {"min_sentences": 2}, "defaults"),
    ("DelEnd", {"mode": "remove", "max_k": 3}, "remove, max_k=3"),
    ("NotAnAttack", {"x": 1, "percent": 20}, "20%, x=1"),
    ("DelRand", "not json", "not json"),
])
def test_paper_params_short_form(attack: str, params: object, short: str) -> None:
    """The params column reads as the paper names a test case (Kumar et al. Sec. 3.1-3.3): size and position
    first, defaults left out."""
    from callbluff.render.tables import paper_params

    assert paper_params(attack, params) == short
