"""Engine hardening (issue 8): each finding reproduced against a real server or command on 127.0.0.1, as a
hostile or clumsy user would meet it. Every test here failed before the fix."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from callbluff.api import run_suite
from callbluff.engine.store import RunDirError
from callbluff.engine.suite import load_suite

from helpers import REPO
from helpers.data import write_answers


class ScriptedServer:
    """A real HTTP server on 127.0.0.1 answering ``POST /`` with ``reply(body, headers) -> (status, json)``.

    It counts every request by (text, prompt_id) server-side, so tests can tell which inputs were asked twice.
    """

    def __init__(self, reply: Callable[[dict[str, Any], Any], tuple[int, Any]], delay: float = 0.0) -> None:
        self.reply = reply
        self.delay = delay
        self.calls: collections.Counter[tuple[str, str | None]] = collections.Counter()
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                if outer.delay:
                    time.sleep(outer.delay)
                with outer.lock:
                    outer.calls[(body.get("text"), body.get("prompt_id"))] += 1
                status, payload = outer.reply(body, self.headers)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __enter__(self) -> ScriptedServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def word_score(text: str) -> int:
    return len(text.split()) % 4


def http_suite(tmp_path: Path, data: Path, url: str, *, extra: str = "", attack: bool = True, chunk: int = 40,
               task: str = "content", name: str = "suite.toml") -> Path:
    attack_table = '[[attack]]\nname = "Shuffle"\nparams = { tokenizer = "whitespace" }\n' if attack else ""
    text = f"""
