"""Issue 39 (Hardening III): each finding reproduced first against real components (a real HTTP server on
127.0.0.1, real runs into real directories, the real CLI in a subprocess where the terminal is part of the
finding). Every test here failed before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from helpers import REPO, TESTS

# two secrets holding `"` and `\` (the JSON-escaped and repr forms differ from the raw one)
HTTP_TOKEN = 'tk-Z7q1W9e3"R5t8\\Y2u4I6o0P-a1'
CHAT_KEY = 'sk-fake-qu"ote\\back-7Hd93kLq0Zx2Pw5'


def cli_env(**extra: str) -> dict[str, str]:
    """This process's environment with the sources and the test helpers importable by a subprocess."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO / "src"), str(TESTS), env.get("PYTHONPATH", "")])
    env.update(extra)
    return env


def run_cli(args: list[str], env: dict[str, str], timeout: float = 240) -> tuple[int, str]:
    """``callbluff ARGS`` in a subprocess, as a user runs it: exit code and the terminal (stdout + stderr)."""
    proc = subprocess.run([sys.executable, "-m", "callbluff.cli", *args], cwd=REPO, env=env, timeout=timeout,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


# -- a leaky server: the HTTP scorer and the chat grader echo the Authorization header -------------------------
class LeakyServer:
    """A real HTTP server on 127.0.0.1 that echoes the request's Authorization header (``Bearer <secret>``) into
    every place a target's reply reaches callbluff, chosen by a marker word in the input's text.

    ``POST /score`` (an ``http`` target, ``response_path = "score"``): ``E400`` a plain-text 400 whose body
    quotes the header after 130 characters; ``EJSON400`` the same as a JSON error object (the secret
    JSON-escaped); ``EMAL`` a 200 that is not JSON; ``EPATH`` a 200 JSON object without ``score`` that quotes
    it; anything else ``{"score": 1}``.

    ``POST /v1/chat/completions`` (an ``openai`` target): every reply's ``model``, ``system_fingerprint`` and
    ``finish_reason`` hold the header; ``EMAL`` a reply whose content is prose quoting it after 170
    characters; ``ERETRY`` a 503 whose error message quotes it; anything else ``{"score": 1}``."""

    def __init__(self) -> None:
        outer = self
        self.requests = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                auth = str(self.headers.get("Authorization"))
                outer.requests += 1
                if self.path == "/score":
                    self._score(str(body.get("text", "")), auth)
                else:
                    user = [m["content"] for m in body["messages"] if m["role"] == "user"][-1]
                    self._chat(user, auth)

            def _score(self, text: str, auth: str) -> None:
                if "EJSON400" in text:
                    self._send(400, json.dumps({"error": "e" * 130 + " key=" + auth}).encode())
                elif "E400" in text:
                    self._send(400, ("x" * 130 + " token=" + auth).encode(), "text/plain")
                elif "EMAL" in text:
                    self._send(200, ("{" + "y" * 130 + " " + auth).encode())
                elif "EPATH" in text:
                    self._send(200, json.dumps({"note": "z" * 130 + auth, "echo": auth}).encode())
                else:
                    self._send(200, json.dumps({"score": 1}).encode())

            def _chat(self, user: str, auth: str) -> None:
                if "ERETRY" in user:
                    self._send(503, json.dumps({"error": {"message": "o" * 100 + " overloaded for " + auth}}).encode())
                    return
                content = "w" * 170 + " " + auth if "EMAL" in user else json.dumps({"score": 1})
                self._send(200, json.dumps({
                    "id": "c1", "object": "chat.completion", "model": "fake-" + auth,
                    "system_fingerprint": "fp_" + auth,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                                 "finish_reason": "stop_" + auth}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 3}}).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> LeakyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def _escapes(text: str) -> set[str]:
    """``text`` as it may be stored: raw, JSON-escaped, repr-escaped, and each of those JSON-escaped again."""
    once = {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1], repr(text)[1:-1],
            repr(text.replace('"', "'"))[1:-1]}
    return once | {json.dumps(t)[1:-1] for t in once} | {repr(t)[1:-1] for t in once}


