"""Issue 40 item 13: `callbluff --version`, `--help`, `suite --help` and `list` start without the heavy libraries.

Each entry point runs in a fresh interpreter (through Typer's CliRunner, and through ``python -m callbluff.cli``
as the console script does), which then reports which of the heavy modules are in ``sys.modules``: none may be
(the lazy-import rule of :mod:`callbluff.cli`, docs/design.md). No timing is asserted; benchmarks/cli_startup.py
measures the seconds. A control case checks that the probe does see a heavy import when one happens."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

HEAVY = ("spacy", "torch", "sklearn", "scipy", "pandas", "pyarrow", "transformers", "ray", "matplotlib",
         "llama_cpp")
"""Top-level packages none of the four entry points may import (each costs from a tenth of a second to several)."""

ENTRY_POINTS = {
    "--version": ("callbluff 0.1.0",),
    "--help": ("Usage:", "list", "suite", "filter"),
    "suite --help": ("kumar2020", "llm-grader"),
    "list": ("AddSent", "AddLies", "model-in-the-loop"),
}

PROBE = """
import json, sys
out_path, how, *args = sys.argv[1:]
heavy = {heavy!r}
if how == "runner":
    from typer.testing import CliRunner
    from callbluff.cli import app
    result = CliRunner().invoke(app, args, prog_name="callbluff")
    code, output = result.exit_code, result.output
elif how == "module":  # what `python -m callbluff.cli ARGS` (the console script's module) runs
    import contextlib, io, runpy
    sys.argv = ["callbluff", *args]
    buf = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(buf):
        try:
            runpy.run_module("callbluff.cli", run_name="__main__", alter_sys=True)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    output = buf.getvalue()
else:  # the control: an import that does load heavy libraries
    __import__(args[0])
    code, output = 0, ""
loaded = sorted(m for m in heavy if m in sys.modules)
with open(out_path, "w", encoding="utf-8") as fh:
    json.dump({{"code": code, "output": output, "loaded": loaded}}, fh)
""".format(heavy=HEAVY)


def _probe(tmp_path: Path, how: str, args: list[str]) -> dict:
    """Run the probe in a fresh interpreter on this checkout's sources; its report (exit code, output, heavy
    modules loaded)."""
    report = tmp_path / "probe.json"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-c", PROBE, str(report), how, *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the probe failed: {proc.stderr[-2000:]}"
    return json.loads(report.read_text(encoding="utf-8"))


@pytest.mark.parametrize("how", ["runner", "module"])
@pytest.mark.parametrize("entry", list(ENTRY_POINTS))
def test_entry_point_imports_no_heavy_library(tmp_path: Path, entry: str, how: str) -> None:
    r = _probe(tmp_path, how, entry.split())
    assert r["code"] == 0, f"callbluff {entry} exited {r['code']}: {r['output'][-1000:]}"
    for text in ENTRY_POINTS[entry]:
        assert text in r["output"], f"callbluff {entry}: {text!r} not in its output:\n{r['output'][:2000]}"
    assert r["loaded"] == [], (f"callbluff {entry} ({how}) imported {', '.join(r['loaded'])} at start-up: import "
                               "them inside the command or function that needs them (the lazy-import rule, "
                               "callbluff.cli's docstring); `python -X importtime -m callbluff.cli "
                               f"{entry}` shows who imports them")


def test_probe_sees_a_heavy_import(tmp_path: Path) -> None:
    """The probe is not blind: after an import of pandas it reports pandas (and the pyarrow pandas loads)."""
    r = _probe(tmp_path, "import", ["pandas"])
    assert "pandas" in r["loaded"], r["loaded"]