name = "hardening"
seed = 3
[dataset]
spec = "jsonl:{data}?task={task}&score_min=0&score_max=3"
[[target]]
name = "api"
type = "http"
url = "{url}"
body_template = {{ text = "${{text}}", prompt_id = "${{prompt_id}}" }}
response_path = "score"
retries = 0
timeout = 5
concurrency = 4
{extra}
{attack_table}
[output]
chunk_size = {chunk}
batch_size = 16
"""
    p = tmp_path / name
    p.write_text(text)
    return p


def cli(args: list[str], env: dict[str, str] | None = None, wait: bool = True) -> Any:
    proc = subprocess.Popen([sys.executable, "-m", "callbluff.cli", *args], cwd=REPO, env=env or dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not wait:
        return proc
    out, _ = proc.communicate(timeout=300)
    return proc.returncode, out


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    return write_answers(tmp_path / "answers.jsonl", n=60)


def check_invariant(run: Path) -> dict[str, Any]:
    """Every original and adversarial input is exactly one of a valid prediction or an error row."""
    meta = json.loads((run / "run.json").read_text())
    orig = pd.read_parquet(run / "originals.parquet")
    ex = pd.read_parquet(run / "examples.parquet")
    errors = [json.loads(line) for line in (run / "errors.jsonl").read_text().splitlines()]
    for name, c in meta["counts"]["per_target"].items():
        o, x = orig[orig["target"] == name], ex[ex["target"] == name]
        assert c["original_ok"] + c["n_errors_original"] == c["original_inputs"] == len(o)
        assert c["adversarial_ok"] + c["n_errors_adversarial"] == c["adversarial_inputs"] == len(x)
        assert ((o["score"].notna() | o["answer"].notna()) ^ o["error"].notna()).all()
        assert ((x["adv_score"].notna() | x["adv_answer"].notna()) ^ x["adv_error"].notna()).all()
    assert sum(e["stage"] == "predict_original" for e in errors) == meta["counts"]["n_errors_original"]
    assert sum(e["stage"] == "predict_adversarial" for e in errors) == meta["counts"]["n_errors_adversarial"]
    return meta


# 1. a numeric string from a scorer is its number, never a silent "answer" ------------------------------------
def test_score_as_json_string_is_read_as_a_number(tmp_path: Path, answers: Path) -> None:
    with ScriptedServer(lambda b, h: (200, {"score": str(word_score(b["text"]))})) as srv:
        result = run_suite(load_suite(http_suite(tmp_path, answers, srv.url)), tmp_path / "run")
    meta = check_invariant(tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    assert orig["error"].isna().all() and (orig["score"] == orig["source_id"].map(
        {json.loads(line)["id"]: word_score(json.loads(line)["text"]) for line in answers.read_text().splitlines()})).all()
    clean = [r for r in result.metrics if r["attack"] == "clean"]
    assert sum(r["n"] for r in clean) == 60 and meta["counts"]["n_errors_original"] == 0
    shuffle = [r for r in result.metrics if r["attack"] == "Shuffle" and r["prompt"] != "all"]
    assert sum(r["n"] for r in shuffle) == meta["counts"]["examples"]


def test_a_word_where_a_score_is_needed_is_an_error_row(tmp_path: Path, answers: Path) -> None:
    with ScriptedServer(lambda b, h: (200, {"score": "high" if "koala" in b["text"] else 1})) as srv:
        run_suite(load_suite(http_suite(tmp_path, answers, srv.url, attack=False)), tmp_path / "run")
    check_invariant(tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    bad = orig[orig["error"].notna()]
    assert len(bad) and (bad["error"] == "expected a score, got the answer 'high'").all()
    assert bad["score"].isna().all()


# 2. a score outside the prompt's scale is an error (or clipped, when asked for explicitly) -----------------------
@pytest.mark.parametrize("mode", ["error", "clip"])
def test_out_of_range_score_from_http(tmp_path: Path, answers: Path, mode: str) -> None:
    with ScriptedServer(lambda b, h: (200, {"score": 99 if "panda" in b["text"] else 1})) as srv:
        extra = f'out_of_range = "{mode}"' if mode == "clip" else ""
        result = run_suite(load_suite(http_suite(tmp_path, answers, srv.url, extra=extra)), tmp_path / "run")
    check_invariant(tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    panda = orig["source_id"].isin([json.loads(line)["id"] for line in answers.read_text().splitlines()
                                    if "panda" in json.loads(line)["text"]])
    assert panda.sum() > 5
    if mode == "error":
        assert orig.loc[panda, "score"].isna().all()
        assert set(orig.loc[panda, "error"]) == {
            f'score 99 outside 0-3 for prompt {p} (fix the target, or set out_of_range = "clip" on it)'
            for p in orig.loc[panda, "prompt_id"]}
        for r in result.metrics:  # the statistics never see 99
            assert r.get("mean_diff_pct") is None or abs(r["mean_diff_pct"]) <= 100
    else:
        assert (orig.loc[panda, "score"] == 3).all() and orig["error"].isna().all()
        assert result.target_stats["api"]["clipped"] == panda.sum() + sum(
            1 for t in pd.read_parquet(tmp_path / "run" / "examples.parquet")["adversarial_text"] if "panda" in t)


SCORER_CMD = """
import json, os, sys
log = open(os.environ["CALL_LOG"], "a")
for line in sys.stdin:
    req = json.loads(line)
    log.write(json.dumps([req["text"], req["prompt_id"]]) + "\\n"); log.flush()
    if os.environ.get("SLOW"):
        import time; time.sleep(float(os.environ["SLOW"]))
    score = 99 if "eucalyptus" in req["text"] else len(req["text"].split()) % 4
    print(json.dumps({"id": req["id"], "score": score}), flush=True)
"""


def command_suite(tmp_path: Path, data: Path, log: Path, chunk: int = 40) -> Path:
    script = tmp_path / "scorer_cmd.py"
    script.write_text(SCORER_CMD)
    p = tmp_path / "cmd.toml"
    p.write_text(f"""
