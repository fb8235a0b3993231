"""OpenAITarget (``type = "openai"``) against a real stand-in chat server on 127.0.0.1 (tests/helpers/chat_server.py):
the structured-output dialects' request bodies, reading the reply by path and by last regex match, 429s with each
Retry-After form and 5xx retried, unparseable and out-of-scale replies as error rows, n samples, the cache key,
token accounting, and the API key in no output, file or log. The real local grader is in test_local_llm.py."""

from __future__ import annotations

import logging
import pickle
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

import pytest
from helpers.chat_server import ChatStandIn, stand_in_score

from callbluff.records import Prompt
from callbluff.targets import CachedTarget, Input, OpenAITarget, PredictionCache
from callbluff.targets.chat import ChatSpec, ReplyError, aggregate, render
from callbluff.targets.config import TargetConfigError, check_environment, validate_target_config
from callbluff.targets.base import Output
from callbluff.targets.http_target import retry_after
from callbluff.targets.validate import OutputCheck, secret_values

KEY = "sk-test-9f3bA7c1d2E5"
PROMPTS = {"q1": Prompt(id="q1", task="content", text="What is a stack?", score_min=0, score_max=5,
                        reference="A last-in first-out list.", rubric="5: names LIFO; 0: wrong.")}


def inp(text: str, pid: str = "q1") -> Input:
    return Input("content", text, prompt_id=pid)


def target(srv: ChatStandIn, **kw: object) -> OpenAITarget:
    kw.setdefault("retries", 3)
    kw.setdefault("backoff", 0.01)
    kw.setdefault("backoff_max", 0.02)
    t = OpenAITarget(srv.base_url, "stand-in", **kw)
    t.bind_prompts(PROMPTS)
    return t


@pytest.mark.parametrize("dialect,field", [("json_schema", "response_format"), ("json_object", "response_format"),
                                           ("structured_outputs", "structured_outputs")])
def test_each_dialect_sends_its_own_request_body_and_reads_the_score(dialect: str, field: str) -> None:
    with ChatStandIn() as srv:
        t = target(srv, response_format=dialect)
        outs = t.predict([inp("it is LIFO"), inp("a list where the last in is the first out")])
        t.close()
    by_text = {b["messages"][1]["content"].rsplit("Student answer: ", 1)[1]: b for b in srv.bodies}
    body = by_text["it is LIFO"]  # requests arrive in any order (concurrency 4)
    schema = {"type": "object", "properties": {"score": {"type": "integer", "enum": [0, 1, 2, 3, 4, 5]}},
              "required": ["score"], "additionalProperties": False}
    if dialect == "json_schema":
        assert body[field] == {"type": "json_schema", "json_schema": {"name": "grade", "strict": True,
                                                                       "schema": schema}}
    elif dialect == "json_object":
        assert body[field] == {"type": "json_object", "schema": schema}
    else:
        assert body[field] == {"json": schema} and "response_format" not in body
    assert body["model"] == "stand-in" and body["temperature"] == 0 and body["max_tokens"] == 256
    assert "seed" not in body
    system, user = body["messages"]
    assert system["role"] == "system" and "from 0 (wrong or irrelevant) to 5" in system["content"]
    assert user["content"] == ("Question: What is a stack?\nReference answer: A last-in first-out list.\n"
                               "Rubric: 5: names LIFO; 0: wrong.\nStudent answer: it is LIFO")
    assert [o.score for o in outs] == [stand_in_score(by_text[x]) for x in ("it is LIFO",
                                                                         "a list where the last in is the first out")]
    assert all(o.error is None for o in outs)


def test_free_text_reply_is_read_by_the_last_regex_match() -> None:
    with ChatStandIn(free_text=True) as srv:
        t = target(srv, response_format="none")
        [o] = t.predict([inp("a stack is LIFO")])
        t.close()
    assert "response_format" not in srv.bodies[0] and "structured_outputs" not in srv.bodies[0]
    # the reply is "The answer mentions 3 points. Score: N": the last number wins, not the 3
    assert o.score == stand_in_score(srv.bodies[0]) and o.error is None


