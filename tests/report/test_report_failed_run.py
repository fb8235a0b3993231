"""Issue 40, item 1: a run in which most predictions failed reads as a failed run, not as a finding.

A real engine run of demo essays against a scorer that fails on most inputs (a deterministic share of texts raise,
as an overloaded grader would): the report must open with a red banner naming the share of failed predictions and
its most frequent causes, and no failure rate computed on fewer than ``MIN_N`` judged cases may be shown as a red
finding (it is greyed with its n), nor be the overview's "worst attack" or a bar of the chart.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from callbluff.api import run_suite
from callbluff.report.html import write_report
from callbluff.report.scorecard import MIN_N

SUITE = {
    "name": "mostly-failed", "seed": 3, "limit": 30,
    "dataset": {"spec": "demo:essay"},
    "attack": [{"name": "ShuffleSent"}, {"name": "DelRand", "params": {"percent": 25}}],
    "output": {"chunk_size": 30, "preflight": False},  # a flaky grader can pass a pre-flight; this one is asked anyway
}


def overloaded_scorer(text: str) -> float:
    """Answers about one essay in five (by a hash of its set of words, so an essay and its shuffled version share
    their fate; the rest raise as an overloaded grader's 503), by length from 1 to 6 (so a shuffled essay keeps its
    score: every judged ShuffleSent example fools it)."""
    words = " ".join(sorted(set(text.split())))
    if int(hashlib.sha256(words.encode()).hexdigest()[:8], 16) % 5:
        raise RuntimeError("upstream grader unavailable (HTTP 503)")
    return 1.0 + 5.0 * min(len(text.split()), 400) / 400


def healthy_scorer(text: str) -> float:
    """The same scorer without failures."""
    return 1.0 + 5.0 * min(len(text.split()), 400) / 400


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("failed") / "run"
    run_suite(SUITE, out, targets={"grader": overloaded_scorer})
    return out


def _rates(html: str) -> list[tuple[str, str, str]]:
    """(class, rate, n text) of every failure-rate cell of the scorecards."""
    return re.findall(r'<span class="fp ([a-z ]*)"[^>]*>([^<]*)</span><span class="nj">([^<]*)</span>', html)


def test_mostly_failed_run_gets_a_red_banner_and_no_red_rate_from_few_cases(failed_run: Path) -> None:
    html = write_report(failed_run).read_text(encoding="utf-8")
    banner = re.search(r'<div class="banner red"[^>]*>(.*?)</div>', html, re.S)
    assert banner is not None, "no red banner on a run whose predictions mostly failed"
    text = re.sub(r"<[^>]+>", " ", banner.group(1))
    failed, total = map(int, re.search(r"grader: (\d+) of (\d+) predictions failed", text).groups())
    assert failed / total > 0.5
    assert "upstream grader unavailable (HTTP 503)" in text  # the top cause, with its count
    assert re.search(r"\d+ × .*upstream grader unavailable", text)
    rates = _rates(html)
    assert rates, "no failure rate shown with its n"
    for cls, rate, n in rates:
        judged = int(re.match(r"n=(\d+)", n).group(1))
        if judged < MIN_N:
            assert "few" in cls and "hi" not in cls, (rate, n)
            assert "too few" in n
    assert any(rate == "100" and "few" in cls for cls, rate, _ in rates)  # ShuffleSent fools it on the few left


def test_a_healthy_run_has_no_banner_and_every_rate_shows_its_n(tmp_path: Path) -> None:
    out = tmp_path / "run"
    run_suite(SUITE, out, targets={"grader": healthy_scorer})
    html = write_report(out).read_text(encoding="utf-8")
    assert 'class="banner' not in html
    rates = _rates(html)
    assert len(rates) == 2 and all(n.startswith("n=") and int(n[2:]) >= MIN_N for _, _, n in rates)
    assert any("hi" in cls for cls, _, _ in rates)  # ShuffleSent fools a length scorer on every essay: red
