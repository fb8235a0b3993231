"""CallableTarget and SklearnTarget."""

from __future__ import annotations

import math
from pathlib import Path

import joblib
import numpy as np
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from callbluff.targets import CallableTarget, Candidate, Input, Output, SklearnTarget
from callbluff.targets._common import CoercionError, coerce_output


def words(text: str) -> float:
    return float(len(text.split()))


def fragile(text: str) -> float:
    if "boom" in text:
        raise ZeroDivisionError("division by zero")
    return float(len(text))


def ask(*texts: str, prompt_id: str | None = None) -> list[Input]:
    return [Input("content", t, prompt_id=prompt_id) for t in texts]


def test_coercion_rules():
    assert coerce_output(3) == Output(score=3.0)
    assert coerce_output(np.float32(1.5)) == Output(score=1.5)
    assert coerce_output(np.array(2.0)) == Output(score=2.0)
    assert coerce_output("2", "score") == Output(score=2.0)
    assert coerce_output("Paris") == Output(answer="Paris")
    assert coerce_output([["Paris", 0.9], ["Lyon", 0.1]]) == Output(
        answer="Paris", candidates=(Candidate("Paris", 0.9), Candidate("Lyon", 0.1)))
    assert coerce_output({"candidates": [{"text": "a", "score": 2}]}).answer == "a"
    assert coerce_output({"error": "quota"}) == Output(error="quota")
    for bad, kind in [(None, "auto"), (float("nan"), "auto"), ("Paris", "score"), (True, "score"),
                      ({"answer": "x"}, "score"), (3, "answer"), ({"foo": 1}, "auto")]:
        with pytest.raises(CoercionError):
            coerce_output(bad, kind)


def test_single_mode_texts_inputs_and_errors():
    t = CallableTarget(fragile, output="score")
    outs = t.predict(ask("abc", "boom here", "abcdef"))
    assert outs[0].score == 3.0 and outs[2].score == 6.0
    assert outs[1] == Output(error="ZeroDivisionError: division by zero")
    assert t.stats.calls == 3 and t.stats.inputs == 3 and t.stats.errors == 1
    qa = CallableTarget(lambda inp: inp.context.split()[-1], pass_input=True, output="answer")
    [o] = qa.predict([Input("reading", "Where?", context="They lived in Normandy")])
    assert o == Output(answer="Normandy")
    nan = CallableTarget(lambda text: math.nan)
    assert nan.predict(ask("x"))[0].error == "CoercionError: non-finite score nan"
    none = CallableTarget(lambda text: None)
    assert none.predict(ask("x"))[0].error == "CoercionError: the target returned None"


def test_batched_mode_isolates_the_bad_input():
    def batch(texts: list[str]) -> list[float]:
        return [fragile(t) for t in texts]

    t = CallableTarget(batch, batched=True)
    outs = t.predict(ask("a", "b boom", "ccc", "dd"))
    assert [o.score for o in outs] == [1.0, None, 3.0, 2.0]
    assert outs[1].error == "ZeroDivisionError: division by zero"
    assert t.stats.calls == 1 + 4  # one failed batch, then one call per input
    short = CallableTarget(lambda texts: [1.0], batched=True)
    outs2 = short.predict(ask("a", "b"))
    assert [o.score for o in outs2] == [1.0, 1.0]  # wrong length -> retried one by one


def test_fingerprints():
    assert CallableTarget(words).fingerprint == CallableTarget(words).fingerprint
    assert CallableTarget(words).fingerprint != CallableTarget(fragile).fingerprint
    assert CallableTarget(words).fingerprint.startswith("callable:test_callable_sklearn:words#")
    assert CallableTarget(words, fingerprint="my-model-v3").fingerprint == "my-model-v3"
    assert CallableTarget(words).to_config()["function"] == "test_callable_sklearn:words"


TRAIN = [("the cell membrane controls what enters and leaves the cell", 3.0),
         ("membrane lets nutrients in and waste out through protein channels", 3.0),
         ("the membrane is a wall", 1.0), ("cells are small", 0.0), ("i do not know", 0.0),
         ("proteins in the membrane pump ions across it", 2.0), ("osmosis moves water across membrane", 2.0),
         ("the nucleus", 0.0)]


def fitted() -> object:
    texts, ys = zip(*TRAIN)
    return make_pipeline(TfidfVectorizer(), Ridge(alpha=1.0)).fit(list(texts), list(ys))


def test_sklearn_pipeline_object_and_joblib_file(tmp_path: Path):
    pipe = fitted()
    texts = ["membrane channels move ions", "no idea", "the cell"]
    direct = pipe.predict(texts)
    t = SklearnTarget(pipe)
    outs = t.predict(ask(*texts))
    assert np.allclose([o.score for o in outs], direct)
    assert t.stats.calls == 1  # one call for the whole group
    path = tmp_path / "scorer.joblib"
    joblib.dump(pipe, path)
    from_file = SklearnTarget(path)
    assert np.allclose([o.score for o in from_file.predict(ask(*texts))], direct)
    assert from_file.fingerprint == SklearnTarget(str(path)).fingerprint
    assert from_file.to_config()["path"] == str(path)
    assert SklearnTarget(pipe).fingerprint == t.fingerprint  # hash of the object's state
    refit = make_pipeline(TfidfVectorizer(), Ridge(alpha=5.0)).fit([x for x, _ in TRAIN], [y for _, y in TRAIN])
    assert SklearnTarget(refit).fingerprint != t.fingerprint


def test_sklearn_per_prompt_routing_and_isolation(tmp_path: Path):
    a = fitted()
    constant = make_pipeline(FunctionTransformer(lambda xs: np.array([[len(x)] for x in xs])), Ridge()).fit(
        ["a", "bb", "ccc"], [1.0, 1.0, 1.0])
    with pytest.warns(UserWarning, match="pass fingerprint= to reuse cached predictions"):
        t = SklearnTarget(per_prompt={"1": a, "2": constant})
    outs = t.predict(ask("membrane pumps", prompt_id="1") + ask("whatever", prompt_id="2")
                     + ask("x", prompt_id="9"))
    assert outs[0].score == pytest.approx(float(a.predict(["membrane pumps"])[0]))
    assert outs[1].score == pytest.approx(1.0)
    assert outs[2].error == "no estimator for prompt '9' (per_prompt has: 1, 2; add one or pass a default estimator)"

    def explode(xs: list[str]) -> np.ndarray:
        if any("boom" in x for x in xs):
            raise ValueError("bad token")
        return np.array([[len(x)] for x in xs], dtype=float)

    fragile_pipe = make_pipeline(FunctionTransformer(explode), Ridge()).fit(["a", "bb"], [1.0, 2.0])
    outs2 = SklearnTarget(fragile_pipe, fingerprint="fragile-v1").predict(ask("aa", "boom", "aaa"))
    assert outs2[1].error == "ValueError: bad token" and outs2[0].ok and outs2[2].ok


def test_sklearn_rejects_what_it_cannot_use(tmp_path: Path):
    with pytest.raises(FileNotFoundError, match="no joblib file"):
        SklearnTarget(tmp_path / "missing.joblib")
    with pytest.raises(TypeError, match="has no predict"):
        SklearnTarget(object())
    with pytest.raises(TypeError, match="has no method 'predict_proba'"):
        SklearnTarget(fitted(), method="predict_proba")
