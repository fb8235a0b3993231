"""CI gates: a suite's ``[[expect]]`` tables checked against a run's metric rows, and JUnit XML for CI.

Kumar et al. (2020, Sec. 1) argue that scorers should be tracked on adversarial evaluation beside QWK; a gate
makes that a build step: ``[[expect]] attack = "AddSong" metric = "not_lowered_pct" max = 20`` fails the build
when more than 20% of AddSong's responses kept or raised their score. The papers define no thresholds; the
suite's author chooses them.

Row selection (a choice; the papers are silent): a gate checks the rows of its ``attack`` (``"clean"`` for
clean-data rows), narrowed by ``target`` and ``prompt`` when given. Without ``prompt`` it checks the pooled
``all`` row of each (target, params) where the run has one, else every prompt's row. Each selected row is one
check; a gate passes when every check passes. A gate with no row, or whose rows lack the metric (undefined,
e.g. no valid pair), fails: a gate that checks nothing must not pass silently.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from pydantic import BaseModel, ConfigDict

from callbluff.metrics.fields import format_value


class ExpectConfig(BaseModel):
    """One ``[[expect]]`` table: a gate on one metric of one attack's rows (:mod:`callbluff.gates`).

    ``attack`` is an attack of the suite (or ``"clean"`` for the clean-data rows, e.g. ``qwk``), ``metric`` a
    metric field of the rows (a task descriptor's ``fields``, :mod:`callbluff.tasks`), ``min`` / ``max`` the bounds (at least
    one). ``target`` and ``prompt`` narrow the rows; without ``prompt`` the pooled ``all`` row is checked where
    the run has one, else each prompt's row; without ``target`` every target is checked."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    attack: str
    metric: str
    min: float | None = None
    max: float | None = None
    target: str | None = None
    prompt: str | None = None

    def label(self) -> str:
        bounds = " and ".join(b for b in (f">= {self.min:g}" if self.min is not None else "",
                                          f"<= {self.max:g}" if self.max is not None else "") if b)
        where = "".join(f" {k}={v}" for k, v in (("target", self.target), ("prompt", self.prompt)) if v)
        return f"{self.attack} {self.metric} {bounds}{where}"


@dataclass(frozen=True)
class Check:
    """One metric row measured against a gate's bounds."""

    target: str
    prompt: str
    params: str
    value: float | None
    passed: bool


@dataclass(frozen=True)
class GateResult:
    """A gate and its checks; ``message`` says in one line why it failed ("" when it passed)."""

    gate: ExpectConfig
    checks: list[Check] = field(default_factory=list)
    message: str = ""

    @property
    def passed(self) -> bool:
        return not self.message

    @property
    def name(self) -> str:
        return self.gate.label()


def _value(row: Mapping[str, Any], metric: str) -> float | None:
    v = row.get(metric)
    if v is None or isinstance(v, bool) or not isinstance(v, int | float) or v != v:
        return None
    return float(v)


