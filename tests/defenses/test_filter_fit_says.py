"""Issue 40, item 16: ``callbluff filter fit`` says at once what it fits and on what, before the silent part
(loading the attack families), not nothing for 20 s."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from callbluff.cli import app


def test_filter_fit_says_what_it_fits_first(tmp_path: Path) -> None:
    data = tmp_path / "a.jsonl"
    data.write_text("\n".join(json.dumps({"id": f"a{i}", "prompt_id": f"p{i % 2}", "text": t, "score": s})
                              for i, (t, s) in enumerate([("LIFO", 3), ("push and pop", 2), ("a queue", 1)])) + "\n")
    spec = f"jsonl:{data}?score_min=0&score_max=5"
    r = CliRunner().invoke(app, ["filter", "fit", "--data", spec, "--kind", "injection", "--rules-only",
                                 "--out", str(tmp_path / "f")])
    assert r.exit_code == 0, r.output
    first = r.output.splitlines()[0]
    assert re.match(rf"^\[\d\d:\d\d:\d\d\] filter fit: an injection filter on 3 answers of 2 prompts \({re.escape(spec)}\)",
                    first), r.output
    assert "loading the attack families first" in first