seed = 3
[dataset]
spec = "jsonl:{data}?task=content&score_min=0&score_max=3"
[[target]]
name = "cmd"
type = "command"
argv = ["{sys.executable}", "{script}"]
env = {{ CALL_LOG = "{log}" }}
[[attack]]
name = "Shuffle"
params = {{ tokenizer = "whitespace" }}
[output]
chunk_size = {chunk}
batch_size = 16
""")
    return p


def test_out_of_range_score_from_a_command(tmp_path: Path, answers: Path) -> None:
    result = run_suite(load_suite(command_suite(tmp_path, answers, tmp_path / "calls.log")), tmp_path / "run")
    check_invariant(tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    euc = orig[orig["error"].notna()]
    assert len(euc) > 3 and all(e.startswith("score 99 outside 0-3 for prompt p") for e in euc["error"])
    # clean rows: the failed originals of their prompt; Shuffle rows: its examples whose original failed (the
    # three shuffled answers of p1 that say "eucalyptus"); the pooled row adds them up
    rows = {(r["attack"], r["prompt"]): r["n_errors_original"] for r in result.metrics}
    assert rows == {("clean", "p1"): 8, ("clean", "p2"): 7, ("Shuffle", "p1"): 3, ("Shuffle", "p2"): 0,
                    ("Shuffle", "all"): 3}
    assert {p: rows["clean", p] for p in ("p1", "p2")} == euc.groupby("prompt_id").size().to_dict()


# 3. kill -9, then resume: at most the calls in flight are asked again ---------------------------------------------
def _kill_mid_run(args: list[str], run_dir: Path, env: dict[str, str], min_parts: int = 2) -> None:
    proc = cli(args, env, wait=False)
    deadline = time.time() + 120
    while time.time() < deadline and len(list((run_dir / "parts").glob("*.examples.parquet"))) < min_parts:
        time.sleep(0.01)
    time.sleep(0.13)  # well inside a chunk: requests in flight
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert not (run_dir / "metrics.json").exists(), "the run should have been killed mid-way"


@pytest.mark.slow
def test_kill_9_with_http_target_repeats_at_most_concurrency(tmp_path: Path, answers: Path) -> None:
    with ScriptedServer(lambda b, h: (200, {"score": word_score(b["text"])}), delay=0.02) as srv:
        suite = http_suite(tmp_path, answers, srv.url, chunk=10)
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "ref"), "--quiet"])
        assert code == 0, out
        reference = dict(srv.calls)
        assert set(reference.values()) == {1}
        srv.calls.clear()
        run = tmp_path / "run"
        _kill_mid_run(["run", str(suite), "--out", str(run), "--quiet"], run, dict(os.environ))
        code, out = cli(["run", str(suite), "--out", str(run), "--quiet"])
        assert code == 0, out
        repeated = {k: n for k, n in srv.calls.items() if n > 1}
    assert set(srv.calls) == set(reference)
    assert len(repeated) <= 4, f"{len(repeated)} inputs asked twice (concurrency is 4): {repeated}"
    assert json.loads((run / "metrics.json").read_text()) == json.loads((tmp_path / "ref" / "metrics.json").read_text())


@pytest.mark.slow
def test_kill_9_with_command_target_repeats_at_most_one_call(tmp_path: Path, answers: Path) -> None:
    ref_log, log = tmp_path / "ref.log", tmp_path / "calls.log"
    env = {**os.environ, "SLOW": "0.01"}
    code, out = cli(["run", str(command_suite(tmp_path, answers, ref_log, chunk=10)), "--out",
                     str(tmp_path / "ref"), "--quiet"], env)
    assert code == 0, out
    suite = command_suite(tmp_path, answers, log, chunk=10)
    run = tmp_path / "run"
    _kill_mid_run(["run", str(suite), "--out", str(run), "--quiet"], run, env)
    code, out = cli(["run", str(suite), "--out", str(run), "--quiet"], env)
    assert code == 0, out
    calls = collections.Counter(tuple(json.loads(line)) for line in log.read_text().splitlines())
    reference = collections.Counter(tuple(json.loads(line)) for line in ref_log.read_text().splitlines())
    # errors (score 99) are asked again on every run by design (retried on resume): leave them out
    errors = {k for k, n in reference.items() if "eucalyptus" in k[0]}
    repeated = {k: n for k, n in calls.items() if n > reference[k] and k not in errors}
    assert set(calls) == set(reference)
    assert len(repeated) <= 1, repeated
    assert json.loads((run / "metrics.json").read_text()) == json.loads((tmp_path / "ref" / "metrics.json").read_text())


# 4. recorded errors are retried on resume (by default) ------------------------------------------------------------
def test_errors_are_retried_on_resume_unless_told_not_to(tmp_path: Path, answers: Path) -> None:
    def reply(body: dict[str, Any], headers: Any) -> tuple[int, Any]:
        if headers.get("Authorization") != "Bearer tok-fixed-later":
            return 401, {"error": "unauthorised"}
        return 200, {"score": word_score(body["text"])}

    env = {**os.environ, "CALLBLUFF_T8_TOKEN": "tok-expired"}  # (an unset one stops the run: exit 2, issue 28)
    with ScriptedServer(reply) as srv:
        suite = http_suite(tmp_path, answers, srv.url,
                           extra='headers = { Authorization = "Bearer ${CALLBLUFF_T8_TOKEN}" }')
        # the pre-flight would stop this run at its first call (tests/engine/test_failures.py): off, so that
        # every input becomes an error row to retry
        suite.write_text(suite.read_text().replace("[output]", "[output]\npreflight = false"))
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"], env)
        assert code == 1 and "all" in out and "predictions failed" in out, out
        first = json.loads((tmp_path / "run" / "run.json").read_text())["counts"]
        assert first["n_errors_original"] == 60
        assert "HTTP 401" in (tmp_path / "run" / "errors.jsonl").read_text()
        srv.calls.clear()
        env["CALLBLUFF_T8_TOKEN"] = "tok-wrong"
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet", "--no-retry-errors"], env)
        assert code == 1 and not srv.calls  # kept the old errors, asked nothing
        env["CALLBLUFF_T8_TOKEN"] = "tok-fixed-later"
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"], env)
        assert code == 0, out
        assert "retried the failed predictions" in out
    meta = check_invariant(tmp_path / "run")
    assert meta["counts"]["errors"] == 0 and meta["status"] == "finished"
    assert set(srv.calls.values()) == {1}  # every input asked once with the right token


# 5. a damaged run directory: recovered where possible, otherwise a message naming the file and the fix -------------
def _calls(suite: Path, run: Path, srv: ScriptedServer, *args: str) -> tuple[int, str, int]:
    srv.calls.clear()
    code, out = cli(["run", str(suite), "--out", str(run), "--quiet", *args])
    return code, out, sum(srv.calls.values())


def test_damaged_run_directory(tmp_path: Path, answers: Path) -> None:
    with ScriptedServer(lambda b, h: (200, {"score": word_score(b["text"])})) as srv:
        suite = http_suite(tmp_path, answers, srv.url, chunk=20)
        run = tmp_path / "run"
        code, out, n_first = _calls(suite, run, srv)
        assert code == 0
        reference = (run / "metrics.json").read_text()
        # a deleted part and a truncated part: recomputed from the cache, no target call
        (run / "parts" / "000001.originals.parquet").unlink()
        part = run / "parts" / "000002.examples.parquet"
        part.write_bytes(part.read_bytes()[:100])
        code, out, n = _calls(suite, run, srv)
        assert code == 0 and n == 0, out
        assert "chunk 1: 000001.originals.parquet is missing; recomputed" in out
        assert "chunk 2: 000002.examples.parquet is unreadable" in out
        assert (run / "metrics.json").read_text() == reference
        # a truncated run.json: a clear message, exit 2, and --restart fixes it without asking the target again
        (run / "run.json").write_text('{"fingerprint": "ab')
        code, out, n = _calls(suite, run, srv)
        assert code == 2 and f"{run / 'run.json'} is damaged" in out and "--restart" in out and n == 0
        code, out, n = _calls(suite, run, srv, "--restart")
        assert code == 0 and n == 0 and (run / "metrics.json").read_text() == reference
        # a truncated prediction cache: named, with the fix; the run is marked failed, not left "running"
        db = run / "predictions.sqlite"
        db.write_bytes(db.read_bytes()[:1000])
        code, out, n = _calls(suite, run, srv)
        assert code == 2 and "predictions.sqlite: the prediction cache is damaged" in out and "--restart" in out
        assert n == 0
        code, out, n = _calls(suite, run, srv, "--restart")
        assert code == 0 and n == n_first and "predictions.sqlite" in out
        assert (run / "metrics.json").read_text() == reference


def test_a_failed_run_is_marked_failed(tmp_path: Path, answers: Path) -> None:
    from callbluff.engine.run import Engine

    class Boom(Exception):
        pass

    def scorer(text: str) -> float:
        if "koala" in text:
            raise Boom()  # user code raising is an error row, never a crash
        return 1.0

    from callbluff.targets import CallableTarget

    suite = load_suite(http_suite(tmp_path, answers, "http://127.0.0.1:9/", attack=False))
    engine = Engine(suite, tmp_path / "run", targets={"api": CallableTarget(scorer)})
    engine.progress = lambda stage, done, total: (_ for _ in ()).throw(KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        engine.execute()
    assert json.loads((tmp_path / "run" / "run.json").read_text())["status"] == "interrupted"
    (tmp_path / "run" / "parts").mkdir(exist_ok=True)
    bad = tmp_path / "run" / "predictions.sqlite"
    bad.write_bytes(b"not a database at all" * 100)
    with pytest.raises(RunDirError):
        Engine(suite, tmp_path / "run", targets={"api": CallableTarget(scorer)}).execute()


# 6. exit codes and split error counts ------------------------------------------------------------------------------
def test_exit_codes_and_split_error_counts(tmp_path: Path, answers: Path) -> None:
    # originals fail for 'koala' answers; adversarial (shuffled) inputs fail when their length is even
    originals = {json.loads(line)["text"] for line in answers.read_text().splitlines()}

    def reply(body: dict[str, Any], headers: Any) -> tuple[int, Any]:
        text = body["text"]
        bad = "koala" in text if text in originals else len(text) % 2 == 0
        return (500, {"error": "down"}) if bad else (200, {"score": word_score(text)})

    with ScriptedServer(reply) as srv:
        suite = http_suite(tmp_path, answers, srv.url)
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet"])
        assert code == 0, out
        meta = check_invariant(tmp_path / "run")
        c = meta["counts"]
        assert c["n_errors_original"] > 0 and c["n_errors_adversarial"] > 0
        ex = pd.read_parquet(tmp_path / "run" / "examples.parquet")
        rows = json.loads((tmp_path / "run" / "metrics.json").read_text())
        for r in rows:
            if r["attack"] == "Shuffle" and r["prompt"] != "all":
                g = ex[ex["prompt_id"] == r["prompt"]]
                assert r["n_errors_original"] == g["orig_error"].notna().sum()
                assert r["n_errors_adversarial"] == g["adv_error"].notna().sum()
                assert r["n"] == (g["orig_error"].isna() & g["adv_error"].isna()).sum()
        share = (c["n_errors_original"] + c["n_errors_adversarial"]) / c["predictions"]
        code, out = cli(["run", str(suite), "--out", str(tmp_path / "run"), "--quiet", "--no-retry-errors",
                         "--max-error-rate", f"{share / 2:.4f}"])
        assert code == 1 and "--max-error-rate" in out
    code, out = cli(["run", str(tmp_path / "nope.toml"), "--out", str(tmp_path / "x")])
    assert code == 2 and "suite file not found" in out
    code, out = cli(["run", "--help"])
    assert code == 0 and "Exit codes" in out


def test_an_input_spacy_refuses_is_counted_in_its_row(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from callbluff.resources.context import default_resources

    # spaCy refuses texts longer than the pipeline's max_length (E088); callbluff raises it to 20 MB for
    # sentence splitting, so lower it here to meet the refusal with a small text
    monkeypatch.setattr(default_resources().sentencizer, "max_length", 100_000)
    data = tmp_path / "essays.jsonl"
    huge = "The essay goes on. " * 11_000  # 209,000 characters: refused (E088)
    rows = [{"id": "big", "prompt_id": "1", "text": huge, "score": 4}] + [
        {"id": f"e{i}", "prompt_id": "1", "text": f"First sentence {i}. Second one here. Third one {i}.", "score": 3}
        for i in range(4)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "s.toml").write_text(f"""
