"""The JUnit file stays XML 1.0 whatever the suite, target or prompt names hold (issue 28, defect 16):
control characters are not allowed in XML 1.0, even as character references, and made the file invalid."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.gates import ExpectConfig, check_gates, junit_xml_suites

SUITE = """
name = "suite\\u0007bell\\u0000"
seed = 5
limit = 8
[dataset]
spec = "demo:essay"
[[target]]
name = "len\\u001bgth\\u000c"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "DelRand"
params = { percent = 25 }
[[expect]]
attack = "DelRand"
metric = "failure_pct"
max = -1
[output]
chunk_size = 8
"""


def test_run_junit_with_control_characters_parses(tmp_path: Path) -> None:
    suite = tmp_path / "suite.toml"
    suite.write_text(SUITE, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    res = CliRunner().invoke(app, ["run", str(suite), "--out", str(tmp_path / "run"), "--quiet", "--junit",
                                   str(junit)], env={"COLUMNS": "300"})
    assert res.exit_code == 3, (res.output, res.exception)  # the gate (max -1) fails on purpose
    root = ET.parse(junit).getroot()
    [ts] = root.findall("testsuite")
    assert ts.get("name") == "suite\\x07bell\\x00"  # shown, escaped, not dropped
    [case] = ts.findall("testcase")
    failure = case.find("failure")
    assert failure is not None and "len\\x1bgth\\x0c" in (failure.text or "")


def test_junit_keeps_tabs_newlines_and_unicode() -> None:
    rows = [{"task": "essay", "attack": "clean", "params": "{}", "prompt": "all", "target": "t\u00e9\tb\U0001F43C",
             "qwk": 0.5}]
    results = check_gates([ExpectConfig(attack="clean", metric="qwk", min=0.9)], rows)
    xml = junit_xml_suites([("s\u2028\ufffe\ud800", results)])
    root = ET.fromstring(xml)
    assert root.find("testsuite").get("name") == "s\u2028\\ufffe\\ud800"  # type: ignore[union-attr]
    assert "t\u00e9\tb\U0001F43C" in root.find("testsuite/testcase/failure").text  # type: ignore[union-attr,operator]
