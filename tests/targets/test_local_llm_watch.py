"""Issue 40, items 3 and 6: a LocalLLMServer callbluff started is watched and known by its model, not its port.

The server process is a stand-in for ``llama_cpp.server`` (tests/helpers/fake_llm_server.py: stdlib HTTP on
127.0.0.1, started, registered, watched and stopped by :class:`LocalLLMServer` itself; only ``argv`` differs), so
these run without llama.cpp: a server that crashes with SIGSEGV on a chat request is reported as dead, with its
exit status and the last lines of its log, not as a connection error; and a re-run against the same model on a
restarted server (a new port) resumes and repeats no call.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from callbluff.engine.run import run_suite
from callbluff.resources.local_llm import LocalLLMServer, death_of, identity_of, model_identity
from helpers.fake_llm import FakeLLMServer


def suite(srv: LocalLLMServer, **target: Any) -> dict[str, Any]:
    return {"name": "local-grader", "seed": 1, "limit": 6, "dataset": {"spec": "demo:content"},
            "target": [{"name": "local", "type": "openai", "base_url": srv.base_url, "model": srv.model,
                        "response_format": "json_object", "concurrency": 1, "retries": 3, "timeout": 20,
                        **target}],
            "attack": [{"name": "RandomChars", "params": {"count": 2}}],
            "output": {"chunk_size": 6, "report": False}}


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF fake weights " * 64)
    return path


def _calls(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def test_a_server_killed_by_a_signal_is_reported_as_dead_with_its_exit_status_and_log(model: Path,
                                                                                     tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    with FakeLLMServer(model, calls, crash_after=5, log_path=tmp_path / "server.log") as srv:
        assert death_of(srv.base_url) is None  # running: no death to report
        run_suite(suite(srv), tmp_path / "run")
        assert srv.exit_code == -11
        causes = [json.loads(line)["cause"] for line in (tmp_path / "run" / "errors.jsonl").open()]
    assert causes and _calls(calls) == 6  # 5 answered, the 6th crashed it
    first = causes[0]
    assert f"the local LLM server callbluff started (pid {srv.pid}, 127.0.0.1:{srv.port}, tiny.gguf) died" in first
    assert "killed by signal 11 (SIGSEGV), exit status -11" in first
    assert "fake backend abort on request 6 (GGML_ASSERT failed)" in first  # the last lines of its log
    assert not any("connection error" in c for c in causes), causes[:3]
    assert death_of(srv.base_url) is None  # stopped: out of the registry


def test_a_restarted_server_on_another_port_is_the_same_target_and_a_rerun_repeats_no_call(
        model: Path, tmp_path: Path) -> None:
    calls = tmp_path / "calls.txt"
    run = tmp_path / "run"
    with FakeLLMServer(model, calls) as first:
        identity = identity_of(first.base_url)
        run_suite(suite(first), run)
        asked = _calls(calls)
        port = first.port
    assert asked > 0 and identity == model_identity(model, first.model, first.n_ctx, first.threads)
    with FakeLLMServer(model, calls) as second:
        assert second.port != port and identity_of(second.base_url) == identity
        again = run_suite(suite(second), run)  # resumes: same suite, same target (was: "what differs: target")
        assert _calls(calls) == asked
        restarted = run_suite(suite(second), run, restart=True)  # asked again: every reply from the cache
        assert _calls(calls) == asked
    assert again.counts["per_target"]["local"]["n_errors_original"] == 0
    assert restarted.target_stats["local"]["calls"] == 0
    other = tmp_path / "other.gguf"
    other.write_bytes(b"other weights")
    assert model_identity(other, first.model, first.n_ctx, first.threads) != identity  # the file is the identity
    assert model_identity(model, first.model, 4096, first.threads) != identity  # and so are its settings


def test_a_rerun_against_a_restarted_real_local_server_asks_nothing_again(local_llm: LocalLLMServer,
                                                                          tmp_path: Path) -> None:
    """The same with llama-cpp-python's server and SmolLM2 (skips, saying why, where it is not set up): two
    LocalLLMServer starts of the same model get two ports; the re-run resumes and the restart reuses every reply."""
    from helpers.local_llm import KEY, KEY_ENV

    run = tmp_path / "run"
    tiny = {"limit": 3, "attack": [{"name": "Shuffle", "params": {"tokenizer": "whitespace"}}]}
    with LocalLLMServer(api_key=KEY, startup_timeout=120) as first:
        asked = run_suite({**suite(first, api_key_env=KEY_ENV, max_tokens=32), **tiny}, run).target_stats["local"]
        port = first.port
    with LocalLLMServer(api_key=KEY, startup_timeout=120) as second:
        assert second.port != port
        again = run_suite({**suite(second, api_key_env=KEY_ENV, max_tokens=32), **tiny}, run, restart=True)
    assert asked["calls"] > 0 and again.target_stats["local"]["calls"] == 0


def test_a_real_local_server_killed_by_a_signal_is_reported_as_dead(local_llm: LocalLLMServer,
                                                                    tmp_path: Path) -> None:
    """llama-cpp-python's server killed with SIGKILL (as the kernel's OOM killer does) before a run: the pre-flight
    stops the run naming the death, its signal and the log; no "connection error"."""
    import os
    import signal

    from callbluff.engine.provenance import TargetUnavailable
    from helpers.local_llm import KEY, KEY_ENV

    with LocalLLMServer(api_key=KEY, startup_timeout=120, log_path=tmp_path / "llama.log") as srv:
        assert srv.pid is not None
        os.kill(srv.pid, signal.SIGKILL)
        with pytest.raises(TargetUnavailable) as e:
            run_suite({**suite(srv, api_key_env=KEY_ENV), "limit": 2}, tmp_path / "run")
    message = str(e.value)
    assert f"died: killed by signal 9 (SIGKILL), exit status -9; the last lines of its log ({tmp_path / 'llama.log'})" \
        in message and "connection error" not in message