[dataset]
spec = "jsonl:{data}?task=essay&score_min=1&score_max=6"
[[target]]
name = "len"
type = "callable"
function = "helpers.scorers:length_scorer"
out_of_range = "clip"
[[attack]]
name = "ShuffleSent"
""")
    result = run_suite(load_suite(tmp_path / "s.toml"), tmp_path / "run")
    [row] = [r for r in result.metrics if r["attack"] == "ShuffleSent"]
    assert row["n"] == 4 and row["n_errors_generate"] == 1
    errors = [json.loads(line) for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert [e["source_id"] for e in errors if e["stage"] == "generate"] == ["big"]
    assert result.counts["n_errors_generate"] == 1


# 7. a secret echoed back inside the value is never written --------------------------------------------------------
def test_secret_echoed_in_the_answer_is_scrubbed_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok-" + os.urandom(8).hex()
    monkeypatch.setenv("CALLBLUFF_T8_SECRET", token)
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "1.1", "data": [{"title": "T", "paragraphs": [{
        "context": "The Normans were descended from Norse raiders.",
        "qas": [{"id": f"q{i}", "question": f"Who were the Normans {i}?",
                 "answers": [{"text": "Norse raiders", "answer_start": 32}]} for i in range(5)]}]}]}))

    def reply(body: dict[str, Any], headers: Any) -> tuple[int, Any]:
        auth = headers.get("Authorization")
        return 200, {"answer": f"debug {auth}", "candidates": [[f"x {auth}", 1.0]]}

    with ScriptedServer(reply) as srv:
        (tmp_path / "s.toml").write_text(f"""