def leaked_prefixes(secret: str, blob: str) -> list[str]:
    """The prefixes of ``secret`` of 8 characters or more that ``blob`` holds in any stored form."""
    return [p for n in range(8, len(secret) + 1) for p in [secret[:n]] if any(f in blob for f in _escapes(p))]


def stored_text(path: Path) -> str:
    """Everything ``path`` holds as text: its bytes, and for a Parquet file every value of every column (a
    compressed page need not hold a string's bytes as written)."""
    text = path.read_bytes().decode("utf-8", "replace")
    if path.suffix == ".parquet":
        try:
            table = pq.read_table(path)
        except Exception:  # noqa: BLE001 - a part being written: its bytes were read above
            return text
        text += "\n".join(str(v) for col in table.columns for v in col.to_pylist())
    return text


def assert_nothing_leaked(places: dict[str, str]) -> None:
    leaks = {where: {name: leaked_prefixes(secret, blob)[-1:]}
             for where, blob in places.items()
             for name, secret in (("http token", HTTP_TOKEN), ("chat key", CHAT_KEY))
             if leaked_prefixes(secret, blob)}
    assert not leaks, f"a prefix of a secret (8+ characters) was stored: {leaks}"


def leak_suite(tmp_path: Path, url: str, texts: list[str], *, chat: bool = True, http: bool = True) -> Path:
    data = tmp_path / "answers.jsonl"
    with open(data, "w", encoding="utf-8") as fh:
        for i, t in enumerate(texts):
            fh.write(json.dumps({"id": f"a{i:03d}", "prompt_id": "p1", "text": t, "score": 1}) + "\n")
    targets = ""
    if http:
        targets += f"""
[[target]]
name = "api"
type = "http"
url = "{url}/score"
body_template = {{ text = "${{text}}" }}
response_path = "score"
headers = {{ Authorization = "Bearer ${{CB39_TOKEN}}" }}
retries = 1
backoff = 0.01
"""
    if chat:
        targets += f"""
[[target]]
name = "grader"
type = "openai"
base_url = "{url}/v1"
model = "stand-in"
api_key_env = "CB39_KEY"
response_format = "json_object"
retries = 1
backoff = 0.01
"""
    suite = tmp_path / "leak.toml"
    suite.write_text(f"""
name = "leak"
seed = 1
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
{targets}
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
chunk_size = 4
""", encoding="utf-8")
    return suite


def run_dir_files(run: Path) -> Iterator[Path]:
    return (p for p in run.rglob("*") if p.is_file())


# -- 1 + 2: an echoed secret is never stored, cut or whole, in any form ----------------------------------------
def test_an_echoed_secret_is_scrubbed_before_it_is_cut_everywhere(tmp_path: Path) -> None:
    texts = ["a fine answer about pandas", "E400 bamboo is food", "EJSON400 koala eats leaves",
             "EMAL eucalyptus risk", "EPATH forest habitat", "ERETRY the species needs food",
             "another fine answer", "EMAL habitat loss"]
    env = cli_env(CB39_TOKEN=HTTP_TOKEN, CB39_KEY=CHAT_KEY)
    with LeakyServer() as srv:
        code, out = run_cli(["run", str(leak_suite(tmp_path, srv.url, texts)), "--out", str(tmp_path / "run")], env)
    run = tmp_path / "run"
    assert (run / "report.html").exists() and (run / "errors.jsonl").exists(), out
    errors = (run / "errors.jsonl").read_text(encoding="utf-8")
    # the causes are still there, with the secret replaced
    for cause in ("HTTP 400 (not retried)", "malformed JSON", "response path 'score' not found",
                  "unparseable reply (not JSON)", "HTTP 503"):
        assert cause in errors, cause
    assert "***" in errors
    usage = json.loads((run / "run.json").read_text())["target_stats"]["grader"]["usage"]
    assert usage["models"] == ["fake-Bearer ***"] and usage["system_fingerprints"] == ["fp_Bearer ***"]
    assert set(usage["finish_reasons"]) == {"stop_Bearer ***"}
    places = {str(p): stored_text(p) for p in run_dir_files(run)}
    places["terminal"] = out
    assert any(p.endswith("predictions.sqlite") for p in places)
    assert_nothing_leaked(places)