def test_schema_of_the_scale() -> None:
    spec = ChatSpec(response_format="json_object")
    half = Prompt(id="h", task="content", score_min=0, score_max=2.5)
    assert spec.schema("score", half)["properties"]["score"] == {"type": "number", "minimum": 0.0, "maximum": 2.5}
    wide = Prompt(id="w", task="essay", score_min=0, score_max=1000)
    assert spec.schema("score", wide)["properties"]["score"] == {"type": "number", "minimum": 0.0,
                                                                 "maximum": 1000.0}
    assert spec.schema("answer", None) == {"type": "object", "properties": {"answer": {"type": "string"}},
                                           "required": ["answer"], "additionalProperties": False}


def test_missing_prompt_fields_drop_their_template_lines() -> None:
    bare = {"q2": Prompt(id="q2", task="content", text="Define a queue.", score_min=0, score_max=3)}
    spec = ChatSpec(response_format="json_object")
    [system, user] = spec.messages(inp("FIFO", "q2"), bare["q2"])
    assert user["content"] == "Question: Define a queue.\nStudent answer: FIFO"
    assert "0 (wrong or irrelevant) to 3" in system["content"]
    assert render("a ${rubric} b\nkeep ${text}\n$5 literal", {"rubric": None, "text": "x"}) == "keep x\n$5 literal"


@pytest.mark.parametrize("marker,least_wait", [("RA-MS", 0.29), ("RA-S", 0.99), ("RA-DATE", 0.99),
                                               ("FIVE-OH-THREE", 0.0)])
def test_429_and_5xx_are_retried_honouring_each_retry_after_form(marker: str, least_wait: float) -> None:
    with ChatStandIn() as srv:
        t = target(srv, response_format="json_object")
        [o] = t.predict([inp(f"{marker} the stack is LIFO")])
        t.close()
    user = srv.bodies[0]["messages"][1]["content"]
    first, second = srv.arrivals[user]  # one failure, one success
    assert o.error is None and o.score == stand_in_score(srv.bodies[-1])
    assert t.stats.retries == 1 and t.stats.calls == 1
    # the pause follows the server's wait, not the 0.01-0.02 s backoff
    assert second - first >= least_wait
    if least_wait:
        assert second - first < least_wait + 2.5


def test_retry_after_forms_and_cap() -> None:
    now = datetime(2026, 11, 25, 12, 0, 0, tzinfo=UTC).timestamp()
    assert retry_after({"retry-after-ms": "250"}, now) == 0.25
    assert retry_after({"retry-after": "7"}, now) == 7.0
    later = format_datetime(datetime(2026, 11, 25, 12, 0, 30, tzinfo=UTC), usegmt=True)
    assert retry_after({"retry-after": later}, now) == 30.0
    assert retry_after({"retry-after": format_datetime(datetime(2020, 1, 1, tzinfo=UTC), usegmt=True)}, now) == 0.0
    assert retry_after({"retry-after": "soon"}, now) is None and retry_after({}, now) is None
    assert retry_after({"retry-after-ms": "-1", "retry-after": "2"}, now) == 2.0
    with ChatStandIn() as srv:
        t = target(srv, retry_after_max=0.5)
        from callbluff.targets.http_target import _Failure

        assert t._delay(0, _Failure("http", "HTTP 429", wait=3600)) == 0.5  # capped
        assert 0.3 <= t._delay(0, _Failure("http", "HTTP 429", wait=0.3)) <= 0.5  # never shorter than asked


def test_unparseable_and_out_of_scale_replies_are_error_rows_never_cached(tmp_path: Path) -> None:
    with ChatStandIn() as srv:
        t = target(srv, response_format="json_object")
        check = OutputCheck("score", prompts=PROMPTS)
        with PredictionCache(tmp_path / "p.sqlite") as cache:
            ct = CachedTarget(t, cache, check=check)
            garbage, outside, fine = ct.predict([inp("GARBAGE text"), inp("OUTSIDE text"), inp("LIFO order")])
            assert garbage.error == ("unparseable reply (not JSON): "
                                     "'This answer shows some understanding of the topic.'")
            assert garbage.score is None
            assert outside.error.startswith("score 99 outside 0-5 for prompt q1")
            assert fine.error is None
            assert cache.count(t.fingerprint) == 1  # only the readable one
            before = srv.requests
            again = ct.predict([inp("GARBAGE text"), inp("LIFO order")])
            assert srv.requests == before + 1 and again[1].score == fine.score  # errors are asked again
        t.close()


