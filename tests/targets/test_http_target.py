"""HttpTarget against a real HTTP server on 127.0.0.1 (tests/helpers/fault_server.py)."""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import pickle
import time

import pytest
from helpers.fault_server import FaultServer, expected_answer, expected_score

from callbluff.targets import Candidate, HttpTarget, Input

TOKEN = "s3cr3t-T0KEN-4f9a1c"


def texts(n: int, tag: str = "") -> list[str]:
    return [f"{tag}answer number {i} " + "word " * (i % 7) for i in range(n)]


def inputs(ts: list[str]) -> list[Input]:
    return [Input("content", t, prompt_id="p1") for t in ts]


def test_single_mode_scores_every_input():
    ts = texts(30)
    with FaultServer() as srv, HttpTarget(srv.url + "/score", concurrency=4) as t:
        outs = t.predict(inputs(ts))
        assert [o.score for o in outs] == [expected_score(x) for x in ts]
        assert all(o.ok for o in outs)
        assert srv.requests == 30
        assert t.stats.calls == 30 and t.stats.inputs == 30 and t.stats.retries == 0 and t.stats.errors == 0
        assert t.stats.seconds > 0


def test_retries_recover_every_kind_of_transient_fault():
    ts = texts(60)
    with FaultServer(fault_rate=0.3, seed=1, hang=0.6) as srv:
        t = HttpTarget(srv.url + "/score", timeout=0.3, retries=6, backoff=0.01, backoff_max=0.05,
                       concurrency=8, seed=0)
        outs = t.predict(inputs(ts))
        t.close()
        assert [o.error for o in outs] == [None] * len(ts)
        assert [o.score for o in outs] == [expected_score(x) for x in ts]
        # every fault kind really happened and was retried
        assert set(srv.faults) == {"500", "timeout", "drop", "malformed"}, srv.faults
        # (a slow but healthy answer can also time out on a busy machine: retries >= injected faults)
        assert t.stats.retries >= sum(srv.faults.values())
        assert srv.requests <= len(ts) + t.stats.retries


@pytest.mark.parametrize("kind, cause", [
    ("500", "HTTP 500 after 3 attempts"),
    ("timeout", "timeout after 0.3s x3"),
    ("drop", "connection error (RemoteProtocolError"),
    ("malformed", "malformed JSON ("),
])
def test_final_failure_names_its_cause(kind: str, cause: str):
    with FaultServer(always={"POISON": kind}, hang=0.6) as srv:
        t = HttpTarget(srv.url + "/score", timeout=0.3, retries=2, backoff=0.01, backoff_max=0.02)
        outs = t.predict(inputs(["fine text", "POISON text", "another fine one"]))
        t.close()
    assert outs[0].score == expected_score("fine text") and outs[2].ok
    assert outs[1].score is None and outs[1].answer is None
    assert outs[1].error is not None and outs[1].error.startswith(cause), outs[1].error
    assert "after 3 attempts" in outs[1].error or "x3" in outs[1].error
    assert t.stats.errors == 1 and t.stats.retries == 2


def test_mixed_faults_every_input_predicted_or_failed_with_cause():
    ts = texts(80)
    with FaultServer(fault_rate=0.2, seed=7, hang=0.5) as srv:
        t = HttpTarget(srv.url + "/score", timeout=0.3, retries=1, backoff=0.01, concurrency=8)
        outs = t.predict(inputs(ts))
        t.close()
    assert len(outs) == len(ts)
    failed = [o for o in outs if not o.ok]
    assert failed, "with one retry and 20% faults some inputs must fail (4% each)"
    for x, o in zip(ts, outs):
        if o.ok:
            assert o.score == expected_score(x)
        else:
            assert o.score is None  # never a silent zero
            assert any(c in o.error for c in ("HTTP 500", "timeout after", "connection error", "malformed JSON"))
            assert "after 2 attempts" in o.error or "x2" in o.error


def test_missing_response_path_and_unreadable_values():
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/score", response_path="value", retries=1, backoff=0.01)
        [o] = t.predict(inputs(["one two"]))
        assert o.error.startswith("response path 'value' not found (no key 'value') in ")
        assert '"score": 2' in o.error and o.error.endswith("after 2 attempts")
        t2 = HttpTarget(srv.url + "/score", response_path="model", output="score")
        [o2] = t2.predict(inputs(["one two"]))
        assert o2.error.startswith("unreadable response at response path 'model': expected a number")
        assert srv.requests == 3  # unreadable values are not retried