def test_the_preflight_stop_message_never_holds_a_cut_secret(tmp_path: Path) -> None:
    texts = [f"EMAL answer number {i}" for i in range(6)]
    env = cli_env(CB39_TOKEN=HTTP_TOKEN, CB39_KEY=CHAT_KEY)
    with LeakyServer() as srv:
        code, out = run_cli(["run", str(leak_suite(tmp_path, srv.url, texts, http=False)),
                             "--out", str(tmp_path / "run")], env)
    assert code == 1 and "did not answer its first call" in out and "unparseable reply" in out, out
    places = {str(p): stored_text(p) for p in run_dir_files(tmp_path / "run")}
    places["terminal"] = out
    assert_nothing_leaked(places)


def test_a_chat_servers_model_fingerprint_and_finish_reason_are_scrubbed_in_run_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.api import run_suite
    from callbluff.engine.suite import load_suite

    monkeypatch.setenv("CB39_KEY", CHAT_KEY)
    with LeakyServer() as srv:
        suite = leak_suite(tmp_path, srv.url, [f"a fine answer {i}" for i in range(4)], http=False)
        result = run_suite(load_suite(suite), tmp_path / "run")
    usage = result.target_stats["grader"]["usage"]
    assert usage["replies"] >= 4 and usage["models"] == ["fake-Bearer ***"]
    assert usage["system_fingerprints"] == ["fp_Bearer ***"] and set(usage["finish_reasons"]) == {"stop_Bearer ***"}
    meta = (tmp_path / "run" / "run.json").read_text(encoding="utf-8")
    assert '"stop_Bearer ***"' in meta
    assert_nothing_leaked({str(p): stored_text(p) for p in run_dir_files(tmp_path / "run")})


def test_the_output_check_scrubs_a_secret_cut_by_someone_else() -> None:
    """A text cut before it reached the check (a stderr tail, another adapter's snippet): the piece of the
    secret beside the cut mark is scrubbed as well as the whole secret in its escaped forms."""
    from callbluff.targets.base import Input, Output
    from callbluff.targets.validate import OutputCheck

    check = OutputCheck("score", secrets=(HTTP_TOKEN,))
    inp = Input("content", "x", None)
    for text in (f"reply {HTTP_TOKEN[:14]}...", f"...{HTTP_TOKEN[9:]} | exit 1", json.dumps({"k": HTTP_TOKEN}),
                 repr(f"say {HTTP_TOKEN}"), repr(json.dumps(HTTP_TOKEN))[:30] + "..."):
        out = check(inp, Output(error=text))
        assert out.error is not None and "***" in out.error, text
        assert not leaked_prefixes(HTTP_TOKEN, out.error), (text, out.error)
    assert check(inp, Output(error="a plain cause...")).error == "a plain cause..."


# -- 6: a command that fails its first inputs while warming up passes the pre-flight ------------------------------
WARMING_SCORER = """
import json, sys
warm_up = int(sys.argv[1])
for n, line in enumerate(sys.stdin):
    req = json.loads(line)
    out = {"id": req["id"], "error": "still loading the model"} if n < warm_up else {"id": req["id"], "score": 1}
    print(json.dumps(out), flush=True)
"""


def warming_suite(tmp_path: Path, warm_up: int) -> Path:
    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps({"id": f"a{i}", "prompt_id": "p1", "text": f"answer number {i}",
                                        "score": 1}) + "\n" for i in range(8)), encoding="utf-8")
    script = tmp_path / "warming.py"
    script.write_text(WARMING_SCORER, encoding="utf-8")
    suite = tmp_path / f"warm{warm_up}.toml"
    suite.write_text(f"""
name = "warming"
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "slow-start"
type = "command"
argv = ["{sys.executable}", "{script}", "{warm_up}"]
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
report = false
""", encoding="utf-8")
    return suite


def test_a_command_failing_its_first_three_inputs_while_warming_up_passes_the_preflight(tmp_path: Path) -> None:
    from callbluff.api import run_suite
    from callbluff.engine.suite import load_suite

    result = run_suite(load_suite(warming_suite(tmp_path, 3)), tmp_path / "run")
    counts = result.counts["per_target"]["slow-start"]
    assert counts["original_ok"] == 8 and counts["n_errors_original"] == 0  # the three were asked again