def test_n_samples_mean_with_spread_kept_and_seed_per_sample(tmp_path: Path) -> None:
    with ChatStandIn() as srv:
        t = target(srv, response_format="json_object", n=3, seed=10, temperature=0.7)
        with PredictionCache(tmp_path / "p.sqlite") as cache:
            ct = CachedTarget(t, cache, check=OutputCheck("score", prompts=PROMPTS))
            [o] = ct.predict([inp("a stack is last in first out")])
            assert sorted(b["seed"] for b in srv.bodies) == [10, 11, 12]
            expected = sorted(stand_in_score(b) for b in srv.bodies)
            assert sorted(o.samples) == expected and len(set(expected)) > 1
            assert o.score == pytest.approx(sum(expected) / 3)
            [hit] = ct.predict([inp("a stack is last in first out")])
            assert hit.samples == o.samples and hit.score == o.score  # samples survive the cache
            assert srv.requests == 3
        t.close()
    agg = aggregate([Output(answer="b"), Output(answer="a"), Output(answer="b")])
    assert agg.answer == "b" and [(c.text, round(c.score, 3)) for c in agg.candidates] == [("b", 0.667),
                                                                                          ("a", 0.333)]
    assert aggregate([Output(score=1), Output(error="x")]).error == "1 of 2 samples failed; sample 2: x"


def test_answers_for_qa_inputs_without_a_prompt() -> None:
    with ChatStandIn() as srv:
        t = OpenAITarget(srv.base_url, "stand-in", response_format="json_schema")
        [o] = t.predict([Input("reading", "Who built it?", context="It was built by Brunelleschi in 1436.")])
        t.close()
    assert o.answer == "Brunelleschi" and o.score is None
    assert srv.bodies[0]["messages"][1]["content"] == ("Context: It was built by Brunelleschi in 1436.\n"
                                                       "Question: Who built it?")


def test_a_scorer_without_bound_prompts_says_so() -> None:
    t = OpenAITarget("http://127.0.0.1:9/v1", "m", output="score", retries=0)
    [o] = t.predict([inp("x")])
    assert o.error.startswith("no prompt bound for prompt_id 'q1'")


def test_cache_key_is_model_messages_and_sampling() -> None:
    t = OpenAITarget("http://127.0.0.1:9/v1", "m", response_format="json_object")
    t.bind_prompts(PROMPTS)
    k = t.cache_key(inp("LIFO"))
    assert k == t.cache_key(inp("LIFO")) and k != t.cache_key(inp("FIFO"))
    changed = {"q1": Prompt(id="q1", task="content", text="What is a stack?", score_min=0, score_max=5,
                            reference="A last-in first-out list.", rubric="5: says LIFO.")}
    t.bind_prompts(changed)
    assert t.cache_key(inp("LIFO")) != k  # a new rubric is a new question
    t.bind_prompts(PROMPTS)
    for other in (OpenAITarget("http://127.0.0.1:9/v1", "m2", response_format="json_object"),
                  OpenAITarget("http://127.0.0.1:9/v1", "m", response_format="json_object", temperature=0.5),
                  OpenAITarget("http://127.0.0.1:9/v1", "m", response_format="json_object", seed=1),
                  OpenAITarget("http://127.0.0.1:9/v1", "m", response_format="json_object", system="Grade.")):
        other.bind_prompts(PROMPTS)
        assert other.cache_key(inp("LIFO")) != k


def test_usage_and_system_fingerprint_reach_the_wrappers_stats() -> None:
    with ChatStandIn() as srv:
        t = target(srv, response_format="json_object")
        ct = CachedTarget(t, None)
        ct.predict([inp("one two"), inp("three four five")])
        t.close()
    usage = ct.stats.to_dict()["usage"]
    assert usage["system_fingerprints"] == ["fp_standin"] and usage["models"] == ["stand-in"]
    assert usage["completion_tokens"] == 8 and usage["replies"] == 2
    assert usage["prompt_tokens"] == sum(len(b["messages"][1]["content"].split()) for b in srv.bodies)
    assert usage["finish_reasons"] == {"stop": 2}