def test_client_errors_are_not_retried():
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/no-such-endpoint", retries=3, backoff=0.01)
        outs = t.predict(inputs(["a", "b"]))
        assert all(o.error.startswith("HTTP 404 (not retried)") for o in outs)
        assert srv.requests == 2 and t.stats.retries == 0


def test_retry_after_429():
    with FaultServer(fault_rate=0.3, faults=("429",), seed=4) as srv:
        t = HttpTarget(srv.url + "/score", retries=8, backoff=0.01, backoff_max=0.02)
        ts = texts(20)
        outs = t.predict(inputs(ts))
        assert [o.score for o in outs] == [expected_score(x) for x in ts]
        assert srv.faults["429"] > 0


def test_secret_header_reaches_server_but_is_never_written(monkeypatch: pytest.MonkeyPatch,
                                                           caplog: pytest.LogCaptureFixture):
    monkeypatch.setenv("CALLBLUFF_TEST_TOKEN", TOKEN)
    caplog.set_level(logging.DEBUG, logger="callbluff")
    headers = {"Authorization": "Bearer ${CALLBLUFF_TEST_TOKEN}"}
    with FaultServer(fault_rate=0.5, seed=2) as srv:
        t = HttpTarget(srv.url + "/score", headers=headers, timeout=0.3, retries=1, backoff=0.01)
        outs = t.predict(inputs(texts(12)))
        assert srv.auth_headers and all(h == f"Bearer {TOKEN}" for h in srv.auth_headers)
        t.close()
    with FaultServer() as srv:  # a server that echoes the header back in its error body
        leak = HttpTarget(srv.url + "/leak", headers=headers, retries=0)
        [o] = leak.predict(inputs(["x"]))
        leak.close()
    assert o.error == "HTTP 403 (not retried): 'forbidden for Authorization: Bearer ***'"
    written = [repr(t), repr(t.to_config()), t.fingerprint, repr(leak), repr(leak.to_config()),
               repr(pickle.dumps(t)), repr(pickle.dumps(leak)), caplog.text,
               *[repr(x) for x in outs], repr(o)]
    assert any(not x.ok for x in outs)  # the faults produced error texts that were checked
    assert "retry 1/1" in caplog.text
    for w in written:
        assert TOKEN not in w
    assert "${CALLBLUFF_TEST_TOKEN}" in repr(t.to_config())


def test_missing_environment_variable_is_an_error_not_a_request(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("CALLBLUFF_TEST_TOKEN", raising=False)
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/score", headers={"X-Key": "${CALLBLUFF_TEST_TOKEN}"})
        outs = t.predict(inputs(["a", "b"]))
        assert srv.requests == 0
    assert all("environment variable CALLBLUFF_TEST_TOKEN is not set" in o.error for o in outs)


def test_concurrency_limit_is_respected():
    with FaultServer(delay=0.05) as srv:
        t = HttpTarget(srv.url + "/score", concurrency=3)
        outs = t.predict(inputs(texts(24)))
        t.close()
        assert all(o.ok for o in outs)
        assert srv.max_concurrent == 3


def test_rate_limit_spaces_requests():
    rate = 25.0
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/score", concurrency=4, rate_limit=rate)
        t0 = time.perf_counter()
        outs = t.predict(inputs(texts(11)))
        elapsed = time.perf_counter() - t0
        arrivals = sorted(srv.arrivals)
        t.close()
    assert all(o.ok for o in outs)
    assert elapsed >= 10 / rate * 0.95
    assert arrivals[-1] - arrivals[0] >= 10 / rate * 0.9
    # no burst: any three consecutive arrivals span two slots (minus scheduling jitter on a busy machine)
    spans = [c - a for a, c in zip(arrivals, arrivals[2:])]
    assert min(spans) >= 1.2 / rate, spans


def test_batch_mode_templates_and_paths():
    ts = texts(20)
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/batch", mode="batch", batch_size=8, response_path="results.*.score",
                       concurrency=2)
        outs = t.predict(inputs(ts))
        assert [o.score for o in outs] == [expected_score(x) for x in ts]
        assert sorted(srv.batch_sizes) == [4, 8, 8] and t.stats.calls == 3
        t2 = HttpTarget(srv.url + "/batch", mode="batch", batch_size=16, body_template='{"texts": "${texts}"}',
                        output="score")
        outs2 = t2.predict(inputs(ts))
        assert [o.score for o in outs2] == [expected_score(x) for x in ts]
        assert sorted(srv.batch_sizes) == [4, 4, 8, 8, 16]


