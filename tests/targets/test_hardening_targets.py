"""Target hardening (issue 28, the targets' defects): each reproduced first against a real callable run through
the CLI, a real command, or a real HTTP server on 127.0.0.1, bounded in time. Every test here failed before
its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import REPO, pythonpath_env
from helpers.data import write_answers


def cli(args: list[str], env: dict[str, str] | None = None, timeout: float = 300) -> tuple[int, str]:
    """``callbluff ARGS`` in a subprocess (stdout and stderr together), bounded by ``timeout`` seconds."""
    proc = subprocess.run([sys.executable, "-m", "callbluff.cli", *args], cwd=REPO, env=pythonpath_env(env),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    return proc.returncode, proc.stdout


# #2: a callable target calling sys.exit(n) ends the whole run ------------------------------------------------
EXITING = '''
import sys


def exits_zero(text):
    sys.exit(0)


def raises_three(text):
    raise SystemExit(3)
'''


def test_callable_calling_sys_exit_becomes_an_error_row_and_the_run_exits_1(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)
    (tmp_path / "exiting.py").write_text(EXITING)
    suite = tmp_path / "suite.toml"
    suite.write_text(f"""
name = "exits"
seed = 1
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "zero"
type = "callable"
function = "exiting:exits_zero"
[[target]]
name = "three"
type = "callable"
function = "exiting:raises_three"
[output]
report = false
""")
    run = tmp_path / "run"
    # the pre-flight stops the run at the first target's first call, naming the cause (exit 1: a target failure)
    code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
    assert code == 1 and "target zero did not answer its first call" in out and "sys.exit(0)" in out, out
    # without it, every input is an error row and the run finishes
    suite.write_text(suite.read_text().replace("report = false", "report = false\npreflight = false"))
    code, out = cli(["run", str(suite), "--out", str(run), "--quiet", "--restart"])
    assert code == 1, out  # all predictions failed: not 0 (a green CI) and not 3 (a gate)
    assert "predictions failed" in out, out
    errors = [json.loads(line) for line in (run / "errors.jsonl").read_text().splitlines()]
    causes = {e["target"]: e["cause"] for e in errors}
    assert "target called sys.exit(0)" in causes["zero"], causes
    assert "target called sys.exit(3)" in causes["three"], causes
    assert json.loads((run / "run.json").read_text())["status"] == "finished"


def test_keyboard_interrupt_in_a_callable_still_stops_the_run() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.callables import CallableTarget

    def interrupted(text: str) -> float:
        raise KeyboardInterrupt

    for batched in (False, True):
        t = CallableTarget((lambda texts: interrupted(texts[0])) if batched else interrupted, batched=batched)
        with pytest.raises(KeyboardInterrupt):
            t.predict([Input("content", "a"), Input("content", "b")])


def test_any_target_calling_sys_exit_in_predict_is_an_error_per_input() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.wrappers import CachedTarget

    class Quitter:
        fingerprint = "quitter"

        def predict(self, inputs: Any) -> Any:
            sys.exit(2)

    outs = CachedTarget(Quitter(), None).predict([Input("content", "a"), Input("content", "b")])
    assert [o.error for o in outs] == ["target called sys.exit(2)"] * 2


# #5: a command target's stdin write has no timeout -----------------------------------------------------------
def _bounded_predict(target: Any, inputs: list[Any], within: float) -> tuple[list[Any], float]:
    """``target.predict(inputs)`` on a thread; fails (killing the command) if it takes more than ``within`` s."""
    import threading
    import time

    result: list[Any] = []
    t0 = time.monotonic()
    worker = threading.Thread(target=lambda: result.extend(target.predict(inputs)), daemon=True)
    worker.start()
    worker.join(within)
    elapsed = time.monotonic() - t0
    if worker.is_alive():
        for _ in range(50):  # our own children: kill each hung process until predict returns
            pid = target.pid
            if pid is not None:
                try:
                    os.kill(pid, 9)
                except ProcessLookupError:
                    pass
            worker.join(0.5)
            if not worker.is_alive():
                break
        pytest.fail(f"predict still blocked after {within:g}s (the stdin write is not bounded by the timeout)")
    return result, elapsed


def test_a_command_that_never_reads_its_stdin_times_out_instead_of_hanging() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.command import CommandTarget

    t = CommandTarget([sys.executable, "-c", "import time; time.sleep(120)"], timeout=1.0, startup_timeout=1.0)
    big = "word " * 66_000  # 330 KB: far more than a pipe buffer
    try:
        outs, elapsed = _bounded_predict(t, [Input("content", big), Input("content", big + "x")], within=30)
    finally:
        t.close()
    assert all(o.error is not None for o in outs)
    assert "did not read its input within 1s" in outs[0].error, outs[0].error
    assert "command restarted" in outs[0].error
    assert elapsed < 10, elapsed


def test_a_command_hung_at_start_up_with_a_large_input_fails_after_its_startup_timeout() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.command import CommandTarget

    slow_start = ("import sys, time, json\ntime.sleep(8)\n"
                  "for line in sys.stdin:\n    print(json.dumps({'score': 1}), flush=True)\n")
    t = CommandTarget([sys.executable, "-c", slow_start], timeout=1.0, startup_timeout=1.0)
    try:
        outs, elapsed = _bounded_predict(t, [Input("content", "word " * 66_000)], within=30)
    finally:
        t.close()
    assert outs[0].error is not None and "within 1s" in outs[0].error, outs[0].error
    assert elapsed < 5, elapsed  # not the 8 s start-up


def test_a_command_that_never_reads_fails_fast_after_five_fresh_processes() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.command import CommandTarget

    t = CommandTarget([sys.executable, "-c", "import time; time.sleep(120)"], timeout=0.5, startup_timeout=0.5)
    big = "word " * 66_000
    try:
        outs, elapsed = _bounded_predict(t, [Input("content", big + str(i)) for i in range(9)], within=60)
    finally:
        t.close()
    assert all(o.error is not None for o in outs)
    assert sum(o.error.startswith("timeout: the command did not read its input") for o in outs) == 5
    assert all(o.error.startswith("not sent: the command failed 5 times in a row") for o in outs[5:])
    assert elapsed < 15, elapsed


# a real HTTP server on 127.0.0.1 answering every request with ``reply(handler) -> (status, headers, body)`` ----
class ReplyServer:
    """``with ReplyServer(reply) as srv``: ``srv.url``; ``srv.paths`` are the request paths as received."""

    def __init__(self, reply: Any) -> None:
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.paths: list[str] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.paths.append(self.path)
                status, headers, body = reply(self)
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_POST = do_GET = _any

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __enter__(self) -> ReplyServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# #9 / #22: a secret in the URL query ---------------------------------------------------------------------------
TOKEN = 'tok en"<b>#frag&x=1+y/z'


def _secret_forms(value: str) -> list[str]:
    import base64
    from urllib.parse import quote, quote_plus

    return [value, quote(value, safe=""), quote(value), quote_plus(value),
            base64.b64encode(value.encode()).decode(), base64.urlsafe_b64encode(value.encode()).decode()]


def test_a_url_secret_is_percent_encoded_whole_and_every_form_of_it_is_scrubbed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from urllib.parse import parse_qs, urlsplit

    from callbluff.targets.base import Input
    from callbluff.targets.http_target import HttpTarget

    monkeypatch.setenv("CALLBLUFF_T28_KEY", TOKEN)
    received: list[dict[str, list[str]]] = []

    def echo(h: Any) -> tuple[int, dict[str, str], bytes]:
        received.append(parse_qs(urlsplit(h.path).query))
        # a server echoing the request in every form it might: the path as sent, decoded, base64
        return 403, {"Content-Type": "text/plain"}, " | ".join([h.path, *_secret_forms(TOKEN)]).encode()

    with ReplyServer(echo) as srv:
        t = HttpTarget(srv.url + "/score?key=${CALLBLUFF_T28_KEY}&other=1", retries=0, timeout=5)
        outs = t.predict([Input("content", "some answer")])
        t.close()
    assert received == [{"key": [TOKEN], "other": ["1"]}]  # neither truncated at '#' nor split at '&'
    err = outs[0].error
    assert err is not None and "HTTP 403" in err and "***" in err
    for form in _secret_forms(TOKEN):
        assert form not in err, (form, err)


def test_the_output_check_scrubs_the_encoded_forms_of_a_secret() -> None:
    from callbluff.targets.base import Input, Output
    from callbluff.targets.validate import OutputCheck

    check = OutputCheck("answer", secrets=(TOKEN,))
    for form in _secret_forms(TOKEN):
        out = check(Input("reading", "q"), Output(answer=f"echo: {form} end"))
        assert out.answer == "echo: *** end", (form, out)


# #14: retries has no upper bound ---------------------------------------------------------------------------------
def test_retries_are_capped_and_a_retrying_target_needs_a_backoff() -> None:
    from callbluff.targets.config import TargetConfigError, validate_target_config
    from callbluff.targets.http_target import HttpTarget

    base = {"type": "http", "url": "http://127.0.0.1:9/score"}
    with pytest.raises(TargetConfigError, match=r"target\[0\]: key 'retries': .*at most 20"):
        validate_target_config({**base, "retries": 1_000_000, "backoff": 0.5}, "target[0]")
    with pytest.raises(TargetConfigError, match=r"key 'backoff'.*at least 0.01"):
        validate_target_config({**base, "retries": 5, "backoff": 0}, "target[0]")
    with pytest.raises(TargetConfigError, match="retries"):
        HttpTarget(base["url"], retries=21)
    assert validate_target_config({**base, "retries": 20, "backoff": 0.01}).retries == 20
    assert validate_target_config({**base, "retries": 0, "backoff": 0}).backoff == 0


# #15: no cap on reply size (a gzip bomb) -------------------------------------------------------------------------
def test_a_reply_larger_than_max_response_bytes_once_decoded_is_an_error_row() -> None:
    import gzip

    from callbluff.targets.base import Input
    from callbluff.targets.http_target import HttpConfig
    from callbluff.targets.http_target import HttpTarget

    bomb = gzip.compress(b'{"score": 1, "pad": "' + b"0" * 5_000_000 + b'"}')  # ~5 KB on the wire, 5 MB decoded
    small = gzip.compress(b'{"score": 2}')

    def reply(h: Any) -> tuple[int, dict[str, str], bytes]:
        body = bomb if "bomb" in h.path else small
        return 200, {"Content-Type": "application/json", "Content-Encoding": "gzip"}, body

    assert HttpConfig(url="http://127.0.0.1:9/").max_response_bytes == 10 * 2**20  # a default cap
    with ReplyServer(reply) as srv:
        t = HttpTarget(srv.url + "/bomb", response_path="score", retries=2, backoff=0.01, max_response_bytes=1_000_000)
        ok = HttpTarget(srv.url + "/fine", response_path="score", max_response_bytes=1_000_000)
        outs = t.predict([Input("content", "a")])
        fine = ok.predict([Input("content", "a")])
        t.close()
        ok.close()
    assert len(bomb) < 1_000_000
    assert outs[0].error is not None and "max_response_bytes = 1,000,000" in outs[0].error, outs[0].error
    assert len(srv.paths) == 2  # not retried: a bigger reply will not shrink (one bomb, one fine request)
    assert fine[0].score == 2.0


# #19: a redirect is reported as `HTTP 302 (not retried): ''` -----------------------------------------------------
def test_a_redirect_names_its_location_and_why_it_is_not_followed() -> None:
    from callbluff.targets.base import Input
    from callbluff.targets.http_target import HttpTarget

    def moved(h: Any) -> tuple[int, dict[str, str], bytes]:
        return 302, {"Location": "https://elsewhere.example/v2/score"}, b""

    with ReplyServer(moved) as srv:
        t = HttpTarget(srv.url + "/score", retries=3, backoff=0.01)
        outs = t.predict([Input("content", "a")])
        t.close()
    err = outs[0].error
    assert err is not None and err.startswith("HTTP 302 redirect to 'https://elsewhere.example/v2/score'"), err
    assert "not followed" in err and "Authorization" in err, err
    assert len(srv.paths) == 1  # asked once: not followed, not retried


# #21: an unset ${VAR} in a header gives one error row per input instead of stopping before any work -----------
def test_an_unset_variable_in_a_target_stops_the_run_before_any_work_with_exit_2(tmp_path: Path) -> None:
    data = write_answers(tmp_path / "answers.jsonl", n=6)

    def score(h: Any) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/json"}, b'{"score": 1}'

    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLBLUFF_T28_")}
    with ReplyServer(score) as srv:
        suite = tmp_path / "suite.toml"
        suite.write_text(f"""
name = "unset"
seed = 1
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "fine"
type = "callable"
function = "helpers.scorers:keyword_scorer"
pass_input = true
[[target]]
name = "api"
type = "http"
url = "{srv.url}/score"
response_path = "score"
headers = {{ Authorization = "Bearer ${{CALLBLUFF_T28_UNSET}}" }}
[output]
report = false
""")
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"], env)
        assert srv.paths == []
    assert code == 2, out
    assert "CALLBLUFF_T28_UNSET" in out and "not set" in out and "headers" in out, out
    assert not (tmp_path / "run").exists()  # refused before the run directory is touched


def test_an_unset_variable_in_a_command_env_is_named_when_the_target_is_built(tmp_path: Path) -> None:
    from callbluff.engine.target_factory import from_config
    from callbluff.targets.config import TargetConfigError

    os.environ.pop("CALLBLUFF_T28_UNSET", None)
    with pytest.raises(TargetConfigError, match=r"target\[1\]: key 'env'.*CALLBLUFF_T28_UNSET.*not set"):
        from_config({"type": "command", "argv": [sys.executable, "-c", "pass"],
                     "env": {"KEY": "${CALLBLUFF_T28_UNSET}"}}, where="target[1]")