def test_api_key_is_sent_but_never_written(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                           tmp_path: Path) -> None:
    monkeypatch.setenv("CALLBLUFF_CHAT_KEY", KEY)
    caplog.set_level(logging.DEBUG, logger="callbluff")
    cfg = validate_target_config({"type": "openai", "base_url": "http://127.0.0.1:1/v1", "model": "m",
                                  "api_key_env": "CALLBLUFF_CHAT_KEY"})
    assert KEY in secret_values(cfg.model_dump())
    with ChatStandIn() as srv:
        t = target(srv, api_key_env="CALLBLUFF_CHAT_KEY", response_format="json_object")
        with PredictionCache(tmp_path / "p.sqlite") as cache:
            ct = CachedTarget(t, cache, check=OutputCheck("score", prompts=PROMPTS, secrets=(KEY,)))
            outs = ct.predict([inp("RA-MS LIFO"), inp("ECHO-AUTH please")])
        t.close()
    assert srv.auth and all(a == f"Bearer {KEY}" for a in srv.auth)
    assert outs[0].error is None
    assert outs[1].error.startswith("HTTP 401 (not retried)") and "Bearer ***" in outs[1].error
    written = [repr(t), repr(t.to_config()), t.fingerprint, repr(pickle.dumps(t)), caplog.text, repr(outs),
               repr(ct.stats.to_dict())]
    assert all(KEY not in w for w in written)
    for f in tmp_path.rglob("*"):
        assert KEY.encode() not in f.read_bytes(), f


def test_config_errors_name_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    cfg = validate_target_config({"type": "openai", "base_url": "http://h/v1", "model": "m",
                                  "api_key_env": "NO_SUCH_KEY_VAR"}, "target[0]")
    with pytest.raises(TargetConfigError, match="target\\[0\\]: key 'api_key_env' uses \\$\\{NO_SUCH_KEY_VAR\\}"):
        check_environment(cfg, "target[0]")
    bad = [({"base_url": "h/v1"}, "key 'base_url': base_url must start with http"),
           ({"base_url": "http://h/v1/chat/completions"}, "/chat/completions is added to it"),
           ({"api_key_env": "sk-abc def"}, "key 'api_key_env': must be the NAME of an environment variable"),
           ({"user": "${answer}"}, "key 'user': user uses ${answer}, which is not a template field"),
           ({"response_format": "grammar"}, "key 'response_format'"),
           ({"score_regex": "("}, "key 'score_regex': not a valid regular expression"),
           ({"n": 0}, "key 'n'"), ({"temperature": -1}, "key 'temperature'")]
    for extra, msg in bad:
        with pytest.raises(TargetConfigError) as err:
            validate_target_config({"type": "openai", "base_url": "http://h/v1", "model": "m", **extra})
        assert msg in str(err.value), (extra, str(err.value))
    assert "sk-abc def" not in str(err.value)


def test_reply_reading_rules() -> None:
    spec = ChatSpec(response_format="json_object")
    assert spec.parse('```json\n{"score": 4}\n```', "score").score == 4
    assert spec.parse('Sure! {"score": 2} is my grade', "score").score == 2
    with pytest.raises(ReplyError, match="score_path 'score' not found"):
        spec.parse('{"grade": 2}', "score")
    with pytest.raises(ReplyError, match="the score is not a number"):
        spec.parse('{"score": "high"}', "score")
    with pytest.raises(ReplyError, match="no text"):
        spec.parse("   ", "score")
    nested = ChatSpec(response_format="json_schema", score_path="result.grade")
    assert nested.parse('{"result": {"grade": 3.5}}', "score").score == 3.5
    rx = ChatSpec(score_regex=r"Score:\s*(\d+)")
    assert rx.parse("Score: 1 ... on reflection, Score: 4", "score").score == 4
    with pytest.raises(ReplyError, match="does not match"):
        rx.parse("no verdict", "score")


def test_evaluate_a_chat_grader_from_the_command_line(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from callbluff.cli import app

    with ChatStandIn() as srv:
        res = CliRunner().invoke(app, ["evaluate", "--target", f"openai:{srv.base_url}", "--target-option",
                                       "model=stand-in", "--target-option", "response_format=structured_outputs",
                                       "--data", "demo:content", "--limit", "4", "--out", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    assert srv.requests == 4 and all("structured_outputs" in b for b in srv.bodies)
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["targets"]["openai"]["type"] == "openai"
    assert meta["target_stats"]["openai"]["usage"]["replies"] == 4
