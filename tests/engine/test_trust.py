"""Issue 27: a run never presents reused predictions as fresh, and failures say their cause.

Against real HTTP servers on 127.0.0.1 driven through the ``callbluff`` command: a scorer redeployed behind the
same URL (its ``version`` bumped in the suite) is asked again and its new scores are the run's; a re-run with
nothing changed says how many predictions it reused and from when; a suite changed in what it measures is
refused with the fix; a dead port stops the run at the pre-flight; a server that dies mid-run is stopped by the
circuit breaker while the other target's run finishes.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
from typer.testing import CliRunner

from callbluff.cli import app

from helpers import REPO
from helpers.data import write_answers


class VersionedScorer:
    """A real scoring server on 127.0.0.1: ``version`` 1 scores the number of words mod 4, version 2 scores
    3 minus that (a redeploy that changes every answer). ``die_after``: after that many answered requests the
    server closes its socket (the port refuses connections, as a crashed server's does). ``requests`` counts
    what it answered."""

    def __init__(self, version: int = 1, die_after: int | None = None) -> None:
        self.version = version
        self.die_after = die_after
        self.requests = 0
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"  # one request per connection: a closed server refuses the next

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # /version: what is deployed
                data = json.dumps({"model": "scorer", "version": outer.version}).encode()
                self.send_response(200 if self.path == "/version" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                with outer.lock:
                    outer.requests += 1
                    n = outer.requests
                    score = len(body["text"].split()) % 4
                    data = json.dumps({"score": score if outer.version == 1 else 3 - score}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                if outer.die_after is not None and n == outer.die_after:
                    threading.Thread(target=outer.stop, daemon=True).start()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._stopped = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/score"

    def stop(self) -> None:
        with self.lock:
            if self._stopped:
                return
            self._stopped = True
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> VersionedScorer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def dead_port() -> int:
    """A 127.0.0.1 port nothing listens on (bound, then closed: connections are refused)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def suite_file(tmp_path: Path, data: Path, url: str, *, version: str | None = None, extra: str = "",
               attack_params: str = 'tokenizer = "whitespace"', more_targets: str = "") -> Path:
    p = tmp_path / "suite.toml"
    p.write_text(f"""
name = "trust"
seed = 5
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "api"
type = "http"
url = "{url}"
body_template = {{ text = "${{text}}", prompt_id = "${{prompt_id}}" }}
response_path = "score"
timeout = 5
concurrency = 4
{f'version = "{version}"' if version else ""}
{extra}
{more_targets}
[[attack]]
name = "Shuffle"
params = {{ {attack_params} }}
[output]
chunk_size = 40
batch_size = 16
report = false
""")
    return p


def cli(args: list[str], timeout: float | None = None) -> tuple[int, str]:
    """``callbluff ARGS`` as a user runs it: in a subprocess when the time it takes is part of the test
    (``timeout``: a loose bound, not a timed assertion), else in this process (Typer's runner: no start-up)."""
    if timeout is not None:
        proc = subprocess.run([sys.executable, "-m", "callbluff.cli", *args], cwd=REPO, env=dict(os.environ),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
        return proc.returncode, proc.stdout
    res = CliRunner().invoke(app, args)
    return res.exit_code, res.output


def scores(run: Path) -> dict[str, float]:
    o = pd.read_parquet(run / "originals.parquet")
    return dict(zip(o["source_id"], o["score"]))


def test_a_redeployed_target_is_asked_again_and_its_new_predictions_are_the_runs(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=60)
    run = tmp_path / "run"
    with VersionedScorer(version=1) as srv:
        code, out = cli(["run", str(suite_file(tmp_path, data, srv.url, version="1")), "--out", str(run), "--quiet"])
        assert code == 0, out
        assert "(none reused)" in out, out
        v1 = scores(run)
        asked_v1 = srv.requests
        srv.version = 2  # the redeploy: same URL, new answers; the suite says so with its version key
        code, out = cli(["run", str(suite_file(tmp_path, data, srv.url, version="2")), "--out", str(run), "--quiet"])
        assert code == 0, out  # the same suite with a new target version: not refused, asked again
    assert "target api changed since this directory's last run" in out, out
    assert srv.requests >= asked_v1 > 0  # every input asked again (the cache has nothing for version 2)
    v2 = scores(run)
    assert v2.keys() == v1.keys()
    assert all(v2[k] == 3 - v1[k] for k in v1)  # the new predictions, not the cached ones
    meta = json.loads((run / "run.json").read_text())
    assert meta["targets"]["api"]["fingerprint"].endswith("|version=2")
    assert meta["predictions"]["api"]["reused"] == 0 and meta["predictions"]["api"]["asked"] > 0
    ex = pd.read_parquet(run / "examples.parquet")
    assert ex["adv_score"].notna().all()


def test_a_redeploy_the_server_names_is_asked_again_without_editing_the_suite(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=40)
    run = tmp_path / "run"
    with VersionedScorer(version=1) as srv:
        suite = suite_file(tmp_path, data, srv.url, extra=f'version_url = "{srv.url.rsplit("/", 1)[0]}/version"')
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
        assert code == 0, out
        v1 = scores(run)
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])  # same deploy: all reused
        assert code == 0 and "asked 0 new" in out, out
        srv.version = 2  # redeployed behind the same URL; the suite file is not touched
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
        assert code == 0, out
    assert "target api changed since this directory's last run" in out and "(none reused)" in out, out
    v2 = scores(run)
    assert all(v2[k] == 3 - v1[k] for k in v1)
    # a version_url that does not answer (asked as any call, with its retries): the run does not start, a target
    # failure (exit 1, naming the URL and the cause; issue 39 item 9)
    code, out = cli(["run", str(suite_file(tmp_path, data, f"http://127.0.0.1:{dead_port()}/score",
                                           extra=f'version_url = "http://127.0.0.1:{dead_port()}/version"')),
                     "--out", str(tmp_path / "run2"), "--quiet"])
    assert code == 1 and "version_url http://127.0.0.1:" in out and "connection error" in out, out


