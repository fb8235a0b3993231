"""scikit-learn estimators and pipelines as targets.

A text pipeline (e.g. ``make_pipeline(TfidfVectorizer(), Ridge())``) is called as
``estimator.predict([text, ...])``: the inputs of one ``predict`` call are grouped by ``prompt_id`` and each
group goes to its estimator in one call (``per_prompt`` maps prompt ids to estimators, as ASAP-style scorers
train one model per prompt; inputs whose prompt has no entry use the default estimator, or fail with an error
naming the known prompts). If a group's call raises, its inputs are retried one by one so that only the bad
input carries the error.

Estimators may be objects or paths to ``joblib`` files. The fingerprint is the SHA-256 of the joblib file(s),
or ``joblib.hash`` of the in-memory object(s) (a hash of their pickled state). An object that cannot be pickled
(a lambda inside a ``FunctionTransformer``) falls back to a hash of its ``repr``, which contains memory
addresses: safe (never a stale hit) but not reusable across runs, so a warning suggests ``fingerprint=``.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import model_validator
from callbluff.targets._common import (
    CoercionError,
    TargetBase,
    check_lengths,
    coerce_output,
    config_hash,
    exception_cause,
    file_sha256,
)
from callbluff.targets.base import OutputKind
from callbluff.targets.config import TargetSettings, register_target, resolve_path
from callbluff.targets.config import settings as target_settings
from callbluff.targets.base import Input, Output, TargetStats

PathLike = str | os.PathLike[str]


def _load(est: Any, need_hash: bool = True) -> tuple[Any, str, str | None]:
    """(estimator, content hash ("" when not needed), source path or None)."""
    import joblib

    if isinstance(est, (str, os.PathLike)):
        path = Path(est)
        if not path.is_file():
            raise FileNotFoundError(f"sklearn target: no joblib file at {path} (save one with joblib.dump)")
        return joblib.load(path), file_sha256(path) if need_hash else "", str(path)
    if not hasattr(est, "predict"):
        raise TypeError(f"sklearn target: {type(est).__name__} has no predict() method")
    if not need_hash:
        return est, "", None
    try:
        return est, joblib.hash(est, hash_name="sha1"), None
    except Exception as exc:  # noqa: BLE001 - e.g. a lambda inside a FunctionTransformer cannot be pickled
        warnings.warn(f"sklearn target: cannot hash {type(est).__name__} ({exception_cause(exc)[:120]}); its "
                      "fingerprint falls back to repr() and will not match across runs; pass fingerprint= to "
                      "reuse cached predictions", stacklevel=3)
        return est, config_hash(["repr", repr(est)]), None


class SklearnSettings(TargetSettings):
    """A fitted estimator: ``method`` is what is called (``predict``; e.g. ``decision_function``)."""

    method: str = "predict"
    output: OutputKind = "score"


class SklearnConfig(SklearnSettings):
    type: Literal["sklearn"] = "sklearn"
    path: str | None = None
    per_prompt: dict[str, str] | None = None

    @model_validator(mode="after")
    def _something(self) -> SklearnConfig:
        if self.path is None and not self.per_prompt:
            raise ValueError("type 'sklearn' needs 'path' (a joblib file) and/or 'per_prompt'")
        return self


class SklearnTarget(TargetBase):
    """Wrap a fitted estimator/pipeline (object or joblib path), optionally one per prompt.

    ``method`` is the estimator method to call (``"predict"``; e.g. ``"decision_function"``); ``output`` says
    how to read its results (``"score"`` by default: a number on the prompt's scale).
    """

    def __init__(self, estimator: Any | PathLike | None = None, *,
                 per_prompt: Mapping[str, Any | PathLike] | None = None, config: SklearnSettings | None = None,
                 **settings: Any) -> None:
        """``settings``: the keys of :class:`~callbluff.targets.sklearn_target.SklearnSettings` (``method``, ``output``,
        ``out_of_range``, ``name``, ``fingerprint``), validated there."""
        if estimator is None and not per_prompt:
            raise ValueError("SklearnTarget needs an estimator, a joblib path, or per_prompt={prompt_id: ...}")
        cfg = target_settings(SklearnSettings, config, settings, "SklearnTarget")
        self.config = cfg
        method, output, name, fingerprint = cfg.method, cfg.output, cfg.name, cfg.fingerprint
        self.method = method
        self.output = output
        self.default: Any | None = None
        self.sources: dict[str, str | None] = {}
        hashes: dict[str, str] = {}
        if estimator is not None:
            self.default, hashes["*"], self.sources["*"] = _load(estimator, fingerprint is None)
        self.per_prompt: dict[str, Any] = {}
        for pid, est in (per_prompt or {}).items():
            self.per_prompt[str(pid)], hashes[str(pid)], self.sources[str(pid)] = _load(est, fingerprint is None)
        for key, est in ([("*", self.default)] if self.default is not None else []) + list(self.per_prompt.items()):
            if not callable(getattr(est, method, None)):
                raise TypeError(f"sklearn target: estimator for prompt {key!r} ({type(est).__name__}) "
                                f"has no method {method!r}")
        if self.default is not None:
            self.name = name or type(self.default).__name__
        else:
            self.name = name or f"{type(next(iter(self.per_prompt.values()))).__name__} per prompt"
        self.fingerprint = cfg.identity(lambda: f"sklearn:{config_hash([method, output, sorted(hashes.items())])}")
        self.stats = TargetStats()

    def _estimator(self, prompt_id: str | None) -> Any:
        if prompt_id is not None and prompt_id in self.per_prompt:
            return self.per_prompt[prompt_id]
        if self.default is not None:
            return self.default
        known = ", ".join(sorted(self.per_prompt)) or "none"
        raise KeyError(f"no estimator for prompt {prompt_id!r} (per_prompt has: {known}; "
                       "add one or pass a default estimator)")

    def _call(self, est: Any, texts: list[str]) -> list[Any]:
        self.stats.calls += 1
        results = list(getattr(est, self.method)(texts))
        check_lengths(results, len(texts), f"{type(est).__name__}.{self.method}")
        return results

    def _read(self, value: Any) -> Output:
        try:
            return coerce_output(value, self.output)
        except CoercionError as exc:
            return Output(error=exception_cause(exc))

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        t0 = time.perf_counter()
        outs: list[Output | None] = [None] * len(inputs)
        groups: dict[str | None, list[int]] = {}
        for i, inp in enumerate(inputs):
            groups.setdefault(inp.prompt_id, []).append(i)
        try:
            for pid, idx in groups.items():
                try:
                    est = self._estimator(pid)
                except KeyError as exc:
                    for i in idx:
                        outs[i] = Output(error=str(exc.args[0]))
                    continue
                try:
                    results = self._call(est, [inputs[i].text for i in idx])
                    for i, r in zip(idx, results):
                        outs[i] = self._read(r)
                except Exception as exc:  # noqa: BLE001 - isolate the input that breaks the batch
                    if len(idx) == 1:
                        outs[idx[0]] = Output(error=exception_cause(exc))
                        continue
                    for i in idx:
                        try:
                            outs[i] = self._read(self._call(est, [inputs[i].text])[0])
                        except Exception as exc1:  # noqa: BLE001
                            outs[i] = Output(error=exception_cause(exc1))
        finally:
            self.stats.seconds += time.perf_counter() - t0
        final = [o if o is not None else Output(error="internal: no prediction made") for o in outs]
        self.stats.inputs += len(inputs)
        self.stats.errors += sum(1 for o in final if o.error is not None)
        return final

    def to_config(self) -> dict[str, Any]:
        cfg: dict[str, Any] = {"type": "sklearn", "name": self.name, "method": self.method,
                               "output": self.output, "fingerprint": self.fingerprint}
        if "*" in self.sources:
            cfg["path"] = self.sources["*"]
        per = {k: v for k, v in self.sources.items() if k != "*"}
        if per:
            cfg["per_prompt"] = per
        return cfg


def _build(config: SklearnConfig, base_dir: Path | None) -> SklearnTarget:
    per = {k: resolve_path(v, base_dir) for k, v in (config.per_prompt or {}).items()}
    return SklearnTarget(resolve_path(config.path, base_dir), per_prompt=per or None, config=config)


register_target("sklearn", SklearnConfig, _build, spec_key="path", spec_path="file")
