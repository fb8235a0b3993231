"""CommandTarget with a real Python subprocess (tests/targets/echo_scorer.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from callbluff.targets import CommandTarget, Input

SCORER = Path(__file__).with_name("echo_scorer.py")


def score(text: str) -> int:
    return len(text.split()) % 4


def ask(texts: list[str]) -> list[Input]:
    return [Input("content", t, prompt_id="1") for t in texts]


@pytest.fixture
def scorer():
    t = CommandTarget([sys.executable, str(SCORER)], timeout=5.0, startup_timeout=20.0)
    yield t
    t.close()


def test_scores_with_one_long_running_process(scorer: CommandTarget):
    texts = ["one", "one two", "one two three", "a b c d e"]
    outs = scorer.predict(ask(texts))
    assert [o.score for o in outs] == [score(t) for t in texts]
    pid = scorer.pid
    assert pid is not None
    outs2 = scorer.predict(ask(["x y"] * 3))
    assert [o.score for o in outs2] == [2.0] * 3
    assert scorer.pid == pid and scorer.restarts == 0  # the same process answered both calls
    assert scorer.stats.calls == 7 and scorer.stats.inputs == 7 and scorer.stats.errors == 0


def test_crash_on_one_input_is_recorded_and_the_process_restarts(scorer: CommandTarget):
    outs = scorer.predict(ask(["fine one", "please CRASH now", "fine again here", "CRASH", "last one"]))
    assert outs[0].score == 2 and outs[2].score == 3 and outs[4].score == 2
    for bad in (outs[1], outs[3]):
        assert bad.score is None
        assert bad.error.startswith("command exited with code 3 while answering (stderr: fatal: cannot score")
    assert "please CRASH now" in outs[1].error
    assert scorer.restarts == 2 and scorer.stats.errors == 2


def test_hanging_input_times_out_and_the_next_input_gets_a_fresh_process():
    t = CommandTarget([sys.executable, str(SCORER)], timeout=0.5, startup_timeout=20.0)
    try:
        assert t.predict(ask(["warm up"]))[0].score == 2
        first_pid = t.pid
        t0 = time.perf_counter()
        outs = t.predict(ask(["HANG forever", "after the hang"]))
        elapsed = time.perf_counter() - t0
        assert outs[0].error == "timeout after 0.5s (command restarted)"
        assert outs[1].score == 3
        assert t.pid != first_pid and t.restarts == 1
        assert elapsed < 15
    finally:
        t.close()


def test_noise_refusals_and_answers(scorer: CommandTarget):
    outs = scorer.predict(ask(["NOISE before the answer", "GARBAGE first", "REFUSE"]))
    assert outs[0].score == 4 % 4 and outs[1].score == 2
    assert outs[2].error == "refused: text too short"
    reading = scorer.predict([Input("reading", "Who?", context="The Normans were from Normandy")])
    assert reading[0].answer == "Normandy" and reading[0].candidates[0].text == "Normandy"


def test_a_command_that_cannot_start_fails_fast_with_its_stderr():
    t = CommandTarget([sys.executable, str(SCORER), "--die-at-start"], timeout=5.0, startup_timeout=5.0)
    t0 = time.perf_counter()
    outs = t.predict(ask([f"text {i}" for i in range(12)]))
    elapsed = time.perf_counter() - t0
    t.close()
    assert all(not o.ok for o in outs)
    for o in outs[:5]:
        assert o.error == "command exited with code 2 while answering (stderr: cannot load model: missing weights)"
    for o in outs[5:]:
        assert o.error.startswith("not sent: the command exited 5 times in a row without answering")
    assert elapsed < 20


def test_missing_executable():
    t = CommandTarget(["/nonexistent/scorer-binary", "--x"])
    outs = t.predict(ask(["a", "b"]))
    assert all(o.error.startswith("cannot start command ['/nonexistent/scorer-binary', '--x']: FileNotFoundError")
               for o in outs)


def test_close_ends_the_process_and_fingerprint_tracks_the_script(tmp_path: Path):
    script = tmp_path / "scorer.py"
    script.write_text(SCORER.read_text())
    t = CommandTarget([sys.executable, str(script)], timeout=5.0)
    assert t.predict(ask(["a b"]))[0].score == 2
    proc = t._proc.popen
    t.close()
    assert proc.poll() is not None
    fp = t.fingerprint
    assert CommandTarget([sys.executable, str(script)]).fingerprint == fp
    script.write_text(SCORER.read_text() + "\n# edited\n")
    assert CommandTarget([sys.executable, str(script)]).fingerprint != fp
    cfg = CommandTarget([sys.executable, str(script)], env={"API_KEY": "secret-value"}).to_config()
    assert cfg["env_keys"] == ["API_KEY"] and "secret-value" not in repr(cfg)