def test_a_rerun_with_nothing_changed_says_what_it_reused_and_from_when(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=60)
    run = tmp_path / "run"
    with VersionedScorer() as srv:
        suite = suite_file(tmp_path, data, srv.url)
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
        assert code == 0, out
        first = json.loads((run / "run.json").read_text())
        valid = sum(c["original_ok"] + c["adversarial_ok"] for c in first["counts"]["per_target"].values())
        asked = srv.requests
        # resumed: every chunk finished, nothing asked, and the terminal says the predictions are an earlier run's
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
        assert code == 0, out
        assert srv.requests == asked
        day = re.escape(first["started"][:10])
        assert re.search(rf"predictions: reused {valid:,} predictions cached {day} \d\d:\d\d(-[\d: -]+)? UTC; "
                         r"asked 0 new", out), out
        # --restart keeps the cache: the answers now come from it, and are still not presented as fresh
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet", "--restart"])
        assert code == 0, out
        assert srv.requests == asked
    assert re.search(rf"reused {valid:,} predictions cached {day} .* UTC; asked 0 new", out), out
    code, again = cli(["report", str(run)])  # the report command says it too, from run.json
    assert code == 0 and re.search(rf"reused {valid:,} predictions cached", again), again
    html = (run / "report.html").read_text()
    assert re.search(rf"Predictions: <b>reused {valid:,} predictions cached {day} [^<]* UTC; asked 0 new</b>", html)
    meta = json.loads((run / "run.json").read_text())
    p = meta["predictions"]["api"]
    assert p["reused"] == valid and p["asked"] == 0 and p["reused_first"] <= p["reused_last"]
    assert p["line"].startswith(f"reused {valid:,} predictions cached")


def test_a_suite_that_measures_something_else_is_refused_with_the_fix(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=20)
    run = tmp_path / "run"
    with VersionedScorer() as srv:
        code, out = cli(["run", str(suite_file(tmp_path, data, srv.url)), "--out", str(run), "--quiet"])
        assert code == 0, out
        changed = suite_file(tmp_path, data, srv.url, attack_params='tokenizer = "spacy"')
        code, out = cli(["run", str(changed), "--out", str(run), "--quiet"])
    assert code == 2, out
    assert "holds a run of a different suite" in out and "--restart" in out and "--out" in out, out
    assert "(what differs: attack)" in " ".join(out.split()), out