def test_a_target_that_warms_up_longer_is_stopped_naming_the_switch(tmp_path: Path) -> None:
    from callbluff.api import run_suite
    from callbluff.engine.run import TargetUnavailable
    from callbluff.engine.suite import load_suite

    with pytest.raises(TargetUnavailable) as e:
        run_suite(load_suite(warming_suite(tmp_path, 6)), tmp_path / "run")
    msg = str(e.value)
    assert "still loading the model" in msg and "nor the same inputs asked again" in msg, msg
    assert "preflight = false" in msg and "[output]" in msg, msg


# -- 7: the same text three times does not let a dead target through -----------------------------------------------
def test_the_preflight_stops_a_dead_target_whose_first_inputs_are_the_same_text(tmp_path: Path) -> None:
    import socket

    from callbluff.api import run_suite
    from callbluff.engine.run import TargetUnavailable
    from callbluff.engine.suite import load_suite

    with socket.socket() as s:  # a port nothing listens on: connections are refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = tmp_path / "answers.jsonl"
    texts = ["I don't know"] * 3 + [f"an answer with {i} words in it" for i in range(12)]
    data.write_text("".join(json.dumps({"id": f"a{i:02d}", "prompt_id": "p1", "text": t, "score": 0}) + "\n"
                            for i, t in enumerate(texts)), encoding="utf-8")
    suite = tmp_path / "dead.toml"
    suite.write_text(f"""
name = "dead"
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "api"
type = "http"
url = "http://127.0.0.1:{port}/score"
response_path = "score"
retries = 0
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
report = false
""", encoding="utf-8")
    with pytest.raises(TargetUnavailable, match="target api did not answer its first call"):
        run_suite(load_suite(suite), tmp_path / "run")
    assert not list((tmp_path / "run" / "parts").glob("*.examples.parquet"))  # stopped before the first chunk


def test_the_cached_target_preflight_counts_answers_not_failures() -> None:
    from callbluff.targets import CallableTarget
    from callbluff.targets.base import Input, Output
    from callbluff.targets.wrappers import CachedTarget

    same = [Input("content", "I don't know", "p1")] * 3
    dead = CachedTarget(CallableTarget(lambda s: Output(error="HTTP 503"), fingerprint="d"), None)
    assert dead.preflight(same) == "HTTP 503"
    alive = CachedTarget(CallableTarget(lambda s: 1.0, fingerprint="a"), None)
    assert alive.preflight(same) is None


