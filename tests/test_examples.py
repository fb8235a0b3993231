"""The shipped examples/*.toml run as written (the HTTP one with its example service started)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from callbluff.api import run_suite
from callbluff.engine.suite import load_suite

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_every_example_is_valid() -> None:
    files = sorted(EXAMPLES.glob("*.toml"))
    assert len(files) >= 3
    for f in files:
        load_suite(f)


def test_command_example(tmp_path: Path) -> None:
    result = run_suite(load_suite(EXAMPLES / "demo-content-command.toml"), tmp_path / "run")
    rows = json.loads((tmp_path / "run" / "metrics.json").read_text())
    assert result.counts["errors"] == 0 and result.counts["examples"] > 0
    shuffle = [r for r in rows if r["attack"] == "Shuffle" and r["prompt"] == "all"]
    assert len(shuffle) == 2  # the tokenizer grid has two points
    # a bag-of-keywords scorer cannot see word order: shuffled answers keep their scores exactly
    assert all(r["neg_pct"] == 0 and r["pos_pct"] == 0 for r in shuffle)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_example_with_its_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    port = _free_port()
    token = "example-token-123456"
    env = {**os.environ, "SCORER_TOKEN": token}
    server = subprocess.Popen([sys.executable, str(EXAMPLES / "scorers" / "http_scorer.py"), str(port)], env=env)
    try:
        deadline = time.time() + 15
        while time.time() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        text = (EXAMPLES / "http-target.toml").read_text().replace("8765", str(port))
        suite_file = tmp_path / "http-target.toml"
        suite_file.write_text(text)
        monkeypatch.setenv("SCORER_TOKEN", token)
        result = run_suite(load_suite(suite_file), tmp_path / "run")
    finally:
        server.terminate()
        server.wait(5)
    assert result.counts["errors"] == 0 and result.counts["records"] == 109
    for f in (tmp_path / "run").rglob("*"):
        if f.is_file():
            assert token.encode() not in f.read_bytes()


ASAP_EXAMPLE = EXAMPLES / "asap-aes-shufflesent.toml"
ASAP_FILE = ("data", "asap-aes", "training_set_rel3.tsv.gz")


def test_asap_example_points_at_the_shared_directory_beside_the_repo() -> None:
    # as written, the example reads <repo>/../shared (where the project keeps its shared data), so
    # `callbluff run examples/asap-aes-shufflesent.toml` works from a checkout that sits beside it
    from callbluff.datasets.base import parse_spec

    suite = load_suite(ASAP_EXAMPLE)
    name, path, options = parse_spec(suite.dataset_spec())
    assert name == "asap-aes" and options.get("prompts") == "1,2"
    assert Path(path) == EXAMPLES.parent.parent.joinpath("shared", *ASAP_FILE).resolve()


@pytest.mark.slow
def test_asap_example_on_real_data(tmp_path: Path) -> None:
    from helpers import shared_path

    data = shared_path(*ASAP_FILE)  # skips, saying what is missing, when ../shared is absent
    suite = load_suite(ASAP_EXAMPLE)
    # the example names <repo>/../shared; the shared directory may be elsewhere (CALLBLUFF_SHARED)
    suite.dataset.spec = suite.dataset.spec.replace("../../shared/" + "/".join(ASAP_FILE), str(data))
    assert str(data) in suite.dataset.spec, suite.dataset.spec
    result = run_suite(suite, tmp_path / "run", limit=80)
    assert result.counts["records"] == 80 and result.counts["examples"] >= 70
    rows = json.loads((tmp_path / "run" / "metrics.json").read_text())
    # shuffling sentences keeps the length, so a length scorer never changes its score (overstable)
    assert all(r["abs_mean_diff_pct"] == 0 for r in rows if r["attack"] == "ShuffleSent")
