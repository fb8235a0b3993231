"""Build a target from a suite's ``[[target]]`` table (issue 3 "Suites": validated with pydantic; errors name
the key and say what is allowed).

Every table has ``type`` (``callable``, ``sklearn``, ``http``, ``command``, ``hf`` or ``model``), an optional
``name`` and an optional ``fingerprint`` (override the adapter's default identity), plus the adapter's keys:

========== ==================================================================================================
callable   ``function = "package.module:attr"``, ``batched``, ``pass_input``, ``output``
sklearn    ``path`` (joblib file) and/or ``per_prompt = {prompt_id = "file.joblib"}``, ``method``, ``output``
http       ``url``, ``body_template``, ``response_path``, ``headers`` (``${ENV}`` references), ``method``,
           ``mode``, ``batch_size``, ``concurrency``, ``timeout``, ``retries``, ``backoff``, ``backoff_max``,
           ``rate_limit``, ``output``, ``seed``
command    ``argv`` (list or one shell-quoted string), ``cwd``, ``env``, ``timeout``, ``startup_timeout``,
           ``output``
hf         ``model_dir``, ``task``, ``batch_size``, ``max_length``, ``stride``, ``top_k``, ``max_answer_len``,
           ``num_threads``
model      ``path``: a directory written by a callbluff reference model (``callbluff.models.load_model``)
========== ==================================================================================================

Relative paths are resolved against ``base_dir`` (the suite file's directory): ``path``, ``per_prompt``
files, ``model_dir`` and, for commands, ``cwd`` (which defaults to ``base_dir``). A ``callable`` whose module
is not importable is looked for in ``base_dir`` too.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from callbluff.targets.base import Target

TARGET_TYPES: tuple[str, ...] = ("callable", "sklearn", "http", "command", "hf", "model")
OutputKind = Literal["score", "answer", "auto"]


class _Base(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str | None = None
    fingerprint: str | None = None


class CallableConfig(_Base):
    type: Literal["callable"]
    function: str
    batched: bool = False
    pass_input: bool = False
    output: OutputKind = "auto"

    @field_validator("function")
    @classmethod
    def _spec(cls, v: str) -> str:
        mod, sep, attr = v.partition(":")
        if not sep or not mod or not attr:
            raise ValueError(f"write 'package.module:function', got {v!r}")
        return v


class SklearnConfig(_Base):
    type: Literal["sklearn"]
    path: str | None = None
    per_prompt: dict[str, str] | None = None
    method: str = "predict"
    output: OutputKind = "score"


class HttpConfig(_Base):
    type: Literal["http"]
    url: str
    body_template: dict[str, Any] | list[Any] | str | None = None
    response_path: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    method: Literal["POST", "PUT", "GET", "post", "put", "get"] = "POST"
    mode: Literal["single", "batch"] = "single"
    batch_size: int = Field(16, ge=1)
    concurrency: int = Field(4, ge=1)
    timeout: float = Field(10.0, gt=0)
    retries: int = Field(3, ge=0)
    backoff: float = Field(0.5, ge=0)
    backoff_max: float = Field(8.0, ge=0)
    rate_limit: float | None = Field(None, gt=0)
    output: OutputKind = "auto"
    seed: int | None = None


class CommandConfig(_Base):
    type: Literal["command"]
    argv: list[str] | str
    cwd: str | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(30.0, gt=0)
    startup_timeout: float = Field(60.0, gt=0)
    output: OutputKind = "auto"


class HFConfig(_Base):
    type: Literal["hf"]
    model_dir: str
    task: Literal["question-answering", "text-classification", "text-regression"] = "question-answering"
    batch_size: int = Field(16, ge=1)
    max_length: int = Field(384, ge=16)
    stride: int = Field(128, ge=0)
    top_k: int = Field(5, ge=1)
    max_answer_len: int = Field(30, ge=1)
    num_threads: int | None = Field(None, ge=1)


class ModelConfig(_Base):
    type: Literal["model"]
    path: str


TargetConfig = Annotated[
    CallableConfig | SklearnConfig | HttpConfig | CommandConfig | HFConfig | ModelConfig,
    Field(discriminator="type"),
]
_MODELS: dict[str, type[_Base]] = {"callable": CallableConfig, "sklearn": SklearnConfig, "http": HttpConfig,
                                   "command": CommandConfig, "hf": HFConfig, "model": ModelConfig}


class TargetConfigError(ValueError):
    """A ``[[target]]`` table that cannot be used; the message names the key and what is allowed."""


def _explain(err: ValidationError, cls: type[_Base], kind: str, where: str) -> str:
    allowed = ", ".join(k for k in cls.model_fields)
    lines = []
    for e in err.errors():
        key = ".".join(str(p) for p in e["loc"]) or "(table)"
        if e["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown key {key!r} (allowed for type {kind!r}: {allowed})")
        elif e["type"] == "missing":
            lines.append(f"{where}: missing required key {key!r}")
        else:
            lines.append(f"{where}: key {key!r}: {e['msg']} (got {e.get('input')!r})")
    return "\n".join(lines)


def validate_target_config(cfg: dict[str, Any], where: str = "[[target]]") -> _Base:
    """Validate one ``[[target]]`` table; raises :class:`TargetConfigError` naming the key and the fix."""
    if not isinstance(cfg, dict):
        raise TargetConfigError(f"{where}: expected a table, got {type(cfg).__name__}")
    kind = cfg.get("type")
    if kind not in _MODELS:
        raise TargetConfigError(f"{where}: key 'type' must be one of {', '.join(TARGET_TYPES)}, got {kind!r}")
    cls = _MODELS[kind]
    try:
        return cls.model_validate(cfg)
    except ValidationError as err:
        raise TargetConfigError(_explain(err, cls, kind, where)) from None


def _resolve(path: str | None, base_dir: Path | None) -> str | None:
    if path is None:
        return None
    p = Path(os.path.expanduser(path))
    if not p.is_absolute() and base_dir is not None:
        p = base_dir / p
    return str(p)


def import_function(spec: str, base_dir: Path | None = None) -> Any:
    """``"package.module:attr.sub"`` -> the object; looks in ``base_dir`` when the module is not importable."""
    mod_name, _, attr = spec.partition(":")
    try:
        module = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        top = mod_name.split(".")[0]
        if exc.name != top or base_dir is None or not (
                (base_dir / f"{top}.py").is_file() or (base_dir / top / "__init__.py").is_file()):
            raise TargetConfigError(f"function {spec!r}: cannot import module {mod_name!r} ({exc}); install it or "
                                    "put it beside the suite file") from None
        if str(base_dir) not in sys.path:
            sys.path.append(str(base_dir))
        module = importlib.import_module(mod_name)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise TargetConfigError(f"function {spec!r}: module {mod_name!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise TargetConfigError(f"function {spec!r} is a {type(obj).__name__}, not a callable")
    return obj


def from_config(cfg: dict[str, Any], *, base_dir: str | os.PathLike[str] | None = None,
                where: str = "[[target]]") -> Target:
    """Build the target a ``[[target]]`` table describes (see the module docstring for the keys)."""
    c = validate_target_config(cfg, where)
    base = Path(base_dir) if base_dir is not None else None
    common = {"name": c.name, "fingerprint": c.fingerprint}
    if isinstance(c, CallableConfig):
        from callbluff.targets.callables import CallableTarget

        fn = import_function(c.function, base)
        return CallableTarget(fn, batched=c.batched, pass_input=c.pass_input, output=c.output,
                              name=c.name or c.function, fingerprint=c.fingerprint)
    if isinstance(c, SklearnConfig):
        from callbluff.targets.sklearn_target import SklearnTarget

        if c.path is None and not c.per_prompt:
            raise TargetConfigError(f"{where}: type 'sklearn' needs 'path' (a joblib file) and/or 'per_prompt'")
        per = {k: _resolve(v, base) for k, v in (c.per_prompt or {}).items()}
        return SklearnTarget(_resolve(c.path, base), per_prompt=per or None, method=c.method, output=c.output,
                             **common)
    if isinstance(c, HttpConfig):
        from callbluff.targets.http_target import HttpTarget

        try:
            return HttpTarget(c.url, body_template=c.body_template, response_path=c.response_path,
                              headers=dict(c.headers), method=c.method, mode=c.mode, batch_size=c.batch_size,
                              concurrency=c.concurrency, timeout=c.timeout, retries=c.retries, backoff=c.backoff,
                              backoff_max=c.backoff_max, rate_limit=c.rate_limit, output=c.output, seed=c.seed,
                              **common)
        except ValueError as exc:
            raise TargetConfigError(f"{where}: {exc}") from None
    if isinstance(c, CommandConfig):
        from callbluff.targets.command import CommandTarget

        cwd = _resolve(c.cwd, base) if c.cwd is not None else (str(base) if base is not None else None)
        return CommandTarget(c.argv, cwd=cwd, env=dict(c.env), timeout=c.timeout,
                             startup_timeout=c.startup_timeout, output=c.output, **common)
    if isinstance(c, HFConfig):
        from callbluff.targets.hf import HFTarget

        return HFTarget(_resolve(c.model_dir, base) or c.model_dir, c.task, batch_size=c.batch_size,
                        max_length=c.max_length, stride=c.stride, top_k=c.top_k, max_answer_len=c.max_answer_len,
                        num_threads=c.num_threads, **common)
    assert isinstance(c, ModelConfig)
    try:
        from callbluff.models import load_model  # type: ignore[attr-defined]
    except ImportError:
        raise TargetConfigError(f"{where}: type 'model' needs callbluff.models.load_model, which this build of "
                                "callbluff does not provide yet; use type 'hf' or 'sklearn' instead") from None
    target = load_model(_resolve(c.path, base))
    if not (hasattr(target, "predict") and hasattr(target, "fingerprint")):
        raise TargetConfigError(f"{where}: load_model({c.path!r}) returned a {type(target).__name__}, which is "
                                "not a Target (needs predict() and fingerprint)")
    if c.name and hasattr(target, "name"):
        try:
            target.name = c.name
        except AttributeError:
            pass
    if c.fingerprint:
        target.fingerprint = c.fingerprint
    return target