# -- 8, 9: version_url is asked as any call: capped, retried, a server that stays down is a target failure ---------
class VersionServer:
    """A real HTTP server on 127.0.0.1: ``GET /version`` answers by ``mode``: ``"bomb"`` a gzip body that
    inflates to ``bomb_mb`` MB of zeros, ``"flaky"`` a 500 on the first request and ``deploy-7`` after,
    ``"down"`` always a 500; ``POST /score`` answers ``{"score": 1}``. ``version_requests`` counts the GETs."""

    def __init__(self, mode: str, bomb_mb: int = 256) -> None:
        import gzip

        outer = self
        self.mode = mode
        self.version_requests = 0
        self.bomb = gzip.compress(b"\0" * (bomb_mb << 20), compresslevel=9) if mode == "bomb" else b""

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, extra: dict[str, str] | None = None) -> None:
                self.send_response(status)
                for k, v in (extra or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                outer.version_requests += 1
                if outer.mode == "bomb":
                    self._send(200, outer.bomb, {"Content-Encoding": "gzip", "Content-Type": "text/plain"})
                elif outer.mode == "flaky" and outer.version_requests > 1:
                    self._send(200, b"deploy-7")
                else:
                    self._send(500, b'{"error": "version service restarting"}')

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self._send(200, b'{"score": 1}', {"Content-Type": "application/json"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.server.handle_error = lambda *a: None  # type: ignore[method-assign]  # a client that stops reading
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> VersionServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def test_a_version_url_gzip_bomb_stops_at_max_response_bytes() -> None:
    import resource

    from callbluff.targets import HttpTarget
    from callbluff.targets.config import TargetConfigError

    with VersionServer("bomb", bomb_mb=256) as srv:
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        with pytest.raises(TargetConfigError, match="max_response_bytes = 1,048,576 bytes") as e:
            HttpTarget(srv.url + "/score", version_url=srv.url + "/version", max_response_bytes=1 << 20)
        grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert f"version_url {srv.url}/version" in str(e.value) and srv.version_requests == 1  # not retried
    assert grown_mb < 64, f"peak RSS grew by {grown_mb:.0f} MB reading a capped reply"


def test_a_version_url_500_is_retried_like_any_call() -> None:
    from callbluff.targets import HttpTarget

    with VersionServer("flaky") as srv:
        t = HttpTarget(srv.url + "/score", version_url=srv.url + "/version", backoff=0.01)
        assert srv.version_requests == 2
    import hashlib

    assert t.fingerprint.endswith("|served=" + hashlib.sha256(b"deploy-7").hexdigest()[:16])


def test_a_version_url_that_stays_down_is_a_target_failure_exit_1(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from callbluff.cli import app

    data = tmp_path / "answers.jsonl"
    data.write_text("".join(json.dumps({"id": f"a{i}", "prompt_id": "p1", "text": f"answer {i}", "score": 1})
                            + "\n" for i in range(4)), encoding="utf-8")
    with VersionServer("down") as srv:
        suite = tmp_path / "down.toml"
        suite.write_text(f"""
name = "down"
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "api"
type = "http"
url = "{srv.url}/score"
response_path = "score"
version_url = "{srv.url}/version"
retries = 2
backoff = 0.01
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
""", encoding="utf-8")
        r = CliRunner().invoke(app, ["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"])
        asked = srv.version_requests
    assert r.exit_code == 1, r.output
    assert asked == 3, asked  # the first request and its two retries
    text = " ".join(r.output.split())
    assert f"version_url {srv.url}/version: HTTP 500 after 3 attempts" in text, text


# -- 10: a lone part of another run is recomputed, not merged -----------------------------------------------------
def test_a_lone_part_copied_in_from_another_run_is_recomputed(tmp_path: Path) -> None:
    """Another suite's originals part copied over one of this run's (this run's own status.json and examples
    part left beside it): the copied part carries its own run's fingerprint, so the chunk is recomputed."""
    import shutil

    import pandas as pd

    from callbluff.api import run_suite
    from callbluff.engine.suite import load_suite
    from helpers.data import write_answers

    data = write_answers(tmp_path / "answers.jsonl", n=30)

    def suite(name: str) -> Path:
        p = tmp_path / f"{name}.toml"
        p.write_text(f"""
name = "{name}"
seed = 3
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "{name}"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
chunk_size = 10
report = false
""", encoding="utf-8")
        return p

    run_suite(load_suite(suite("alpha")), tmp_path / "mine")
    run_suite(load_suite(suite("beta")), tmp_path / "other")
    lone = tmp_path / "other" / "parts" / "000001.originals.parquet"
    assert set(pd.read_parquet(lone)["target"]) == {"beta"}
    shutil.copy(lone, tmp_path / "mine" / "parts" / lone.name)
    result = run_suite(load_suite(suite("alpha")), tmp_path / "mine")
    originals = pd.read_parquet(tmp_path / "mine" / "originals.parquet")
    assert set(originals["target"]) == {"alpha"} and len(originals) == 30
    assert any(n.startswith("chunk 1: 000001.originals.parquet belongs to another run") for n in result.notes), \
        result.notes
    assert pq.read_metadata(tmp_path / "mine" / "parts" / "000001.originals.parquet").metadata[
        b"callbluff.fingerprint"] == json.loads((tmp_path / "mine" / "parts" / "000001.status.json").read_text()
                                                )["fingerprint"].encode()


# -- 3: compare --fail-on-regression never passes without a test ------------------------------------------------
@pytest.fixture(scope="module")
def two_versions(small_run: Any) -> dict[str, Path]:
    """v1 scores essays by length (a deletion lowers the score), v2 gives every essay 4 (never lowered: worse on
    DelRand); twelve demo essays each (:func:`helpers.runs.versions_suite`)."""
    from helpers.runs import versions_suite

    return {v: small_run(versions_suite(f, name=v, target="scorer", seed=1, limit=12)).run_dir
            for v, f in (("v1", "essay_length_scorer"), ("v2", "constant_scorer"))}


def _candidate_without(src: Path, dst: Path, *names: str) -> Path:
    """A copy of the run directory ``src`` without ``names`` (what a CI job that keeps the small files has)."""
    import shutil

    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("parts", "predictions.sqlite*", *names))
    return dst


def test_compare_fail_on_regression_tests_the_counts_when_examples_parquet_is_missing(
        two_versions: dict[str, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from callbluff.cli import app
    from callbluff.cli.compare import REGRESSION_EXIT

    cand = _candidate_without(two_versions["v2"], tmp_path / "v2", "examples.parquet", "originals.parquet")
    r = CliRunner().invoke(app, ["compare", str(two_versions["v1"]), str(cand), "--fail-on-regression",
                                 "--out", str(tmp_path / "c.html")], env={"COLUMNS": "250"})
    assert r.exit_code == REGRESSION_EXIT, r.output  # was 0: "not testable", no test run
    text = " ".join(r.output.split())
    assert "regression: v2 / scorer vs v1 / scorer: DelRand (percent=30" in text, text
    assert "1 regression(s) beyond noise" in text and "clean QWK" not in text.split("error:")[-1], text
    assert "Fisher exact on the metric rows' counts" in text, text
    assert "examples.parquet is missing" in text, text


def test_compare_fail_on_regression_exits_2_when_nothing_can_be_tested(
        two_versions: dict[str, Path], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from callbluff.cli import app

    cand = _candidate_without(two_versions["v2"], tmp_path / "v2", "examples.parquet", "originals.parquet")
    rows = json.loads((cand / "metrics.json").read_text())
    (cand / "metrics.json").write_text(json.dumps([{k: v for k, v in r.items() if k != "n_judged"} for r in rows]))
    r = CliRunner().invoke(app, ["compare", str(two_versions["v1"]), str(cand), "--fail-on-regression",
                                 "--out", str(tmp_path / "c.html")], env={"COLUMNS": "250"})
    assert r.exit_code == 2, r.output
    text = " ".join(r.output.split())
    assert "could not be tested" in text and f"{cand / 'examples.parquet'} is missing" in text, text
    # without the flag the comparison is still shown, with the figures and "not testable"
    r = CliRunner().invoke(app, ["compare", str(two_versions["v1"]), str(cand), "--out", str(tmp_path / "c.html")],
                           env={"COLUMNS": "250"})
    assert r.exit_code == 0 and "not testable: 2" in " ".join(r.output.split()), r.output


# -- 5: compare on a malformed run names the file ----------------------------------------------------------------
@pytest.mark.parametrize("damage", ["run.json is a list", "a metrics row without attack", "not parquet"])
def test_compare_on_a_malformed_run_exits_2_naming_the_file(two_versions: dict[str, Path], tmp_path: Path,
                                                           damage: str) -> None:
    from typer.testing import CliRunner

    from callbluff.cli import app

    cand = _candidate_without(two_versions["v2"], tmp_path / "v2")
    if damage == "run.json is a list":
        (cand / "run.json").write_text("[]")
        named = cand / "run.json"
    elif damage == "a metrics row without attack":
        rows = json.loads((cand / "metrics.json").read_text())
        del rows[1]["attack"]
        (cand / "metrics.json").write_text(json.dumps(rows))
        named = cand / "metrics.json"
    else:
        (cand / "examples.parquet").write_text("not a parquet file\n")
        named = cand / "examples.parquet"
    r = CliRunner().invoke(app, ["compare", str(two_versions["v1"]), str(cand), "--out", str(tmp_path / "c.html")],
                           env={"COLUMNS": "250"})
    assert r.exit_code == 2 and r.exception is None or isinstance(r.exception, SystemExit), r.exception
    text = " ".join(r.output.split())
    assert r.exit_code == 2 and str(named) in text and "Traceback" not in text, (r.exit_code, text)


# -- 4: report on a read-only run directory ----------------------------------------------------------------------
READ_ONLY_DRIVER = """
import json, sys, traceback
from typer.testing import CliRunner
from callbluff.cli import app
out = []
for args in json.loads(sys.argv[1]):
    r = CliRunner().invoke(app, args, env={"COLUMNS": "250"})
    crash = None if r.exception is None or isinstance(r.exception, SystemExit) else \
        "".join(traceback.format_exception(r.exception))
    out.append({"code": r.exit_code, "output": r.output, "crash": crash})
print(json.dumps(out))
"""


def _read_only(run: Path, invocations: list[list[str]]) -> list[dict[str, Any]]:
    """``callbluff ARGS`` for each of ``invocations``, in one subprocess that sees ``run`` on a read-only bind
    mount (a private mount namespace: a real EROFS, as for an archived CI artefact): exit code, output and any
    uncaught exception of each. Skips where namespaces are not allowed."""
    import shlex
    import shutil

    if shutil.which("unshare") is None:
        pytest.skip("needs unshare(1) for a read-only mount in a private namespace")
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"unshare -rm is not allowed here: {probe.stderr.decode(errors='replace').strip()}")
    r = shlex.quote(str(run))
    cmd = (f"mount --bind {r} {r} && mount -o remount,ro,bind {r} {r} && exec "
           + shlex.join([sys.executable, "-c", READ_ONLY_DRIVER, json.dumps(invocations)]))
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", cmd], cwd=REPO, env=cli_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_report_on_a_read_only_run_directory_exits_2_naming_the_path_and_out(
        two_versions: dict[str, Path], tmp_path: Path) -> None:
    import shutil

    run = tmp_path / "archived"
    shutil.copytree(two_versions["v1"], run)
    here, elsewhere = _read_only(run, [["report", str(run)],
                                       ["report", str(run), "--out", str(tmp_path / "elsewhere.html")]])
    text = " ".join(here["output"].split())
    assert here["code"] == 2 and here["crash"] is None, here  # was: OSError, traceback, exit 1
    assert "Read-only file system" in text and str(run / "report.html") in text and "--out" in text, text
    assert elsewhere["code"] == 0 and elsewhere["crash"] is None, elsewhere
    assert (tmp_path / "elsewhere.html").exists()


# -- 11: one consistent promise about secrets in the README -----------------------------------------------------
def test_the_readme_makes_one_promise_about_secrets() -> None:
    """The README states the scrubbing's limit once (the Secrets paragraph) and nowhere promises more: no line
    says a secret "never" reaches a file or is "never written" anywhere."""
    import re

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    text = " ".join(readme.split())
    absolute = re.findall(r"[^.`]*(?:never reach|never written|never stored)[^.`]*", text, flags=re.I)
    about_secrets = [a for a in absolute if re.search(r"secret|\$\{VAR\}|key|token", a, flags=re.I)]
    assert not about_secrets, about_secrets
    assert "That is a limit, not a guarantee against every echo" in text
    assert "JSON- and repr-escaped" in text and "`...` cut" in text


# -- 12: the kept records are not alive while the report reads its sample ------------------------------------------
def test_the_kept_records_are_released_before_the_report_is_written(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A file under 64 MB is parsed once and its records kept for the run (docs/scale-out.md): they go before
    the report reads its example sample, so the two do not add up in the run's peak memory."""
    import gc

    import callbluff.api as api
    from callbluff.engine.suite import load_suite
    from callbluff.records import ScoredResponse
    from helpers.data import write_answers

    data = write_answers(tmp_path / "answers.jsonl", n=600)
    suite = tmp_path / "kept.toml"
    suite.write_text(f"""
name = "kept"
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "kw"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
""", encoding="utf-8")
    alive: list[int] = []
    write_report = api.write_report

    def records_alive() -> int:
        gc.collect()
        return sum(type(o) is ScoredResponse for o in gc.get_objects())

    def counting(run_dir: Any, **kwargs: Any) -> Any:
        alive.append(records_alive() - before)  # this run's records, not those other tests keep
        return write_report(run_dir, **kwargs)

    monkeypatch.setattr(api, "write_report", counting)
    before = records_alive()
    api.run_suite(load_suite(suite), tmp_path / "run")
    assert len(alive) == 1 and alive[0] < 50, alive  # was 600: every kept record
    assert (tmp_path / "run" / "report.html").exists()