def test_batch_mode_recovers_faults_and_fails_whole_batches():
    ts = texts(40)
    with FaultServer(fault_rate=0.3, seed=5, hang=0.5, always={"POISON": "500"}) as srv:
        t = HttpTarget(srv.url + "/batch", mode="batch", batch_size=5, timeout=0.3, retries=6, backoff=0.01,
                       backoff_max=0.03)
        outs = t.predict(inputs(ts[:35] + ["POISON"] + ts[36:]))
        t.close()
    assert [o.score for o in outs[:35]] == [expected_score(x) for x in ts[:35]]
    # the batch holding the poison input fails as a whole, with its cause
    assert [o.error for o in outs[35:]] == ["HTTP 500 after 7 attempts"] * 5


def test_qa_answers_with_candidates():
    ctx = "The Normans were descended from Norse raiders and pirates"
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/qa", output="answer")
        [o] = t.predict([Input("reading", "Who were the Normans?", context=ctx)])
    assert o.answer == expected_answer(ctx) == "descended"
    assert o.candidates[0] == Candidate("descended", 1.0) and len(o.candidates) == 3


def test_bad_configuration_is_rejected_with_the_key():
    with pytest.raises(ValueError, match=r"HttpTarget: key 'mode': Input should be 'single' or 'batch'"):
        HttpTarget("http://127.0.0.1:9/x", mode="stream")
    with pytest.raises(ValueError, match=r"\$\{inputs\}, which is not allowed in single mode"):
        HttpTarget("http://127.0.0.1:9/x", body_template={"q": "${inputs}"})
    with pytest.raises(ValueError, match=r"\$\{API_KEY\}.*secrets belong in headers"):
        HttpTarget("http://127.0.0.1:9/x", body_template={"q": "${text}", "key": "${API_KEY}"})
    with pytest.raises(ValueError, match="not valid JSON"):
        HttpTarget("http://127.0.0.1:9/x", body_template="{text: ${text}}")
    with pytest.raises(ValueError, match="key 'concurrency': Input should be greater than or equal to 1"):
        HttpTarget("http://127.0.0.1:9/x", concurrency=0)


def test_connection_refused_is_reported():
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    t = HttpTarget(f"http://127.0.0.1:{port}/score", retries=1, backoff=0.01)
    [o] = t.predict(inputs(["x"]))
    assert o.error.startswith("connection error (ConnectError") and o.error.endswith("after 2 attempts")


def _child_predict(target: HttpTarget, q: mp.Queue) -> None:
    outs = target.predict(inputs(["in a forked worker"]))
    q.put((os.getpid(), [o.to_dict() for o in outs]))


def test_target_works_in_a_forked_worker_and_after_pickling():
    with FaultServer() as srv:
        t = HttpTarget(srv.url + "/score")
        assert t.predict(inputs(["parent first"]))[0].score == 2  # starts the loop thread in the parent
        ctx = mp.get_context("fork")
        q = ctx.Queue()
        p = ctx.Process(target=_child_predict, args=(t, q))
        p.start()
        pid, outs = q.get(timeout=20)
        p.join(timeout=20)
        assert pid != os.getpid() and outs == [{"score": expected_score("in a forked worker")}]
        clone = pickle.loads(pickle.dumps(t))
        assert clone.fingerprint == t.fingerprint
        assert clone.predict(inputs(["after pickling"]))[0].score == 2
        assert t.predict(inputs(["parent again"]))[0].score == 2
        clone.close()
        t.close()
        # a closed target starts again on demand
        assert t.predict(inputs(["after close"]))[0].score == 2
        t.close()