def test_the_preflight_stops_a_run_against_a_dead_port_with_the_cause(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=100)
    run = tmp_path / "run"
    url = f"http://127.0.0.1:{dead_port()}/score"
    # default retries (3, backoff 0.5 s): the pre-flight's three inputs fail together in a few seconds; the
    # subprocess timeout bounds it loosely (before the pre-flight, 100 records took 11.9 s to fail one by one)
    code, out = cli(["run", str(suite_file(tmp_path, data, url)), "--out", str(run), "--quiet"], timeout=60)
    assert code == 1, out  # a target failure, as documented
    assert "target api did not answer its first call (records a0000, a0001, a0002)" in out, out
    assert "connection" in out.lower() and "after 4 attempts" in out, out
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "failed" and "did not answer" in meta["error"]
    assert not list((run / "parts").glob("*.examples.parquet"))  # stopped before the first chunk


def test_the_circuit_breaker_stops_a_dying_target_and_the_run_finishes_for_the_other(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=100)
    run = tmp_path / "run"
    with VersionedScorer() as healthy, VersionedScorer(die_after=3) as dying:
        other = f"""
[[target]]
name = "healthy"
type = "http"
url = "{healthy.url}"
body_template = {{ text = "${{text}}" }}
response_path = "score"
"""
        suite = suite_file(tmp_path, data, dying.url, more_targets=other,
                           extra="retries = 1\nbackoff = 0.05\nmax_consecutive_failures = 10")
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
    assert code == 1, out  # the dying target's predictions failed (over --max-error-rate)
    assert "target api was stopped after 10 failed predictions in a row" in out, out
    assert "the most frequent causes" in out and "x api: not asked: target api was stopped" in out, out
    meta = json.loads((run / "run.json").read_text())
    assert meta["status"] == "finished"
    c = meta["counts"]["per_target"]
    inputs = c["api"]["original_inputs"] + c["api"]["adversarial_inputs"]
    failed = c["api"]["n_errors_original"] + c["api"]["n_errors_adversarial"]
    assert c["api"]["original_ok"] == 3 and failed == inputs - 3  # never a silent zero: every other one an error row
    assert c["healthy"]["n_errors_original"] == c["healthy"]["n_errors_adversarial"] == 0
    assert c["healthy"]["original_inputs"] == 100
    # sent after the death: the failures the breaker allows, plus at most one batch of the streaming call
    assert meta["target_stats"]["api"]["inputs"] <= 3 + 10 + 16
    assert "stopped" in meta["predictions"]["api"] and "stopped" not in meta["predictions"]["healthy"]
    errors = [json.loads(line) for line in (run / "errors.jsonl").read_text().splitlines()]
    assert all(e["target"] == "api" for e in errors)
    skipped = [e for e in errors if e["cause"].startswith("not asked: target api was stopped")]
    assert len(skipped) >= inputs - 3 - 10 - 16 and all("last cause:" in e["cause"] for e in skipped)
    assert any(r["target"] == "healthy" and r["attack"] == "Shuffle" for r in json.loads(
        (run / "metrics.json").read_text()))


def test_the_preflight_asks_the_first_record_of_each_of_the_first_prompts() -> None:
    from callbluff.engine.run import preflight_records
    from callbluff.records import ScoredResponse

    def rec(i: int, pid: str) -> ScoredResponse:
        return ScoredResponse(id=f"r{i}", prompt_id=pid, text=f"answer {i}", scores=(1.0,))

    by_prompt = [rec(i, "1") for i in range(10)] + [rec(i, "2") for i in range(10, 20)] + [rec(20, "3")]
    # ASAP files are sorted by prompt: a scorer without a model for prompt 1 still answers prompt 2 or 3
    assert [r.id for r in preflight_records(by_prompt)] == ["r0", "r10", "r20"]
    assert [r.id for r in preflight_records(by_prompt[:15])] == ["r0", "r10", "r1"]
    assert [r.id for r in preflight_records(by_prompt[:2])] == ["r0", "r1"]
    assert preflight_records([]) == []
