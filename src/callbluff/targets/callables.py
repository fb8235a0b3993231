"""Python callables as targets (DESIGN.md "Target": the simplest adapter).

Calling convention (``pass_input`` chooses what the function sees):

* single mode (``batched=False``): ``fn(input.text)`` per input, or ``fn(input)`` (the whole
  :class:`~callbluff.targets.base.Input`, with ``context`` and ``prompt_id``) when ``pass_input=True``.
  Reading-comprehension systems need the context, so they want ``pass_input=True``.
* batched mode (``batched=True``): ``fn([text, ...])`` or ``fn([Input, ...])`` with ``pass_input=True``;
  must return one result per input, in order.

A result may be a number (score), a string (answer), a dict (``score``/``answer``/``candidates``/``error``),
a list of ``(text, score)`` candidates or an :class:`~callbluff.targets.base.Output`; see
:func:`callbluff.targets._common.coerce_output`. An exception becomes ``Output(error="Type: message")`` for
the input that raised it (``sys.exit(n)`` too: ``"target called sys.exit(n)"``; Ctrl-C still stops the run); in batched mode a failing batch (exception or wrong length) is retried one input at
a time so that only the offending input carries the error.
"""

from __future__ import annotations

import hashlib
import inspect
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import field_validator
from callbluff.targets._common import (
    TARGET_FAILURES,
    CoercionError,
    TargetBase,
    check_lengths,
    coerce_output,
    exception_cause,
)
from callbluff.targets.config import TargetSettings, import_function, register_target
from callbluff.targets.config import settings as target_settings
from callbluff.targets.base import Input, Output, TargetStats


def _code_digest(code: Any, h: Any) -> None:
    h.update(code.co_code)
    for const in code.co_consts:
        if inspect.iscode(const):
            _code_digest(const, h)
        else:
            h.update(repr(const).encode())
    h.update(repr(code.co_names).encode())


def callable_identity(fn: Callable[..., Any]) -> str:
    """``module:qualname#<hash of the bytecode>``: a default fingerprint for a Python function.

    Assumption: the function's code identifies the model. When it wraps state that changes without the code
    changing (a model loaded from a file, a closure over weights), pass ``fingerprint=`` explicitly.
    """
    target = inspect.unwrap(fn) if callable(fn) else fn
    base = getattr(target, "func", target)  # functools.partial
    base = getattr(base, "__func__", base)  # bound method
    module = getattr(base, "__module__", None) or type(base).__module__
    qualname = getattr(base, "__qualname__", None) or type(base).__qualname__
    h = hashlib.sha256(f"{module}:{qualname}".encode())
    code = getattr(base, "__code__", None)
    if code is None and callable(base):  # a callable object: hash its class's __call__
        code = getattr(type(base).__call__, "__code__", None)
    if code is not None:
        _code_digest(code, h)
    return f"{module}:{qualname}#{h.hexdigest()[:12]}"


class CallableSettings(TargetSettings):
    """A Python function: ``batched`` (takes a list), ``pass_input`` (gets :class:`Input` objects, not texts)."""

    batched: bool = False
    pass_input: bool = False


class CallableConfig(CallableSettings):
    type: Literal["callable"] = "callable"
    function: str

    @field_validator("function", mode="before")
    @classmethod
    def _not_an_object(cls, v: Any) -> Any:
        if callable(v):
            raise ValueError("a Python function cannot go in a suite table (the suite is saved in run.json as text); "
                             "pass the function itself as run_suite(suite, out_dir, targets={'NAME': function}), "
                             "or name it here as 'package.module:function'")
        return v

    @field_validator("function")
    @classmethod
    def _spec(cls, v: str) -> str:
        mod, sep, attr = v.partition(":")
        if not sep or not mod or not attr:
            raise ValueError(f"write 'package.module:function', got {v!r}")
        return v


class CallableTarget(TargetBase):
    """Wrap a Python function ``fn`` as a :class:`~callbluff.targets.base.Target`.

    Parameters: ``batched`` (``fn`` takes a list), ``pass_input`` (``fn`` gets :class:`Input` objects instead
    of texts), ``output`` (``"score"``, ``"answer"`` or ``"auto"``: how to read results), ``name``,
    ``fingerprint`` (defaults to :func:`callable_identity`).
    """

    def __init__(self, fn: Callable[..., Any], *, config: CallableSettings | None = None, **settings: Any) -> None:
        """``settings``: the keys of :class:`~callbluff.targets.callables.CallableSettings` (``batched``,
        ``pass_input``, ``output``, ``out_of_range``, ``name``, ``fingerprint``), validated there."""
        if not callable(fn):
            raise TypeError(f"CallableTarget needs a callable, got {type(fn).__name__}")
        cfg = target_settings(CallableSettings, config, settings, "CallableTarget")
        self.config = cfg
        self.fn = fn
        ident = callable_identity(fn)
        self.name = cfg.name or ident.split("#")[0]
        self.fingerprint = cfg.identity(f"callable:{ident}")
        self.stats = TargetStats()

    # the settings, read from the validated config (never copied)
    batched = property(lambda self: self.config.batched)
    pass_input = property(lambda self: self.config.pass_input)
    output = property(lambda self: self.config.output)

    def _arg(self, inp: Input) -> Any:
        return inp if self.pass_input else inp.text

    def _one(self, inp: Input) -> Output:
        self.stats.calls += 1
        try:
            return coerce_output(self.fn(self._arg(inp)), self.output)
        except TARGET_FAILURES as exc:  # noqa: BLE001 - any failure of user code is this input's error
            return Output(error=exception_cause(exc))

    def _batch(self, inputs: Sequence[Input]) -> list[Output]:
        self.stats.calls += 1
        try:
            results = list(self.fn([self._arg(i) for i in inputs]))
            check_lengths(results, len(inputs), f"batched function {self.name}")
        except TARGET_FAILURES as exc:  # noqa: BLE001 - isolate the bad input by retrying one at a time
            if len(inputs) == 1:
                return [Output(error=exception_cause(exc))]
            return [self._single_in_batch(i) for i in inputs]
        outs: list[Output] = []
        for r in results:
            try:
                outs.append(coerce_output(r, self.output))
            except CoercionError as exc:
                outs.append(Output(error=exception_cause(exc)))
        return outs

    def _single_in_batch(self, inp: Input) -> Output:
        self.stats.calls += 1
        try:
            results = list(self.fn([self._arg(inp)]))
            check_lengths(results, 1, f"batched function {self.name}")
            return coerce_output(results[0], self.output)
        except TARGET_FAILURES as exc:  # noqa: BLE001
            return Output(error=exception_cause(exc))

    def predict(self, inputs: Sequence[Input]) -> list[Output]:
        t0 = time.perf_counter()
        try:
            outs = self._batch(inputs) if self.batched and inputs else [self._one(i) for i in inputs]
        finally:
            self.stats.seconds += time.perf_counter() - t0
        self.stats.inputs += len(inputs)
        self.stats.errors += sum(1 for o in outs if o.error is not None)
        return outs

    def to_config(self) -> dict[str, Any]:
        return {"type": "callable", "name": self.name, "function": callable_identity(self.fn).split("#")[0],
                "batched": self.batched, "pass_input": self.pass_input, "output": self.output,
                "fingerprint": self.fingerprint}


def _build(config: CallableConfig, base_dir: Path | None) -> CallableTarget:
    return CallableTarget(import_function(config.function, base_dir), config=config)


register_target("callable", CallableConfig, _build, spec_key="function")
