"""Issue 38's acceptance test: a pairwise task (tests/plugins/callbluff_pairwise.py: its records, loader mapping,
metric, an expectation with a parameter, a report view and an attack that swaps the two responses) and a new
target type (tests/plugins/callbluff_lengthjudge.py), each one module outside the package, found only through
entry points (a ``*.dist-info/entry_points.txt`` on ``sys.path``, as an installed plugin has), run end to end by a
real ``callbluff run`` subprocess against a ``callable`` target and the new type. No file of callbluff names them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import callbluff

PLUGINS = Path(__file__).resolve().parent
SRC = Path(callbluff.__file__).resolve().parents[1]  # the checkout under test
ENTRY_POINTS = """\
[callbluff.tasks]
pairwise = callbluff_pairwise

[callbluff.attacks]
pairwise = callbluff_pairwise

[callbluff.expectations]
mirrored = callbluff_pairwise

[callbluff.targets]
length-judge = callbluff_lengthjudge
"""
PAIRS = [  # (instruction, response A, response B, the better one)
    ("Name a prime number.", "7 is prime: its only divisors are 1 and 7.", "8", "A"),
    ("Say hello in French.", "Hi", "Bonjour, which is hello in French.", "B"),
    ("What is 2 + 2?", "2 + 2 = 4, since adding two and two gives four.", "5", "A"),
    ("Name a colour.", "Blue", "Blue is a colour of the sky on a clear day.", "B"),
    ("Capital of Italy?", "Rome is the capital of Italy.", "Milan", "A"),
    ("Spell 'cat' backwards.", "tac", "The word cat backwards is spelled t-a-c.", "B"),
]
SUITE = """\
name = "pairwise-judges"
seed = 3

[dataset]
spec = "jsonl:pairs.jsonl?task=pairwise"

[[target]]
name = "biased-callable"
type = "callable"
function = "callbluff_pairwise:position_biased_judge"
pass_input = true
output = "score"

[[target]]
name = "length-fair"
type = "length-judge"

[[target]]
name = "length-leaning"
type = "length-judge"
position_bias = 0.2

[[attack]]
name = "SwapResponses"
"""


def _plugin_env(tmp_path: Path) -> dict[str, str]:
    """PYTHONPATH: a directory holding the plugin's dist-info (its entry points), the plugin modules and the
    checkout's sources; nothing else makes callbluff import them."""
    site = tmp_path / "site"
    info = site / "callbluff_test_plugins-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: callbluff-test-plugins\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(PLUGINS), str(SRC)]), "COLUMNS": "200",
            "CALLBLUFF_PROGRESS_INTERVAL": "3600"}


def _callbluff(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "callbluff.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def test_a_pairwise_task_and_a_target_type_from_entry_points(tmp_path: Path) -> None:
    env = _plugin_env(tmp_path)
    rows = [{"id": f"p{i}", "instruction": q, "response_a": a, "response_b": b, "preferred": w}
            for i, (q, a, b, w) in enumerate(PAIRS)]
    (tmp_path / "pairs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "suite.toml").write_text(SUITE, encoding="utf-8")

    listed = _callbluff(env, tmp_path, "list")
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert "SwapResponses" in listed.stdout

    proc = _callbluff(env, tmp_path, "run", "suite.toml", "--out", "run")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    metrics = json.loads((tmp_path / "run" / "metrics.json").read_text())
    by = {(r["target"], r["attack"]): r for r in metrics}
    assert {r["task"] for r in metrics} == {"pairwise"}
    # clean agreement with the gold preference: every judge prefers the longer response, which is the gold here
    for target in ("biased-callable", "length-fair", "length-leaning"):
        assert by[(target, "clean")]["agreement"] == 100.0, target
        swap = by[(target, "SwapResponses")]
        assert swap["expect"] == "mirrored:0.1" and swap["n"] == len(PAIRS) and swap["n_judged"] == len(PAIRS)
    # the expectation's parameter decides: a fair judge mirrors exactly (0.9 -> 0.1), a biased one does not
    assert by[("length-fair", "SwapResponses")]["failure_pct"] == 0.0
    assert by[("length-fair", "SwapResponses")]["position_shift"] == pytest.approx(0.0)
    assert by[("length-leaning", "SwapResponses")]["failure_pct"] == 100.0
    # leaning 0.2 towards the first: 0.9 + 0.2 (capped at 1) -> 0.1 + 0.2 once swapped, 0.3 from the mirror
    assert by[("length-leaning", "SwapResponses")]["position_shift"] == pytest.approx(0.3)
    assert by[("biased-callable", "SwapResponses")]["failure_pct"] == 100.0
    assert by[("length-leaning", "SwapResponses")]["agreement_adv"] == 100.0  # it still picks the better one
    # the cache keys hold both responses: the swap is asked, not read back as the original
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["target_stats"]["length-fair"]["inputs"] == 2 * len(PAIRS)

    page = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "Position bias (pairwise judges)" in page  # the task's report view
    assert "a consistent judge mirrors its preference within 0.1" in page  # the expectation's phrase
    assert "Swapping the responses moved the preference by" in page  # the task's sentence
    assert "agreement after the swap %" in page

    # a wrong target type names the key and lists the registered types, the plugin's among them
    (tmp_path / "bad.toml").write_text(SUITE.replace('type = "length-judge"', 'type = "lenght-judge"', 1))
    bad = _callbluff(env, tmp_path, "run", "bad.toml", "--out", "bad")
    assert bad.returncode == 2
    assert "key 'type' must be one of callable, command, hf, http, length-judge, model, openai, sklearn, got " \
           "'lenght-judge'" in bad.stdout + bad.stderr


def test_nothing_in_callbluff_names_the_plugins() -> None:
    """The plugins needed no file of the package: none names them."""
    words = ("callbluff_pairwise", "callbluff_lengthjudge", "length-judge", "LengthJudge", "SwapResponses", "PairwiseTask",
             "\"mirrored")
    hits = [f"{p.relative_to(SRC)}: {w}" for p in sorted((SRC / "callbluff").rglob("*.py"))
            for w in words if w in p.read_text(encoding="utf-8")]
    assert hits == []