[dataset]
spec = "squad:{squad}"
[[target]]
name = "bot"
type = "http"
url = "{srv.url}"
headers = {{ Authorization = "${{CALLBLUFF_T8_SECRET}}" }}
""")
        run_suite(load_suite(tmp_path / "s.toml"), tmp_path / "run")
    orig = pd.read_parquet(tmp_path / "run" / "originals.parquet")
    assert set(orig["answer"]) == {"debug ***"}
    for f in (tmp_path / "run").rglob("*"):
        if f.is_file():
            assert token.encode() not in f.read_bytes(), f"secret leaked into {f}"


def test_a_question_without_gold_answers_is_left_out_of_ranking_not_a_crash() -> None:
    from callbluff.engine.metrics_rows import compute_metrics
    from callbluff.engine.store import EXAMPLE_COLUMNS

    base = {"prompt_id": None, "task": "questions", "gold": None, "answer_type": "string", "target": "t",
            "score": None, "candidates": None, "error": None, "chunk": 0}
    orig = pd.DataFrame([{**base, "source_id": "a", "gold_answers": json.dumps(["Paris"]), "answer": "Paris"},
                         {**base, "source_id": "b", "gold_answers": None, "answer": "Rome"},
                         {**base, "source_id": "c", "gold_answers": json.dumps(["Oslo"]), "answer": "Bergen"}])
    [row] = compute_metrics(pd.DataFrame(columns=EXAMPLE_COLUMNS), orig, {}, "questions")
    assert row["n"] == 3 and row["mrr"] == 0.5  # a ranked first, c missed; b has nothing to rank against
