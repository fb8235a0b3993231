"""Issue 40, item 8: an LLM grader's report speaks its own language: raised scores with their intervals, weak
answers lifted to full marks, unreadable replies, its own table; not Ding et al.'s "rejected (ARR; 100 % is ideal)";
and an undefined clean QWK says why.

The grader is a chat target on a :class:`LocalLLMServer` whose process is the stand-in server
(helpers/fake_llm.py): real HTTP on 127.0.0.1, real runs, no llama.cpp needed."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import pytest

from callbluff.api import run_suite
from callbluff.report.html import write_report
from helpers.fake_llm import FakeLLMServer


def suite(srv: FakeLLMServer, name: str) -> dict[str, Any]:
    return {"name": name, "seed": 1, "limit": 12, "dataset": {"spec": "demo:content"},
            "target": [{"name": "grader", "type": "openai", "base_url": srv.base_url, "model": srv.model,
                        "response_format": "json_object", "concurrency": 1, "retries": 1, "timeout": 20}],
            "attack": [{"name": "FormatHijack"}, {"name": "NullAnswer"}],
            "output": {"chunk_size": 12, "preflight": False}}


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("model") / "grader.gguf"
    path.write_bytes(b"GGUF stand-in weights " * 32)
    return path


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_a_healthy_llm_grader_run_has_its_own_view_and_words(model: Path, tmp_path: Path) -> None:
    with FakeLLMServer(model, tmp_path / "calls.txt") as srv:
        run_suite(suite(srv, "grader-ok"), tmp_path / "run")
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    text = _text(html)
    assert "grader (LLM grader)" in text
    assert "The LLM grader, per attack" in text and "weak → max" in text and "unreadable %" in text
    assert re.search(r"\d+(\.\d)?% of \d+ attacked answers were scored higher than their clean version "
                     r"\(95% interval [\d.]+ to [\d.]+\)", text)
    assert re.search(r"[\d.]+% of 12 content-free answers got the minimum score", text)  # NullAnswer
    assert "ARR; 100% is ideal" not in text and "were rejected" not in text
    assert "a robust grader does not raise the score" in text
    assert "at minimum %" in text and "ARR per generator" not in text  # the grader's table, not Ding et al.'s view


def test_a_failed_llm_grader_run_says_why_its_qwk_is_undefined(model: Path, tmp_path: Path) -> None:
    with FakeLLMServer(model, tmp_path / "calls.txt", crash_after=0) as srv:
        srv.stop()  # the server is gone before the run asks anything: every prediction fails
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no numpy "Mean of empty slice" on the terminal
            run_suite(suite(srv, "grader-down"), tmp_path / "run")
    text = _text(write_report(tmp_path / "run").read_text(encoding="utf-8"))
    assert re.search(r"QWK – \(no clean answer was scored: all \d+ failed\)", text), text[:2000]
    assert re.search(r"grader: \d+ of \d+ predictions failed \(100 %\)", text)
    # the attacks made their examples: the target failed them, which is not "no example from these records"
    assert "Not measured, every prediction failed: FormatHijack, NullAnswer." in text
    assert "Not measured: " not in text
