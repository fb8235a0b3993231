"""CI gates: [[expect]] tables validated by the suite, checked by `callbluff run` / `report`, JUnit XML."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from typer.testing import CliRunner

from callbluff.cli import app
from callbluff.cli.summary import GATE_FAILED
from callbluff.engine.suite import ExpectConfig, SuiteError, parse_suite
from callbluff.gates import check_gate, junit_xml

SUITE = """
name = "gated"
seed = 3
limit = 12
[dataset]
spec = "demo:essay"
[[target]]
name = "length"
type = "callable"
function = "helpers.scorers:essay_length_scorer"
[[attack]]
name = "ShuffleSent"
[[attack]]
name = "DelRand"
params = {{ percent = 25 }}
[[expect]]
attack = "DelRand"
metric = "not_lowered_pct"
max = 20
[[expect]]
attack = "ShuffleSent"
metric = "not_lowered_pct"
max = {shuffle_max}
[output]
chunk_size = 12
report = false
"""


def test_failing_gate_makes_run_exit_nonzero_and_junit_says_which(tmp_path: Path) -> None:
    # a length scorer keeps every shuffled essay's score: not_lowered_pct = 100 > 50 fails; DelRand (shorter
    # essays, lower scores: 0% not lowered) passes
    (tmp_path / "suite.toml").write_text(SUITE.format(shuffle_max=50))
    junit = tmp_path / "gates.xml"
    r = CliRunner().invoke(app, ["run", str(tmp_path / "suite.toml"), "--out", str(tmp_path / "run"),
                                 "--quiet", "--junit", str(junit)])
    assert r.exit_code == GATE_FAILED == 3, r.output
    assert "gate PASS DelRand not_lowered_pct <= 20" in r.output
    assert "gate FAIL ShuffleSent not_lowered_pct <= 50" in r.output and "not_lowered_pct = 100" in r.output
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["ShuffleSent not_lowered_pct <= 50"].find("failure") is not None
    assert cases["DelRand not_lowered_pct <= 20"].find("failure") is None
    # `callbluff report` re-checks the same gates and exits the same way
    rep = CliRunner().invoke(app, ["report", str(tmp_path / "run")])
    assert rep.exit_code == GATE_FAILED and "gate FAIL ShuffleSent" in rep.output


def test_passing_gates_exit_zero(tmp_path: Path) -> None:
    (tmp_path / "suite.toml").write_text(SUITE.format(shuffle_max=100))
    r = CliRunner().invoke(app, ["run", str(tmp_path / "suite.toml"), "--out", str(tmp_path / "run"),
                                 "--quiet"])
    assert r.exit_code == 0, r.output
    assert r.output.count("gate PASS") == 2


def _suite(expect: dict) -> None:
    parse_suite({"name": "s", "dataset": {"spec": "demo:essay"},
                 "target": [{"name": "t", "type": "callable", "function": "x:y"}],
                 "attack": [{"name": "ShuffleSent"}], "expect": [expect]}, source="s.toml")


@pytest.mark.parametrize(("expect", "message"), [
    ({"attack": "AddSong", "metric": "not_lowered_pct", "max": 20}, r"expect\[0\]\.attack.*'AddSong'.*allowed: clean"),
    ({"attack": "ShuffleSent", "metric": "not_lowerd", "max": 20}, r"expect\[0\]\.metric.*'not_lowerd'"),
    ({"attack": "ShuffleSent", "metric": "neg_pct"}, r"expect\[0\]`: give `min`, `max`"),
    ({"attack": "ShuffleSent", "metric": "neg_pct", "min": 5, "max": 1}, r"min 5 is above max 1"),
    ({"attack": "ShuffleSent", "metric": "neg_pct", "max": 1, "target": "u"}, r"expect\[0\]\.target.*'u'"),
    ({"attack": "ShuffleSent", "metric": "neg_pct", "maximum": 1}, r"expect\[0\]\.maximum"),
])
def test_bad_expectations_name_the_key(expect: dict, message: str) -> None:
    with pytest.raises(SuiteError, match=message):
        _suite(expect)


ROWS = [
    {"attack": "A", "params": "{}", "prompt": "1", "target": "t", "x": 10.0},
    {"attack": "A", "params": "{}", "prompt": "2", "target": "t", "x": 30.0},
    {"attack": "A", "params": "{}", "prompt": "all", "target": "t", "x": 20.0},
    {"attack": "A", "params": "{}", "prompt": "all", "target": "u", "x": None},
]


def test_gate_row_selection_and_bounds() -> None:
    g = ExpectConfig(attack="A", metric="x", max=25, target="t")
    res = check_gate(g, ROWS)  # the pooled row only
    assert res.passed and [(c.prompt, c.value) for c in res.checks] == [("all", 20.0)]
    assert not check_gate(ExpectConfig(attack="A", metric="x", max=25, target="t", prompt="2"), ROWS).passed
    assert check_gate(ExpectConfig(attack="A", metric="x", min=10, max=10, prompt="1"), ROWS).passed
    undefined = check_gate(ExpectConfig(attack="A", metric="x", max=25), ROWS)  # target u: undefined -> fail
    assert not undefined.passed and "u prompt all: no x (undefined)" in undefined.message
    missing = check_gate(ExpectConfig(attack="B", metric="x", max=25), ROWS)
    assert not missing.passed and "no metric row for attack 'B'" in missing.message
    xml = junit_xml([res, missing], "s<&>")
    root = ET.fromstring(xml)
    assert root.get("failures") == "1" and root.find("testsuite").get("name") == "s<&>"  # type: ignore[union-attr]
