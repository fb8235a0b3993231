"""``callbluff filter fit`` reports its progress (issue 27: it printed nothing for about three minutes): the
prompts, and per prompt the battery's generator configurations and the fit, as timestamped lines when the
output is not a terminal; the hook only observes (the filter fitted with it is the one fitted without)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from callbluff.countermeasures.battery import battery
from callbluff.cli import app
from callbluff.datasets import load
from callbluff.defenses.filters import NonWordRateFilter


def test_filter_fit_prints_progress_lines_and_fits_the_same_filter(tmp_path: Path) -> None:
    data = tmp_path / "answers.jsonl"  # the demo's first prompt (220 scored answers, 0-2)
    data.write_text("".join(json.dumps({"id": r.id, "prompt_id": r.prompt_id, "text": r.text, "score": r.gold})
                            + "\n" for r in load("demo:content").records() if r.prompt_id == "demo-1"),
                    encoding="utf-8")
    spec = f"jsonl:{data}?task=content&score_min=0&score_max=2"
    r = CliRunner().invoke(app, ["filter", "fit", "--data", spec, "--kind", "nonword", "--dev-count", "2",
                                 "--out", str(tmp_path / "f")])
    assert r.exit_code == 0, r.output
    lines = [ln for ln in r.output.splitlines() if re.match(r"\[\d\d:\d\d:\d\d\] ", ln)]  # not a terminal: plain
    text = "\n".join(lines)
    assert "prompts: 0/1 (0 %)" in text and "prompts: 1/1 (100 %)" in text, r.output
    assert "prompt demo-1: development answers (generator configurations): 0/25 (0 %)" in text, r.output
    assert "prompt demo-1: development answers (generator configurations): 25/25 (100 %)" in text, r.output
    assert "prompt demo-1: fit: 1/1 (100 %)" in text, r.output
    assert "filter fit: a nonword filter on 220 answers of 1 prompt" in lines[0]  # said before the slow loading
    assert all("elapsed" in ln for ln in lines[1:])
    assert text.index("development answers") < text.index("fit: 1/1") < text.index("prompts: 1/1")
    saved = json.loads((tmp_path / "f" / "filter.json").read_text(encoding="utf-8"))["prompts"]["demo-1"]
    ds = load(spec)
    quiet = NonWordRateFilter(dev_count=2).fit(ds.records(), ds.prompts, battery=battery)
    assert quiet.summary()["demo-1"]["threshold"] == saved["threshold"]
