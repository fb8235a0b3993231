"""Issue 40, item 9: the version a server names through ``version_url`` is shown as its text (run.json, the note of
a changed target, the report's header, target table and multi-run overview), not only as a hash."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from callbluff.engine.run import run_suite
from callbluff.report.html import write_report
from callbluff.targets.http_target import version_text
from helpers.data import write_answers


class Deployed:
    """A scoring server on 127.0.0.1 whose ``/version`` names ``version`` (changeable: a redeploy)."""

    def __init__(self) -> None:
        self.version = "v2.1"
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, payload: Any) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_GET(self) -> None:
                self._send({"model": "essay-scorer", "version": outer.version, "built": "2026-11-20"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self._send({"score": len(body["text"].split()) % 4})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def deployed() -> Iterator[Deployed]:
    d = Deployed()
    yield d
    d.server.shutdown()


def test_version_text() -> None:
    assert version_text('{"model": "m", "version": "v2.1"}') == "v2.1"
    assert version_text('{"model_version": 7}') == "7"
    assert version_text("  build 2026-11-20\n commit abc123 ") == "build 2026-11-20 commit abc123"
    assert version_text("x" * 100).endswith("…") and len(version_text("x" * 100)) == 60


def test_the_served_version_is_shown_as_text(deployed: Deployed, tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=20)
    suite = {"name": "versioned", "seed": 1, "dataset": {"spec": f"jsonl:{data}?task=content&score_min=0&score_max=3"},
             "target": [{"name": "api", "type": "http", "url": deployed.url + "/score",
                         "version_url": deployed.url + "/version"}],
             "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}], "output": {"report": False}}
    run = tmp_path / "run"
    run_suite(suite, run)
    meta = json.loads((run / "run.json").read_text())
    assert meta["targets"]["api"]["version"] == "v2.1"
    deployed.version = "v2.2"  # redeployed behind the same URL
    again = run_suite(suite, run)
    assert any("target api changed" in n and "version v2.1 -> v2.2" in n for n in again.notes), again.notes
    html = write_report(run).read_text(encoding="utf-8")
    assert "api version <b>v2.2</b>" in html  # the header
    assert "<td class=\"l\">v2.2</td>" in html  # the target table
    both = write_report([run, run], out=tmp_path / "both.html").read_text(encoding="utf-8")
    assert '<span class="note">version v2.2</span>' in both  # the multi-run overview
