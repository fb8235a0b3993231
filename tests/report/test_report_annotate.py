"""Human evaluation round trip: export a sheet, fill it as three annotators, import, check Table 6 by hand."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.annotate import AnnotationError, comprehension_rates, export_sheet, import_sheets
from callbluff.cli import app
from callbluff.engine.run import RunResult
from helpers.sheets import read_rows, write_rows


@pytest.fixture(scope="module")
def run_dir(small_run: Callable[..., RunResult]) -> Path:
    """The default small run: eight demo essays scored by length, DelRand 25% and ShuffleSent, with its report."""
    return small_run().run_dir


def test_scoring_round_trip_gives_table6(run_dir: Path, tmp_path: Path) -> None:
    r = CliRunner().invoke(app, ["annotate", "export", str(run_dir), "--kind", "scoring", "--n", "4",
                                 "--out", str(tmp_path / "sheet.csv")])
    assert r.exit_code == 0, r.output
    blank = read_rows(tmp_path / "sheet.csv")
    assert len(blank) == 4 and all(row["score_a"] == row["score_b"] == "" for row in blank)
    assert "adversarial" not in json.dumps(blank) and "example_id" not in blank[0]  # keys hidden
    [key_file] = (run_dir / "annotations").glob("*.key.json")
    key = json.loads(key_file.read_text())["items"]
    assert {k["adversarial"] for k in key.values()} <= {"a", "b"}
    form = (tmp_path / "sheet.html").read_text()
    assert form.count("Score A:") == 4 and "http:" not in form and "https:" not in form  # self-contained
    # the scale comes from the prompt (demo essays: 1-6, range 5)
    assert {(row["score_min"], row["score_max"]) for row in blank} == {("1", "6")}

    def fill(name: str, orig_adv: list[tuple[int, int]]) -> Path:
        rows = []
        for row, (o, a) in zip(blank, orig_adv):
            adv_is_a = key[row["item"]]["adversarial"] == "a"
            rows.append({**row, "annotator": name, "score_a": str(a if adv_is_a else o),
                         "score_b": str(o if adv_is_a else a)})
        return write_rows(tmp_path / f"{name}.csv", rows)

    files = [fill("ann1", [(4, 3)] * 4),                       # lowers every adversarial response by 1
             fill("ann2", [(3, 3)] * 4),                       # never changes a score
             fill("ann3", [(2, 3), (5, 3), (5, 3), (5, 3)])]   # raises one by 1, lowers three by 2
    r = CliRunner().invoke(app, ["annotate", "import", str(run_dir), *map(str, files)])
    assert r.exit_code == 0, r.output
    summary = json.loads((run_dir / "annotations" / "results.json").read_text())
    overall = next(x for x in summary["kumar_table6"] if x["attack"] == "all")
    # by hand: 12 judgements; lower 4 + 0 + 3 = 7; higher 1; change (4 x -1 + 1 - 3 x 2) / 12 / 5 x 100 = -15%
    assert overall["judgements"] == 12 and overall["n_items"] == 4 and overall["n_annotators"] == 3
    assert overall["lower_pct"] == pytest.approx(700 / 12) and overall["higher_pct"] == pytest.approx(100 / 12)
    assert overall["mean_change_pct"] == pytest.approx(-15.0)
    per_attack = [x for x in summary["kumar_table6"] if x["attack"] != "all"]
    assert sum(x["n_items"] for x in per_attack) == 4
    assert sorted(x["n_items"] for x in per_attack) == [2, 2]  # stratified: DelRand and ShuffleSent, 2 each
    assert "Human scoring (Kumar et al. 2020 Table 6 shape)" in (run_dir / "report.html").read_text()


def test_mismatching_sheets_are_named(run_dir: Path, tmp_path: Path) -> None:
    ex = export_sheet(run_dir, "scoring", 3, tmp_path / "s.csv", seed=9)
    blank = read_rows(ex.csv)
    good = [{**row, "annotator": "x", "score_a": "3", "score_b": "4"} for row in blank]
    with pytest.raises(AnnotationError, match=r"row 2: sheet 'nope' was not exported from"):
        import_sheets(run_dir, [write_rows(tmp_path / "a.csv", [{**good[0], "sheet": "nope"}])])
    with pytest.raises(AnnotationError, match=r"row 3, column score_b: 9 is outside the scale 1-6"):
        import_sheets(run_dir, [write_rows(tmp_path / "b.csv", [good[0], {**good[1], "score_b": "9"}, good[2]])])
    with pytest.raises(AnnotationError, match=r"row 2, column score_a: 'high' is not a score"):
        import_sheets(run_dir, [write_rows(tmp_path / "c.csv", [{**good[0], "score_a": "high"}, *good[1:]])])
    with pytest.raises(AnnotationError, match=r"did not judge items"):
        import_sheets(run_dir, [write_rows(tmp_path / "d.csv", good[:2])])
    with pytest.raises(AnnotationError, match=r"judged item .* twice"):
        import_sheets(run_dir, [write_rows(tmp_path / "e.csv", [*good, good[0]])])
    with pytest.raises(AnnotationError, match=r"column annotator is empty"):
        import_sheets(run_dir, [write_rows(tmp_path / "f.csv", [{**good[0], "annotator": ""}, *good[1:]])])
    with pytest.raises(AnnotationError, match=r"not a callbluff annotation sheet"):
        import_sheets(run_dir, [write_rows(tmp_path / "g.csv", [{"foo": "1"}])])
    with pytest.raises(AnnotationError, match=r"--kind 'grading'"):
        export_sheet(run_dir, "grading", 3, tmp_path / "x.csv")


def test_comprehension_round_trip(run_dir: Path, tmp_path: Path) -> None:
    ex = export_sheet(run_dir, "comprehension", 5, tmp_path / "c.csv", seed=1)
    blank = read_rows(ex.csv)
    assert len(blank) == 5 and set(blank[0]) == {"sheet", "item", "question", "understood", "what_it_asks",
                                                  "annotator"}
    answers = {"p1": "yyyyy", "p2": "yyynn", "p3": "ynnnn"}  # rates 100%, 60%, 20%
    rows = [{**row, "annotator": who, "understood": {"y": "yes", "n": "no"}[marks[i]], "what_it_asks": "volunteering"}
            for who, marks in answers.items() for i, row in enumerate(blank)]
    summary = import_sheets(run_dir, [write_rows(tmp_path / "filled.csv", rows)])
    overall = next(x for x in summary["comprehension"] if x["attack"] == "all")
    assert (overall["min_pct"], overall["max_pct"]) == (20.0, 100.0)
    assert overall["mean_pct"] == pytest.approx(60.0)
    assert overall["per_annotator"] == {"p1": 100.0, "p2": 60.0, "p3": 20.0}
    with pytest.raises(AnnotationError, match=r"column understood: 'maybe'; write yes or no"):
        import_sheets(run_dir, [write_rows(tmp_path / "bad.csv", [{**rows[0], "understood": "maybe"}, *rows[1:]])])


def test_export_is_stratified_per_attack(run_dir: Path, tmp_path: Path) -> None:
    """--n items spread over the attack configurations (round-robin over each one's seeded order), not one draw
    over all examples that can leave an attack out; the same seed gives the same sheet."""
    import pandas as pd

    examples = pd.read_parquet(run_dir / "examples.parquet")
    per_config = examples.drop_duplicates("example_id").groupby("attack").size().to_dict()
    assert len(per_config) == 2 and min(per_config.values()) >= 3
    for n in (1, 3, 5):
        a = export_sheet(run_dir, "scoring", n, tmp_path / f"a{n}.csv", seed=7)
        b = export_sheet(run_dir, "scoring", n, tmp_path / f"b{n}.csv", seed=7)
        assert a.sheet == b.sheet and a.n == n
        key = json.loads(a.key.read_text())["items"]
        counts = pd.Series([k["attack"] for k in key.values()]).value_counts().to_dict()
        assert sum(counts.values()) == n and max(counts.values()) - min(counts.get(x, 0) for x in per_config) <= 1


def test_comprehension_rates_by_hand() -> None:
    js = [{"annotator": a, "item": i, "attack": "T", "understood": u}
          for a, us in (("a", [1, 1, 0, 0]), ("b", [1, 1, 1, 0])) for i, u in zip("1234", us)]
    [t, allrow] = comprehension_rates(js)
    assert (t["min_pct"], t["max_pct"], t["mean_pct"]) == (50.0, 75.0, 62.5) and allrow["attack"] == "all"