def _select(gate: ExpectConfig, rows: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    mine = [r for r in rows if r.get("attack") == gate.attack
            and (gate.target is None or r.get("target") == gate.target)]
    if gate.prompt is not None:
        return [r for r in mine if str(r.get("prompt")) == gate.prompt]
    pooled = {(r.get("target"), r.get("params")) for r in mine if r.get("prompt") == "all"}
    return [r for r in mine if r.get("prompt") == "all" or (r.get("target"), r.get("params")) not in pooled]


def check_gate(gate: ExpectConfig, rows: Sequence[Mapping[str, Any]]) -> GateResult:
    """Check one gate against metric rows (see the module docstring for which rows)."""
    selected = _select(gate, rows)
    if not selected:
        where = "".join(f" {k} {v!r}" for k, v in (("target", gate.target), ("prompt", gate.prompt)) if v)
        return GateResult(gate, [], f"no metric row for attack {gate.attack!r}{where} in this run")
    checks = []
    for r in selected:
        v = _value(r, gate.metric)
        ok = v is not None and (gate.min is None or v >= gate.min) and (gate.max is None or v <= gate.max)
        checks.append(Check(str(r.get("target")), str(r.get("prompt")), str(r.get("params")), v, ok))
    bad = [c for c in checks if not c.passed]
    if not bad:
        return GateResult(gate, checks)
    parts = [f"{c.target} prompt {c.prompt}"
             + (f" {_short(c.params)}" if len({x.params for x in checks}) > 1 else "")
             + (f": {gate.metric} = {format_value(gate.metric, c.value)}" if c.value is not None
                else f": no {gate.metric} (undefined)")
             for c in bad]
    return GateResult(gate, checks, f"{len(bad)} of {len(checks)} rows outside the bounds: " + "; ".join(parts))


def _short(params: str) -> str:
    try:
        d = json.loads(params)
    except ValueError:
        return params
    return " ".join(f"{k}={v}" for k, v in d.items() if v is not None) or "defaults"


def check_gates(gates: Sequence[ExpectConfig], rows: Sequence[Mapping[str, Any]]) -> list[GateResult]:
    """Every gate checked, in the suite's order."""
    return [check_gate(g, rows) for g in gates]


def gates_of_run(run_dir: str | Path) -> list[ExpectConfig]:
    """The ``[[expect]]`` tables recorded in a run directory's run.json (the suite as it was run)."""
    p = Path(run_dir) / "run.json"
    meta = json.loads(p.read_text(encoding="utf-8"))
    try:
        return [ExpectConfig(**e) for e in (meta.get("suite") or {}).get("expect") or []]
    except (TypeError, ValueError) as e:
        raise ValueError(f"{p}: key `suite.expect`: not a list of expectation tables ({e})") from None


# characters XML 1.0 does not allow, not even as character references (C0 controls but tab, LF and CR;
# surrogates; U+FFFE, U+FFFF): one in a suite, target or prompt name made the whole JUnit file invalid
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _xml_safe(text: str) -> str:
    """``text`` with each character XML 1.0 does not allow written as its visible Python escape (``\\x1b``,
    ``\\ud800``): kept readable and distinct, never dropped silently."""
    return _NOT_XML.sub(lambda m: ascii(m.group())[1:-1], text)


def _attr(text: str) -> str:
    return quoteattr(_xml_safe(text))


def _text(text: str) -> str:
    return escape(_xml_safe(text))


def junit_xml(results: Sequence[GateResult], suite_name: str) -> str:
    """JUnit XML (one ``<testsuite>``, one ``<testcase>`` per gate, ``<failure>`` for a failed one) as CI
    systems (GitLab, Jenkins, GitHub test reporters) display it."""
    return junit_xml_suites([(suite_name, results)])


def junit_xml_suites(suites: Sequence[tuple[str, Sequence[GateResult]]]) -> str:
    """JUnit XML for several suites' gates: one ``<testsuite>`` per suite."""
    tests = sum(len(r) for _, r in suites)
    failures = sum(not g.passed for _, r in suites for g in r)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites name="callbluff" tests="{tests}" failures="{failures}">']
    for suite_name, results in suites:
        n_fail = sum(not r.passed for r in results)
        lines.append(f'  <testsuite name={_attr(suite_name)} tests="{len(results)}" failures="{n_fail}" '
                     'errors="0" skipped="0">')
        for r in results:
            lines.append(f'    <testcase classname={_attr("callbluff.gates." + suite_name)} '
                         f'name={_attr(r.name)}>')
            detail = "\n".join(f"{c.target} prompt {c.prompt} {_short(c.params)}: {r.gate.metric} = "
                               f"{'undefined' if c.value is None else f'{c.value:.6g}'} "
                               f"{'pass' if c.passed else 'FAIL'}" for c in r.checks)
            if not r.passed:
                lines.append(f'      <failure message={_attr(r.message)} type="gate">{_text(detail)}</failure>')
            elif detail:
                lines.append(f"      <system-out>{_text(detail)}</system-out>")
            lines.append("    </testcase>")
        lines.append("  </testsuite>")
    lines += ["</testsuites>", ""]
    return "\n".join(lines)
