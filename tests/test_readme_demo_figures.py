"""Issue 40, item 12: README's demo figures come from a demo run (scripts/readme_demo_figures.py), not typed in: the
block is rewritten from the runs' metrics.json with the demo's own headline, and ``--check`` fails when they
differ (as README's reading line did: 21.3 typed in, 33.7 printed)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from callbluff.demo import README_LEAD, SUITES, headline, readme_with_figures

REPO = Path(__file__).resolve().parents[1]
ROWS = {
    "essay": [{"attack": "clean", "prompt": "demo-essay", "target": "essay-scorer", "qwk": 0.97},
              {"attack": "ShuffleSent", "prompt": "demo-essay", "target": "essay-scorer", "failure_pct": 100.0}],
    "content": [{"attack": "clean", "prompt": "demo-1", "target": "content-scorer", "qwk": 0.99},
                {"attack": "RandomChars", "prompt": "all", "target": "content-scorer", "arr": 100.0}],
    "reading": [{"attack": "clean", "prompt": "all", "target": "reader", "f1": 40.3},
                {"attack": "AddOneSent", "prompt": "all", "target": "reader", "f1_adv": 33.7, "queries_mean": 0.0},
                {"attack": "AddSent", "prompt": "all", "target": "reader", "f1_adv": 30.2, "queries_mean": 2.4}],
    "questions": [{"attack": "clean", "prompt": "all", "target": "qa", "n": 30},
                  {"attack": "DPAEG", "prompt": "all", "target": "qa", "success_rate": 24.0, "n": 297, "mrr": 0.35,
                   "mrr_adv": 0.33}],
}


def _demo_dir(tmp_path: Path) -> Path:
    for name, rows in ROWS.items():
        run = tmp_path / "demo" / "runs" / name
        run.mkdir(parents=True)
        (run / "metrics.json").write_text(json.dumps(rows), encoding="utf-8")
    return tmp_path / "demo"


def test_the_block_is_the_demos_closing_lines(tmp_path: Path) -> None:
    demo = _demo_dir(tmp_path)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert README_LEAD in readme  # the block the script maintains is there
    new = readme_with_figures(readme, demo)
    block = new[new.index(README_LEAD) + len(README_LEAD):].split("```", 1)[0].splitlines()
    assert len(block) == 2 * len(SUITES)
    for k, s in enumerate(SUITES):
        assert block[2 * k] == f"  {s.name:9s} demo-run/runs/{s.name}/report.html"
        assert block[2 * k + 1] == f"            {headline(s.name, ROWS[s.name])}"
    assert "F1 clean 40.3 -> AddOneSent 33.7 (0.0 queries/question), AddSent 30.2 (2.4 queries/question)" in new
    outside = readme.split(README_LEAD)
    assert new.startswith(outside[0]) and new.endswith(outside[1].split("```", 1)[1])  # the rest untouched


def test_check_fails_on_figures_that_differ_and_the_script_rewrites_them(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("readme_demo_figures", REPO / "scripts" / "readme_demo_figures.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    demo = _demo_dir(tmp_path)
    copy = tmp_path / "README.md"
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    copy.write_text(readme.replace("F1 clean 40.3 -> AddOneSent ", "F1 clean 40.3 -> AddOneSent 9"), encoding="utf-8")
    # (a figure that is not the run's, as one typed in by hand)
    args = [str(demo), "--readme", str(copy)]
    assert script.main([*args, "--check"]) == 1 and "+            F1 clean 40.3 -> AddOneSent 33.7" in capsys.readouterr().out
    assert script.main(args) == 0
    assert script.main([*args, "--check"]) == 0 and "matches" in capsys.readouterr().out
