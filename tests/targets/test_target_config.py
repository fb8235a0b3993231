"""from_config: every adapter from a suite's [[target]] table; errors name the key and what is allowed."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import joblib
import pytest
from helpers.fault_server import FaultServer, expected_score
from sklearn.dummy import DummyRegressor

from callbluff.engine.target_factory import from_config
from callbluff.targets import (
    CallableTarget,
    CommandTarget,
    HttpTarget,
    Input,
    SklearnTarget,
    TargetConfigError,
)

SCORER = Path(__file__).with_name("echo_scorer.py")


def ask(*texts: str) -> list[Input]:
    return [Input("content", t, prompt_id="1") for t in texts]


def test_callable_from_a_module_beside_the_suite(tmp_path: Path):
    (tmp_path / "my_scorer_mod.py").write_text("def score(text):\n    return len(text) % 5\n")
    suite = tomllib.loads('[[target]]\ntype = "callable"\nname = "mine"\nfunction = "my_scorer_mod:score"\n')
    t = from_config(suite["target"][0], base_dir=tmp_path)
    assert isinstance(t, CallableTarget) and t.name == "mine"
    assert [o.score for o in t.predict(ask("abcdefg"))] == [2.0]
    t2 = from_config({"type": "callable", "function": "os.path:basename", "output": "answer"})
    assert t2.predict(ask("/a/b/c.txt"))[0].answer == "c.txt"


def test_sklearn_from_relative_joblib_paths(tmp_path: Path):
    joblib.dump(DummyRegressor(strategy="constant", constant=2.5).fit([[0]], [0]), tmp_path / "p1.joblib")
    joblib.dump(DummyRegressor(strategy="constant", constant=1.0).fit([[0]], [0]), tmp_path / "p2.joblib")
    t = from_config({"type": "sklearn", "per_prompt": {"1": "p1.joblib", "2": "p2.joblib"}}, base_dir=tmp_path)
    assert isinstance(t, SklearnTarget)
    outs = t.predict([Input("content", "x", prompt_id="1"), Input("content", "y", prompt_id="2")])
    assert [o.score for o in outs] == [2.5, 1.0]


def test_http_from_toml_with_secret_header(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CALLBLUFF_TEST_TOKEN", "tok-123456")
    with FaultServer() as srv:
        toml = f'''
[[target]]
type = "http"
name = "scorer-api"
url = "{srv.url}/batch"
mode = "batch"
batch_size = 4
body_template = {{ texts = "${{texts}}" }}
response_path = "results[*].score"
headers = {{ Authorization = "Bearer ${{CALLBLUFF_TEST_TOKEN}}" }}
timeout = 2.0
retries = 1
'''
        t = from_config(tomllib.loads(toml)["target"][0])
        assert isinstance(t, HttpTarget)
        outs = t.predict(ask("a b c", "d", "e f", "g h i j k"))
        t.close()
        assert [o.score for o in outs] == [expected_score(x) for x in ("a b c", "d", "e f", "g h i j k")]
        assert srv.auth_headers == ["Bearer tok-123456"]
    assert "tok-123456" not in repr(t.to_config())


def test_command_defaults_cwd_to_the_suite_directory(tmp_path: Path):
    (tmp_path / "scorer.py").write_text(SCORER.read_text())
    t = from_config({"type": "command", "argv": [sys.executable, "scorer.py"], "timeout": 5}, base_dir=tmp_path)
    assert isinstance(t, CommandTarget) and t.cwd == str(tmp_path)
    assert t.predict(ask("one two"))[0].score == 2
    t.close()
    t2 = from_config({"type": "command", "argv": f"{sys.executable} scorer.py"}, base_dir=tmp_path)
    assert t2.argv == [sys.executable, "scorer.py"]


@pytest.mark.parametrize("cfg, message", [
    ({"type": "grpc"}, "key 'type' must be one of callable, command, hf, http, model, openai, sklearn, got 'grpc'"),
    ({"name": "x"}, "key 'type' must be one of"),
    ({"type": "http"}, "missing required key 'url'"),
    ({"type": "http", "url": "http://h/x", "mode": "stream"},
     "key 'mode': Input should be 'single' or 'batch' (got 'stream')"),
    ({"type": "http", "url": "http://h/x", "concurency": 3}, "unknown key 'concurency' (allowed for type 'http': "),
    ({"type": "http", "url": "http://h/x", "timeout": 0}, "key 'timeout': Input should be greater than 0"),
    ({"type": "http", "url": "http://h/x", "body_template": {"t": "${txt}"}},
     "${txt}, which is not allowed in single mode (allowed: ${text}, ${prompt_id}, ${context}, ${task}"),
    ({"type": "callable", "function": "no_colon"}, "key 'function': write 'package.module:function'"),
    ({"type": "callable", "function": "no_such_module_xyz:f"}, "cannot import module 'no_such_module_xyz'"),
    ({"type": "callable", "function": "os.path:nope"}, "module 'os.path' has no attribute 'nope'"),
    ({"type": "hf", "model_dir": "m", "task": "summarization"},
     "key 'task': Input should be 'question-answering', 'text-classification', 'text-regression' or 'text-generation'"),
    ({"type": "sklearn"}, "type 'sklearn' needs 'path' (a joblib file) and/or 'per_prompt'"),
    ({"type": "command", "argv": ["x"], "output": "label"}, "key 'output': Input should be 'score', 'answer', 'both' or 'auto'"),
])
def test_errors_name_the_key_and_the_allowed_values(cfg: dict, message: str):
    with pytest.raises(TargetConfigError) as err:
        from_config(cfg, where="suite.toml [[target]] #1")
    assert message in str(err.value)
    assert str(err.value).startswith("suite.toml [[target]] #1") or "cannot import" in str(err.value) \
        or "has no attribute" in str(err.value)


def test_model_type_uses_callbluff_models(tmp_path: Path):
    from callbluff import models

    if not hasattr(models, "load_model"):
        with pytest.raises(TargetConfigError, match="needs callbluff.models.load_model"):
            from_config({"type": "model", "path": str(tmp_path)})
    else:
        with pytest.raises((FileNotFoundError, ValueError, TargetConfigError)):
            from_config({"type": "model", "path": str(tmp_path / "no-model-here")})
